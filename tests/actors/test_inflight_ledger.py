"""The downloaders' slot tables are the one ledger of requests in flight, in real
in-process crawls of a local server: ``crawlfw status`` reads its per-slot figures from
them (the Engine keeps one count), a downloader dying mid-transfer hands its table to
its replacement (every page once, nothing re-sent by the Engine), and a crawl closed
with transfers in flight gets every one of them back in its Scheduler."""

import logging
import re
import threading

import pytest

import crawlfw
from crawlfw.actors.downloader import DownloaderActor
from crawlfw.control import collect_status
from crawlfw.core.frontier.frontier import MemoryFrontier
from crawlfw.crawler import CrawlerRunner
from tests.support.countserver import CountingServer
from tests.support.crawl import run_crawl
from tests.support.wait import wait_for

pytestmark = pytest.mark.slow  # a local HTTP server


@pytest.fixture
def server():
    s = CountingServer(hold_s=0.3)
    yield s
    s.stop()


class SlowSpider(crawlfw.Spider):
    name = "ledger"
    urls = ()

    def start_requests(self):
        for url in self.urls:
            yield crawlfw.Request(url, callback=self.parse)

    def parse(self, response):
        yield {"url": response.url}


def test_status_reads_in_flight_per_slot_from_the_downloaders(server):
    runner = CrawlerRunner({"LOG_LEVEL": "INFO", "CONCURRENT_REQUESTS_PER_DOMAIN": 3})
    crawler = runner.create_crawler(SlowSpider)
    try:
        runner.crawl(crawler, urls=[f"{server.url}/slow/{i}" for i in range(9)])
        status = wait_for(
            lambda: next((s for s in collect_status(runner) if s["slots"]), None),
            "a status with a slot in flight")
        assert set(status["slots"]) == {"127.0.0.1"}
        assert 1 <= status["slots"]["127.0.0.1"] <= 9
        assert crawler.wait(30)
    finally:
        runner.shutdown()
    assert crawler.finish_reason == "finished"


def test_a_downloader_dying_mid_transfer_hands_its_table_over(server, monkeypatch):
    # The downloader dies in a pump with three transfers running (slow pages held by
    # the server): its replacement starts them again from the table it takes over.
    original = DownloaderActor.handle_pump
    died = threading.Event()

    def handle_pump(self, message):
        if not died.is_set() and self.driver.active >= 3:
            died.set()
            raise RuntimeError("injected: dies with transfers in flight")
        return original(self, message)

    monkeypatch.setattr(DownloaderActor, "handle_pump", handle_pump)
    urls = [f"{server.url}/slow/{i}" for i in range(6)]
    result = run_crawl(SlowSpider, {"SUPERVISOR_BACKOFF": 0,
                                    "CONCURRENT_REQUESTS_PER_DOMAIN": 3}, urls=urls)
    assert died.is_set()
    assert sorted(i["url"] for i in result.items) == sorted(urls)  # each once
    assert result.stats["supervisor/restarts/downloader"] == 1
    assert "supervisor/poison_requests" not in result.stats
    assert result.finish_reason == "finished"


def test_closing_with_transfers_in_flight_gives_them_back_to_the_scheduler(server, monkeypatch):
    # Stopped while the server holds all four transfers: the Engine has no copy of
    # them; the downloader's table gives them back as it stops (release_requests), and
    # the frontier queues each again, once.
    released = []
    original = MemoryFrontier.release

    def release(self, requests):
        released.extend(r.url for r in requests)
        return original(self, requests)

    monkeypatch.setattr(MemoryFrontier, "release", release)
    urls = [f"{server.url}/slow/{i}" for i in range(4)]
    server.hold_s = 5.0
    runner = CrawlerRunner({"LOG_LEVEL": "INFO", "CONCURRENT_REQUESTS_PER_DOMAIN": 4})
    crawler = runner.create_crawler(SlowSpider)
    try:
        runner.crawl(crawler, urls=urls)
        wait_for(lambda: server.active >= 4, "four transfers held by the server")
        runner.stop("shutdown")
        assert crawler.wait(30)
    finally:
        server.hold_s = 0.0
        runner.shutdown()
    assert crawler.finish_reason == "shutdown"
    assert not crawler.stats.get_value("item_scraped_count")
    assert sorted(released) == sorted(urls)


def test_autothrottle_debug_reads_a_slots_transfers_from_its_downloader(server, caplog):
    # AUTOTHROTTLE_DEBUG's "conc" is the slot's transfers in flight, asked of the
    # downloader that holds them (crawler.engine.downloader.in_flight_of).
    caplog.set_level(logging.INFO)
    urls = [f"{server.url}/slow/{i}" for i in range(6)]
    result = run_crawl(SlowSpider, {"AUTOTHROTTLE_ENABLED": True, "AUTOTHROTTLE_DEBUG": True,
                                    "AUTOTHROTTLE_START_DELAY": 0.0,
                                    "AUTOTHROTTLE_TARGET_CONCURRENCY": 3.0,
                                    "CONCURRENT_REQUESTS_PER_DOMAIN": 3}, urls=urls)
    assert sorted(i["url"] for i in result.items) == sorted(urls)
    concs = [int(m.group(1)) for m in (
        re.search(r"slot: 127\.0\.0\.1 \| conc: *(\d+) \|", r.getMessage())
        for r in caplog.records) if m]
    assert len(concs) == len(urls), caplog.text[-2000:]
    assert all(0 <= c <= 3 for c in concs)
