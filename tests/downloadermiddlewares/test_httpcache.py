"""HttpCacheMiddleware with its policies and storages (crawlfw.extensions.httpcache):
storage round trips and expiry, DummyPolicy flow, RFC2616Policy rules as tables, and
revalidation against a real server (ETag -> 304)."""

import os
import time
from email.utils import formatdate

import pytest

from crawlfw.downloadermiddlewares.httpcache import HttpCacheMiddleware
from crawlfw.exceptions import ConnectionRefusedError, IgnoreRequest, NotConfigured
from crawlfw.extensions.httpcache import (
    DbmCacheStorage,
    FilesystemCacheStorage,
    RFC2616Policy,
    parse_cachecontrol,
    rfc1123_to_epoch,
)
from crawlfw.http import HtmlResponse, Request, Response
from crawlfw.settings import Settings
from crawlfw.spiders import Spider
from crawlfw.utils.request import request_fingerprint
from tests.downloadermiddlewares._support import (
    ScriptedServer,
    close_crawler,
    fetch,
    get_crawler,
    open_spider,
)

SPIDER = Spider("cachetest")


def http_date(offset_s=0.0):
    return formatdate(time.time() + offset_s, usegmt=True)


# --- storages ---------------------------------------------------------------------------

STORAGES = [
    pytest.param(FilesystemCacheStorage, {}, id="filesystem"),
    pytest.param(FilesystemCacheStorage, {"HTTPCACHE_GZIP": True}, id="filesystem-gzip"),
    pytest.param(DbmCacheStorage, {}, id="dbm"),
]


@pytest.fixture
def storage_factory(tmp_path):
    opened = []

    def make(cls, extra=None):
        settings = Settings({"HTTPCACHE_DIR": str(tmp_path / "cache"), **(extra or {})})
        storage = cls(settings)
        storage.open_spider(SPIDER)
        opened.append(storage)
        return storage

    yield make
    for storage in opened:
        storage.close_spider(SPIDER)


@pytest.mark.parametrize("cls, extra", STORAGES)
def test_storage_round_trip(storage_factory, cls, extra):
    storage = storage_factory(cls, extra)
    request = Request("http://example.com/page", headers={"Accept": "text/html"})
    response = Response(
        "http://example.com/page",
        status=203,
        headers={"Content-Type": "text/html; charset=utf-8", "Set-Cookie": ["a=1", "b=2"]},
        body=b"<html><body>caf\xc3\xa9</body></html>",
    )
    assert storage.retrieve_response(SPIDER, request) is None
    storage.store_response(SPIDER, request, response)
    cached = storage.retrieve_response(SPIDER, request)
    assert type(cached) is HtmlResponse
    assert (cached.url, cached.status, cached.body) == (response.url, 203, response.body)
    assert cached.headers.getlist(b"Set-Cookie") == [b"a=1", b"b=2"]
    assert storage.retrieve_response(SPIDER, Request("http://example.com/other")) is None
    # a POST with another body is another entry
    assert storage.retrieve_response(SPIDER, Request(request.url, method="POST", body=b"x")) is None


def test_filesystem_layout(storage_factory, tmp_path):
    storage = storage_factory(FilesystemCacheStorage)
    request = Request("http://example.com/")
    storage.store_response(SPIDER, request, Response(request.url, body=b"x"))
    fp = request_fingerprint(request)
    entry = tmp_path / "cache" / "cachetest" / fp[:2] / fp
    assert sorted(os.listdir(entry)) == [
        "meta",
        "pickled_meta",
        "request_body",
        "request_headers",
        "response_body",
        "response_headers",
    ]


@pytest.mark.parametrize("cls, extra", STORAGES)
def test_storage_expiry(storage_factory, cls, extra, tmp_path):
    storage = storage_factory(cls, {"HTTPCACHE_EXPIRATION_SECS": 60, **extra})
    request = Request("http://example.com/")
    storage.store_response(SPIDER, request, Response(request.url, body=b"x"))
    assert storage.retrieve_response(SPIDER, request) is not None
    # age the entry by two minutes
    fp = request_fingerprint(request)
    old = time.time() - 120
    if cls is FilesystemCacheStorage:
        os.utime(tmp_path / "cache" / "cachetest" / fp[:2] / fp / "pickled_meta", (old, old))
    else:
        storage.db[f"{fp}_time"] = str(old)
    assert storage.retrieve_response(SPIDER, request) is None


