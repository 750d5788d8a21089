"""User code that actors call and that raises: a log formatter, a stats collector, a
dupefilter, a signal handler (an extension's). Each error is logged with its traceback and
counted, and the crawl goes on to its normal end with every page and item; real crawls of
a real local server (issue: a raising ``LogFormatter.crawled`` ended the engine at 9 of
300 items)."""

import logging

import pytest

import crawlfw
from crawlfw import signals
from crawlfw.dupefilters import RFPDupeFilter
from crawlfw.exceptions import DropItem
from crawlfw.logformatter import LogFormatter
from crawlfw.statscollectors import MemoryStatsCollector
from crawlfw.utils._hooks import contain_methods
from tests.downloadermiddlewares._support import ScriptedServer
from tests.support.crawl import run_crawl

PAGES = 30
PAGE = (200, [("Content-Type", "text/html")], b"<html><body>page</body></html>")


@pytest.fixture(scope="module")
def server():
    with ScriptedServer({"/page": PAGE}) as server:
        yield server


class PagesSpider(crawlfw.Spider):
    name = "pages"
    base = ""

    def start_requests(self):
        for i in range(PAGES):
            yield crawlfw.Request(f"{self.base}/page?{i}")

    def parse(self, response):
        yield {"n": int(response.url.rsplit("?", 1)[1])}


def _every_third(url_or_n) -> bool:
    return int(str(url_or_n).rsplit("?", 1)[-1]) % 3 == 0


class CrawledRaises(LogFormatter):
    def crawled(self, request, response, spider):
        if _every_third(request.url):
            raise RuntimeError("crawled formatter broke")
        return super().crawled(request, response, spider)


class ScrapedRaises(LogFormatter):
    def scraped(self, item, response, spider):
        if _every_third(item["n"]):
            raise RuntimeError("scraped formatter broke")
        return super().scraped(item, response, spider)


class ScrapedReturnsNone(LogFormatter):
    def scraped(self, item, response, spider):
        return None


class DroppedRaises(LogFormatter):
    def dropped(self, item, exception, response, spider):
        raise RuntimeError("dropped formatter broke")


class DropAll:
    def process_item(self, item, spider):
        raise DropItem("not wanted")


class StatsRaises(MemoryStatsCollector):
    def inc_value(self, key, count=1, start=0, spider=None):
        if key.startswith("scheduler/"):
            raise RuntimeError("stats backend down")
        super().inc_value(key, count, start, spider)


class DupeFilterRaises(RFPDupeFilter):
    def request_seen(self, request):
        if _every_third(request.url):
            raise RuntimeError("fingerprint store down")
        return super().request_seen(request)


class ExtensionRaises:
    @classmethod
    def from_crawler(cls, crawler):
        ext = cls()
        crawler.signals.connect(ext.response_received, signals.response_received)
        return ext

    def response_received(self, response):
        raise RuntimeError("extension broke")


def _crawl(server, caplog, settings):
    caplog.set_level(logging.DEBUG)
    result = run_crawl(PagesSpider, {"LOG_LEVEL": "DEBUG", **settings}, base=server.url)
    assert result.finish_reason == "finished"
    return result


def _errors(caplog, text):
    return [r for r in caplog.records if r.levelno == logging.ERROR and text in r.getMessage()]


@pytest.mark.parametrize("formatter, method, errors", [
    (CrawledRaises, "crawled", PAGES // 3),
    (ScrapedRaises, "scraped", PAGES // 3),
])
def test_log_formatter_that_raises(server, caplog, formatter, method, errors):
    result = _crawl(server, caplog, {"LOG_FORMATTER": f"{__name__}.{formatter.__name__}"})
    assert sorted(item["n"] for item in result.items) == list(range(PAGES))
    assert result.stats["hook_errors/log_formatter"] == errors
    logged = _errors(caplog, f"Error in log_formatter {formatter.__name__}.{method}")
    assert len(logged) == errors and all(r.exc_info for r in logged)
    # the default message is logged in place of the broken one
    default = "Crawled (200)" if method == "crawled" else "Scraped from <200"
    assert sum(default in r.getMessage() for r in caplog.records) == PAGES


def test_log_formatter_that_returns_no_dict(server, caplog):
    result = _crawl(server, caplog, {"LOG_FORMATTER": f"{__name__}.ScrapedReturnsNone"})
    assert len(result.items) == PAGES
    assert result.stats["hook_errors/log_formatter"] == PAGES
    assert _errors(caplog, "ScrapedReturnsNone.scraped: it returned NoneType, not dict")


def test_log_formatter_dropped_that_raises(server, caplog):
    result = _crawl(server, caplog, {"LOG_FORMATTER": f"{__name__}.DroppedRaises",
                                     "ITEM_PIPELINES": {f"{__name__}.DropAll": 100}})
    assert result.items == []
    assert result.stats["item_dropped_count"] == PAGES
    assert result.stats["hook_errors/log_formatter"] == PAGES


def test_stats_collector_that_raises(server, caplog):
    result = _crawl(server, caplog, {"STATS_CLASS": f"{__name__}.StatsRaises"})
    assert len(result.items) == PAGES
    # the first error per method has its traceback; later ones are quieter
    (logged,) = _errors(caplog, "Error in stats_collector StatsRaises.inc_value")
    assert logged.exc_info
    assert "scheduler/enqueued" not in result.stats


def test_dupefilter_that_raises_lets_the_request_through(server, caplog):
    result = _crawl(server, caplog, {"DUPEFILTER_CLASS": f"{__name__}.DupeFilterRaises"})
    assert sorted(item["n"] for item in result.items) == list(range(PAGES))
    assert result.stats["hook_errors/dupefilter"] == PAGES // 3
    assert len(_errors(caplog, "Error in dupefilter DupeFilterRaises.request_seen")) == PAGES // 3


def test_extension_signal_handler_that_raises(server, caplog):
    result = _crawl(server, caplog, {"EXTENSIONS": {f"{__name__}.ExtensionRaises": 0}})
    assert len(result.items) == PAGES
    assert result.stats["hook_errors/signal_handler"] == PAGES
    assert len(_errors(caplog, "Error caught on signal handler")) == PAGES


def test_own_classes_are_not_wrapped():
    formatter = LogFormatter()
    assert contain_methods(formatter, "log_formatter", {"crawled": None}) is formatter
    assert "crawled" not in vars(formatter)  # no instance attribute: no cost per call
    custom = CrawledRaises()
    contain_methods(custom, "log_formatter", {"crawled": None})
    assert "crawled" in vars(custom)
