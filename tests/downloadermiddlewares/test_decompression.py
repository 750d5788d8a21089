"""DecompressionMiddleware: archive bodies (tar, zip, gzip, bzip2) made here."""

import bz2
import gzip
import io
import tarfile
import zipfile

import pytest

from crawlfw.downloadermiddlewares.decompression import DecompressionMiddleware
from crawlfw.http import HtmlResponse, Request, Response, XmlResponse

FEED = b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title></channel></rss>'
PAGE = b"<html><head><title>x</title></head><body>hello</body></html>"


def tar_of(name, data, mode="w"):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    if mode == "w:gz":  # gzipped here with no time in the header: the same bytes each run
        return gzip.compress(out.getvalue(), mtime=0)
    return out.getvalue()


def zip_of(name, data):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:  # a fixed date: the same bytes (test ids) each run
        z.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return out.getvalue()


@pytest.mark.parametrize(
    "body, expected_body, expected_cls",
    [
        (tar_of("feed.xml", FEED), FEED, XmlResponse),
        (tar_of("page.html", PAGE, mode="w:gz"), PAGE, HtmlResponse),
        (zip_of("feed.xml", FEED), FEED, XmlResponse),
        (gzip.compress(PAGE, mtime=0), PAGE, HtmlResponse),
        (bz2.compress(FEED), FEED, XmlResponse),
    ],
)
def test_archives(body, expected_body, expected_cls):
    response = Response("http://example.com/archive", body=body)
    result = DecompressionMiddleware().process_response(Request(response.url), response, None)
    assert result.body == expected_body
    assert type(result) is expected_cls


@pytest.mark.parametrize("body", [b"", b"plain text body", PAGE, b"\x1f\x8bnot really gzip"])
def test_not_archives(body):
    response = Response("http://example.com/file", body=body)
    assert (
        DecompressionMiddleware().process_response(Request(response.url), response, None)
        is response
    )
