"""The log tells a callback's events in the order they happened: items it yielded
before raising are "Scraped from" before its "Spider error processing" line."""

import logging

import crawlfw
from tests.support.countserver import CountingServer
from tests.support.crawl import run_crawl


class YieldThenRaise(crawlfw.Spider):
    name = "yield_then_raise"
    start = ""

    def start_requests(self):
        yield crawlfw.Request(self.start + "/page/0")

    def parse(self, response):
        yield {"n": 1}
        yield {"n": 2}
        raise ValueError("broken after two items")


def test_spider_error_is_logged_after_the_items_yielded_before_it(caplog):
    caplog.set_level(logging.DEBUG)
    server = CountingServer()
    try:
        result = run_crawl(YieldThenRaise, start=server.url)
    finally:
        server.stop()
    assert [i["n"] for i in result.items] == [1, 2]
    assert result.stats["spider_exceptions/ValueError"] == 1
    events = [r.getMessage() for r in caplog.records
              if r.getMessage().startswith(("Scraped from", "Spider error processing"))]
    assert [e.split(" <")[0] for e in events] == [
        "Scraped from", "Scraped from", "Spider error processing"], events
    error = next(r for r in caplog.records if r.getMessage().startswith("Spider error"))
    assert "broken after two items" in str(error.exc_info[1])