# --- the middleware with DummyPolicy -------------------------------------------------------


@pytest.fixture
def cache(tmp_path):
    made = []

    def start(settings=None):
        crawler = get_crawler(
            {
                "HTTPCACHE_ENABLED": True,
                "HTTPCACHE_DIR": str(tmp_path / "cache"),
                **(settings or {}),
            }
        )
        mw = HttpCacheMiddleware.from_crawler(crawler)
        spider = open_spider(crawler)  # spider_opened opens the storage
        made.append((crawler, spider))
        return crawler, spider, mw

    yield start
    for crawler, spider in made:
        close_crawler(crawler, spider)


def download(mw, spider, request, response):
    """What the engine does: process_request, then process_response on a download."""
    result = mw.process_request(request, spider)
    if result is None:
        result = mw.process_response(request, response, spider)
    else:
        result = mw.process_response(request, result, spider)
    return result


def test_dummy_policy_flow(cache):
    crawler, spider, mw = cache()
    request = Request("http://example.com/")
    response = Response(request.url, body=b"first")
    assert download(mw, spider, request, response) is response
    assert b"Date" in response.headers  # RFC 2616 §14.18
    cached = mw.process_request(Request("http://example.com/"), spider)
    assert isinstance(cached, Response) and cached.body == b"first"
    assert cached.flags == ["cached"]
    assert mw.process_response(Request("http://example.com/"), cached, spider) is cached
    stats = crawler.stats.get_stats()
    assert {k: v for k, v in stats.items() if k.startswith("httpcache/")} == {
        "httpcache/miss": 1,
        "httpcache/firsthand": 1,
        "httpcache/store": 1,
        "httpcache/hit": 1,
    }


def test_dont_cache(cache):
    crawler, spider, mw = cache()
    request = Request("http://example.com/", meta={"dont_cache": True})
    download(mw, spider, request, Response(request.url, body=b"x"))
    assert mw.process_request(Request("http://example.com/"), spider) is None


@pytest.mark.parametrize(
    "settings, url, status",
    [
        ({"HTTPCACHE_IGNORE_HTTP_CODES": [404]}, "http://example.com/", 404),
        ({"HTTPCACHE_IGNORE_SCHEMES": ["http"]}, "http://example.com/", 200),
    ],
)
def test_not_stored(cache, settings, url, status):
    crawler, spider, mw = cache(settings)
    request = Request(url)
    download(mw, spider, request, Response(url, status=status))
    assert mw.process_request(Request(url), spider) is None


def test_ignore_missing(cache):
    crawler, spider, mw = cache({"HTTPCACHE_IGNORE_MISSING": True})
    with pytest.raises(IgnoreRequest, match="not in cache"):
        mw.process_request(Request("http://example.com/"), spider)
    assert crawler.stats.get_value("httpcache/ignore") == 1


def test_disabled_by_default():
    crawler = get_crawler()
    try:
        with pytest.raises(NotConfigured):
            HttpCacheMiddleware.from_crawler(crawler)
    finally:
        close_crawler(crawler)


# --- RFC2616Policy ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header, expected",
    [
        (b"public, max-age=3600", {b"public": None, b"max-age": b"3600"}),
        (b"No-Cache,MAX-AGE=0", {b"no-cache": None, b"max-age": b"0"}),
        (b"", {}),
        (b" , private ,", {b"private": None}),
    ],
)
def test_parse_cachecontrol(header, expected):
    assert parse_cachecontrol(header) == expected


