"""ChildRef and RestartableActor: a restartable child that dies hands its inbox and the
message it died on over to its ref, which keeps what is sent meanwhile and gives it all,
in order, to the replacement. Real actors and threads; waits are on events and futures,
never sleeps."""

import threading

import pykka
import pytest

from crawlfw.actors._base import CrawlActor
from crawlfw.actors._childref import ChildRef, RestartableActor
from crawlfw.actors._validation import register_schema

register_schema("restart_test_note", {
    "type": "object",
    "properties": {"type": {"const": "restart_test_note"}, "sender": {"type": "integer"},
                   "n": {"type": "integer"}},
    "required": ["type", "sender", "n"],
    "additionalProperties": False,
})


def note(n, sender=0):
    return {"type": "restart_test_note", "sender": sender, "n": n}


class FakeSupervisor(CrawlActor):
    """Records ``actor_failed`` and sets an event for each."""

    def __init__(self):
        super().__init__()
        self.failures = []
        self.failed = threading.Semaphore(0)

    def handle_actor_failed(self, message):
        self.failures.append(message)
        self.failed.release()


class Recorder(RestartableActor):
    """Appends ``(generation, sender, n)`` to ``log`` for each note; raises on a note
    whose ``(sender, n)`` is in ``fail`` (once: it is removed); the note ``n = -1``
    waits for ``gate``."""

    def __init__(self, log, generation, fail=(), gate=None, **kw):
        super().__init__(**kw)
        self.log = log
        self.generation = generation
        self.fail = fail
        self.gate = gate

    def handle_restart_test_note(self, message):
        key = (message["sender"], message["n"])
        if message["n"] == -1 and self.gate is not None:
            assert self.gate.wait(10)
        if key in self.fail:
            self.fail.discard(key)
            raise RuntimeError(f"dies on {key}")
        self.log.append((self.generation, *key))
        return key


class FailingStart(Recorder):
    def on_start(self):
        raise RuntimeError("cannot start")


@pytest.fixture
def supervisor():
    ref = FakeSupervisor.start()
    yield ref, ref._actor_weakref()
    ref.stop()


def test_messages_sent_to_a_dead_child_reach_its_replacement_in_order(supervisor):
    sup_ref, sup = supervisor
    log, gate = [], threading.Event()
    ref = ChildRef("custom")
    Recorder.start(log, 1, fail={(0, 2)}, gate=gate, child_ref=ref, supervisor=sup_ref,
                   crawl_id="t")
    for n in (-1, 0, 1, 2, 3, 4):  # 2 fails; 3 and 4 are in the inbox then
        ref.tell(note(n))
    gate.set()
    assert sup.failed.acquire(timeout=10)
    assert sup.failures[0]["error"] == "RuntimeError: dies on (0, 2)"
    assert ref.restarting and ref.is_alive()
    ref.tell(note(5))  # kept while no actor runs
    answer = ref.ask(note(6), block=False)
    stopped = ref.stop(block=False)
    ref_of_first = ref.current
    Recorder.start(log, 2, child_ref=ref, supervisor=sup_ref, crawl_id="t")
    assert answer.get(timeout=10) == (0, 6)
    assert stopped.get(timeout=10) is True
    assert ref.current is not ref_of_first and ref.restarts == 1
    assert log == [(1, 0, -1), (1, 0, 0), (1, 0, 1),
                   (2, 0, 2), (2, 0, 3), (2, 0, 4), (2, 0, 5), (2, 0, 6)]


def test_no_message_is_lost_or_doubled_while_senders_race_the_death(supervisor):
    """Four threads tell 2,000 notes each while the child dies on one of them and is
    replaced: every note is handled once, and each sender's notes in order."""
    sup_ref, sup = supervisor
    log = []
    ref = ChildRef("custom")
    Recorder.start(log, 1, fail={(2, 700)}, child_ref=ref, supervisor=sup_ref, crawl_id="t")

    def send(sender):
        for n in range(2000):
            ref.tell(note(n, sender))

    senders = [threading.Thread(target=send, args=(s,)) for s in range(4)]
    for t in senders:
        t.start()
    assert sup.failed.acquire(timeout=10)
    Recorder.start(log, 2, child_ref=ref, supervisor=sup_ref, crawl_id="t")
    for t in senders:
        t.join(10)
    assert ref.ask(note(0, 99), timeout=10) == (99, 0)  # after every note told before
    for sender in range(4):
        got = [n for _, s, n in log if s == sender]
        assert got == list(range(2000)), f"sender {sender}"
    assert {g for g, _, _ in log} == {1, 2}


def test_given_up_child_answers_what_it_kept_and_refuses_more(supervisor, caplog):
    sup_ref, sup = supervisor
    ref = ChildRef("custom", "k")
    Recorder.start([], 1, fail={(0, 0)}, child_ref=ref, supervisor=sup_ref, crawl_id="t")
    ref.tell(note(0))
    assert sup.failed.acquire(timeout=10)
    kept_ask = ref.ask(note(1), block=False)
    kept_stop = ref.stop(block=False)
    ref.give_up()
    with pytest.raises(pykka.ActorDeadError):
        kept_ask.get(timeout=10)
    assert kept_stop.get(timeout=10) is True  # it was being stopped
    assert "1 message(s) to the dead custom k" in caplog.text  # note 0, replayed, dropped
    assert ref.failed and not ref.is_alive()
    with pytest.raises(pykka.ActorDeadError):
        ref.tell(note(2))
    assert ref.stop(timeout=10) is False


def test_child_whose_on_start_fails_hands_nothing_over(supervisor):
    sup_ref, sup = supervisor
    ref = ChildRef("custom")
    FailingStart.start([], 1, child_ref=ref, supervisor=sup_ref, crawl_id="t")
    assert sup.failed.acquire(timeout=10)
    assert sup.failures[0]["error"] == "RuntimeError: cannot start"
    assert ref.failed and not ref.restarting
    with pytest.raises(pykka.ActorDeadError):
        ref.tell(note(0))


def test_a_child_ref_is_an_actor_ref_for_schemas_and_senders(supervisor):
    sup_ref, _ = supervisor
    ref = ChildRef("custom")
    actor = Recorder.start([], 1, child_ref=ref, supervisor=sup_ref, crawl_id="t")
    assert isinstance(ref, pykka.ActorRef)
    assert ref.actor_urn == actor.actor_urn and ref.actor_class is Recorder
    assert ref.ask(note(1), timeout=10) == (0, 1)
    assert ref.proxy().generation.get(timeout=10) == 1
    assert ref.stop(timeout=10) is True
    assert not ref.is_alive()
    with pytest.raises(pykka.ActorDeadError):
        ref.tell(note(2))
