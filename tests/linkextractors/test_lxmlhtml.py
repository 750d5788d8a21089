"""LinkExtractor (crawlfw.linkextractors): every constructor argument, URL rules, and
the filtering helpers."""

import re

import pytest

from crawlfw.http import HtmlResponse, TextResponse, XmlResponse
from crawlfw.link import Link
from crawlfw.linkextractors import (
    IGNORED_EXTENSIONS,
    FilteringLinkExtractor,
    LinkExtractor,
    _is_valid_url,
    _matches,
)
from crawlfw.linkextractors.lxmlhtml import LxmlLinkExtractor, LxmlParserLinkExtractor

SAMPLE = b"""<html>
<head>
<base href='http://example.com' />
<title>Sample page with links for testing LinkExtractor</title>
</head>
<body>
<div id='wrapper'>
  <div id='subwrapper'>
    <area href='sample1.html' alt='sample1' />
    <a href='sample2.html'>sample 2<img src='sample2.jpg'/></a>
  </div>
  <a href='http://example.com/sample3.html' title='sample 3'>sample 3 text</a>
  <a href='sample3.html'>sample 3 repetition</a>
  <a href='sample3.html#foo'>sample 3 repetition with fragment</a>
  <a href='http://www.google.com/something'></a>
  <a href='http://example.com/innertag.html'><strong>inner</strong> tag</a>
  <a href='page%204.html'>href with whitespaces</a>
</div>
<div class='links'>
  <a href='nofollow.html' rel='nofollow'>Nofollow</a>
  <a href='nofollow2.html' rel='external NoFollow nofollow'>Nofollow 2</a>
  <a href='follow.html' rel='external'>Follow</a>
</div>
<p>
  <a href='javascript:goToPage("../other/page.html"); return false'>js</a>
  <a href='mailto:someone@example.com'>mail</a>
  <a href='data:text/html,hi'>data</a>
  <a href='ftp://ftp.example.com/file.txt'>ftp</a>
  <a href='http://[bad'>bad ipv6</a>
  <a href='  https://example.org/spaced.html
  '>spaced</a>
  <a href='/doc.pdf'>pdf</a><a href='/IMG.JPG'>jpg</a><a href='/sheet.xlsx?x=1'>xlsx</a>
  <a href='/?b=2&amp;a=1#frag'>query</a>
  <a>no href</a>
</p>
</body>
</html>"""


@pytest.fixture
def response():
    return HtmlResponse("http://example.com/index", body=SAMPLE)


def urls(links):
    return [link.url for link in links]


def test_default_extraction(response):
    assert LinkExtractor().extract_links(response) == [
        Link(url="http://example.com/sample1.html", text=""),
        Link(url="http://example.com/sample2.html", text="sample 2"),
        Link(url="http://example.com/sample3.html", text="sample 3 text"),
        Link(url="http://example.com/sample3.html#foo", text="sample 3 repetition with fragment"),
        Link(url="http://www.google.com/something", text=""),
        Link(url="http://example.com/innertag.html", text="inner tag"),
        Link(url="http://example.com/page%204.html", text="href with whitespaces"),
        Link(url="http://example.com/nofollow.html", text="Nofollow", nofollow=True),
        Link(url="http://example.com/nofollow2.html", text="Nofollow 2", nofollow=True),
        Link(url="http://example.com/follow.html", text="Follow"),
        Link(url="ftp://ftp.example.com/file.txt", text="ftp"),
        Link(url="https://example.org/spaced.html", text="spaced"),
        Link(url="http://example.com/?b=2&a=1#frag", text="query"),
    ]


def test_extract_links_via_response_selector_once(response):
    LinkExtractor().extract_links(response)
    sel = response.selector
    LinkExtractor().extract_links(response)
    assert response.selector is sel


@pytest.mark.parametrize("kwargs", [{"tags": None}, {"attrs": None}, {"tags": ()}, {"attrs": []}])
def test_no_tags_or_no_attrs_extract_nothing(response, kwargs):
    # Scrapy 1.2.3's test_tags / test_attrs: LinkExtractor(tags=None) and attrs=None
    assert LinkExtractor(**kwargs).extract_links(response) == []


