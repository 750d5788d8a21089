"""crawlfw.http.cookies: the CookieJar wrapper and the urllib-style request/response views."""

import time

import pytest

from crawlfw.http import Request, Response
from crawlfw.http.cookies import (
    CookieJar,
    WrappedRequest,
    WrappedResponse,
    potential_domain_matches,
)


@pytest.mark.parametrize(
    "domain, expected",
    [
        ("www.example.com", ["www.example.com", "example.com", ".www.example.com", ".example.com"]),
        ("example.com", ["example.com", ".example.com"]),
        (
            "a.b.example.co.uk",
            [
                "a.b.example.co.uk",
                "b.example.co.uk",
                "example.co.uk",
                "co.uk",
                ".a.b.example.co.uk",
                ".b.example.co.uk",
                ".example.co.uk",
                ".co.uk",
            ],
        ),
        ("localhost", ["localhost", ".localhost"]),
    ],
)
def test_potential_domain_matches(domain, expected):
    assert potential_domain_matches(domain) == expected


def test_wrapped_request():
    request = Request(
        "https://www.example.com:8443/page?q=1",
        headers={"Content-Type": "text/html", "X-Two": ["a", "b"]},
        meta={"is_unverifiable": True},
    )
    wrapped = WrappedRequest(request)
    assert wrapped.get_full_url() == wrapped.full_url == request.url
    assert wrapped.get_host() == wrapped.host == "www.example.com:8443"
    assert wrapped.get_type() == wrapped.type == "https"
    assert wrapped.is_unverifiable() is wrapped.unverifiable is True
    assert wrapped.get_origin_req_host() == wrapped.origin_req_host == "www.example.com"
    assert wrapped.has_header("content-type")
    assert not wrapped.has_header("Cookie")
    assert wrapped.get_header("Content-Type") == "text/html"
    assert wrapped.get_header("Missing", "default") == "default"
    assert ("X-Two", ["a", "b"]) in wrapped.header_items()
    wrapped.add_unredirected_header("Cookie", "a=1")
    assert request.headers[b"Cookie"] == b"a=1"
    assert WrappedRequest(Request("http://e.com/")).unverifiable is False


def test_wrapped_response():
    response = Response("http://e.com/", headers={"Set-Cookie": [b"a=1", b"b=caf\xc3\xa9"]})
    wrapped = WrappedResponse(response)
    assert wrapped.info() is wrapped
    assert wrapped.get_all("Set-Cookie") == ["a=1", "b=café"]
    assert wrapped.get_all("Missing") == []


def store(jar, url, *set_cookies):
    request = Request(url)
    jar.extract_cookies(Response(url, headers={"Set-Cookie": list(set_cookies)}), request)


def cookie_header(jar, url, **kw):
    request = Request(url, **kw)
    jar.add_cookie_header(request)
    return request.headers.get(b"Cookie")


@pytest.mark.parametrize(
    "set_at, set_cookie, sent_to, expected",
    [
        ("http://www.example.com/", "a=1", "http://www.example.com/x", b"a=1"),
        # host-only cookie: not sent to another host
        ("http://www.example.com/", "a=1", "http://other.example.com/", None),
        # Domain attribute: sent to subdomains (RFC 6265 §5.1.3)
        ("http://www.example.com/", "a=1; Domain=example.com", "http://sub.example.com/", b"a=1"),
        ("http://www.example.com/", "a=1; Domain=example.com", "http://example.org/", None),
        # a host may not set a cookie for an unrelated domain
        ("http://www.example.com/", "a=1; Domain=other.org", "http://other.org/", None),
        # Path attribute (RFC 6265 §5.1.4)
        ("http://e.com/", "a=1; Path=/shop", "http://e.com/shop/item", b"a=1"),
        ("http://e.com/", "a=1; Path=/shop", "http://e.com/other", None),
        # Secure cookies only over https
        ("https://e.com/", "a=1; Secure", "http://e.com/", None),
        ("https://e.com/", "a=1; Secure", "https://e.com/", b"a=1"),
        # expired
        ("http://e.com/", "a=1; Max-Age=0", "http://e.com/", None),
        ("http://e.com/", "a=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT", "http://e.com/", None),
        # dotless host names and IP addresses work
        ("http://localhost:8080/", "a=1", "http://localhost:8080/", b"a=1"),
        ("http://127.0.0.1:8080/", "a=1", "http://127.0.0.1:9090/", b"a=1"),
    ],
)
def test_jar_rules(set_at, set_cookie, sent_to, expected):
    jar = CookieJar()
    store(jar, set_at, set_cookie)
    assert cookie_header(jar, sent_to) == expected


