"""Deprecated ``HtmlParserLinkExtractor`` (Scrapy 1.2's
``scrapy.linkextractors.htmlparser``): use :class:`crawlfw.linkextractors.LinkExtractor`.

Scrapy's version parses with the standard library's ``HTMLParser``; this one is the lxml
parser extractor under the old name, with the same arguments.
"""

import warnings

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.linkextractors.lxmlhtml import LxmlParserLinkExtractor

__all__ = ["HtmlParserLinkExtractor"]


class HtmlParserLinkExtractor(LxmlParserLinkExtractor):
    """Extract links from ``tag`` elements' ``attr`` attribute (deprecated).

    Args:
        tag: a tag name, or a predicate on tag names (default ``'a'``).
        attr: an attribute name, or a predicate on attribute names (default ``'href'``).
        process: a function applied to each attribute value (returns the URL, or None to
            drop the link).
        unique: drop links with a URL seen before.
        strip: strip whitespace from values.
    """

    def __init__(self, tag="a", attr="href", process=None, unique=False, strip=True):
        warnings.warn(
            "HtmlParserLinkExtractor is deprecated and will be removed in future releases. "
            "Please use crawlfw.linkextractors.LinkExtractor",
            CrawlfwDeprecationWarning, stacklevel=2,
        )
        super().__init__(tag=tag, attr=attr, process=process, unique=unique, strip=strip)

    def matches(self, url):
        """True: this extractor has no URL patterns, it matches any URL."""
        return True
