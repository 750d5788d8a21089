import gc
import random
from pathlib import Path

import pytest

from crawlfw.http import Headers, HtmlResponse, Response, TextResponse, XmlResponse
from crawlfw.utils import response as response_mod
from crawlfw.utils.response import (
    get_base_url,
    get_meta_refresh,
    open_in_browser,
    response_httprepr,
    response_status_message,
)

# --- get_base_url ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"<html><head><title>x</title></head></html>", "http://www.example.com/a/b.html"),
        (b'<html><head><base href="http://other.org/dir/"></head></html>', "http://other.org/dir/"),
        (b'<html><head><base href="/rel/"></head></html>', "http://www.example.com/rel/"),
        (b'<html><head><BASE HREF="sub/"></head></html>', "http://www.example.com/a/sub/"),
        (b'<html><head><base href=""></head></html>', "http://www.example.com/a/b.html"),
        (b'<html><head><base href="  http://ws.org/x/\n"></head></html>', "http://ws.org/x/"),
        # beyond the first 4096 characters: not looked for (as in Scrapy)
        (
            b"<html><head>" + b" " * 5000 + b'<base href="/late/"></head></html>',
            "http://www.example.com/a/b.html",
        ),
    ],
)
def test_get_base_url(body, expected):
    r = HtmlResponse("http://www.example.com/a/b.html", body=body)
    assert get_base_url(r) == expected


def test_get_base_url_is_cached_per_response():
    r = HtmlResponse("http://www.example.com/", body=b'<base href="/x/">')
    assert get_base_url(r) == "http://www.example.com/x/"
    assert response_mod._baseurl_cache[r] == "http://www.example.com/x/"
    n = len(response_mod._baseurl_cache)
    del r
    gc.collect()
    assert len(response_mod._baseurl_cache) == n - 1


def test_get_base_url_non_ascii_page():
    # the path is always UTF-8 percent-encoded, the query in the page's encoding (WHATWG URL)
    body = '<html><head><base href="/caf\u00e9/?q=\u00e9"></head></html>'.encode("latin-1")
    r = HtmlResponse("http://www.example.com/", body=body, encoding="latin-1")
    assert get_base_url(r) == "http://www.example.com/caf%C3%A9/?q=%E9"


# --- get_meta_refresh ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            b'<html><head><meta http-equiv="refresh" content="5;url=http://example.org/newpage"></head></html>',
            (5.0, "http://example.org/newpage"),
        ),
        (
            b'<meta http-equiv="Refresh" content="0; URL=/next">',
            (0.0, "http://www.example.com/next"),
        ),
        (
            b"<meta http-equiv=refresh content=\"3; url='page2.html'\">",
            (3.0, "http://www.example.com/dir/page2.html"),
        ),
        (b'<meta content="1.5;url=x" http-equiv="refresh">', (1.5, "http://www.example.com/dir/x")),
        # without a url there is nothing to follow (w3lib's rule)
        (b'<meta http-equiv="refresh" content="10">', (None, None)),
        (b"<html><head><title>no refresh</title></head></html>", (None, None)),
        (b'<meta http-equiv="content-type" content="text/html">', (None, None)),
        # inside <noscript> or <script>: ignored
        (b'<noscript><meta http-equiv="refresh" content="0;url=/nojs"></noscript>', (None, None)),
        (
            b'<script>var s=\'<meta http-equiv="refresh" content="0;url=/js">\';</script>',
            (None, None),
        ),
        (
            b'<noscript><meta http-equiv="refresh" content="0;url=/nojs"></noscript>'
            b'<meta http-equiv="refresh" content="2;url=/real">',
            (2.0, "http://www.example.com/real"),
        ),
        # beyond the first 4096 characters: not looked for (as in Scrapy)
        (
            b"<html>" + b" " * 5000 + b'<meta http-equiv="refresh" content="0;url=/late">',
            (None, None),
        ),
    ],
)
def test_get_meta_refresh(body, expected):
    r = HtmlResponse("http://www.example.com/dir/page.html", body=body)
    assert get_meta_refresh(r) == expected


