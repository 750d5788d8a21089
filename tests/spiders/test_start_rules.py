"""Scrapy 2.13+'s start rules (crawlfw/spiders/_start.py): ``start()`` is the entry point,
its default iterates ``start_requests()``, a spider overriding both gets its ``start()``,
and the generic spiders give Scrapy 2.19's first requests and callbacks.

The first requests are taken as the crawl takes them (the Scraper: ``start()`` through the
default spider middlewares). The expected rows were produced by the same spider classes
(``scrapy`` written for ``crawlfw``) under Scrapy 2.19.0, iterating
``SpiderMiddlewareManager.process_start()``: ``(url, callback name, dont_filter,
meta['is_start_request'])``, items as ``('item', dict)``.
"""

import logging

import pytest

from crawlfw import Request, Spider
from crawlfw.core.flow.scraper import Scraper
from crawlfw.linkextractors import LinkExtractor
from crawlfw.spiders import CrawlSpider, CSVFeedSpider, Rule, SitemapSpider, XMLFeedSpider
from crawlfw.spiders._start import start_hook, start_output
from crawlfw.utils.test import get_crawler

U = "http://example.com"


class Plain(Spider):
    name = "plain"
    start_urls = [U + "/a", U + "/b"]


class AsyncStart(Spider):
    name = "async_start"
    start_urls = [U + "/ignored"]

    async def start(self):
        yield Request(U + "/s1", callback=self.parse_one)
        yield {"item": 1}
        yield Request(U + "/s2", dont_filter=True)

    def parse_one(self, response):
        pass


class Both(Spider):
    name = "both"
    start_urls = [U + "/urls"]

    async def start(self):
        yield Request(U + "/from-start", callback=self.parse_one)

    def start_requests(self):
        yield Request(U + "/from-start-requests")

    def parse_one(self, response):
        pass


class BothCompat(Spider):
    # Scrapy's documented compat pattern: start() iterates start_requests()
    name = "both_compat"

    async def start(self):
        for request in self.start_requests():
            yield request

    def start_requests(self):
        yield Request(U + "/compat", callback=self.parse_one)

    def parse_one(self, response):
        pass


class StartPlusSuper(Spider):
    name = "start_plus_super"
    start_urls = [U + "/u1"]

    async def start(self):
        async for request in super().start():
            yield request
        yield Request(U + "/extra", meta={"is_start_request": False})


class BaseWithStart(Spider):
    name = "base_with_start"

    async def start(self):
        yield Request(U + "/base-start")


class ChildWithStart(BaseWithStart):
    name = "child_with_start"

    async def start(self):
        yield Request(U + "/child-start")


class Crawl(CrawlSpider):
    name = "crawl"
    start_urls = [U + "/c1"]
    rules = (Rule(LinkExtractor(), callback="parse_item"),)

    def parse_item(self, response):
        pass


class CrawlStart(CrawlSpider):
    name = "crawl_start"
    rules = (Rule(LinkExtractor()),)

    async def start(self):
        yield Request(U + "/cs")


class XmlFeed(XMLFeedSpider):
    name = "xmlfeed"
    start_urls = [U + "/feed.xml"]

    def parse_node(self, response, node):
        pass


class CsvFeed(CSVFeedSpider):
    name = "csvfeed"
    start_urls = [U + "/feed.csv"]

    def parse_row(self, response, row):
        pass


class Sitemap(SitemapSpider):
    name = "sitemap"
    sitemap_urls = [U + "/sitemap.xml", U + "/robots.txt"]


class SitemapPlus(SitemapSpider):
    name = "sitemap_plus"
    sitemap_urls = [U + "/sitemap.xml"]

    async def start(self):
        async for request in super().start():
            yield request
        yield Request(U + "/also", callback=self.parse)


class SitemapOwnStart(SitemapSpider):
    name = "sitemap_own_start"
    sitemap_urls = [U + "/never.xml"]

    async def start(self):
        yield Request(U + "/own.xml", callback=self._parse_sitemap)



