"""The shared frontier on a real ``redis-server`` (no actors): queue order, the shared
dupefilter, leases that expire and go back to the queue, acks and worker metadata in one
commit, releases, the start requests pushed once, JSON storage (never pickle), refusal
of what JSON cannot hold, and retries while Redis restarts."""

import json
import logging
import threading
import time

import pytest

import crawlfw
from crawlfw.core.frontier.frontier import FrontierError
from crawlfw.core.frontier.redis_frontier import RedisFrontier, frontier_key, worker_id
from crawlfw.dupefilters import RFPDupeFilter
from crawlfw.settings import Settings
from crawlfw.utils.test import get_crawler
from tests.support.wait import wait_for


class Spider(crawlfw.Spider):
    name = "redis-test"

    def parse_item(self, response):
        pass


@pytest.fixture
def spider():
    return get_crawler(Spider)._create_spider()


def R(path, **kw):  # noqa: N802 - a request, briefly
    return crawlfw.Request(f"http://127.0.0.1/{path}", **kw)


def urls(requests):
    return [r.url.rsplit("/", 1)[1] for r in requests]


@pytest.fixture
def make(redis_server, spider):
    made = []

    def make(worker="w1", key="{t}", **kw):
        kw.setdefault("lease_timeout_s", 30.0)
        # Per-host queues: these tests are about order and leases, on one host; they
        # leave its concurrency unbounded (the per-host tests below set theirs).
        kw.setdefault("host_limits", lambda: (1000, 0.0, False))
        f = RedisFrontier(redis_server.url, key, RFPDupeFilter(), worker=worker, **kw)
        f.open(spider)
        made.append(f)
        return f

    yield make
    for f in made:
        f.client.close()


@pytest.mark.slow
def test_queue_order_priority_then_lifo_or_fifo(make):
    lifo = make("a")
    assert lifo.push_many([R("1"), R("2"), R("3", priority=5), R("4")]) == [True] * 4
    assert urls(lifo.lease(10)) == ["3", "4", "2", "1"]
    fifo = make("b", key="{t2}", lifo=False)  # (another crawl)
    fifo.push_many([R("1"), R("2"), R("3", priority=-1), R("4")])
    assert urls(fifo.lease(10)) == ["1", "2", "4", "3"]


@pytest.mark.slow
def test_the_dupefilter_is_shared_by_workers(make):
    a, b = make("a"), make("b")
    assert a.push(R("x")) is True
    assert b.push(R("x")) is False  # b never saw it: Redis did
    assert b.push(R("x", dont_filter=True)) is True
    assert a.push(R("x")) is False  # answered from a's cache
    assert len(a.lease(10)) + len(b.lease(10)) == 2


@pytest.mark.slow
def test_requests_are_stored_as_json_with_callbacks_by_name(make, spider, redis_server):
    f = make()
    f.push(crawlfw.FormRequest("http://127.0.0.1/f", formdata={"q": "é"},
                               callback=spider.parse_item, meta={"depth": 2},
                               cb_kwargs={"k": [1]}))
    raw = f.client.hvals("{t}:requests")
    assert len(raw) == 1
    stored = json.loads(raw[0])  # plain JSON, no pickle
    assert stored["callback"] == "parse_item"
    assert stored["_class"] == "crawlfw.http.request.form.FormRequest"
    (request,) = f.lease(1)
    assert type(request) is crawlfw.FormRequest
    assert request.callback == spider.parse_item
    assert request.meta["depth"] == 2 and request.cb_kwargs == {"k": [1]}
    assert request.body == b"q=%C3%A9"


@pytest.mark.slow
def test_what_json_cannot_hold_is_refused_with_an_error(make, spider, caplog):
    f = make()
    with caplog.at_level(logging.ERROR):
        assert f.push(R("bad", meta={"obj": object()})) is False
        assert f.push(R("fn", callback=lambda r: None)) is False
    assert "refused" in caplog.text and "/bad" in caplog.text and "/fn" in caplog.text
    # The crawl's own machinery keeps such requests in this worker's memory.
    assert f.push(R("robots", callback=lambda r: None), transient_ok=True) is True
    (request,) = f.lease(5)
    assert request._lease is None and urls([request]) == ["robots"]


@pytest.mark.slow
def test_ack_in_commit_with_worker_meta_is_atomic_and_checks_the_owner(make):
    a, b = make("a"), make("b")
    a.push_many([R("1"), R("2")])
    r1, r2 = a.lease(2)
    a.ack([r1._lease])
    a.commit({"feeds": {"f.jl": {"offset": 10}}})
    assert a.client.hgetall("{t}:worker:a") == {b"feeds": b'{"f.jl": {"offset": 10}}'}
    assert a.status()["leased"] == 1
    b.ack([r2._lease])  # not b's lease: left alone
    b.commit()
    assert a.status()["leased"] == 1
    # A later frontier of worker a reads its committed metadata back.
    assert make("a").meta["feeds"] == {"f.jl": {"offset": 10}}


