"""Deprecated selector classes kept from Scrapy 1.2 (``scrapy.selector.lxmlsel``).

``HtmlXPathSelector(response)`` and ``XmlXPathSelector(response)`` are
:class:`~crawlfw.selector.Selector` with a fixed type; instantiating one warns
(``ScrapyDeprecationWarning``). Use ``crawlfw.Selector`` instead.
"""

import warnings

from crawlfw.exceptions import ScrapyDeprecationWarning
from crawlfw.selector.unified import Selector, SelectorList

__all__ = ["HtmlXPathSelector", "XmlXPathSelector", "XPathSelector", "XPathSelectorList"]


class XPathSelector(Selector):
    """Deprecated: use :class:`crawlfw.Selector`. HTML by default; no ``css()``."""

    __slots__ = ()
    _default_type = "html"

    def __init__(self, *args, **kwargs):
        # Results are built through this constructor too; warn only for user calls.
        if "_expr" not in kwargs:
            warnings.warn(
                f"{type(self).__name__} is deprecated, instantiate crawlfw.Selector instead",
                ScrapyDeprecationWarning,
                stacklevel=2,
            )
        super().__init__(*args, **kwargs)

    def css(self, *args, **kwargs):
        """Not available: raises RuntimeError, as in Scrapy 1.2."""
        raise RuntimeError(
            f".css() method not available for {type(self).__name__}, "
            "instantiate crawlfw.Selector instead"
        )

    def select(self, xpath):
        """Deprecated alias of :meth:`xpath`."""
        return self.xpath(xpath)


class HtmlXPathSelector(XPathSelector):
    """Deprecated: use ``crawlfw.Selector(response)``."""

    __slots__ = ()
    _default_type = "html"


class XmlXPathSelector(XPathSelector):
    """Deprecated: use ``crawlfw.Selector(response, type='xml')``."""

    __slots__ = ()
    _default_type = "xml"


class XPathSelectorList(SelectorList):
    """Deprecated: use :class:`crawlfw.selector.SelectorList`."""

    __slots__ = ()

    def select(self, xpath):
        """Deprecated alias of :meth:`xpath`."""
        return self.xpath(xpath)
