"""XPath and CSS selectors over lxml: :class:`Selector` and :class:`SelectorList`.

Scrapy 1.2's ``scrapy.selector.unified`` API (which wrapped parsel 1.0), implemented
directly on lxml and cssselect, plus the later names users expect (``get()``,
``getall()``, ``attrib``).

Rules, from the Scrapy 1.2 "Selectors" documentation:

* The document type is ``'xml'`` for an ``XmlResponse``, else ``'html'``; ``text``
  alone is parsed as HTML; an explicit ``type`` always wins.
* HTML is parsed by libxml2's HTML parser in recover mode (malformed markup still
  gives a tree), XML by its XML parser in recover mode with entity expansion off.
* ``xpath()`` on a result evaluates relative to it: ``.//p`` searches its subtree, while
  ``//p`` searches the whole document (XPath 1.0, W3C REC-xpath-19991116 section 2).
* ``//li[1]`` is every ``li`` that is the first of its parent's ``li`` children;
  ``(//li)[1]`` is the first ``li`` of the document.
* EXSLT namespaces are registered: ``re`` (regular expressions: ``re:test()``,
  ``re:match()``, ``re:replace()``) and ``set`` (``set:difference()``,
  ``set:intersection()``, ``set:distinct()``, ...).

Later Scrapy (2.19, parsel 1.12) additions, with their semantics:

* ``type='json'``: the text is parsed with :func:`json.loads` and queried with
  :meth:`Selector.jmespath` (JMESPath, https://jmespath.org/specification.html);
  ``get()`` gives the JSON value itself. ``type='text'``: plain text; ``xpath()`` and
  ``css()`` parse it as HTML first. The selector of a ``TextResponse`` that is neither
  an ``HtmlResponse`` nor an ``XmlResponse`` (``application/json`` is one) takes its type
  from the body: ``'json'`` for a JSON object or array, ``'xml'`` after an XML
  declaration, else ``'html'``.
* ``Selector(body=b'...', encoding='utf-8')``: bytes instead of ``text``.
* The XPath function ``has-class("a", "b", ...)``: true when the context node's
  ``class`` attribute holds every one of the classes (split on ASCII whitespace, HTML
  Standard "classes").
* :meth:`Selector.drop` / :meth:`SelectorList.drop`: remove the matched nodes from the
  document.
"""

from __future__ import annotations

import json
import re as _re
import weakref
from re import Pattern
from typing import Any, SupportsIndex, overload

from lxml import etree

from crawlfw.selector import _lxml
from crawlfw.selector._regex import extract_regex
from crawlfw.selector.csstranslator import GenericTranslator, HTMLTranslator

__all__ = [
    "Selector",
    "SelectorList",
    "CannotRemoveElementWithoutRoot",
    "CannotRemoveElementWithoutParent",
    "CannotDropElementWithoutParent",
]

_WeakRef = weakref.ref
_NOT_SET = object()


class CannotRemoveElementWithoutRoot(Exception):
    """:meth:`Selector.drop` on a selector that wraps no element (a text or attribute
    value, a JSON value): there is no node to remove. (parsel's exception.)"""


class CannotRemoveElementWithoutParent(Exception):
    """Base of :class:`CannotDropElementWithoutParent`. (parsel's exception.)"""


class CannotDropElementWithoutParent(CannotRemoveElementWithoutParent):
    """:meth:`Selector.drop` on the root element of a document. (parsel's exception.)"""

_ElementBase = etree._Element
_XPathError = etree.XPathError

_TRANSLATORS = {"html": HTMLTranslator(), "xml": GenericTranslator()}
_TOSTRING_METHODS = {"html": "html", "xml": "xml"}
_TYPES = ("html", "xml", "json", "text")
_XML_DECLARATION = _re.compile(r"[\s\ufeff]*<\?xml\s")

def _st(response, st):
    """The selector type for ``response`` and the ``type`` argument ``st``; None when
    it must be detected from the text (a TextResponse neither HTML nor XML).

    An :class:`~crawlfw.http.HtmlResponse` or :class:`~crawlfw.http.XmlResponse` says
    its type in its class attribute ``_selector_type`` (``"html"``, ``"xml"``), so this
    module imports nothing from :mod:`crawlfw.http`, which imports it."""
    if st is None:
        if response is None:
            return "html"
        return getattr(response, "_selector_type", None)
    if st not in _TYPES:
        raise ValueError(
            f"Invalid selector type: {st!r} (expected 'html', 'xml', 'json' or 'text')")
    return st