@pytest.mark.slow
def test_an_expired_lease_goes_back_to_the_queue_for_another_worker(make):
    dead = make("dead", lease_timeout_s=0.3)
    live = make("live", lease_timeout_s=30.0)
    dead.push_many([R("1"), R("2")])
    assert len(dead.lease(2)) == 2
    assert live.lease(2) == []
    taken = wait_for(lambda: live.lease(2), "the dead worker's leases to expire", 30)
    assert sorted(urls(taken)) == ["1", "2"]
    # The late worker's ack does not take them from the live one.
    dead.ack([r._lease for r in taken])
    dead.commit()
    assert live.status()["leased"] == 2


@pytest.mark.slow
def test_renewed_leases_do_not_expire(make):
    a = make("a", lease_timeout_s=0.5)
    b = make("b")
    a.push(R("1"))
    a.lease(1)
    started = time.monotonic()

    def renewed_past_the_timeout():
        assert a.renew() == []
        assert b.lease(1) == []  # a's lease never expired meanwhile
        return time.monotonic() - started > 2 * 0.5  # two lease timeouts went by

    wait_for(renewed_past_the_timeout, "two lease timeouts of renewals", poll_s=0.1)


@pytest.mark.slow
def test_a_restarted_worker_queues_its_dead_process_leases_again(make):
    make("a").push_many([R("1"), R("2")])
    assert len(make("a").lease(2)) == 2  # that process dies
    b = make("b")
    assert b.lease(2) == []
    make("a")  # the same worker id, started again: no need to wait for the timeout
    assert sorted(urls(b.lease(2))) == ["1", "2"]


@pytest.mark.slow
def test_release_requeues_only_own_leases(make):
    a, b = make("a"), make("b")
    a.push(R("1"))
    (r,) = a.lease(1)
    b.release([r])  # not b's
    assert b.lease(1) == []
    a.release([r])
    assert urls(b.lease(1)) == ["1"]


@pytest.mark.slow
def test_start_requests_are_pushed_by_one_worker_once(make):
    a = make("a")
    b = make("b")
    assert a.start_owner and not a.meta["start_exhausted"]
    assert not b.start_owner and b.meta["start_exhausted"]  # b skips start_requests()
    a.push_many([R("s1", dont_filter=True)], start={"consumed": 1, "exhausted": False})
    assert b.status()["start_exhausted"] is False
    # a stops before the end: a worker started later takes over after the count.
    a.close("shutdown")
    c = make("c")
    assert c.start_owner and c.meta["start_requests"] == 1
    # b, which did not claim them, never counts start requests (its start_requests()
    # is not run: it only says it is exhausted).
    b.push_many([], start={"consumed": 0, "exhausted": True})
    assert b.status()["start_exhausted"] is False
    # b after taking the claim that c then took over: refused, with a warning.
    b.start_owner = True
    assert b.push_many([R("s2", dont_filter=True)], start={"consumed": 1,
                                                          "exhausted": True}) == [False]
    c.push_many([R("s2", dont_filter=True)], start={"consumed": 1, "exhausted": True})
    assert b.status()["start_exhausted"] is True
    assert make("d").meta == {"start_requests": 2, "start_exhausted": True, "resumed": False}


@pytest.mark.slow
def test_close_gives_back_open_leases(make):
    a, b = make("a"), make("b")
    a.push_many([R("1"), R("2")])
    (r1, r2) = a.lease(2)
    a.ack([r1._lease])
    a.close("shutdown")  # acks r1, releases r2
    assert urls(b.lease(5)) == [r2.url.rsplit("/", 1)[1]]
    assert b.status()["leased"] == 1


@pytest.mark.slow
def test_redis_restart_is_retried_and_loses_nothing(make, redis_server, caplog):
    a = make("a", retry_timeout_s=30.0)
    a.client.config_set("appendfsync", "always")  # each write on disk before its reply
    a.push_many([R(str(i)) for i in range(5)])
    redis_server.stop()
    timer = threading.Timer(1.0, redis_server.start)
    timer.start()
    with caplog.at_level(logging.WARNING):
        got = a.lease(10)  # blocks, retrying, until the server is back
    timer.join()
    assert sorted(urls(got)) == ["0", "1", "2", "3", "4"]
    assert "unreachable" in caplog.text and "reachable again" in caplog.text


@pytest.mark.slow
def test_redis_gone_for_good_fails_the_frontier(make, redis_server):
    a = make("a", retry_timeout_s=0.5)
    redis_server.stop()
    with pytest.raises(FrontierError, match="unreachable"):
        a.lease(1)


def test_key_and_worker_settings():
    s = Settings({"FRONTIER_KEY": "job7"})
    assert frontier_key(s, "links") == "{job7}"
    assert frontier_key(Settings(), "links") == "{crawlfw:links}"
    assert frontier_key(Settings({"FRONTIER_KEY": "x:{y}"}), "links") == "x:{y}"
    assert worker_id(Settings({"FRONTIER_WORKER": "m1"})) == "m1"
    assert worker_id(Settings()) == worker_id(None)


