"""Private lxml plumbing for :mod:`crawlfw.selector`: per-thread parsers, document
roots, and a per-thread cache of compiled XPath expressions.

lxml parsers and compiled :class:`lxml.etree.XPath` objects must not be used by two
threads at once (lxml FAQ, "threading"), so both are kept per thread. Building an
``lxml.html.HTMLParser`` costs about as much as parsing a small page, which is why
one instance per thread is reused for every document.
"""

import threading

from lxml import etree, html

__all__ = ["create_root_node", "compiled_xpath", "XPATH_CACHE_SIZE"]

#: How many compiled XPath expressions each thread keeps (oldest dropped first).
XPATH_CACHE_SIZE = 1024

_local = threading.local()


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


def create_root_node(text, st, base_url=None):
    """Parse ``text`` into an lxml root element.

    Args:
        text: the document, a ``str``.
        st: ``'html'`` or ``'xml'``.
        base_url: the document URL recorded in the tree (``docinfo.URL``), or None.

    Returns:
        The root ``lxml`` element. Leading/trailing whitespace and NUL characters are
        dropped first (as parsel does); an empty or unparseable document gives an
        empty ``<html/>`` root rather than an error.
    """
    body = text.strip().replace("\x00", "").encode("utf8") or b"<html/>"
    parser = _parser(st)
    root = etree.fromstring(body, parser=parser, base_url=base_url)
    if root is None:
        root = etree.fromstring(b"<html/>", parser=parser, base_url=base_url)
    return root


def compiled_xpath(query, namespaces):
    """Return a compiled, cached :class:`lxml.etree.XPath` for ``query``.

    Args:
        query: the XPath 1.0 expression.
        namespaces: ``{prefix: uri}`` used to compile it.

    Returns:
        An ``etree.XPath`` with smart strings off (text and attribute results are plain
        ``str``), private to the calling thread.

    Raises:
        lxml.etree.XPathSyntaxError: ``query`` does not compile (or names an
            unregistered namespace prefix).
    """
    cache = getattr(_local, "xpaths", None)
    if cache is None:
        cache = _local.xpaths = {}
    key = (query, tuple(namespaces.items()))
    xp = cache.get(key)
    if xp is None:
        xp = etree.XPath(query, namespaces=namespaces, smart_strings=False)
        if len(cache) >= XPATH_CACHE_SIZE:
            del cache[next(iter(cache))]
        cache[key] = xp
    return xp
