"""HostQueues, the frontier's ready-set of hosts, and HostPolicy, the per-host politeness
rule, driven without threads or clocks.

Each row plays events on a fresh ready-set over a MemoryHostStore (concurrency 2 per
host unless the row says, the delay the row gives) and checks what the last call
returned and the state it left. Requests are named ``<host><n>`` (``a1`` is
``http://a/1``); ``push`` names may carry a priority (``a1@5``) or ``!`` for a start
request (``a1!``)."""

import random
import warnings

import pytest

from crawlfw.core.frontier.hostqueues import HostQueues, MemoryHostStore, sort_key
from crawlfw.core.transport.hostpolicy import DELAY_MEMORY, HostPolicy, politeness_settings
from crawlfw.core.transport.slot import DownloadSlot
from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.http import Request
from crawlfw.settings import Settings


def name(request):
    return request.url[len("http://"):].replace("/", "")


class Harness:
    def __init__(self, concurrency=2, delay_s=0.0, randomize=False, lifo=True):
        self.policy = HostPolicy(concurrency, delay_s, randomize)
        self.rq = HostQueues(self.policy, rng=random.Random(1))
        self.store = MemoryHostStore(lifo=lifo)
        self.leased = {}

    def push(self, spec):
        start = spec.endswith("!")
        spec = spec.rstrip("!")
        spec, _, prio = spec.partition("@")
        host, n = spec[0], spec[1:]
        request = Request(f"http://{host}/{n}", priority=int(prio or 0))
        key = sort_key(request.priority, start)
        self.store.push(host, key, request)
        self.rq.added(host, key)

    def lease(self, n, now):
        out = self.rq.lease(n, now, self.store.take)
        for r in out:
            self.leased[name(r)] = r
        return [name(r) for r in out]


def play(events, **kw):
    h = Harness(**kw)
    result = None
    for event, *args in events:
        if event == "push":
            for spec in args:
                result = h.push(spec)
        elif event == "lease":
            result = h.lease(*args)
        elif event == "done":  # ("done", {"a": 1}, now)
            result = h.rq.finished(*args)
        elif event == "next":
            result = h.rq.next_ready_in_s(args[0])
        elif event == "release":  # ("release", "a1")
            r = h.leased.pop(args[0])
            h.store.push(r._host, sort_key(r.priority, False), r)
            result = h.rq.released(r._host, sort_key(r.priority, False))
        elif event == "delay":  # ("delay", "a", 2.0)
            h.policy.set_host_delay(args[0], args[1])
            result = h.rq.delay_changed(args[0])
    return h, result


