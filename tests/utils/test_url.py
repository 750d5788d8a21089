import warnings
from urllib.parse import urlparse

import pytest

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.utils import url as url_mod
from crawlfw.utils.url import (
    add_http_if_no_scheme,
    canonicalize_url,
    escape_ajax,
    guess_scheme,
    parse_url,
    safe_url_string,
    strip_url,
    url_has_any_extension,
    url_is_from_any_domain,
    url_is_from_spider,
    urljoin_rfc,
)


@pytest.mark.parametrize(
    ("url", "domains", "expected"),
    [
        ("http://www.wheele-bin-art.co.uk/get/product/123", ["wheele-bin-art.co.uk"], True),
        ("http://wheele-bin-art.co.uk/get/product/123", ["wheele-bin-art.co.uk"], True),
        ("http://www.Wheele-Bin-Art.co.uk/get/product/123", ["wheele-bin-art.CO.uk"], True),
        ("http://192.169.0.15:8080/mypage.html", ["192.169.0.15:8080"], True),
        ("http://192.169.0.15:8080/mypage.html", ["192.169.0.15"], False),
        (
            "javascript:%20document.orderform_2581_1190810811.mode.value=%27add%27",
            ["testdomain.com"],
            False,
        ),
        ("http://www.testdomain.com/?x=javascript:%20document", ["testdomain.com"], True),
        ("http://www.wheele-bin-art.co.uk/", ["art.co.uk"], False),
        ("http://notexample.com/", ["example.com"], False),
        ("http://example.com.evil.org/", ["example.com"], False),
        ("http://www.example.com/", [], False),
        (urlparse("http://www.example.com/"), ["example.com"], True),
    ],
)
def test_url_is_from_any_domain(url, domains, expected):
    assert url_is_from_any_domain(url, domains) is expected


class _Spider:
    def __init__(self, name, allowed_domains=None):
        self.name = name
        if allowed_domains is not None:
            self.allowed_domains = allowed_domains


@pytest.mark.parametrize(
    ("url", "spider", "expected"),
    [
        ("http://www.example.com/some/page.html", _Spider("example.com"), True),
        ("http://sub.example.com/some/page.html", _Spider("example.com"), True),
        ("http://www.example.org/some/page.html", _Spider("example.com"), False),
        ("http://www.example.net/some/page.html", _Spider("example.com"), False),
        ("http://www.example.org/x", _Spider("s", ["example.org", "example.net"]), True),
        ("http://www.example.net/x", _Spider("s", ("example.org", "example.net")), True),
        ("http://www.example.com/x", _Spider("s", ["example.org"]), False),
    ],
)
def test_url_is_from_spider(url, spider, expected):
    assert url_is_from_spider(url, spider) is expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://www.example.com/archive.tar.gz", True),
        ("http://www.example.com/page.doc", True),
        ("http://www.example.com/page.pdf", True),
        ("http://www.example.com/page.PDF", True),
        ("http://www.example.com/page.htm", False),
        ("http://www.example.com/", False),
        ("http://www.example.com/page.doc.html", False),
        ("http://www.example.com/page?x=a.pdf", False),
    ],
)
def test_url_has_any_extension(url, expected):
    assert url_has_any_extension(url, {".pdf", ".doc", ".gz"}) is expected


