"""RedirectMiddleware and MetaRefreshMiddleware: Scrapy 1.2's rules as tables, and a
real redirect chain on the aegisub.org copy (301 to the directory, then a meta refresh)."""

import logging

import pytest

from crawlfw.downloadermiddlewares.redirect import MetaRefreshMiddleware, RedirectMiddleware
from crawlfw.exceptions import IgnoreRequest, NotConfigured
from crawlfw.http import HtmlResponse, Request, Response, TextResponse
from crawlfw.settings import Settings
from crawlfw.spiders import Spider
from tests.downloadermiddlewares._support import fetch


@pytest.fixture
def mw():
    return RedirectMiddleware(Settings())


@pytest.fixture
def spider():
    return Spider("test")


def redirect_response(url, status, location=None, headers=None):
    headers = dict(headers or {})
    if location is not None:
        headers["Location"] = location
    return Response(url, status=status, headers=headers)


URL = "http://example.com/a/b"


@pytest.mark.parametrize(
    "method, status, expected_method, keeps_body",
    [
        ("GET", 301, "GET", False),
        # issue 22: the Fetch standard's rule (Scrapy 2.14+), not Scrapy 1.2's: a 301 of
        # a POST becomes a GET, a 302 of a PUT keeps its method and body
        ("POST", 301, "GET", False),
        ("POST", 302, "GET", False),
        ("POST", 303, "GET", False),
        ("POST", 307, "POST", True),
        ("POST", 308, "POST", True),
        ("HEAD", 302, "HEAD", False),
        ("HEAD", 303, "HEAD", False),
        ("PUT", 302, "PUT", True),
        ("PUT", 301, "PUT", True),
        ("PUT", 303, "GET", False),
    ],
)
def test_method_and_body(mw, spider, method, status, expected_method, keeps_body):
    body = b"a=1" if method not in ("GET", "HEAD") else b""
    request = Request(
        URL, method=method, body=body, headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    result = mw.process_response(request, redirect_response(URL, status, "/next"), spider)
    assert isinstance(result, Request)
    assert result.url == "http://example.com/next"
    assert result.method == expected_method
    converted = expected_method != method
    if keeps_body or not converted:
        assert result.body == body
        assert result.headers[b"Content-Type"] == b"application/x-www-form-urlencoded"
    else:
        assert result.body == b""
        assert b"Content-Type" not in result.headers


@pytest.mark.parametrize(
    "location, expected",
    [
        ("/next", "http://example.com/next"),
        ("next", "http://example.com/a/next"),
        ("../up", "http://example.com/up"),
        ("?q=1", "http://example.com/a/b?q=1"),
        ("//other.org/x", "http://other.org/x"),
        ("https://secure.example.com/", "https://secure.example.com/"),
        ("/with space", "http://example.com/with%20space"),
        # non-ASCII bytes on the wire: latin-1 decoded, then percent-encoded as UTF-8
        ("/caf\xe9".encode("latin-1"), "http://example.com/caf%C3%A9"),
        # UTF-8 bytes sent raw (common): decoded as latin-1 code points, each re-encoded
        ("/é".encode(), "http://example.com/%C3%83%C2%A9"),
    ],
)
def test_location_resolution(mw, spider, location, expected):
    request = Request(URL)
    response = Response(URL, status=302, headers={b"Location": location})
    assert mw.process_response(request, response, spider).url == expected


@pytest.mark.parametrize(
    "status, location",
    [(302, None), (200, "/x"), (304, "/x"), (300, "/x"), (404, "/x")],
)
def test_not_redirected(mw, spider, status, location):
    response = redirect_response(URL, status, location)
    assert mw.process_response(Request(URL), response, spider) is response


class HandlesSpider(Spider):
    name = "handles"
    handle_httpstatus_list = [302]


@pytest.mark.parametrize(
    "meta, spidercls",
    [
        ({"dont_redirect": True}, Spider),
        ({"handle_httpstatus_list": [301, 302]}, Spider),
        ({"handle_httpstatus_all": True}, Spider),
        ({}, HandlesSpider),
    ],
)
def test_opt_outs(mw, meta, spidercls):
    spider = spidercls("s")
    response = redirect_response(URL, 302, "/next")
    assert mw.process_response(Request(URL, meta=meta), response, spider) is response


def test_meta_priority_and_dont_filter(mw, spider, caplog):
    caplog.set_level(logging.DEBUG, logger="crawlfw.downloadermiddlewares.redirect")
    request = Request(URL, priority=3, dont_filter=True)
    first = mw.process_response(request, redirect_response(URL, 301, "/one"), spider)
    second = mw.process_response(first, redirect_response(first.url, 302, "/two"), spider)
    assert second.meta["redirect_times"] == 2
    assert second.meta["redirect_ttl"] == 18
    assert second.meta["redirect_urls"] == [URL, "http://example.com/one"]
    assert second.meta["redirect_reasons"] == [301, 302]
    assert second.priority == 3 + 2 + 2  # REDIRECT_PRIORITY_ADJUST
    assert second.dont_filter is True
    assert caplog.records[0].getMessage() == (
        "Redirecting (301) to <GET http://example.com/one> from <GET http://example.com/a/b>"
    )


@pytest.mark.parametrize(
    "settings, meta, allowed", [({"REDIRECT_MAX_TIMES": 2}, {}, 2), ({}, {"redirect_ttl": 1}, 1)]
)
def test_limits(spider, caplog, settings, meta, allowed):
    mw = RedirectMiddleware(Settings(settings))
    caplog.set_level(logging.DEBUG, logger="crawlfw.downloadermiddlewares.redirect")
    request = Request(URL, meta=meta)
    for _ in range(allowed):
        request = mw.process_response(request, redirect_response(request.url, 302, "/x"), spider)
    with pytest.raises(IgnoreRequest, match="max redirections reached"):
        mw.process_response(request, redirect_response(request.url, 302, "/x"), spider)
    assert caplog.records[-1].getMessage() == (
        "Discarding <GET http://example.com/x>: max redirections reached"
    )


@pytest.mark.parametrize(
    "location, keeps_cookie, keeps_auth",
    [
        ("/same-host", True, True),
        ("http://other.org/", False, False),
        # issue 22: credentials stay with their origin (scheme, host, port); the cookies
        # middleware adds the jar's cookies for the new URL again
        ("https://example.com/secure", False, False),
        ("http://example.com:8080/", False, False),
        ("http://EXAMPLE.com:80/x", True, True),
    ],
)
def test_sensitive_headers_across_hosts(mw, spider, location, keeps_cookie, keeps_auth):
    request = Request(URL, headers={"Cookie": "a=1", "Authorization": "Basic eDp5"})
    result = mw.process_response(request, redirect_response(URL, 301, location), spider)
    assert (b"Cookie" in result.headers) is keeps_cookie
    assert (b"Authorization" in result.headers) is keeps_auth


def test_disabled():
    with pytest.raises(NotConfigured):
        RedirectMiddleware(Settings({"REDIRECT_ENABLED": False}))
    with pytest.raises(NotConfigured):
        MetaRefreshMiddleware(Settings({"METAREFRESH_ENABLED": False}))


# --- MetaRefreshMiddleware ------------------------------------------------------------


def refresh_page(content, cls=HtmlResponse, url=URL):
    body = f'<html><head><meta http-equiv="refresh" content="{content}"></head></html>'
    return cls(url, body=body.encode(), encoding="utf-8")


@pytest.mark.parametrize(
    "content, method, cls, expected",
    [
        ("5; url=http://example.org/newpage", "GET", HtmlResponse, "http://example.org/newpage"),
        ("0;URL='next/'", "GET", HtmlResponse, "http://example.com/a/next/"),
        ("0; url=/x", "POST", HtmlResponse, "http://example.com/x"),  # becomes a GET
        ("1000; url=/x", "GET", HtmlResponse, None),  # delay >= METAREFRESH_MAXDELAY (100)
        ("0; url=/x", "HEAD", HtmlResponse, None),
        ("0; url=/x", "GET", TextResponse, None),  # only HTML responses
    ],
)
def test_meta_refresh(spider, content, method, cls, expected):
    mw = MetaRefreshMiddleware(Settings())
    request = Request(URL, method=method, body=b"a=1" if method == "POST" else b"")
    response = refresh_page(content, cls)
    result = mw.process_response(request, response, spider)
    if expected is None:
        assert result is response
    else:
        assert (result.url, result.method, result.body) == (expected, "GET", b"")
        assert result.meta["redirect_reasons"] == ["meta refresh"]


def test_meta_refresh_maxdelay_setting(spider):
    mw = MetaRefreshMiddleware(Settings({"METAREFRESH_MAXDELAY": 3}))
    response = refresh_page("5; url=/x")
    assert mw.process_response(Request(URL), response, spider) is response


def test_meta_refresh_dont_redirect(spider):
    mw = MetaRefreshMiddleware(Settings())
    response = refresh_page("0; url=/x")
    assert (
        mw.process_response(Request(URL, meta={"dont_redirect": True}), response, spider)
        is response
    )


# --- a real site ----------------------------------------------------------------------


def test_real_redirect_chain_on_aegisub(site_server, spider):
    """/docs/latest -> 301 /docs/latest/ (server) -> meta refresh to main_page/ -> 200."""
    server = site_server("aegisub.org")
    redirect = RedirectMiddleware(Settings())
    refresh = MetaRefreshMiddleware(Settings())
    request = Request(server.url + "/docs/latest")
    seen = []
    for _ in range(5):
        response = fetch(request)
        seen.append(response.status)
        # process_response order: downloader side first (Redirect 600, MetaRefresh 580)
        result = redirect.process_response(request, response, spider)
        if isinstance(result, Response):
            result = refresh.process_response(request, result, spider)
        if isinstance(result, Response):
            break
        request = result
    assert seen == [301, 200, 200]
    assert result.url == server.url + "/docs/latest/main_page/"
    assert request.meta["redirect_urls"] == [
        server.url + "/docs/latest",
        server.url + "/docs/latest/",
    ]
    assert request.meta["redirect_reasons"] == [301, "meta refresh"]
    assert b"Aegisub" in result.body


def test_a_redirect_gets_its_own_download_slot_and_latency(mw, spider):
    # the downloader set download_slot to the source's slot (as Scrapy's does); the
    # target is queued in its own, as Scrapy 2's RedirectMiddleware does
    request = Request(URL, meta={"download_slot": "example.com", "download_latency": 0.2,
                                 "depth": 1})
    redirected = mw.process_response(
        request, redirect_response(URL, 302, "http://other.example/"), spider)
    assert "download_slot" not in redirected.meta and "download_latency" not in redirected.meta
    assert redirected.meta["depth"] == 1
    assert request.meta["download_slot"] == "example.com"  # the original is untouched
