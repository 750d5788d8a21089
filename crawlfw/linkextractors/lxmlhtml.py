"""The lxml link extractor (Scrapy 1.2's ``scrapy.linkextractors.lxmlhtml``).

Links are found in one pass over the parsed tree of the response (the response's own
selector, so the page is parsed once), in document order.

URL rules:

* the attribute value is stripped of leading/trailing ASCII whitespace (HTML Living
  Standard, "valid URL potentially surrounded by spaces") and resolved against the
  document base URL: the ``href`` of the first ``<base href>`` (resolved against the
  response URL), else the response URL (HTML Living Standard, "document base URL";
  RFC 3986 section 5 resolution);
* a URL with characters that may not appear in a URL (non-ASCII, spaces, ...) is
  percent-encoded (``w3lib.url.safe_url_string``, with the response encoding for the
  query), as browsers do;
* ``nofollow`` is True when the element's ``rel`` contains the ``nofollow`` token.
"""

from functools import partial
from urllib.parse import urljoin

from lxml import etree
from w3lib.html import strip_html5_whitespace
from w3lib.url import canonicalize_url

from crawlfw.link import Link
from crawlfw.linkextractors._filtering import FilteringLinkExtractor
from crawlfw.utils._url_fastpaths import absolute_url, safe_url, url_origin
from crawlfw.utils.misc import arg_to_iter, rel_has_nofollow
from crawlfw.utils.python import to_native_str, unique

__all__ = ["LxmlLinkExtractor", "LxmlParserLinkExtractor"]

XHTML_NAMESPACE = "http://www.w3.org/1999/xhtml"
_XHTML_PREFIX = "{" + XHTML_NAMESPACE + "}"
_ElementBase = etree._Element

def _nons(tag):
    if isinstance(tag, str) and tag.startswith(_XHTML_PREFIX):
        return tag[len(_XHTML_PREFIX):]
    return tag


def _text_content(el):
    # Same value as XPath string(el): all descendant text, comments excluded.
    return "".join(el.itertext())


def _document_base_url(root, response_url, encoding):
    """The base URL of the document ``root`` was parsed from (first ``<base href>``)."""
    if isinstance(root, _ElementBase):
        for base in root.iter("base", _XHTML_PREFIX + "base"):
            href = base.get("href")
            if href is not None:
                try:
                    return safe_url(urljoin(response_url, strip_html5_whitespace(href)), encoding)
                except ValueError:
                    break
    return response_url


class LxmlParserLinkExtractor:
    """Finds links (elements and attributes) in a parsed document, without filtering.

    Args:
        tag: a tag name, a collection of tag names, or a predicate ``f(tag) -> bool``.
        attr: an attribute name, a collection of them, or a predicate.
        process: ``f(url) -> url | None`` applied to each absolute URL; None drops
            the link.
        unique: drop links whose URL was already seen.
        strip: strip whitespace around attribute values.
        canonicalized: whether the URLs are canonical already (Scrapy 2): True
            compares them as they are for ``unique``; False (default) compares their
            canonical forms (``w3lib.url.canonicalize_url``, fragments kept), so that
            ``/a?x=1&y=2`` and ``/a?y=2&x=1`` are one link.
    """

    def __init__(self, tag="a", attr="href", process=None, unique=False, strip=True,
                 canonicalized=False):
        if callable(tag):
            self.scan_tag = tag
            self._tags = None
        else:
            tags = frozenset([tag] if isinstance(tag, str) else tag)
            self.scan_tag = tags.__contains__
            # Match plain HTML tags and XHTML-namespaced ones (XmlResponse) in one pass.
            self._tags = tuple(tags) + tuple(_XHTML_PREFIX + t for t in tags)
        if callable(attr):
            self.scan_attr = attr
            self._attr = None
        else:
            attrs = frozenset([attr] if isinstance(attr, str) else attr)
            self.scan_attr = attrs.__contains__
            self._attr = next(iter(attrs)) if len(attrs) == 1 else None
        self.process_attr = process if callable(process) else None
        self.unique = unique
        self.strip = strip
        self.link_key = _link_url if canonicalized else _canonical_link_url

    def _iter_elements(self, document):
        if self._tags is not None:
            # iter() with no tag would yield every element: no tags means no links
            return document.iter(*self._tags) if self._tags else iter(())
        scan_tag = self.scan_tag
        return (el for el in document.iter(etree.Element) if scan_tag(_nons(el.tag)))

    def _iter_links(self, document):
        """Yield ``(element, attribute name, attribute value)`` in document order."""
        single = self._attr
        scan_attr = self.scan_attr
        for el in self._iter_elements(document):
            if single is not None:
                value = el.get(single)
                if value is not None:
                    yield el, single, value
                continue
            for name, value in el.items():
                if scan_attr(name):
                    yield el, name, value

    def _extract_links(self, selector, response_url, response_encoding, base_url):
        document = selector.root
        if not isinstance(document, _ElementBase):  # a text or attribute result
            return []
        links = []
        strip = self.strip
        process = self.process_attr
        origin = url_origin(base_url)
        for el, _attr, attr_val in self._iter_links(document):
            if strip:
                attr_val = strip_html5_whitespace(attr_val)
            try:
                if process is None:
                    url = absolute_url(base_url, origin, attr_val, response_encoding)
                else:
                    url = process(urljoin(base_url, attr_val))
                    if url is None:
                        continue
                    url = to_native_str(url, encoding=response_encoding or "utf-8")
                    # process_value may return a relative URL.
                    url = urljoin(response_url, safe_url(url, response_encoding))
            except ValueError:
                continue  # a bogus URL (e.g. an invalid IPv6 host)
            links.append(Link(url, _text_content(el), nofollow=rel_has_nofollow(el.get("rel"))))
        return self._deduplicate_if_needed(links)

    def extract_links(self, response):
        """Returns: list[Link]: the links of ``response`` (unfiltered)."""
        selector = response.selector
        base_url = _document_base_url(selector.root, response.url, response.encoding)
        return self._extract_links(selector, response.url, response.encoding, base_url)

    def _process_links(self, links):
        """Normalize and filter extracted links; subclasses may override it."""
        return self._deduplicate_if_needed(links)

    def _deduplicate_if_needed(self, links):
        if self.unique:
            return unique(links, key=self.link_key)
        return links


