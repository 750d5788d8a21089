"""The in-memory frontier on a memory budget (crawlfw/core/frontier/spill.py, issue 30):
requests leave in exactly the order of today's store of objects whatever was spilled
(seeded random pushes, leases, finishes and releases over many hosts and priorities),
RAM stays within the budget, the spill directory is private, gone after close, and
swept after a crash, and a full disk is one clear error."""

import os
import random
import sys
import tracemalloc

import pytest

import crawlfw
from crawlfw.core.frontier.frontier import FrontierError, MemoryFrontier
from crawlfw.core.frontier.hostqueues import MemoryHostStore
from crawlfw.core.frontier.spill import OBJECT_COST, SpillFile, SpillingHostStore
from crawlfw.core.transport.hostpolicy import HostPolicy
from crawlfw.dupefilters import BaseDupeFilter
from crawlfw.squeues import FifoMemoryQueue, LifoMemoryQueue
from crawlfw.utils._scratch import sweep_stale as sweep
from crawlfw.utils.test import get_crawler


class Spider(crawlfw.Spider):
    name = "spill-test"

    def parse_item(self, response):
        pass

    def on_error(self, failure):
        pass


def _not_a_method(response):
    pass


@pytest.fixture(scope="module")
def spider():
    return get_crawler(Spider)._create_spider()


def _request(rng, i, spider):
    """A request of one of 12 hosts (two of them by ``download_slot``), of a random
    priority, sometimes a start request, sometimes one that takes the general path."""
    host = rng.randrange(12)
    meta = {"depth": rng.randrange(3)}
    if host >= 10:
        meta["download_slot"] = f"slot{host}"
    if rng.random() < 0.15:
        meta["is_start_request"] = True
    kind = rng.randrange(10)
    kw = {"callback": spider.parse_item, "priority": rng.choice([-1, 0, 0, 0, 2])}
    if kind == 0:
        kw["callback"] = _not_a_method  # the general path
    elif kind == 1:
        kw.update(method="POST", body=b"x")  # the general path
    elif kind == 2:
        kw.update(errback=spider.on_error, cb_kwargs={"n": i})
    return crawlfw.Request(f"http://h{host % 10}.example/{i}", meta=meta, **kw)


def _view(request, spider):
    cb = request.callback
    return (request.url, request.priority, request.method, request.body,
            cb if cb is _not_a_method else (cb.__name__ if cb else None),
            request.errback.__name__ if request.errback else None,
            request.meta, request.cb_kwargs, request.dont_filter)


def _frontier(spider, tmp_path, limit, mqclass):
    f = MemoryFrontier(BaseDupeFilter(), mqclass, policy=HostPolicy(2, 0.0, False),
                       rng=random.Random(1), memory_limit_bytes=limit,
                       spill_dir=str(tmp_path / "spill"))
    f.open(spider)
    return f


def _play(frontier, seed, spider, check=None):
    """Random events on ``frontier``; returns what every lease gave (viewed)."""
    rng = random.Random(seed)
    leased = []
    log = []
    now = 0.0
    i = 0
    for _ in range(400):
        event = rng.random()
        if event < 0.45:
            batch = [_request(rng, i + j, spider) for j in range(rng.randrange(1, 40))]
            i += len(batch)
            frontier.push_many(batch)
        elif event < 0.8:
            now += 1.0
            out = frontier.lease(rng.randrange(1, 12), now)
            log.append([_view(r, spider) for r in out])
            leased.extend(out)
        elif event < 0.92 and leased:
            done = {}
            for _ in range(rng.randrange(1, len(leased) + 1)):
                r = leased.pop(rng.randrange(len(leased)))
                done[r._host] = done.get(r._host, 0) + 1
            frontier.hosts_finished(done, now)
        elif leased:
            back = [leased.pop(rng.randrange(len(leased)))
                    for _ in range(rng.randrange(1, min(4, len(leased)) + 1))]
            frontier.release(back)
        if check is not None:
            check(frontier)
    while len(frontier):
        now += 1.0
        frontier.hosts_finished({r._host: 1 for r in leased}, now)
        leased = frontier.lease(50, now)
        log.append([_view(r, spider) for r in leased])
    return log


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mqclass", [LifoMemoryQueue, FifoMemoryQueue])
@pytest.mark.parametrize("limit", [1, 3000, 20000, 200_000])
def test_lease_order_on_a_budget_is_the_order_of_objects_in_memory(spider, tmp_path, seed,
                                                                    mqclass, limit):
    reference = _frontier(spider, tmp_path, 0, mqclass)
    reference.store = MemoryHostStore(lifo=mqclass is LifoMemoryQueue)  # today's store
    budget = _frontier(spider, tmp_path, limit, mqclass)
    spilled = []

    def check(f):
        spilled.append(f.store.spilled)
        assert f.store.ram_bytes <= limit

    assert _play(budget, seed, spider, check) == _play(reference, seed, spider)
    assert max(spilled) > 0  # something was on disk
    assert len(budget) == 0 and budget.store.spilled == 0 and not budget.store._objects
    budget.close("finished")


