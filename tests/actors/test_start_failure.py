"""An actor whose ``on_start`` raises (a pipeline's ``open_spider`` that cannot open its
database) ends the crawl in seconds with the error named, instead of hanging: pykka 4
never calls ``on_failure`` for ``on_start``, so crawlfw's actors report it themselves."""

import logging
import subprocess
import sys

import pytest

import crawlfw
from tests.support.countserver import CountingServer
from tests.support.crawl import run_crawl


class FailingOpenPipeline:
    def open_spider(self, spider):
        raise RuntimeError("cannot open database")

    def process_item(self, item, spider):
        return item


class OnePageSpider(crawlfw.Spider):
    name = "one_page"
    start = ""

    def start_requests(self):
        yield crawlfw.Request(self.start + "/page/0")

    def parse(self, response):
        yield {"url": response.url}


def test_pipeline_open_spider_failure_refuses_the_start(caplog):
    """The Supervisor waits for the item pipelines' open_spider (run on the Pipeline's
    thread) before it opens the feeds: a failure refuses the start with the pipeline
    named, no request is made, and the pipeline is not closed (it never opened)."""
    caplog.set_level(logging.INFO)
    server = CountingServer()
    try:
        with pytest.raises(crawlfw.exceptions.CrawlStartError) as refused:
            run_crawl(OnePageSpider,
                      {"ITEM_PIPELINES": {f"{__name__}.FailingOpenPipeline": 100}},
                      timeout_s=20, start=server.url)
        assert server.paths == []
    finally:
        server.stop()
    assert str(refused.value) == (
        f"ITEM_PIPELINES: '{__name__}.FailingOpenPipeline'.open_spider failed: "
        "RuntimeError: cannot open database")
    assert "Actor pipeline of crawl" not in caplog.text  # no failure reported besides
    assert "Spider closed (start_failed: ITEM_PIPELINES: " in caplog.text


EXPORTER_SPIDER = '''
import crawlfw
from crawlfw.exporters import JsonLinesItemExporter


class CannotStartExporter(JsonLinesItemExporter):
    def __init__(self, file, **kwargs):
        raise RuntimeError("cannot start the feed")


class S(crawlfw.Spider):
    name = "feed_start"
    custom_settings = {"FEED_EXPORTERS": {"jl": __name__ + ".CannotStartExporter"}}
    start_urls = [%r]

    def parse(self, response):
        yield {"url": response.url}
'''


@pytest.mark.slow
def test_exporter_that_cannot_start_ends_the_crawl_with_its_error(tmp_path):
    """An exporter whose own code fails to start (its class raises on the feed's open):
    the crawl is refused in seconds, exit status 1, the feed and the error named in one
    line (the traceback logged once), nothing downloaded."""
    server = CountingServer()
    try:
        spider = tmp_path / "feed_start.py"
        spider.write_text(EXPORTER_SPIDER % f"{server.url}/page/0")
        proc = subprocess.run(
            [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(spider), "-o", "items.jl",
             "-s", "CONTROL_ENDPOINT=0"],
            capture_output=True, text=True, timeout=30, cwd=tmp_path)
    finally:
        server.stop()
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert ("Crawl could not start: Cannot open the feed items.jl: RuntimeError: "
            "cannot start the feed") in proc.stderr
    assert proc.stderr.count("Traceback") == 1
    assert server.paths == []
