import codecs
import functools

import pytest

from crawlfw.exceptions import NotSupported
from crawlfw.http import (
    Headers,
    HtmlResponse,
    Request,
    Response,
    TextResponse,
    XmlResponse,
)

# --- Response ----------------------------------------------------------------------------


def test_defaults():
    r = Response("http://www.example.com")
    assert r.url == "http://www.example.com"
    assert r.status == 200
    assert isinstance(r.headers, Headers)
    assert len(r.headers) == 0
    assert r.body == b""
    assert r.flags == []
    assert r.request is None


def test_every_argument_is_stored():
    req = Request("http://www.example.com/r")
    r = Response(
        "http://www.example.com/x",
        status="404",
        headers={"Content-Type": "text/plain"},
        body=b"gone",
        flags=["cached"],
        request=req,
    )
    assert r.status == 404
    assert r.headers["content-type"] == b"text/plain"
    assert r.body == b"gone"
    assert r.flags == ["cached"]
    assert r.request is req


@pytest.mark.parametrize("url", [None, b"http://example.com", 1])
def test_url_must_be_str(url):
    with pytest.raises(TypeError, match=f"Response url must be str, got {type(url).__name__}"):
        Response(url)


@pytest.mark.parametrize("body", ["text", 1, ["a"]])
def test_body_must_be_bytes(body):
    with pytest.raises(TypeError, match="Response body must be bytes, got"):
        Response("http://example.com", body=body)


def test_body_none_is_empty():
    assert Response("http://example.com", body=None).body == b""


def test_status_must_be_integer():
    with pytest.raises(ValueError):
        Response("http://example.com", status="ok")


@pytest.mark.parametrize("attr", ["url", "body"])
def test_url_and_body_read_only(attr):
    r = HtmlResponse("http://example.com", body=b"")
    with pytest.raises(
        AttributeError, match=rf"HtmlResponse\.{attr} is not modifiable, use HtmlResponse\.replace"
    ):
        setattr(r, attr, b"x")


@pytest.mark.parametrize(
    ("status", "url", "text"),
    [
        (200, "http://www.example.com", "<200 http://www.example.com>"),
        (404, "http://example.com/missing", "<404 http://example.com/missing>"),
    ],
)
def test_repr(status, url, text):
    assert repr(Response(url, status=status)) == text
    assert str(HtmlResponse(url, status=status)) == text


def test_meta_is_request_meta():
    req = Request("http://example.com", meta={"a": 1})
    r = Response("http://example.com", request=req)
    assert r.meta is req.meta
    r.meta["b"] = 2
    assert req.meta == {"a": 1, "b": 2}


def test_meta_without_request():
    with pytest.raises(
        AttributeError,
        match="Response.meta not available, this response is not tied to any request",
    ):
        _ = Response("http://example.com").meta


def test_headers_argument_is_copied():
    h = Headers.from_raw_pairs([(b"x-a", b"1")])
    r = Response("http://example.com", headers=h)
    r.headers.appendlist("X-A", "2")
    assert h.getlist("X-A") == [b"1"]
    assert r.headers.getlist("X-A") == [b"1", b"2"]


def test_replace_and_copy():
    req = Request("http://example.com")
    r1 = Response(
        "http://example.com", status=201, headers={"A": "1"}, body=b"b", flags=["f"], request=req
    )
    r2 = r1.replace(status=500, body=b"new")
    assert (r2.status, r2.body, r2.url, r2.request, r2.flags) == (500, b"new", r1.url, req, ["f"])
    assert r2.headers == r1.headers
    r3 = r1.copy()
    assert type(r3) is Response and r3 is not r1
    r3.headers["B"] = "2"
    r3.flags.append("g")
    assert "B" not in r1.headers
    assert r1.flags == ["f"]
    assert r3.request is req


def test_replace_to_other_class():
    r = Response("http://example.com", body=b"<html><body>x</body></html>")
    h = r.replace(cls=HtmlResponse)
    assert type(h) is HtmlResponse
    assert h.text == "<html><body>x</body></html>"


