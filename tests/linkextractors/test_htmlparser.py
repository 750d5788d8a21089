"""The deprecated HtmlParserLinkExtractor: warns, extracts like the lxml parser extractor."""

import pytest

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.http import HtmlResponse
from crawlfw.linkextractors.htmlparser import HtmlParserLinkExtractor

BODY = b"""<html><body>
<a href="/a.html">A</a> <a href="b.html">  B  </a> <a href="/a.html">A again</a>
<img src="/i.png"> <area href="/map">
</body></html>"""


def response():
    return HtmlResponse("http://example.com/dir/", body=BODY)


def test_warns_and_extracts_links():
    with pytest.warns(CrawlfwDeprecationWarning, match="LinkExtractor"):
        extractor = HtmlParserLinkExtractor()
    links = extractor.extract_links(response())
    assert [(link.url, link.text) for link in links] == [
        ("http://example.com/a.html", "A"),
        ("http://example.com/dir/b.html", "  B  "),
        ("http://example.com/a.html", "A again"),
    ]


@pytest.mark.parametrize(
    "kwargs, urls",
    [
        ({"unique": True}, ["http://example.com/a.html", "http://example.com/dir/b.html"]),
        ({"tag": "img", "attr": "src"}, ["http://example.com/i.png"]),
        ({"tag": lambda t: t in ("a", "area"), "unique": True},
         ["http://example.com/a.html", "http://example.com/dir/b.html",
          "http://example.com/map"]),
        ({"process": lambda v: None if "b" in v else v + "?x=1"},
         ["http://example.com/a.html?x=1", "http://example.com/a.html?x=1"]),
    ],
)
def test_arguments(kwargs, urls):
    with pytest.warns(CrawlfwDeprecationWarning):
        extractor = HtmlParserLinkExtractor(**kwargs)
    assert [link.url for link in extractor.extract_links(response())] == urls


def test_matches_any_url():
    with pytest.warns(CrawlfwDeprecationWarning):
        assert HtmlParserLinkExtractor().matches("http://anything/")
