"""The filtering rules shared by link extractors (:class:`FilteringLinkExtractor`,
:data:`IGNORED_EXTENSIONS`); their public path is Scrapy's :mod:`crawlfw.linkextractors`.

They live apart from the package's ``__init__`` because
:mod:`crawlfw.linkextractors.lxmlhtml` builds on them and the package names its
``LinkExtractor``: so the two import one way (no circle, ``tests/test_layers.py``).
"""

import re
from urllib.parse import urlparse

from w3lib.url import canonicalize_url

from crawlfw.selector.csstranslator import HTMLTranslator
from crawlfw.utils._url_fastpaths import url_extension
from crawlfw.utils.misc import arg_to_iter
from crawlfw.utils.url import url_is_from_any_domain

__all__ = ["IGNORED_EXTENSIONS", "FilteringLinkExtractor"]

#: Extensions (without the dot) of URLs that link extractors skip by default.
IGNORED_EXTENSIONS = [
    # images
    "mng", "pct", "bmp", "gif", "jpg", "jpeg", "png", "pst", "psp", "tif",
    "tiff", "ai", "drw", "dxf", "eps", "ps", "svg",
    # audio
    "mp3", "wma", "ogg", "wav", "ra", "aac", "mid", "au", "aiff",
    # video
    "3gp", "asf", "asx", "avi", "mov", "mp4", "mpg", "qt", "rm", "swf", "wmv",
    "m4a",
    # office suites
    "xls", "xlsx", "ppt", "pptx", "pps", "doc", "docx", "odt", "ods", "odg",
    "odp",
    # other
    "css", "pdf", "exe", "bin", "rss", "zip", "rar",
]  # fmt: skip

_re_type = type(re.compile("", 0))
_VALID_SCHEMES = frozenset(["http", "https", "file", "ftp"])


def _matches(url, regexs):
    """Return True if any of the compiled ``regexs`` is found in ``url``."""
    return any(r.search(url) for r in regexs)


def _compile_regexes(value):
    """``value`` (None, a regex str or compiled pattern, or an iterable of them) as a
    list of compiled patterns."""
    return [x if isinstance(x, _re_type) else re.compile(x) for x in arg_to_iter(value)]


def _is_valid_url(url):
    """Return True for a URL with a scheme link extractors follow (http, https, file,
    ftp)."""
    return url.split("://", 1)[0] in _VALID_SCHEMES


class FilteringLinkExtractor:
    """Applies the filtering rules to the links another extractor finds.

    Args:
        link_extractor: the parser-level extractor (``_extract_links`` and
            ``_process_links`` methods).
        allow: regex (str or compiled) or list of them; if given, only URLs matching
            one are kept.
        deny: regex or list of them; URLs matching one are dropped.
        allow_domains: domain or list; if given, only URLs on them (or subdomains).
        deny_domains: domain or list; URLs on them (or subdomains) are dropped.
        restrict_xpaths: XPath or list; only links inside the selected elements.
        canonicalize: canonicalize each URL (``w3lib.url.canonicalize_url``).
        deny_extensions: extensions (without dot) to skip; None means
            :data:`IGNORED_EXTENSIONS`, ``()`` skips none.
        restrict_css: CSS selector or list, like ``restrict_xpaths``.
        restrict_text: regex or list of them (Scrapy 2); if given, only links whose
            text matches one are kept.

    Raises:
        re.error: an ``allow``/``deny``/``restrict_text`` pattern is invalid.
        ValueError: a ``restrict_css`` selector is invalid.
    """

    _csstranslator = HTMLTranslator()

    def __init__(self, link_extractor, allow, deny, allow_domains, deny_domains,
                 restrict_xpaths, canonicalize, deny_extensions, restrict_css,
                 restrict_text=None):
        self.link_extractor = link_extractor

        self.allow_res = _compile_regexes(allow)
        self.deny_res = _compile_regexes(deny)
        self.restrict_text = _compile_regexes(restrict_text)

        self.allow_domains = set(arg_to_iter(allow_domains))
        self.deny_domains = set(arg_to_iter(deny_domains))

        self.restrict_xpaths = tuple(arg_to_iter(restrict_xpaths))
        self.restrict_xpaths += tuple(self._css_to_xpath(c) for c in arg_to_iter(restrict_css))

        self.canonicalize = canonicalize
        if deny_extensions is None:
            deny_extensions = IGNORED_EXTENSIONS
        self.deny_extensions = {"." + e for e in arg_to_iter(deny_extensions)}

    def _css_to_xpath(self, css):
        try:
            return self._csstranslator.css_to_xpath(css)
        except Exception as exc:
            raise ValueError(f"CSS error: {exc} in {css!r}") from exc

    def _link_allowed(self, link):
        url = link.url
        if not _is_valid_url(url):
            return False
        if self.allow_res and not _matches(url, self.allow_res):
            return False
        if self.deny_res and _matches(url, self.deny_res):
            return False
        if self.allow_domains or self.deny_domains:
            parsed_url = urlparse(url)
            if self.allow_domains and not url_is_from_any_domain(parsed_url, self.allow_domains):
                return False
            if self.deny_domains and url_is_from_any_domain(parsed_url, self.deny_domains):
                return False
        # url_extension(url) == splitext(urlparse(url).path)[1].lower(), without the
        # full parse (url_has_any_extension's rule).
        if self.deny_extensions and url_extension(url) in self.deny_extensions:
            return False
        return not self.restrict_text or _matches(link.text, self.restrict_text)

    def matches(self, url):
        """Whether ``url`` passes the allow/deny and domain rules.

        Args:
            url: an absolute URL.

        Returns:
            bool
        """
        if self.allow_domains and not url_is_from_any_domain(url, self.allow_domains):
            return False
        if self.deny_domains and url_is_from_any_domain(url, self.deny_domains):
            return False
        allowed = (regex.search(url) for regex in self.allow_res) if self.allow_res else [True]
        denied = (regex.search(url) for regex in self.deny_res) if self.deny_res else []
        return any(allowed) and not any(denied)

    def _process_links(self, links):
        links = [x for x in links if self._link_allowed(x)]
        if self.canonicalize:
            for link in links:
                link.url = canonicalize_url(link.url)
        return self.link_extractor._process_links(links)

    def _extract_links(self, *args, **kwargs):
        return self.link_extractor._extract_links(*args, **kwargs)
