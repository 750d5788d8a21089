"""An actor whose ``on_start`` raises (a pipeline's ``open_spider`` that cannot open its
database) ends the crawl in seconds with the error named, instead of hanging: pykka 4
never calls ``on_failure`` for ``on_start``, so crawlfw's actors report it themselves."""

import logging

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


def test_pipeline_open_spider_failure_closes_the_crawl(caplog):
    caplog.set_level(logging.INFO)
    server = CountingServer()
    try:
        result = run_crawl(
            OnePageSpider,
            {"ITEM_PIPELINES": {f"{__name__}.FailingOpenPipeline": 100}},
            timeout_s=20, start=server.url)
    finally:
        server.stop()
    assert result.finish_reason == "pipeline_failed"
    assert "Actor pipeline of crawl one_page-" in caplog.text
    assert "RuntimeError: cannot open database" in caplog.text