def test_unique_false(response):
    links = LinkExtractor(unique=False).extract_links(response)
    assert urls(links)[2:5] == [
        "http://example.com/sample3.html",
        "http://example.com/sample3.html",
        "http://example.com/sample3.html#foo",
    ]
    assert [link.text for link in links[2:4]] == ["sample 3 text", "sample 3 repetition"]


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        ({"allow": ("sample",)}, ["http://example.com/sample1.html", "http://example.com/sample2.html",
                                  "http://example.com/sample3.html", "http://example.com/sample3.html#foo"]),
        ({"allow": ("sample",), "deny": ("3",)}, ["http://example.com/sample1.html", "http://example.com/sample2.html"]),
        ({"allow": r"sample\d\.html$"}, ["http://example.com/sample1.html", "http://example.com/sample2.html",
                                          "http://example.com/sample3.html"]),
        ({"allow": re.compile(r"SAMPLE1", re.I)}, ["http://example.com/sample1.html"]),
        ({"allow": ("sample1", "sample2")}, ["http://example.com/sample1.html", "http://example.com/sample2.html"]),
        ({"deny": ("example",)}, ["http://www.google.com/something"]),
        ({"allow": "nothing-matches"}, []),
        ({"allow_domains": ("google.com",)}, ["http://www.google.com/something"]),
        ({"allow_domains": "example.org"}, ["https://example.org/spaced.html"]),
        ({"allow_domains": ("www.google.com", "ftp.example.com")},
         ["http://www.google.com/something", "ftp://ftp.example.com/file.txt"]),
        ({"deny_domains": ("example.com",), "deny": "org"}, ["http://www.google.com/something"]),
        ({"restrict_xpaths": '//div[@id="subwrapper"]'},
         ["http://example.com/sample1.html", "http://example.com/sample2.html"]),
        ({"restrict_css": "#subwrapper a"}, ["http://example.com/sample2.html"]),
        ({"restrict_css": ("#subwrapper a", "div.links")},
         ["http://example.com/sample2.html", "http://example.com/nofollow.html",
          "http://example.com/nofollow2.html", "http://example.com/follow.html"]),
        ({"restrict_xpaths": '//div[@class="links"]', "restrict_css": "#subwrapper a"},
         ["http://example.com/nofollow.html", "http://example.com/nofollow2.html",
          "http://example.com/follow.html", "http://example.com/sample2.html"]),
        ({"restrict_xpaths": ('//div[@id="subwrapper"]', "//div[@id='subwrapper']/a")},
         ["http://example.com/sample1.html", "http://example.com/sample2.html"]),
        ({"restrict_xpaths": "//a/@href"}, []),  # attribute results hold no links
        ({"restrict_xpaths": "//table"}, []),
        ({"tags": "area"}, ["http://example.com/sample1.html"]),
        ({"tags": ("img",), "attrs": ("src",)}, ["http://example.com/sample2.jpg"][:0]),  # .jpg ignored
        ({"tags": ("img",), "attrs": ("src",), "deny_extensions": ()}, ["http://example.com/sample2.jpg"]),
        ({"attrs": ("title",)}, ["http://example.com/sample%203"]),
        ({"tags": ("a",), "attrs": ("href", "title"), "restrict_xpaths": "//a[@title]"},
         ["http://example.com/sample3.html", "http://example.com/sample%203"]),
    ],
)
def test_filters(response, kwargs, expected):
    assert urls(LinkExtractor(**kwargs).extract_links(response)) == expected


@pytest.mark.parametrize(
    "deny_extensions, expected",
    [
        (None, []),
        ((), ["http://example.com/doc.pdf", "http://example.com/IMG.JPG", "http://example.com/sheet.xlsx?x=1"]),
        (["pdf"], ["http://example.com/IMG.JPG", "http://example.com/sheet.xlsx?x=1"]),
        ("jpg", ["http://example.com/doc.pdf", "http://example.com/sheet.xlsx?x=1"]),
    ],
)
def test_deny_extensions(response, deny_extensions, expected):
    lx = LinkExtractor(deny_extensions=deny_extensions, allow=(r"\.(pdf|JPG|xlsx)",))
    assert urls(lx.extract_links(response)) == expected


def test_ignored_extensions_list():
    for ext in ("jpg", "png", "gif", "mp3", "mp4", "avi", "zip", "rar", "pdf", "doc", "docx",
                "xls", "ppt", "odt", "css", "exe", "svg", "wav", "mov"):
        assert ext in IGNORED_EXTENSIONS
    assert "html" not in IGNORED_EXTENSIONS and "php" not in IGNORED_EXTENSIONS
    assert all(not e.startswith(".") and e == e.lower() for e in IGNORED_EXTENSIONS)


def test_canonicalize(response):
    lx = LinkExtractor(canonicalize=True, allow=r"sample3|page|\?")
    assert urls(lx.extract_links(response)) == [
        "http://example.com/sample3.html",
        "http://example.com/page%204.html",
        "http://example.com/?a=1&b=2",
    ]
    lx = LinkExtractor(canonicalize=False, allow="query|sample3")
    assert urls(lx.extract_links(response)) == [
        "http://example.com/sample3.html",
        "http://example.com/sample3.html#foo",
    ]


