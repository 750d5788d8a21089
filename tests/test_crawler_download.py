"""``crawler.engine.download()``: a blocking download through a running crawl, used by the
media pipelines from the Pipeline actor's thread. Real crawls of a local server."""

import socket
import threading

import pytest

from crawlfw import Spider
from crawlfw.exceptions import ConnectionRefusedError, DownloadCancelled
from tests.support.crawl import run_crawl
from tests.support.servers import StaticSiteServer


@pytest.fixture
def server(tmp_path):
    (tmp_path / "index.html").write_bytes(b"<html><body>index</body></html>")
    (tmp_path / "a.txt").write_bytes(b"file a")
    (tmp_path / "b.bin").write_bytes(bytes(range(256)) * 10)
    srv = StaticSiteServer(tmp_path).start()
    yield srv
    srv.stop()


@pytest.fixture
def silent_server():
    """A TCP server that accepts connections and never answers; yields its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    conns = []
    stop = threading.Event()

    def accept():
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                conns.append(sock.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    stop.set()
    thread.join(5)
    for conn in conns:
        conn.close()
    sock.close()


def closed_port_url():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}/x"


class ItemsSpider(Spider):
    """Scrapes one page and yields one item per URL in ``download_urls``."""

    name = "dl"

    def __init__(self, start, download_urls, **kw):
        super().__init__(**kw)
        self.start_urls = [start]
        self.download_urls = download_urls

    def parse(self, response):
        for url in self.download_urls:
            yield {"url": url}


class DownloadPipeline:
    """Downloads each item's ``url`` with ``crawler.engine.download`` and records the
    outcome in the item."""

    timeout_s = 30.0
    close_first = False

    def __init__(self, crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def process_item(self, item, spider):
        from crawlfw.http import Request

        if self.close_first:
            self.crawler.engine.close_spider(spider, "test_close")
        item["thread"] = threading.current_thread().name
        try:
            request = Request(item["url"], cb_kwargs={"unused": 1},
                              callback=lambda r, unused: pytest.fail("own callback called"))
            response = self.crawler.engine.download(request, spider, timeout_s=self.timeout_s)
        except Exception as e:
            item["error"] = e
        else:
            item["status"] = response.status
            item["body"] = response.body
            item["response_url"] = response.url
        return item


def crawl(server_url, urls, pipeline=DownloadPipeline, **settings):
    return run_crawl(
        ItemsSpider,
        {"ITEM_PIPELINES": {pipeline: 100}, "ROBOTSTXT_OBEY": False, **settings},
        start=f"{server_url}/index.html",
        download_urls=urls,
    )


def test_download_returns_the_response_on_the_pipeline_thread(server):
    result = crawl(server.url, [f"{server.url}/a.txt", f"{server.url}/b.bin"])
    assert result.finish_reason == "finished"
    by_url = {item["url"]: item for item in result.items}
    assert by_url[f"{server.url}/a.txt"]["body"] == b"file a"
    assert by_url[f"{server.url}/b.bin"]["body"] == bytes(range(256)) * 10
    assert all(item["status"] == 200 for item in result.items)
    assert all(item["thread"].startswith("PipelineActor-") for item in result.items)
    # counted like any request: the start page and the two downloads
    assert result.stats["response_received_count"] == 3


def test_download_bypasses_the_dupefilter(server):
    # index.html was crawled already; the download still happens
    result = crawl(server.url, [f"{server.url}/index.html"])
    [item] = result.items
    assert item["status"] == 200
    assert b"index" in item["body"]


def test_http_error_status_is_returned_not_raised(server):
    result = crawl(server.url, [f"{server.url}/missing.txt"])
    [item] = result.items
    assert "error" not in item
    assert item["status"] == 404


def test_redirects_are_followed(server):
    # a slashless directory URL answers 301 -> /sub/
    (server.root / "sub").mkdir()
    (server.root / "sub" / "index.html").write_bytes(b"sub index")
    result = crawl(server.url, [f"{server.url}/sub"])
    [item] = result.items
    assert item["status"] == 200
    assert item["body"] == b"sub index"
    assert item["response_url"] == f"{server.url}/sub/"


def test_download_error_is_raised(server):
    result = crawl(server.url, [closed_port_url()], RETRY_ENABLED=False)
    [item] = result.items
    assert isinstance(item["error"], ConnectionRefusedError)
    assert result.finish_reason == "finished"


class ShortWaitPipeline(DownloadPipeline):
    timeout_s = 0.5


@pytest.mark.slow
def test_timeout_names_the_url(server, silent_server):
    url = f"{silent_server}/never"
    result = crawl(server.url, [url], ShortWaitPipeline, DOWNLOAD_TIMEOUT=5, RETRY_ENABLED=False)
    [item] = result.items
    assert isinstance(item["error"], TimeoutError)
    assert url in str(item["error"])


class ClosingPipeline(DownloadPipeline):
    close_first = True


def test_spider_closing_cancels_the_wait(server, silent_server):
    result = crawl(server.url, [f"{silent_server}/never"], ClosingPipeline, DOWNLOAD_TIMEOUT=60)
    assert result.finish_reason == "test_close"
    [item] = result.items
    assert isinstance(item["error"], DownloadCancelled)


class CallbackDownloadSpider(ItemsSpider):
    def parse(self, response):
        from crawlfw.http import Request

        try:
            self.crawler.engine.download(Request(self.download_urls[0]), self, timeout_s=5)
        except RuntimeError as e:
            yield {"error": str(e)}


def test_refused_on_a_thread_that_carries_downloads(server):
    result = run_crawl(CallbackDownloadSpider, {"ROBOTSTXT_OBEY": False},
                       start=f"{server.url}/index.html", download_urls=[f"{server.url}/a.txt"])
    [item] = result.items
    assert "SpiderRunnerActor" in item["error"]
    assert "a.txt" in item["error"]


class ThreadDownloadPipeline(DownloadPipeline):
    """Calls ``crawler.engine.download`` from a thread of its own (no actor's)."""

    def process_item(self, item, spider):
        done = {}
        thread = threading.Thread(
            target=lambda: done.update(item=DownloadPipeline.process_item(self, item, spider)),
            name="user-thread")
        thread.start()
        thread.join(30)
        return done["item"]


def test_download_from_a_thread_outside_the_actors_blocks_and_returns(server):
    result = crawl(server.url, [f"{server.url}/a.txt"], ThreadDownloadPipeline)
    [item] = result.items
    assert item["thread"] == "user-thread"
    assert item["body"] == b"file a" and item["status"] == 200


class DownloadingMiddleware:
    """A downloader middleware (on the engine's thread) calling engine.download."""

    errors: list = []

    def __init__(self, crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def process_request(self, request, spider):
        from crawlfw.http import Request

        if request.url.endswith("index.html"):
            try:
                self.crawler.engine.download(Request(request.url + "?again"), spider)
            except RuntimeError as e:
                self.errors.append(str(e))


def test_refused_on_the_engines_thread(server):
    DownloadingMiddleware.errors = []
    result = run_crawl(ItemsSpider, {
        "ROBOTSTXT_OBEY": False,
        "DOWNLOADER_MIDDLEWARES": {f"{__name__}.DownloadingMiddleware": 1}},
        start=f"{server.url}/index.html", download_urls=[])
    assert result.finish_reason == "finished"
    [error] = DownloadingMiddleware.errors
    assert "EngineActor" in error and "index.html?again" in error


class HangingPipeline(DownloadPipeline):
    timeout_s = 60.0


@pytest.mark.slow
def test_a_download_in_flight_at_close_is_cancelled_and_not_kept_in_the_jobdir(
        server, silent_server, tmp_path):
    """The engine answers DownloadCancelled at close for a transfer in flight, and does
    not give it back to the frontier (it never came from there)."""
    import sqlite3

    job = tmp_path / "job"
    result = crawl(server.url, [f"{silent_server}/never-kept"], HangingPipeline,
                   DOWNLOAD_TIMEOUT=60, CLOSESPIDER_TIMEOUT=1, JOBDIR=str(job))
    assert result.finish_reason == "closespider_timeout"
    [item] = result.items
    assert isinstance(item["error"], DownloadCancelled)
    with sqlite3.connect(job / "frontier.sqlite") as db:
        [(kept,)] = db.execute("SELECT count(*) FROM requests WHERE instr(data, ?) > 0",
                               (b"never-kept",)).fetchall()
    assert kept == 0


class DownloadAsyncPipeline(DownloadPipeline):
    """Scrapy 2.14's ``await crawler.engine.download_async(request)`` in an async item
    pipeline (the Pipeline actor's thread: the call blocks there, as ``download``)."""

    async def process_item(self, item, spider):
        from crawlfw.http import Request

        response = await self.crawler.engine.download_async(Request(item["url"]))
        item["status"], item["body"] = response.status, response.body
        return item


def test_download_async_in_an_async_pipeline(server):
    result = crawl(server.url, [f"{server.url}/a.txt"], DownloadAsyncPipeline)
    [item] = result.items
    assert item["status"] == 200 and item["body"] == b"file a"