def test_get_meta_refresh_non_ascii_url_uses_page_encoding():
    body = '<meta http-equiv="refresh" content="0;url=/caf\u00e9?q=\u00e9">'.encode("latin-1")
    r = HtmlResponse("http://www.example.com/", body=body, encoding="latin-1")
    assert get_meta_refresh(r) == (0.0, "http://www.example.com/caf%C3%A9?q=%E9")


def test_get_meta_refresh_is_cached_per_response():
    r = HtmlResponse(
        "http://www.example.com/", body=b'<meta http-equiv="refresh" content="1;url=/a">'
    )
    assert get_meta_refresh(r) == (1.0, "http://www.example.com/a")
    assert response_mod._metaref_cache[r] == (1.0, "http://www.example.com/a")


@pytest.mark.parametrize(
    ("path", "url", "expected"),
    [
        # Hugo alias stub, unquoted attributes
        (
            "blog/page/1/index.html",
            "https://aegisub.org/blog/page/1/",
            (0.0, "https://aegisub.org/blog/"),
        ),
        # quoted URL='...' relative to the page
        (
            "docs/latest/index.html",
            "https://aegisub.org/docs/latest/",
            (0.0, "https://aegisub.org/docs/latest/main_page/"),
        ),
        (
            "docs/latest/Glossary/index.html",
            "https://aegisub.org/docs/latest/Glossary/",
            (0.0, "https://aegisub.org/docs/latest/"),
        ),
        # percent-encoded non-ASCII target
        (
            "blog/2024/12/aegisub-3.4.0-released.html",
            "https://aegisub.org/blog/2024/12/aegisub-3.4.0-released.html",
            (0.0, "https://aegisub.org/zh-cn/blog/aegisub-3.4.0-%E5%8F%91%E5%B8%83%E4%BA%86/"),
        ),
        # a normal page
        ("index.html", "https://aegisub.org/", (None, None)),
    ],
)
def test_get_meta_refresh_real_aegisub_pages(sites_dir, path, url, expected):
    body = (sites_dir / "aegisub.org" / path).read_bytes()
    r = HtmlResponse(url, body=body, headers={"Content-Type": "text/html"})
    assert get_meta_refresh(r) == expected


# --- status messages, httprepr ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (200, "200 OK"),
        (404, "404 Not Found"),
        ("404", "404 Not Found"),
        (301, "301 Moved Permanently"),
        (302, "302 Found"),
        (500, "500 Internal Server Error"),
        (503, "503 Service Unavailable"),
        (429, "429 Too Many Requests"),
        (573, "573 Unknown Status"),
    ],
)
def test_response_status_message(status, message):
    assert response_status_message(status) == message


def test_response_status_message_bad_input():
    with pytest.raises(ValueError):
        response_status_message("abc")


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (Response("http://www.example.com"), b"HTTP/1.1 200 OK\r\n\r\n"),
        (
            Response(
                "http://www.example.com",
                status=404,
                headers=Headers([("Content-type", "text/html"), ("Accept", "gzip")]),
                body=b"Some body",
            ),
            b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nAccept: gzip\r\n\r\nSome body",
        ),
        (
            Response(
                "http://www.example.com",
                status=6666,
                headers={"Content-type": "text/html"},
                body=b"Some body",
            ),
            b"HTTP/1.1 6666 \r\nContent-Type: text/html\r\n\r\nSome body",
        ),
    ],
)
def test_response_httprepr(response, expected):
    assert response_httprepr(response) == expected


# --- open_in_browser ---------------------------------------------------------------------------


def _capture():
    opened = []

    def fake_open(url):
        opened.append(url)
        return True

    return opened, fake_open