@pytest.mark.parametrize(
    ("base", "rel", "expected"),
    [
        ("http://www.example.com/a/b", "c", "http://www.example.com/a/c"),
        ("http://www.example.com/a/b", "/c", "http://www.example.com/c"),
        ("http://www.example.com/a/b", "//other.org/x", "http://other.org/x"),
        ("http://www.example.com/a/b", "http://x.org/", "http://x.org/"),
        ("http://www.example.com/a/b?q=1", "?q=2", "http://www.example.com/a/b?q=2"),
    ],
)
def test_urljoin(base, rel, expected):
    assert Response(base).urljoin(rel) == expected
    assert TextResponse(base, body=b"").urljoin(rel) == expected


@pytest.mark.parametrize(
    "call",
    [
        lambda r: r.text,
        lambda r: r.body_as_unicode(),
        lambda r: r.css("a"),
        lambda r: r.xpath("//a"),
        lambda r: r.selector,
    ],
    ids=["text", "body_as_unicode", "css", "xpath", "selector"],
)
def test_text_members_not_supported_on_binary(call):
    r = Response("http://example.com", body=b"\x00")
    with pytest.raises(NotSupported, match="^Response content isn't text$"):
        call(r)
    # it is also an AttributeError, so feature tests with hasattr() work
    assert not hasattr(r, "text")


# --- follow ------------------------------------------------------------------------------


class _Link:
    def __init__(self, url):
        self.url = url


def _cb(response):
    return None


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("page/2/", "http://www.example.com/dir/page/2/"),
        ("/abs", "http://www.example.com/abs"),
        ("http://other.org/", "http://other.org/"),
        (_Link("http://link.org/x"), "http://link.org/x"),
        (_Link("rel"), "http://www.example.com/dir/rel"),
        ("caf\u00e9", "http://www.example.com/dir/caf%C3%A9"),
    ],
)
def test_follow(url, expected):
    r = Response("http://www.example.com/dir/index.html")
    req = r.follow(url, callback=_cb, meta={"k": 1}, priority=3, dont_filter=True)
    assert isinstance(req, Request)
    assert req.url == expected
    assert req.callback is _cb
    assert req.meta == {"k": 1}
    assert req.priority == 3
    assert req.dont_filter is True


def test_follow_errors():
    r = Response("http://example.com")
    with pytest.raises(ValueError, match="url can't be None"):
        r.follow(None)
    with pytest.raises(TypeError, match="follow\\(\\) needs a str url"):
        r.follow(42)


def test_follow_all():
    r = Response("http://example.com/a/")
    reqs = list(r.follow_all(["x", _Link("/y")], callback=_cb))
    assert [q.url for q in reqs] == ["http://example.com/a/x", "http://example.com/y"]
    with pytest.raises(ValueError):
        list(r.follow_all(None))


def test_follow_all_checks_urls_at_once():
    r = Response("http://example.com/a/")
    with pytest.raises(TypeError, match="'urls' argument must be an iterable"):
        r.follow_all(42)
    with pytest.raises(ValueError, match="urls can't be None"):
        r.follow_all(None)


_NEXT_PAGES = b"""<html><head><base href="http://example.com/b/"></head><body>
<ul class="pager"><li class="next"><a href="page2.html">Next</a></li></ul>
<a href="/x">x</a><a name="nohref">no href</a><img src="/img.png"></body></html>"""


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"css": "li.next a"}, ["http://example.com/b/page2.html"]),
        ({"css": "li.next a::attr(href)"}, ["http://example.com/b/page2.html"]),
        ({"xpath": "//a"}, ["http://example.com/b/page2.html", "http://example.com/x"]),
        ({"xpath": "//a/@href | //img"}, ["http://example.com/b/page2.html", "http://example.com/x"]),
        ({"urls": ["page3.html", "/y"]}, ["http://example.com/b/page3.html", "http://example.com/y"]),
    ],
)
def test_text_follow_all_css_xpath_urls(kwargs, expected):
    # Scrapy 2: follow_all(css='li.next a', callback=...) needs no urls argument
    r = HtmlResponse("http://example.com/a/", body=_NEXT_PAGES, encoding="utf-8")
    reqs = list(r.follow_all(callback=_cb, priority=2, **kwargs))
    assert [q.url for q in reqs] == expected
    assert all(q.callback is _cb and q.priority == 2 for q in reqs)


