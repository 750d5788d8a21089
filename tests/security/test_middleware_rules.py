"""Issue 22's rules, middleware by middleware, in-process (the crawl-level proofs are the
other tests of this folder): which redirect targets are followed, which headers survive
a redirect, when Proxy-Authorization is dropped, where http_user/http_pass go."""

import logging

import pytest

from crawlfw.downloadermiddlewares.httpauth import HttpAuthMiddleware
from crawlfw.downloadermiddlewares.httpproxy import HttpProxyMiddleware
from crawlfw.downloadermiddlewares.redirect import MetaRefreshMiddleware, RedirectMiddleware
from crawlfw.http import HtmlResponse, Request, Response
from crawlfw.settings import Settings
from crawlfw.spiders import Spider
from crawlfw.statscollectors import MemoryStatsCollector
from crawlfw.utils.test import get_crawler


@pytest.fixture
def spider():
    return Spider("rules")


@pytest.fixture
def stats():
    return MemoryStatsCollector(get_crawler(Spider))


@pytest.fixture
def no_env_proxies(monkeypatch):
    for name in ("http_proxy", "https_proxy", "ftp_proxy", "no_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


def _302(url, location):
    return Response(url, status=302, headers={"Location": location})


@pytest.mark.parametrize("target", [
    "file:///etc/passwd", "FILE:///etc/passwd", "ftp://127.0.0.1:21/x", "data:text/html,hi",
    "javascript:alert(1)", "gopher://127.0.0.1:70/", "dict://127.0.0.1:11211/stat",
])
def test_redirects_to_other_schemes_are_not_followed(spider, stats, caplog, target):
    mw = RedirectMiddleware(Settings(), stats)
    request = Request("https://example.com/a")
    response = _302(request.url, target)
    with caplog.at_level(logging.WARNING):
        assert mw.process_response(request, response, spider) is response
    assert stats.get_value("redirect/refused_scheme", spider=spider) == 1
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    refresh = MetaRefreshMiddleware(Settings(), stats)
    page = HtmlResponse(request.url, body=f'<meta http-equiv="refresh" content="0;url={target}">'
                        .encode())
    assert refresh.process_response(request, page, spider) is page
    assert stats.get_value("redirect/refused_scheme", spider=spider) == 2


@pytest.mark.parametrize("target", ["http://example.com/b", "https://other.org/c", "//cdn.org/d"])
def test_web_targets_are_followed(spider, target):
    mw = RedirectMiddleware(Settings())
    redirected = mw.process_response(Request("https://example.com/a"),
                                     _302("https://example.com/a", target), spider)
    assert isinstance(redirected, Request)


def test_request_cookies_are_not_carried(spider):
    mw = RedirectMiddleware(Settings())
    request = Request("http://example.com/a", cookies={"s": "1"})
    for target in ("http://other.org/", "/same-host"):
        assert mw.process_response(request, _302(request.url, target), spider).cookies == {}


@pytest.mark.parametrize("user_meta_proxy, expect_kept", [(False, False), (True, True)])
def test_scheme_change_drops_only_the_environments_proxy(spider, user_meta_proxy, expect_kept):
    meta = {"proxy": "http://proxy:3128", "_auth_proxy": "http://proxy:3128"}
    if not user_meta_proxy:
        meta["_scheme_proxy"] = True
    request = Request("http://example.com/a", meta=meta,
                      headers={"Proxy-Authorization": "Basic eDp5"})
    redirected = RedirectMiddleware(Settings()).process_response(
        request, _302(request.url, "https://example.com/b"), spider)
    assert ("proxy" in redirected.meta) is expect_kept
    assert (b"Proxy-Authorization" in redirected.headers) is expect_kept


def test_offsite_redirect_needs_allowed_domains(stats):
    spider = Spider("offsite", allowed_domains=["example.com"])
    mw = RedirectMiddleware(Settings(), stats)
    from crawlfw.exceptions import IgnoreRequest

    with pytest.raises(IgnoreRequest):
        mw.process_response(Request("http://example.com/a"),
                            _302("http://example.com/a", "http://evil.org/"), spider)
    for request in (Request("http://example.com/a", dont_filter=True),
                    Request("http://example.com/a", meta={"allow_offsite": True})):
        assert isinstance(mw.process_response(request, _302(request.url, "http://evil.org/"),
                                              spider), Request)
    assert isinstance(mw.process_response(Request("http://example.com/a"),
                                          _302("http://example.com/a", "http://www.example.com/"),
                                          spider), Request)
    assert stats.get_value("offsite/filtered", spider=spider) == 1
    assert stats.get_value("offsite/domains", spider=spider) == 1


@pytest.mark.parametrize("step, expect_header", [
    ({"proxy": None}, False),  # removed by setting it to None
    ({"proxy": "http://other:8080"}, False),  # pointed elsewhere
    ({"proxy": "http://proxy:3128"}, True),  # the same proxy again (a retry)
    ("pop", False),  # removed from meta
])
def test_proxy_authorization_follows_its_proxy(no_env_proxies, spider, step, expect_header):
    mw = HttpProxyMiddleware()
    request = Request("http://example.com/", meta={"proxy": "http://u:p@proxy:3128"})
    mw.process_request(request, spider)
    assert request.headers[b"Proxy-Authorization"] == b"Basic dTpw"
    replay = request.copy()
    if step == "pop":
        del replay.meta["proxy"]
    else:
        replay.meta.update(step)
    mw.process_request(replay, spider)
    assert (b"Proxy-Authorization" in replay.headers) is expect_header


def test_user_set_proxy_authorization_is_bound_to_its_proxy(no_env_proxies, spider):
    mw = HttpProxyMiddleware()
    request = Request("http://example.com/", meta={"proxy": "http://proxy:3128"},
                      headers={"Proxy-Authorization": "Basic bXk6b3du"})
    mw.process_request(request, spider)
    assert request.headers[b"Proxy-Authorization"] == b"Basic bXk6b3du"
    replay = request.replace(meta={**request.meta, "proxy": "http://elsewhere:1"})
    mw.process_request(replay, spider)
    assert b"Proxy-Authorization" not in replay.headers


class _AuthSpider(Spider):
    name = "auth"
    http_user = "foo"
    http_pass = "bar"


def test_http_auth_domain_unset_binds_the_first_host(spider, caplog):
    mw = HttpAuthMiddleware()
    auth_spider = _AuthSpider()
    sent = {}
    with caplog.at_level(logging.WARNING):
        for url in ("file:///tmp/x", "http://example.com:8080/", "http://www.example.com/",
                    "http://other.org/", "https://example.com/"):
            request = Request(url)
            mw.process_request(request, auth_spider)
            sent[url] = b"Authorization" in request.headers
    assert sent == {"file:///tmp/x": False, "http://example.com:8080/": True,
                    "http://www.example.com/": True, "http://other.org/": False,
                    "https://example.com/": True}
    assert len([r for r in caplog.records if "http_auth_domain" in r.getMessage()]) == 1


def test_http_auth_domain_none_means_every_host():
    class Everywhere(_AuthSpider):
        http_auth_domain = None

    mw = HttpAuthMiddleware()
    for url in ("http://example.com/", "http://other.org/"):
        request = Request(url)
        mw.process_request(request, Everywhere())
        assert b"Authorization" in request.headers


def test_each_transfer_allows_only_its_own_scheme():
    """curl's per-transfer CURLOPT_PROTOCOLS: one protocol bit per supported scheme, and
    redirects (never followed by curl) limited to http/https."""
    import pycurl

    from crawlfw.core.transport import curl

    assert set(curl._SCHEME_PROTOCOLS) == set(curl.SUPPORTED_SCHEMES)
    for bit in curl._SCHEME_PROTOCOLS.values():
        assert bit and bit & (bit - 1) == 0  # exactly one protocol
    assert curl._REDIR_PROTOCOLS == pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS
