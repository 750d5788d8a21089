"""Supervision in real crawls against a local server: downloaders restarted within the
crawl's restart intensity with backoff, poison requests failed instead of re-sent, trees
stopped without stalling other crawls, a fixed pool of downloaders whose idle slots are
evicted. Faults are injected by
making ``DownloaderActor.handle_fetch`` raise for chosen URLs; no test sleeps."""

import gc
import logging
import re
import threading

import pytest

import crawlfw
from crawlfw import signals
from crawlfw.actors.downloader import DownloaderActor
from crawlfw.core.transport.slot import DownloadSlot
from crawlfw.crawler import CrawlerRunner
from crawlfw.exceptions import DontCloseSpider, DownloaderCrashed
from crawlfw.exporters import JsonLinesItemExporter
from tests.support.countserver import CountingServer
from tests.support.crawl import run_crawl


@pytest.fixture
def server():
    s = CountingServer(hold_s=0.05)
    yield s
    s.stop()


def crash_on(monkeypatch, should_crash):
    """Make a downloader die when it is sent a request for which ``should_crash(url)``."""
    original = DownloaderActor.handle_fetch
    crashed = []

    def handle_fetch(self, message):
        url = message["request"].url
        if should_crash(url):
            crashed.append(url)
            raise RuntimeError(f"injected downloader fault for {url}")
        return original(self, message)

    monkeypatch.setattr(DownloaderActor, "handle_fetch", handle_fetch)
    return crashed


def once_each(urls):
    seen = set()

    def should_crash(url):
        if url in urls and url not in seen:
            seen.add(url)
            return True
        return False
    return should_crash


class ListSpider(crawlfw.Spider):
    name = "list"
    urls = ()

    def start_requests(self):
        for url in self.urls:
            yield crawlfw.Request(url, callback=self.parse, errback=self.failed)

    def parse(self, response):
        yield {"url": response.url}

    def failed(self, failure):
        yield {"url": failure.request.url, "error": repr(failure.value),
               "crashed": failure.check(DownloaderCrashed) is not None}


ONE_AT_A_TIME = {"CONCURRENT_REQUESTS": 1, "SUPERVISOR_BACKOFF": 0}


def test_downloader_restarts_with_in_flight_requests_resent(server, monkeypatch, caplog):
    # Transfers in flight in the slot when its downloader dies: all are re-sent.
    caplog.set_level(logging.INFO)
    crashed = crash_on(monkeypatch, once_each({f"{server.url}/slow/3"}))
    urls = [f"{server.url}/slow/{i}" for i in range(6)]
    result = run_crawl(ListSpider, {"SUPERVISOR_BACKOFF": 0, "CONCURRENT_REQUESTS_PER_DOMAIN": 6},
                       urls=urls)
    assert crashed == [f"{server.url}/slow/3"]
    assert sorted(i["url"] for i in result.items) == sorted(urls)
    assert not any("error" in i for i in result.items)
    assert result.stats["supervisor/restarts/downloader"] == 1
    assert result.finish_reason == "finished"
    assert re.search(r"Restarting downloader \(0\) of crawl list-\d+ in 0\.00 s "
                     r"\(restart 1 of 3 within 60 s\)", caplog.text)


def test_restart_intensity_is_per_crawl_not_per_host(server, monkeypatch, caplog):
    # Two hosts (two slots), one crash each: with one restart allowed per crawl, the
    # second crash exhausts the intensity (a per-host budget would have allowed both).
    port = server.url.rsplit(":", 1)[1]
    a, b = f"{server.url}/page/1", f"http://localhost:{port}/page/2"
    crash_on(monkeypatch, once_each({a, b}))
    result = run_crawl(ListSpider, {**ONE_AT_A_TIME, "SUPERVISOR_MAX_RESTARTS": 1},
                       urls=[a, b, f"{server.url}/page/3"], timeout_s=30)
    assert result.finish_reason == "downloader_failed"
    assert result.crawler.failed
    assert result.stats["supervisor/restarts/downloader"] == 1
    lines = [r.getMessage() for r in caplog.records
             if r.getMessage().startswith("Restart intensity of crawl")]
    assert len(lines) == 1
    assert re.fullmatch(r"Restart intensity of crawl list-\d+ exhausted \(1 restarts within 60 s, "
                        r"SUPERVISOR_MAX_RESTARTS\): downloader \(0\) "
                        r"failed again; closing the crawl \(downloader_failed\)", lines[0])


def test_restarts_back_off_exponentially(server, monkeypatch, caplog):
    caplog.set_level(logging.INFO)
    urls = [f"{server.url}/page/{i}" for i in range(4)]
    crash_on(monkeypatch, once_each(set(urls[:3])))
    result = run_crawl(ListSpider, {**ONE_AT_A_TIME, "SUPERVISOR_BACKOFF": 0.05,
                                    "SUPERVISOR_MAX_RESTARTS": 5}, urls=urls)
    assert result.finish_reason == "finished"
    assert sorted(i["url"] for i in result.items) == sorted(urls)
    delays = [re.search(r"in ([\d.]+) s \(restart (\d) of 5 within 60 s\)", r.getMessage()).groups()
              for r in caplog.records if r.getMessage().startswith("Restarting downloader")]
    assert delays == [("0.05", "1"), ("0.10", "2"), ("0.20", "3")]