def test_text_follow_all_wants_exactly_one_source():
    r = HtmlResponse("http://example.com/a/", body=_NEXT_PAGES, encoding="utf-8")
    for kwargs in ({}, {"urls": ["x"], "css": "a"}, {"css": "a", "xpath": "//a"}):
        with pytest.raises(ValueError, match="exactly one of the following arguments"):
            r.follow_all(**kwargs)
    assert list(r.follow_all(r.css("li.next a")))[0].url == "http://example.com/b/page2.html"


def test_text_follow_uses_base_href_and_response_encoding():
    body = (
        b'<html><head><base href="http://base.org/b/"><meta charset="latin-1"></head>'
        b"<body></body></html>"
    )
    r = HtmlResponse("http://example.com/", body=body)
    req = r.follow("p?q=caf\u00e9")
    assert req.url == "http://base.org/b/p?q=caf%E9"
    assert req.encoding == "cp1252"


def test_text_follow_selectors():
    pytest.importorskip("crawlfw.selector")
    body = b"""<html><body><a href=" /one ">1</a><link href="/two"><img src="/img.png">
    <a name="nohref">x</a></body></html>"""
    r = HtmlResponse("http://example.com/", body=body, encoding="utf-8")
    assert r.follow(r.css("a")[0]).url == "http://example.com/one"
    assert r.follow(r.css("link")[0]).url == "http://example.com/two"
    assert r.follow(r.css("a::attr(href)")[0]).url == "http://example.com/one"
    with pytest.raises(ValueError, match="Only <a> and <link> elements are supported; got <img>"):
        r.follow(r.css("img")[0])
    with pytest.raises(ValueError, match="<a> element has no href attribute"):
        r.follow(r.css("a")[1])


# --- TextResponse: body and text -----------------------------------------------------------


def test_str_body_needs_encoding():
    with pytest.raises(TypeError, match="Cannot convert str body - TextResponse has no encoding"):
        TextResponse("http://example.com", body="caf\u00e9")


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1", "cp1251", "utf-16"])
def test_str_body_encoded_with_encoding(encoding):
    text = "caf\u00e9" if encoding != "cp1251" else "\u043f\u0440\u0438\u0432\u0435\u0442"
    r = TextResponse("http://example.com", body=text, encoding=encoding)
    assert r.body == text.encode(encoding)
    assert r.encoding == encoding
    assert r.text == text


def test_text_is_cached_and_body_as_unicode_alias():
    r = TextResponse("http://example.com", body=b"hello", encoding="utf-8")
    assert r.text is r.text
    assert r.body_as_unicode() is r.text


def test_text_binary_non_text_types_are_text_responses():
    assert issubclass(HtmlResponse, TextResponse)
    assert issubclass(XmlResponse, TextResponse)
    assert issubclass(TextResponse, Response)


def test_replace_keeps_resolved_encoding():
    r = TextResponse(
        "http://example.com",
        body=b"caf\xe9",
        headers={"Content-Type": "text/plain; charset=latin-1"},
    )
    r2 = r.replace(headers={}, body=b"caf\xe9")
    assert r2.encoding == "cp1252"
    assert r2.text == "caf\u00e9"
    r3 = r.replace(encoding="utf-8")
    assert r3.encoding == "utf-8"


def test_replace_text_to_binary_class():
    r = HtmlResponse("http://example.com", body=b"<p>x</p>", encoding="utf-8")
    b = r.replace(cls=Response)
    assert type(b) is Response
    assert b.body == b"<p>x</p>"


def test_replace_with_str_body_uses_encoding():
    r = TextResponse("http://example.com", body=b"", encoding="latin-1")
    assert r.replace(body="caf\u00e9").body == b"caf\xe9"


# --- TextResponse: encoding resolution ----------------------------------------------------

_UTF8_CAFE = "caf\u00e9".encode()
_LATIN1_CAFE = "caf\u00e9".encode("latin-1")


