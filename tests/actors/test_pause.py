"""Pausing a crawl (``pause_crawl``/``resume_crawl`` through the Supervisor): no new
download starts, transfers in flight finish, the crawl does not close as idle, and a
paused crawl still closes cleanly without losing requests."""

import threading

import pytest

import crawlfw
from crawlfw import signals
from crawlfw.crawler import CrawlerRunner
from tests.support.countserver import CountingServer
from tests.support.wait import wait_for

WAIT_S = 30.0


@pytest.fixture
def server():
    s = CountingServer(hold_s=0.4)
    yield s
    s.stop()


class ListSpider(crawlfw.Spider):
    name = "list"
    urls = ()

    def start_requests(self):
        for url in self.urls:
            yield crawlfw.Request(url)

    def parse(self, response):
        yield {"url": response.url}


#: Seconds a negative claim waits on the event that would show it false: the engine's
#: idle check (a round trip to the Scheduler) or a download start take milliseconds.
NEGATIVE_WAIT_S = 0.5


def _start(urls, settings):
    runner = CrawlerRunner({"LOG_LEVEL": "INFO", **settings})
    crawler = runner.create_crawler(ListSpider)
    received = []
    crawler.signals.connect(lambda response, **_: received.append(response.url),
                            signals.response_received, weak=False)
    # spider_idle fires before an idle spider closes: the event a paused crawl must not see
    crawler.idle_fired = threading.Event()
    crawler.signals.connect(lambda **_: crawler.idle_fired.set(), signals.spider_idle,
                            weak=False)
    # request_reached_downloader fires as a download starts: none may while paused
    crawler.download_started = threading.Event()
    crawler.signals.connect(lambda **_: crawler.download_started.set(),
                            signals.request_reached_downloader, weak=False)
    runner.crawl(crawler, urls=urls)
    return runner, crawler, received


def _ask(runner, message):
    return runner.supervisor.ask(message, timeout=WAIT_S)


def _engine_status(crawler):
    return crawler.engine.ref.ask({"type": "get_status"}, timeout=WAIT_S)


def _wait_for(predicate, what):
    wait_for(predicate, what, timeout_s=WAIT_S)


def _settled(crawler):
    """The engine has nothing outstanding: no transfer, response or item in progress."""
    status = _engine_status(crawler)
    return (status["downloading"] == 0 and status["in_spider"] == 0
            and status["in_pipeline"] == 0)


def test_paused_crawl_does_not_close_when_idle_and_finishes_after_resume(server):
    urls = [f"{server.url}/slow/{i}" for i in range(2)]
    runner, crawler, received = _start(urls, {"CONCURRENT_REQUESTS": 2})
    try:
        _wait_for(lambda: server.active == 2, "both transfers in flight")
        reply = _ask(runner, {"type": "pause_crawl", "crawl_id": crawler._crawl_id})
        assert reply == {"type": "command_accepted", "command": "pause_crawl",
                         "crawl_id": crawler._crawl_id}
        assert _engine_status(crawler)["paused"] is True
        _wait_for(lambda: len(received) == 2, "the transfers in flight to finish")
        _wait_for(lambda: _settled(crawler), "the responses and items to be processed")
        # nothing is left: an unpaused engine would fire spider_idle and close now
        assert not crawler.idle_fired.wait(NEGATIVE_WAIT_S)
        assert crawler.crawling
        _ask(runner, {"type": "resume_crawl", "crawl_id": crawler._crawl_id})
        assert crawler.wait(WAIT_S)
        assert crawler.finish_reason == "finished"
    finally:
        runner.shutdown()


def test_no_download_starts_while_paused(server):
    urls = [f"{server.url}/slow/{i}" for i in range(8)]
    runner, crawler, received = _start(urls, {"CONCURRENT_REQUESTS": 2})
    try:
        _wait_for(lambda: len(received) >= 1, "a first response")
        _ask(runner, {"type": "pause_crawl", "crawl_id": crawler._crawl_id})
        in_flight = _engine_status(crawler)["downloading"]
        answered = len(received)  # at least as many as when the engine paused
        # the transfers in flight finish (a free download slot each) ...
        _wait_for(lambda: _settled(crawler), "the transfers in flight to finish")
        requested = len(server.paths)
        assert requested <= answered + in_flight  # none started after the pause
        # ... and an unpaused engine would start the next downloads on them at once
        crawler.download_started.clear()
        assert not crawler.download_started.wait(NEGATIVE_WAIT_S)
        assert len(server.paths) == requested
        assert len(received) <= requested
        status = _engine_status(crawler)
        assert status["downloading"] == 0 and in_flight <= 2
        _ask(runner, {"type": "resume_crawl", "crawl_id": crawler._crawl_id})
        assert crawler.wait(WAIT_S)
        assert sorted(received) == sorted(urls)
        assert crawler.finish_reason == "finished"
    finally:
        runner.shutdown()


def test_stop_while_paused_keeps_the_held_requests(server, tmp_path):
    urls = [f"{server.url}/slow/{i}" for i in range(10)]
    jobdir = str(tmp_path / "job")
    runner, crawler, received = _start(urls, {"CONCURRENT_REQUESTS": 2, "JOBDIR": jobdir})
    try:
        _wait_for(lambda: len(received) >= 1, "a first response")
        _ask(runner, {"type": "pause_crawl", "crawl_id": crawler._crawl_id})
        _ask(runner, {"type": "stop_crawl", "crawl_id": crawler._crawl_id,
                      "reason": "shutdown"})
        assert crawler.wait(WAIT_S)
        assert crawler.finish_reason == "shutdown"
        done = set(received)
    finally:
        runner.shutdown()
    # the same JOBDIR crawls exactly what was not crawled: nothing was lost
    runner, crawler, received = _start(urls, {"CONCURRENT_REQUESTS": 2, "JOBDIR": jobdir})
    try:
        assert crawler.wait(WAIT_S)
        assert done.isdisjoint(received)
        assert done | set(received) == set(urls)
    finally:
        runner.shutdown()


def test_unknown_crawl_gets_a_control_error():
    runner = CrawlerRunner()
    try:
        for kind in ("pause_crawl", "resume_crawl"):
            assert _ask(runner, {"type": kind, "crawl_id": "nope-1"}) == {
                "type": "control_error", "error": "no running crawl 'nope-1'"}
        reply = _ask(runner, {"type": "schedule_request", "crawl_id": "nope-1",
                              "url": "http://x/", "callback": None, "priority": 0,
                              "dont_filter": False})
        assert reply["type"] == "control_error"
    finally:
        runner.shutdown()




def test_engine_facade_pause_and_unpause(server):
    """Scrapy's ``crawler.engine.pause()``/``unpause()`` work from any thread."""
    urls = [f"{server.url}/slow/{i}" for i in range(6)]
    runner, crawler, received = _start(urls, {"CONCURRENT_REQUESTS": 2})
    try:
        _wait_for(lambda: len(received) >= 1, "a first response")
        crawler.engine.pause()
        _wait_for(lambda: _engine_status(crawler)["paused"], "the engine to pause")
        _wait_for(lambda: _settled(crawler), "the transfers in flight to finish")
        requested = len(server.paths)
        crawler.download_started.clear()
        assert not crawler.download_started.wait(NEGATIVE_WAIT_S)
        assert len(server.paths) == requested
        crawler.engine.unpause()
        assert crawler.wait(WAIT_S)
        assert sorted(received) == sorted(urls)
    finally:
        runner.shutdown()
