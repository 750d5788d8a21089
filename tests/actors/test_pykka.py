"""crawlfw.actors._pykka: the pykka internals ChildRef relies on are checked at import,
and a pykka that changed them fails the import with a message naming what changed."""

import importlib.util
import sys

import pykka
import pytest

from crawlfw.actors import _pykka
from crawlfw.actors._childref import ChildRef


def test_installed_pykka_passes_every_check():
    assert _pykka.pykka_problems() == []


def test_stop_asks_are_recognised():
    seen = []

    class Recorder(pykka.ActorRef):
        def __init__(self):  # no actor: record what stop() asks with
            pass

        def ask(self, message, *, block=True, timeout=None):
            seen.append(message)
            future = pykka.ThreadingFuture()
            future.set(None)
            return future

    assert Recorder().stop() is True
    assert [_pykka.is_stop(m) for m in seen] == [True]
    assert not _pykka.is_stop({"type": "stop_crawl"})


def test_a_changed_envelope_is_named():
    class Envelope:  # a pykka whose envelope took other names
        __slots__ = ("msg", "future")

        def __init__(self, msg, future=None):
            self.msg, self.future = msg, future

    [problem] = _pykka.pykka_problems(envelope_class=Envelope)
    assert "Envelope(message, reply_to=...) cannot be built" in problem


def test_a_changed_ref_and_actor_are_named():
    class Ref(pykka.ActorRef):
        def __init__(self, actor):
            self.actor = actor

        def tell(self, message):
            self.actor.inbox.append(message)

        def stop(self, block=True, timeout=None):
            return True

    class Actor(pykka.ThreadingActor):
        @staticmethod
        def _create_actor_inbox():
            return []

        def _handle_failure(self, exc_info):
            pass

    problems = _pykka.pykka_problems(ref_class=Ref, actor_class=Actor)
    assert problems == [
        "ActorRef.tell no longer puts an Envelope into actor_inbox",
        "ActorRef.stop no longer asks with messages._ActorStop",
        "ActorRef no longer keeps its actor in _actor_weakref",
        "an actor's inbox is no longer a queue.Queue",
        "Actor._handle_failure(exception_type, exception_value, traceback) is gone or changed",
    ]


def _import_fresh_copy():
    """Run crawlfw/actors/_pykka.py anew under another name (the real module untouched)."""
    spec = importlib.util.spec_from_file_location("_pykka_copy", _pykka.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_import_fails_loudly_without_the_envelope(monkeypatch):
    monkeypatch.setitem(sys.modules, "pykka._envelope", None)  # import fails
    with pytest.raises(ImportError, match=r"pykka\._envelope\.Envelope.*install pykka>=4\.1,<5"):
        _import_fresh_copy()


def test_import_fails_loudly_on_a_changed_stop(monkeypatch):
    monkeypatch.setattr(pykka.ActorRef, "stop", lambda self, block=True, timeout=None: True)
    with pytest.raises(ImportError, match=r"ActorRef\.stop no longer asks with "
                                          r"messages\._ActorStop; install pykka>=4\.1,<5"):
        _import_fresh_copy()


def test_childref_uses_the_public_future():
    ref = ChildRef("pipeline")
    future = ref.ask({"type": "x"}, block=False)  # dead ref: the ask fails at once
    assert isinstance(future, pykka.ThreadingFuture)
    with pytest.raises(pykka.ActorDeadError):
        future.get(timeout=1)