#: Scrapy 2.19.0's first requests and items for each spider above.
SCRAPY_2_19 = [
    ('Plain', [('http://example.com/a', None, True, True), ('http://example.com/b', None, True, True)]),
    ('AsyncStart', [('http://example.com/s1', 'parse_one', False, True), ('item', {'item': 1}), ('http://example.com/s2', None, True, True)]),
    ('Both', [('http://example.com/from-start', 'parse_one', False, True)]),
    ('BothCompat', [('http://example.com/compat', 'parse_one', False, True)]),
    ('StartPlusSuper', [('http://example.com/u1', None, True, True), ('http://example.com/extra', None, False, False)]),
    ('BaseWithStart', [('http://example.com/base-start', None, False, True)]),
    ('ChildWithStart', [('http://example.com/child-start', None, False, True)]),
    ('Crawl', [('http://example.com/c1', None, True, True)]),
    ('CrawlStart', [('http://example.com/cs', None, False, True)]),
    ('XmlFeed', [('http://example.com/feed.xml', None, True, True)]),
    ('CsvFeed', [('http://example.com/feed.csv', None, True, True)]),
    ('Sitemap', [('http://example.com/sitemap.xml', '_parse_sitemap', False, True), ('http://example.com/robots.txt', '_parse_sitemap', False, True)]),
    ('SitemapPlus', [('http://example.com/sitemap.xml', '_parse_sitemap', False, True), ('http://example.com/also', 'parse', False, True)]),
    ('SitemapOwnStart', [('http://example.com/own.xml', '_parse_sitemap', False, True)]),
]


class _Sink:
    def __init__(self):
        self.items_seen = []
        self.closed = []

    def requests(self, requests, running):
        raise AssertionError("start requests are sent by the Scraper's caller")

    def items(self, items, response, spider_error):
        self.items_seen.extend(items)

    def close_spider(self, reason):
        self.closed.append(reason)


def _first_output(spidercls, **kwargs):
    """(request rows, items) as the crawl takes them: the Scraper pulling start()'s
    output through the default spider middlewares."""
    crawler = get_crawler(spidercls)
    crawler.spider = spidercls.from_crawler(crawler, **kwargs)
    sink = _Sink()
    scraper = Scraper(crawler, sink)
    batch, _, exhausted = scraper.pull_start_requests(100)
    assert exhausted
    rows = [(r.url, r.callback.__name__ if r.callback else None, r.dont_filter,
             r.meta.get("is_start_request")) for r in batch]
    return rows, [("item", dict(i)) for i in sink.items_seen], scraper


@pytest.mark.parametrize("name, expected", SCRAPY_2_19, ids=[row[0] for row in SCRAPY_2_19])
def test_first_requests_and_callbacks_are_scrapy_2_19s(name, expected):
    rows, items, scraper = _first_output(globals()[name])
    assert rows == [row for row in expected if row[0] != "item"]
    assert items == [row for row in expected if row[0] == "item"]
    assert not scraper.start_error


def test_the_generic_spiders_have_start():
    for cls in (CrawlSpider, XMLFeedSpider, CSVFeedSpider, SitemapSpider):
        assert start_hook(cls.__new__(cls)) == "start_requests"  # their default start()
    assert "start" in vars(SitemapSpider)


# --- where crawlfw keeps Scrapy 1.2's start_requests() (Scrapy 2.16+ ignores it) ---------


class OnlyStartRequests(Spider):
    name = "only_start_requests"
    start_urls = [U + "/not-used"]

    def start_requests(self):
        yield Request(U + "/sr", callback=self.parse_sr)
        yield {"from": "start_requests"}  # items from start_requests (Scrapy 2.13)

    def parse_sr(self, response):
        pass


class SitemapOldStyle(SitemapSpider):
    """Scrapy 1.2: a SitemapSpider overriding start_requests."""
    name = "sitemap_old_style"
    sitemap_urls = [U + "/not-used.xml"]

    def start_requests(self):
        yield Request(U + "/custom.xml", callback=self._parse_sitemap)


def test_start_requests_alone_is_used_as_in_scrapy_1_2(caplog):
    # Scrapy 2.16+ never calls start_requests(): it would send /not-used; Scrapy 1.2 to
    # 2.15 send what start_requests() gives, and so does crawlfw, without a warning.
    with caplog.at_level(logging.WARNING):
        rows, items, _ = _first_output(OnlyStartRequests)
        assert rows == [(U + "/sr", "parse_sr", False, True)]
        assert items == [("item", {"from": "start_requests"})]
        rows, _, _ = _first_output(SitemapOldStyle)
        assert rows == [(U + "/custom.xml", "_parse_sitemap", False, True)]
    assert caplog.records == []


def test_default_start_of_a_spider_is_not_stepped_on_an_event_loop():
    # the defaults are marked: start_requests() is called directly (no loop per request)
    for cls in (Plain, OnlyStartRequests, Crawl, Sitemap, SitemapOldStyle):
        assert start_hook(cls()) == "start_requests"
    for cls in (AsyncStart, Both, SitemapPlus, CrawlStart):
        assert start_hook(cls()) == "start"