def _link_url(link):
    return link.url


def _canonical_link_url(link):
    return canonicalize_url(link.url, keep_fragments=True)


def _name_matches(allowed, denied, name) -> bool:
    """Whether a tag or attribute ``name`` is looked at: listed in ``allowed`` (or
    ``allowed`` holds the wildcard ``"*"``) and not in ``denied``."""
    if name in denied:
        return False
    return "*" in allowed or name in allowed


def _name_rule(allowed: set, denied: set):
    """``LxmlParserLinkExtractor``'s ``tag``/``attr`` for Scrapy 2's ``tags``/``attrs``
    with ``deny_tags``/``deny_attrs``: a set of names (the fast path) unless the
    wildcard ``"*"`` asks for a predicate."""
    if "*" in allowed:
        return partial(_name_matches, frozenset(allowed), frozenset(denied))
    return allowed - denied


class LxmlLinkExtractor(FilteringLinkExtractor):
    """Extracts the links of HTML/XML responses, filtered.

    Args:
        allow: regex (str or compiled) or list; if given, only matching URLs.
        deny: regex or list; matching URLs are dropped (deny wins over allow).
        allow_domains: domain or list; only URLs on these domains or subdomains.
        deny_domains: domain or list; URLs on these domains or subdomains dropped.
        restrict_xpaths: XPath or list: only links inside the selected elements.
        tags: tag name or list of them to take links from (default ``a``, ``area``).
        attrs: attribute name or list (default ``href``).
        canonicalize: canonicalize URLs (``w3lib.url.canonicalize_url``: sorted
            query, no fragment); default False.
        unique: drop links whose URL repeats one already extracted (default True).
        process_value: ``f(value) -> url | None`` applied to each absolute URL, e.g.
            to pull a URL out of ``javascript:goToPage('/p/1')``; None drops the link.
        deny_extensions: extensions (without dot) to skip; None means
            :data:`~crawlfw.linkextractors.IGNORED_EXTENSIONS`.
        restrict_css: CSS selector or list, like ``restrict_xpaths``.
        strip: strip whitespace around attribute values (default True).
        restrict_text: regex or list (Scrapy 2): only links whose text matches one.
        deny_tags: tag name or list (Scrapy 2.17) never looked at, even when ``tags``
            names them; with ``tags="*"`` (every tag), all but these.
        deny_attrs: attribute name or list (Scrapy 2.17) never looked at; with
            ``attrs="*"`` (every attribute), all but these.

    The arguments are Scrapy 2.19's, in its order.

    Raises:
        re.error: an ``allow``/``deny``/``restrict_text`` pattern is invalid.
        ValueError: a ``restrict_css`` selector is invalid.
    """

    def __init__(self, allow=(), deny=(), allow_domains=(), deny_domains=(), restrict_xpaths=(),
                 tags=("a", "area"), attrs=("href",), canonicalize=False,
                 unique=True, process_value=None, deny_extensions=None, restrict_css=(),
                 strip=True, restrict_text=None, deny_tags=(), deny_attrs=()):
        tags, attrs = set(arg_to_iter(tags)), set(arg_to_iter(attrs))
        deny_tags, deny_attrs = set(arg_to_iter(deny_tags)), set(arg_to_iter(deny_attrs))
        lx = LxmlParserLinkExtractor(
            tag=_name_rule(tags, deny_tags),
            attr=_name_rule(attrs, deny_attrs),
            unique=unique,
            process=process_value,
            strip=strip,
            canonicalized=True,
        )
        super().__init__(lx, allow=allow, deny=deny,
                         allow_domains=allow_domains, deny_domains=deny_domains,
                         restrict_xpaths=restrict_xpaths, restrict_css=restrict_css,
                         canonicalize=canonicalize, deny_extensions=deny_extensions,
                         restrict_text=restrict_text)

    def extract_links(self, response) -> list[Link]:
        """Extract the links of a response.

        Args:
            response: a ``TextResponse`` (``HtmlResponse``/``XmlResponse``).

        Returns:
            list[Link]: the links that pass the filters, in document order (for
            ``restrict_xpaths``/``restrict_css``: region by region).

        Raises:
            ValueError: a ``restrict_xpaths`` expression is invalid.
        """
        selector = response.selector
        base_url = _document_base_url(selector.root, response.url, response.encoding)
        if self.restrict_xpaths:
            docs = [subdoc for x in self.restrict_xpaths for subdoc in selector.xpath(x)]
        else:
            docs = [selector]
        all_links = []
        for doc in docs:
            links = self._extract_links(doc, response.url, response.encoding, base_url)
            all_links.extend(self._process_links(links))
        if len(docs) > 1:
            return self.link_extractor._deduplicate_if_needed(all_links)
        return all_links
