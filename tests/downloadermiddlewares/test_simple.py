"""DefaultHeaders, DownloadTimeout, HttpAuth, UserAgent, Chunked and DownloaderStats."""

import random
import re

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
from crawlfw.statscollectors import MemoryStatsCollector
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


_TARGET_URLS = [
    "http://example.com", "http://example.com/", "https://example.com:8443/a/b?c=d#e",
    "http://Example.COM/P", "http://example.com?q", "http://example.com/?", "http://example.com?",
    "http://example.com/a;p?q", "http://example.com/a?q;x", "http://example.com/a#f;g",
    "http://u:p@example.com/", "http://[::1]:8080/x", "http://example.com:/x", "http://example.com:x/",
    "http:///path", "http://", "https://", "http://example.com/a b", "http://example.com/\tx",
    " http://example.com/", "http://example.com/ ", "HTTP://example.com/", "ftp://example.com/",
    "http://ex\u00e9mple.com/", "http://example.com/caf\u00e9", "http://example.com/a?b?c",
    "http://example.com/%7E?x=%20", "http://example.com#", "http://example.com/a#", "http:example.com",
    "http://exa\\mple.com/", "http://example.com/\x7f", "http://example.com//a//", "http://a.b.c:1/?#",
]


def _random_urls(seed, count=300):
    rng = random.Random(seed)
    odd = "aZ09/?#;:@[]%&=.-_~ \t\x00\x7f\u00e9\\"
    plain = "aZ09/?#:%&=.-_~"  # what the links of a crawl are made of, mostly
    for _ in range(count):
        scheme = rng.choice(["http://", "https://", "HTTP://", "http:", "ftp://", ""])
        alphabet = rng.choice([odd, plain, plain])
        yield scheme + "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 16)))


@pytest.mark.parametrize("url", _TARGET_URLS + list(_random_urls(1)))
def test_downloader_stats_target_shortcut_matches_urlparse(url):
    # the shortcut reads plain http(s) URLs without urlparse (#20): where it answers,
    # it answers what urlparse + urlunparse give request_httprepr
    from urllib.parse import urlparse, urlunparse

    from crawlfw.downloadermiddlewares.stats import _target_and_host_lengths

    lengths = _target_and_host_lengths(url)
    try:
        parsed = urlparse(url)
        expected = (len(urlunparse(("", "", parsed.path or "/", parsed.params, parsed.query,
                                    "")).encode()),
                    len((parsed.hostname or "").encode()))
    except ValueError:  # urlparse refuses it: so must the shortcut
        assert lengths is None
        return
    assert lengths is None or lengths == expected
    if re.fullmatch(r"https?://[a-zA-Z0-9.-]*(:[0-9]*)?([/?][a-zA-Z0-9/%._~=&?-]*)?(#[a-zA-Z0-9]*)?", url):
        assert lengths is not None  # the plain URLs of a crawl take the shortcut


@pytest.mark.parametrize("response", list(_length_responses()), ids=repr)
def test_downloader_stats_response_length_is_the_httprepr_length(response):
    from crawlfw.downloadermiddlewares.stats import _response_httprepr_length

    for _ in range(2):  # the status line's length is cached on the first call
        assert _response_httprepr_length(response) == len(response_httprepr(response))


_DEFAULTS = [
    {},
    {"Accept": "text/html", "Accept-Language": "en"},
    {"accept": b"a/b", "X-LIST": ["1", b"2"], "X-Int": 5, "X-Empty": []},
    {"X-Caf\u00e9": "\u00e9t\u00e9", b"x-raw": b"v"},
]
_REQUEST_HEADERS = [None, {"Accept": "mine"}, {"ACCEPT-language": ["fr", "de"]}, {"X-List": []}]


@pytest.mark.parametrize("defaults", _DEFAULTS)
@pytest.mark.parametrize("request_headers", _REQUEST_HEADERS)
def test_default_headers_shortcut_matches_setdefault(defaults, request_headers):
    # the middleware stores names and values normalised once per encoding (#20): the
    # same headers as Headers.setdefault(name, value) for each default, request by
    # request, whatever the order of the encodings met
    mw = DefaultHeadersMiddleware(defaults.items())
    earlier = []
    for encoding in ("utf-8", "latin-1", "utf-8", "latin-1"):
        request = Request("http://example.com/", headers=request_headers, encoding=encoding)
        expected = Request("http://example.com/", headers=request_headers, encoding=encoding)
        for name, value in defaults.items():
            expected.headers.setdefault(name, value)
        mw.process_request(request, None)
        assert dict(request.headers) == dict(expected.headers)
        for previous in earlier:  # each request has its own value lists
            for key, values in request.headers.items():
                if key in previous.headers:
                    assert values is not dict.__getitem__(previous.headers, key)
        earlier.append(request)


class _OwnIncStats(MemoryStatsCollector):
    """A collector with its own inc_value (the same rule): DownloaderStats calls it per
    count, the general path."""

    def inc_value(self, key, count=1, start=0, spider=None):
        with self._lock:
            self._stats[key] = self._stats.get(key, start) + count


def _bad_request():
    r = Request("http://example.com/")
    dict.__setitem__(r.headers, b"X-Bad", [1])  # not bytes: its representation raises
    return r


def _bad_response():
    r = Response("http://example.com/")
    dict.__setitem__(r.headers, b"X-Bad", [1])
    return r


def _stats_after(mw, crawler, spider, requests, responses):
    outcomes = []
    for request in requests:
        try:
            outcomes.append(mw.process_request(request, spider))
        except Exception as e:  # noqa: BLE001 - compared
            outcomes.append(type(e))
    for response in responses:
        try:
            outcomes.append(mw.process_response(response.request or Request(response.url),
                                                response, spider) is response)
        except Exception as e:  # noqa: BLE001
            outcomes.append(type(e))
    counts = {k: v for k, v in crawler.stats.get_stats().items() if k.startswith("downloader/")}
    return counts, outcomes


def test_downloader_stats_counts_under_one_lock_as_inc_value_does(crawl):
    """The built-in collector's three counts per request and response in one
    ``_inc_values`` give the stats (and the exceptions) of one ``inc_value`` each, on
    the tables of odd requests and responses, including ones whose representation
    raises (the counts before it are kept, as before)."""
    requests = [*_length_requests(), _bad_request()]
    responses = [*_length_responses(), _bad_response()]
    results = []
    for stats_class in (MemoryStatsCollector, _OwnIncStats):
        crawler = crawl({"STATS_CLASS": f"{stats_class.__module__}.{stats_class.__qualname__}"})
        spider = open_spider(crawler)
        mw = DownloaderStats.from_crawler(crawler)
        assert (mw._inc_values is None) is (stats_class is _OwnIncStats)
        results.append(_stats_after(mw, crawler, spider, requests, responses))
    fast, general = results
    assert fast == general
    assert fast[1][len(requests) - 1] is TypeError and fast[1][-1] is TypeError
