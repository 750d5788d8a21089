"""The actor runtime end to end: real local HTTP servers, real pycurl transfers, every
message checked against its JSON Schema (tests/conftest.py sets validation to 'all')."""

import logging
import threading

import pytest

import crawlfw
from crawlfw import signals
from crawlfw.actors.downloader import DownloaderActor
from crawlfw.crawler import CrawlerRunner
from crawlfw.exceptions import DontCloseSpider
from tests.support.countserver import CountingServer
from tests.support.crawl import run_crawl


@pytest.fixture
def server():
    s = CountingServer(hold_s=0.2)
    yield s
    s.stop()


class ListSpider(crawlfw.Spider):
    """Requests ``urls`` (spider argument); one item per response: url, status, title."""

    name = "list"
    urls = ()

    def start_requests(self):
        for url in self.urls:
            yield crawlfw.Request(url, callback=self.parse)

    def parse(self, response):
        yield {"url": response.url, "status": response.status,
               "title": response.css("title::text").extract_first()}


def test_per_domain_concurrency_cap(server):
    urls = [f"{server.url}/slow/{i}" for i in range(12)]
    result = run_crawl(ListSpider, {"CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 3},
                       urls=urls)
    assert len(result.items) == 12
    assert server.max_active == 3


def test_global_concurrency_cap_across_domains(server):
    # 127.0.0.1 and localhost are two download slots (two Downloader actors).
    port = server.url.rsplit(":", 1)[1]
    urls = [f"{server.url}/slow/{i}" for i in range(8)]
    urls += [f"http://localhost:{port}/slow/{i}" for i in range(8, 16)]
    result = run_crawl(ListSpider, {"CONCURRENT_REQUESTS": 4, "CONCURRENT_REQUESTS_PER_DOMAIN": 8},
                       urls=urls)
    assert len(result.items) == 16
    assert server.max_active == 4


def test_refused_host_does_not_stop_other_requests(server, caplog):
    caplog.set_level(logging.DEBUG)
    refused = "http://127.0.0.1:1/nothing-listens-here"
    urls = [refused] + [f"{server.url}/page/{i}" for i in range(5)]
    result = run_crawl(ListSpider, {"RETRY_TIMES": 1}, urls=urls)
    assert sorted(i["url"] for i in result.items) == sorted(urls[1:])
    assert f"Error downloading <GET {refused}>" in caplog.text
    assert "Connection refused" in caplog.text
    assert result.stats["retry/count"] == 1
    assert result.finish_reason == "finished"


class RaisingSpider(ListSpider):
    name = "raising"

    def parse(self, response):
        yield {"url": response.url, "before": True}
        if response.url.endswith("/page/2"):
            raise ValueError("broken page 2")
        yield {"url": response.url, "before": False}


def test_raising_callback_is_logged_and_crawl_goes_on(server, caplog):
    caplog.set_level(logging.DEBUG)
    urls = [f"{server.url}/page/{i}" for i in range(5)]
    result = run_crawl(RaisingSpider, urls=urls)
    assert len(result.items) == 9  # page 2 keeps the item yielded before raising
    assert result.stats["spider_exceptions/ValueError"] == 1
    assert f"Spider error processing <GET {server.url}/page/2> (referer: None)" in caplog.text
    assert "ValueError: broken page 2" in caplog.text
    assert result.finish_reason == "finished"


def test_error_statuses_are_logged_with_their_status(server, caplog):
    caplog.set_level(logging.DEBUG)
    urls = [f"{server.url}/status/404", f"{server.url}/status/500", f"{server.url}/page/1"]
    result = run_crawl(ListSpider, {"RETRY_TIMES": 1}, urls=urls)
    assert [i["url"] for i in result.items] == [f"{server.url}/page/1"]
    assert f"Crawled (404) <GET {server.url}/status/404>" in caplog.text
    assert f"Crawled (500) <GET {server.url}/status/500>" in caplog.text
    assert f"Ignoring response <404 {server.url}/status/404>" in caplog.text
    assert result.stats["downloader/response_status_count/500"] == 2  # retried once
    assert result.stats["httperror/response_ignored_status_count/404"] == 1


class FollowSpider(crawlfw.Spider):
    """Follows every link; pages link forward to the next three, so most are duplicates."""

    name = "follow"
    start = ""
    limit = 30

    def start_requests(self):
        yield crawlfw.Request(self.start + "/page/0")

    def parse(self, response):
        n = int(response.url.rsplit("/", 1)[1])
        yield {"n": n}
        for href in response.css("a::attr(href)").extract():
            if int(href.rsplit("/", 1)[1]) < self.limit:
                yield crawlfw.Request(response.urljoin(href))


def test_dupefilter_crawls_each_page_once(server):
    result = run_crawl(FollowSpider, start=server.url)
    assert sorted(i["n"] for i in result.items) == list(range(30))
    page_paths = [p for p in server.paths if p.startswith("/page/")]
    assert len(page_paths) == len(set(page_paths)) == 30
    assert result.stats["dupefilter/filtered"] > 0


class PrioritySpider(crawlfw.Spider):
    name = "priority"
    base = ""

    def start_requests(self):
        # One slot, one transfer at a time: the download order is the scheduler's order.
        yield crawlfw.Request(self.base + "/page/100", callback=self.fan_out)

    def fan_out(self, response):
        for i, prio in enumerate([0, 5, -3, 5, 10, 0]):
            yield crawlfw.Request(f"{self.base}/page/{i}", priority=prio, callback=self.done)

    def done(self, response):
        yield {"path": response.url.removeprefix(self.base)}


def test_higher_priority_downloaded_first(server):
    result = run_crawl(PrioritySpider, {"CONCURRENT_REQUESTS": 1}, base=server.url)
    order = [i["path"] for i in result.items]
    # priority 10, then the two 5s (LIFO within a priority), 0s (LIFO), then -3
    assert order == ["/page/4", "/page/3", "/page/1", "/page/5", "/page/0", "/page/2"]


def test_downloader_death_is_supervised_and_requests_are_resent(server, monkeypatch):
    original = DownloaderActor.handle_fetch
    crashed = threading.Event()

    def crash_once(self, message):
        if message["request"].url.endswith("/page/3") and not crashed.is_set():
            crashed.set()
            raise RuntimeError("injected downloader fault")
        return original(self, message)

    monkeypatch.setattr(DownloaderActor, "handle_fetch", crash_once)
    urls = [f"{server.url}/page/{i}" for i in range(6)]
    result = run_crawl(ListSpider, urls=urls)
    assert crashed.is_set()
    assert sorted(i["url"] for i in result.items) == sorted(urls)
    assert result.stats["supervisor/restarts/downloader"] == 1
    assert result.finish_reason == "finished"


class IdleSpider(ListSpider):
    """Stays open while ``hold`` is not set (a spider_idle handler raises DontCloseSpider)."""

    name = "idle"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.idle = threading.Event()
        spider.release = threading.Event()
        crawler.signals.connect(spider.on_idle, signals.spider_idle)
        return spider

    def on_idle(self):
        self.idle.set()
        if not self.release.is_set():
            raise DontCloseSpider


def test_idle_crawler_stays_open_and_engine_takes_commands(server):
    # The CPU an idle crawl burns (no busy polling) is measured by
    # benchmarks/bench_idle.py, not here: tests assert no timings.
    runner = CrawlerRunner({"LOG_LEVEL": "INFO"})
    crawler = runner.create_crawler(IdleSpider)
    items = []
    crawler.signals.connect(lambda item: items.append(item), signals.item_scraped, weak=False)
    try:
        runner.crawl(crawler, urls=[f"{server.url}/page/1"])
        assert crawler.spider.idle.wait(30)
        assert crawler.crawling  # spider_idle was kept open by DontCloseSpider
        # The live engine takes a request by message and crawls it.
        crawler.engine.crawl(crawlfw.Request(f"{server.url}/page/2", callback=crawler.spider.parse))
        crawler.spider.release.set()
        assert crawler.wait(30)
    finally:
        runner.shutdown()
    assert sorted(i["url"] for i in items) == [f"{server.url}/page/1", f"{server.url}/page/2"]
    assert crawler.finish_reason == "finished"


def test_close_spider_from_outside_stops_with_reason(server):
    runner = CrawlerRunner({"LOG_LEVEL": "INFO"})
    crawler = runner.create_crawler(IdleSpider)
    try:
        runner.crawl(crawler, urls=[f"{server.url}/page/1"])
        assert crawler.spider.idle.wait(30)
        reply = runner.supervisor.ask({"type": "stop_crawl", "crawl_id": None, "reason": "shutdown"},
                                      timeout=10)
        assert reply == {"stopping": [crawler._crawl_id]}
        assert crawler.wait(30)
    finally:
        runner.shutdown()
    assert crawler.finish_reason == "shutdown"
    assert crawler.stats.get_value("finish_reason") == "shutdown"


def test_log_has_crawled_lines_and_stats_dump(server, caplog):
    caplog.set_level(logging.DEBUG)
    run_crawl(ListSpider, urls=[f"{server.url}/page/1"])
    assert f"Crawled (200) <GET {server.url}/page/1> (referer: None)" in caplog.text
    assert "Dumping crawlfw stats" in caplog.text
    assert "'finish_reason': 'finished'" in caplog.text


class ForeverSpider(IdleSpider):
    """Never closes by itself: its spider_idle handler always raises DontCloseSpider."""

    name = "forever"

    def on_idle(self):
        self.idle.set()
        raise DontCloseSpider


def test_closespider_timeout_closes_a_spider_that_would_stay_open(server):
    result = run_crawl(ForeverSpider, {"CLOSESPIDER_TIMEOUT": 1}, urls=[f"{server.url}/page/1"])
    assert result.finish_reason == "closespider_timeout"
    assert len(result.items) == 1


def test_closespider_itemcount(server):
    result = run_crawl(FollowSpider, {"CLOSESPIDER_ITEMCOUNT": 5, "CONCURRENT_REQUESTS": 1},
                       start=server.url)
    assert result.finish_reason == "closespider_itemcount"
    assert 5 <= len(result.items) < 30


class EngineCrawlSpider(ListSpider):
    """Its callback hands one more request to ``crawler.engine.crawl`` and yields nothing
    (as the robots.txt middleware does for parked requests)."""

    name = "engine_crawl"

    def parse(self, response):
        if response.url.endswith("/page/1"):
            self.crawler.engine.crawl(crawlfw.Request(response.url.replace("/page/1", "/page/2")))
            return
        yield {"url": response.url}


@pytest.mark.parametrize("attempt", range(5))
def test_request_given_to_engine_from_a_callback_is_never_lost(server, attempt):
    result = run_crawl(EngineCrawlSpider, urls=[f"{server.url}/page/1"])
    assert [i["url"] for i in result.items] == [f"{server.url}/page/2"]


def test_supervisor_forwards_crawl_messages_from_the_outside(server):
    runner = CrawlerRunner({"LOG_LEVEL": "INFO"})
    crawler = runner.create_crawler(IdleSpider)
    got = threading.Event()
    items = []

    def scraped(item):
        items.append(item)
        if item["url"].endswith("/page/2"):
            got.set()

    crawler.signals.connect(scraped, signals.item_scraped, weak=False)
    try:
        runner.crawl(crawler, urls=[f"{server.url}/page/1"])
        assert crawler.spider.idle.wait(30)
        runner.supervisor.tell({"type": "crawl", "crawl_id": crawler._crawl_id,
                                "request": crawlfw.Request(f"{server.url}/page/2")})
        assert got.wait(30)
        crawler.spider.release.set()
        runner.stop("shutdown")
        assert crawler.wait(30)
    finally:
        runner.shutdown()
    assert sorted(i["url"] for i in items) == [f"{server.url}/page/1", f"{server.url}/page/2"]