@pytest.mark.parametrize(
    ("cls", "headers", "body", "kwargs", "encoding", "text"),
    [
        # 1. explicit argument beats everything
        (
            HtmlResponse,
            {"Content-Type": "text/html; charset=utf-8"},
            _LATIN1_CAFE,
            {"encoding": "latin-1"},
            "latin-1",
            "caf\u00e9",
        ),
        # 2. header charset (labels resolved per WHATWG: latin-1 -> cp1252)
        (
            TextResponse,
            {"Content-Type": "text/plain; charset=ISO-8859-1"},
            _LATIN1_CAFE,
            {},
            "cp1252",
            "caf\u00e9",
        ),
        (
            TextResponse,
            {"Content-Type": 'text/plain; charset="utf-8"'},
            _UTF8_CAFE,
            {},
            "utf-8",
            "caf\u00e9",
        ),
        (
            TextResponse,
            {"Content-Type": "text/plain; charset=gb2312"},
            "\u4e2d".encode("gb2312"),
            {},
            "gb18030",
            "\u4e2d",
        ),
        # header beats <meta>
        (
            HtmlResponse,
            {"Content-Type": "text/html; charset=utf-8"},
            b'<meta charset="latin-1">' + _UTF8_CAFE,
            {},
            "utf-8",
            '<meta charset="latin-1">caf\u00e9',
        ),
        # 3. BOM beats header and meta
        (
            HtmlResponse,
            {"Content-Type": "text/html; charset=latin-1"},
            codecs.BOM_UTF8 + b'<meta charset="latin-1">' + _UTF8_CAFE,
            {},
            "utf-8",
            '<meta charset="latin-1">caf\u00e9',
        ),
        (
            TextResponse,
            {},
            codecs.BOM_UTF16_LE + "caf\u00e9".encode("utf-16-le"),
            {},
            "utf-16-le",
            "caf\u00e9",
        ),
        # 4. meta charset / http-equiv / XML declaration
        (
            HtmlResponse,
            {},
            b'<html><head><meta charset="latin-1"></head>' + _LATIN1_CAFE,
            {},
            "cp1252",
            None,
        ),
        (
            HtmlResponse,
            {"Content-Type": "text/html"},
            b'<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">'
            + "\u0434\u0430".encode("koi8-r"),
            {},
            "koi8-r",
            None,
        ),
        (
            XmlResponse,
            {},
            b'<?xml version="1.0" encoding="iso-8859-1"?><r>' + _LATIN1_CAFE + b"</r>",
            {},
            "cp1252",
            None,
        ),
        # 5. detection: ascii -> cp1252, valid utf-8 -> utf-8, else cp1252
        (TextResponse, {}, b"plain ascii", {}, "cp1252", "plain ascii"),
        (TextResponse, {}, _UTF8_CAFE, {}, "utf-8", "caf\u00e9"),
        (TextResponse, {}, _LATIN1_CAFE, {}, "cp1252", "caf\u00e9"),
        (
            HtmlResponse,
            {"Content-Type": "text/html"},
            b"<p>" + _UTF8_CAFE + b"</p>",
            {},
            "utf-8",
            None,
        ),
        # an unknown label falls through to the next source
        (
            TextResponse,
            {"Content-Type": "text/plain; charset=bogus-enc"},
            _UTF8_CAFE,
            {},
            "utf-8",
            "caf\u00e9",
        ),
        # UTF-7 is refused (WHATWG): falls through
        (
            TextResponse,
            {"Content-Type": "text/plain; charset=utf-7"},
            b"a+ADw-b",
            {},
            "cp1252",
            "a+ADw-b",
        ),
    ],
)
def test_encoding_resolution(cls, headers, body, kwargs, encoding, text):
    r = cls("http://example.com", headers=headers, body=body, **kwargs)
    assert r.encoding == encoding
    if text is not None:
        assert r.text == text
    if "caf" in r.text:
        assert "caf\u00e9" in r.text


def test_mislabelled_page_header_wins_and_bad_bytes_are_replaced():
    # a cp1252 page served as utf-8: the label wins, invalid bytes become U+FFFD
    r = HtmlResponse(
        "http://example.com",
        headers={"Content-Type": "text/html; charset=utf-8"},
        body=b"<p>caf\xe9 \x93quoted\x94</p>",
    )
    assert r.encoding == "utf-8"
    assert r.text == "<p>caf\ufffd \ufffdquoted\ufffd</p>"


def test_mislabelled_meta_with_correct_header():
    # <meta> says utf-8, header says windows-1252: the header (transport) wins
    r = HtmlResponse(
        "http://example.com",
        headers={"Content-Type": "text/html; charset=windows-1252"},
        body=b'<meta charset="utf-8"><p>\x93quoted\x94</p>',
    )
    assert r.encoding == "cp1252"
    assert r.text.endswith("<p>\u201cquoted\u201d</p>")


