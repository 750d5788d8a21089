"""MediaPipeline: request handling, caching, hooks and results (with ``download_func``,
the Scrapy seam), and real crawls downloading through the engine."""

import http.server
import logging
import threading

import pytest

from crawlfw import Spider
from crawlfw.exceptions import ConnectionRefusedError
from crawlfw.http import Request, Response
from crawlfw.pipelines.media import MediaPipeline
from crawlfw.settings import Settings
from crawlfw.utils.failure import Failure
from tests.support.crawl import run_crawl
from tests.support.servers import StaticSiteServer


class Downloads:
    """A ``download_func``: answers from a dict of URL -> body (or exception), counting
    calls per URL."""

    def __init__(self, answers):
        self.answers = answers
        self.calls = []

    def __call__(self, request, spider):
        self.calls.append(request.url)
        answer = self.answers[request.url]
        if isinstance(answer, Exception):
            raise answer
        return Response(request.url, body=answer, request=request)


class UrlsPipeline(MediaPipeline):
    """Downloads ``item['urls']``; results are the bodies."""

    def get_media_requests(self, item, info):
        return [Request(u) for u in item["urls"]]

    def media_downloaded(self, response, request, info):
        return response.body

    def item_completed(self, results, item, info):
        item["results"] = results
        return super().item_completed(results, item, info)


#: Every ``(pipe, spider)`` :func:`make` opened, closed after each test by :func:`_close_made`.
_made = []


def make(pipecls=UrlsPipeline, answers=None):
    downloads = Downloads(answers or {})
    pipe = pipecls(download_func=downloads)
    spider = Spider("media")
    pipe.open_spider(spider)
    _made.append((pipe, spider))
    return pipe, spider, downloads


@pytest.fixture(autouse=True)
def _close_made():
    """Close the pipelines :func:`make` opened: the download thread pool (non-daemon
    threads) would otherwise stay until the pipeline is garbage-collected."""
    yield
    while _made:
        pipe, spider = _made.pop()
        pipe.close_spider(spider)


def test_results_in_request_order():
    pipe, spider, _ = make(answers={"http://a/1": b"one", "http://a/2": b"two"})
    item = pipe.process_item({"urls": ["http://a/2", "http://a/1"]}, spider)
    assert item["results"] == [(True, b"two"), (True, b"one")]


def test_same_request_downloaded_once_per_spider():
    pipe, spider, downloads = make(answers={"http://a/1": b"one"})
    first = pipe.process_item({"urls": ["http://a/1", "http://a/1"]}, spider)
    second = pipe.process_item({"urls": ["http://a/1"]}, spider)
    assert downloads.calls == ["http://a/1"]
    assert first["results"] == [(True, b"one"), (True, b"one")]
    assert second["results"] == [(True, b"one")]


def test_failed_download_is_a_failure_result_and_logged(caplog):
    error = ConnectionRefusedError("refused")
    pipe, spider, _ = make(answers={"http://a/1": b"one", "http://a/bad": error})
    with caplog.at_level(logging.ERROR):
        item = pipe.process_item({"urls": ["http://a/1", "http://a/bad"]}, spider)
    (ok1, v1), (ok2, v2) = item["results"]
    assert (ok1, v1) == (True, b"one")
    assert ok2 is False
    assert isinstance(v2, Failure) and v2.value is error
    assert v2.request.url == "http://a/bad"
    [record] = [r for r in caplog.records if "found errors processing" in r.getMessage()]
    assert record.getMessage().startswith("UrlsPipeline found errors processing")
    assert record.exc_info[1] is error


def test_no_logging_when_log_failed_results_is_false(caplog):
    class Quiet(UrlsPipeline):
        LOG_FAILED_RESULTS = False

    pipe, spider, _ = make(Quiet, {"http://a/bad": ConnectionRefusedError("refused")})
    with caplog.at_level(logging.ERROR):
        item = pipe.process_item({"urls": ["http://a/bad"]}, spider)
    assert item["results"][0][0] is False
    assert not [r for r in caplog.records if "found errors" in r.getMessage()]


def test_media_to_download_answers_without_download():
    class Stored(UrlsPipeline):
        def media_to_download(self, request, info):
            return "stored" if request.url.endswith("/old") else None

    pipe, spider, downloads = make(Stored, {"http://a/new": b"new"})
    item = pipe.process_item({"urls": ["http://a/old", "http://a/new"]}, spider)
    assert item["results"] == [(True, "stored"), (True, b"new")]
    assert downloads.calls == ["http://a/new"]


def test_hook_exceptions_become_failures():
    class Broken(UrlsPipeline):
        def media_to_download(self, request, info):
            if request.url.endswith("/check"):
                raise KeyError("check failed")

        def media_downloaded(self, response, request, info):
            raise ValueError(f"cannot store {request.url}")

    pipe, spider, downloads = make(Broken, {"http://a/x": b"x"})
    item = pipe.process_item({"urls": ["http://a/check", "http://a/x"]}, spider)
    (ok1, f1), (ok2, f2) = item["results"]
    assert not ok1 and isinstance(f1.value, KeyError)
    assert not ok2 and isinstance(f2.value, ValueError) and "http://a/x" in str(f2.value)
    assert downloads.calls == ["http://a/x"]


def test_media_failed_may_recover():
    class Recovering(UrlsPipeline):
        def media_failed(self, failure, request, info):
            return f"fallback for {failure.value}"

    pipe, spider, _ = make(Recovering, {"http://a/bad": ConnectionRefusedError("refused")})
    item = pipe.process_item({"urls": ["http://a/bad"]}, spider)
    assert item["results"] == [(True, "fallback for refused")]


