"""HttpProxyMiddleware: environment proxies, no_proxy, credentials, meta['proxy']."""

import base64

import pytest

from crawlfw.downloadermiddlewares.httpproxy import HttpProxyMiddleware
from crawlfw.exceptions import NotConfigured
from crawlfw.http import Request
from crawlfw.settings import Settings


class _Crawler:
    """Only ``settings`` is read by from_crawler."""

    def __init__(self, settings=None):
        self.settings = Settings(settings)


@pytest.fixture
def env(monkeypatch):
    for name in ("http_proxy", "https_proxy", "ftp_proxy", "no_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


def basic(userpass: bytes) -> bytes:
    return b"Basic " + base64.b64encode(userpass)


@pytest.mark.parametrize(
    "environ, url, meta, expected_proxy, expected_auth",
    [
        ({}, "http://example.com/", {}, None, None),
        ({"http_proxy": "http://proxy:3128"}, "http://example.com/", {}, "http://proxy:3128", None),
        ({"http_proxy": "http://proxy:3128"}, "https://example.com/", {}, None, None),
        (
            {"https_proxy": "http://u:p@sproxy:8080"},
            "https://example.com/",
            {},
            "http://sproxy:8080",
            basic(b"u:p"),
        ),
        # scheme-less proxy URL takes the request scheme's name
        ({"http_proxy": "proxy:3128"}, "http://example.com/", {}, "http://proxy:3128", None),
        # no_proxy bypass (suffix match)
        (
            {"http_proxy": "http://proxy:3128", "no_proxy": "example.com"},
            "http://www.example.com/",
            {},
            None,
            None,
        ),
        (
            {"http_proxy": "http://proxy:3128", "no_proxy": "example.com"},
            "http://other.org/",
            {},
            "http://proxy:3128",
            None,
        ),
        # meta wins over the environment; credentials are moved to the header
        (
            {"http_proxy": "http://proxy:3128"},
            "http://example.com/",
            {"proxy": "http://a:b@metaproxy:1"},
            "http://metaproxy:1",
            basic(b"a:b"),
        ),
        ({}, "http://example.com/", {"proxy": "http://metaproxy:1"}, "http://metaproxy:1", None),
        # percent-encoded credentials are decoded, then latin-1 encoded
        (
            {},
            "http://example.com/",
            {"proxy": "http://us%C3%A9r:p%40ss@p:1"},
            "http://p:1",
            basic("usér:p@ss".encode("latin-1")),
        ),
        # meta proxy None: no proxy even if the environment has one
        ({"http_proxy": "http://proxy:3128"}, "http://example.com/", {"proxy": None}, None, None),
    ],
)
def test_proxy_rules(env, environ, url, meta, expected_proxy, expected_auth):
    for key, value in environ.items():
        env.setenv(key, value)
    mw = HttpProxyMiddleware.from_crawler(_Crawler())
    request = Request(url, meta=meta)
    assert mw.process_request(request, None) is None
    assert request.meta.get("proxy") == expected_proxy
    assert request.headers.get(b"Proxy-Authorization") == expected_auth


def test_auth_encoding_setting(env):
    mw = HttpProxyMiddleware.from_crawler(_Crawler({"HTTPPROXY_AUTH_ENCODING": "utf-8"}))
    request = Request("http://example.com/", meta={"proxy": "http://us%C3%A9r:p@p:1"})
    mw.process_request(request, None)
    assert request.headers[b"Proxy-Authorization"] == basic("usér:p".encode())


def test_can_be_disabled(env):
    with pytest.raises(NotConfigured):
        HttpProxyMiddleware.from_crawler(_Crawler({"HTTPPROXY_ENABLED": False}))