def test_empty_content_type_header():
    r = TextResponse("http://example.com", headers={"Content-Type": []}, body=b"caf\xc3\xa9")
    assert r.encoding == "utf-8"
    assert r.text == "caf\u00e9"


def test_content_type_header_read_per_response():
    body = b"caf\xc3\xa9"
    r1 = TextResponse(
        "http://example.com", body=body, headers={"Content-Type": "text/plain; charset=utf-8"}
    )
    r2 = TextResponse(
        "http://example.com", body=body, headers={"Content-Type": "text/plain; charset=latin-1"}
    )
    assert (r1.encoding, r2.encoding) == ("utf-8", "cp1252")
    assert r1.text == "caf\u00e9"
    assert r2.text == "caf\u00c3\u00a9"


# --- TextResponse: urljoin, selector ----------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            b'<html><head><base href="http://www.other.org/dir/"></head></html>',
            "http://www.other.org/dir/x",
        ),
        (b'<html><head><base href="/root/"></head></html>', "http://www.example.com/root/x"),
        (b'<html><head><base target="_blank"></head></html>', "http://www.example.com/a/x"),
        (b"<html><head></head></html>", "http://www.example.com/a/x"),
    ],
)
def test_urljoin_honours_base_href(body, expected):
    r = HtmlResponse("http://www.example.com/a/page.html", body=body)
    assert r.urljoin("x") == expected


def test_selector_built_once_and_shortcuts():
    pytest.importorskip("crawlfw.selector")
    from crawlfw.selector import Selector

    r = HtmlResponse(
        "http://example.com",
        body=b"<html><body><p class='a'>one</p><p>two</p></body></html>",
        encoding="utf-8",
    )
    sel = r.selector
    assert isinstance(sel, Selector)
    assert r.selector is sel
    assert r.xpath("//p/text()").extract() == ["one", "two"]
    assert r.css("p.a::text").extract() == ["one"]


def test_xml_response_selector_is_xml():
    pytest.importorskip("crawlfw.selector")
    r = XmlResponse("http://example.com/f.xml", body=b"<?xml version='1.0'?><r><Item>1</Item></r>")
    assert r.selector.type == "xml"
    assert r.xpath("//Item/text()").extract() == ["1"]


def test_real_page_encoding_and_text(sites_dir):
    body = (sites_dir / "scrapy-docs-2019" / "faq.html").read_bytes()
    r = HtmlResponse("https://docs.scrapy.org/en/latest/faq.html", body=body)
    assert r.encoding == "utf-8"  # from <meta charset="utf-8">
    assert "Frequently Asked Questions" in r.text


# --- TextResponse._utf8_text: the body handed to the parser instead of the text encoded again


def _utf8_cases():
    page = "<html><head><title>caf\u00e9</title></head><body><p>\u00fc \u20ac</p></body></html>\n"
    bodies = [
        page.encode("utf-8"),
        b"\xef\xbb\xbf" + page.encode("utf-8"),  # a UTF-8 BOM (w3lib strips it)
        codecs.BOM_UTF16_LE + page.encode("utf-16-le"),
        page.encode("utf-8")[:40] + b"\xff\xfe bad bytes" + page.encode("utf-8")[40:],
        page.replace("\u20ac", "\ufffd").encode("utf-8"),  # a U+FFFD of its own
        b"\xed\xa0\x80 a surrogate",
        page.encode("cp1252", "replace"),
        b'<meta charset="latin-1"><p>caf\xe9</p>',
        b'<meta charset="utf8"><p>caf\xc3\xa9</p>',
        b"<p>plain ascii</p>",
        b"",
        b"  \n<p>x</p>\x00 \n",
    ]
    headers = [{}, {"Content-Type": "text/html; charset=UTF8"},
               {"Content-Type": "text/html; charset=iso-8859-1"},
               {"Content-Type": "text/html; charset=utf-16"}]
    for cls in (HtmlResponse, TextResponse, XmlResponse):
        for body in bodies:
            for header in headers:
                for encoding in (None, "utf-8", "latin-1"):
                    yield cls, body, header, encoding


