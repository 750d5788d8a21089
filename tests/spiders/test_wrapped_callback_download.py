"""``await self.crawler.engine.download(request)`` in ``async def`` callbacks that crawlfw's
spiders call for the request's callback (issue 29): ``CrawlSpider`` rule callbacks and
``parse_start_url`` (and Scrapy 2.19's ``async for`` over ``parse_with_rules``),
``XMLFeedSpider.parse_node``, ``CSVFeedSpider.parse_row``, and ``InitSpider``'s
initialization callbacks. Real crawls of a local server: each waiting callback gives the
spider's thread back, and every item arrives."""

import asyncio
import http.server
import re
import threading
import time

import pytest

from crawlfw import Request
from crawlfw.http import HtmlResponse
from crawlfw.linkextractors import LinkExtractor
from crawlfw.spiders import CrawlSpider, CSVFeedSpider, Rule, XMLFeedSpider
from crawlfw.spiders.init import InitSpider
from crawlfw.utils.test import get_crawler
from tests.support.crawl import run_crawl
from tests.support.servers import handler_server

ITEMS = 8  # /page/0 links /item/0 ... /item/7


class _Handler(http.server.BaseHTTPRequestHandler):
    """``/page/0``: links to ``/item/N`` and ``/about``; ``/item/N``: "item N";
    ``/detail/N``: "detail N" after 0.05 s; ``/feed.xml``, ``/feed.csv``: a feed of
    ``ITEMS`` entries; ``/login``, ``/token``: short pages. Every GET is counted in
    ``hits``."""

    hits: dict = {}
    lock = threading.Lock()

    def do_GET(self):  # noqa: N802  # the http.server name
        with self.lock:
            self.hits[self.path] = self.hits.get(self.path, 0) + 1
        kind = "text/html"
        if self.path == "/page/0":
            links = "".join(f'<a href="/item/{n}">i</a>' for n in range(ITEMS))
            body = f'<html><body>{links}<a href="/about">a</a></body></html>'
        elif match := re.fullmatch(r"/(item|detail)/(\d+)", self.path):
            if match.group(1) == "detail":
                time.sleep(0.05)
            body = f"{match.group(1)} {match.group(2)}"
        elif self.path == "/feed.xml":
            kind = "text/xml"
            body = "<rss>" + "".join(f"<item><n>{n}</n></item>" for n in range(ITEMS)) + "</rss>"
        elif self.path == "/feed.csv":
            kind = "text/csv"
            body = "n,name\n" + "".join(f"{n},row{n}\n" for n in range(ITEMS))
        elif self.path in ("/about", "/login", "/token", "/start"):
            body = self.path[1:]
        else:
            self.send_error(404)
            return
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Handler.hits = {}
    with handler_server(_Handler) as httpd:
        yield httpd


SETTINGS = {"ROBOTSTXT_OBEY": False, "LOG_LEVEL": "INFO", "CONCURRENT_REQUESTS": 8}


class _Overlap:
    """Counts the callbacks waiting at once (``overlap`` > 1: the spider's thread went
    on with other responses while one waited)."""

    running = 0
    overlap = 0

    @classmethod
    async def download(cls, spider, url):
        cls.running += 1
        cls.overlap = max(cls.overlap, cls.running)
        try:
            return await spider.crawler.engine.download(Request(url))
        finally:
            cls.running -= 1


def _detail_of(url):
    return url.rsplit("/", 1)[1]


# --- CrawlSpider -----------------------------------------------------------------------


class RulesSpider(CrawlSpider):
    """An async generator rule callback, a coroutine ``parse_start_url``, and a plain
    rule callback (its path unchanged)."""

    name = "rules_download"
    rules = (
        Rule(LinkExtractor(allow=r"/item/"), callback="parse_item"),
        Rule(LinkExtractor(allow=r"/about"), callback="parse_about"),
    )

    def start_requests(self):
        yield Request(f"{self.base}/page/0")

    async def parse_start_url(self, response):
        start = await self.crawler.engine.download(Request(f"{self.base}/start"))
        return {"start": start.text}

    async def parse_item(self, response):
        detail = await _Overlap.download(self, f"{self.base}/detail/{_detail_of(response.url)}")
        yield {"item": response.text, "detail": detail.text}

    def parse_about(self, response):
        return {"about": response.text}