@pytest.mark.parametrize(
    "value, expected",
    [
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784111777),  # RFC 7231 §7.1.1.1 examples
        ("Sunday, 06-Nov-94 08:49:37 GMT", 784111777),
        ("Sun Nov  6 08:49:37 1994", 784111777),
        ("garbage", None),
        (None, None),
    ],
)
def test_rfc1123_to_epoch(value, expected):
    assert rfc1123_to_epoch(value) == expected


def policy(**settings):
    return RFC2616Policy(Settings(settings))


@pytest.mark.parametrize(
    "status, headers, settings, cacheable",
    [
        (200, {}, {}, False),  # no expiry, no validator
        (200, {"Last-Modified": http_date(-3600)}, {}, True),
        (200, {"ETag": '"abc"'}, {}, True),
        (200, {"Cache-Control": "max-age=60"}, {}, True),
        (200, {"Expires": http_date(60)}, {}, True),
        (200, {"Cache-Control": "no-store, max-age=60"}, {}, False),
        (
            200,
            {"Cache-Control": "no-store, max-age=60"},
            {"HTTPCACHE_IGNORE_RESPONSE_CACHE_CONTROLS": ["no-store"]},
            True,
        ),
        (200, {}, {"HTTPCACHE_ALWAYS_STORE": True}, True),
        (304, {"Cache-Control": "max-age=60"}, {"HTTPCACHE_ALWAYS_STORE": True}, False),
        (301, {}, {}, True),
        (308, {}, {}, True),
        (302, {}, {}, False),
        (404, {"ETag": '"x"'}, {}, False),
    ],
)
def test_should_cache_response(status, headers, settings, cacheable):
    response = Response("http://example.com/", status=status, headers=headers)
    assert policy(**settings).should_cache_response(response, Request(response.url)) is cacheable


@pytest.mark.parametrize(
    "headers, expected",
    [({}, True), ({"Cache-Control": "no-store"}, False), ({"Cache-Control": "max-age=0"}, True)],
)
def test_should_cache_request(headers, expected):
    assert policy().should_cache_request(Request("http://e.com/", headers=headers)) is expected


@pytest.mark.parametrize(
    "status, response_headers, request_headers, fresh",
    [
        (200, {"Date": http_date(-10), "Cache-Control": "max-age=3600"}, {}, True),
        (200, {"Date": http_date(-7200), "Cache-Control": "max-age=3600"}, {}, False),
        (200, {"Date": http_date(-10), "Cache-Control": "max-age=3600", "Age": "4000"}, {}, False),
        (200, {"Date": http_date(-10), "Expires": http_date(3600)}, {}, True),
        (200, {"Date": http_date(-10), "Expires": http_date(-5)}, {}, False),
        (200, {"Date": http_date(-10), "Expires": "0"}, {}, False),  # unparsable: expired
        # heuristic: 10 % of the age of Last-Modified (10 days old -> fresh for 1 day)
        (200, {"Date": http_date(-60), "Last-Modified": http_date(-864000)}, {}, True),
        (200, {"Date": http_date(-60), "Last-Modified": http_date(-120)}, {}, False),
        (301, {"Date": http_date(-86400)}, {}, True),  # a year for permanent redirects
        (200, {"Date": http_date(-10), "Cache-Control": "no-cache, max-age=3600"}, {}, False),
        (
            200,
            {"Date": http_date(-10), "Cache-Control": "max-age=3600"},
            {"Cache-Control": "no-cache"},
            False,
        ),
        (
            200,
            {"Date": http_date(-100), "Cache-Control": "max-age=3600"},
            {"Cache-Control": "max-age=50"},
            False,
        ),
        (
            200,
            {"Date": http_date(-100), "Cache-Control": "max-age=60"},
            {"Cache-Control": "max-stale"},
            True,
        ),
        (
            200,
            {"Date": http_date(-100), "Cache-Control": "max-age=60"},
            {"Cache-Control": "max-stale=1000"},
            True,
        ),
        (
            200,
            {"Date": http_date(-100), "Cache-Control": "max-age=60"},
            {"Cache-Control": "max-stale=10"},
            False,
        ),
        (
            200,
            {"Date": http_date(-100), "Cache-Control": "max-age=60, must-revalidate"},
            {"Cache-Control": "max-stale"},
            False,
        ),
    ],
)
def test_freshness(status, response_headers, request_headers, fresh):
    cached = Response("http://example.com/", status=status, headers=response_headers)
    request = Request("http://example.com/", headers=request_headers)
    assert policy().is_cached_response_fresh(cached, request) is fresh


