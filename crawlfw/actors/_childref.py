"""A stable reference to a restartable child, and the base of actors that hand their
messages over when they die, so that a restart loses nothing.

Pykka has no supervision: a told message that raises stops the actor, and what is left
in its inbox is dropped when its thread ends (``Actor._actor_loop_teardown``); a tell to
a stopped actor raises ``ActorDeadError``. The Pipeline and the Exporters hold items on
their way to a feed, so they are restarted differently:

- Senders hold a :class:`ChildRef`, not the actor's own ``ActorRef``. It is an
  ``ActorRef`` (``tell``/``ask``/``stop`` and schema checks work unchanged) that passes
  each message to the current actor under a lock, or, while the child is dead and a
  restart is pending, keeps it in a buffer.
- A :class:`RestartableActor` that dies hands over, in its ``on_failure`` (on its own
  thread), under the same lock: the message it was handling (as :meth:`replay_of` makes
  it), then every envelope still in its inbox. From then on tells are buffered. As every
  sender goes through the lock, no tell can slip into the dead inbox after the drain.
- The Supervisor, after its backoff, starts a replacement, which
  :meth:`ChildRef.attach` es itself before its thread starts: the buffer is put into
  the new inbox first, in order, then tells go straight to it. Asks and ``stop`` in the buffer are answered by the replacement.
- An actor that cannot be restarted (a failure in ``on_start``, a feed that cannot be
  cut back) hands over nothing: the ref is dead, its queued asks fail with
  ``ActorDeadError`` and its tells are dropped with a warning; the Supervisor closes the
  crawl. So does :meth:`ChildRef.give_up` past the restart intensity.

The pykka internals this takes (the inbox's ``Envelope``, the stop message) come through
:mod:`crawlfw.actors._pykka`, which checks them at import and fails loudly on a pykka
that changed them.
"""

import logging
import queue
import threading
from typing import Any

import pykka
from pykka import ActorDeadError

from crawlfw.actors._base import CrawlActor
from crawlfw.actors._pykka import Envelope, is_stop

logger = logging.getLogger(__name__)

__all__ = ["ChildRef", "RestartableActor"]

_LIVE, _RESTARTING, _DEAD = "live", "restarting", "dead"


class ChildRef(pykka.ActorRef):
    """The stable ``ActorRef`` of a restartable child: the actor behind it may change.

    Thread-safe: senders on any thread, the dying actor's thread (:meth:`hand_over`),
    the Supervisor's (:meth:`attach`, :meth:`give_up`). Each ``tell`` takes one
    uncontended lock.

    Args:
        role: the child's role (``pipeline``, ``exporter``), for logs.
        key: tells siblings of one role apart (an exporter's feed), else "".

    Attributes:
        restarts (int): how many replacements were attached after the first actor.
        failed (bool): the child died and will not be restarted (it handed nothing
            over, or :meth:`give_up` was called).
    """

    def __init__(self, role: str, key: str = ""):  # no super().__init__: no actor yet
        self.role = role
        self.key = key
        self.restarts = 0
        self.failed = False
        self._lock = threading.Lock()
        self._ref: Any = None  # the current actor's pykka ActorRef
        self._state = _DEAD
        self._buffer: list[Envelope] = []  # Envelopes kept while restarting, in order
        self._failing = None  # the ActorRef of an actor that failed and will hand over

    # --- what ActorRef users read -----------------------------------------------------

    @property
    def actor_class(self):
        return self._ref.actor_class

    @property
    def actor_urn(self):
        return self._ref.actor_urn

    @property
    def actor_inbox(self):
        return self._ref.actor_inbox

    @property
    def actor_stopped(self):
        return self._ref.actor_stopped

    @property
    def _actor_weakref(self):  # read by pykka's ActorProxy (ref.proxy())
        return self._ref._actor_weakref

    @property
    def current(self):
        """The current actor's own ``ActorRef`` (None before the first :meth:`attach`)."""
        return self._ref

    @property
    def restarting(self) -> bool:
        """True while the child is dead, its messages kept for a replacement."""
        return self._state == _RESTARTING

    def __str__(self):
        key = f" {self.key}" if self.key else ""
        return f"{self.role}{key} ({self._ref if self._ref is not None else 'not started'})"

    def __repr__(self):
        return f"<ChildRef for {self}>"

    def is_alive(self) -> bool:
        """True while the current actor runs or a restart is pending."""
        state = self._state
        return state == _RESTARTING or (state == _LIVE and self._ref.is_alive())

    # --- sending ----------------------------------------------------------------------

    def tell(self, message) -> None:
        """Send ``message`` to the current actor, or keep it while restarting.

        Raises:
            ActorDeadError: the child is dead for good (or stopped).
        """
        self._put(Envelope(message))

    def ask(self, message, *, block=True, timeout=None):
        """As ``ActorRef.ask``; an ask sent while restarting is answered by the
        replacement."""
        future = pykka.ThreadingFuture()
        try:
            self._put(Envelope(message, reply_to=future))
        except ActorDeadError:
            future.set_exception()
        if block:
            return future.get(timeout=timeout)
        return future

    def _put(self, envelope) -> None:
        with self._lock:
            state = self._state
            if state == _LIVE:
                # A stopped actor that will still hand over has not taken the lock yet:
                # its on_failure drains this envelope too. One that stopped for good
                # (normal stop) refuses it, as ActorRef.tell does.
                if self._ref.actor_stopped.is_set() and self._failing is not self._ref:
                    raise ActorDeadError(f"{self} not found")
                self._ref.actor_inbox.put(envelope)
            elif state == _RESTARTING:
                self._buffer.append(envelope)
            else:
                raise ActorDeadError(f"{self} not found")

    # --- the life cycle (dying actor, Supervisor) -------------------------------------

    def attach(self, ref) -> None:
        """Make ``ref`` (an actor's ``ActorRef``, its thread not started yet) the current
        actor; put what was kept while restarting into its inbox first, in order.

        Called by :class:`RestartableActor` as it starts (the first actor and each
        replacement the Supervisor starts).
        """
        with self._lock:
            if self._ref is not None:
                self.restarts += 1
            self._ref = ref
            for envelope in self._buffer:
                ref.actor_inbox.put(envelope)
            self._buffer = []
            self._state = _LIVE

    def hand_over(self, actor_ref, inbox, replay) -> bool:
        """Called by the dying actor on its own thread (``on_failure``): switch to
        restarting and keep ``replay`` then every envelope left in ``inbox``.

        Args:
            actor_ref: the dying actor's ``ActorRef`` (a stale actor's call is ignored).
            inbox: its inbox (a ``queue.Queue`` of Envelopes).
            replay: messages to deliver first to the replacement (the one being handled
                when it failed), or None: the actor cannot be restarted; the ref is then
                dead (see :meth:`give_up`).

        Returns:
            True when handed over (a restart may follow), else False.
        """
        with self._lock:
            if actor_ref is not self._ref or self._state != _LIVE:
                return False
            drained = []
            while True:
                try:
                    drained.append(inbox.get_nowait())
                except queue.Empty:
                    break
            if replay is None:
                self._state = _DEAD
                self.failed = True
                self._drop(drained)
                return False
            self._buffer = [Envelope(m) for m in replay] + drained
            self._state = _RESTARTING
            return True

    def give_up(self) -> None:
        """The child will not be restarted (restart intensity exhausted, the crawl
        failed): the ref is dead; kept asks fail with ``ActorDeadError`` (a kept
        ``stop`` succeeds), kept tells are dropped with a warning."""
        with self._lock:
            buffer, self._buffer = self._buffer, []
            self._state = _DEAD
            self.failed = True
            self._drop(buffer)

    def _drop(self, envelopes) -> None:
        told = 0
        for envelope in envelopes:
            if envelope.reply_to is None:
                told += 1
            elif is_stop(envelope.message):
                envelope.reply_to.set(None)
            else:
                envelope.reply_to.set_exception(exc_info=(
                    ActorDeadError, ActorDeadError(f"{self} died before handling the message"),
                    None))
        if told:
            logger.warning("%(n)d message(s) to the dead %(ref)s dropped",
                           {"n": told, "ref": self})


