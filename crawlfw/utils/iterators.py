"""Iterate over the nodes of an XML feed or the rows of a CSV file (Scrapy 1.2's
``scrapy.utils.iterators``).

* :func:`xmliter` finds nodes with a regular expression and parses each one alone: fast,
  tolerant of a broken document around the nodes, but not a real XML parser (a node
  name appearing inside CDATA or comments confuses it).
* :func:`xmliter_lxml` streams the document through lxml's ``iterparse`` (a real parser,
  constant memory per node).
* :func:`csviter` yields one dict per CSV row (RFC 4180 dialect of Python's ``csv``).
"""

import csv
import io
import logging
import re

from lxml import etree

from crawlfw.http import Response, TextResponse
from crawlfw.selector import Selector
from crawlfw.utils.python import re_rsearch, to_unicode

logger = logging.getLogger(__name__)

__all__ = ["xmliter", "xmliter_lxml", "csviter"]


def xmliter(obj, nodename):
    """Yield a ``Selector`` for each ``<nodename>`` element of an XML document.

    Each node is cut out of the text with a regular expression, wrapped between the
    document's text before the first ``<nodename`` (so namespace declarations on the
    ancestors stay in force) and after the last ``</nodename>``, and parsed alone.
    The node is matched by prefix and local name as written, so a prefix declared in
    the document (``'atom:entry'``) and a default namespace (``xmlns="..."``, e.g.
    sitemaps) both work; XPath queries inside the node still need their prefixes
    registered (``register_namespace``) or ``remove_namespaces()``. Self-closing nodes
    (``<x/>``) and nodes inside CDATA or comments are not handled (use
    :func:`xmliter_lxml`).

    Args:
        obj: a ``Response`` (a ``TextResponse`` is decoded with its encoding, another
            response as UTF-8), a ``str``, or UTF-8 ``bytes``.
        nodename: the tag to iterate, as written in the document (``'item'``,
            ``'atom:entry'``).

    Yields:
        ``crawlfw.selector.Selector`` of type ``'xml'`` for each node, in document order.

    Raises:
        TypeError: ``obj`` is none of the accepted types.
    """
    nodename_patt = re.escape(nodename)
    header_start_re = re.compile(rf"^(.*?)<\s*{nodename_patt}(?:\s|>)", re.S)
    header_end_re = re.compile(rf"<\s*/{nodename_patt}\s*>", re.S)
    text = _body_or_str(obj)

    header_start = header_start_re.search(text)
    header_start = header_start.group(1).strip() if header_start else ""
    header_end = re_rsearch(header_end_re, text)
    header_end = text[header_end[1]:].strip() if header_end else ""

    node_re = re.compile(rf"<{nodename_patt}[\s>].*?</{nodename_patt}>", re.DOTALL)
    for match in node_re.finditer(text):
        nodetext = header_start + match.group() + header_end
        yield _node_selector(nodetext, nodename)


def _node_selector(nodetext, nodename):
    root = Selector(text=nodetext, type="xml").root
    # The text before the node holds no <nodename element, so the first element named
    # so in document order is the node itself. Matching on (prefix, local name) rather
    # than with an XPath works for default namespaces and document-declared prefixes.
    prefix, _, local = nodename.rpartition(":")
    for el in root.iter(etree.Element):
        tag = el.tag
        if tag == nodename or (
            tag.rpartition("}")[2] == local and (el.prefix or "") == prefix
        ):
            return Selector(root=el, type="xml")
    # recover mode dropped the node's markup: the node's text parsed alone
    return Selector(text=nodetext[nodetext.find("<" + nodename):], type="xml").xpath("/*")[0]


