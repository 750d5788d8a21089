"""HttpCompressionMiddleware: every coding on bytes made here with zlib/gzip/brotli,
chained and unknown codings, class re-detection, size limits; and a real server that
compresses a real page according to the request's Accept-Encoding."""

import gzip
import logging
import zlib

import pytest

from crawlfw.downloadermiddlewares import httpcompression
from crawlfw.downloadermiddlewares.httpcompression import HttpCompressionMiddleware
from crawlfw.exceptions import IgnoreRequest, NotConfigured
from crawlfw.http import HtmlResponse, Request, Response, TextResponse
from tests.downloadermiddlewares._support import (
    ScriptedServer,
    close_crawler,
    fetch,
    get_crawler,
)

try:
    import brotli
except ImportError:  # brotli is optional: only the br cases are skipped
    brotli = None

try:
    import zstandard
except ImportError:  # zstandard is optional: only the zstd cases are skipped
    zstandard = None

needs_brotli = pytest.mark.skipif(brotli is None, reason="brotli is not installed")
needs_zstd = pytest.mark.skipif(zstandard is None, reason="zstandard is not installed")

PAGE = (
    b"<html><head><meta charset='iso-8859-1'><title>caf\xe9</title></head><body>"
    + b"<p>quote</p>" * 500
    + b"</body></html>"
)


def raw_deflate(data):
    c = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


ENCODERS = {
    "gzip": gzip.compress,
    "x-gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": lambda b: brotli.compress(b),
    "zstd": lambda b: zstandard.ZstdCompressor().compress(b),
    "identity": lambda b: b,
}


@pytest.fixture
def mw():
    crawler = get_crawler()
    yield HttpCompressionMiddleware.from_crawler(crawler)
    close_crawler(crawler)


def test_accept_encoding(mw):
    request = Request("http://example.com/")
    mw.process_request(request, None)
    assert request.headers[b"Accept-Encoding"] == (
        b"gzip,deflate" + (b",br" if brotli else b"") + (b",zstd" if zstandard else b"")
    )
    request = Request("http://example.com/", headers={"Accept-Encoding": "identity"})
    mw.process_request(request, None)
    assert request.headers[b"Accept-Encoding"] == b"identity"


@pytest.mark.parametrize(
    "content_encoding, encode",
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("GZIP", gzip.compress),
        ("deflate", zlib.compress),  # RFC 1950 zlib stream, as the RFC says
        ("deflate", raw_deflate),  # raw RFC 1951 stream, as some servers send
        pytest.param("br", ENCODERS["br"], marks=needs_brotli),
        pytest.param("zstd", ENCODERS["zstd"], marks=needs_zstd),
        ("identity", ENCODERS["identity"]),
        # codings listed in the order applied: gzip first
        pytest.param("gzip, br", lambda b: brotli.compress(gzip.compress(b)), marks=needs_brotli),
        ("deflate,gzip", lambda b: gzip.compress(zlib.compress(b))),
    ],
)
def test_decodes(mw, content_encoding, encode):
    body = encode(PAGE)
    request = Request("http://example.com/page")
    response = Response(
        "http://example.com/page",
        headers={"Content-Encoding": content_encoding, "Content-Type": "text/html"},
        body=body,
        request=request,
    )
    result = mw.process_response(request, response, None)
    assert result.body == PAGE
    assert b"Content-Encoding" not in result.headers
    assert type(result) is HtmlResponse
    # the encoding is detected from the decoded body (meta charset)
    assert result.encoding == "cp1252"
    assert "café" in result.text


def test_repicks_response_class_from_decoded_body(mw):
    response = Response(
        "http://example.com/download",
        headers={"Content-Encoding": "gzip", "Content-Type": "application/octet-stream"},
        body=gzip.compress(b"<html><head></head><body>hi</body></html>"),
    )
    result = mw.process_response(Request(response.url), response, None)
    assert isinstance(result, HtmlResponse)


@pytest.mark.parametrize(
    "content_encoding, remaining",
    [("compress", b"compress"), ("compress, gzip", b"compress"), ("zstdx", b"zstdx")],
)
def test_unknown_coding_is_kept(mw, content_encoding, remaining):
    body = gzip.compress(b"data") if content_encoding.endswith("gzip") else b"opaque"
    response = Response(
        "http://example.com/", headers={"Content-Encoding": content_encoding}, body=body
    )
    result = mw.process_response(Request(response.url), response, None)
    assert result.headers[b"Content-Encoding"] == remaining
    if content_encoding.endswith("gzip"):
        assert result.body == b"data"
    else:
        assert result is response


def test_head_and_plain_responses_untouched(mw):
    response = Response("http://example.com/", headers={"Content-Encoding": "gzip"}, body=b"")
    assert mw.process_response(Request(response.url, method="HEAD"), response, None) is response
    plain = TextResponse("http://example.com/", body=b"abc", encoding="utf-8")
    assert mw.process_response(Request(plain.url), plain, None) is plain


