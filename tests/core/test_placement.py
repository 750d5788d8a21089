"""CPU placement of a crawl's actor threads (``CPU_AFFINITY``,
crawlfw/core/control/placement.py): the setting's values, real threads placed and moved
with ``sched_setaffinity``, the move decision on /proc/stat figures, and a real
in-process crawl whose actor threads all run on one CPU while the test's thread keeps
its own affinity."""

import logging
import os
import threading

import pytest

import crawlfw
from crawlfw.core.control import placement as placement_module
from crawlfw.core.control.placement import (
    AUTO,
    OFF,
    CpuPlacement,
    parse_cpu_affinity,
)
from crawlfw.crawler import CrawlerRunner
from crawlfw.exceptions import CrawlStartError
from tests.support.countserver import CountingServer
from tests.support.crawl import run_crawl
from tests.support.wait import wait_for

linux = pytest.mark.skipif(not CpuPlacement.supported(), reason="no sched_setaffinity here")
two_cpus = pytest.mark.skipif(
    not CpuPlacement.supported() or len(os.sched_getaffinity(0)) < 2,
    reason="placement needs a process that may use two CPUs")


@pytest.mark.parametrize("value, expected", [
    ("auto", AUTO), ("AUTO", AUTO), (" auto ", AUTO),
    ("off", OFF), (None, OFF), (False, OFF), ("none", OFF), ("", OFF), ("false", OFF),
    (0, frozenset({0})), (3, frozenset({3})), ("2", frozenset({2})),
    ("0,1", frozenset({0, 1})), (" 1 , 0 ", frozenset({0, 1})),
    ([2, 3], frozenset({2, 3})), ((1,), frozenset({1})), ([4, 4], frozenset({4})),
    (["1", 2], frozenset({1, 2})),
])
def test_cpu_affinity_values(value, expected):
    assert parse_cpu_affinity(value) == expected


@pytest.mark.parametrize("value, detail", [
    ("fast", "'fast' is not a CPU number"),
    ("-1", "CPU numbers start at 0"),
    ([0, -2], "CPU numbers start at 0"),
    ("1,,2", "'' is not a CPU number"),
    ([1, "x"], "'x' is not a CPU number"),
    ([True], "True is not a CPU number"),
    (True, "got True"),
    (2.5, "got 2.5"),
    ([], "no CPU named"),
])
def test_bad_cpu_affinity_values_name_the_setting(value, detail):
    with pytest.raises(ValueError) as e:
        parse_cpu_affinity(value)
    assert "Setting 'CPU_AFFINITY' must be 'auto', 'off' or CPU numbers" in str(e.value)
    assert detail in str(e.value)


def test_a_crawler_with_a_bad_cpu_affinity_does_not_start():
    runner = CrawlerRunner({"CPU_AFFINITY": "fastest"})
    with pytest.raises(CrawlStartError, match="CPU_AFFINITY.*'fastest'"):
        runner.create_crawler(crawlfw.Spider)