@pytest.mark.parametrize("kw, events, expected, state", [
    pytest.param({}, [("lease", 4, 0.0)], [], {"queued": 0, "hosts": 0}, id="empty"),
    pytest.param({}, [("push", "a1", "a2", "a3"), ("lease", 10, 0.0)], ["a3", "a2"],
                 {"queued": 1, "in_flight": 2, "hosts": 1},
                 id="a host gives at most its concurrency, LIFO within a priority"),
    pytest.param({"lifo": False}, [("push", "a1", "a2", "a3"), ("lease", 10, 0.0)],
                 ["a1", "a2"], {"queued": 1}, id="FIFO within a priority"),
    pytest.param({}, [("push", "a1", "a2", "a3", "b1"), ("lease", 10, 0.0)],
                 ["a3", "a2", "b1"], {"queued": 1, "in_flight": 3},
                 id="a full host does not hold the others back"),
    pytest.param({}, [("push", "a1", "a2", "a3", "b1"), ("lease", 10, 0.0),
                      ("done", {"a": 1}, 0.5), ("lease", 10, 0.5)], ["a1"],
                 {"queued": 0, "in_flight": 3}, id="a finished transfer makes its host ready"),
    pytest.param({}, [("push", "a1", "b1@5", "a2@3"), ("lease", 10, 0.0)],
                 ["b1", "a2", "a1"], {}, id="across hosts by head priority"),
    pytest.param({"concurrency": 4}, [("push", "a1@1", "a2", "b1@1", "a3@1"), ("lease", 10, 0.0)],
                 ["a3", "a1", "b1", "a2"], {},
                 id="a host gives requests no worse than the next host's head, then the next"),
    pytest.param({"concurrency": 4}, [("push", "a1!", "a2!", "a3", "b1!"), ("lease", 10, 0.0)],
                 ["a3", "a1", "a2", "b1"], {},
                 id="start requests FIFO after the others of their priority"),
    pytest.param({"concurrency": 1}, [("push", "a1", "b1", "c1", "a2", "b2", "c2"),
                                      ("lease", 10, 0.0), ("done", {"b": 1}, 1.0),
                                      ("done", {"a": 1}, 2.0), ("lease", 10, 2.0)],
                 ["b1", "a1"], {},
                 id="ties: the host whose requests wait longest first"),
    pytest.param({"delay_s": 2.0, "concurrency": 8}, [("push", "a1", "a2", "a3", "b1"),
                                                      ("lease", 10, 0.0)], ["a3", "b1"],
                 {"queued": 2}, id="a delay: one request per host per delay"),
    pytest.param({"delay_s": 2.0}, [("push", "a1", "a2"), ("lease", 10, 0.0),
                                    ("lease", 10, 1.9)], [], {"queued": 1},
                 id="inside the delay: nothing"),
    pytest.param({"delay_s": 2.0}, [("push", "a1", "a2"), ("lease", 10, 0.0),
                                    ("next", 0.5)], 1.5, {}, id="next_ready_in_s: the delay left"),
    pytest.param({"delay_s": 2.0}, [("push", "a1", "a2"), ("lease", 10, 0.0),
                                    ("lease", 10, 2.0)], ["a1"], {"in_flight": 2},
                 id="past the delay: the next one (concurrency still 2)"),
    pytest.param({"concurrency": 1}, [("push", "a1", "a2"), ("lease", 10, 0.0),
                                      ("next", 0.0)], None, {},
                 id="next_ready_in_s: None when hosts wait for transfers, not a delay"),
    pytest.param({}, [("push", "a1"), ("next", 0.0)], 0.0, {}, id="next_ready_in_s: 0 when ready"),
    pytest.param({}, [("push", "a1"), ("lease", 10, 0.0), ("done", {"a": 1}, 0.1)], None,
                 {"hosts": 0, "state": 0, "in_flight": 0},
                 id="an empty host without a delay keeps no state"),
    pytest.param({"delay_s": 2.0}, [("push", "a1"), ("lease", 10, 0.0), ("done", {"a": 1}, 0.1)],
                 None, {"hosts": 0, "state": 1}, id="an empty host keeps only its next start"),
    pytest.param({"delay_s": 2.0}, [("push", "a1"), ("lease", 10, 0.0), ("done", {"a": 1}, 0.1),
                                    ("push", "a2"), ("lease", 10, 1.0)], [], {"queued": 1},
                 id="... which still spaces a request queued again"),
    pytest.param({"delay_s": 2.0}, [("push", "a1"), ("lease", 10, 0.0), ("done", {"a": 1}, 0.1),
                                    ("lease", 10, 2.5)], [], {"hosts": 0, "state": 0},
                 id="... and is forgotten once passed"),
    pytest.param({}, [("push", "a1", "a2"), ("lease", 10, 0.0), ("release", "a2"),
                      ("lease", 10, 0.0)], ["a2"], {"in_flight": 2, "queued": 0},
                 id="a released request is queued again and its host's count given back"),
    pytest.param({}, [("push", "a1"), ("delay", "a", 3.0), ("push", "a2"), ("lease", 10, 0.0),
                      ("next", 1.0)], 2.0, {"queued": 1},
                 id="set_host_delay (AutoThrottle) applies to that host"),
    pytest.param({"delay_s": 4.0}, [("push", "a1", "a2"), ("lease", 10, 0.0),
                                    ("delay", "a", 1.0), ("lease", 10, 1.0)], ["a1"], {},
                 id="a delay shortened while a host waits moves its next start"),
    pytest.param({"delay_s": 1.0}, [("push", "a1", "a2"), ("lease", 10, 0.0),
                                    ("delay", "a", 3.0), ("lease", 10, 2.0)], [], {},
                 id="a delay lengthened too"),
    pytest.param({}, [("push", "a1"), ("lease", 10, 0.0), ("done", {"a": 5, "z": 1}, 0.0)],
                 None, {"in_flight": 0}, id="counts beyond what is in flight are ignored"),
    pytest.param({"concurrency": 1}, [("push", "a1", "a2"), ("lease", 1, 0.0),
                                      ("push", "b1"), ("done", {"a": 1}, 1.0),
                                      ("lease", 1, 1.0)], ["a1"], {},
                 id="a host with a backlog goes before one whose requests just came"),
    pytest.param({"concurrency": 1}, [("push", "a1", "b1@1"), ("lease", 1, 0.0),
                                      ("push", "a2@9"), ("lease", 1, 0.0)], ["a2"], {},
                 id="a better request pushed raises its host's place"),
])
def test_ready_set(kw, events, expected, state):
    h, result = play(events, **kw)
    assert result == expected
    got = {"queued": h.rq.queued, "in_flight": h.rq.in_flight, "hosts": len(h.rq.hosts),
           "state": h.rq.state_size()}
    assert {k: got[k] for k in state} == state
    assert len(h.store) == h.rq.queued  # the counts follow the storage