class RestartableActor(CrawlActor):
    """A :class:`CrawlActor` whose messages survive its death (see the module doc).

    Args:
        child_ref: the :class:`ChildRef` senders use (None: an actor on its own, which
            dies as any other).
        **kw: ``CrawlActor`` arguments.

    Subclasses override :meth:`replay_of` (what to replay of the message being handled)
    and may override :meth:`prepare_restart` (repair what a half-handled message left,
    e.g. a feed cut back).
    """

    #: A failure in ``on_start`` is restarted too (its inbox handed over) instead of
    #: failing the crawl.
    restart_failed_start = False

    def __init__(self, *, child_ref=None, **kw):
        super().__init__(**kw)
        self.child_ref = child_ref
        self._message = None  # the message being handled

    def _start_actor_loop(self):
        # Attach before the thread runs on_start: a failing on_start must find this
        # actor current in its ref, and what the ref kept goes first into the inbox.
        if self.child_ref is not None:
            self.child_ref.attach(self.actor_ref)
        super()._start_actor_loop()

    def on_receive(self, message):
        self._message = message
        return super().on_receive(message)

    def replay_of(self, message) -> list:
        """The messages to deliver to the replacement in place of ``message``, the one
        this actor was handling when it failed (the default: ``[message]``, handled
        again from the start)."""
        return [message]

    def prepare_restart(self) -> bool:
        """Repair, on this (dying) actor's thread, what the failed message left half
        done; return False (after logging why) when the child cannot be restarted."""
        return True

    def _handle_failure(self, exception_type, exception_value, traceback):
        # pykka calls this first when a handler or on_start raises, then stops the
        # actor (and calls on_failure, or our on_start wrapper does). Tell the ref before
        # the actor counts as stopped: tells arriving meanwhile go to the inbox, which
        # on_failure drains. (On an on_stop failure the actor is already stopped.)
        if self.child_ref is not None and not self.actor_stopped.is_set():
            self.child_ref._failing = self.actor_ref
        super()._handle_failure(exception_type, exception_value, traceback)

    def on_failure(self, exception_type, exception_value, traceback):
        ref = self.child_ref
        if ref is not None:
            replay = None
            if not self._start_failure_reported or self.restart_failed_start:
                message = self._message
                try:
                    if self.prepare_restart():
                        replay = [] if message is None else self.replay_of(message)
                except Exception:
                    logger.error("%s cannot be restarted: preparing the restart failed", self,
                                 exc_info=True)
                    replay = None
            ref.hand_over(self.actor_ref, self.actor_inbox, replay)
        super().on_failure(exception_type, exception_value, traceback)
        if ref is not None and ref.restarting and (
                self.supervisor is None or not self.supervisor.is_alive()):
            ref.give_up()  # nobody will restart it: answer what it kept
