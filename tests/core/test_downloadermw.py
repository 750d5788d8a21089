"""DownloaderMiddlewareManager: order of hooks, short-circuits, output validation,
building from settings."""

import pytest

from crawlfw.core.flow.downloadermw import DownloaderMiddlewareManager, RequestParked, _InvalidOutput
from crawlfw.exceptions import IgnoreRequest
from crawlfw.http import HtmlResponse, Request, Response
from tests.downloadermiddlewares._support import close_crawler, get_crawler, open_spider


class Recorder:
    """A middleware that records each call in a shared log and returns ``results``."""

    def __init__(self, name, log, request=None, response=None, exception=None):
        self.name = name
        self.log = log
        self.results = {"request": request, "response": response, "exception": exception}

    def _result(self, hook, default):
        value = self.results[hook]
        if isinstance(value, Exception):
            raise value
        return default if value is None else value

    def process_request(self, request, spider):
        self.log.append((self.name, "request"))
        return self._result("request", None)

    def process_response(self, request, response, spider):
        self.log.append((self.name, "response"))
        return self._result("response", response)

    def process_exception(self, request, exception, spider):
        self.log.append((self.name, "exception"))
        return self._result("exception", None)


REQ = Request("http://example.com/")
RESP = Response("http://example.com/", body=b"x")
OTHER_REQ = Request("http://example.com/other")


def build(*specs):
    log = []
    mws = [Recorder(name, log, **kw) for name, kw in specs]
    return DownloaderMiddlewareManager(*mws), log


def test_process_request_runs_in_order_and_none_means_download():
    mwm, log = build(("a", {}), ("b", {}), ("c", {}))
    assert mwm.process_request(REQ, None) is None
    assert log == [("a", "request"), ("b", "request"), ("c", "request")]


@pytest.mark.parametrize("answer", [RESP, OTHER_REQ])
def test_process_request_first_answer_short_circuits(answer):
    mwm, log = build(("a", {}), ("b", {"request": answer}), ("c", {}))
    assert mwm.process_request(REQ, None) is answer
    assert log == [("a", "request"), ("b", "request")]


def test_process_request_exception_propagates():
    mwm, log = build(("a", {"request": IgnoreRequest("no")}), ("b", {}))
    with pytest.raises(IgnoreRequest):
        mwm.process_request(REQ, None)
    assert log == [("a", "request")]


def test_request_parked_propagates_untouched():
    mwm, _ = build(("a", {"request": RequestParked("waiting")}))
    with pytest.raises(RequestParked):
        mwm.process_request(REQ, None)
    assert not issubclass(RequestParked, IgnoreRequest)


def test_process_response_runs_in_reverse_order():
    mwm, log = build(("a", {}), ("b", {}), ("c", {}))
    assert mwm.process_response(REQ, RESP, None) is RESP
    assert log == [("c", "response"), ("b", "response"), ("a", "response")]


def test_process_response_replacement_is_passed_on():
    other = HtmlResponse("http://example.com/", body=b"<html></html>")
    mwm, log = build(("a", {}), ("b", {"response": other}))
    assert mwm.process_response(REQ, RESP, None) is other


def test_process_response_request_short_circuits():
    mwm, log = build(("a", {}), ("b", {"response": OTHER_REQ}), ("c", {}))
    assert mwm.process_response(REQ, RESP, None) is OTHER_REQ
    assert log == [("c", "response"), ("b", "response")]


def test_process_response_given_a_request_returns_it():
    mwm, log = build(("a", {}))
    assert mwm.process_response(REQ, OTHER_REQ, None) is OTHER_REQ
    assert log == []


def test_process_exception_reverse_order_first_answer_wins():
    mwm, log = build(("a", {"exception": RESP}), ("b", {}), ("c", {}))
    assert mwm.process_exception(REQ, ValueError("x"), None) is RESP
    assert log == [("c", "exception"), ("b", "exception"), ("a", "exception")]


def test_process_exception_unhandled_is_none():
    mwm, log = build(("a", {}), ("b", {}))
    assert mwm.process_exception(REQ, ValueError("x"), None) is None


class BadRequest:
    def process_request(self, request, spider):
        return "a string"


class BadResponse:
    def process_response(self, request, response, spider):
        return None


class BadException:
    def process_exception(self, request, exception, spider):
        return 42


@pytest.mark.parametrize(
    "mw, call, message",
    [
        (
            BadRequest(),
            lambda m: m.process_request(REQ, None),
            "Middleware BadRequest.process_request must return None, Response or Request, got str",
        ),
        (
            BadResponse(),
            lambda m: m.process_response(REQ, RESP, None),
            "Middleware BadResponse.process_response must return Response or Request, got NoneType",
        ),
        (
            BadException(),
            lambda m: m.process_exception(REQ, ValueError(), None),
            "Middleware BadException.process_exception must return None, Response or Request, got int",
        ),
    ],
)
def test_invalid_output_names_the_middleware(mw, call, message):
    with pytest.raises(_InvalidOutput) as excinfo:
        call(DownloaderMiddlewareManager(mw))
    assert str(excinfo.value) == message


def test_process_response_rejects_none_response():
    with pytest.raises(_InvalidOutput, match="Received None"):
        DownloaderMiddlewareManager().process_response(REQ, None, None)