@pytest.mark.slow
def test_a_redis_that_lost_the_crawl_fails_instead_of_finishing(make):
    a = make("a")
    a.push(R("1"))
    a.client.flushdb()  # as a Redis restarted without persistence
    with pytest.raises(FrontierError, match="gone from Redis"):
        a.status()


@pytest.mark.slow
def test_prefetched_leases_are_served_without_redis_and_given_back(make):
    a = make("a", prefetch=3)
    b = make("b")
    a.push_many([R(str(i)) for i in range(6)])
    assert urls(a.lease(1)) == ["5"]
    assert b.status()["leased"] == 4  # 1 handed out, 3 kept ahead
    calls = a.client.info("stats")["total_commands_processed"]
    assert urls(a.lease(2)) == ["4", "3"]  # from memory
    assert a.client.info("stats")["total_commands_processed"] == calls + 1  # (the INFO)
    assert len(a) == 1 + 2  # one prefetched, two queued in Redis
    a.close("shutdown")
    assert sorted(urls(b.lease(10))) == ["0", "1", "2", "3", "4", "5"]


@pytest.mark.slow
def test_open_leases_stop_at_max_open_until_acked(make):
    a = make("a", prefetch=2, max_open=5)
    a.push_many([R(str(i)) for i in range(10)])
    assert len(a.lease(4)) == 4  # and 1 leased ahead: 5 open
    assert len(a.leased) == 5
    got = a.lease(4)
    assert len(got) == 1  # the one leased ahead; Redis is not asked past the limit
    assert a.status()["leased"] == 5
    assert a.lease(1) == []
    a.ack([r._lease for r in got])
    a.commit()
    assert len(a.lease(4)) == 1  # one acked: one more
    assert len(a.leased) == 5


def test_max_open_leases_setting():
    from crawlfw.core.frontier.scheduler import max_open_leases

    assert max_open_leases(Settings({"CONCURRENT_REQUESTS": 8})) == 64
    assert max_open_leases(Settings({"FRONTIER_MAX_OPEN_LEASES": "0"})) == 0
    assert max_open_leases(Settings({"FRONTIER_MAX_OPEN_LEASES": 50})) == 50
    with pytest.raises(ValueError, match="FRONTIER_MAX_OPEN_LEASES must be 0"):
        max_open_leases(Settings({"FRONTIER_MAX_OPEN_LEASES": -1}))


def test_feed_uri_worker_placeholder(tmp_path, spider):
    from crawlfw.core.feeds.feeds import FeedWriter

    writer = FeedWriter({"FEED_URI": str(tmp_path / "%(name)s-%(worker)s.jl"),
                         "FEED_FORMAT": "jsonlines", "FRONTIER_WORKER": "m1-3"}, spider)
    writer.open()
    writer.export_item({"a": 1})
    writer.close()
    assert (tmp_path / "redis-test-m1-3.jl").read_text() == '{"a": 1}\n'
    default = FeedWriter({"FEED_URI": str(tmp_path / "%(worker)s.jl"),
                          "FEED_FORMAT": "jsonlines"}, spider)
    default.open()
    assert default.uri == str(tmp_path / f"{worker_id()}.jl")
    default.close()


def _refused_ping():
    """A real Redis call to a port where nothing listens (connection refused)."""
    import redis

    from tests.support.redisserver import free_port

    client = redis.Redis.from_url(f"redis://127.0.0.1:{free_port()}/0",
                                  socket_connect_timeout=1, protocol=2)
    return client.ping


def test_the_retry_budget_is_one_for_the_whole_crawl():
    """FRONTIER_RETRY_TIMEOUT counts from the crawl's first failed call: a call made
    after another gave up (the close path, a download slot) is not retried for a new
    period; a stop request ends the waiting at once."""
    from crawlfw.core.frontier.redis_frontier import FrontierStopping, RedisLink, call_with_retry

    link = RedisLink()
    ping = _refused_ping()
    start = time.monotonic()
    with pytest.raises(FrontierError, match="unreachable for 1 s"):
        call_with_retry(ping, "redis://127.0.0.1/0", 0.8, link=link)
    assert 0.8 <= time.monotonic() - start < 5
    start = time.monotonic()
    with pytest.raises(FrontierError, match="unreachable"):
        call_with_retry(ping, "redis://127.0.0.1/0", 0.8, link=link)
    assert time.monotonic() - start < 0.5  # tried once: the budget is spent
    link = RedisLink()
    threading.Timer(0.3, link.stopping.set).start()
    start = time.monotonic()
    with pytest.raises(FrontierStopping, match="while the crawl stops"):
        call_with_retry(ping, "redis://127.0.0.1/0", 300, link=link)
    assert time.monotonic() - start < 3


