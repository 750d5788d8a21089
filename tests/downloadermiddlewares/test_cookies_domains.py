"""Cookie ``Domain`` attributes no browser accepts are refused (issue 17).

A cookie set for a public suffix (``Domain=.co.uk`` from ``foo.co.uk``, ``Domain=.github.io``
from a private-section suffix of the Public Suffix List) must never reach another site;
from an IP address host, a ``Domain`` must be that address exactly (RFC 6265 §5.1.3,
§5.3 step 5).

The crawl-level test runs ``crawlfw runspider`` against one local HTTP server that acts
as a forward proxy (``meta['proxy']``): curl sends it the absolute URL, so it answers
for any host name (``foo.co.uk``, ``evil.co.uk``, ``192.0.2.10``) without DNS and with no
traffic leaving the loopback; what each "site" received is read from the server's log.
"""

import json
import textwrap

import pytest

from crawlfw.downloadermiddlewares.cookies import CookiesMiddleware
from crawlfw.http import Request, Response
from crawlfw.http.cookies import CookieJar, is_public_suffix
from tests.downloadermiddlewares._support import ScriptedServer
from tests.support.proc import run_measured

SPIDER = textwrap.dedent(
    """
    import crawlfw

    SETS = {
        "http://foo.co.uk/set": ["http://evil.co.uk/check", "http://foo.co.uk/check",
                                 "http://www.foo.co.uk/check"],
        "http://a.github.io/set": ["http://b.github.io/check", "http://a.github.io/check"],
        "http://github.io/set": ["http://github.io/check", "http://c.github.io/check2"],
        "http://192.0.2.10/set": ["http://192.0.2.10/check", "http://192.0.2.11/check"],
        "http://shop.example.com/set": ["http://www.example.com/check"],
    }

    class CookieSpider(crawlfw.Spider):
        name = "cookies"
        custom_settings = {"COOKIES_DEBUG": True}

        def start_requests(self):
            for url in SETS:
                yield crawlfw.Request(url, meta={"proxy": self.proxy}, callback=self.after_set)

        def after_set(self, response):
            for url in SETS[response.url]:
                yield crawlfw.Request(url, meta={"proxy": self.proxy}, callback=self.checked)

        def checked(self, response):
            yield {"url": response.url}
    """
)

SET_COOKIES = {
    "http://foo.co.uk/set": ["sid=uk; Domain=.co.uk; Path=/", "own=uk; Domain=foo.co.uk; Path=/"],
    "http://a.github.io/set": ["sid=gh; Domain=.github.io; Path=/", "own=gh; Path=/"],
    "http://github.io/set": ["root=gh; Domain=github.io; Path=/"],
    "http://192.0.2.10/set": ["ip=1; Domain=192.0.2.10; Path=/", "ipsfx=1; Domain=.0.2.10; Path=/"],
    "http://shop.example.com/set": ["shared=ex; Domain=example.com; Path=/"],
}


def _route(set_cookies):
    return (200, [("Content-Type", "text/plain")] + [("Set-Cookie", c) for c in set_cookies], b"ok")


@pytest.mark.slow
def test_public_suffix_and_ip_domains_through_a_crawl(tmp_path):
    routes = {url: _route(cookies) for url, cookies in SET_COOKIES.items()}
    checks = ["http://evil.co.uk/check", "http://foo.co.uk/check", "http://www.foo.co.uk/check",
              "http://b.github.io/check", "http://a.github.io/check", "http://github.io/check",
              "http://c.github.io/check2", "http://192.0.2.10/check", "http://192.0.2.11/check",
              "http://www.example.com/check"]
    routes.update({url: (200, [("Content-Type", "text/plain")], b"checked") for url in checks})
    (tmp_path / "spider.py").write_text(SPIDER)
    with ScriptedServer(routes) as server:
        result = run_measured(
            "runspider", "spider.py", "-a", f"proxy={server.url}", "-o", "items.jl",
            cwd=tmp_path, timeout_s=60,
        )
        received = {r["path"]: r["headers"].get("Cookie") for r in server.received}
    assert result.returncode == 0, result.stderr[-3000:]
    items = [json.loads(line) for line in (tmp_path / "items.jl").read_text().splitlines()]
    assert sorted(i["url"] for i in items) == sorted(checks)
    assert all(url in received for url in checks), sorted(received)
    # .co.uk is a public suffix (ICANN section): the session never reaches another site
    assert received["http://evil.co.uk/check"] is None
    assert received["http://foo.co.uk/check"] == "own=uk"
    assert received["http://www.foo.co.uk/check"] == "own=uk"
    # .github.io is in the private section: a public suffix all the same
    assert received["http://b.github.io/check"] is None
    assert received["http://a.github.io/check"] == "own=gh"
    # a host that is itself a public suffix keeps a host-only cookie
    assert received["http://github.io/check"] == "root=gh"
    assert received["http://c.github.io/check2"] is None
    # an IP address host: Domain= that very address is sent back to it, and only to it;
    # a suffix of the address is refused
    assert received["http://192.0.2.10/check"] == "ip=1"
    assert received["http://192.0.2.11/check"] is None
    # an ordinary parent domain still works
    assert received["http://www.example.com/check"] == "shared=ex"


def _roundtrip(mw, url, *set_cookies):
    request = Request(url)
    mw.process_request(request, None)
    response = Response(url, headers={"Set-Cookie": list(set_cookies)}, request=request)
    mw.process_response(request, response, None)


@pytest.mark.parametrize(
    "url, set_cookie, stored",
    [
        ("http://foo.co.uk/", "a=1; Domain=.co.uk", []),
        ("http://foo.co.uk/", "a=1; Domain=co.uk", []),
        ("http://x.foo.github.io/", "a=1; Domain=github.io", []),
        ("http://x.blogspot.com/", "a=1; Domain=.blogspot.com", []),
        ("http://foo.co.uk/", "a=1; Domain=foo.co.uk", [".foo.co.uk"]),
        # IP hosts: only the address itself, stored so that it is sent back
        ("http://127.0.0.1:8000/", "a=1; Domain=.0.0.1", []),
        ("http://127.0.0.1:8000/", "a=1; Domain=0.0.1", []),
        ("http://127.0.0.1:8000/", "a=1; Domain=127.0.0.1", ["127.0.0.1"]),
        ("http://127.0.0.1:8000/", "a=1", ["127.0.0.1"]),
        # names under no rule of the list are not public suffixes
        ("http://a.intranet.corp/", "a=1; Domain=intranet.corp", [".intranet.corp"]),
    ],
)
def test_domains_stored(url, set_cookie, stored):
    mw = CookiesMiddleware()
    _roundtrip(mw, url, set_cookie)
    assert [c.domain for c in mw.jars[None]] == stored


def test_request_cookies_with_a_public_suffix_domain_are_refused():
    """``Request.cookies`` go through the same check as ``Set-Cookie``."""
    mw = CookiesMiddleware()
    request = Request("http://foo.co.uk/", cookies=[
        {"name": "a", "value": "1", "domain": ".co.uk"},
        {"name": "b", "value": "2", "domain": "foo.co.uk"},
    ])
    mw.process_request(request, None)
    assert request.headers.get("Cookie") == b"b=2"
    assert [c.name for c in mw.jars[None]] == ["b"]


def test_the_list_is_the_bundled_snapshot():
    assert is_public_suffix("co.uk") and is_public_suffix("github.io") and is_public_suffix("COM")
    assert not is_public_suffix("example.com") and not is_public_suffix("localhost")
    assert type(CookieJar().policy).__name__ == "PublicSuffixCookiePolicy"