@pytest.mark.parametrize(("cls", "body", "headers", "encoding"), list(_utf8_cases()))
def test_utf8_text_is_the_text_encoded(cls, body, headers, encoding):
    from crawlfw.selector import Selector, _lxml

    for first in ("text", "encoding"):
        r = cls("http://example.com/", body=body, headers=headers, encoding=encoding)
        getattr(r, first)
        utf8 = r._utf8_text()
        assert utf8 is None or utf8 == r.text.encode("utf-8")
        ref = _lxml._document_bytes(r.text)
        assert _lxml._document_bytes(r.text, utf8) == ref
        if cls is not TextResponse or body.startswith(b"<"):
            sel = Selector(response=r)
            assert sel.root is not None
            assert sel.xpath("string(.)").get() == Selector(text=r.text, type=sel.type).xpath(
                "string(.)").get()


def test_utf8_text_is_taken_for_a_plain_utf8_page():
    body = "<html><p>caf\u00e9</p></html>".encode()
    for r in (HtmlResponse("http://e.com/", body=body, headers={"Content-Type": "text/html"}),
              HtmlResponse("http://e.com/", body=body, encoding="utf8")):
        assert r._utf8_text() is None  # nothing decoded yet
        assert r.text
        assert r._utf8_text() is body

    class Transformed(HtmlResponse):
        @property
        def text(self):
            return super().text.upper()

    r = Transformed("http://e.com/", body=body, encoding="utf-8")
    assert r.text
    assert r._utf8_text() is None


# --- TextResponse.follow with a str: the shortcut gives what Response.follow gives -----------


def _request_state(req):
    return (type(req), req.url, req.method, req.headers.to_unicode_dict(), req.body,
            req.cookies, req.meta, req.encoding, req.priority, req.dont_filter,
            req.callback, req.errback, req.flags, req.cb_kwargs)


_FOLLOW_BODIES = [
    b"<html><head><title>x</title></head></html>",
    b'<html><head><base href="http://other.org/b/"></head></html>',
    '<html><head><meta charset="latin-1"></head><p>caf\u00e9</p></html>'.encode("latin-1"),
]
_FOLLOW_URLS = ["x", "/abs", "../up", "?q=\u00e9", "#f", "http://e.org/X Y", "caf\u00e9",
                "//h.org/p", "", " spaced ", "javascript:void(0)"]
_FOLLOW_KWARGS = [
    {},
    {"callback": _cb, "errback": _cb, "meta": {"k": 1}, "priority": 3, "dont_filter": True,
     "flags": ["f"], "cb_kwargs": {"a": 1}},
    {"method": "post", "headers": {"X-A": "1"}, "body": "b\u00e9", "cookies": {"c": "1"},
     "encoding": "latin-1"},
]


def _follow_outcome(follow, url, kwargs):
    try:
        return _request_state(follow(url, **kwargs))
    except ValueError as e:  # e.g. "Missing scheme in request url: javascript:void(0)"
        return ValueError, str(e)


@pytest.mark.parametrize("body", _FOLLOW_BODIES)
def test_text_follow_of_a_str_is_response_follow(body):
    from crawlfw.http.response import Response as Base

    for url in _FOLLOW_URLS:
        for kwargs in _FOLLOW_KWARGS:
            fast = HtmlResponse("http://www.example.com/dir/p.html", body=body)
            slow = HtmlResponse("http://www.example.com/dir/p.html", body=body)
            general = dict(kwargs, encoding=kwargs.get("encoding") or slow.encoding)
            assert _follow_outcome(fast.follow, url, kwargs) == _follow_outcome(
                functools.partial(Base.follow, slow), url, general), (url, kwargs)


def test_text_follow_honours_an_overridden_follow_url():
    class Rewriting(HtmlResponse):
        def _follow_url(self, url):
            return super()._follow_url(url + "?rewritten")

    r = Rewriting("http://e.com/", body=b"<html></html>")
    assert r.follow("x").url == "http://e.com/x?rewritten"


# --- the memoized decoding of TextResponse.text gives html_to_unicode's answer -----------


_DECODE_NAMES = ["utf-8", "UTF-8", "utf8", "cp1252", "latin-1", "iso-8859-2", "ascii",
                 "gb2312", "gb18030", "shift_jis", "cp932", "utf-16", "utf-16-le",
                 "UTF-32", "utf-32-be", "utf-7", "x-unknown", "", '"utf-8"', "utf-8;x",
                 "utf 8", "\u00e9", "koi8-r", "big5"]