def test_open_in_browser_html_injects_base(tmp_path):
    opened, fake_open = _capture()
    r = HtmlResponse(
        "http://www.example.com/dir/", body=b"<html><head><title>t</title></head></html>"
    )
    assert open_in_browser(r, _openfunc=fake_open) is True
    assert opened[0].startswith("file://") and opened[0].endswith(".html")
    path = Path(opened[0][len("file://") :])
    try:
        assert path.read_bytes() == (
            b'<html><head><base href="http://www.example.com/dir/"><title>t</title></head></html>'
        )
    finally:
        path.unlink()


def test_open_in_browser_keeps_existing_base():
    opened, fake_open = _capture()
    body = b'<html><head><base href="/x/"></head></html>'
    open_in_browser(HtmlResponse("http://www.example.com/", body=body), _openfunc=fake_open)
    path = Path(opened[0][len("file://") :])
    try:
        assert path.read_bytes() == body
    finally:
        path.unlink()


@pytest.mark.parametrize("cls", [TextResponse, XmlResponse])
def test_open_in_browser_text(cls):
    opened, fake_open = _capture()
    open_in_browser(cls("http://www.example.com/", body=b"plain"), _openfunc=fake_open)
    path = Path(opened[0][len("file://") :])
    try:
        assert path.suffix == ".txt"
        assert path.read_bytes() == b"plain"
    finally:
        path.unlink()


def test_open_in_browser_binary_refused():
    with pytest.raises(TypeError, match="Unsupported response type: Response"):
        open_in_browser(Response("http://www.example.com/", body=b"\x00"), _openfunc=lambda u: None)


# --- the shortcuts of get_base_url / get_meta_refresh give w3lib's answers ---------------------

_SHORTCUT_URLS = [
    "http://www.example.com/a/b.html",
    "https://Example.COM:8080/dir/",
    "http://example.com:080/x",
    "http://www.example.com/caf\u00e9/a b?q=\u00e9#f",
    "http://b\u00fccher.de/x?y",
    "https://example.com/a;p?x#y#z",
    "http://example.com/p?",
    "http://user:pw@example.com/",
]

_SHORTCUT_BODIES = [
    "<html><head><title>x</title></head></html>",
    '<html><head><meta charset="utf-8"><meta name="description" content="d"></head></html>',
    '<html><head><base href="/rel/"></head></html>',
    '<html><head><BaSe HREF="sub/"></head></html>',
    '<html><head><base target="_top"><base href="/second/"></head></html>',
    "<html><head><base></head></html>",
    '<html><head><base href=""></head></html>',
    "<p>the &lt;base&gt; element, and a base of 10</p>",
    '<meta http-equiv="refresh" content="0;url=/next">',
    '<META HTTP-EQUIV="REFRESH" CONTENT="1; URL=next.html">',
    '<meta http-equiv="Refresh" content="10">',
    '<meta http-equiv="content-type" content="text/html">',
    '<noscript><meta http-equiv="refresh" content="0;url=/nojs"></noscript>',
    "<p>press F5 to refresh the page</p>",
    '<meta http-equiv="re\u017fre\u017fh" content="0;url=/long-s">',  # long s: not an s
    '<meta http-equiv="\u212aefresh" content="0;url=/kelvin">',
    "<html>" + " " * 4090 + '<base href="/straddles/"><meta http-equiv="refresh" '
    'content="0;url=/straddles">',
    "<html>" + " " * 5000 + '<base href="/late/"><meta http-equiv="refresh" content="0;url=/l">',
    "<html><!-- " + "x" * 4100 + ' <base href="/in-comment/"> --></html>',
    "\ufeff<html><base href='/bom/'></html>",
]


def _shortcut_cases():
    rng = random.Random(20)
    pieces = ["<base", "<BASE", 'href="/r/"', "<meta", "http-equiv=refresh",
              'content="0;url=/m"', "REFRESH", "\u00e9", "\u0130", ">", " ", "x" * 700]
    bodies = list(_SHORTCUT_BODIES)
    for _ in range(60):
        bodies.append("".join(rng.choice(pieces) for _ in range(rng.randint(1, 14))))
    for url in _SHORTCUT_URLS:
        for body in bodies:
            for encoding in ("utf-8", "latin-1"):
                yield url, body, encoding


