"""Read sitemaps and sitemap indexes, and the ``Sitemap:`` lines of robots.txt files
(Scrapy 1.2's ``scrapy.utils.sitemap``).

The formats are those of the Sitemaps protocol, https://www.sitemaps.org/protocol.html:
a ``<urlset>`` lists pages (``<url>`` with ``<loc>``, optional ``<lastmod>``,
``<changefreq>``, ``<priority>``), a ``<sitemapindex>`` lists sitemaps (``<sitemap>``
with ``<loc>``, optional ``<lastmod>``). Alternate language versions of a page are
``<xhtml:link rel="alternate" hreflang="..." href="..."/>`` children of its ``<url>``
(Google's extension, https://developers.google.com/search/docs/specialty/international/localized-versions#sitemap).
"""

import lxml.etree

__all__ = ["Sitemap", "sitemap_urls_from_robots"]


class Sitemap:
    """A parsed sitemap (``type == 'urlset'``) or sitemap index (``'sitemapindex'``).

    The parser is lenient (``recover=True``: real sitemaps are often slightly broken)
    and safe: entities are not expanded and nothing is fetched (``resolve_entities=False``,
    ``no_network=True``), so a sitemap cannot make the crawler read local files or other
    URLs (XXE) nor blow up memory with nested entities. ``huge_tree=True`` lifts
    libxml2's limits on text node size and depth; the caller bounds the input size
    (``SitemapSpider`` applies ``DOWNLOAD_MAXSIZE`` to decompressed bodies).

    Iterating yields one dict per ``<url>``/``<sitemap>`` that has a ``<loc>``:
    ``{'loc': str, 'lastmod': str, ...}`` with every child element by local name and its
    stripped text, plus ``'alternate': [href, ...]`` for ``<xhtml:link>`` children.
    Values are as written: relative ``loc`` values are not resolved here.

    Args:
        xmltext: the document, ``bytes`` (its XML declaration gives the encoding) or
            ``str``.

    Attributes:
        type: the root element's local name (``'urlset'``, ``'sitemapindex'``, or
            whatever else the document's root is).

    Raises:
        ValueError: ``xmltext`` has no root element at all (empty or not XML).
        TypeError: ``xmltext`` is neither ``bytes`` nor ``str``.
    """

    def __init__(self, xmltext):
        if isinstance(xmltext, str):
            # lxml refuses str input carrying an encoding declaration
            xmltext = xmltext.encode("utf-8")
            parser = _parser("utf-8")
        elif isinstance(xmltext, (bytes, bytearray)):
            parser = _parser(None)
        else:
            raise TypeError(f"Sitemap needs bytes or str, got {type(xmltext).__name__}")
        try:
            root = lxml.etree.fromstring(bytes(xmltext), parser=parser)
        except lxml.etree.XMLSyntaxError as exc:
            raise ValueError(f"Not a sitemap: cannot parse the document as XML ({exc})") from None
        if root is None:
            raise ValueError("Not a sitemap: the document has no root element")
        self._root = root
        self.type = _local_name(root.tag)

    def __iter__(self):
        for elem in self._root.iterchildren(lxml.etree.Element):
            d = {}
            for el in elem.iterchildren(lxml.etree.Element):
                name = _local_name(el.tag)
                if name == "link":
                    if "href" in el.attrib:
                        d.setdefault("alternate", []).append(el.get("href").strip())
                else:
                    d[name] = el.text.strip() if el.text else ""
            if "loc" in d:
                yield d


def _parser(encoding):
    return lxml.etree.XMLParser(
        recover=True,
        remove_comments=True,
        resolve_entities=False,
        no_network=True,
        huge_tree=True,
        encoding=encoding,
    )


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