_DECODE_BODIES = [b"", b"plain", b"caf\xc3\xa9", b"caf\xe9", b"\x80\x81\xfe", b"\xef\xbb\xbfbom8",
                  b"\xff\xfeb\x00o\x00", b"\xfe\xff\x00b\x00o", b"\xff\xfe\x00\x00b\x00\x00\x00",
                  b"\x00\x00\xfe\xffzz", b"\x00abc", b"\xef\xbbx", b"\xfe", b"\xff",
                  b'<meta charset="koi8-r">\xc1\xc2', b"\x81\x40\x82\xa0",
                  "\u4e2d\u6587".encode("gb18030"), b"a\x00b\x00"]


@pytest.mark.parametrize("name", _DECODE_NAMES)
@pytest.mark.parametrize("body", _DECODE_BODIES)
def test_text_decoding_shortcut_matches_html_to_unicode(name, body):
    from w3lib.encoding import html_to_unicode

    from crawlfw.http.response import text as text_mod

    expected = html_to_unicode(f"charset={name}", body)
    assert text_mod._decode(name, body) == expected
    assert text_mod._decode(name, body) == expected  # memoized now
    if name:  # an encoding argument: .text is the decoding by that name
        r = TextResponse("http://www.example.com/", body=body, encoding=name)
        assert r.text == expected[1]


@pytest.mark.parametrize("content_type", [
    b"", b"text/html", b"text/html; charset=utf-8", b"text/html;charset=ISO-8859-4",
    b'text/html; charset="gb2312"', b"text/html; foo=\"charset=utf-8\"; charset=cp1251",
    b"text/html; charset=utf-7", b"text/html; charset=\xe9", b"TEXT/HTML; CHARSET=UTF-16",
    b"text/plain; charset=", b"charset=latin1",
])
def test_headers_encoding_memo_matches_w3lib(content_type):
    from w3lib.encoding import http_content_type_encoding

    expected = http_content_type_encoding(content_type.decode("latin-1"))
    for _ in range(2):  # computed, then memoized
        r = TextResponse("http://www.example.com/", body=b"x",
                         headers={"Content-Type": content_type} if content_type else None)
        assert r._headers_encoding() == expected


_DECLARED_BODIES = [
    b"", b"<html>", b'<meta charset="utf-8">', b"<META CHARSET=KOI8-R>", b"<meta charset=' cp1251 '>",
    b'<meta name="viewport" content="w"><meta charset="latin1">',
    b'<meta http-equiv="Content-Type" content="text/html; charset=gb2312">',
    b'<meta content="text/html; charset=gb2312">',  # no pragma: not a declaration
    b'<meta httpequiv="ContentType" content="charset=euc-jp">',
    b'<meta content="charset=x" charset="shift_jis">',
    b'<!-- <meta charset="koi8-r"> --><meta charset="utf-8">',
    b"<!-- unterminated <meta charset=koi8-r>",
    b'<body><meta charset="koi8-r">', b'< body><meta charset="koi8-r">',
    b'<?xml version="1.0" encoding="iso-8859-2"?><meta charset="utf-8">',
    b"<?xml version='1.0'?><meta charset=utf-8>",
    b'<meta charset="utf-7">', b'<meta charset="no-such-codec">', b"<meta charset=>",
    b'<meta\xa0charset="koi8-r">', b'<meta\x85charset="koi8-r">', b"<meta\ncharset=cp1250>",
    b'<meta title="a>b" charset="cp1253">', b"<meta charset=\xe9\xe9>",
    b'<meta a="' + b"x" * 300 + b'" charset="cp1254">',
    b"x" * 4080 + b'<meta charset="koi8-r">', b"x" * 4070 + b'<meta charset="koi8-r">',
    b'\xef\xbb\xbf<meta charset="koi8-r">',
]


@pytest.mark.parametrize("body", _DECLARED_BODIES)
def test_body_declared_encoding_memo_matches_w3lib(body):
    from w3lib.encoding import html_body_declared_encoding

    from crawlfw.http.response import text as text_mod

    expected = html_body_declared_encoding(body)
    assert text_mod._body_declared(body) == expected
    assert text_mod._body_declared(body) == expected  # memoized now
    assert text_mod._body_declared(b"<html>\n" + body) == html_body_declared_encoding(
        b"<html>\n" + body)
