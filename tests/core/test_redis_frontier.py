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
from crawlfw.core.frontier import FrontierError
from crawlfw.core.redis_frontier import RedisFrontier, frontier_key, worker_id
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
    from crawlfw.core.scheduler import max_open_leases

    assert max_open_leases(Settings({"CONCURRENT_REQUESTS": 8})) == 64
    assert max_open_leases(Settings({"FRONTIER_MAX_OPEN_LEASES": "0"})) == 0
    assert max_open_leases(Settings({"FRONTIER_MAX_OPEN_LEASES": 50})) == 50
    with pytest.raises(ValueError, match="FRONTIER_MAX_OPEN_LEASES must be 0"):
        max_open_leases(Settings({"FRONTIER_MAX_OPEN_LEASES": -1}))


def test_feed_uri_worker_placeholder(tmp_path, spider):
    from crawlfw.core.feeds import FeedWriter

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
    from crawlfw.core.redis_frontier import FrontierStopping, RedisLink, call_with_retry

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

    from crawlfw.core.redis_frontier import call_with_retry

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

    from crawlfw.core.redis_frontier import FrontierPermanentError, RedisLink, call_with_retry
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
    from crawlfw.core.redis_frontier import FrontierPermanentError

    with pytest.raises(FrontierPermanentError, match=r"holds no crawl under key \{t\}"):
        make("b", join_only=True)
    a = make("a")
    a.push(R("1"))
    b = make("b", join_only=True)  # the crawl exists now
    assert urls(b.lease(1)) == ["1"]


@pytest.mark.slow
def test_a_crawl_without_its_mark_but_with_other_keys_is_refused(make):
    from crawlfw.core.redis_frontier import FrontierPermanentError

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