def test_requests_within_the_object_window_leave_as_they_came(spider, tmp_path):
    """Below a quarter of the budget a request is kept as the object it came as (no
    record made, none decoded: the same object leaves); past it, as a record (an equal
    request leaves); objects moved to disk by an eviction become records there (none
    is kept in memory for its place on disk)."""
    limit = 200 * OBJECT_COST  # a window of 50 objects
    f = _frontier(spider, tmp_path, limit, FifoMemoryQueue)
    requests = [crawlfw.Request(f"http://h{i % 2}.example/{i}", callback=spider.parse_item,
                                meta={"depth": 1}) for i in range(60)]
    f.push_many(requests)
    kinds = [item.__class__ for h in f.store.hosts.values() for q in h.queues.values()
             for item in q]
    assert kinds.count(crawlfw.Request) == 50 and kinds.count(bytes) == 10
    out, now = [], 1.0
    while len(f):
        got = f.lease(60, now)
        out += got
        f.hosts_finished({r._host: 1 for r in got}, now)
        now += 1.0
    kept = {id(r) for r in requests[:50]}
    assert sum(id(r) in kept for r in out) == 50  # the same objects
    assert sorted(r.url for r in out) == sorted(r.url for r in requests)
    assert all(r.callback == spider.parse_item and r.meta == {"depth": 1} for r in out)
    # past the budget: the window's objects go to disk as records
    many = [crawlfw.Request(f"http://h{i % 3}.example/more/{i}", callback=spider.parse_item)
            for i in range(3000)]
    f.push_many(many)
    assert f.store.spilled > 0 and not f.store._objects and f.store.object_bytes == 0
    assert f.store.ram_bytes <= limit
    left = f.close("finished")
    assert sorted(r.url for r in left) == sorted(r.url for r in many)


def test_without_a_budget_nothing_spills(spider, tmp_path):
    f = _frontier(spider, tmp_path, 0, LifoMemoryQueue)
    _play(f, 3, spider, lambda f: None)
    assert f.store.path is None and not (tmp_path / "spill").exists()


def test_ram_stays_within_the_budget(spider, tmp_path):
    """50,000 requests of 200-byte URLs over 500 hosts: with a 256 KiB budget the
    frontier's objects grow by a small part of what the requests would take."""
    def grow(limit):
        f = _frontier(spider, tmp_path, limit, LifoMemoryQueue)
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for batch in range(200):
            f.push_many([crawlfw.Request(f"http://h{(batch * 250 + j) % 500}.example/"
                                         f"{batch}/{j}/" + "p" * 170,
                                         callback=spider.parse_item, meta={"depth": 1})
                         for j in range(250)])
            assert f.store.ram_bytes <= 256 * 1024 or not limit
        grown = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        assert len(f) == 50_000
        f.close("finished")
        return grown

    unlimited, limited = grow(0), grow(256 * 1024)
    assert unlimited > 12_000_000  # 50,000 records of ~250 bytes
    assert limited < 2_500_000  # the budget, the hosts' state, one batch of disk writes


def test_a_million_hosts_case_heads_go_to_disk(spider, tmp_path):
    """Hosts with one request each: past the budget their heads go to disk too, and
    every request is leased once, best first."""
    f = _frontier(spider, tmp_path, 64 * 1024, LifoMemoryQueue)
    rng = random.Random(5)
    n = 5000
    f.push_many([crawlfw.Request(f"http://host{i}.example/", priority=rng.randrange(3),
                                 callback=spider.parse_item) for i in range(n)])
    hosts = f.store.hosts
    # no RAM part: the host is one int (its count and best key on disk), no object
    assert sum(1 for h in hosts.values() if h.__class__ is int) > n // 2
    assert all(h.n_ram for h in hosts.values() if h.__class__ is not int)
    out = f.lease(n + 10, 1.0)
    assert sorted(r.url for r in out) == sorted(f"http://host{i}.example/" for i in range(n))
    assert [r.priority for r in out] == sorted((r.priority for r in out), reverse=True)
    assert len(f.store.hosts) == 0 and f.store.ram_bytes == 0
    f.close("finished")


def test_close_counts_at_once_and_decodes_when_iterated(spider, tmp_path):
    f = _frontier(spider, tmp_path, 4096, FifoMemoryQueue)
    requests = [crawlfw.Request(f"http://h{i % 7}.example/{i}", callback=spider.parse_item)
                for i in range(500)]
    requests.append(crawlfw.Request("http://h1.example/lambda", callback=_not_a_method))
    f.push_many(requests)
    spill = f.store.path
    assert spill is not None and os.path.isdir(spill)
    assert os.listdir(spill) == [".lock"]  # the file was unlinked once open
    left = f.close("finished")
    assert not os.path.exists(spill)  # the directory goes at close
    assert len(left) == 501 and left
    assert sorted(r.url for r in left) == sorted(r.url for r in requests)
    assert left[0].callback == spider.parse_item
    left.close()


