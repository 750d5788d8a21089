"""``await crawler.engine.download(request)`` in ``async def`` spider callbacks (Scrapy 2's
most common "extra request" pattern, issue 29): real crawls of a local server.

The callback waits without holding the spider runner's thread (other responses are
scraped meanwhile), the request passes the downloader middlewares but not the scheduler
(its dupefilter) nor the spider middlewares, a failed download raises in the callback,
and the crawl stays open until every waiting callback has ended. A plain ``def``
callback gets one clear error. ``crawler.engine.crawl(request)`` (Scrapy 2.10+, no
spider) schedules from a callback and from a ``spider_idle`` handler."""

import http.server
import random
import re
import socket
import threading
import time
from contextlib import contextmanager

import pytest

from crawlfw import Request, Spider, signals
from crawlfw.exceptions import DontCloseSpider, DownloadCancelled
from crawlfw.utils.defer import maybe_deferred_to_future
from tests.support.crawl import run_crawl
from tests.support.servers import handler_server

#: Seeded delays (seconds) of the detail pages: the downloads end in another order than
#: they started.
PAGES = 60
DELAYS = [random.Random(29).uniform(0.0, 0.05) for _ in range(PAGES)]


class _Handler(http.server.BaseHTTPRequestHandler):
    """``/page/N``: links to ``/detail/N``; ``/detail/N``: "detail N" after DELAYS[N] s;
    ``/slow``: "slow" after 0.5 s; ``/hang``: held until the server stops; anything else
    404. Every path served is counted in ``hits``."""

    release = threading.Event()
    hits: dict = {}
    lock = threading.Lock()

    def do_GET(self):  # noqa: N802  # the http.server name
        with self.lock:
            self.hits[self.path] = self.hits.get(self.path, 0) + 1
        match = re.fullmatch(r"/(page|detail)/(\d+)", self.path)
        if match and match.group(1) == "page":
            body = f'<a href="/detail/{match.group(2)}">d</a>'.encode()
        elif match:
            time.sleep(DELAYS[int(match.group(2)) % PAGES])
            body = f"detail {match.group(2)}".encode()
        elif self.path == "/slow":
            time.sleep(0.5)
            body = b"slow"
        elif self.path == "/hang":
            self.release.wait(30)
            return
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@contextmanager
def serving():
    _Handler.hits = {}
    _Handler.release = threading.Event()
    with handler_server(_Handler) as httpd:
        yield httpd


@pytest.fixture
def server():
    with serving() as httpd:
        yield httpd


def closed_port_url():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}/x"


SETTINGS = {"ROBOTSTXT_OBEY": False, "LOG_LEVEL": "INFO"}


class DetailSpider(Spider):
    """Scrapy 2's pattern: each page's callback downloads its detail page and yields one
    item from both; notes the callbacks running at once (``overlap``)."""

    name = "detail"
    pages = 1
    running = 0
    overlap = 0

    def start_requests(self):
        for i in range(self.pages):
            yield Request(f"{self.base}/page/{i}")

    async def parse(self, response):
        type(self).running += 1
        type(self).overlap = max(type(self).overlap, type(self).running)
        href = response.css("a::attr(href)").get()
        detail = await maybe_deferred_to_future(
            self.crawler.engine.download(Request(response.urljoin(href))))
        type(self).running -= 1
        yield {"page": response.url, "detail": detail.text, "status": detail.status}


def test_an_async_generator_callback_awaits_a_download_and_yields_from_both(server):
    result = run_crawl(DetailSpider, SETTINGS, base=server.url)
    assert result.finish_reason == "finished"
    assert result.items == [{"page": f"{server.url}/page/0", "detail": "detail 0",
                             "status": 200}]
    # counted like any response: the page and the download
    assert result.stats["response_received_count"] == 2
    assert _Handler.hits == {"/page/0": 1, "/detail/0": 1}


class ManyDetailSpider(DetailSpider):
    pages = PAGES


def test_many_callbacks_wait_at_once_and_every_item_arrives(server):
    ManyDetailSpider.running = ManyDetailSpider.overlap = 0
    result = run_crawl(ManyDetailSpider, {**SETTINGS, "CONCURRENT_REQUESTS": 16},
                       base=server.url)
    assert result.finish_reason == "finished"
    assert sorted((i["page"], i["detail"]) for i in result.items) == sorted(
        (f"{server.url}/page/{n}", f"detail {n}") for n in range(PAGES))
    # the spider runner went on with other responses while callbacks waited
    assert ManyDetailSpider.overlap > 1
    assert result.stats["response_received_count"] == 2 * PAGES


class CoroutineSpider(Spider):
    """A coroutine callback (no yield), Scrapy 2.13+'s ``download_async``, and a
    download of the very page (not filtered: no scheduler, no dupefilter)."""

    name = "coroutine"

    def start_requests(self):
        yield Request(f"{self.base}/page/3")

    async def parse(self, response):
        again = await self.crawler.engine.download_async(Request(response.url))
        detail = await self.crawler.engine.download(Request(f"{self.base}/detail/3"))
        return {"again": again.url, "detail": detail.text}


def test_a_coroutine_callback_and_download_async(server):
    result = run_crawl(CoroutineSpider, SETTINGS, base=server.url)
    assert result.finish_reason == "finished"
    assert result.items == [{"again": f"{server.url}/page/3", "detail": "detail 3"}]
    assert _Handler.hits["/page/3"] == 2


class GatherSpider(Spider):
    name = "gather"

    def start_requests(self):
        yield Request(f"{self.base}/page/0")

    async def parse(self, response):
        import asyncio

        pages = await asyncio.gather(*(
            maybe_deferred_to_future(self.crawler.engine.download(
                Request(f"{self.base}/detail/{n}"))) for n in range(5)))
        yield {"details": [p.text for p in pages]}


