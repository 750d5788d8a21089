import subprocess
import sys
import textwrap

import pytest

from crawlfw.http import Headers, HtmlResponse, JsonResponse, Response, TextResponse, XmlResponse
from crawlfw.responsetypes import ResponseTypes, responsetypes
from crawlfw.utils.test import get_testenv


@pytest.mark.parametrize(
    ("mimetype", "cls"),
    [
        ("text/html", HtmlResponse),
        ("application/atom+xml", XmlResponse),
        ("application/rdf+xml", XmlResponse),
        ("application/rss+xml", XmlResponse),
        ("application/xhtml+xml", HtmlResponse),
        ("application/vnd.wap.xhtml+xml", HtmlResponse),
        ("application/xml", XmlResponse),
        ("text/xml", XmlResponse),
        ("application/json", JsonResponse),
        ("application/x-json", JsonResponse),
        ("application/javascript", TextResponse),
        ("application/x-javascript", TextResponse),
        ("text/plain", TextResponse),
        ("text/csv", TextResponse),
        ("text/css", TextResponse),
        ("text/anything-else", TextResponse),
        ("application/octet-stream", Response),
        ("application/pdf", Response),
        ("image/png", Response),
        ("application/x-gzip", Response),
        (None, Response),
    ],
)
def test_from_mimetype(mimetype, cls):
    assert responsetypes.from_mimetype(mimetype) is cls


@pytest.mark.parametrize(
    ("content_type", "content_encoding", "cls"),
    [
        (b"text/html; charset=UTF-8", None, HtmlResponse),
        ("text/html; charset=UTF-8", None, HtmlResponse),
        (b"TEXT/HTML", None, HtmlResponse),
        (b"  text/xml ; charset=utf-8", None, XmlResponse),
        (b"application/json", None, JsonResponse),
        (b"application/octet-stream", None, Response),
        (b"text/html", b"gzip", Response),
        (b"", None, Response),
    ],
)
def test_from_content_type(content_type, content_encoding, cls):
    assert responsetypes.from_content_type(content_type, content_encoding) is cls
    # the cached answer is the same
    assert responsetypes.from_content_type(content_type, content_encoding) is cls


@pytest.mark.parametrize(
    ("value", "cls"),
    [
        (b"attachment; filename=data.xml", XmlResponse),
        (b"attachment; filename=html.html", HtmlResponse),
        (b'attachment; filename="data.txt"', TextResponse),
        (b"attachment; filename='page.htm'", HtmlResponse),
        (b"attachment; filename=data.tar.gz", Response),
        (b"attachment; filename=photo.jpg", Response),
        (b"attachment", Response),
        (b"attachment; filename=\xf1.html", HtmlResponse),
        ("attachment; filename=data.xml", XmlResponse),
    ],
)
def test_from_content_disposition(value, cls):
    assert responsetypes.from_content_disposition(value) is cls


@pytest.mark.parametrize(
    ("filename", "cls"),
    [
        ("data.bin", Response),
        ("file.txt", TextResponse),
        ("file.xml.gz", Response),
        ("file.xml", XmlResponse),
        ("file.html", HtmlResponse),
        ("file.HTML", HtmlResponse),
        ("file.xhtml", HtmlResponse),
        ("feed.rss", XmlResponse),
        ("feed.atom", XmlResponse),
        ("data.json", JsonResponse),
        ("style.css", TextResponse),
        ("file.unknownext", Response),
        ("archive.tgz", Response),
        ("noext", Response),
        ("http://www.example.com/page.html", HtmlResponse),
        ("http://www.example.com/sitemap.xml", XmlResponse),
        ("http://www.example.com/sitemap.xml.gz", Response),
        ("http://www.example.com/", Response),
        ("http://127.0.0.1:8080", Response),
        ("data:text/html,<p>x</p>", HtmlResponse),
    ],
)
def test_from_filename(filename, cls):
    assert responsetypes.from_filename(filename) is cls
    assert responsetypes.from_filename(filename) is cls  # cached path


@pytest.mark.parametrize(
    ("body", "cls"),
    [
        (b"\x03\x02\xdf\xdd\x23", Response),
        (b"Some plain text\ndata with tabs\t and null bytes\0", TextResponse),
        (b"<html><head><title>Hello</title></head>", HtmlResponse),
        (b"<HTML><body>upper</body></HTML>", HtmlResponse),
        (b'<?xml version="1.0" encoding="utf-8"', XmlResponse),
        (b"", TextResponse),
        (b"x" * 6000 + b"<html>", TextResponse),  # only the first 5000 bytes are sniffed
    ],
)
def test_from_body(body, cls):
    assert responsetypes.from_body(body) is cls


@pytest.mark.parametrize(
    ("headers", "cls"),
    [
        ({"Content-Type": ["text/html; charset=utf-8"]}, HtmlResponse),
        ({"Content-Type": ["text/html; charset=utf-8"], "Content-Encoding": ["gzip"]}, Response),
        (
            {
                "Content-Type": ["application/octet-stream"],
                "Content-Disposition": ["attachment; filename=data.txt"],
            },
            TextResponse,
        ),
        ({"Content-Disposition": ["attachment; filename=data.xml"]}, XmlResponse),
        ({}, Response),
    ],
)
def test_from_headers(headers, cls):
    assert responsetypes.from_headers(Headers(headers)) is cls


