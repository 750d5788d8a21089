"""CSS-to-XPath translation with the ``::text`` and ``::attr(name)`` pseudo-elements.

Built on cssselect (W3C Selectors Level 3 -> XPath 1.0). Two pseudo-elements are
added, as Scrapy 1.2 (through parsel) has them:

* ``::text`` selects the text-node children of the matched elements
  (``p::text`` -> ``descendant-or-self::p/text()``);
* ``::attr(name)`` selects an attribute's value
  (``a::attr(href)`` -> ``descendant-or-self::a/@href``).

Translations are cached (``functools.lru_cache``) per translator instance.

Names kept from Scrapy 1.2: ``XPathExpr``, ``TranslatorMixin``, ``GenericTranslator``,
``HTMLTranslator`` and the deprecated aliases ``ScrapyXPathExpr``,
``ScrapyGenericTranslator``, ``ScrapyHTMLTranslator``.
"""

from functools import lru_cache

from cssselect import GenericTranslator as _OriginalGenericTranslator
from cssselect import HTMLTranslator as _OriginalHTMLTranslator
from cssselect.parser import FunctionalPseudoElement
from cssselect.xpath import ExpressionError
from cssselect.xpath import XPathExpr as _OriginalXPathExpr

__all__ = [
    "XPathExpr",
    "TranslatorMixin",
    "GenericTranslator",
    "HTMLTranslator",
    "ScrapyXPathExpr",
    "ScrapyGenericTranslator",
    "ScrapyHTMLTranslator",
]

#: How many translations each translator instance caches.
CSS_CACHE_SIZE = 512


class XPathExpr(_OriginalXPathExpr):
    """A cssselect XPath expression that can end in ``/text()`` or ``/@name``.

    Attributes:
        textnode: True when the selector ended in ``::text``.
        attribute: the attribute name from ``::attr(name)``, or None.
    """

    textnode = False
    attribute = None

    @classmethod
    def from_xpath(cls, xpath, textnode=False, attribute=None):
        """Copy ``xpath`` (any cssselect ``XPathExpr``) into this class.

        Args:
            xpath: the expression to copy.
            textnode: select text nodes of the result.
            attribute: select this attribute of the result.

        Returns:
            A new :class:`XPathExpr`.
        """
        x = cls(path=xpath.path, element=xpath.element, condition=xpath.condition)
        x.textnode = textnode
        x.attribute = attribute
        return x

    def __str__(self):
        path = super().__str__()
        if self.textnode:
            if path == "*":
                path = "text()"
            elif path.endswith("::*/*"):
                path = path[:-3] + "text()"
            else:
                path += "/text()"
        if self.attribute is not None:
            if path.endswith("::*/*"):
                path = path[:-2]
            path += f"/@{self.attribute}"
        return path

    def join(self, combiner, other, *args, **kwargs):
        """Join as cssselect does, keeping ``other``'s pseudo-element."""
        super().join(combiner, other, *args, **kwargs)
        self.textnode = getattr(other, "textnode", False)
        self.attribute = getattr(other, "attribute", None)
        return self


class TranslatorMixin:
    """Adds ``::text``/``::attr()`` and result caching to a cssselect translator."""

    xpathexpr_cls = XPathExpr

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Per instance, so that the cache never keeps a translator alive.
        self._cached_css_to_xpath = lru_cache(maxsize=CSS_CACHE_SIZE)(self._css_to_xpath)

    def _css_to_xpath(self, css, prefix):
        return super().css_to_xpath(css, prefix)

    def css_to_xpath(self, css, prefix="descendant-or-self::"):
        """Translate a CSS selector group to XPath 1.0 (cached).

        Args:
            css: the selector group, e.g. ``'div.x > a::attr(href)'``.
            prefix: prepended to each selector's XPath; the default scopes the
                selector to the context node and its descendants.

        Returns:
            The XPath expression (a ``str``).

        Raises:
            cssselect.SelectorSyntaxError: ``css`` is not valid CSS.
            cssselect.ExpressionError: ``css`` uses an unsupported selector or an
                unknown pseudo-element.
        """
        return self._cached_css_to_xpath(css, prefix)

    def xpath_element(self, selector):
        xpath = super().xpath_element(selector)
        if not isinstance(xpath, XPathExpr):
            xpath = XPathExpr.from_xpath(xpath)
        return xpath

    def xpath_pseudo_element(self, xpath, pseudo_element):
        """Dispatch ``::name`` to ``xpath_<name>_simple_pseudo_element`` and
        ``::name(args)`` to ``xpath_<name>_functional_pseudo_element``."""
        if isinstance(pseudo_element, FunctionalPseudoElement):
            name = pseudo_element.name.replace("-", "_")
            method = getattr(self, f"xpath_{name}_functional_pseudo_element", None)
            if method is None:
                raise ExpressionError(
                    f"The functional pseudo-element ::{pseudo_element.name}() is unknown"
                )
            return method(xpath, pseudo_element)
        name = pseudo_element.replace("-", "_")
        method = getattr(self, f"xpath_{name}_simple_pseudo_element", None)
        if method is None:
            raise ExpressionError(f"The pseudo-element ::{pseudo_element} is unknown")
        return method(xpath)

    def xpath_attr_functional_pseudo_element(self, xpath, function):
        """``::attr(name)``: the value of attribute ``name``."""
        if function.argument_types() not in (["STRING"], ["IDENT"]):
            raise ExpressionError(
                f"Expected a single string or ident for ::attr(), got {function.arguments!r}"
            )
        return XPathExpr.from_xpath(xpath, attribute=function.arguments[0].value)

    def xpath_text_simple_pseudo_element(self, xpath):
        """``::text``: the text-node children."""
        return XPathExpr.from_xpath(xpath, textnode=True)


class GenericTranslator(TranslatorMixin, _OriginalGenericTranslator):
    """Case-sensitive translator for XML documents (used by ``type='xml'``)."""


class HTMLTranslator(TranslatorMixin, _OriginalHTMLTranslator):
    """HTML translator (case-insensitive element names; used by ``type='html'``)."""


# Deprecated Scrapy 1.0 names, kept so that old imports work.
ScrapyXPathExpr = XPathExpr
ScrapyGenericTranslator = GenericTranslator
ScrapyHTMLTranslator = HTMLTranslator
