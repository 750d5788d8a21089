"""LinkExtractor's Scrapy 2 arguments (issue 29): ``restrict_text``, ``deny_tags``,
``deny_attrs``, the ``"*"`` wildcard of ``tags``/``attrs``, Scrapy 2.19's argument
order, and LxmlParserLinkExtractor's ``canonicalized``. The expected links are what
Scrapy 2.19 extracts from the same page."""

import inspect
import re

import pytest

from crawlfw.http import HtmlResponse
from crawlfw.linkextractors import LinkExtractor
from crawlfw.linkextractors.lxmlhtml import LxmlLinkExtractor, LxmlParserLinkExtractor

PAGE = HtmlResponse("http://e.com/", body=(
    b'<html><body><a href="/a?x=1&y=2">Next page</a><a href="/a?y=2&x=1">next</a>'
    b'<img src="/i.png"><link href="/s" rel=x><a href="/b" data-x="/c">Prev</a>'
    b"</body></html>"))

NEXT = [("http://e.com/a?x=1&y=2", "Next page"), ("http://e.com/a?y=2&x=1", "next")]


@pytest.mark.parametrize("kwargs, expected", [
    ({}, [*NEXT, ("http://e.com/b", "Prev")]),
    ({"restrict_text": "[Nn]ext"}, NEXT),
    ({"restrict_text": [re.compile("^Prev$"), "^Next"]},
     [NEXT[0], ("http://e.com/b", "Prev")]),
    ({"restrict_text": "nothing"}, []),
    ({"tags": "*", "deny_tags": "link"}, [*NEXT, ("http://e.com/b", "Prev")]),
    ({"tags": "*"}, [*NEXT, ("http://e.com/s", ""), ("http://e.com/b", "Prev")]),
    ({"tags": "*", "attrs": "*", "deny_attrs": ["href"], "deny_extensions": ()},
     [("http://e.com/i.png", ""), ("http://e.com/x", ""), ("http://e.com/c", "Prev")]),
    ({"deny_tags": ["a"]}, []),
    ({"attrs": ["href", "data-x"], "deny_attrs": "href"}, [("http://e.com/c", "Prev")]),
])
def test_scrapy_2_arguments(kwargs, expected):
    links = LinkExtractor(**kwargs).extract_links(PAGE)
    assert [(link.url, link.text) for link in links] == expected


def test_argument_order_is_scrapy_219s():
    scrapy_219 = [
        "allow", "deny", "allow_domains", "deny_domains", "restrict_xpaths", "tags",
        "attrs", "canonicalize", "unique", "process_value", "deny_extensions",
        "restrict_css", "strip", "restrict_text", "deny_tags", "deny_attrs",
    ]
    assert list(inspect.signature(LxmlLinkExtractor).parameters) == scrapy_219
    # positionally: restrict_text is the 14th
    extractor = LinkExtractor((), (), (), (), (), ("a",), ("href",), False, True, None,
                              None, (), True, "Prev")
    assert [link.url for link in extractor.extract_links(PAGE)] == ["http://e.com/b"]


def test_restrict_text_is_compiled_and_bad_patterns_fail_at_once():
    assert [p.pattern for p in LinkExtractor(restrict_text="a").restrict_text] == ["a"]
    assert LinkExtractor().restrict_text == []
    with pytest.raises(re.error):
        LinkExtractor(restrict_text="(")


@pytest.mark.parametrize("canonicalized, expected", [
    (False, ["http://e.com/a?x=1&y=2", "http://e.com/b"]),  # one link: same canonical URL
    (True, ["http://e.com/a?x=1&y=2", "http://e.com/a?y=2&x=1", "http://e.com/b"]),
])
def test_parser_link_extractor_canonicalized(canonicalized, expected):
    lx = LxmlParserLinkExtractor(unique=True, canonicalized=canonicalized)
    assert [link.url for link in lx.extract_links(PAGE)] == expected