def _in_thread(target):
    """Run ``target`` on a new thread; return what it returned (re-raising)."""
    box = {}

    def run():
        try:
            box["value"] = target()
        except BaseException as e:  # noqa: BLE001  (re-raised on the test's thread)
            box["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(10)
    if "error" in box:
        raise box["error"]
    return box["value"]


class _PlacedThreads:
    """Threads that enter a placement, wait until told, then leave."""

    def __init__(self, where, mode, count):
        self.where = where
        self.release = threading.Event()
        self.tids = []
        self.entered = []
        self._ready = threading.Barrier(count + 1)
        self.threads = [threading.Thread(target=self._run, args=(mode,)) for _ in range(count)]
        for thread in self.threads:
            thread.start()
        self._ready.wait(10)

    def _run(self, mode):
        placed = self.where.enter(mode)
        self.entered.append(placed)
        self.tids.append(threading.get_native_id())
        self._ready.wait(10)
        self.release.wait(10)
        if placed:
            self.where.leave()

    def stop(self):
        self.release.set()
        for thread in self.threads:
            thread.join(10)


@two_cpus
def test_auto_puts_every_thread_on_one_allowed_cpu_and_forgets_it_after_the_last():
    where = CpuPlacement(interval_s=0)
    allowed = os.sched_getaffinity(0)
    threads = _PlacedThreads(where, AUTO, 3)
    try:
        assert threads.entered == [True, True, True]
        assert where.cpu in allowed
        assert {frozenset(os.sched_getaffinity(tid)) for tid in threads.tids} == {
            frozenset({where.cpu})}
        assert sorted(where.placed_threads()) == sorted(threads.tids)
        assert {os.sched_getscheduler(tid) for tid in threads.tids} == {os.SCHED_BATCH}
        assert os.sched_getscheduler(0) == os.SCHED_OTHER  # nor its scheduling policy
        assert os.sched_getaffinity(0) == allowed  # the test's own thread is left alone
    finally:
        threads.stop()
    assert where.cpu is None and where.placed_threads() == []


@two_cpus
def test_move_puts_every_placed_thread_and_what_they_started_on_the_new_cpu():
    where = CpuPlacement(interval_s=0)
    threads = _PlacedThreads(where, AUTO, 2)
    started = {}
    release = threading.Event()

    def child():  # started by a placed thread: inherits its CPU, is not registered
        started["tid"] = threading.get_native_id()
        release.wait(10)

    def start_child():  # on a placed thread that then ends
        assert where.enter(AUTO)
        thread = threading.Thread(target=child)
        thread.start()
        where.leave()
        return thread

    child_thread = None
    try:
        old = where.cpu
        child_thread = _in_thread(start_child)
        wait_for(lambda: "tid" in started, "the child thread")
        assert os.sched_getaffinity(started["tid"]) == {old}
        new = min(os.sched_getaffinity(0) - {old})
        assert where.move(new, reason="a test") == new
        assert where.cpu == new and where.moves == 1
        assert {frozenset(os.sched_getaffinity(tid)) for tid in threads.tids} == {
            frozenset({new})}
        assert os.sched_getaffinity(started["tid"]) == {new}
        assert where.move(new) is None  # already there
    finally:
        release.set()
        if child_thread is not None:
            child_thread.join(10)
        threads.stop()


@linux
def test_explicit_cpus_place_threads_on_exactly_those():
    cpu = min(os.sched_getaffinity(0))
    where = CpuPlacement(interval_s=0)
    threads = _PlacedThreads(where, frozenset({cpu}), 1)
    try:
        assert threads.entered == [True]
        assert os.sched_getaffinity(threads.tids[0]) == {cpu}
        assert where.cpu is None  # never moved: no 'auto' CPU
    finally:
        threads.stop()


@linux
def test_cpus_the_process_may_not_use_are_refused_once_and_the_thread_left_alone(caplog):
    where = CpuPlacement(interval_s=0)
    missing = frozenset({max(os.sched_getaffinity(0)) + 1000})
    allowed = os.sched_getaffinity(0)
    with caplog.at_level(logging.ERROR, logger=placement_module.__name__):
        first = _in_thread(lambda: (where.enter(missing), os.sched_getaffinity(0)))
        second = _in_thread(lambda: where.enter(missing))
    assert first == (False, allowed)
    assert second is False
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert "CPU_AFFINITY" in errors[0] and str(min(missing)) in errors[0]


@linux
def test_off_places_nothing():
    where = CpuPlacement(interval_s=0)
    assert _in_thread(lambda: where.enter(OFF)) is False
    assert where.placed_threads() == []


def _seed_that_moves(first_move: bool) -> int:
    """A coin seed whose first toss moves (``random() >= 0.5``) or stays."""
    import random

    return next(seed for seed in range(100)
                if (random.Random(seed).random() >= 0.5) == first_move)


def _stat(busy_and_total):
    return {cpu: (busy, total) for cpu, (busy, total) in enumerate(busy_and_total)}


@two_cpus
@pytest.mark.parametrize("after, own_ns, moves, why", [
    # 500 ticks (5 s at USER_HZ 100) per CPU; CPU 0 is the crawl's
    ([(450, 500), (50, 500)], 50 * 10**7, True, "others took 80 % of it, CPU 1 idle 90 %"),
    ([(450, 500), (50, 500)], 400 * 10**7, False, "the crawl itself used most of it"),
    ([(200, 500), (50, 500)], 50 * 10**7, False, "others took 30 %: CPU 1, 90 % idle, does not beat 70 % + 25 %"),
    ([(200, 500), (0, 500)], 50 * 10**7, True, "others took 30 %: CPU 1, all idle, beats 70 % + 25 %"),
    ([(500, 500), (400, 500)], 0, False, "others took it all, but CPU 1 is only 20 % idle"),
    ([(500, 500), (200, 500)], 0, True, "others took it all, CPU 1 is 60 % idle"),
    ([(100, 500), (0, 500)], 0, False, "others took 20 %: not crowded"),
])
def test_the_move_decision(after, own_ns, moves, why):
    where = CpuPlacement(interval_s=0, seed=_seed_that_moves(True))
    threads = _PlacedThreads(where, AUTO, 1)
    try:
        where.move(0) if where.cpu != 0 else None
        before = (_stat([(0, 0), (0, 0)]), 0)
        result = where.rebalance(before, (_stat(after), own_ns))
        assert (result == 1) is moves, why
        assert where.cpu == (1 if moves else 0)
    finally:
        threads.stop()


@two_cpus
def test_a_crowded_crawl_stays_put_when_the_coin_says_so():
    where = CpuPlacement(interval_s=0, seed=_seed_that_moves(False))
    threads = _PlacedThreads(where, AUTO, 1)
    try:
        where.move(0) if where.cpu != 0 else None
        before = (_stat([(0, 0), (0, 0)]), 0)
        assert where.rebalance(before, (_stat([(500, 500), (0, 500)]), 0)) is None
        assert where.cpu == 0
    finally:
        threads.stop()


@two_cpus
def test_the_watcher_samples_real_figures_every_interval_and_stops_with_the_last_thread():
    seen = []

    class Recording(CpuPlacement):
        def rebalance(self, before, after):
            seen.append((before, after))
            return None

    where = Recording(interval_s=0.05)
    threads = _PlacedThreads(where, AUTO, 1)
    try:
        wait_for(lambda: len(seen) >= 2, "two placement checks")
        before, after = seen[-1]
        assert set(os.sched_getaffinity(0)) <= set(after[0])  # /proc/stat has each CPU
        busy, total = after[0][where.cpu]
        assert 0 <= busy <= total and total > 0
        assert after[1] >= before[1] >= 0  # the placed threads' run time, ns
        watcher = where._watcher
        assert watcher is not None and watcher.name == "crawlfw-cpu"
    finally:
        threads.stop()
    watcher.join(5)
    assert not watcher.is_alive()


class AffinitySpider(crawlfw.Spider):
    name = "affinity"
    url = ""

    def start_requests(self):
        yield crawlfw.Request(self.url, callback=self.parse)

    def parse(self, response):
        yield {"affinity": sorted(os.sched_getaffinity(0)),
               "placed": {tid: sorted(os.sched_getaffinity(tid))
                          for tid in placement_module.placement().placed_threads()}}


@pytest.fixture
def server():
    s = CountingServer()
    yield s
    s.stop()


@two_cpus
@pytest.mark.slow  # a local HTTP server
def test_a_crawls_actor_threads_run_on_one_cpu_by_default(server):
    allowed = sorted(os.sched_getaffinity(0))
    result = run_crawl(AffinitySpider, url=f"{server.url}/page/0")
    [item] = result.items
    assert len(item["affinity"]) == 1  # the spider's own thread
    # every actor thread of the crawl (supervisor, engine, scheduler, downloader,
    # spider runner, pipeline, exporter) is on that one CPU
    assert len(item["placed"]) >= 6
    assert {tuple(cpus) for cpus in item["placed"].values()} == {tuple(item["affinity"])}
    assert sorted(os.sched_getaffinity(0)) == allowed  # the test's thread is not moved


@two_cpus
@pytest.mark.slow  # a local HTTP server
def test_cpu_affinity_off_leaves_the_threads_to_the_operating_system(server):
    allowed = sorted(os.sched_getaffinity(0))
    result = run_crawl(AffinitySpider, {"CPU_AFFINITY": "off"}, url=f"{server.url}/page/0")
    [item] = result.items
    assert item["affinity"] == allowed
    assert item["placed"] == {}
