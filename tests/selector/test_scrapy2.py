"""Selector features of Scrapy 2.19 / parsel 1.12 (issue 17): has-class(), drop(),
Selector(body=, encoding=), JSON and text selectors with jmespath(), response.json()
and response.jmespath(). Expected values are parsel 1.12.1's on the same input."""

import json
import re

import jmespath
import pytest

from crawlfw.http import HtmlResponse, TextResponse, XmlResponse
from crawlfw.selector import Selector, SelectorList
from crawlfw.selector.unified import (
    CannotDropElementWithoutParent,
    CannotRemoveElementWithoutParent,
    CannotRemoveElementWithoutRoot,
)

# -- has-class() ------------------------------------------------------------------------

CLASSES = """<p class="foo bar-baz">First</p>
<p class="foo">Second</p>
<p class="bar">Third</p>
<p class="foo\tbar\n baz">Fourth</p>
<p>Fifth</p>"""


@pytest.mark.parametrize("query, expected", [
    ('//p[has-class("foo")]/text()', ["First", "Second", "Fourth"]),
    ('//p[has-class("bar")]/text()', ["Third", "Fourth"]),
    ('//p[has-class("foo", "bar")]/text()', ["Fourth"]),
    ('//p[has-class("foo", "bar", "baz")]/text()', ["Fourth"]),
    ('//p[has-class("bar-baz")]/text()', ["First"]),
    ('//p[has-class("ba")]/text()', []),
    ('//p[not(has-class("foo"))]/text()', ["Third", "Fifth"]),
    ('//p[has-class("FOO")]/text()', []),  # class names are case-sensitive
])
def test_has_class(query, expected):
    assert Selector(text=CLASSES).xpath(query).getall() == expected


def test_has_class_on_a_result_and_on_xml():
    sel = Selector(text=CLASSES)
    assert [p.xpath('has-class("foo")').get() for p in sel.xpath("//p")] == [
        "1", "1", "0", "1", "0"]
    xml = Selector(text='<r><i class="a b">1</i><i class="b">2</i></r>', type="xml")
    assert xml.xpath('//i[has-class("b")]/text()').getall() == ["1", "2"]