def test_several_cookies_and_replacement():
    jar = CookieJar()
    store(jar, "http://e.com/", "a=1", "b=2")
    store(jar, "http://e.com/", "a=3")
    assert sorted(cookie_header(jar, "http://e.com/").split(b"; ")) == [b"a=3", b"b=2"]
    assert len(jar) == 2
    assert sorted(c.name for c in jar) == ["a", "b"]


def test_existing_cookie_header_is_kept():
    jar = CookieJar()
    store(jar, "http://e.com/", "a=1")
    assert cookie_header(jar, "http://e.com/", headers={"Cookie": "mine=1"}) == b"mine=1"


def test_clear_and_session_cookies():
    jar = CookieJar()
    future = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 3600))
    store(jar, "http://e.com/", "session=1", f"persistent=1; Expires={future}")
    store(jar, "http://f.com/", "other=1")
    jar.clear_session_cookies()
    assert sorted(c.name for c in jar) == ["persistent"]
    jar.clear("e.com")
    assert len(jar) == 0
    with pytest.raises(KeyError):
        jar.clear("nowhere.org")


def test_make_cookies_and_set_cookie_if_ok():
    jar = CookieJar()
    request = Request("http://www.e.com/")
    cookies = jar.make_cookies(
        Response(request.url, headers={"Set-Cookie": ["a=1", "b=2; Domain=evil.org"]}), request
    )
    assert [c.name for c in cookies] == ["a", "b"]
    assert len(jar) == 0  # make_cookies does not store
    for cookie in cookies:
        jar.set_cookie_if_ok(cookie, request)
    assert [c.name for c in jar] == ["a"]  # the policy refused evil.org
    jar.set_cookie(cookies[1])  # unconditional
    assert len(jar) == 2


def test_expired_cookies_are_purged_periodically():
    jar = CookieJar(check_expired_frequency=2)
    store(jar, "http://e.com/", "a=1; Max-Age=1000")
    cookie = next(iter(jar))
    cookie.expires = int(time.time()) - 10  # expire it in place
    cookie_header(jar, "http://e.com/")
    assert len(jar) == 1
    cookie_header(jar, "http://e.com/")  # second call: purge
    assert len(jar) == 0


def test_url_without_host():
    jar = CookieJar()
    request = Request("file:///tmp/x")
    jar.add_cookie_header(request)
    assert b"Cookie" not in request.headers


def test_empty_jar_and_responses_without_set_cookie_are_skipped():
    # the shortcuts: an empty jar adds no header (a Cookie header of the request is kept),
    # a response without Set-Cookie/Set-Cookie2 stores nothing; the header in any case
    # still reaches http.cookiejar
    jar = CookieJar()
    request = Request("http://e.com/", headers={"Cookie": "mine=1"})
    jar.add_cookie_header(request)
    assert request.headers.getlist("Cookie") == [b"mine=1"]
    assert jar.processed == 0
    jar.extract_cookies(Response("http://e.com/", headers={"X-Other": "a=1"}),
                        Request("http://e.com/"))
    assert len(jar) == 0
    for name in ("set-cookie", "SET-COOKIE"):
        jar = CookieJar()
        jar.extract_cookies(Response("http://e.com/", headers={name: "a=1"}),
                            Request("http://e.com/"))
        assert [c.name for c in jar] == ["a"]
        assert cookie_header(jar, "http://e.com/") is not None
        assert jar.processed == 1
