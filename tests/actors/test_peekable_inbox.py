"""PeekableInbox (the Scheduler's inbox with a shared frontier): a ``SimpleQueue`` whose
consumer may look at the next envelope. It must keep the queue's order and lose
nothing, whatever the mix of peeks and gets, also while another thread puts."""

import queue
import random
import threading
from collections import deque

import pytest

from crawlfw.actors._base import PeekableInbox
from crawlfw.actors._childref import ChildRef
from crawlfw.actors._pykka import Envelope


def test_peekable_inbox_matches_a_plain_fifo_on_a_seeded_mix_of_operations():
    rng = random.Random(8)
    inbox, fifo = PeekableInbox(), deque()
    for step in range(5000):
        op = rng.choice(("put", "put", "get_nowait", "get", "peek", "peek", "state"))
        if op == "put":
            inbox.put(step)
            fifo.append(step)
        elif op == "peek":
            if fifo:
                assert inbox.peek() == fifo[0]
            else:
                with pytest.raises(queue.Empty):
                    inbox.peek()
        elif op in ("get", "get_nowait"):
            if fifo:
                got = inbox.get_nowait() if op == "get_nowait" else inbox.get(True, 1)
                assert got == fifo.popleft()
            else:
                with pytest.raises(queue.Empty):
                    inbox.get_nowait() if op == "get_nowait" else inbox.get(True, 0.001)
        assert inbox.qsize() == len(fifo)
        assert inbox.empty() is (not fifo)


def test_a_blocking_get_returns_the_peeked_envelope_without_waiting():
    inbox = PeekableInbox()
    inbox.put("a")
    assert inbox.peek() == "a"
    assert inbox.empty() is False  # the peeked one still counts
    assert inbox.get() == "a"  # would block forever if the peeked one were lost
    assert inbox.empty()


def test_peeks_and_gets_keep_the_order_of_a_producer_thread():
    n = 20_000
    inbox = PeekableInbox()
    rng = random.Random(80)

    def produce():
        for i in range(n):
            inbox.put(i)

    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    got = []
    while len(got) < n:
        if rng.random() < 0.5:
            try:
                inbox.peek()
            except queue.Empty:
                pass
        got.append(inbox.get(True, 30))
    producer.join(30)
    assert got == list(range(n))
    assert inbox.empty()


def test_a_childref_hand_over_keeps_the_peeked_envelope_first():
    """A dying Scheduler's inbox is drained by ChildRef.hand_over with get_nowait: the
    envelope its coalescing peeked at must come first, then the rest, in order."""

    class _Ref:
        actor_inbox = PeekableInbox()
        actor_stopped = threading.Event()

    ref = ChildRef("scheduler")
    dying = _Ref()
    ref.attach(dying)
    for i in range(3):
        ref.tell({"type": "enqueue_requests", "requests": [], "n": i})
    assert dying.actor_inbox.peek().message["n"] == 0
    assert ref.hand_over(dying, dying.actor_inbox, replay=[])

    class _Next:
        actor_inbox = queue.SimpleQueue()
        actor_stopped = threading.Event()

    nxt = _Next()
    ref.attach(nxt)
    kept = [nxt.actor_inbox.get_nowait() for _ in range(nxt.actor_inbox.qsize())]
    assert all(isinstance(e, Envelope) for e in kept)
    assert [e.message["n"] for e in kept] == [0, 1, 2]
