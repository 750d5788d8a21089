"""A restarted Pipeline actor keeps the crawl's item pipelines (opened and closed once),
and a crawl stopped while the dead pipeline waits for its backoff still exports what
it held. In-process crawls against a local site; the pipeline is made to die by the
``pipeline.items`` fault point armed with the ``raise`` mode (``crawlfw.core._faults``);
waits are on events, never sleeps."""

import json
import logging
import threading

import pytest

from crawlfw import signals
from crawlfw.crawler import CrawlerRunner
from crawlfw.core import _faults
from tests.crash.batchspider import ITEMS_PER_PAGE, BatchSpider
from tests.support.crawl import run_crawl
from tests.support.linksite import LinkSite


@pytest.fixture
def die_on_batch(monkeypatch):
    """Arm ``pipeline.items`` to raise once, half-way through the n-th batch."""
    def arm(n):
        monkeypatch.setattr(_faults, "_POINTS", {"pipeline.items": n})
        monkeypatch.setattr(_faults, "_MODES", {"pipeline.items": ("raise", 1)})
    return arm


class CountingPipeline:
    """An item pipeline that counts its calls (class-level: one crawl per test)."""

    calls = {"open": 0, "close": 0, "process": 0}

    def open_spider(self, spider):
        CountingPipeline.calls["open"] += 1

    def close_spider(self, spider):
        CountingPipeline.calls["close"] += 1

    def process_item(self, item, spider):
        CountingPipeline.calls["process"] += 1
        return item


def read_jl(path):
    return [(row["n"], row["k"]) for row in map(json.loads, path.read_text().splitlines())]


def test_restarted_pipeline_keeps_its_item_pipelines_opened_once(tmp_path, die_on_batch):
    CountingPipeline.calls.update(open=0, close=0, process=0)
    die_on_batch(3)
    site = LinkSite(pages=40, fanout=3, seed=3)
    feed = tmp_path / "items.jl"
    try:
        result = run_crawl(BatchSpider, {
            "ITEM_PIPELINES": {f"{__name__}.CountingPipeline": 100},
            "FEEDS": {str(feed): {"format": "jsonlines"}}, "SUPERVISOR_BACKOFF": 0,
            "LOG_LEVEL": "INFO"}, timeout_s=60, base=site.url)
    finally:
        site.stop()
    assert result.finish_reason == "finished"
    assert result.stats["supervisor/restarts/pipeline"] == 1
    assert CountingPipeline.calls == {"open": 1, "close": 1,
                                      "process": site.pages * ITEMS_PER_PAGE}
    items = read_jl(feed)
    assert sorted(items) == sorted((n, k) for n in range(site.pages)
                                   for k in range(ITEMS_PER_PAGE))


class _Restarting(logging.Handler):
    """Sets ``event`` when the Supervisor logs that it will restart the pipeline."""

    def __init__(self):
        super().__init__()
        self.event = threading.Event()

    def emit(self, record):
        if record.getMessage().startswith("Restarting pipeline"):
            self.event.set()


def test_crawl_stopped_during_the_backoff_exports_what_the_dead_pipeline_held(
        tmp_path, die_on_batch, caplog):
    caplog.set_level(logging.INFO, logger="crawlfw.actors.supervisor")
    die_on_batch(2)
    site = LinkSite(pages=400, fanout=3, seed=4, delay_s=0.01)
    feed = tmp_path / "items.jl"
    watcher = _Restarting()
    logging.getLogger("crawlfw.actors.supervisor").addHandler(watcher)
    runner = CrawlerRunner({"FEEDS": {str(feed): {"format": "jsonlines"}},
                            "SUPERVISOR_BACKOFF": 600, "LOG_LEVEL": "INFO",
                            "CONCURRENT_REQUESTS": 2})
    crawler = runner.create_crawler(BatchSpider)
    scraped = []
    crawler.signals.connect(lambda item: scraped.append((item["n"], item["k"])),
                            signals.item_scraped, weak=False)
    try:
        runner.crawl(crawler, base=site.url)
        assert watcher.event.wait(30), "the pipeline did not die"
        runner.stop("stopped_by_test")  # the 600 s backoff is not waited for
        assert crawler.wait(30), "the crawl did not end"
    finally:
        logging.getLogger("crawlfw.actors.supervisor").removeHandler(watcher)
        runner.shutdown()
        site.stop()
    assert crawler.finish_reason == "stopped_by_test"
    items = read_jl(feed)
    assert len(items) == len(set(items))
    assert sorted(items) == sorted(scraped)
    assert len(items) >= 2 * ITEMS_PER_PAGE  # the batch it died on and the one before
