"""The pykka internals that :mod:`crawlfw.actors._childref` needs, in one place, checked
when this module is imported.

A :class:`~crawlfw.actors._childref.ChildRef` stands in for an ``ActorRef`` and moves
a dead actor's inbox to its replacement, so it must speak pykka's inbox protocol, which
pykka keeps private: an inbox holds ``Envelope(message, reply_to=future)`` objects
(``pykka._envelope``), ``ActorRef.stop()`` asks with a ``pykka.messages._ActorStop()``,
an ``ActorRef`` keeps its actor in ``_actor_weakref`` (read by ``ActorProxy``), and an
actor is started by ``_start_actor_loop``, fails through ``_handle_failure`` and gets
each message through ``_handle_receive`` (which :class:`~crawlfw.actors._base.CrawlActor`
shortens for message dicts).

Those names are the same in every pykka 4 release from 4.1 (``pyproject.toml`` pins
``pykka>=4.1,<5``). A pykka that changed them would not fail here visibly but lose or
hang messages at a restart, so :func:`pykka_problems` checks each assumption and the
import fails with an ``ImportError`` naming what changed (``tests/actors/test_pykka.py``).
"""

from __future__ import annotations

import inspect
import queue

import pykka

__all__ = ["Envelope", "is_stop", "pykka_problems"]


def _pykka_version() -> str:
    """pykka's installed version, for the refusal message (``importlib.metadata`` is
    imported here only: ~25 ms of start-up otherwise)."""
    from importlib import metadata

    try:
        return metadata.version("pykka")
    except metadata.PackageNotFoundError:  # pragma: no cover - a vendored copy
        return "unknown"


try:
    from pykka._envelope import Envelope
    from pykka.messages import _ActorStop
except ImportError as e:
    raise ImportError(
        f"crawlfw needs pykka 4's inbox internals (pykka._envelope.Envelope, "
        f"pykka.messages._ActorStop) and pykka {_pykka_version()} has none: {e}; "
        f"install pykka>=4.1,<5") from e


def is_stop(message) -> bool:
    """True if ``message`` is the one ``ActorRef.stop()`` asks an actor with."""
    return isinstance(message, _ActorStop)


def _names(function) -> set:
    """The global and attribute names ``function``'s code uses (no source needed)."""
    code = getattr(function, "__code__", None)
    return set(code.co_names) if code is not None else set()


def pykka_problems(envelope_class=None, ref_class=None, actor_class=None) -> list[str]:
    """Check the pykka internals ``ChildRef`` relies on.

    Args:
        envelope_class, ref_class, actor_class: what to check in place of pykka's
            ``Envelope``, ``ActorRef`` and ``ThreadingActor`` (for tests); None: pykka's.

    Returns:
        One line per broken assumption, naming it; empty when all hold.
    """
    envelope_class = envelope_class or Envelope
    ref_class = ref_class or pykka.ActorRef
    actor_class = actor_class or pykka.ThreadingActor
    problems = []
    future: pykka.Future = pykka.ThreadingFuture()
    try:
        envelope = envelope_class("m", reply_to=future)
        plain = envelope_class("m")
        if (envelope.message, envelope.reply_to, plain.reply_to) != ("m", future, None):
            problems.append("Envelope(message, reply_to=None) no longer keeps "
                            ".message and .reply_to")
    except TypeError as e:
        problems.append(f"Envelope(message, reply_to=...) cannot be built: {e}")
    if "Envelope" not in _names(ref_class.tell) or "actor_inbox" not in _names(ref_class.tell):
        problems.append("ActorRef.tell no longer puts an Envelope into actor_inbox")
    if "_ActorStop" not in _names(ref_class.stop):
        problems.append("ActorRef.stop no longer asks with messages._ActorStop")
    if "_actor_weakref" not in _names(ref_class.__init__):
        problems.append("ActorRef no longer keeps its actor in _actor_weakref")
    if not isinstance(actor_class._create_actor_inbox(), queue.Queue):
        problems.append("an actor's inbox is no longer a queue.Queue")
    for name, params in (("_start_actor_loop", ["self"]),
                         ("_handle_receive", ["self", "message"]),
                         ("_handle_failure", ["self", "exception_type", "exception_value",
                                              "traceback"])):
        method = getattr(actor_class, name, None)
        if not callable(method) or list(inspect.signature(method).parameters) != params:
            problems.append(f"Actor.{name}({', '.join(params[1:])}) is gone or changed")
    return problems


_problems = pykka_problems()
if _problems:
    raise ImportError(
        f"crawlfw's restartable actors need pykka internals that pykka "
        f"{_pykka_version()} changed: {'; '.join(_problems)}; install pykka>=4.1,<5")