def test_from_crawler_uses_base_order_and_user_overrides():
    crawler = get_crawler(
        {
            "DOWNLOADER_MIDDLEWARES": {
                "crawlfw.downloadermiddlewares.useragent.UserAgentMiddleware": None,
                "crawlfw.downloadermiddlewares.decompression.DecompressionMiddleware": 1,
            }
        }
    )
    try:
        mwm = DownloaderMiddlewareManager.from_crawler(crawler)
        names = [type(mw).__name__ for mw in mwm.middlewares]
        assert names[0] == "DecompressionMiddleware"
        assert "UserAgentMiddleware" not in names
        # disabled by default settings (NotConfigured)
        for off in ("RobotsTxtMiddleware", "AjaxCrawlMiddleware", "HttpCacheMiddleware"):
            assert off not in names
        assert names.index("RetryMiddleware") < names.index("RedirectMiddleware")
        assert names.index("HttpCompressionMiddleware") < names.index("RedirectMiddleware")
        assert names[-1] == "DownloaderStats"
        # process_response runs from the downloader side
        assert mwm.methods["process_response"][0].__self__ is mwm.middlewares[-1]
    finally:
        close_crawler(crawler)


def test_default_chain_end_to_end():
    """The default middlewares turn a plain request into a ready-to-send one, and a
    302 response into a GET redirect."""
    crawler = get_crawler({"USER_AGENT": "ua-test"})
    spider = open_spider(crawler)
    try:
        mwm = DownloaderMiddlewareManager.from_crawler(crawler)
        request = Request("http://example.com/a", method="POST", body=b"x=1")
        assert mwm.process_request(request, spider) is None
        assert request.headers[b"User-Agent"] == b"ua-test"
        assert request.headers[b"Accept-Encoding"].startswith(b"gzip,deflate")
        assert request.meta["download_timeout"] == 180
        response = Response(
            "http://example.com/a", status=302, headers={"Location": "/b"}, request=request
        )
        redirected = mwm.process_response(request, response, spider)
        assert isinstance(redirected, Request)
        assert (redirected.url, redirected.method, redirected.body) == (
            "http://example.com/b",
            "GET",
            b"",
        )
        assert crawler.stats.get_value("downloader/response_status_count/302") == 1
    finally:
        close_crawler(crawler, spider)


def test_default_chains_crawl_a_real_site(site_server):
    """Both managers with the default middlewares, driven the way the engine and the
    spider runner drive them, over the real quotes.toscrape.com copy: redirects
    (slashless author URLs), 404 filtering, offsite filtering, depth limit, referer,
    stats. Requests are sent with http.client (the downloader is another part)."""
    from crawlfw.core.flow.spidermw import SpiderMiddlewareManager
    from crawlfw.spiders import Spider
    from tests.downloadermiddlewares._support import fetch

    server = site_server("quotes.toscrape.com")
    items = []

    class QuotesSpider(Spider):
        name = "quotes"
        allowed_domains = ["127.0.0.1"]

        def parse(self, response):
            for quote in response.css("div.quote"):
                yield {"text": quote.css("span.text::text").get()}
            next_page = response.css("li.next a::attr(href)").get()
            if next_page:
                yield Request(response.urljoin(next_page))
            author = response.css("div.quote a[href^='/author/']::attr(href)").get()
            yield Request(response.urljoin(author), callback=self.parse_author)
            yield Request(response.urljoin("/login"))  # absent: 404
            yield Request("http://elsewhere.invalid/x")  # offsite

        def parse_author(self, response):
            yield {"author": response.css("h3.author-title::text").get().strip()}

    crawler = get_crawler({"DEPTH_LIMIT": 1, "DEPTH_STATS_VERBOSE": True}, QuotesSpider)
    spider = open_spider(crawler, "quotes")
    dmw = DownloaderMiddlewareManager.from_crawler(crawler)
    smw = SpiderMiddlewareManager.from_crawler(crawler)

    def scrape_func(result, request, spider):
        if isinstance(result, Exception):
            if request.errback is None:
                raise result
            return request.errback(result)
        return (request.callback or spider.parse)(result)

    queue = [Request(server.url + "/", dont_filter=True)]
    seen = set()
    referers = {}
    try:
        while queue:
            request = queue.pop(0)
            if not request.dont_filter and request.url in seen:
                continue
            seen.add(request.url)
            result = dmw.process_request(request, spider)
            if result is None:
                result = dmw.process_response(request, fetch(request), spider)
            if isinstance(result, Request):
                queue.append(result)
                continue
            result.request = request
            referers[request.url] = request.headers.get(b"Referer")
            for obj in smw.scrape_response(scrape_func, result, request, spider):
                (queue if isinstance(obj, Request) else items).append(obj)
    finally:
        close_crawler(crawler, spider)

    texts = [i for i in items if "text" in i]
    authors = [i["author"] for i in items if "author" in i]
    assert len(texts) == 20  # pages 1 and 2; page 3 is beyond DEPTH_LIMIT
    assert authors == ["Albert Einstein"]  # page 2's author link is at depth 2
    get = crawler.stats.get_value
    assert get("downloader/response_status_count/301") == 1  # /author/X -> /author/X/
    assert get("httperror/response_ignored_status_count/404") == 1  # /login, once
    # page 2's requests are at depth 2: DepthMiddleware (900, nearer the spider) drops
    # them before OffsiteMiddleware (500) sees them
    assert get("offsite/filtered") == 1 and get("offsite/domains") == 1
    assert get("request_depth_count/2") is None
    assert get("request_depth_max") == 1
    assert referers[server.url + "/page/2/"] == (server.url + "/").encode()
    assert get("downloader/request_count") == get("downloader/response_count")
