"""Selectors: extract data from HTML and XML with XPath and CSS expressions.

``Selector`` and ``SelectorList`` (Scrapy 1.2's ``scrapy.selector``); see
:mod:`crawlfw.selector.unified`. The deprecated ``HtmlXPathSelector``,
``XmlXPathSelector``, ``XPathSelector`` and ``XPathSelectorList`` of :mod:`crawlfw.selector.lxmlsel` are
importable from here too, as in Scrapy 1.2.
"""

from crawlfw.selector.lxmlsel import (
    HtmlXPathSelector,
    XmlXPathSelector,
    XPathSelector,
    XPathSelectorList,  # noqa: F401 (public; __all__ is pinned by tests/selector)
)
from crawlfw.selector.unified import Selector, SelectorList

__all__ = [
    "Selector",
    "SelectorList",
    "XPathSelector",
    "HtmlXPathSelector",
    "XmlXPathSelector",
]