def test_full_disk_is_one_clear_error(spider, tmp_path):
    store = SpillingHostStore(limit_bytes=1, root=str(tmp_path), max_pages=8)
    store.codec.spider = spider
    with pytest.raises(FrontierError) as e:
        for i in range(20_000):
            store.push("h", 0, crawlfw.Request(f"http://h/{i}/" + "x" * 100))
    assert "Cannot write the frontier's spill store in " + str(tmp_path) in str(e.value)
    assert "full" in str(e.value)
    store.close()
    assert os.listdir(tmp_path) == []


def test_unwritable_spill_directory_is_one_clear_error(spider, tmp_path):
    (tmp_path / "file").write_text("")  # (chmod would not stop root)
    root = tmp_path / "file" / "crawlfw"
    store = SpillingHostStore(limit_bytes=1, root=str(root))
    store.codec.spider = spider
    with pytest.raises(FrontierError) as e:
        for i in range(5000):
            store.push("h", 0, crawlfw.Request(f"http://h/{i}"))
    assert f"Cannot make the frontier's spill store in {root}: " in str(e.value)
    assert "TMPDIR" in str(e.value)
    store.close()


def test_sweep_removes_what_ended_crawls_left(tmp_path):
    root = str(tmp_path)
    live = SpillFile(root)  # this process's, locked
    dead = tmp_path / "frontier-999999999-abc"  # a lock nobody holds
    dead.mkdir()
    (dead / ".lock").write_text("")
    no_lock_dead = tmp_path / "frontier-999999998-abc"  # made, died before its lock
    no_lock_dead.mkdir()
    no_lock_live = tmp_path / f"frontier-{os.getpid()}-xyz"
    no_lock_live.mkdir()
    other = tmp_path / "not-ours"
    other.mkdir()
    removed = sweep(root)
    assert sorted(removed) == sorted([str(dead), str(no_lock_dead)])
    assert sorted(os.listdir(root)) == sorted([os.path.basename(live.path),
                                               no_lock_live.name, "not-ours"])
    live.close()
    assert not os.path.exists(live.path)


def test_frontier_sweeps_at_start(tmp_path):
    spill = tmp_path / "spill"
    spill.mkdir(mode=0o700)
    (spill / "frontier-999999999-abc").mkdir()
    MemoryFrontier(BaseDupeFilter(), spill_dir=str(spill))
    assert os.listdir(spill) == []


def test_a_shared_spill_root_is_refused(tmp_path, spider):
    root = tmp_path / "shared"
    root.mkdir()
    root.chmod(0o777)
    with pytest.raises(FrontierError, match="not a private directory"):
        SpillFile(str(root))


@pytest.mark.parametrize("settings, limit", [({}, 96 * 1024 * 1024),
                                             ({"FRONTIER_MEMORY_LIMIT": 12345}, 12345),
                                             ({"FRONTIER_MEMORY_LIMIT": "0"}, 0)])
def test_frontier_memory_limit_is_the_budget(settings, limit):
    from crawlfw.core.frontier.scheduler import Scheduler

    scheduler = Scheduler.from_crawler(get_crawler(Spider, settings))
    assert isinstance(scheduler.frontier, MemoryFrontier)
    assert scheduler.frontier.store.limit_bytes == limit


def test_a_negative_budget_is_refused_at_start():
    from crawlfw.core.frontier.scheduler import Scheduler
    from crawlfw.exceptions import CrawlStartError

    with pytest.raises(CrawlStartError, match="FRONTIER_MEMORY_LIMIT must be a number of "
                                              "bytes, or 0 for no limit, got '-1'"):
        Scheduler.from_crawler(get_crawler(Spider, {"FRONTIER_MEMORY_LIMIT": "-1"}))


def _state_bytes(spider, tmp_path, hosts):
    """Bytes tracemalloc counts for a frontier's state after 3 requests of each of
    ``hosts`` hosts were pushed past a tiny budget (all on disk: the hosts only have
    queued requests), the requests and host names made before counting."""
    f = _frontier(spider, tmp_path / str(hosts), 8 * 1024, LifoMemoryQueue)
    batches = [[crawlfw.Request(f"http://host{i}.example/{j}", callback=spider.parse_item)
                for i in range(hosts)] for j in range(3)]
    for batch in batches:
        for request in batch:
            vars(request)  # made now, as the codec reads it: not the hosts' state
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for batch in batches:
            f.push_many(batch)
        f.store._flush()  # the disk writes buffered: not the hosts' state
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(f) == 3 * hosts and f.store.spilled > 2 * hosts
    f.close("finished")
    return after - before


def test_an_idle_host_costs_a_fixed_few_bytes(spider, tmp_path):
    """The state of a host that only has queued requests is a few fields, no object:
    ~240 bytes besides its name (HostQueues' list slots, number and heap int, the
    store's int, the two dict entries); 356 before (a _Host object each in HostQueues
    and in the store, a heap tuple of five)."""
    few, many = _state_bytes(spider, tmp_path, 500), _state_bytes(spider, tmp_path, 3_500)
    per_host = (many - few) / 3_000 - sys.getsizeof("host1234.example")  # the name kept
    assert per_host < 300, per_host