def test_loading_is_transient(caplog):
    """``LOADING`` (a Redis loading its data after a restart) is waited for, not a
    failure (the reply of a loading server; a real one is loaded in milliseconds)."""
    import redis

    from crawlfw.core.frontier.redis_frontier import call_with_retry

    answers = [redis.exceptions.BusyLoadingError("Redis is loading the dataset in memory")] * 2

    def call():
        if answers:
            raise answers.pop()
        return b"PONG"

    with caplog.at_level(logging.WARNING):
        assert call_with_retry(call, "redis://127.0.0.1/0", 10) == b"PONG"
    assert "unreachable (BusyLoadingError" in caplog.text and "reachable again" in caplog.text


@pytest.mark.slow
def test_an_authentication_error_is_not_retried(tmp_path):
    import redis

    from crawlfw.core.frontier.redis_frontier import FrontierPermanentError, RedisLink, call_with_retry
    from tests.support.redisserver import RedisServer, require_redis

    require_redis()
    server = RedisServer(tmp_path / "r", args=("--requirepass", "pw")).start()
    try:
        client = redis.Redis.from_url(server.url.replace("//", "//:bad@"), protocol=2)
        start = time.monotonic()
        with pytest.raises(FrontierPermanentError,
                           match=r"redis://:\*\*\*@.*refused the connection"):
            call_with_retry(client.ping, server.url.replace("//", "//:bad@"), 300,
                            link=RedisLink())
        assert time.monotonic() - start < 2
    finally:
        server.stop()


def test_a_runner_whose_frontier_is_refused_ends_the_crawl(tmp_path):
    """``CrawlerRunner.crawl`` with an unusable ``FRONTIER_URL`` raises
    ``CrawlStartError`` and the crawl is finished (``start_failed``), so ``join()``
    returns instead of waiting for ever."""
    from crawlfw.crawler import CrawlerRunner
    from crawlfw.exceptions import CrawlStartError

    runner = CrawlerRunner({"FRONTIER_URL": "redis:/x"})
    with pytest.raises(CrawlStartError, match="FRONTIER_URL 'redis:/x' is not a Redis URL"):
        runner.crawl(Spider)
    assert runner.join(timeout_s=5)
    [crawler] = runner.crawlers
    assert crawler.finish_reason.startswith("start_failed: shared frontier: ")
    assert crawler.failed
    runner.shutdown()


@pytest.mark.slow
def test_join_only_never_creates_a_crawl(make):
    """``FRONTIER_JOIN_ONLY``: a worker joins a crawl Redis holds and refuses an empty
    Redis instead of starting the crawl anew."""
    from crawlfw.core.frontier.redis_frontier import FrontierPermanentError

    with pytest.raises(FrontierPermanentError, match=r"holds no crawl under key \{t\}"):
        make("b", join_only=True)
    a = make("a")
    a.push(R("1"))
    b = make("b", join_only=True)  # the crawl exists now
    assert urls(b.lease(1)) == ["1"]


@pytest.mark.slow
def test_a_crawl_without_its_mark_but_with_other_keys_is_refused(make):
    from crawlfw.core.frontier.redis_frontier import FrontierPermanentError

    a = make("a")
    a.push(R("1"))
    a.client.delete("{t}:meta")  # as an eviction drops one key
    with pytest.raises(FrontierPermanentError, match=r"the crawl \{t\} in Redis at .* is "
                                                     r"incomplete: its created mark is gone"):
        make("b")
    with pytest.raises(FrontierError, match="gone from Redis"):
        a.push(R("2"))  # a running worker's next change fails too


@pytest.mark.slow
@pytest.mark.parametrize("lifo", [True, False])
def test_start_requests_first_in_first_out_after_the_others_of_their_priority(make, lifo):
    """Scrapy 2.13's start queue on a shared frontier: start requests in the order
    given, after the other requests of their priority, before lower priorities; a
    released one goes back to its place."""
    f = make(lifo=lifo)
    start = [R(str(n), meta={"is_start_request": True}) for n in range(1, 6)]
    f.push_many([R("x"), *start, R("y"), R("6", meta={"is_start_request": True},
                                              priority=1), R("z", priority=2)])
    assert urls(f.lease(2)) == ["z", "6"]
    leased = f.lease(4)
    assert urls(leased) == (["y", "x"] if lifo else ["x", "y"]) + ["1", "2"]
    f.release(leased[3:])
    f.push_many([R("w", priority=-1)])
    assert urls(f.lease(10)) == ["2", "3", "4", "5", "w"]


# --- per-host queues (issue 18) ------------------------------------------------------


def H(host, path="", **kw):  # noqa: N802 - a request of a host, briefly
    return crawlfw.Request(f"http://{host}/{path}", **kw)


def hosts(requests):
    return [r._host for r in requests]


def per_host(conc, delay_s=0.0, randomize=False):
    return {"host_limits": lambda: (conc, delay_s, randomize)}


def crawl_keys(f):
    return sorted(k.decode() for k in f.client.keys(f"{f.key}:*"))