def _sorted(items):
    return sorted(items, key=repr)


def test_async_rule_callbacks_await_downloads(server):
    _Overlap.running = _Overlap.overlap = 0
    result = run_crawl(RulesSpider, SETTINGS, base=server.url)
    assert result.finish_reason == "finished"
    assert _sorted(result.items) == _sorted(
        [{"start": "start"}, {"about": "about"}]
        + [{"item": f"item {n}", "detail": f"detail {n}"} for n in range(ITEMS)])
    assert _Overlap.overlap > 1
    assert "spider_exceptions/count" not in result.stats


class Scrapy219RulesSpider(CrawlSpider):
    """Scrapy 2.19's override (``async for`` over ``super().parse_with_rules``), a
    coroutine rule callback, and ``process_results`` (which gets the callback's output
    once it has ended)."""

    name = "rules_override"
    rules = (Rule(LinkExtractor(allow=r"/item/"), callback="parse_item",
                  cb_kwargs={"kind": "item"}),)

    def start_requests(self):
        yield Request(f"{self.base}/page/0")

    async def parse_with_rules(self, response, callback, cb_kwargs, follow=True):
        async for value in super().parse_with_rules(response, callback, cb_kwargs, follow):
            if isinstance(value, dict):
                value["override"] = True
            yield value

    def process_results(self, response, results):
        return [dict(result, processed=True) for result in results]

    async def parse_item(self, response, kind):
        detail = await self.crawler.engine.download(
            Request(f"{self.base}/detail/{_detail_of(response.url)}"))
        return [{kind: response.text, "detail": detail.text}]  # process_results takes it


def test_a_scrapy_219_parse_with_rules_override_and_a_coroutine_rule_callback(server):
    result = run_crawl(Scrapy219RulesSpider, SETTINGS, base=server.url)
    assert result.finish_reason == "finished"
    assert _sorted(result.items) == _sorted(
        [{"item": f"item {n}", "detail": f"detail {n}", "processed": True, "override": True}
         for n in range(ITEMS)])


class _Links(CrawlSpider):
    name = "links"
    rules = (Rule(LinkExtractor(allow=r"/item/"), callback="parse_item"),)

    async def parse_item(self, response):
        yield {"item": response.url}


def test_parse_with_rules_is_iterated_with_async_for_and_for():
    """Scrapy 2.19's tests iterate ``parse_with_rules`` with ``async for``; Scrapy 1.2's
    ``_parse_response`` (and crawlfw's plain overrides) with ``for``."""
    spider = _Links.from_crawler(get_crawler(_Links))
    body = b'<a href="/item/1">1</a><a href="/about">a</a>'
    response = HtmlResponse("http://example.org/", body=body)

    async def collect(*args, **kwargs):
        return [x async for x in spider.parse_with_rules(response, *args, **kwargs)]

    assert [r.url for r in asyncio.run(collect(None, {}, follow=True))] == [
        "http://example.org/item/1"]
    assert asyncio.run(collect(lambda r: [{"a": 1}], {}, follow=False)) == [{"a": 1}]
    assert asyncio.run(collect(spider.parse_item, {}, follow=False)) == [
        {"item": "http://example.org/"}]
    assert list(spider.parse_with_rules(response, lambda r: {"b": 2}, {}, follow=False)) == [
        {"b": 2}]
    # an async def callback iterated with for runs to completion on the calling thread
    assert list(spider._parse_response(response, spider.parse_item, {}, follow=False)) == [
        {"item": "http://example.org/"}]


def test_a_rule_request_with_cb_kwargs_of_its_own():
    """A rule's ``process_request`` may give its request ``cb_kwargs``: merged over the
    rule's (Scrapy 2's ``CrawlSpider._callback``)."""
    seen = []

    class Kwargs(CrawlSpider):
        name = "kwargs"
        rules = (Rule(LinkExtractor(), callback="parse_item", cb_kwargs={"a": 1, "b": 1}),)

        def parse_item(self, response, **kwargs):
            seen.append(kwargs)

    spider = Kwargs.from_crawler(get_crawler(Kwargs))
    request = Request("http://example.org/item/1", meta={"rule": 0}, cb_kwargs={"b": 2})
    response = HtmlResponse(request.url, body=b"", request=request)
    list(spider._response_downloaded(response, **request.cb_kwargs))
    assert seen == [{"a": 1, "b": 2}]