def xmliter_lxml(obj, nodename, namespace=None, prefix="x"):
    """Yield a ``Selector`` for each ``<nodename>`` element, parsing with lxml's
    ``iterparse`` (a real, streaming XML parser).

    External entities are never loaded nor expanded (``resolve_entities=False``,
    ``no_network=True``): a feed cannot make the crawler read local files (XXE).

    Args:
        obj: a ``Response`` (its body is parsed with its encoding), ``str`` or UTF-8
            ``bytes``.
        nodename: the local name of the element to iterate.
        namespace: the element's namespace URI, or None for no namespace.
        prefix: the prefix under which ``namespace`` is registered on each yielded
            selector (``sel.xpath('x:title')``).

    Yields:
        ``crawlfw.selector.Selector`` of type ``'xml'`` for each node.

    Raises:
        TypeError: ``obj`` is none of the accepted types.
        lxml.etree.XMLSyntaxError: the document is not well-formed before the end.
    """
    reader = _StreamReader(obj)
    tag = f"{{{namespace}}}{nodename}" if namespace else nodename
    iterable = etree.iterparse(reader, tag=tag, encoding=reader.encoding,
                               resolve_entities=False, no_network=True, huge_tree=True)
    selxpath = "//" + (f"{prefix}:{nodename}" if namespace else nodename)
    for _, node in iterable:
        nodetext = etree.tostring(node, encoding="unicode")
        node.clear()
        # drop the already-seen siblings too, so memory stays flat on big feeds
        while node.getprevious() is not None:
            del node.getparent()[0]
        xs = Selector(text=nodetext, type="xml")
        if namespace:
            xs.register_namespace(prefix, namespace)
        yield xs.xpath(selxpath)[0]


class _StreamReader:
    """A file-like ``read(n) -> bytes`` over a response body or a string."""

    def __init__(self, obj):
        self._ptr = 0
        if isinstance(obj, Response):
            self._text = obj.body
            self.encoding = getattr(obj, "encoding", None) or "utf-8"
        elif isinstance(obj, (str, bytes)):
            self._text, self.encoding = obj, "utf-8"
        else:
            raise TypeError(_type_error_message(obj))
        self._is_unicode = isinstance(self._text, str)
        self._first = True

    def read(self, n=65535):
        start, end = self._ptr, self._ptr + n
        self._ptr = end
        chunk = self._text[start:end]
        if self._is_unicode:
            chunk = chunk.encode("utf-8")
        if self._first:
            self._first = False
            chunk = chunk.lstrip()
        return chunk


def csviter(obj, delimiter=None, headers=None, encoding=None, quotechar=None):
    """Yield one ``dict`` per row of a CSV document.

    Rows whose number of fields differs from the header's are skipped with a warning
    ``"ignoring row %(csvlnum)d (length: %(csvrow)d, should be: %(csvheader)d)"``
    (``csvlnum`` is the reader's line number, counting physical lines).

    Args:
        obj: a ``Response`` (a ``TextResponse`` is decoded with its encoding), a
            ``str``, or ``bytes`` (decoded with ``encoding``).
        delimiter: the one-character field separator; None means ``','``.
        headers: the keys of the dicts, in column order; None means the first row.
        encoding: codec of a ``bytes``/non-text-response ``obj`` (default UTF-8).
        quotechar: the one-character quote; None means ``'"'``.

    Yields:
        ``{header: field}`` dicts, fields as ``str``.

    Raises:
        TypeError: ``obj`` is none of the accepted types, or ``delimiter``/
            ``quotechar`` is not a one-character string (from ``csv.reader``).
        csv.Error: a malformed row (e.g. a NUL byte).
    """
    if isinstance(obj, TextResponse):
        text = obj.text
    elif isinstance(obj, Response):
        text = obj.body.decode(encoding or "utf-8")
    elif isinstance(obj, bytes):
        text = obj.decode(encoding or "utf-8")
    elif isinstance(obj, str):
        text = obj
    else:
        raise TypeError(_type_error_message(obj))

    kwargs = {}
    if delimiter:
        kwargs["delimiter"] = delimiter
    if quotechar:
        kwargs["quotechar"] = quotechar
    csv_r = csv.reader(io.StringIO(text, newline=""), **kwargs)

    if not headers:
        try:
            headers = next(csv_r)
        except StopIteration:
            return
    headers = [to_unicode(h) for h in headers]

    for row in csv_r:
        if len(row) != len(headers):
            logger.warning(
                "ignoring row %(csvlnum)d (length: %(csvrow)d, should be: %(csvheader)d)",
                {"csvlnum": csv_r.line_num, "csvrow": len(row), "csvheader": len(headers)},
            )
            continue
        yield dict(zip(headers, row, strict=True))


def _type_error_message(obj):
    return f"obj must be Response, str or bytes, not {type(obj).__name__}"


def _body_or_str(obj, unicode=True):
    if isinstance(obj, Response):
        if not unicode:
            return obj.body
        if isinstance(obj, TextResponse):
            return obj.text
        return obj.body.decode("utf-8")
    if isinstance(obj, str):
        return obj if unicode else obj.encode("utf-8")
    if isinstance(obj, bytes):
        return obj.decode("utf-8") if unicode else obj
    raise TypeError(_type_error_message(obj))