@pytest.mark.slow
def test_a_busy_host_does_not_hold_the_others_back(make):
    f = make(**per_host(2))
    f.push_many([H("big", str(i)) for i in range(10)] + [H("s1"), H("s2"), H("s3")])
    got = f.lease(10)
    assert len(got) == 5 and sorted(hosts(got)) == ["big", "big", "s1", "s2", "s3"]
    assert all(r._lease is not None and r._paced is True for r in got)
    assert f.lease(10) == []  # big is at its concurrency; the small hosts are empty
    f.hosts_finished({"big": 1})
    assert hosts(f.lease(10)) == ["big"]  # reported with the lease: one more may go
    assert f.status()["queued"] == 7


@pytest.mark.slow
def test_a_higher_head_goes_first_then_the_host_waiting_longest(make):
    f = make(**per_host(2), lifo=False)
    f.push_many([H("a", str(i)) for i in range(3)] + [H("b", str(i)) for i in range(3)])
    f.push(H("c", "top", priority=5))
    got = f.lease(7)
    # c's head has the highest priority; then a, whose requests waited longest, up to
    # its concurrency (FIFO within it), then b; neither may take a third.
    assert hosts(got) == ["c", "a", "a", "b", "b"]
    assert urls(got[1:3]) == ["0", "1"]
    f.hosts_finished({"b": 1, "a": 1})  # a still waited longer, whatever the order
    assert hosts(f.lease(7)) == ["a", "b"]
    f.push(H("d", "x"))
    f.hosts_finished({"a": 1})
    f.push(H("a", "again"))  # a's queue had emptied: its new request waited less than d's
    assert hosts(f.lease(7)) == ["d", "a"]
    f.push(H("a", "urgent", priority=1))
    f.hosts_finished({"a": 2, "b": 2})
    assert urls(f.lease(1)) == ["urgent"]  # a better head goes first, whoever is older


@pytest.mark.slow
def test_concurrency_per_host_holds_across_two_workers(make):
    a, b = make("a", **per_host(3)), make("b", **per_host(3))
    a.push_many([H("h", str(i)) for i in range(10)])
    assert len(a.lease(2)) == 2
    assert len(b.lease(5)) == 1  # the host's third transfer, across workers
    assert a.lease(5) == [] and b.lease(5) == []
    a.hosts_finished({"h": 2})
    assert b.lease(5) == []  # (noted by a: not in Redis yet)
    a.status()  # a report travels with the worker's next call to Redis
    assert len(b.lease(5)) == 2
    assert a.lease(5) == []
    assert int(a.client.hget("{t}:inflight", "h")) == 3


@pytest.mark.slow
def test_a_count_beyond_what_was_leased_is_ignored(make):
    a, b = make("a", **per_host(2)), make("b", **per_host(2))
    a.push_many([H("h", str(i)) for i in range(4)])
    assert len(b.lease(1)) == 1
    a.hosts_finished({"h": 5, "other": 1})  # a has nothing in flight: nothing changes
    assert len(a.lease(5)) == 1


