"""Read sitemaps and sitemap indexes, and the ``Sitemap:`` lines of robots.txt files
(Scrapy 1.2's ``scrapy.utils.sitemap``).

The formats are those of the Sitemaps protocol, https://www.sitemaps.org/protocol.html:
a ``<urlset>`` lists pages (``<url>`` with ``<loc>``, optional ``<lastmod>``,
``<changefreq>``, ``<priority>``), a ``<sitemapindex>`` lists sitemaps (``<sitemap>``
with ``<loc>``, optional ``<lastmod>``). Alternate language versions of a page are
``<xhtml:link rel="alternate" hreflang="..." href="..."/>`` children of its ``<url>``
(Google's extension, https://developers.google.com/search/docs/specialty/international/localized-versions#sitemap).
"""

from io import BytesIO

import lxml.etree

__all__ = ["Sitemap", "sitemap_urls_from_robots"]


class Sitemap:
    """A parsed sitemap (``type == 'urlset'``) or sitemap index (``'sitemapindex'``),
    read as a stream (Scrapy 2's ``Sitemap``): the constructor reads up to the root
    element, iteration reads the rest, entry by entry, and each entry's elements are
    freed once read, so a 50 MB sitemap is not held in memory as a tree.

    The parser is lenient (``recover=True``: real sitemaps are often slightly broken)
    and safe: entities are not expanded and nothing is fetched (``resolve_entities=False``,
    ``no_network=True``), so a sitemap cannot make the crawler read local files or other
    URLs (XXE) nor blow up memory with nested entities. ``huge_tree=True`` lifts
    libxml2's limits on text node size and depth; the caller bounds the input size
    (``SitemapSpider`` applies ``DOWNLOAD_MAXSIZE`` to decompressed bodies).

    Iterating yields one dict per child of the root (``<url>``/``<sitemap>``) that has
    a ``<loc>``: ``{'loc': str, 'lastmod': str, ...}`` with every child element by
    local name and its stripped text, plus ``'alternate': [href, ...]`` for
    ``<xhtml:link>`` children. Values are as written: relative ``loc`` values are not
    resolved here. A sitemap is iterated once (a second iteration yields nothing, as
    in Scrapy 2); a document that breaks off ends the iteration with the entries read.

    Args:
        xmltext: the document, ``bytes`` (its XML declaration gives the encoding) or
            ``str``.

    Attributes:
        type: the root element's local name (``'urlset'``, ``'sitemapindex'``, or
            whatever else the document's root is).
        xmliter: the stream being read (Scrapy 2's ``Sitemap.xmliter``): lxml's
            ``iterparse`` iterator of ``(event, element)`` pairs, events ``"start"``
            and ``"end"``, the root's ``start`` already taken.

    Raises:
        ValueError: ``xmltext`` has no root element at all (empty or not XML).
        TypeError: ``xmltext`` is neither ``bytes`` nor ``str``.
    """

    def __init__(self, xmltext):
        if isinstance(xmltext, str):
            # lxml refuses str input carrying an encoding declaration
            xmltext = xmltext.encode("utf-8")
            encoding = "utf-8"
        elif isinstance(xmltext, (bytes, bytearray)):
            encoding = None
        else:
            raise TypeError(f"Sitemap needs bytes or str, got {type(xmltext).__name__}")
        self.xmliter = lxml.etree.iterparse(
            BytesIO(bytes(xmltext)),
            events=("start", "end"),
            recover=True,
            remove_comments=True,
            remove_pis=True,
            resolve_entities=False,
            no_network=True,
            huge_tree=True,
            collect_ids=False,
            encoding=encoding,
        )
        try:
            _, root = next(self.xmliter)
        except lxml.etree.XMLSyntaxError as exc:
            raise ValueError(f"Not a sitemap: cannot parse the document as XML ({exc})") from None
        except StopIteration:
            raise ValueError("Not a sitemap: the document has no root element") from None
        self._root = root
        self.type = _local_name(root.tag)

    def __iter__(self):
        depth = 1  # the root's start was read by __init__
        try:
            for event, elem in self.xmliter:
                if event == "start":
                    depth += 1
                    continue
                depth -= 1
                if depth != 1:  # not a child of the root
                    continue
                d = _entry(elem)
                # free what was read: the entry, and the entries before it
                elem.clear()
                parent = elem.getparent()
                if parent is not None:
                    while elem.getprevious() is not None:
                        del parent[0]
                if d is not None:
                    yield d
        except lxml.etree.XMLSyntaxError:
            return  # recover=True could not go on: the entries read are kept


def _entry(elem):
    """The dict of one ``<url>``/``<sitemap>`` element (see :class:`Sitemap`), or None
    when it has no ``<loc>``."""
    d = {}
    for el in elem.iterchildren(lxml.etree.Element):
        name = _local_name(el.tag)
        if name == "link":
            if "href" in el.attrib:
                d.setdefault("alternate", []).append(el.get("href").strip())
        else:
            d[name] = el.text.strip() if el.text else ""
    return d if "loc" in d else None


def _local_name(tag):
    if not isinstance(tag, str):
        return ""
    return tag.split("}", 1)[1] if "}" in tag else tag


def sitemap_urls_from_robots(robots_text, base_url=None):
    """Yield the URLs of the ``Sitemap:`` lines of a robots.txt file.

    The field name is matched case-insensitively, anywhere in the file (RFC 9309
    section 2.2.4 leaves ``Sitemap`` outside the groups; sitemaps.org "Specifying the
    Sitemap location in your robots.txt file"). Comments after ``#`` are removed.

    Args:
        robots_text: the robots.txt body as ``str`` (``bytes`` are decoded as UTF-8,
            a leading BOM is ignored).
        base_url: the robots.txt URL; when given, relative sitemap URLs are resolved
            against it (they should be absolute, but e.g. ``Sitemap: /sitemap.xml``
            occurs).

    Yields:
        Each sitemap URL (``str``), in file order.
    """
    from urllib.parse import urljoin

    if isinstance(robots_text, bytes):
        robots_text = robots_text.decode("utf-8", "replace")
    for line in robots_text.lstrip("\ufeff").splitlines():
        if line.lstrip().lower().startswith("sitemap:"):
            url = line.split(":", 1)[1].split("#", 1)[0].strip()
            if not url:
                continue
            yield urljoin(base_url, url) if base_url else url
