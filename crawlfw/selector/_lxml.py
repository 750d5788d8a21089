"""Private lxml plumbing for :mod:`crawlfw.selector`: per-thread parsers, document
roots, and a per-thread cache of compiled XPath expressions.

lxml parsers and compiled :class:`lxml.etree.XPath` objects must not be used by two
threads at once (lxml FAQ, "threading"), so both are kept per thread. Building an
``lxml.html.HTMLParser`` costs about as much as parsing a small page, which is why
one instance per thread is reused for every document.

Compiled XPaths and the EXSLT namespaces (issue 23, "flat memory over long runs"): when
a compiled ``etree.XPath`` has a prefix bound to one of the EXSLT namespaces that
libexslt implements (dates-and-times, math, sets, strings), lxml registers that
module's functions into the evaluator's XPath context on every call, and every call on
a new document keeps about 100-140 bytes in the evaluator until the evaluator itself is
freed (lxml 6.1.3 / libxml2 2.14.6 / libxslt 1.1.43; reproduced with lxml alone). A
cached evaluator lives for the whole crawl, so 10 queries per page grew a crawl by
13 MB per 10,000 pages. Hence :func:`compiled_xpath`:

* compiles without the EXSLT bindings the expression does not use (``set`` is a
  default namespace of every :class:`~crawlfw.selector.Selector`; almost no query
  names it): such an evaluator keeps nothing per document, and compiles faster;
* replaces an evaluator that does use one of those prefixes (``set:distinct(...)``)
  by a fresh compile every :data:`EXSLT_RECYCLE_AFTER` calls, which bounds what it
  keeps to a few tens of KB.

The ``re`` namespace (lxml's own implementation of EXSLT regular expressions) and
``http://exslt.org/common`` keep nothing and are left alone.
"""

import re
import threading

from lxml import etree, html

__all__ = ["create_root_node", "compiled_xpath", "XPATH_CACHE_SIZE", "EXSLT_RECYCLE_AFTER"]

#: How many compiled XPath expressions each thread keeps (oldest dropped first).
XPATH_CACHE_SIZE = 1024

#: Calls after which an evaluator that uses a libexslt namespace is compiled anew
#: (each call on a new document keeps ~100-140 bytes in it; 256 calls ~ 35 KB).
EXSLT_RECYCLE_AFTER = 256

#: The EXSLT namespaces whose functions libexslt registers per call of a compiled XPath
#: (see the module docstring). http://exslt.org/regular-expressions is lxml's own.
_PER_CALL_EXSLT = frozenset({
    "http://exslt.org/dates-and-times",
    "http://exslt.org/math",
    "http://exslt.org/sets",
    "http://exslt.org/strings",
})

_local = threading.local()

#: The namespaces every selector starts with (EXSLT, https://exslt.org/; a copy each:
#: ``unified._default_namespaces()``): a query with just these is cached under the query
#: string alone, without building ``tuple(namespaces.items())`` per call.
DEFAULT_NAMESPACES = {
    "re": "http://exslt.org/regular-expressions",
    "set": "http://exslt.org/sets",
}


def _new_parser(st):
    # recover=True: malformed markup still gives a tree, as in Scrapy 1.2 (parsel).
    # huge_tree=True: lift libxml2's depth and text-node size limits.
    # encoding='utf8': the input is always the UTF-8 re-encoding of response.text, so
    # a <meta charset> or XML declaration in the document cannot override it.
    if st == "xml":
        # resolve_entities=False: never fetch or expand external entities (XXE).
        return etree.XMLParser(
            recover=True, encoding="utf8", huge_tree=True, resolve_entities=False
        )
    return html.HTMLParser(recover=True, encoding="utf8", huge_tree=True)


def _parser(st):
    parsers = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(st)
    if parser is None:
        parser = parsers[st] = _new_parser(st)
    return parser


def _document_bytes(text, utf8=None):
    """``text.strip().replace("\\x00", "").encode("utf8")``, without the copy of the
    whole text that stripping it makes: the UTF-8 bytes are stripped instead. That is
    the same whenever what bytes.strip() leaves starts and ends with an ASCII character
    that str.strip() keeps too (it also strips U+001C..U+001F and non-ASCII spaces:
    those documents take the reference path). ``utf8``, when given, must be
    ``text.encode("utf8")`` (a response's body that is exactly that: it is not encoded
    again)."""
    body = (text.encode("utf8") if utf8 is None else utf8).strip()
    if body:
        first, last = body[0], body[-1]
        if first > 0x7F or last > 0x7F or 0x1C <= first <= 0x1F or 0x1C <= last <= 0x1F:
            body = text.strip().encode("utf8")
        if body.find(b"\x00") >= 0:  # not "in": it raises and clears a TypeError first
            body = body.replace(b"\x00", b"")
    return body