def test_process_value(response):
    def extract_js(value):
        m = re.search(r"javascript:goToPage\(['\"](.*?)['\"]", value)
        return m.group(1) if m else value

    lx = LinkExtractor(process_value=extract_js, restrict_xpaths="//p")
    found = urls(lx.extract_links(response))
    # the relative URL process_value returned is made absolute against the response URL
    assert found[0] == "http://example.com/other/page.html"

    lx = LinkExtractor(process_value=lambda v: None if "sample" in v else v, restrict_css="#wrapper")
    assert urls(lx.extract_links(response)) == [
        "http://www.google.com/something",
        "http://example.com/innertag.html",
        "http://example.com/page%204.html",
    ]


def test_process_value_returning_bytes(response):
    lx = LinkExtractor(process_value=lambda v: v.encode(), restrict_css="#subwrapper")
    assert urls(lx.extract_links(response)) == ["http://example.com/sample1.html", "http://example.com/sample2.html"]


def test_strip():
    body = b"<a href=' \n\thttp://e.com/x \x0c'>x</a>"
    response = HtmlResponse("http://e.com/", body=body)
    assert urls(LinkExtractor().extract_links(response)) == ["http://e.com/x"]
    assert LinkExtractor(strip=False).link_extractor.strip is False
    # Without strip, URL parsing (WHATWG URL, as Python and w3lib implement it) still
    # drops leading/trailing C0 controls and spaces and removes tabs and newlines.
    assert urls(LinkExtractor(strip=False).extract_links(response)) == ["http://e.com/x"]


@pytest.mark.parametrize(
    "page_url, body, expected",
    [
        ("http://e.com/a/b.html", b"<a href='c.html'>x</a>", ["http://e.com/a/c.html"]),
        ("http://e.com/a/b.html", b"<a href='../c.html'>x</a>", ["http://e.com/c.html"]),
        ("http://e.com/a/b.html", b"<a href='/c.html'>x</a>", ["http://e.com/c.html"]),
        ("http://e.com/a/b.html", b"<a href='//cdn.e.com/c'>x</a>", ["http://cdn.e.com/c"]),
        ("http://e.com/a/b.html", b"<a href='?q=1'>x</a>", ["http://e.com/a/b.html?q=1"]),
        ("http://e.com/a/b.html", b"<a href='#top'>x</a>", ["http://e.com/a/b.html#top"]),
        ("http://e.com/a/b.html", b"<base href='http://other.com/d/'><a href='c.html'>x</a>",
         ["http://other.com/d/c.html"]),
        ("http://e.com/a/b.html", b"<base href='/root/'><a href='c.html'>x</a>", ["http://e.com/root/c.html"]),
        ("http://e.com/a/b.html", b"<base target='_blank'><base href='../z/'><a href='c'>x</a>",
         ["http://e.com/z/c"]),
        ("http://e.com/a/b.html", b"<head><base href=' http://sp.com/ '></head><a href='c'>x</a>",
         ["http://sp.com/c"]),
        # characters not allowed in URLs are percent-encoded (path as UTF-8)
        ("http://e.com/", "<a href='/caf\u00e9 x.html'>x</a>".encode(), ["http://e.com/caf%C3%A9%20x.html"]),
        ("http://e.com/", "<a href='/p?q=\u00e9'>x</a>".encode(), ["http://e.com/p?q=%C3%A9"]),
        ("http://e.com/", b"<a href='/p?q=\xe9'>x</a>", ["http://e.com/p?q=%EF%BF%BD"]),  # not UTF-8
        ("http://e.com/", b"<a href='/100%'>x</a>", ["http://e.com/100%"]),
        ("http://e.com/", b"<a href='/a[1]^{x}|y'>x</a>", ["http://e.com/a%5B1%5D%5E%7Bx%7D%7Cy"]),
        ("http://e.com/", b"<a href='HTTP://WWW.E.COM/Path?Q#F'>x</a>", ["http://www.e.com/Path?Q#F"]),
        ("http://e.com/", b"<a href='http://e.com?page=2'>x</a>", ["http://e.com/?page=2"]),
        ("http://e.com/", b"<a href='/p?'>x</a>", ["http://e.com/p"]),
        ("http://e.com/", "<a href='http://b\u00fccher.de/'>x</a>".encode(), ["http://xn--bcher-kva.de/"]),
        ("http://e.com/", b"<a href='/already%20escaped'>x</a>", ["http://e.com/already%20escaped"]),
        ("http://e.com/", b"<A HREF='/upper'>x</A>", ["http://e.com/upper"]),
        ("http://e.com/", b"<a href=''>self</a>", ["http://e.com/"]),
        ("http://e.com/", b"", []),
    ],
)
def test_url_resolution(page_url, body, expected):
    response = HtmlResponse(page_url, body=body, headers={"Content-Type": "text/html; charset=utf-8"})
    assert urls(LinkExtractor().extract_links(response)) == expected


