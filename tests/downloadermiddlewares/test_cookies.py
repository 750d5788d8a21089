"""CookiesMiddleware: jar per meta['cookiejar'], request.cookies, dont_merge_cookies,
COOKIES_DEBUG logs; and a real login/logout Set-Cookie sequence on a local server,
with the redirect middleware in between."""

import logging

import pytest

from crawlfw.downloadermiddlewares.cookies import CookiesMiddleware
from crawlfw.downloadermiddlewares.redirect import RedirectMiddleware
from crawlfw.exceptions import NotConfigured
from crawlfw.http import Request, Response
from crawlfw.settings import Settings
from crawlfw.spiders import Spider
from tests.downloadermiddlewares._support import ScriptedServer, close_crawler, fetch, get_crawler

SPIDER = Spider("test")


def response_with(url, *set_cookies, request=None):
    return Response(url, headers={"Set-Cookie": list(set_cookies)}, request=request)


def roundtrip(mw, url, *set_cookies, **request_kw):
    """Send a request to ``url`` and answer it with ``set_cookies``; return the request."""
    request = Request(url, **request_kw)
    mw.process_request(request, SPIDER)
    mw.process_response(request, response_with(url, *set_cookies, request=request), SPIDER)
    return request


def sent(mw, url, **request_kw):
    request = Request(url, **request_kw)
    mw.process_request(request, SPIDER)
    return request.headers.get(b"Cookie")


def test_set_cookie_then_cookie():
    mw = CookiesMiddleware()
    first = roundtrip(mw, "http://example.com/", "C1=value1; path=/")
    assert b"Cookie" not in first.headers
    assert sent(mw, "http://example.com/sub1/") == b"C1=value1"
    assert sent(mw, "http://other.com/") is None


@pytest.mark.parametrize(
    "cookies, expected",
    [
        ({"a": "1", "b": "2"}, [b"a=1", b"b=2"]),
        ({"n": 5}, [b"n=5"]),
        ({"bytes": b"caf\xc3\xa9"}, ["bytes=café".encode()]),
        ([{"name": "a", "value": "1"}], [b"a=1"]),
        ([{"name": "a", "value": "1", "path": "/shop"}], []),  # path doesn't match "/"
        ([{"name": "a", "value": "1", "domain": "example.com"}], [b"a=1"]),
        ([{"name": "a", "value": "1", "domain": "other.org"}], []),  # refused by the policy
        ([{"name": "a"}, {"name": "b", "value": "2"}], [b"b=2"]),  # malformed skipped
        ({}, []),
    ],
)
def test_request_cookies(cookies, expected):
    mw = CookiesMiddleware()
    header = sent(mw, "http://www.example.com/", cookies=cookies)
    assert sorted(header.split(b"; ") if header else []) == expected


def test_request_cookies_are_remembered():
    mw = CookiesMiddleware()
    sent(mw, "http://example.com/", cookies={"a": "1"})
    assert sent(mw, "http://example.com/other") == b"a=1"


def test_malformed_request_cookie_is_warned(caplog):
    mw = CookiesMiddleware()
    sent(mw, "http://example.com/", cookies=[{"name": "a"}])
    assert "Invalid cookie found in request <GET http://example.com/>" in caplog.text
    assert "'value' is missing" in caplog.text


def test_user_cookie_header_is_replaced_by_the_jar():
    mw = CookiesMiddleware()
    roundtrip(mw, "http://example.com/", "jar=1")
    assert sent(mw, "http://example.com/", headers={"Cookie": "mine=1"}) == b"jar=1"
    # with nothing in the jar the header is dropped too (Scrapy 1.2)
    assert sent(mw, "http://example.org/", headers={"Cookie": "mine=1"}) is None


def test_dont_merge_cookies():
    mw = CookiesMiddleware()
    roundtrip(mw, "http://example.com/", "a=1", meta={"dont_merge_cookies": True})
    assert sent(mw, "http://example.com/") is None  # response cookies not stored
    roundtrip(mw, "http://example.com/", "b=2")
    header = sent(
        mw, "http://example.com/", headers={"Cookie": "mine=1"}, meta={"dont_merge_cookies": True}
    )
    assert header == b"mine=1"  # request left alone