@pytest.mark.parametrize("query, message", [
    ("//p[has-class()]", "has-class must have at least 1 argument"),
    ("//p[has-class(1)]", "has-class arguments must be strings"),
    ('//p[has-class("foo", @class)]', "has-class arguments must be strings"),
])
def test_has_class_bad_arguments(query, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Selector(text=CLASSES).xpath(query)


# -- drop() -----------------------------------------------------------------------------


def test_drop_an_html_element_keeps_the_tail_text():
    sel = Selector(text="<div><p>a</p>tail-a<p>b</p>tail-b<span>c</span></div>")
    sel.xpath("//p[1]").drop()
    assert sel.xpath("//div").get() == "<div>tail-a<p>b</p>tail-b<span>c</span></div>"
    sel.css("p").drop()
    assert sel.css("div").get() == "<div>tail-atail-b<span>c</span></div>"


def test_drop_many_and_nested():
    sel = Selector(text="<ul><li>1<b>x</b></li><li>2</li><li>3</li></ul>")
    sel.xpath("//li[position() > 1]").drop()
    assert sel.xpath("//li/text()").getall() == ["1"]
    sel.css("li b").drop()
    assert sel.css("ul").get() == "<ul><li>1</li></ul>"
    assert sel.css("b") == []


def test_drop_an_xml_element_keeps_the_tail_text():
    sel = Selector(text="<r><a>1</a>one<b>2</b>two</r>", type="xml")
    sel.xpath("/r/a").drop()
    assert sel.get() == "<r>one<b>2</b>two</r>"
    sel.xpath("/r/b").drop()
    assert sel.get() == "<r>onetwo</r>"


def test_dropping_what_is_not_an_element_or_a_root():
    sel = Selector(text="<ul><li>1</li></ul>")
    with pytest.raises(CannotRemoveElementWithoutRoot, match="pseudo-element"):
        sel.css("li::text").drop()
    with pytest.raises(CannotRemoveElementWithoutRoot):
        sel.xpath("count(//li)")[0].drop()
    with pytest.raises(CannotDropElementWithoutParent, match="root element"):
        sel.drop()
    assert issubclass(CannotDropElementWithoutParent, CannotRemoveElementWithoutParent)
    with pytest.raises(CannotDropElementWithoutParent):
        Selector(text="<r/>", type="xml").drop()
    with pytest.raises(CannotRemoveElementWithoutRoot):
        Selector(text='{"a": 1}', type="json").drop()
    assert sel.xpath("//li/text()").getall() == ["1"]  # nothing was removed
    SelectorList().drop()  # nothing to do


# -- Selector(body=..., encoding=...) ---------------------------------------------------


def test_body_and_encoding():
    assert Selector(body="<p>caf\u00e9</p>".encode()).css("p::text").get() == "caf\u00e9"
    assert Selector(body=bytearray(b"<p>x</p>")).css("p::text").get() == "x"
    latin = Selector(body="<p>caf\u00e9</p>".encode("latin-1"), encoding="latin-1")
    assert latin.css("p::text").get() == "caf\u00e9"
    utf16 = Selector(body="<p>\u4e2d</p>".encode("utf-16"), encoding="utf-16")
    assert utf16.css("p::text").get() == "\u4e2d"
    # bytes the encoding cannot decode become U+FFFD, the rest of the document stays
    bad = Selector(body=b"<p>a\xffb</p><p>c</p>")
    assert bad.css("p::text").getall() == ["a\ufffdb", "c"]
    assert Selector(body=b"<r><a>1</a></r>", type="xml").xpath("/r/a/text()").get() == "1"
    assert Selector(body=b"<p>x</p>").type == "html"


def test_text_wins_over_body_and_bad_body():
    assert Selector(text="<p>t</p>", body=b"<p>b</p>").css("p::text").get() == "t"
    with pytest.raises(TypeError, match="body argument should be of type bytes or bytearray, got str"):
        Selector(body="<p>x</p>")
    with pytest.raises(LookupError):
        Selector(body=b"<p>x</p>", encoding="no-such-codec")
    with pytest.raises(ValueError, match="needs a response, text or root"):
        Selector(body=b"")


# -- JSON and text selectors, jmespath() ------------------------------------------------

DATA = {"user": [{"name": "A", "age": 18}, {"name": "B", "age": 32},
                 {"name": "C", "age": 22}, {"name": "D", "age": 25}],
        "total": 4, "html": "<div><a href='/x'>x</a></div>", "none": None}


def test_json_selector():
    sel = Selector(text=json.dumps(DATA), type="json")
    assert sel.type == "json" and sel.root == DATA
    assert sel.get() == DATA and sel.getall() == [DATA]
    assert sel.jmespath("user[*].name").getall() == ["A", "B", "C", "D"]
    assert sel.jmespath("user[?age > `20`].name").getall() == ["B", "C", "D"]
    assert sel.jmespath("total").get() == 4
    assert sel.jmespath("user[0]").get() == {"name": "A", "age": 18}
    assert sel.jmespath("user[0]")[0].type == "json"
    assert sel.jmespath("user").getall() == DATA["user"]  # a list is flattened
    assert sel.jmespath("none").getall() == [] and sel.jmespath("missing") == []
    assert sel.jmespath("user").jmespath("name").getall() == ["A", "B", "C", "D"]
    assert sel.attrib == {} and bool(sel)
    sel.remove_namespaces()  # nothing to do


def test_a_string_result_is_a_text_selector_queried_as_html():
    sel = Selector(text=json.dumps(DATA), type="json")
    html = sel.jmespath("html")
    assert html[0].type == "text" and html.get() == DATA["html"]
    assert html.css("a::attr(href)").getall() == ["/x"]
    assert html.xpath("//a/text()").get() == "x"
    assert html.xpath("//a")[0].type == "html"
    assert Selector(text="<b>x</b>", type="text").get() == "<b>x</b>"


def test_json_selector_refuses_xpath_and_css():
    sel = Selector(text='{"a": 1}', type="json")
    with pytest.raises(ValueError, match="Cannot use xpath on a Selector of type 'json'"):
        sel.xpath("//a")
    with pytest.raises(ValueError, match="Cannot use css on a Selector of type 'json'"):
        sel.css("a")


def test_json_selector_of_text_that_is_not_json():
    sel = Selector(text="<p>x</p>", type="json")
    assert sel.root is None and sel.get() is None and sel.jmespath("a") == []


def test_json_from_body_and_root():
    sel = Selector(body=json.dumps(DATA).encode("utf-16"), encoding="utf-16", type="json")
    assert sel.jmespath("total").get() == 4
    assert Selector(root={"a": [1, 2]}).type == "json"
    assert Selector(root={"a": [1, 2]}).jmespath("a[1]").get() == 2
    assert Selector(root=[1, None, 2]).jmespath("[]").getall() == [1, 2]
    with pytest.raises(ValueError, match="lxml element as root and 'json' as type"):
        Selector(root=Selector(text="<p/>").root, type="json")


def test_jmespath_on_html_json_in_a_script():
    body = b"""<html><script id="data">{"items": [{"id": 1}, {"id": 2}]}</script>
    <p data-json='{"k": "v"}'>x</p></html>"""
    response = HtmlResponse("http://example.com/", body=body)
    assert response.css("script#data::text").jmespath("items[].id").getall() == [1, 2]
    assert response.css("script#data").jmespath("items[0].id").get() == 1  # element's text
    assert response.css("p::attr(data-json)").jmespath("k").get() == "v"
    assert response.css("p::text").jmespath("k").getall() == []  # "x" is not JSON
    assert response.jmespath("items") == []  # the <html> element has no JSON text


def test_jmespath_options_and_bad_query():
    sel = Selector(text='{"b": 1, "a": 2}', type="json")
    options = jmespath.Options(dict_cls=dict)
    assert sel.jmespath("@", options=options).get() == {"b": 1, "a": 2}
    with pytest.raises(ValueError):  # jmespath.exceptions.ParseError
        sel.jmespath("a[")


# -- the type of a response's selector ---------------------------------------------------


@pytest.mark.parametrize("cls, body, expected", [
    (TextResponse, b'{"a": [1, 2]}', "json"),
    (TextResponse, b'  [1, 2]', "json"),
    (TextResponse, b'"just a string"', "html"),  # a JSON scalar is not detected
    (TextResponse, b'{"a": ', "html"),  # not JSON
    (TextResponse, b'<?xml version="1.0"?><r><a>1</a></r>', "xml"),
    (TextResponse, b"<p>x</p>", "html"),
    (HtmlResponse, b'{"a": 1}', "html"),
    (XmlResponse, b'{"a": 1}', "xml"),
])
def test_response_selector_type(cls, body, expected):
    assert cls("http://example.com/", body=body).selector.type == expected


def test_response_jmespath_and_json():
    body = json.dumps(DATA).encode()
    response = TextResponse("http://example.com/api", body=body,
                            headers={"Content-Type": "application/json"})
    assert response.jmespath("user[-1].name").get() == "D"
    assert response.jmespath("total").getall() == [4]
    assert response.json() == DATA
    assert response.json() is response.json()  # parsed once
    with pytest.raises(ValueError, match="Cannot use css on a Selector of type 'json'"):
        response.css("a")


@pytest.mark.parametrize("body, encoding", [
    ('{"k": "caf\u00e9"}'.encode("utf-8"), None),
    ('{"k": "caf\u00e9"}'.encode("utf-16"), None),
    ('{"k": "caf\u00e9"}'.encode("utf-32-le"), None),
    ('{"k": "caf\u00e9"}'.encode("latin-1"), "latin-1"),  # not UTF-8/16/32: .encoding
])
def test_response_json_encodings(body, encoding):
    response = TextResponse("http://example.com/", body=body, encoding=encoding)
    assert response.json() == {"k": "caf\u00e9"}


def test_response_json_errors():
    with pytest.raises(json.JSONDecodeError):
        TextResponse("http://example.com/", body=b"<html></html>").json()
    assert TextResponse("http://example.com/", body=b"null").json() is None
    assert HtmlResponse("http://example.com/", body=b"[1]").json() == [1]
