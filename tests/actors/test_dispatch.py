"""CrawlActor's message dispatch fast paths give what the general paths give.

``_handle_message`` finds ``handle_<type>`` through a per-actor dict filled on first use
(the general rule: ``getattr(self, "handle_" + message["type"])``, a rejection when that
fails); ``_handle_receive`` sends a message dict straight to ``on_receive`` (pykka's
general rule tests for a stop and the proxy messages first). Both are checked on a table
of cases, hostile and odd ones included, cold (first message of its type) and warm."""

import logging

import pykka
import pytest
from pykka import messages as pykka_messages

from crawlfw.actors._base import CrawlActor
from tests.support.wait import wait_for


class _Text(str):
    """A str subclass as a message type."""


class _Actor(CrawlActor):
    def __init__(self):
        super().__init__()
        self._check_received = False  # schema checks come before both paths alike
        self.seen = []

    def handle_ping(self, message):
        self.seen.append(("ping", message))
        return "pong"

    def handle_(self, message):  # the type "" names this one
        return "empty"

    def handle_x__y(self, message):
        return "x__y"

    def on_receive(self, message):
        self.seen.append(("on_receive", message))
        return super().on_receive(message)

    handle_not_callable = 42


def _general(actor, message):
    """The general rule (the dispatch before the fast path)."""
    try:
        handler = getattr(actor, "handle_" + message["type"])
    except (TypeError, KeyError, AttributeError):
        return ("rejected",)
    try:
        return ("ok", handler(message))
    except Exception as e:  # noqa: BLE001 - compared, not hidden
        return ("raises", type(e))


def _fast(actor, message):
    try:
        result = actor._handle_message(message)
    except Exception as e:  # noqa: BLE001
        return ("raises", type(e))
    if isinstance(result, dict) and result.get("type") == "message_rejected":
        return ("rejected",)
    return ("ok", result)


CASES = [
    {"type": "ping"},
    {"type": "ping", "extra": [1, 2]},
    {"type": _Text("ping")},
    {"type": ""},
    {"type": "x__y"},
    {"type": "nope"},
    {"type": "not_callable"},
    {"type": "__class__"},
    {"type": "ping\x00"},
    {"type": "pïng"},
    {"type": 5},
    {"type": None},
    {"type": ["ping"]},
    {"type": ("ping",)},
    {"kind": "ping"},
    {},
    ["type", "ping"],
    "ping",
    None,
    42,
]


@pytest.mark.parametrize("message", CASES, ids=repr)
def test_dispatch_cold_and_warm_matches_the_general_rule(message, caplog):
    caplog.set_level(logging.CRITICAL)
    expected = _general(_Actor(), message)
    actor = _Actor()
    assert _fast(actor, message) == expected  # cold: the first of its type
    assert _fast(actor, message) == expected  # warm: through the noted handler
    warmed = _Actor()  # every other case first, then this one
    for other in CASES:
        _fast(warmed, other)
    assert _fast(warmed, message) == expected


def test_a_handler_patched_on_the_class_before_the_first_message_is_used():
    class Patched(_Actor):
        pass

    Patched.handle_ping = lambda self, message: "patched"
    assert Patched()._handle_message({"type": "ping"}) == "patched"


class _Other:
    """A message that is no dict."""

    def __repr__(self):  # a stable test id: xdist's workers must collect the same names
        return "_Other()"


RECEIVE_CASES = [
    {"type": "ping"},
    {"type": "nope"},
    {},
    _Other(),
    "ping",
]


@pytest.mark.parametrize("message", RECEIVE_CASES, ids=repr)
def test_handle_receive_matches_pykkas_for_anything_but_its_own_messages(message, caplog):
    caplog.set_level(logging.CRITICAL)
    fast, general = _Actor(), _Actor()
    assert fast._handle_receive(message) == pykka.ThreadingActor._handle_receive(general,
                                                                                 message)
    assert [kind for kind, _ in fast.seen] == [kind for kind, _ in general.seen]


def test_stop_and_proxy_calls_still_take_pykkas_path():
    ref = _Actor.start()
    try:
        proxy = ref.proxy()
        assert proxy.handle_ping({"type": "ping"}).get(timeout=10) == "pong"
        assert proxy.seen.get(timeout=10)[-1] == ("ping", {"type": "ping"})
        assert ref.ask({"type": "ping"}, timeout=10) == "pong"
    finally:
        ref.stop(timeout=10)
    assert not ref.is_alive()
    actor = _Actor()
    actor._handle_receive(pykka_messages._ActorStop())
    assert actor.actor_stopped.is_set()


class _Sink(pykka.ThreadingActor):
    """Records what it is told."""

    def __init__(self, got):
        super().__init__()
        self.got = got

    def on_receive(self, message):
        self.got.append(message)


class _Sender(CrawlActor):
    def __init__(self):
        super().__init__()
        self.undelivered = []

    def on_undelivered(self, ref, message):
        self.undelivered.append(message)


def _refs():
    """(name, ref, what it received) for each kind of receiver: a live and a stopped
    pykka ActorRef, a live and a dead ChildRef."""
    from crawlfw.actors._childref import ChildRef

    cases = []
    got = []
    live = _Sink.start(got)
    cases.append(("live ActorRef", live, got))
    got2 = []
    stopped = _Sink.start(got2)
    stopped.stop(timeout=10)
    cases.append(("stopped ActorRef", stopped, got2))
    got3 = []
    child = ChildRef("sink")
    child.attach(_Sink.start(got3))
    cases.append(("live ChildRef", child, got3))
    got4 = []
    dead = ChildRef("sink")
    inner = _Sink.start(got4)
    dead.attach(inner)
    inner.stop(timeout=10)
    dead.give_up()
    cases.append(("dead ChildRef", dead, got4))
    return cases


def _general_tell(sender, ref, message):
    try:
        ref.tell(message)
    except pykka.ActorDeadError:
        sender.on_undelivered(ref, message)


def test_tell_fast_path_delivers_or_reports_as_ref_tell_does():
    for way in ("fast", "general"):
        results = []
        for name, ref, got in _refs():
            sender = _Sender()
            message = {"type": "ping", "n": name}
            if way == "fast":
                sender._tell(ref, message)
            else:
                _general_tell(sender, ref, message)
            if ref.is_alive():
                assert wait_for(lambda got=got: got, f"the message to the {name}", timeout_s=10)
            results.append((name, list(got), sender.undelivered))
            try:
                ref.stop(timeout=10)
            except pykka.ActorDeadError:
                pass
        if way == "fast":
            fast = results
        else:
            assert results == fast
    assert [(name, bool(got), bool(lost)) for name, got, lost in fast] == [
        ("live ActorRef", True, False), ("stopped ActorRef", False, True),
        ("live ChildRef", True, False), ("dead ChildRef", False, True)]