@pytest.mark.parametrize(
    ("kwargs", "cls"),
    [
        # headers decide first
        (
            {"headers": Headers({"Content-Type": "text/xml"}), "url": "http://x.com/a.html"},
            XmlResponse,
        ),
        # then the url
        (
            {
                "headers": Headers({"Content-Type": "application/octet-stream"}),
                "url": "http://x.com/a.html",
            },
            HtmlResponse,
        ),
        (
            {"url": "http://www.example.com/item/", "body": b"<html><body>x</body></html>"},
            HtmlResponse,
        ),
        # then the filename, then the body
        ({"filename": "file.xml"}, XmlResponse),
        ({"url": "http://www.example.com/data.bin", "filename": "file.txt"}, TextResponse),
        (
            {"url": "http://www.example.com/item/", "body": b'<?xml version="1.0"?><r/>'},
            XmlResponse,
        ),
        ({"body": b"text with a NUL\x00 byte"}, TextResponse),  # NUL is allowed in text
        ({"body": b"\x01\x02\x03binary"}, Response),
        ({}, Response),
        # a compressed body is binary whatever its type
        (
            {
                "headers": Headers({"Content-Type": "text/html", "Content-Encoding": "gzip"}),
                "body": b"\x1f\x8b\x08",
            },
            Response,
        ),
    ],
)
def test_from_args(kwargs, cls):
    assert responsetypes.from_args(**kwargs) is cls


def test_from_args_with_raw_pairs_headers():
    h = Headers.from_raw_pairs([(b"content-type", b"text/html; charset=iso-8859-1")])
    assert responsetypes.from_args(headers=h, url="http://e.com/", body=b"") is HtmlResponse


def test_custom_classes_mapping():
    class CsvResponse(TextResponse):
        pass

    class MyTypes(ResponseTypes):
        CLASSES = dict(ResponseTypes.CLASSES, **{"text/csv": CsvResponse})

    rt = MyTypes()
    assert rt.from_mimetype("text/csv") is CsvResponse
    assert rt.from_mimetype("text/plain") is TextResponse
    assert responsetypes.from_mimetype("text/csv") is TextResponse


def test_module_instance():
    assert isinstance(responsetypes, ResponseTypes)


def test_the_extension_table_is_read_on_first_use_and_can_be_replaced():
    # start-up (#20): the system's mime.types files are read when a class is first
    # chosen by file name, not when crawlfw.responsetypes is imported
    import mimetypes

    from crawlfw.http import HtmlResponse, Response, XmlResponse
    from crawlfw.responsetypes import ResponseTypes

    types = ResponseTypes()
    assert types._mimetypes is None
    assert types.from_content_type(b"text/html") is HtmlResponse
    assert types._mimetypes is None
    assert types.from_filename("feed.rss") is XmlResponse  # one of Scrapy's extra types
    assert isinstance(types.mimetypes, mimetypes.MimeTypes)
    table = mimetypes.MimeTypes()
    table.types_map[1].pop(".rss", None)
    types = ResponseTypes()
    types.mimetypes = table
    assert types.from_filename("feed.rss") is Response


@pytest.mark.slow
def test_a_process_out_of_file_descriptors_still_chooses_by_file_name():
    # The first MimeTypes() of a process has the mimetypes module read the system's
    # files; out of descriptors (EMFILE) that read raises: the choice by file name must
    # still answer (it never used those files), not fail the response.
    code = textwrap.dedent("""
        import mimetypes, os, resource
        from crawlfw.http import Response, XmlResponse
        from crawlfw.responsetypes import ResponseTypes
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
        held = []
        try:
            while True:
                held.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            pass
        known = [f for f in mimetypes.knownfiles if os.path.isfile(f)]
        types = ResponseTypes()
        print(types.from_filename("feed.rss").__name__, types.from_filename("a.bin").__name__,
              bool(known), mimetypes.inited)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=get_testenv(), timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[:2] == ["XmlResponse", "Response"], out.stdout


def test_json_response_scrapy_2_19():
    # Scrapy 2.19 gives JsonResponse for these (issue 29)
    for mimetype in ("application/json", "application/x-json",
                     "application/json-amazonui-streaming"):
        assert responsetypes.from_mimetype(mimetype) is JsonResponse
    response = responsetypes.from_args(headers=Headers({"Content-Type": "application/json"}),
                                       url="http://e.com/a", body=b'{"a": [1, 2]}')
    assert response is JsonResponse and issubclass(JsonResponse, TextResponse)
    made = JsonResponse("http://e.com/a", body=b'{"a": [1, 2]}', encoding="utf-8")
    assert made.json() == {"a": [1, 2]}
    assert made.replace(body=b"[3]").json() == [3]
    from crawlfw.http.response.json import JsonResponse as same

    assert same is JsonResponse
