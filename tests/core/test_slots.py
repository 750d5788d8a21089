"""SlotTable, the per-host politeness state of one downloader, driven without threads,
clocks or curl.

Each row plays a sequence of events on a fresh table whose slots have concurrency 2 and
the delay the row gives (``DOWNLOAD_DELAY``), and checks what the last call returned and
the state it left. Requests are named ``<host><n>`` (``a1`` is ``http://a/1``)."""

import random

import pytest

from crawlfw.core.transport.slot import DownloadSlot
from crawlfw.core.transport.slots import DELAY_MEMORY, SlotTable
from crawlfw.http import Request

REQ = {f"{h}{n}": Request(f"http://{h}/{n}") for h in "abc" for n in range(1, 6)}


def name(request):
    host, n = request.url[len("http://"):].split("/")
    return f"{host}{n}"


def table(concurrency=2, delay_s=0.0, randomize=False, seed=1):
    rng = random.Random(seed)
    return SlotTable(lambda key: DownloadSlot(concurrency, delay_s, randomize, rng=rng))


def play(t, events):
    result = None
    for event, *args in events:
        if event == "enq":  # ("enq", "a1", now)
            req, now = args
            result = t.enqueue(name(REQ[req])[0], REQ[req], now)
        elif event == "pop":
            result = [name(r) for _, r in t.pop_ready(args[0])]
        elif event == "done":
            req, now = args
            result = t.done(req[0], REQ[req], now)
        elif event == "next":
            result = t.next_ready_in_s(args[0])
        elif event == "evict":
            result = t.evict_idle(args[0])
        elif event == "requeue":
            result = [name(r) for _, r in t.requeue_all(args[0])]
        elif event == "delay":
            key, delay, now = args
            result = t.set_delay(key, delay, now)
    return result


def enq(*names, now=0.0):
    return [("enq", n, now) for n in names]


@pytest.mark.parametrize("delay_s, events, expected, state", [
    pytest.param(0.0, [("pop", 0.0)], [], {"queued": 0, "in_flight": 0, "slots": 0},
                 id="empty: nothing to start"),
    pytest.param(0.0, [("next", 0.0)], None, {}, id="empty: nothing due"),
    pytest.param(0.0, enq("a1"), None, {"queued": 1, "slots": 1}, id="enqueue creates the slot"),
    pytest.param(0.0, enq("a1") + [("next", 5.0)], 0.0, {}, id="a queued request is due now"),
    pytest.param(0.0, enq("a1", "a2", "a3") + [("pop", 0.0)], ["a1", "a2"],
                 {"queued": 1, "in_flight": 2}, id="per-slot concurrency"),
    pytest.param(0.0, enq("a1", "a2", "a3") + [("pop", 0.0), ("next", 0.0)], None, {},
                 id="slot full: nothing due until a transfer ends"),
    pytest.param(0.0, enq("a1", "a2", "a3") + [("pop", 0.0), ("done", "a1", 0.0), ("pop", 0.0)],
                 ["a3"], {"queued": 0, "in_flight": 2}, id="a transfer ends: the next starts"),
    pytest.param(0.0, enq("a1", "b1", "a2", "b2", "a3", "c1") + [("pop", 0.0)],
                 ["a1", "a2", "b1", "b2", "c1"], {"queued": 1, "in_flight": 5, "slots": 3},
                 id="slots are independent, in the order they became due"),
    pytest.param(1.0, enq("a1", "a2") + [("pop", 0.0)], ["a1"], {"queued": 1},
                 id="delay: one start per delay"),
    pytest.param(1.0, enq("a1", "a2") + [("pop", 0.0), ("next", 0.25)], 0.75, {},
                 id="delay: due when it has passed"),
    pytest.param(1.0, enq("a1", "a2") + [("pop", 0.0), ("pop", 0.5)], [], {"queued": 1},
                 id="delay: not before"),
    pytest.param(1.0, enq("a1", "a2") + [("pop", 0.0), ("pop", 1.0)], ["a2"], {"in_flight": 2},
                 id="delay: then the next"),
    pytest.param(1.0, enq("a1", "a2", "b1") + [("pop", 0.0)], ["a1", "b1"], {},
                 id="delay is per slot"),
    pytest.param(0.0, enq("a1") + [("pop", 0.0), ("done", "a1", 0.0), ("evict", 0.0)], 1,
                 {"slots": 0, "evicted": 1}, id="idle slot without delay: evicted"),
    pytest.param(0.0, enq("a1", "a2") + [("pop", 0.0), ("done", "a1", 0.0), ("evict", 9.0)], 0,
                 {"slots": 1}, id="a transfer in flight: kept"),
    pytest.param(0.0, enq("a1", "a2", "a3") + [("pop", 0.0), ("done", "a1", 0.0),
                                                ("done", "a2", 0.0), ("evict", 9.0)], 0,
                 {"slots": 1, "queued": 1}, id="a request queued: kept"),
    pytest.param(2.0, enq("a1") + [("pop", 0.0), ("done", "a1", 0.5), ("evict", 1.0)], 0,
                 {"slots": 1}, id="idle within its delay: kept (its last start matters)"),
    pytest.param(2.0, enq("a1") + [("pop", 0.0), ("done", "a1", 0.5), ("evict", 2.0)], 1,
                 {"slots": 0}, id="idle past its delay: evicted"),
    pytest.param(2.0, enq("a1") + [("pop", 0.0), ("done", "a1", 0.5), ("evict", 1.0)]
                 + enq("a2", now=1.5) + [("pop", 1.5), ("pop", 2.0)], ["a2"], {},
                 id="kept within the delay, so the delay still holds"),
    pytest.param(0.0, enq("a1") + [("pop", 0.0), ("done", "a1", 0.0)] + enq("a2")
                 + [("pop", 0.0), ("done", "a2", 0.0), ("evict", 0.0)], 1, {"evicted": 1},
                 id="idle twice, evicted once"),
    pytest.param(0.0, enq("a1") + [("pop", 0.0), ("done", "a1", 0.0), ("evict", 0.0)]
                 + enq("a2") + [("pop", 0.0)], ["a2"], {"slots": 1},
                 id="a new request after eviction: a new slot"),
    pytest.param(0.0, enq("a1", "a2", "a3") + [("pop", 0.0), ("requeue", 1.0)], ["a1", "a2"],
                 {"queued": 3, "in_flight": 0}, id="requeue_all: in start order"),
    pytest.param(0.0, enq("a1", "a2", "a3") + [("pop", 0.0), ("requeue", 1.0), ("pop", 1.0)],
                 ["a1", "a2"], {"queued": 1, "in_flight": 2}, id="requeued first, then the rest"),
    pytest.param(0.0, enq("a1", "a2") + [("delay", "a", 1.0, 0.0), ("pop", 0.0), ("next", 0.0)],
                 1.0, {}, id="set_delay (AutoThrottle) spaces the starts"),
    pytest.param(5.0, enq("a1", "a2") + [("pop", 0.0), ("delay", "a", 1.0, 0.5), ("next", 0.5)],
                 0.5, {}, id="a shorter delay: due earlier"),
    pytest.param(0.0, enq("a1") + [("delay", "a", 1.0, 0.0), ("pop", 0.0), ("done", "a1", 0.0),
                                   ("evict", 1.0)] + enq("a2", "a3", now=5.0)
                 + [("pop", 5.0), ("next", 5.0)], 1.0, {},
                 id="the delay set is remembered past eviction"),
])
def test_slot_table(delay_s, events, expected, state):
    t = table(delay_s=delay_s)
    result = play(t, events)
    assert result == expected
    got = {"queued": t.queued, "in_flight": t.in_flight, "slots": len(t.slots),
           "evicted": t.evicted}
    assert {k: got[k] for k in state} == state