def test_gathered_downloads(server):
    result = run_crawl(GatherSpider, SETTINGS, base=server.url)
    assert result.finish_reason == "finished"
    assert result.items == [{"details": [f"detail {n}" for n in range(5)]}]


class FailingSpider(Spider):
    name = "failing"

    def start_requests(self):
        yield Request(f"{self.base}/page/0")

    async def parse(self, response):
        try:
            await maybe_deferred_to_future(self.crawler.engine.download(
                Request(self.dead)))
        except Exception as e:
            yield {"error": type(e).__name__}
        missing = await self.crawler.engine.download(Request(f"{self.base}/missing"))
        yield {"status": missing.status}  # any HTTP status is returned, as in Scrapy


def test_a_failed_download_raises_in_the_callback(server):
    result = run_crawl(FailingSpider, {**SETTINGS, "RETRY_ENABLED": False},
                       base=server.url, dead=closed_port_url())
    assert result.finish_reason == "finished"
    assert result.items == [{"error": "ConnectionRefusedError"}, {"status": 404}]


class UncaughtSpider(FailingSpider):
    async def parse(self, response):
        yield {"before": True}
        await self.crawler.engine.download(Request(self.dead))
        yield {"never": True}


def test_an_uncaught_download_error_is_a_spider_error(server, caplog):
    result = run_crawl(UncaughtSpider, {**SETTINGS, "RETRY_ENABLED": False},
                       base=server.url, dead=closed_port_url())
    assert result.finish_reason == "finished"
    assert result.items == [{"before": True}]
    assert result.stats["spider_exceptions/ConnectionRefusedError"] == 1
    assert "Spider error processing <GET " in caplog.text


class SlowDetailSpider(Spider):
    """The download outlasts everything else: the crawl must not close as idle."""

    name = "slow"

    def start_requests(self):
        yield Request(f"{self.base}/page/0")

    async def parse(self, response):
        slow = await self.crawler.engine.download(Request(f"{self.base}/slow"))
        yield {"slow": slow.text}


def test_the_crawl_stays_open_while_a_callback_waits(server):
    result = run_crawl(SlowDetailSpider, SETTINGS, base=server.url)
    assert result.finish_reason == "finished"
    assert result.items == [{"slow": "slow"}]


class ErrbackSpider(Spider):
    """An ``async def`` errback may wait for a download too."""

    name = "errback"

    def start_requests(self):
        yield Request(self.dead, errback=self.failed)

    async def failed(self, failure):
        fallback = await self.crawler.engine.download(Request(f"{self.base}/detail/7"))
        return {"failed": type(failure.value).__name__, "fallback": fallback.text}


def test_an_async_errback_awaits_a_download(server):
    result = run_crawl(ErrbackSpider, {**SETTINGS, "RETRY_ENABLED": False},
                       base=server.url, dead=closed_port_url())
    assert result.finish_reason == "finished"
    assert result.items == [{"failed": "ConnectionRefusedError", "fallback": "detail 7"}]


class PlainSpider(Spider):
    name = "plain"

    def start_requests(self):
        yield Request(f"{self.base}/page/0")

    def parse(self, response):
        try:
            self.crawler.engine.download(Request(f"{self.base}/detail/0"))
        except RuntimeError as e:
            yield {"error": str(e)}


def test_a_plain_callback_gets_one_clear_error(server):
    result = run_crawl(PlainSpider, SETTINGS, base=server.url)
    assert result.finish_reason == "finished"
    [item] = result.items
    error = item["error"]
    assert f"engine.download({server.url}/detail/0)" in error
    assert "SpiderRunnerActor" in error
    assert "async def" in error and "await" in error and "download_async" in error
    assert "/detail/0" not in _Handler.hits  # nothing was sent


class CrawlingSpider(Spider):
    """``self.crawler.engine.crawl(request)`` without the spider (Scrapy 2.10+), from a
    callback and from a ``spider_idle`` handler (Scrapy's docs' pattern)."""

    name = "crawling"
    idle_done = False

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.idle, signals.spider_idle)
        return spider

    def start_requests(self):
        yield Request(f"{self.base}/page/0")

    def parse(self, response):
        self.crawler.engine.crawl(Request(f"{self.base}/detail/1", callback=self.detail))
        yield {"page": response.url}

    def detail(self, response):
        yield {"detail": response.text}

    def idle(self, spider):
        if not self.idle_done:
            self.idle_done = True
            self.crawler.engine.crawl(Request(f"{self.base}/detail/2", callback=self.detail))
            raise DontCloseSpider


def test_engine_crawl_from_a_callback_and_a_spider_idle_handler(server):
    result = run_crawl(CrawlingSpider, SETTINGS, base=server.url)
    assert result.finish_reason == "finished"
    assert sorted(map(str, result.items)) == sorted(map(str, [
        {"page": f"{server.url}/page/0"}, {"detail": "detail 1"}, {"detail": "detail 2"}]))


class HangingSpider(Spider):
    name = "hanging"

    def start_requests(self):
        yield Request(f"{self.base}/page/0")

    async def parse(self, response):
        try:
            await self.crawler.engine.download(Request(f"{self.base}/hang"))
        except DownloadCancelled as e:
            yield {"cancelled": str(e)}


@pytest.mark.slow
def test_a_closing_spider_cancels_the_wait(server):
    result = run_crawl(HangingSpider, {**SETTINGS, "CLOSESPIDER_TIMEOUT": 1,
                                       "DOWNLOAD_TIMEOUT": 60}, base=server.url)
    assert result.finish_reason == "closespider_timeout"
    [item] = result.items
    assert "cancelled" in item["cancelled"]