def test_randomized_delay_is_seeded_and_in_range():
    h = Harness(concurrency=8, delay_s=1.0, randomize=True)
    for i in range(40):
        h.push(f"a{i}")
    now, gaps = 0.0, []
    last = None
    while h.rq.queued:
        wait = h.rq.next_ready_in_s(now)
        now += wait
        assert len(h.lease(10, now)) == 1
        h.rq.finished({"a": 1}, now)
        if last is not None:
            gaps.append(now - last)
        last = now
    assert all(0.5 <= g <= 1.5 for g in gaps)
    assert max(gaps) - min(gaps) > 0.3  # randomized, not constant


def test_many_hosts_cost_no_state_once_done():
    h = Harness()
    rq, store = h.rq, h.store
    for i in range(2000):
        r = Request(f"http://host{i}/1")
        store.push(f"host{i}", 0, r)
        rq.added(f"host{i}", 0)
    out = rq.lease(5000, 0.0, store.take)
    assert len(out) == 2000
    rq.finished({f"host{i}": 1 for i in range(2000)}, 1.0)
    assert rq.state_size() == 0 and len(store.hosts) == 0


@pytest.mark.parametrize("settings, spider_attrs, expected", [
    ({}, {}, (8, 0.0, True)),
    ({"CONCURRENT_REQUESTS_PER_IP": 3, "DOWNLOAD_DELAY": 1.5}, {}, (3, 1.5, True)),
    ({"RANDOMIZE_DOWNLOAD_DELAY": False}, {"download_delay": 2, "max_concurrent_requests": 5},
     (5, 2.0, False)),
])
def test_one_rule_for_slots_and_hosts(settings, spider_attrs, expected):
    spider = type("S", (), spider_attrs)()
    assert politeness_settings(Settings(settings), spider) == expected
    slot = DownloadSlot.from_settings(Settings(settings), spider)
    policy = HostPolicy.from_settings(Settings(settings), spider)
    assert (slot.concurrency, slot.delay_s, slot.randomize_delay) == expected
    assert (policy.concurrency("x"), policy.base_delay_s("x"), policy.randomize) == expected


def test_policy_from_crawler_resolves_at_first_use():
    spider = type("S", (), {})()
    crawler = type("C", (), {"settings": Settings({"DOWNLOAD_DELAY": 1.0}), "spider": spider})()
    policy = HostPolicy.from_crawler(crawler)
    spider.download_delay = 4.0  # a spider_opened handler (AutoThrottle) sets it later
    assert policy.base_delay_s("a") == 4.0


def test_policy_deprecated_spider_attribute_and_bad_values():
    spider = type("S", (), {"DOWNLOAD_DELAY": 3})()
    with pytest.warns(CrawlfwDeprecationWarning, match="download_delay"):
        assert politeness_settings(Settings(), spider)[1] == 3.0
    with pytest.raises(ValueError, match="CONCURRENT_REQUESTS_PER_DOMAIN"):
        HostPolicy(0, 0.0, False)
    with pytest.raises(ValueError, match="DOWNLOAD_DELAY"):
        HostPolicy(1, -1.0, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        policy = HostPolicy(1, 0.5, False)
    with pytest.raises(ValueError, match="'a'"):
        policy.set_host_delay("a", float("nan"))


def test_policy_remembers_the_last_delays_only():
    policy = HostPolicy(1, 0.5, False)
    for i in range(DELAY_MEMORY + 1):
        policy.set_host_delay(f"h{i}", 2.0)
    assert policy.base_delay_s("h0") == 0.5
    assert policy.base_delay_s(f"h{DELAY_MEMORY}") == 2.0


def test_counts_follow_the_storage_when_they_disagree():
    """A storage that has fewer requests than counted (rows gone from under it) ends the
    host's queue instead of looping on it."""
    rq = HostQueues(HostPolicy(4, 0.0, False))
    rq.added("a", 0, count=3)
    calls = []

    def take(key, limit, bound):
        calls.append(key)
        return [], None

    assert rq.lease(10, 0.0, take) == []
    assert calls == ["a"] and rq.queued == 0 and rq.state_size() == 0


def test_host_figures_give_queued_in_flight_and_ready_per_host():
    """What the dashboard's sampler reads (crawlfw/dashboard/sampler.py): a host in its
    delay after a lease is not ready; one with nothing leased is; a host with nothing
    queued or in flight is not listed."""
    h = Harness(concurrency=1, delay_s=10.0)
    for spec in ("a1", "a2", "b1", "c1"):
        h.push(spec)
    assert sorted(h.lease(2, now=0.0)) == ["a2", "b1"]  # LIFO within a host
    h.rq.finished({"b": 1}, now_s=1.0)  # b: nothing queued, cooling in its delay
    figures = {key: rest for key, *rest in h.rq.host_figures()}
    assert figures == {"a": [1, 1, False], "c": [1, 0, True]}