def test_separate_jars():
    mw = CookiesMiddleware()
    roundtrip(mw, "http://example.com/", "session=A", meta={"cookiejar": 1})
    roundtrip(mw, "http://example.com/", "session=B", meta={"cookiejar": 2})
    assert sent(mw, "http://example.com/", meta={"cookiejar": 1}) == b"session=A"
    assert sent(mw, "http://example.com/", meta={"cookiejar": 2}) == b"session=B"
    assert sent(mw, "http://example.com/") is None  # the default jar (key None)
    assert set(mw.jars) == {1, 2, None}


def test_debug_logging(caplog):
    mw = CookiesMiddleware(debug=True)
    caplog.set_level(logging.DEBUG, logger="crawlfw.downloadermiddlewares.cookies")
    roundtrip(mw, "http://example.com/", "a=1; Path=/")
    sent(mw, "http://example.com/")
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "Received cookies from: <200 http://example.com/>\nSet-Cookie: a=1; Path=/\n",
        "Sending cookies to: <GET http://example.com/>\nCookie: a=1\n",
    ]


def test_no_debug_logging_by_default(caplog):
    mw = CookiesMiddleware()
    caplog.set_level(logging.DEBUG, logger="crawlfw.downloadermiddlewares.cookies")
    roundtrip(mw, "http://example.com/", "a=1")
    sent(mw, "http://example.com/")
    assert caplog.records == []


@pytest.mark.parametrize(
    "settings, enabled, debug",
    [
        ({}, True, False),
        ({"COOKIES_DEBUG": True}, True, True),
        ({"COOKIES_ENABLED": False}, False, None),
    ],
)
def test_settings(settings, enabled, debug):
    crawler = get_crawler(settings)
    try:
        if not enabled:
            with pytest.raises(NotConfigured):
                CookiesMiddleware.from_crawler(crawler)
        else:
            assert CookiesMiddleware.from_crawler(crawler).debug is debug
    finally:
        close_crawler(crawler)


def _login(handler):
    return (
        302,
        [
            ("Location", "/account"),
            ("Set-Cookie", "session=s3cr3t; Path=/; HttpOnly"),
            ("Set-Cookie", "theme=dark; Path=/account"),
        ],
        b"",
    )


def _account(handler):
    cookie = handler.headers.get("Cookie") or ""
    if "session=s3cr3t" in cookie:
        return 200, [("Content-Type", "text/plain")], f"welcome ({cookie})".encode()
    return 403, [("Content-Type", "text/plain")], b"who are you?"


def _logout(handler):
    return (
        200,
        [("Set-Cookie", "session=; Path=/; Max-Age=0"), ("Content-Type", "text/plain")],
        b"bye",
    )


def test_real_login_sequence():
    cookies = CookiesMiddleware()
    redirect = RedirectMiddleware(Settings())

    def crawl(request):
        """The downloader chain for two middlewares: cookies (700) nearer the
        downloader than redirect (600)."""
        while True:
            cookies.process_request(request, SPIDER)
            response = fetch(request)
            response = cookies.process_response(request, response, SPIDER)
            result = redirect.process_response(request, response, SPIDER)
            if isinstance(result, Response):
                return result
            request = result

    routes = {"/login": _login, "/account": _account, "/logout": _logout}
    with ScriptedServer(routes) as server:
        assert crawl(Request(server.url + "/account")).status == 403
        after_login = crawl(Request(server.url + "/login", method="POST", body=b"u=1"))
        assert after_login.status == 200
        # cookies with longer paths are listed first (RFC 6265 §5.4)
        assert after_login.body == b"welcome (theme=dark; session=s3cr3t)"
        # the path-restricted cookie is not sent elsewhere
        crawl(Request(server.url + "/logout"))
        assert server.received[-1]["headers"]["Cookie"] == "session=s3cr3t"
        # the logout deleted the session cookie
        assert crawl(Request(server.url + "/account")).status == 403
        assert "session" not in (server.received[-1]["headers"]["Cookie"] or "")