# --- feed spiders ----------------------------------------------------------------------


class XMLSpider(XMLFeedSpider):
    """An async generator ``parse_node`` awaiting a download per node."""

    name = "xml_download"
    itertag = "item"

    def start_requests(self):
        yield Request(f"{self.base}/feed.xml")

    async def parse_node(self, response, node):
        n = node.xpath("n/text()").get()
        detail = await _Overlap.download(self, f"{self.base}/detail/{n}")
        yield {"node": n, "detail": detail.text}


class XMLIteratorSpider(XMLSpider):
    """The same with the ``xml`` iterator and ``process_results``."""

    iterator = "xml"

    def process_results(self, response, results):
        return [dict(result, processed=True) for result in results]


class CSVSpider(CSVFeedSpider):
    """A coroutine ``parse_row`` awaiting a download per row."""

    name = "csv_download"

    def start_requests(self):
        yield Request(f"{self.base}/feed.csv")

    async def parse_row(self, response, row):
        detail = await self.crawler.engine.download_async(
            Request(f"{self.base}/detail/{row['n']}"))
        return {"row": row["name"], "detail": detail.text}


def test_an_async_parse_node_awaits_downloads(server):
    result = run_crawl(XMLSpider, SETTINGS, base=server.url)
    assert result.finish_reason == "finished"
    assert result.items == [{"node": str(n), "detail": f"detail {n}"} for n in range(ITEMS)]
    result = run_crawl(XMLIteratorSpider, SETTINGS, base=server.url)
    assert result.items == [{"node": str(n), "detail": f"detail {n}", "processed": True}
                            for n in range(ITEMS)]
    assert "spider_exceptions/count" not in result.stats


def test_an_async_parse_row_awaits_downloads(server):
    result = run_crawl(CSVSpider, SETTINGS, base=server.url)
    assert result.finish_reason == "finished"
    assert result.items == [{"row": f"row{n}", "detail": f"detail {n}"} for n in range(ITEMS)]


class FeedsAtOnceSpider(XMLSpider):
    """Several feeds at once: their nodes' downloads overlap."""

    def start_requests(self):
        for n in range(4):
            yield Request(f"{self.base}/feed.xml?{n}")


def test_async_parse_nodes_of_several_feeds_wait_at_once(server):
    _Handler.hits = {}
    _Overlap.running = _Overlap.overlap = 0
    # the handler serves the feed for any query (the path is matched exactly: use one)
    with handler_server(_QueryFeedHandler) as httpd:
        result = run_crawl(FeedsAtOnceSpider, SETTINGS, base=httpd.url)
    assert result.finish_reason == "finished"
    assert len(result.items) == 4 * ITEMS
    assert _Overlap.overlap > 1


class _QueryFeedHandler(_Handler):
    def do_GET(self):  # noqa: N802
        self.path = self.path.split("?", 1)[0]
        super().do_GET()


# --- InitSpider ------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::crawlfw.exceptions.CrawlfwDeprecationWarning")
class LoginSpider(InitSpider):
    """The initialization callback is ``async def`` and downloads a token before
    handing over to the start requests."""

    name = "init_download"

    def __init__(self, base, **kw):
        super().__init__(**kw)
        self.base = base
        self.start_urls = [f"{base}/item/{n}" for n in range(3)]

    def init_request(self):
        return Request(f"{self.base}/login", callback=self.logged_in)

    async def logged_in(self, response):
        token = await self.crawler.engine.download(Request(f"{self.base}/token"))
        self.token = token.text
        for request in self.initialized(response):
            yield request

    async def parse(self, response):
        detail = await self.crawler.engine.download(
            Request(f"{self.base}/detail/{_detail_of(response.url)}"))
        yield {"item": response.text, "token": self.token, "detail": detail.text}


@pytest.mark.filterwarnings("ignore::crawlfw.exceptions.CrawlfwDeprecationWarning")
def test_an_async_initialization_callback_awaits_a_download(server):
    result = run_crawl(LoginSpider, SETTINGS, base=server.url)
    assert result.finish_reason == "finished"
    assert _sorted(result.items) == _sorted(
        [{"item": f"item {n}", "token": "token", "detail": f"detail {n}"} for n in range(3)])
    assert _Handler.hits["/token"] == 1