def test_an_instance_start_requests_wins_over_the_class_start():
    # crawlfw fetch and the shell replace the start requests on the instance
    spider = Both()
    spider.start_requests = lambda: [Request(U + "/instance")]
    assert [r.url for r in start_output(spider)] == [U + "/instance"]


# --- mistakes --------------------------------------------------------------------------


class ShadowBase(Spider):
    name = "shadow_base"

    async def start(self):
        yield Request(U + "/base")


class ShadowChild(ShadowBase):
    name = "shadow_child"

    def start_requests(self):
        yield Request(U + "/child")


def test_start_requests_below_a_start_is_warned_about(caplog):
    with caplog.at_level(logging.WARNING, logger="crawlfw.spiders"):
        rows, _, _ = _first_output(ShadowChild)
    assert rows == [(U + "/base", None, False, True)]  # Scrapy 2.13+: start() wins
    [record] = caplog.records
    assert record.getMessage() == (
        "tests.spiders.test_start_rules.ShadowChild defines start_requests(), but "
        "tests.spiders.test_start_rules.ShadowBase.start() is the entry point (Scrapy "
        "2.13+): start_requests() is used only if that start() iterates super().start(). "
        "Define start() in ShadowChild as well (it may iterate self.start_requests())")


def test_a_coroutine_start_is_a_start_error_with_scrapy_2_19s_message(caplog):
    class CoroStart(Spider):
        name = "coro_start"

        async def start(self):
            return [Request(U + "/x")]

    with caplog.at_level(logging.ERROR):
        rows, _, scraper = _first_output(CoroStart)
    assert rows == []
    assert scraper.start_error
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    # Scrapy 2.19: "Error while reading start items and requests: <module>.CoroStart.start()
    # must be an asynchronous generator, i.e. an async def method with yield statements,
    # got <class 'coroutine'>."
    assert record.getMessage() == (
        "Error while reading start items and requests: tests.spiders.test_start_rules."
        "test_a_coroutine_start_is_a_start_error_with_scrapy_2_19s_message.<locals>."
        "CoroStart.start() must be an asynchronous generator, i.e. an async def method "
        "with yield statements, got <class 'coroutine'>.")


def test_a_plain_start_method_is_warned_about_and_start_requests_used(caplog):
    class PlainStart(Spider):
        name = "plain_start"
        start_urls = [U + "/a"]

        def start(self):  # Scrapy 2.19 refuses it; a Scrapy 1.2 spider's own method
            yield Request(U + "/never")

    with caplog.at_level(logging.WARNING, logger="crawlfw.spiders"):
        rows, _, scraper = _first_output(PlainStart)
    assert rows == [(U + "/a", None, True, True)]
    assert not scraper.start_error
    [record] = caplog.records
    assert "PlainStart.start() is not an asynchronous generator" in record.getMessage()
    assert "the first requests come from start_requests()" in record.getMessage()


def test_close_spider_from_start_closes_with_its_reason():
    from crawlfw.exceptions import CloseSpider

    class Closing(Spider):
        name = "closing"

        async def start(self):
            yield Request(U + "/1")
            raise CloseSpider("no_more")

    crawler = get_crawler(Closing)
    crawler.spider = Closing.from_crawler(crawler)
    sink = _Sink()
    scraper = Scraper(crawler, sink)
    batch, _, exhausted = scraper.pull_start_requests(10)
    assert [r.url for r in batch] == [U + "/1"] and exhausted
    assert sink.closed == ["no_more"]
    assert not scraper.start_error


class SelfStartRequests(Spider):
    # a common Scrapy 2 pattern: an async start() asking the spider's start_requests()
    name = "self_start_requests"
    start_urls = [U + "/a", U + "/b"]

    async def start(self):
        yield Request(U + "/first")
        for request in self.start_requests():
            yield request


class SuperStartRequests(Spider):
    name = "super_start_requests"
    start_urls = [U + "/a"]

    async def start(self):
        for request in super().start_requests():
            yield request


@pytest.mark.parametrize("spidercls, expected", [
    (SelfStartRequests, [(U + "/first", None, False, True), (U + "/a", None, True, True),
                         (U + "/b", None, True, True)]),
    (SuperStartRequests, [(U + "/a", None, True, True)]),
])
def test_an_async_start_may_iterate_start_requests(spidercls, expected):
    # start_requests() called from start() gives the start URLs' requests (Scrapy 2.13 to
    # 2.15), instead of stepping start() again from inside itself (a start error before)
    rows, items, scraper = _first_output(spidercls)
    assert rows == expected and items == []
    assert not scraper.start_error