@pytest.mark.parametrize(
    ("url", "body", "encoding"),
    [pytest.param(*case, id=str(i)) for i, case in enumerate(_shortcut_cases())],
)
def test_base_url_and_meta_refresh_shortcuts_match_w3lib(url, body, encoding):
    from w3lib import html

    raw = body.encode(encoding, errors="xmlcharrefreplace")
    r = HtmlResponse(url, body=raw, encoding=encoding)
    ref = HtmlResponse(url, body=raw, encoding=encoding)
    assert get_base_url(r) == html.get_base_url(ref.text, ref.url, ref.encoding, max_scan=4096)
    # Scrapy 2's get_meta_refresh: w3lib's, resolved against w3lib's base URL
    assert get_meta_refresh(r) == html.get_meta_refresh(
        ref.text, html.get_base_url(ref.text, ref.url, ref.encoding, max_scan=4096),
        ref.encoding, max_scan=4096)


# --- the one pass over the scanned text (scan_tags) and the refresh pre-check ---------------

_PAD = "x" * 4080  # puts what follows across the 4096-character scan limit

_SCAN_BODIES = [
    '<meta charset="utf-8"><meta name="viewport" content="width=device-width">',
    '<Meta http-equiv="refresh" content="0;url=/a">',
    '<mEtA\thttp-equiv=REFRESH content="0;url=/tab">',
    '<meta\nhttp-equiv="refresh"\ncontent="0;url=/nl">',
    '<meta/http-equiv="refresh" content="0;url=/slash">',  # no whitespace: not a tag
    '<metahttp-equiv="refresh" content="0;url=/glued">',
    '<meta http-equiv="&#114;efresh" content="0;url=/entity">',  # w3lib: no
    '<meta http-equiv="refresh" content="0;url=/a?b=1&amp;c=2">',
    '<meta content="<meta http-equiv=refresh content=\'0;url=/inner\'>">',
    # a comment hides the first tag from w3lib, whose scan then reads the second, while a
    # scan of <meta> tags alone would take the two for one tag that ends at the first ">"
    '<!--<meta a="--><meta b=\'" >\' http-equiv=refresh content=\'0;url=/x\'>',
    "<!--<meta a=--><meta http-equiv=refresh content='0;url=/y'>",
    '<script>"<meta http-equiv=refresh content=0;url=/s>"</script><meta name=a>',
    "<script><!--</script><meta http-equiv=refresh content='0;url=/after-script'>",
    '<noscript><meta http-equiv=refresh content="0;url=/ns"></noscript><base href="/b/">',
    '<meta name="x" content="a>b" http-equiv="refresh" content="0;url=/gt">',
    '<meta http-equiv="refresh" content="0;url=/unterminated',
    "<meta http-equiv='refresh' content='0;url=/\u00e9\u4e2d'>",
    "<meta http-equiv=refresh content=\"0;url=/\u0130\u212a\">",
    "<base href='/\u00e9/'><meta http-equiv=refresh content=5;url=x>",
    "<BASE\thref=/tab/>",
    "<bAsE href=/mixed/>",
    "<basefont><base2 href=/no/>",
    "<b>bold</b><body><br>",
    _PAD + '<meta http-equiv="refresh" content="0;url=/straddle">',
    _PAD + '<meta content="0;url=/straddle2" http-equiv="refresh">',
    _PAD[:-10] + '<meta http-equiv="refresh" content="0;url=/' + "z" * 40 + '">',
    _PAD + '<a title="<meta http-equiv=refresh content=0;url=/in-title>">x</a>',
    _PAD + "<base href='/straddle/'>",
    _PAD[:-9] + "<img alt='" + "y" * 30 + "'><base href='/after/'>",
    _PAD + "xxxxxxxxxxxxxxx<meta http-equiv=refresh content=0;url=/past>",
    "\u00e9" * 4090 + "<meta http-equiv=refresh content=0;url=/wide>",
    "\u4e2d" * 4093 + "<base href=/cjk/>",
]