def create_root_node(text, st, base_url=None, utf8=None):
    """Parse ``text`` into an lxml root element.

    Args:
        text: the document, a ``str``.
        st: ``'html'`` or ``'xml'``.
        base_url: the document URL recorded in the tree (``docinfo.URL``), or None.
        utf8: None, or exactly ``text.encode("utf8")`` when the caller has those bytes
            already (``TextResponse._utf8_text()``: a UTF-8 body), to spare encoding it.

    Returns:
        The root ``lxml`` element. Leading/trailing whitespace and NUL characters are
        dropped first (as parsel does); an empty or unparseable document gives an
        empty ``<html/>`` root rather than an error.
    """
    body = _document_bytes(text, utf8) or b"<html/>"
    parser = _parser(st)
    root = etree.fromstring(body, parser=parser, base_url=base_url)
    if root is None:
        root = etree.fromstring(b"<html/>", parser=parser, base_url=base_url)
    return root


_ASCII_WHITESPACE = re.compile("[ \t\n\f\r]+")


def _has_class(context, *classes):
    """The XPath function ``has-class("a", ...)`` (parsel's): true when the context
    node's ``class`` attribute, split on ASCII whitespace (HTML Standard, "classes"; the
    WHATWG Infra "ASCII whitespace"), holds every class given.

    Raises:
        ValueError: no argument, or one that is not a string.
    """
    if not classes:
        raise ValueError("XPath error: has-class must have at least 1 argument")
    for cls in classes:
        if not isinstance(cls, str):
            raise ValueError("XPath error: has-class arguments must be strings")
    get = getattr(context.context_node, "get", None)
    value = get("class") if get is not None else None
    if value is None:
        return False
    value = f" {_ASCII_WHITESPACE.sub(' ', value)} "
    for cls in classes:
        if f" {cls} " not in value:
            return False
    return True


#: lxml extension functions: given only to the evaluators whose expression names them
#: (local functions are registered on every call).
_HAS_CLASS = {(None, "has-class"): _has_class}


def _xpath(query, namespaces):
    return etree.XPath(query, namespaces=namespaces, smart_strings=False,
                       extensions=_HAS_CLASS if "has-class" in query else None)


class _RecycledXPath:
    """A compiled XPath that is compiled anew every :data:`EXSLT_RECYCLE_AFTER` calls,
    for the expressions that use a prefix of :data:`_PER_CALL_EXSLT` (see the module
    docstring). Called like ``etree.XPath``: ``xp(root, **variables)``."""

    __slots__ = ("_query", "_namespaces", "_xpath", "_left")

    def __init__(self, query, namespaces):
        self._query = query
        self._namespaces = namespaces
        self._xpath = _xpath(query, namespaces)
        self._left = EXSLT_RECYCLE_AFTER

    def __call__(self, root, **variables):
        left = self._left
        if left <= 0:
            # The old evaluator (and what libexslt kept in it) is freed here.
            self._xpath = _xpath(self._query, self._namespaces)
            left = EXSLT_RECYCLE_AFTER
        self._left = left - 1
        return self._xpath(root, **variables)


def _compile(query, namespaces):
    per_call = None
    for prefix, uri in namespaces.items():
        if uri in _PER_CALL_EXSLT:
            if per_call is None:
                per_call = []
            per_call.append(prefix)
    if per_call is None:
        return _xpath(query, namespaces)
    # A QName is one token in XPath 1.0 (no space around its ':'), so a prefix the
    # expression uses always appears as "prefix:"; a false positive (the text inside
    # a string literal) only costs the recycling below.
    unused = {p for p in per_call if p + ":" not in query}
    if unused:
        namespaces = {p: u for p, u in namespaces.items() if p not in unused}
    if len(unused) == len(per_call):
        return _xpath(query, namespaces)
    return _RecycledXPath(query, namespaces)


def compiled_xpath(query, namespaces):
    """Return a compiled, cached XPath evaluator for ``query``.

    Args:
        query: the XPath 1.0 expression.
        namespaces: ``{prefix: uri}`` in scope for it. Bindings to the libexslt
            namespaces (sets, math, strings, dates-and-times) that ``query`` does not
            use are left out of the compiled evaluator, so that it keeps no state per
            document (see the module docstring).

    Returns:
        A callable ``xp(root, **variables)``: an ``etree.XPath`` with smart strings off
        (text and attribute results are plain ``str``), or, when ``query`` uses a
        libexslt prefix, a wrapper that recompiles it every
        :data:`EXSLT_RECYCLE_AFTER` calls. Private to the calling thread.

    Raises:
        lxml.etree.XPathSyntaxError: ``query`` does not compile (or names an
            unregistered namespace prefix).
    """
    cache = getattr(_local, "xpaths", None)
    if cache is None:
        cache = _local.xpaths = {}
    # a str key for the default namespaces (never equal to the tuple keys of others)
    key = query if namespaces == DEFAULT_NAMESPACES else (query, tuple(namespaces.items()))
    xp = cache.get(key)
    if xp is None:
        xp = _compile(query, namespaces)
        if len(cache) >= XPATH_CACHE_SIZE:
            del cache[next(iter(cache))]
        cache[key] = xp
    return xp