def _load_json_or_none(text):
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None


def _detect_type(text):
    """``'json'`` (with the value) for a JSON object or array, else ``'xml'`` after an
    XML declaration, else ``'html'`` (parsel 1.12's detection)."""
    head = text.lstrip()[:1]
    if head == "{" or head == "[":
        data = _load_json_or_none(text)
        if isinstance(data, (dict, list)):
            return "json", data
    return ("xml" if _XML_DECLARATION.match(text) else "html"), None


def _jmespath_search(query, data, kwargs):
    global _jmespath
    if _jmespath is None:
        import jmespath

        _jmespath = jmespath
    return _jmespath.search(query, data, **kwargs)


_jmespath = None


def _default_namespaces():
    """A new dict of the namespaces every selector starts with (EXSLT's ``re`` and
    ``set``: ``_lxml.DEFAULT_NAMESPACES``, whose queries its XPath cache keys apart)."""
    return dict(_lxml.DEFAULT_NAMESPACES)


class SelectorList(list["Selector"]):
    """A ``list`` of :class:`Selector` objects with the selector methods applied to
    every member and the results flattened into one list.

    Slicing gives a :class:`SelectorList`; indexing gives a :class:`Selector`.
    """

    __slots__ = ()

    @overload
    def __getitem__(self, pos: SupportsIndex) -> Selector: ...

    @overload
    def __getitem__(self, pos: slice) -> SelectorList: ...

    def __getitem__(self, pos):
        o = super().__getitem__(pos)
        return self.__class__(o) if isinstance(pos, slice) else o

    def __getstate__(self):
        raise TypeError("can't pickle SelectorList objects")

    def xpath(self, query: str, namespaces: dict[str, str] | None = None,
              **kwargs: Any) -> SelectorList:
        """Call :meth:`Selector.xpath` on each member.

        Args:
            query: an XPath 1.0 expression.
            namespaces: extra ``{prefix: uri}`` for this query only.
            **kwargs: XPath variables (``$name`` in ``query``).

        Returns:
            SelectorList: every member's results, in order.

        Raises:
            ValueError: ``query`` is not a valid XPath expression.
        """
        out = self.__class__()
        for x in self:
            out.extend(x.xpath(query, namespaces=namespaces, **kwargs))
        return out

    def jmespath(self, query: str, **kwargs: Any) -> SelectorList:
        """Call :meth:`Selector.jmespath` on each member.

        Args:
            query: a JMESPath expression.
            **kwargs: passed to ``jmespath.search`` (e.g. ``options=``).

        Returns:
            SelectorList: every member's results, in order.

        Raises:
            jmespath.exceptions.JMESPathError: (a ``ValueError``) ``query`` is invalid.
        """
        out = self.__class__()
        for x in self:
            out.extend(x.jmespath(query, **kwargs))
        return out

    def css(self, query: str) -> SelectorList:
        """Call :meth:`Selector.css` on each member.

        Args:
            query: a CSS selector (with optional ``::text``/``::attr(name)``).

        Returns:
            SelectorList: every member's results, in order.

        Raises:
            ValueError: ``query`` is not a valid or supported CSS selector.
        """
        out = self.__class__()
        for x in self:
            out.extend(x.css(query))
        return out

    def re(self, regex: str | Pattern[str], replace_entities: bool = True) -> list[str]:
        """Call :meth:`Selector.re` on each member.

        Returns:
            list[str]: all matches, flattened.
        """
        out = []
        for x in self:
            out.extend(x.re(regex, replace_entities=replace_entities))
        return out

    def re_first(self, regex: str | Pattern[str], default: str | None = None,
                 replace_entities: bool = True) -> str | None:
        """The first match of :meth:`re`, or ``default`` when nothing matches."""
        for x in self:
            for match in x.re(regex, replace_entities=replace_entities):
                return match
        return default

    def extract(self) -> list[str]:
        """Returns: list[str]: each member serialized (see :meth:`Selector.extract`)."""
        if Selector.extract is not _selector_extract:  # replaced: call it for each
            return [x.extract() for x in self]
        # Selector.extract's first rule inline (a text or attribute result is its own
        # serialization) for the members that are plain Selectors; the others are asked
        out = []
        append = out.append
        for x in self:
            if x.__class__ is Selector:
                root = x.root
                if root.__class__ is str:
                    append(root)
                    continue
            append(x.extract())
        return out

    getall = extract

    def extract_first(self, default: str | None = None) -> str | None:
        """The first member serialized, or ``default`` for an empty list."""
        for x in self:
            return x.extract()
        return default

    get = extract_first

    @property
    def attrib(self) -> dict[str, str]:
        """The first member's attributes as a ``dict`` (``{}`` for an empty list)."""
        for x in self:
            return x.attrib
        return {}

    def drop(self) -> None:
        """Call :meth:`Selector.drop` on each member: remove the matched nodes from
        their document.

        Raises:
            CannotRemoveElementWithoutRoot, CannotDropElementWithoutParent: see
                :meth:`Selector.drop` (members before the failing one are removed).
        """
        for x in self:
            x.drop()