def _scan_cases():
    rng = random.Random(2020)
    pieces = ["<meta ", "<META\t", "<Meta", "<base ", "<BaSe", "http-equiv=", "refresh",
              "ReFrEsH", '"', "'", "=", ">", "<", "<!--", "-->", "<script>", "</script>",
              "<noscript>", "content=0;url=/r", 'content="1;url=/q"', "href=/h/", "\u00e9",
              "\u0130", "\u212a", "&#114;", " ", "\t", "x" * 900, "y" * 2000]
    bodies = list(_SCAN_BODIES)
    for _ in range(400):
        bodies.append("".join(rng.choice(pieces) for _ in range(rng.randint(1, 24))))
    for i, body in enumerate(bodies):
        for encoding in ("utf-8", "cp1252", "shift_jis", "utf-16"):
            if i >= len(_SCAN_BODIES) and encoding in ("shift_jis", "utf-16"):
                continue  # the random bodies once each in two encodings suffice
            yield body, encoding


@pytest.mark.parametrize(
    ("body", "encoding"),
    [pytest.param(*case, id=str(i)) for i, case in enumerate(_scan_cases())],
)
def test_scanned_text_shortcuts_match_w3lib(body, encoding):
    from w3lib import html

    raw = body.encode(encoding, errors="xmlcharrefreplace")
    for prefix in (b"", b"\xef\xbb\xbf") if encoding == "utf-8" else (b"",):
        url = "http://www.example.com/d/p.html"
        r = HtmlResponse(url, body=prefix + raw, encoding=encoding)
        ref = HtmlResponse(url, body=prefix + raw, encoding=encoding)
        # Scrapy 2's get_meta_refresh: w3lib's, resolved against w3lib's base URL
        base = html.get_base_url(ref.text, ref.url, ref.encoding, max_scan=4096)
        assert get_meta_refresh(r) == html.get_meta_refresh(
            ref.text, base, ref.encoding, max_scan=4096)
        assert get_base_url(r) == html.get_base_url(
            ref.text, ref.url, ref.encoding, max_scan=4096)
        # and in the other order (the pass is shared: whichever comes first makes it)
        r = HtmlResponse(url, body=prefix + raw, encoding=encoding)
        assert get_base_url(r) == html.get_base_url(
            ref.text, ref.url, ref.encoding, max_scan=4096)
        # Scrapy 2's get_meta_refresh: w3lib's, resolved against w3lib's base URL
        base = html.get_base_url(ref.text, ref.url, ref.encoding, max_scan=4096)
        assert get_meta_refresh(r) == html.get_meta_refresh(
            ref.text, base, ref.encoding, max_scan=4096)


def test_a_page_without_a_refresh_meta_is_answered_without_w3lib_scan(monkeypatch):
    from w3lib import html

    def refuse(*args, **kwargs):
        raise AssertionError("w3lib scanned a page that cannot declare a refresh")

    monkeypatch.setattr(html, "get_meta_refresh", refuse)
    monkeypatch.setattr(html, "get_base_url", refuse)
    body = (b'<html><head><meta charset="utf-8"><meta name="description" content="d">'
            b"<title>t</title></head><body><main>" + b"<p>x</p>" * 900 + b"</main></body>")
    r = HtmlResponse("http://www.example.com/a", body=body)
    assert get_meta_refresh(r) == (None, None)
    assert get_base_url(r) == "http://www.example.com/a"


def test_only_two_non_ascii_characters_lower_to_ascii():
    # what the ASCII case-insensitive matches of "<meta", "<base" and "refresh" rest on
    import sys

    lowered = [c for c in range(128, sys.maxunicode + 1)
               if any(ord(ch) < 128 for ch in chr(c).lower())]
    assert lowered == [0x130, 0x212A]
    assert chr(0x130).lower() == "i\u0307" and chr(0x212A).lower() == "k"