def test_stale_response_sets_validators():
    cached = Response(
        "http://example.com/",
        headers={"Date": http_date(-100), "Last-Modified": http_date(-99), "ETag": '"v1"'},
    )
    request = Request("http://example.com/")
    assert policy().is_cached_response_fresh(cached, request) is False
    assert request.headers[b"If-None-Match"] == b'"v1"'
    assert request.headers[b"If-Modified-Since"] == cached.headers[b"Last-Modified"]


@pytest.mark.parametrize(
    "cached_headers, status, valid",
    [
        ({}, 304, True),
        ({}, 200, False),
        ({}, 500, True),  # serve stale on server errors ...
        ({"Cache-Control": "must-revalidate"}, 503, False),  # ... unless forbidden
        ({}, 404, False),
    ],
)
def test_is_cached_response_valid(cached_headers, status, valid):
    cached = Response("http://example.com/", headers=cached_headers)
    response = Response("http://example.com/", status=status)
    assert policy().is_cached_response_valid(cached, response, Request(cached.url)) is valid


# --- RFC2616Policy against a real server ---------------------------------------------------


def _etag_page(handler):
    if handler.headers.get("If-None-Match") == '"v1"':
        return 304, [("ETag", '"v1"'), ("Cache-Control", "max-age=0")], b""
    return (
        200,
        [("Content-Type", "text/html"), ("ETag", '"v1"'), ("Cache-Control", "max-age=0")],
        b"<html><body>version 1</body></html>",
    )


def test_real_revalidation_and_error_recovery(cache):
    crawler, spider, mw = cache({"HTTPCACHE_POLICY": "crawlfw.extensions.httpcache.RFC2616Policy"})
    with ScriptedServer({"/page": _etag_page}) as server:
        url = server.url + "/page"

        def crawl_once():
            request = Request(url)
            answer = mw.process_request(request, spider)
            if answer is not None:
                return request, answer
            return request, mw.process_response(request, fetch(request), spider)

        _, first = crawl_once()
        assert first.status == 200 and b"version 1" in first.body
        # max-age=0: stale at once, revalidated with If-None-Match, 304 -> the cached copy
        second_request, second = crawl_once()
        assert server.received[-1]["headers"]["If-None-Match"] == '"v1"'
        assert second.status == 200 and second.body == first.body
        assert "cached" in second.flags
    # the server is gone: a stale entry is served on a network error
    request = Request(url)
    assert mw.process_request(request, spider) is None
    recovered = mw.process_exception(request, ConnectionRefusedError("refused"), spider)
    assert recovered is not None and recovered.body == first.body
    get = crawler.stats.get_value
    assert (get("httpcache/revalidate"), get("httpcache/errorrecovery")) == (1, 1)


def test_storage_opened_when_built_after_spider_opened(tmp_path):
    """With DBM storage an unopened storage would fail; the first request opens it."""
    crawler = get_crawler(
        {
            "HTTPCACHE_ENABLED": True,
            "HTTPCACHE_DIR": str(tmp_path / "cache"),
            "HTTPCACHE_STORAGE": "crawlfw.extensions.httpcache.DbmCacheStorage",
        }
    )
    spider = open_spider(crawler)  # the signal fires before the middleware exists
    try:
        mw = HttpCacheMiddleware.from_crawler(crawler)
        request = Request("http://example.com/")
        download(mw, spider, request, Response(request.url, body=b"x"))
        assert mw.process_request(Request("http://example.com/"), spider).body == b"x"
    finally:
        close_crawler(crawler, spider)  # spider_closed closes the storage
    assert mw._opened_spider is None