class Selector:
    """A node of a parsed HTML/XML document, a JSON value, or a query result to select
    from.

    Args:
        response: an ``HtmlResponse``/``XmlResponse``/``TextResponse`` to parse
            (its ``.text``, already decoded with the response's encoding).
        text: a document as ``str`` (``bytes`` are taken as UTF-8); cannot be combined
            with ``response``.
        type: ``'html'``, ``'xml'``, ``'json'`` or ``'text'``; None infers it:
            ``'xml'`` for an ``XmlResponse``, ``'html'`` for an ``HtmlResponse`` and for
            ``text``/``body``; for another ``TextResponse`` from its text (``'json'``
            for a JSON object or array, ``'xml'`` after an XML declaration, else
            ``'html'``); for ``root``, ``'html'`` for an lxml element, else ``'json'``.
        namespaces: extra ``{prefix: uri}`` registered for every query.
        root: an existing lxml element (or XPath result value, or JSON value) to wrap
            instead of parsing.
        base_url: the document URL recorded in the tree; defaults to ``response.url``.
        body: the document as ``bytes``/``bytearray`` in ``encoding``, used when
            neither ``response`` nor ``text`` is given (Scrapy 2 / parsel 1.8+).
        encoding: the encoding of ``body`` (default ``'utf-8'``); bytes it cannot
            decode become U+FFFD.

    Attributes:
        response: the response given, else None.
        type: ``'html'``, ``'xml'``, ``'json'`` or ``'text'``.
        root: the wrapped lxml element, a ``str``/``float``/``bool`` XPath result, the
            text (``'text'``), or the JSON value (``'json'``; None for text that is not
            JSON).
        namespaces: ``{prefix: uri}`` in effect (``re`` and ``set`` pre-registered).

    Raises:
        ValueError: both ``response`` and ``text`` were given, none of ``response``,
            ``text``, ``body``, ``root`` was, ``type`` is not one of the four, or
            ``root`` is an lxml element and ``type`` is ``'json'``/``'text'``.
        TypeError: ``response`` has no decoded ``.text`` (not a ``TextResponse``),
            ``text`` is not ``str``/``bytes``, or ``body`` not ``bytes``/``bytearray``.
        LookupError: ``encoding`` is not a known codec.
    """

    # _response: the response, a weakref.ref to it (the selector a TextResponse caches,
    # see response_selector()), or None.
    __slots__ = ["_response", "type", "root", "namespaces", "_expr", "__weakref__"]

    _default_type = None
    selectorlist_cls = SelectorList

    def __init__(
        self,
        response=None,
        text=None,
        type=None,
        namespaces=None,
        root=_NOT_SET,
        base_url=None,
        _root=None,
        _expr=None,
        body=b"",
        encoding="utf-8",
    ):
        if response is not None and text is not None:
            raise ValueError(f"{self.__class__.__name__}.__init__() received both response and text")
        st = _st(response, type or self._default_type)
        if root is _NOT_SET and _root is not None:
            root = _root  # Scrapy 1.2's name of the argument
        utf8 = None  # text.encode("utf8") when the response has it already (its body)
        if response is not None:
            try:
                text = response.text
            except AttributeError:
                raise TypeError(
                    f"{self.__class__.__name__} needs a TextResponse (HtmlResponse, XmlResponse) "
                    f"with decoded text, got {response.__class__.__name__}"
                ) from None
            if base_url is None:
                base_url = response.url
            utf8_text = getattr(response, "_utf8_text", None)
            if utf8_text is not None:
                utf8 = utf8_text()
        elif text is None and body:
            if not isinstance(body, (bytes, bytearray)):
                raise TypeError(
                    f"body argument should be of type bytes or bytearray, got {body.__class__.__name__}")
            text = bytes(body).decode(encoding, "replace")
        if text is not None:
            if isinstance(text, bytes):
                text = text.decode("utf-8", "replace")
            elif not isinstance(text, str):
                raise TypeError(f"text argument should be of type str, got {text.__class__.__name__}")
            if st is None:
                st, root = _detect_type(text)
            elif st == "json":
                root = _load_json_or_none(text)
            elif st == "text":
                root = text
            if st == "html" or st == "xml":
                root = _lxml.create_root_node(text, st, base_url=base_url, utf8=utf8)
        elif root is _NOT_SET:
            raise ValueError(f"{self.__class__.__name__} needs a response, text or root argument (or body)")
        elif isinstance(root, _ElementBase):
            if st == "json" or st == "text":
                raise ValueError(f"{self.__class__.__name__} got an lxml element as root "
                                 f"and {st!r} as type")
        elif type is None and self._default_type is None:
            st = "json"  # a value, as parsel: Selector(root={"a": 1})
        self._response = response
        self.type = st
        self.root = root
        ns = _default_namespaces()
        if namespaces:
            ns.update(namespaces)
        self.namespaces = ns
        self._expr = _expr

    def __getstate__(self):
        raise TypeError("can't pickle Selector objects")

    @property
    def response(self):
        """The response this selector was built from, or None (a selector built from
        ``text`` or ``root``, or a query result). The selector that
        ``TextResponse.selector`` caches refers back to its response weakly: it gives
        None once the response is gone (see :func:`response_selector`)."""
        r = self._response
        if type(r) is _WeakRef:
            return r()
        return r

    @response.setter
    def response(self, value):
        self._response = value

    def _wrap(self, results, query, st=None):
        """Wrap XPath results in selectors sharing this one's namespaces and type (or
        ``st``)."""
        cls = self.__class__
        if st is None:
            st = self.type
        if cls.__init__ is not Selector.__init__:
            # A subclass with its own constructor gets it called, as parsel does.
            return self.selectorlist_cls(
                cls(root=x, _expr=query, namespaces=self.namespaces, type=st)
                for x in results
            )
        new = object.__new__
        ns = self.namespaces
        out = self.selectorlist_cls()
        append = out.append
        for x in results:
            s = new(cls)
            s._response = None
            s.type = st
            s.root = x
            s.namespaces = ns  # shared; register_namespace() copies before writing
            s._expr = query
            append(s)
        return out

    def xpath(self, query: str, namespaces: dict[str, str] | None = None,
              **kwargs: Any) -> SelectorList:
        """Evaluate an XPath 1.0 expression relative to this node.

        Args:
            query: the expression, e.g. ``'//a/@href'`` or ``'.//p/text()'``.
            namespaces: extra ``{prefix: uri}`` for this query only (they are not
                registered on the selector).
            **kwargs: XPath variable values, referenced as ``$name`` in ``query``.

        Returns:
            SelectorList: one :class:`Selector` per result node or value (a number,
            string or boolean result gives a one-element list). Empty when this
            selector wraps a text or attribute value.

        Raises:
            ValueError: ``query`` does not compile or cannot be evaluated (the message
                names the expression), ``has-class()`` got no or non-string arguments,
                or this is a ``'json'`` selector.
        """
        root = self.root
        st = None
        if not isinstance(root, _ElementBase):
            if self.type == "text":
                # parsel: a text selector is queried as the HTML it may hold
                st = "html"
                root = _lxml.create_root_node(root if isinstance(root, str) else "", st)
            elif self.type == "json":
                raise ValueError("Cannot use xpath on a Selector of type 'json'")
            elif isinstance(root, str) and query.strip() == ".":
                return self._wrap([root], query)
            else:
                return self.selectorlist_cls()
        nsp = self.namespaces
        if namespaces:
            nsp = dict(nsp)
            nsp.update(namespaces)
        try:
            result = _lxml.compiled_xpath(query, nsp)(root, **kwargs)
        except _XPathError as exc:
            raise ValueError(f"XPath error: {exc} in {query}") from exc
        except TypeError as exc:
            raise ValueError(f"XPath error: {exc} in {query}") from exc
        if type(result) is not list:
            result = [result]
        return self._wrap(result, query, st)

    def css(self, query: str) -> SelectorList:
        """Select with a CSS selector (translated to XPath through cssselect).

        ``::text`` selects text nodes and ``::attr(name)`` attribute values, as in
        Scrapy 1.2.

        Args:
            query: the CSS selector group.

        Returns:
            SelectorList: the matches.

        Raises:
            ValueError: ``query`` is not valid CSS or uses an unsupported selector or
                pseudo-element (the message names the expression), or this is a
                ``'json'`` selector.
        """
        return self.xpath(self._css2xpath(query))

    def _css2xpath(self, query):
        translator = _TRANSLATORS.get(self.type)
        if translator is None:
            if self.type == "json":
                raise ValueError("Cannot use css on a Selector of type 'json'")
            translator = _TRANSLATORS["html"]  # 'text': queried as HTML
        try:
            return translator.css_to_xpath(query)
        except Exception as exc:  # cssselect's SelectorError tree, plus TypeError
            raise ValueError(f"CSS error: {exc} in {query!r}") from exc

    def jmespath(self, query: str, **kwargs: Any) -> SelectorList:
        """Select from JSON with a JMESPath expression (https://jmespath.org/).

        The data is this selector's JSON value (``type='json'``), or the JSON that its
        text holds: a text or attribute result (``response.css('script::text')``), a
        ``'text'`` selector, or an element's own text (``response.css('script')``);
        text that is not JSON is queried as null.

        Args:
            query: the expression, e.g. ``'items[].name'``.
            **kwargs: passed to ``jmespath.search``, e.g. ``options=jmespath.Options()``.

        Returns:
            SelectorList: one selector per result; a list result is flattened one
            level; null gives an empty list. A string result is a ``'text'`` selector
            (``get()`` gives the string; ``css()``/``xpath()`` query it as HTML), any
            other a ``'json'`` selector (``get()`` gives the value).

        Raises:
            jmespath.exceptions.JMESPathError: (a ``ValueError``) ``query`` is invalid.
        """
        root = self.root
        if isinstance(root, str):
            data = _load_json_or_none(root)
        elif self.type == "json":
            data = root
        elif isinstance(root, _ElementBase):
            data = _load_json_or_none(root.text)
        else:
            data = None
        result = _jmespath_search(query, data, kwargs)
        if result is None:
            result = []
        elif type(result) is not list:
            result = [result]
        cls = self.__class__
        out = self.selectorlist_cls()
        for x in result:
            st = "text" if isinstance(x, str) else "json"
            if cls.__init__ is not Selector.__init__:
                out.append(cls(root=x, _expr=query, type=st))
                continue
            s = object.__new__(cls)
            s._response = None
            s.type = st
            s.root = x
            s.namespaces = _default_namespaces()
            s._expr = query
            out.append(s)
        return out

    def re(self, regex: str | Pattern[str], replace_entities: bool = True) -> list[str]:
        """Apply a regular expression to :meth:`extract`'s result.

        Args:
            regex: a pattern ``str`` or compiled pattern. If it has a named group
                ``extract`` only that group of the first match is returned; else every
                match (or every numbered group of every match).
            replace_entities: decode character references (except ``&lt;`` and
                ``&amp;``) in the results.

        Returns:
            list[str]: the matches.
        """
        return extract_regex(regex, self.extract(), replace_entities=replace_entities)

    def re_first(self, regex: str | Pattern[str], default: str | None = None,
                 replace_entities: bool = True) -> str | None:
        """The first result of :meth:`re`, or ``default`` when nothing matches."""
        for match in self.re(regex, replace_entities=replace_entities):
            return match
        return default

    def extract(self) -> str:
        """Serialize the node.

        Returns:
            str: an element as markup (HTML or XML serialization, without its tail);
            a text or attribute value as is; ``'1'``/``'0'`` for a boolean result;
            ``str()`` of a number. A ``'json'`` selector gives its JSON value itself
            (any type), as parsel does.
        """
        root = self.root
        if type(root) is str:
            return root
        if self.type == "json":
            return root
        try:
            return etree.tostring(
                root, method=_TOSTRING_METHODS[self.type], encoding="unicode", with_tail=False
            )
        except (AttributeError, TypeError):
            if root is True:
                return "1"
            if root is False:
                return "0"
            return str(root)

    get = extract

    def getall(self) -> list[str]:
        """Returns: list[str]: ``[self.extract()]``."""
        return [self.extract()]

    @property
    def attrib(self) -> dict[str, str]:
        """The node's attributes as a ``dict`` (``{}`` for a text or value result)."""
        root = self.root
        if isinstance(root, _ElementBase):
            return dict(root.attrib)
        return {}

    def register_namespace(self, prefix, uri):
        """Register ``prefix`` for ``uri`` in this selector's later queries.

        Results of queries made before the call keep the namespaces they had.

        Args:
            prefix: the prefix used in XPath expressions.
            uri: the namespace URI.
        """
        ns = dict(self.namespaces)  # copy-on-write: results share the dict
        ns[prefix] = uri
        self.namespaces = ns

    def remove_namespaces(self):
        """Strip namespaces from every element and attribute of the document, so that
        ``//link`` matches ``<atom:link>``. Changes the shared tree in place."""
        root = self.root
        if not isinstance(root, _ElementBase):
            return
        for el in root.iter(etree.Element):
            tag = el.tag
            if tag[0] == "{":
                el.tag = tag.split("}", 1)[1]
            attrib = el.attrib
            for an in [a for a in attrib.keys() if a[0] == "{"]:
                attrib[an.split("}", 1)[1]] = attrib.pop(an)
        etree.cleanup_namespaces(root)

    def drop(self) -> None:
        """Remove this node from its document (parsel's ``drop()``).

        An HTML element goes with its subtree; its tail text stays where it was (joined
        to the previous sibling or the parent), as ``lxml.html``'s ``drop_tree()``
        does. XML elements likewise.

        Raises:
            CannotRemoveElementWithoutRoot: this selector wraps no element (a text or
                attribute value such as ``li::text``, a number, a JSON value).
            CannotDropElementWithoutParent: the element is its document's root.
        """
        root = self.root
        try:
            parent = root.getparent()
        except AttributeError:
            raise CannotRemoveElementWithoutRoot(
                "The node you're trying to drop has no root, are you trying to drop a "
                "pseudo-element? Try to use 'li' as a selector instead of 'li::text' or "
                "'//li' instead of '//li/text()', for example."
            ) from None
        if parent is None:
            raise CannotDropElementWithoutParent(
                "The node you're trying to remove has no parent, are you trying to "
                "remove a root element?")
        tail = root.tail
        if tail:
            previous = root.getprevious()
            if previous is not None:
                previous.tail = (previous.tail or "") + tail
            else:
                parent.text = (parent.text or "") + tail
        parent.remove(root)

    def __bool__(self):
        return bool(self.extract())

    def __str__(self):
        data = repr(str(self.extract())[:40])
        return f"<{type(self).__name__} xpath={self._expr!r} data={data}>"

    __repr__ = __str__


#: Selector.extract as defined here (SelectorList.extract's shortcut applies while it is).
_selector_extract = Selector.extract


def response_selector(response) -> Selector:
    """Build the :class:`Selector` that ``TextResponse.selector`` caches.

    It is ``Selector(response=response)`` except that its ``response`` attribute refers
    to the response weakly, so that the pair is not a reference cycle: a response and
    its parsed document (lxml's tree, ~10 times the page's size in C memory) are freed
    as soon as the last reference to the response goes, not at the next run of
    Python's cyclic garbage collector. Under a crawl's load, trees waiting for the
    collector doubled the heap in use and fragmented malloc's arenas, so RSS kept
    climbing (issue 23: 3 MB per 10,000 pages, flat at 60 MB with this).

    Args:
        response: a ``TextResponse`` (``HtmlResponse``, ``XmlResponse``).

    Returns:
        Selector: over the response's text; ``.response`` is the response while it lives.

    Raises:
        TypeError: ``response`` has no decoded ``.text``.
    """
    sel = Selector(response=response)
    sel._response = _WeakRef(response)
    return sel