def test_poison_request_goes_to_its_errback(server, monkeypatch, caplog):
    poison = f"{server.url}/page/66"
    crashed = crash_on(monkeypatch, lambda url: url == poison)
    urls = [f"{server.url}/page/1", poison, f"{server.url}/page/2"]
    result = run_crawl(ListSpider, ONE_AT_A_TIME, urls=urls)
    assert crashed == [poison, poison]  # never sent a third time
    assert result.finish_reason == "finished"
    failed = [i for i in result.items if "error" in i]
    assert [i["url"] for i in failed] == [poison]
    assert failed[0]["crashed"]
    assert "the downloader of 127.0.0.1 died, 2 times: not sent again" in failed[0]["error"]
    assert sorted(i["url"] for i in result.items if "error" not in i) == sorted(
        urls[:1] + urls[2:])
    assert result.stats["supervisor/poison_requests"] == 1
    assert "Poison request: <GET " + poison + ">" in caplog.text


class PlainSpider(ListSpider):
    name = "plain"

    def start_requests(self):
        for url in self.urls:
            yield crawlfw.Request(url)


def test_poison_request_without_errback_is_logged(server, monkeypatch, caplog):
    poison = f"{server.url}/page/66"
    crash_on(monkeypatch, lambda url: url == poison)
    result = run_crawl(PlainSpider, ONE_AT_A_TIME, urls=[poison, f"{server.url}/page/1"])
    assert result.finish_reason == "finished"
    assert len(result.items) == 1
    assert f"Error downloading <GET {poison}>" in caplog.text
    assert "DownloaderCrashed" in caplog.text


# --- a slow exporter of one crawl stalls no other crawl ------------------------------------

ENTERED = threading.Event()
RELEASE = threading.Event()


class SlowExporter(JsonLinesItemExporter):
    """A feed whose end takes as long as the test wants (a slow upload)."""

    def finish_exporting(self):
        ENTERED.set()
        RELEASE.wait(30)
        super().finish_exporting()


class SlowFeedSpider(ListSpider):
    name = "slow_feed"


def test_slow_exporter_does_not_stall_another_crawl(server, tmp_path):
    ENTERED.clear()
    RELEASE.clear()
    runner = CrawlerRunner({"LOG_LEVEL": "INFO"})
    try:
        spidercls = type("SlowFeedSpider", (SlowFeedSpider,), {"custom_settings": {
            "FEEDS": {str(tmp_path / "slow.jl"): {"format": "slow"}},
            "FEED_EXPORTERS": {"slow": f"{__name__}.SlowExporter"}}})
        slow = runner.crawl(spidercls, urls=[f"{server.url}/page/1"])
        assert ENTERED.wait(20), "the slow crawl never reached its feed's end"
        other = runner.crawl(ListSpider, urls=[f"{server.url}/page/2"])
        assert other.wait(20), "a second crawl was stalled by the first one's slow feed"
        assert other.finish_reason == "finished"
        assert not slow.wait(0)  # still storing its feed
        RELEASE.set()
        assert slow.wait(20)
        assert slow.finish_reason == "finished"
        assert (tmp_path / "slow.jl").read_text().count("\n") == 1
    finally:
        RELEASE.set()
        runner.shutdown()


# --- a fixed pool of downloaders; idle slots are evicted ----------------------------------

class IdleSpider(ListSpider):
    """Stays open until ``release`` is set; at each ``spider_idle`` it records how many
    download slot objects and downloader threads are alive."""

    name = "idle"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.release = threading.Event()
        spider.idle = threading.Event()
        spider.alive = []
        crawler.signals.connect(spider.on_idle, signals.spider_idle)
        return spider

    def on_idle(self):
        gc.collect()
        slots = sum(1 for o in gc.get_objects() if isinstance(o, DownloadSlot))
        threads = sum(1 for t in threading.enumerate() if t.name.startswith("DownloaderActor"))
        self.alive.append((slots, threads))
        self.idle.set()
        if not self.release.is_set():
            raise DontCloseSpider


@pytest.mark.slow
def test_idle_slots_are_evicted_and_served_again_on_demand(server):
    # 300 hosts (curl resolves *.localhost to the loopback itself): at the end the slot
    # objects alive are bounded by a constant, not by the hosts seen (before: one slot
    # and one downloader thread per host, kept 60 s); a later request for an evicted
    # slot is served by the same fixed pool.
    port = server.url.rsplit(":", 1)[1]
    urls = [f"http://h{i}.localhost:{port}/page/1" for i in range(300)]
    runner = CrawlerRunner({"LOG_LEVEL": "INFO", "DOWNLOADER_ACTORS": 2,
                            "CONCURRENT_REQUESTS": 32})
    crawler = runner.create_crawler(IdleSpider)
    items = []
    more = threading.Event()
    crawler.signals.connect(
        lambda item: (items.append(item), len(items) == len(urls) + 1 and more.set()),
        signals.item_scraped, weak=False)
    try:
        runner.crawl(crawler, urls=urls)
        assert crawler.spider.idle.wait(60), "the crawl never became idle"
        slots, threads = crawler.spider.alive[0]
        assert len(items) == len(urls)
        assert slots <= 4, f"{slots} download slots alive after the crawl of 300 hosts"
        assert threads == 2
        crawler.engine.crawl(crawlfw.Request(f"http://h7.localhost:{port}/page/2"),
                             crawler.spider)
        assert more.wait(20), "a request for an evicted slot was not downloaded"
        crawler.spider.release.set()
        assert crawler.wait(20)
        assert crawler.finish_reason == "finished"
        assert sorted(i["url"] for i in items) == sorted(
            urls + [f"http://h7.localhost:{port}/page/2"])
    finally:
        crawler.spider.release.set()
        runner.shutdown()