def test_done_of_unknown_request_raises():
    t = table()
    with pytest.raises(KeyError, match="no slot 'a'"):
        t.done("a", REQ["a1"], 0.0)
    play(t, enq("a1") + [("pop", 0.0)])
    with pytest.raises(KeyError, match="not in flight"):
        t.done("a", REQ["a2"], 0.0)


def test_set_delay_refuses_a_negative_delay():
    with pytest.raises(ValueError, match="set_delay.*'a'.*>= 0"):
        table().set_delay("a", -1.0, 0.0)


def test_randomized_delay_is_seeded_and_within_half_to_one_and_a_half():
    def starts(seed):
        t = table(concurrency=1, delay_s=1.0, randomize=True, seed=seed)
        for n in range(1, 6):
            t.enqueue("a", REQ[f"a{n}"], 0.0)
        now, times = 0.0, []
        while len(times) < 5:
            for key, r in t.pop_ready(now):
                times.append(now)
                t.done(key, r, now)
            wait = t.next_ready_in_s(now)
            now += wait if wait is not None else 0.0
        return times
    first = starts(7)
    assert first == starts(7)
    gaps = [b - a for a, b in zip(first, first[1:], strict=False)]
    assert all(0.5 <= g <= 1.5 for g in gaps), gaps
    assert len(set(gaps)) > 1


def test_a_pump_does_not_scan_every_slot():
    # 2,000 known slots with delays running, one due: pop_ready touches one.
    calls = []

    class Counting(DownloadSlot):
        def pop_ready(self, now_s):
            calls.append(1)
            return super().pop_ready(now_s)

    t = SlotTable(lambda key: Counting(2, 10.0, False))
    for i in range(2_000):
        t.enqueue(f"h{i}", Request(f"http://h{i}/1"), 0.0)
        t.enqueue(f"h{i}", Request(f"http://h{i}/2"), 0.0)
    assert len(t.pop_ready(0.0)) == 2_000
    calls.clear()
    assert t.pop_ready(5.0) == [] and calls == []
    assert t.next_ready_in_s(5.0) == 5.0


def test_slots_alive_follow_the_active_hosts_not_every_host_seen():
    t = table()
    for i in range(5_000):
        key = f"h{i}"
        request = Request(f"http://{key}/")
        t.enqueue(key, request, float(i))
        [(k, r)] = t.pop_ready(float(i))
        t.done(k, r, float(i))
        t.evict_idle(float(i))
        assert len(t.slots) <= 1
    assert t.evicted == 5_000


def test_delay_memory_is_bounded():
    t = table()
    for i in range(DELAY_MEMORY + 10):
        t.set_delay(f"h{i}", 1.0, 0.0)
    assert len(t._delays) == DELAY_MEMORY


def test_peek_shows_a_held_slot_or_the_one_it_would_make_without_storing_it():
    t = table()
    request = Request("http://a/")
    t.enqueue("a", request, 0.0)
    assert t.peek("a") is t.slots["a"] and list(t.peek("a").queue) == [request]
    t.set_delay("b", 2.5, 0.0)  # remembered for a slot not held
    b = t.peek("b")
    assert b.delay_s == 2.5 and not b.queue and not b.inprogress
    assert t.peek("c").delay_s == t.peek("a").delay_s  # the template's
    assert set(t.slots) == {"a"}  # nothing was stored
    assert t.peek("b", make=False) is None