def test_request_callback_and_errback_are_applied_and_removed():
    seen = []

    class WithCallbacks(UrlsPipeline):
        def get_media_requests(self, item, info):
            return [
                Request("http://a/1", callback=lambda body: body.upper()),
                Request("http://a/bad", callback=lambda body: body,
                        errback=lambda failure: seen.append(failure) or "saved"),
            ]

        def media_downloaded(self, response, request, info):
            assert request.callback is None and request.errback is None
            return response.body

    pipe, spider, _ = make(WithCallbacks, {"http://a/1": b"one",
                                           "http://a/bad": ConnectionRefusedError("x")})
    item = pipe.process_item({}, spider)
    assert item["results"] == [(True, b"ONE"), (True, "saved")]
    assert isinstance(seen[0].value, ConnectionRefusedError)


def test_single_request_and_none_from_get_media_requests():
    class One(UrlsPipeline):
        def get_media_requests(self, item, info):
            return Request(item["url"]) if item.get("url") else None

    pipe, spider, _ = make(One, {"http://a/1": b"one"})
    assert pipe.process_item({"url": "http://a/1"}, spider)["results"] == [(True, b"one")]
    assert pipe.process_item({}, spider)["results"] == []


def test_handle_httpstatus_all_is_set_on_downloaded_requests():
    seen = []

    def download(request, spider):
        seen.append(request.meta.get("handle_httpstatus_all"))
        return Response(request.url, status=404)

    pipe = UrlsPipeline(download_func=download)
    spider = Spider("media")
    pipe.open_spider(spider)
    pipe.process_item({"urls": ["http://a/1"]}, spider)
    assert seen == [True]


def test_without_crawler_or_download_func_the_error_says_so():
    pipe = UrlsPipeline()
    spider = Spider("media")
    pipe.open_spider(spider)
    item = pipe.process_item({"urls": ["http://a/1"]}, spider)
    [(ok, failure)] = item["results"]
    assert not ok
    assert "from_crawler" in str(failure.value) and "http://a/1" in str(failure.value)


@pytest.mark.parametrize(
    "pipe_name, base, settings, expected",
    [
        ("MediaPipeline", None, None, "IMAGES"),
        ("MediaPipeline", "MediaPipeline", None, "IMAGES"),
        ("MyPipe", "MediaPipeline", None, "MYPIPE_IMAGES"),
        ("MyPipe", "MediaPipeline", {"MYPIPE_IMAGES": "x"}, "MYPIPE_IMAGES"),
        ("MyPipe", "MediaPipeline", {}, "IMAGES"),
        ("MyPipe", None, {"MYPIPE_IMAGES": "x"}, "IMAGES"),
    ],
)
def test_key_for_pipe(pipe_name, base, settings, expected):
    cls = MediaPipeline if pipe_name == "MediaPipeline" else type(pipe_name, (MediaPipeline,), {})
    settings = Settings(settings) if settings is not None else None
    assert cls()._key_for_pipe("IMAGES", base_class_name=base, settings=settings) == expected


# --- real crawls ----------------------------------------------------------------------


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_bytes(b"<html>index</html>")
    for i in range(6):
        (root / f"m{i}.bin").write_bytes(f"media {i}".encode())
    srv = StaticSiteServer(root).start()
    yield srv
    srv.stop()


class MediaSpider(Spider):
    name = "media"

    def __init__(self, base, groups, media_base=None, **kw):
        super().__init__(**kw)
        self.start_urls = [f"{base}/index.html"]
        self.base = media_base or base
        self.groups = groups

    def parse(self, response):
        for group in self.groups:
            yield {"urls": [f"{self.base}/{name}" for name in group]}


class StatusPipeline(UrlsPipeline):
    def media_downloaded(self, response, request, info):
        return response.body if response.status == 200 else response.status


def test_crawl_downloads_through_the_engine(server):
    groups = [["m0.bin", "m1.bin", "m2.bin", "missing.bin"], ["m3.bin", "m0.bin"]]
    result = run_crawl(MediaSpider, {"ITEM_PIPELINES": {StatusPipeline: 10}},
                       base=server.url, groups=groups)
    assert result.finish_reason == "finished"
    results = sorted(
        ([(ok, value) for ok, value in item["results"]] for item in result.items), key=len
    )
    assert results == [
        [(True, b"media 3"), (True, b"media 0")],
        [(True, b"media 0"), (True, b"media 1"), (True, b"media 2"), (True, 404)],
    ]
    # the page + 5 distinct media (m0 downloaded once per spider, missing.bin is a 404)
    assert result.stats["downloader/response_count"] == 6


class BarrierHandler(http.server.BaseHTTPRequestHandler):
    """Answers 200 only once ``barrier.parties`` requests are waiting at the same time
    (500 if the barrier breaks: the downloads did not overlap)."""

    barrier = None

    def do_GET(self):  # noqa: N802 (http.server's name)
        try:
            self.barrier.wait(timeout=10)
            status, body = 200, self.path.encode()
        except threading.BrokenBarrierError:
            status, body = 500, b"not parallel"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # noqa: A002
        pass


def test_one_items_media_are_downloaded_in_parallel(server):
    handler = type("Handler", (BarrierHandler,), {"barrier": threading.Barrier(3)})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        result = run_crawl(MediaSpider, {"ITEM_PIPELINES": {StatusPipeline: 10}},
                           base=server.url, media_base=base, groups=[["p0", "p1", "p2"]])
    finally:
        httpd.shutdown()
        httpd.server_close()
    [item] = result.items
    assert item["results"] == [(True, b"/p0"), (True, b"/p1"), (True, b"/p2")]
