"""DefaultHeaders, DownloadTimeout, HttpAuth, UserAgent, Chunked and DownloaderStats."""

import pytest

from crawlfw.downloadermiddlewares.chunked import ChunkedTransferMiddleware
from crawlfw.downloadermiddlewares.defaultheaders import DefaultHeadersMiddleware
from crawlfw.downloadermiddlewares.downloadtimeout import DownloadTimeoutMiddleware
from crawlfw.downloadermiddlewares.httpauth import HttpAuthMiddleware
from crawlfw.downloadermiddlewares.stats import DownloaderStats
from crawlfw.downloadermiddlewares.useragent import UserAgentMiddleware
from crawlfw.exceptions import DNSLookupError, NotConfigured
from crawlfw.http import Request, Response
from crawlfw.spiders import Spider
from crawlfw.utils.request import request_httprepr
from crawlfw.utils.response import response_httprepr
from tests.downloadermiddlewares._support import close_crawler, get_crawler, open_spider


@pytest.fixture
def crawl():
    """Factory: ``crawl(settings, spidercls, **spider_kwargs) -> (crawler, spider)``."""
    made = []

    def start(settings=None, spidercls=None, **kwargs):
        crawler = get_crawler(settings, spidercls)
        made.append(crawler)
        return crawler

    yield start
    for crawler in made:
        close_crawler(crawler, crawler.spider)


# --- DefaultHeadersMiddleware ---------------------------------------------------------


def test_default_headers_are_set_without_overriding(crawl):
    crawler = crawl(
        {"DEFAULT_REQUEST_HEADERS": {"Accept-Language": "fr", "X-Test": "1", "X-None": None}}
    )
    mw = DefaultHeadersMiddleware.from_crawler(crawler)
    request = Request("http://example.com", headers={"X-Test": "mine"})
    assert mw.process_request(request, None) is None
    assert request.headers[b"Accept-Language"] == b"fr"
    assert request.headers[b"X-Test"] == b"mine"
    assert b"X-None" not in request.headers
    # the Scrapy 1.2 defaults
    request = Request("http://example.com")
    DefaultHeadersMiddleware.from_crawler(crawl()).process_request(request, None)
    assert request.headers[b"Accept"].startswith(b"text/html")


# --- DownloadTimeoutMiddleware --------------------------------------------------------


class TimeoutSpider(Spider):
    name = "timeout"
    download_timeout = 7.5


@pytest.mark.parametrize(
    "settings, spidercls, meta, expected",
    [
        ({}, None, {}, 180),
        ({"DOWNLOAD_TIMEOUT": 20}, None, {}, 20),
        ({"DOWNLOAD_TIMEOUT": 20}, TimeoutSpider, {}, 7.5),
        ({}, None, {"download_timeout": 3}, 3),
        ({"DOWNLOAD_TIMEOUT": 0}, None, {}, None),
    ],
)
def test_download_timeout(crawl, settings, spidercls, meta, expected):
    crawler = crawl(settings, spidercls)
    mw = DownloadTimeoutMiddleware.from_crawler(crawler)
    spider = open_spider(crawler, spidercls.name if spidercls else "test")
    request = Request("http://example.com", meta=meta)
    mw.process_request(request, spider)
    assert request.meta.get("download_timeout") == expected


# --- HttpAuthMiddleware ---------------------------------------------------------------


class AuthSpider(Spider):
    name = "auth"
    http_user = "foo"
    http_pass = "bar"


class DomainAuthSpider(AuthSpider):
    http_auth_domain = "example.com"


@pytest.mark.parametrize(
    "spidercls, url, headers, expected",
    [
        (AuthSpider, "http://example.com/", {}, b"Basic Zm9vOmJhcg=="),
        (AuthSpider, "http://other.org/", {}, b"Basic Zm9vOmJhcg=="),  # the first host (issue 22)
        (AuthSpider, "http://example.com/", {"Authorization": "Digest x"}, b"Digest x"),
        (DomainAuthSpider, "http://sub.example.com/", {}, b"Basic Zm9vOmJhcg=="),
        (DomainAuthSpider, "http://other.org/", {}, None),
        (None, "http://example.com/", {}, None),
    ],
)
def test_http_auth(crawl, spidercls, url, headers, expected):
    crawler = crawl(None, spidercls)
    mw = HttpAuthMiddleware.from_crawler(crawler)
    spider = open_spider(crawler, spidercls.name if spidercls else "test")
    request = Request(url, headers=headers)
    mw.process_request(request, spider)
    assert request.headers.get(b"Authorization") == expected


# --- UserAgentMiddleware --------------------------------------------------------------


class UASpider(Spider):
    name = "ua"
    user_agent = "spider-ua"