def test_truncated_gzip_keeps_what_decodes(mw):
    body = gzip.compress(PAGE)
    response = Response(
        "http://example.com/x.html",
        headers={"Content-Encoding": "gzip"},
        body=body[: len(body) // 2],
    )
    result = mw.process_response(Request(response.url), response, None)
    assert 0 < len(result.body) < len(PAGE) and PAGE.startswith(result.body)


def test_corrupt_body_raises(mw):
    response = Response("http://example.com/", headers={"Content-Encoding": "gzip"}, body=b"nope")
    with pytest.raises(OSError):
        mw.process_response(Request(response.url), response, None)


@pytest.mark.parametrize("coding", ["gzip", "deflate", pytest.param("br", marks=needs_brotli),
                                    pytest.param("zstd", marks=needs_zstd)])
def test_max_size(coding, caplog):
    crawler = get_crawler({"DOWNLOAD_MAXSIZE": 1000, "DOWNLOAD_WARNSIZE": 500})
    try:
        mw = HttpCompressionMiddleware.from_crawler(crawler)
        body = ENCODERS[coding](b"a" * 5000)
        response = Response("http://example.com/", headers={"Content-Encoding": coding}, body=body)
        caplog.set_level(logging.WARNING)
        with pytest.raises(IgnoreRequest, match="larger than the download max size"):
            mw.process_response(Request(response.url), response, None)
        # the drop leaves a WARNING naming the URL and sizes, and is counted
        (dropped,) = [r for r in caplog.records if "Ignored response" in r.getMessage()]
        assert dropped.levelno == logging.WARNING
        assert f"<200 http://example.com/> because its body ({len(body)} bytes" in (
            dropped.getMessage())
        assert "download max size (1000 bytes)" in dropped.getMessage()
        assert crawler.stats.get_value("httpcompression/response_dropped/maxsize") == 1
        # the meta key overrides the setting; the warning size still applies
        request = Request(response.url, meta={"download_maxsize": 10_000})
        assert len(mw.process_response(request, response, None).body) == 5000
        assert "larger than the download warning size (500 bytes)" in caplog.text
    finally:
        close_crawler(crawler)


def test_disabled():
    crawler = get_crawler({"COMPRESSION_ENABLED": False})
    try:
        with pytest.raises(NotConfigured):
            HttpCompressionMiddleware.from_crawler(crawler)
    finally:
        close_crawler(crawler)


def test_without_brotli_br_is_not_decoded(monkeypatch):
    monkeypatch.setattr(httpcompression, "brotli", None)
    mw = HttpCompressionMiddleware()
    response = Response(
        "http://example.com/", headers={"Content-Encoding": "br"}, body=b"\x0b\x00\x80x\x03"
    )
    # undecodable here: left as is for the spider
    assert mw.process_response(Request(response.url), response, None) is response


def _compressing(handler):
    """Answer with the quotes.toscrape.com front page, compressed as the client asked."""
    accepted = [c.strip() for c in (handler.headers.get("Accept-Encoding") or "").split(",")]
    for coding in accepted:
        if coding in ENCODERS:
            page = handler.server.page
            return (
                200,
                [("Content-Type", "text/html; charset=utf-8"), ("Content-Encoding", coding)],
                ENCODERS[coding](page),
            )
    return 406, [], b""


@pytest.mark.parametrize(
    "accept", ["gzip", "deflate", pytest.param("br", marks=needs_brotli), None]
)
def test_real_server(mw, sites_dir, accept):
    page = (sites_dir / "quotes.toscrape.com" / "index.html").read_bytes()
    with ScriptedServer({"/": _compressing}) as server:
        server.httpd.page = page
        headers = {"Accept-Encoding": accept} if accept else {}
        request = Request(server.url + "/", headers=headers)
        mw.process_request(request, None)
        response = fetch(request)
        expected_coding = accept or "gzip"  # the default header lists gzip first
        assert response.headers[b"Content-Encoding"] == expected_coding.encode()
        assert response.body != page
        result = mw.process_response(request, response, None)
    assert result.body == page
    assert isinstance(result, HtmlResponse)
    assert result.css("title::text").get().strip() == "Quotes to Scrape"


# -- Scrapy 2.19's constructor and open_spider (issue 29) ------------------------------

def test_scrapy2_constructor_and_spider_attributes():
    from crawlfw import signals
    from crawlfw.exceptions import CrawlfwDeprecationWarning
    from tests.downloadermiddlewares._support import close_crawler, get_crawler

    crawler = get_crawler({"DOWNLOAD_MAXSIZE": 100, "DOWNLOAD_WARNSIZE": 50})
    try:
        mw = HttpCompressionMiddleware(crawler=crawler)
        assert (mw._max_size, mw._warn_size, mw._stats) == (100, 50, crawler.stats)
        assert HttpCompressionMiddleware(None)._max_size == 0  # Scrapy's first argument: stats

        class Old:
            download_maxsize = 10

        with pytest.warns(CrawlfwDeprecationWarning, match="'download_maxsize' spider attribute"):
            crawler.signals.send_catch_log(signals.spider_opened, spider=Old())
        assert mw._max_size == 10
        request = Request("http://e.com/")
        body = gzip.compress(b"x" * 20)
        response = Response("http://e.com/", body=body, headers={"Content-Encoding": "gzip"},
                            request=request)
        with pytest.raises(IgnoreRequest):
            mw.process_response(request, response, Old())
    finally:
        close_crawler(crawler)


def test_get_header_and_status_size():
    from crawlfw.downloadermiddlewares.stats import get_header_size, get_status_size

    # Scrapy 2.19's values
    assert get_status_size(200) == 17 and get_status_size(404) == 24
    assert get_status_size(999) == 15
    assert get_header_size({b"Content-Type": [b"text/html"], b"X": [b"a", b"bb"]}) == 34