@pytest.mark.slow
def test_delay_spaces_leases_of_a_host_across_workers(make):
    a, b = make("a", **per_host(8, 0.4)), make("b", **per_host(8, 0.4))
    a.push_many([H("slow", str(i)) for i in range(3)] + [H("other")])
    got = a.lease(5)
    assert sorted(hosts(got)) == ["other", "slow"]  # one start of slow per delay
    assert b.lease(5) == []
    wait = b.next_ready_in_s(time.monotonic())
    assert wait is not None and 0.2 < wait <= 0.4
    deadline = time.monotonic() + 5
    while not (got := b.lease(5)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert hosts(got) == ["slow"]
    assert b.next_ready_in_s(time.monotonic()) > 0.2  # its next start, 0.4 s on


@pytest.mark.slow
def test_randomized_delay_draws_from_half_to_one_and_a_half(make):
    f = make(**per_host(8, 1.0, randomize=True), rng=__import__("random").Random(7))
    for i in range(20):
        f.push(H(f"h{i}"))
    before = f.client.time()
    assert len(f.lease(20)) == 20
    now_ms = before[0] * 1000 + before[1] / 1000
    gaps = [s - now_ms for _, s in f.client.zrange("{t}:next", 0, -1, withscores=True)]
    assert len(gaps) == 20 and all(450 <= g <= 1550 for g in gaps)
    assert max(gaps) - min(gaps) > 200  # drawn, not one factor for all


@pytest.mark.slow
def test_prefetch_takes_no_request_of_a_host_with_a_delay(make):
    f = make(**per_host(8, 5.0), prefetch=4)
    f.push_many([H("d1"), H("d2"), H("d3")])
    assert len(f.lease(1)) == 1
    assert len(f._prefetched) == 0 and f.status()["leased"] == 1


@pytest.mark.slow
def test_prefetch_leaves_half_of_a_hosts_concurrency_to_the_others(make):
    a, b = make("a", **per_host(8), prefetch=8), make("b", **per_host(8), prefetch=8)
    a.push_many([H("h", str(i)) for i in range(20)])
    assert len(a.lease(2)) == 2 and len(a._prefetched) == 2  # up to 4 of 8 in flight
    assert len(b.lease(4)) == 4 and len(b._prefetched) == 0  # the host is full now
    assert int(a.client.hget("{t}:inflight", "h")) == 8


@pytest.mark.slow
def test_prefetched_requests_of_a_host_with_work_waiting_go_first(make):
    # Issue 18: a request leased ahead counts in its host's concurrency; served first in
    # first out, the busy host's waited behind small hosts' while its place stayed idle.
    f = make(**per_host(2), prefetch=8)
    make("other")  # (a worker alone may lease ahead up to the whole limit: see below)
    f.push_many([H("s1"), H("s2"), H("s3")] + [H("big", str(i)) for i in range(6)])
    assert hosts(f.lease(1)) == ["s1"]  # the host waiting longest
    assert sorted(hosts(f._prefetched)) == ["big", "s2", "s3"]  # (big: half of 2)
    assert hosts(f.lease(1)) == ["big"]  # its place holds back its queue: it goes first
    assert hosts(f.lease(2)) == ["s2", "s3"]


@pytest.mark.slow
def test_a_finished_transfer_of_a_full_host_is_reported_and_replaced_at_once(make):
    # Issue 18: the report did not wait for REPORT_S while the host is at its limit, and
    # the same call leases the freed place ahead for this worker.
    a, b = make("a", **per_host(4), prefetch=4), make("b", **per_host(4))
    a.push_many([H("big", str(i)) for i in range(8)] + [H("s1"), H("s2"), H("s3")])
    assert hosts(b.lease(2)) == ["big", "big"]
    assert hosts(a.lease(2)) == ["big", "big"]  # at its limit; s1-s3 leased ahead
    a.hosts_finished({"big": 1})
    assert hosts(a.lease(1)) == ["big"]  # reported, its place leased again, served first
    assert int(a.client.hget("{t}:inflight", "big")) == 4
    assert b.lease(5) == []  # a kept its share of big (4 / 2 workers), no more
    assert sorted(hosts(a.lease(3))) == ["s1", "s2", "s3"]


@pytest.mark.slow
def test_a_worker_keeps_leasing_ahead_what_it_finished_on_a_busy_host(make):
    # Past half of a host's concurrency a worker may lease ahead as many as it reports
    # finished on that host: a one-host crawl does not cost a lease call per credit.
    a, b = make("a", **per_host(8), prefetch=8), make("b", **per_host(8))
    a.push_many([H("h", str(i)) for i in range(40)])
    assert len(b.lease(3)) == 3
    assert len(a.lease(3)) == 3 and len(a._prefetched) == 0  # 7 > half of 8
    a.hosts_finished({"h": 2})
    time.sleep(0.06)  # (past REPORT_S)
    assert a.lease(0) == []  # reports the two, leases two ahead in their places
    # (a holds 3 of 8: no more than its share with b active, 4)
    assert len(a._prefetched) == 2 and int(a.client.hget("{t}:inflight", "h")) == 6
    calls = a.client.info("stats")["total_commands_processed"]
    assert len(a.lease(2)) == 2  # from memory
    assert a.client.info("stats")["total_commands_processed"] == calls + 1  # (the INFO)


@pytest.mark.slow
def test_a_worker_leases_ahead_up_to_its_share_of_a_host(make):
    # Two workers on one host of 16: a worker's share is 8; its transfers that ended
    # make room to lease ahead beyond what its credit takes, up to that share.
    a, b = make("a", **per_host(16), prefetch=8), make("b", **per_host(16))
    a.push_many([H("h", str(i)) for i in range(40)])
    assert len(b.lease(4)) == 4
    assert len(a.lease(4)) == 4 and len(a._prefetched) == 0  # 9 > half of 16
    a.hosts_finished({"h": 4})
    assert len(a.lease(4)) == 4 and len(a._prefetched) == 4  # holds 8: its share
    a.hosts_finished({"h": 2})
    assert len(a.lease(2)) == 2 and len(a._prefetched) == 2  # (served from memory)
    time.sleep(0.06)  # (past REPORT_S)
    assert a.lease(0) == [] and len(a._prefetched) == 4  # back to its share, no more
    assert int(a.client.hget("{t}:inflight", "h")) == 12


@pytest.mark.slow
def test_a_worker_alone_leases_ahead_up_to_the_hosts_limit(make):
    # No other worker to keep from the host: a one-host crawl of one worker does not
    # pay a lease call per credit grant. A second worker joining brings the half rule.
    a = make("a", **per_host(8), prefetch=8)
    a.push_many([H("h", str(i)) for i in range(40)])
    assert len(a.lease(4)) == 4 and len(a._prefetched) == 4  # the host's 8
    b = make("b", **per_host(8), prefetch=8)
    a.hosts_finished({"h": 4})
    assert len(a.lease(8)) == 8  # 4 from memory, 4 leased (inflight 4 + 4 = 8)
    a.hosts_finished({"h": 6})
    assert len(b.lease(2)) == 0  # (a's report is not in Redis yet)
    # a keeps 2, leases 1 and 1 ahead: its share with b active is 4 of 8
    assert len(a.lease(1)) == 1 and len(a._prefetched) == 1
    assert len(b.lease(8)) == 4 and int(a.client.hget("{t}:inflight", "h")) == 8


@pytest.mark.slow
def test_an_expired_lease_gives_its_hosts_count_back(make):
    dead = make("dead", lease_timeout_s=0.3, **per_host(1))
    live = make("live", **per_host(1))
    dead.push_many([H("h", "1"), H("h", "2")])
    assert len(dead.lease(2)) == 1  # the host's one transfer
    assert live.lease(2) == []
    time.sleep(0.4)
    got = live.lease(2)
    assert len(got) == 1  # the expired one is queued again; the host still takes one
    assert int(live.client.hget("{t}:inflight", "h")) == 1
    dead.hosts_finished({"h": 1})  # late: not its flight any more
    dead.status()
    assert int(live.client.hget("{t}:inflight", "h")) == 1


@pytest.mark.slow
def test_release_and_commit_give_the_count_back(make):
    a, b = make("a", **per_host(1)), make("b", **per_host(1))
    a.push_many([H("h", "1"), H("h", "2"), H("g", "1")])
    got = {r._host: r for r in a.lease(5)}
    assert sorted(got) == ["g", "h"]
    a.release([got["h"]])
    (r, ) = b.lease(5)  # the host's count went back with the release
    assert r._host == "h"
    b.ack([r._lease])
    b.commit()  # acked before its end was reported: the count goes back with the ack
    assert len(a.lease(5)) == 1


@pytest.mark.slow
def test_hosts_with_nothing_keep_no_state(make):
    f = make(**per_host(4, 0.2))
    f.push_many([H(f"h{i}", str(j)) for i in range(20) for j in range(2)])
    done = []
    deadline = time.monotonic() + 10
    while len(done) < 40 and time.monotonic() < deadline:
        got = f.lease(40)
        counts = {}
        for r in got:
            counts[r._host] = counts.get(r._host, 0) + 1
        f.hosts_finished(counts)
        done += got
        time.sleep(0.05)
    assert len(done) == 40
    f.ack([r._lease for r in done])
    f.commit()
    time.sleep(0.35)  # every host's delay has passed
    status = f.status()
    assert status == {**status, "queued": 0, "leased": 0, "ready_hosts": 0,
                      "delayed_hosts": 0, "busy_hosts": 0}
    # (`active`: the workers that called Redis within a lease timeout, not per host)
    assert crawl_keys(f) == ["{t}:active", "{t}:meta", "{t}:seen", "{t}:start"]
    f.close("finished")
    assert "{t}:active" not in crawl_keys(f)


@pytest.mark.slow
def test_autothrottle_delays_are_shared_and_forgotten_with_the_host(make):
    a, b = make("a", **per_host(8)), make("b", **per_host(8))
    a.push_many([H("h", str(i)) for i in range(3)])
    a.set_host_delay("h", 30.0)
    assert len(a.lease(5)) == 1  # AutoThrottle's delay: one start per 30 s
    assert b.lease(5) == []
    assert a.client.hget("{t}:delay", "h") == b"30000"
    a.set_host_delay("h", None)
    assert a.lease(5) == []  # (forgotten; the next start set under it still holds)
    assert a.client.hget("{t}:delay", "h") is None


@pytest.mark.slow
def test_the_host_key_is_the_download_slot_or_the_lower_case_host_name(make):
    from crawlfw.core.frontier.redis_frontier import host_key

    assert host_key(H("Example.COM:8080", "x")) == "example.com"
    assert host_key(H("a.test", meta={"download_slot": "pool-1"})) == "pool-1"
    f = make(**per_host(1))
    f.push_many([H("a.test", "1", meta={"download_slot": "pool"}),
                 H("b.test", "2", meta={"download_slot": "pool"})])
    assert hosts(f.lease(5)) == ["pool"]  # one slot: one transfer for both hosts


def _old_layout_crawl(client, key="{t}"):
    """A crawl as crawlfw wrote it before per-host queues (layout 1): one queue for every
    host, plain orders in `scores`, one lease open."""
    def req(url, **extra):
        return json.dumps({"url": url, "callback": "parse", **extra})

    client.hset(f"{key}:meta", mapping={"created": "1", "seq": "4", "start_consumed": "2",
                                        "start_exhausted": "1"})
    rows = {1: (req("http://A.test:81/1"), -1), 2: (req("http://user@b.test/2"), -2),
            3: (req("http://[::1]:8080/3", meta={"download_slot": "pool"}), -3),
            4: (req("http://a.test/4"), -4)}
    for rid, (data, order) in rows.items():
        client.hset(f"{key}:requests", rid, data)
        client.hset(f"{key}:scores", rid, order)
    client.zadd(f"{key}:queue", {1: -1, 2: -2, 3: -3})
    client.zadd(f"{key}:leases", {4: 1})  # long expired: its worker died
    client.hset(f"{key}:owners", 4, "old")
    client.sadd(f"{key}:seen", b"x" * 20)


@pytest.mark.slow
def test_a_crawl_of_the_old_layout_is_migrated_by_the_first_claim(make, redis_server, caplog):
    import redis

    client = redis.Redis.from_url(redis_server.url)
    _old_layout_crawl(client)
    with caplog.at_level(logging.INFO):
        f = make("new", **per_host(1), lifo=False)
    assert "migrated to per-host queues (layout 2): 3 queued requests" in caplog.text
    assert client.exists("{t}:queue") == 0
    assert client.hget("{t}:meta", "layout") == b"2"
    got = f.lease(10)  # the old lease expired into its host's queue first
    assert sorted(hosts(got)) == ["a.test", "b.test", "pool"]
    assert f.status()["queued"] == 1  # a.test's other request waits for its turn
    f.hosts_finished({"a.test": 1})
    (last,) = f.lease(10)
    assert last._host == "a.test"
    assert sorted(urls(got + [last])) == ["1", "2", "3", "4"]
    make("other")  # a second claim migrates nothing
    assert f.meta["start_exhausted"] is True and f.meta["start_requests"] == 2


@pytest.mark.slow
def test_the_host_rule_is_read_at_the_first_lease_and_kept(make):
    rule = [(8, 0.0, False)]
    f = make(host_limits=lambda: rule[0])
    f.push_many([H("h", "1"), H("h", "2")])
    rule[0] = (8, 30.0, False)  # a spider_opened handler set download_delay (AutoThrottle)
    assert len(f.lease(5)) == 1  # one start per 30 s
    rule[0] = (8, 0.0, False)
    assert f.lease(5) == []  # kept from the first lease on


def _check_layout(f, conc):
    """The per-host layout's invariants, read straight from Redis."""
    c, k = f.client, f.key
    queues = {key.decode()[len(k) + 3:]: c.zcard(key) for key in c.keys(f"{k}:q:*")}
    scores = {int(i): v.decode().split(" ", 1)[1] for i, v in c.hgetall(f"{k}:scores").items()}
    flying = {int(i) for i in c.hkeys(f"{k}:flying")}
    inflight = {h.decode(): int(n) for h, n in c.hgetall(f"{k}:inflight").items()}
    counted = {}
    for i in flying:
        counted[scores[i]] = counted.get(scores[i], 0) + 1
    assert inflight == counted  # every count is a lease still in flight, and back
    assert all(n > 0 for n in queues.values())
    assert int(c.hget(f"{k}:meta", "queued") or 0) == sum(queues.values())
    now_ms = (lambda t: t[0] * 1000 + t[1] // 1000)(c.time())
    waiting = {h.decode() for h, at in c.zrange(f"{k}:next", 0, -1, withscores=True)
               if at > now_ms + 5}
    ready = {h.decode() for h in c.zrange(f"{k}:ready", 0, -1)}
    assert ready == {h for h in queues if inflight.get(h, 0) < conc and h not in waiting}
    assert {h.decode() for h in c.hkeys(f"{k}:since")} == set(queues)


@pytest.mark.slow
def test_random_steps_of_two_workers_keep_the_layout_consistent(make):
    """Seeded random pushes, leases, finished reports, releases, acks and expiries by two
    workers: after every step each host's count is its leases in flight, the ready set
    is exactly the hosts that may start, the queued count is the queues' sizes, and
    hosts with nothing queued keep no rank."""
    import random

    rng = random.Random(18)
    conc = 2
    workers = [make("a", **per_host(conc), prefetch=2, lease_timeout_s=30.0),
               make("b", **per_host(conc), lease_timeout_s=0.4)]
    held = {0: [], 1: []}  # requests leased and not finished, per worker
    done = {0: [], 1: []}  # finished, not acked
    n = 0
    for _ in range(300):
        w = rng.randrange(2)
        f = workers[w]
        op = rng.random()
        if op < 0.3:
            batch = []
            for _ in range(rng.randrange(1, 5)):
                n += 1
                batch.append(H(f"h{rng.randrange(6)}", str(n), priority=rng.randrange(2)))
            f.push_many(batch)
        elif op < 0.6:
            held[w] += f.lease(rng.randrange(1, 4))
        elif op < 0.8 and held[w]:
            ended = [held[w].pop(rng.randrange(len(held[w])))
                     for _ in range(rng.randrange(1, len(held[w]) + 1))]
            counts = {}
            for r in ended:
                counts[r._host] = counts.get(r._host, 0) + 1
            f.hosts_finished(counts)
            f.status()  # (the reports go with this call)
            done[w] += ended
        elif op < 0.88 and held[w]:
            f.release([held[w].pop()])
        elif op < 0.96 and done[w]:
            f.ack([r._lease for r in done[w]])
            f.commit()
            done[w] = []
        elif w == 1 and held[1]:  # worker b stalls: its leases expire
            time.sleep(0.45)
            held[1], done[1] = [], []
            f._flying.clear()
            f.leased.clear()
            workers[0].status()
        _check_layout(f, conc)