@pytest.mark.parametrize(
    "settings, spidercls, headers, expected",
    [
        ({"USER_AGENT": "settings-ua"}, None, {}, b"settings-ua"),
        ({"USER_AGENT": "settings-ua"}, UASpider, {}, b"spider-ua"),
        ({}, UASpider, {"User-Agent": "mine"}, b"mine"),
        ({"USER_AGENT": ""}, None, {}, None),
    ],
)
def test_user_agent(crawl, settings, spidercls, headers, expected):
    crawler = crawl(settings, spidercls)
    mw = UserAgentMiddleware.from_crawler(crawler)
    spider = open_spider(crawler, spidercls.name if spidercls else "test")
    request = Request("http://example.com", headers=headers)
    mw.process_request(request, spider)
    assert request.headers.get(b"User-Agent") == expected


# --- ChunkedTransferMiddleware --------------------------------------------------------


def test_chunked_is_a_no_op():
    response = Response(
        "http://example.com", headers={"Transfer-Encoding": "chunked"}, body=b"3\r\nabc\r\n0\r\n"
    )
    assert ChunkedTransferMiddleware().process_response(None, response, None) is response


# --- DownloaderStats ------------------------------------------------------------------


def test_downloader_stats_keys(crawl):
    crawler = crawl()
    spider = open_spider(crawler)
    mw = DownloaderStats.from_crawler(crawler)
    request = Request("http://example.com/", method="POST", body=b"abc")
    response = Response("http://example.com/", status=404, body=b"not found", request=request)
    mw.process_request(request, spider)
    assert mw.process_response(request, response, spider) is response
    mw.process_exception(request, DNSLookupError("no such host"), spider)
    get = crawler.stats.get_value
    assert get("downloader/request_count") == 1
    assert get("downloader/request_method_count/POST") == 1
    assert get("downloader/request_bytes") == len(request_httprepr(request))
    assert get("downloader/response_count") == 1
    assert get("downloader/response_status_count/404") == 1
    assert get("downloader/response_bytes") == len(response_httprepr(response))
    assert get("downloader/exception_count") == 1
    assert get("downloader/exception_type_count/crawlfw.exceptions.DNSLookupError") == 1


def test_downloader_stats_can_be_disabled(crawl):
    with pytest.raises(NotConfigured):
        DownloaderStats.from_crawler(crawl({"DOWNLOADER_STATS": False}))


# --- built after spider_opened fired (the actors start concurrently) -------------------


class AllAttrsSpider(AuthSpider):
    name = "all"
    user_agent = "spider-ua"
    download_timeout = 9


def test_spider_attributes_used_when_built_after_spider_opened(crawl):
    crawler = crawl(None, AllAttrsSpider)
    spider = open_spider(crawler, "all")  # the signal fires before the middlewares exist
    request = Request("http://example.com/")
    for cls in (UserAgentMiddleware, DownloadTimeoutMiddleware, HttpAuthMiddleware):
        cls.from_crawler(crawler).process_request(request, spider)
    assert request.headers[b"User-Agent"] == b"spider-ua"
    assert request.meta["download_timeout"] == 9
    assert request.headers[b"Authorization"] == b"Basic Zm9vOmJhcg=="


def _length_requests():
    yield Request("http://example.com/")
    yield Request("http://example.com/", method="POST", body=b"abc")
    yield Request("https://User:pw@Example.COM:8443/a b/caf\u00e9;p?q=\u00e9&x=1#frag")
    yield Request("http://example.com", headers={"X-Many": ["1", "22", "333"], "Accept": "a"})
    yield Request("http://example.com/p?", headers={"X-Empty": [], "X-Zero": ""})
    yield Request("http://[::1]:8080/x", method="put", body="\u00e9t\u00e9")
    yield Request("http://\u00e9xample.com/", headers={"K": "v"}, encoding="latin-1")
    yield Request("data:text/plain,hello")
    yield Request("file:///tmp/x")
    r = Request("http://example.com/")
    r.headers[b"X-Late"] = b"1"
    dict.__setitem__(r.headers, b"X-Raw", b"raw bytes, not a list")
    yield r


def _length_responses():
    for status in (200, 404, 999, 6666, 100):
        yield Response("http://example.com/", status=status)
    yield Response("http://example.com/", body=b"x" * 10000,
                   headers={"Content-Type": "text/html", "Set-Cookie": ["a=1", "b=2"]})
    yield Response("http://example.com/", headers={"X-Empty": []}, body=b"b")
    r = Response("http://example.com/", headers={"A": "1"})
    dict.__setitem__(r.headers, b"X-Raw", b"raw bytes, not a list")
    dict.__setitem__(r.headers, b"X-Tuple", (b"t1", b"t2"))
    dict.__setitem__(r.headers, b"X-Odd", 12)  # neither bytes nor a list: not written
    yield r


@pytest.mark.parametrize("request_", list(_length_requests()), ids=str)
def test_downloader_stats_request_length_is_the_httprepr_length(request_):
    from crawlfw.downloadermiddlewares.stats import _request_httprepr_length

    assert _request_httprepr_length(request_) == len(request_httprepr(request_))


@pytest.mark.parametrize("response", list(_length_responses()), ids=repr)
def test_downloader_stats_response_length_is_the_httprepr_length(response):
    from crawlfw.downloadermiddlewares.stats import _response_httprepr_length

    for _ in range(2):  # the status line's length is cached on the first call
        assert _response_httprepr_length(response) == len(response_httprepr(response))
