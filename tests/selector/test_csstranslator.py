"""CSS-to-XPath translation (crawlfw.selector.csstranslator), parsel's table style."""

import pytest
from cssselect import ExpressionError, SelectorSyntaxError

from crawlfw.selector.csstranslator import (
    GenericTranslator,
    HTMLTranslator,
    ScrapyHTMLTranslator,
    XPathExpr,
)


@pytest.mark.parametrize(
    "css, xpath",
    [
        ("::attr(name)", "descendant-or-self::*/@name"),
        ("a::attr(href)", "descendant-or-self::a/@href"),
        ("a ::attr(img)", "descendant-or-self::a/descendant-or-self::*/@img"),
        ("a > ::attr(class)", "descendant-or-self::a/*/@class"),
        ("a::attr('data-x')", "descendant-or-self::a/@data-x"),
        ("::text", "descendant-or-self::text()"),
        ("p::text", "descendant-or-self::p/text()"),
        ("p ::text", "descendant-or-self::p/descendant-or-self::text()"),
        ("#id::text", "descendant-or-self::*[@id = 'id']/text()"),
        ("p#id::text", "descendant-or-self::p[@id = 'id']/text()"),
        ("p#id ::text", "descendant-or-self::p[@id = 'id']/descendant-or-self::text()"),
        ("p#id > ::text", "descendant-or-self::p[@id = 'id']/*/text()"),
        ("p#id ~ ::text", "descendant-or-self::p[@id = 'id']/following-sibling::*/text()"),
        ("a[href]::attr(href)", "descendant-or-self::a[@href]/@href"),
        ("p::text, a::attr(href)", "descendant-or-self::p/text() | descendant-or-self::a/@href"),
    ],
)
def test_pseudo_elements(css, xpath):
    assert HTMLTranslator().css_to_xpath(css) == xpath
    assert GenericTranslator().css_to_xpath(css) == xpath


def test_prefix_argument():
    assert HTMLTranslator().css_to_xpath("p::text", prefix="") == "p/text()"


def test_html_lowercases_element_names_generic_does_not():
    assert HTMLTranslator().css_to_xpath("DIV") == "descendant-or-self::div"
    assert GenericTranslator().css_to_xpath("DIV") == "descendant-or-self::DIV"


@pytest.mark.parametrize(
    "css, exc",
    [
        ("a::text()", ExpressionError),
        ("::attr(a, b)", SelectorSyntaxError),
        ("::attr(1)", ExpressionError),
        ("::attr(@href)", SelectorSyntaxError),
        ("p::unknown", ExpressionError),
        ("p::unknown()", ExpressionError),
        ("p::text ::text", SelectorSyntaxError),
        ("a[", SelectorSyntaxError),
    ],
)
def test_invalid(css, exc):
    with pytest.raises(exc):
        HTMLTranslator().css_to_xpath(css)


def test_translation_is_cached():
    tr = HTMLTranslator()
    tr.css_to_xpath("li.x::text")
    tr.css_to_xpath("li.x::text")
    info = tr._cached_css_to_xpath.cache_info()
    assert (info.hits, info.misses) == (1, 1)


def test_xpathexpr_keeps_pseudo_element_through_join():
    left = XPathExpr(element="a")
    right = XPathExpr.from_xpath(XPathExpr(element="b"), textnode=True)
    joined = left.join("/", right)
    assert str(joined) == "a/b/text()"


def test_deprecated_alias():
    assert ScrapyHTMLTranslator is HTMLTranslator