def test_query_uses_response_encoding():
    body = "<a href='/p?q=\u00e9'>x</a>".encode("latin-1")
    response = HtmlResponse("http://e.com/", body=body, headers={"Content-Type": "text/html; charset=latin-1"})
    # the query is encoded with the page's encoding, as browsers do (WHATWG URL)
    assert urls(LinkExtractor().extract_links(response)) == ["http://e.com/p?q=%E9"]


def test_link_text():
    body = b"""<a href='1'>plain</a><a href='2'> <b>bold</b> and <i>it<!-- c -->alic</i> </a>
    <a href='3'><img src='x.png' alt='alt'></a><a href='4'>caf&eacute; &amp; co</a>"""
    links = LinkExtractor().extract_links(HtmlResponse("http://e.com/", body=body))
    assert [link.text for link in links] == ["plain", " bold and italic ", "", "caf\u00e9 & co"]


def test_xhtml_in_xml_response():
    body = b"""<?xml version="1.0"?>
    <html xmlns="http://www.w3.org/1999/xhtml"><body>
      <a href="/one">One</a><p><a href="two" rel="nofollow">Two</a></p>
    </body></html>"""
    response = XmlResponse("http://e.com/dir/", body=body)
    assert LinkExtractor().extract_links(response) == [
        Link("http://e.com/one", "One"),
        Link("http://e.com/dir/two", "Two", nofollow=True),
    ]


def test_text_response():
    response = TextResponse("http://e.com/", body=b"<a href='x'>x</a>")
    assert urls(LinkExtractor().extract_links(response)) == ["http://e.com/x"]


def test_matches():
    lx = LinkExtractor(allow="sample", deny="private", allow_domains="example.com")
    assert lx.matches("http://example.com/sample.html")
    assert lx.matches("http://sub.example.com/sample")
    assert not lx.matches("http://example.com/other.html")
    assert not lx.matches("http://example.com/sample/private")
    assert not lx.matches("http://example.org/sample")
    assert LinkExtractor().matches("http://anything/")
    assert not LinkExtractor(deny_domains="e.com").matches("http://www.e.com/")


@pytest.mark.parametrize(
    "url, valid",
    [
        ("http://e.com", True),
        ("https://e.com", True),
        ("file:///tmp/x", True),
        ("ftp://e.com/x", True),
        ("javascript:void(0)", False),
        ("mailto:a@b.c", False),
        ("data:text/html,x", False),
        ("tel:+1", False),
        ("e.com/path", False),
    ],
)
def test_is_valid_url(url, valid):
    assert _is_valid_url(url) is valid


def test_matches_helper():
    regexs = [re.compile("a"), re.compile(r"\d")]
    assert _matches("xa", regexs) and _matches("x1", regexs) and not _matches("x", regexs)
    assert not _matches("anything", [])


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        ({"allow": "("}, re.error),
        ({"deny": "[a"}, re.error),
        ({"restrict_css": "a[["}, ValueError),
    ],
)
def test_bad_arguments(kwargs, exc):
    with pytest.raises(exc):
        LinkExtractor(**kwargs)


def test_invalid_restrict_xpath(response):
    with pytest.raises(ValueError, match=r"XPath error: .* in //div\["):
        LinkExtractor(restrict_xpaths="//div[").extract_links(response)


def test_class_structure():
    lx = LinkExtractor()
    assert isinstance(lx, LxmlLinkExtractor) and isinstance(lx, FilteringLinkExtractor)
    assert isinstance(lx.link_extractor, LxmlParserLinkExtractor)
    assert lx.deny_extensions == {"." + e for e in IGNORED_EXTENSIONS}
    assert lx.restrict_xpaths == ()
    assert LinkExtractor(restrict_css="p a").restrict_xpaths == (
        "descendant-or-self::p/descendant::a",
    )


def test_parser_link_extractor_with_predicates(response):
    lx = LxmlParserLinkExtractor(tag=lambda t: t in ("img",), attr=lambda a: a == "src", unique=True)
    assert urls(lx.extract_links(response)) == ["http://example.com/sample2.jpg"]
    lx = LxmlParserLinkExtractor()  # tag 'a', attr 'href', no filtering, unique=False
    found = urls(lx.extract_links(response))
    assert "javascript:goToPage(%22../other/page.html%22);%20return%20false" in found
    assert found.count("http://example.com/sample3.html") == 2