def test_parse_url():
    p = urlparse("http://www.example.com/a?b=c")
    assert parse_url(p) is p
    assert parse_url("http://www.example.com/a?b=c") == p
    assert parse_url(b"http://www.example.com/a?b=c") == p
    assert parse_url(
        "http://www.example.com/caf\xe9".encode("latin-1"), encoding="latin-1"
    ).path == ("/caf\u00e9")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "http://www.example.com/ajax.html#!key=value",
            "http://www.example.com/ajax.html?_escaped_fragment_=key%3Dvalue",
        ),
        (
            "http://www.example.com/ajax.html?k1=v1&k2=v2#!key=value",
            "http://www.example.com/ajax.html?k1=v1&k2=v2&_escaped_fragment_=key%3Dvalue",
        ),
        (
            "http://www.example.com/ajax.html?#!key=value",
            "http://www.example.com/ajax.html?_escaped_fragment_=key%3Dvalue",
        ),
        (
            "http://www.example.com/ajax.html#!",
            "http://www.example.com/ajax.html?_escaped_fragment_=",
        ),
        (
            "http://www.example.com/ajax.html#key=value",
            "http://www.example.com/ajax.html#key=value",
        ),
        ("http://www.example.com/ajax.html#", "http://www.example.com/ajax.html#"),
        ("http://www.example.com/ajax.html", "http://www.example.com/ajax.html"),
    ],
)
def test_escape_ajax(url, expected):
    assert escape_ajax(url) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("www.example.com", "http://www.example.com"),
        ("example.com/a/b.html", "http://example.com/a/b.html"),
        ("//www.example.com/a", "http://www.example.com/a"),
        ("http://www.example.com", "http://www.example.com"),
        ("https://www.example.com", "https://www.example.com"),
        ("ftp://www.example.com", "ftp://www.example.com"),
        ("www.example.com:80/a", "http://www.example.com:80/a"),
        ("username:password@www.example.com", "http://username:password@www.example.com"),
    ],
)
def test_add_http_if_no_scheme(url, expected):
    assert add_http_if_no_scheme(url) == expected


@pytest.mark.parametrize(
    ("url", "prefix"),
    [
        ("/index", "file://"),
        ("/index.html", "file://"),
        ("./index.html", "file://"),
        ("../index.html", "file://"),
        ("../../index.html", "file://"),
        ("./data/index.html", "file://"),
        (".hidden/data/index.html", "file://"),
        ("/home/user/www/index.html", "file://"),
        ("//home/user/www/index.html", "file://"),
        ("file:///home/user/www/index.html", "file://"),
        ("index.html", "http://"),
        ("example.com", "http://"),
        ("www.example.com", "http://"),
        ("www.example.com/index.html", "http://"),
        ("http://example.com", "http://"),
        ("http://example.com/index.html", "http://"),
        ("localhost", "http://"),
        ("localhost/index.html", "http://"),
        ("https://example.com", "https://"),
        ("ftp://example.com", "ftp://"),
    ],
)
def test_guess_scheme(url, prefix):
    assert guess_scheme(url).startswith(prefix)


@pytest.mark.parametrize(
    ("url", "kwargs", "expected"),
    [
        ("http://user:pass@www.example.com:80/a?b=c#frag", {}, "http://www.example.com/a?b=c"),
        ("https://www.example.com:443/a", {}, "https://www.example.com/a"),
        ("ftp://www.example.com:21/a", {}, "ftp://www.example.com/a"),
        ("http://www.example.com:8080/a", {}, "http://www.example.com:8080/a"),
        ("https://www.example.com:80/a", {}, "https://www.example.com:80/a"),
        (
            "http://www.example.com:80/a",
            {"strip_default_port": False},
            "http://www.example.com:80/a",
        ),
        (
            "http://u:p@www.example.com/a",
            {"strip_credentials": False},
            "http://u:p@www.example.com/a",
        ),
        ("http://u:p@www.example.com/a?b#c", {"origin_only": True}, "http://www.example.com/"),
        (
            "http://www.example.com/a#frag",
            {"strip_fragment": False},
            "http://www.example.com/a#frag",
        ),
    ],
)
def test_strip_url(url, kwargs, expected):
    assert strip_url(url, **kwargs) == expected


def test_urljoin_rfc_is_deprecated():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert urljoin_rfc("http://example.com/a/b", "c") == "http://example.com/a/c"
        assert urljoin_rfc(b"http://example.com/a/", b"d") == "http://example.com/a/d"
    assert w and all(issubclass(x.category, CrawlfwDeprecationWarning) for x in w)


def test_w3lib_reexports():
    assert (
        canonicalize_url("http://www.example.com/do?b=2&a=1#frag")
        == "http://www.example.com/do?a=1&b=2"
    )
    assert safe_url_string("http://www.example.com/a b") == "http://www.example.com/a%20b"
    for name in url_mod.__all__:
        assert callable(getattr(url_mod, name)), name
