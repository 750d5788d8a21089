"""URL helpers (Scrapy 1.2's ``scrapy.utils.url``).

Besides crawlfw's own helpers, this module re-exports w3lib's URL functions as Scrapy
1.2 does (``canonicalize_url``, ``safe_url_string``, ``url_query_parameter``,
``add_or_replace_parameter``, ``any_to_uri``...).
"""

from __future__ import annotations

import posixpath
import re
import warnings
from collections.abc import Iterable
from urllib.parse import ParseResult, urldefrag, urljoin, urlparse, urlunparse

from w3lib.url import (
    add_or_replace_parameter,
    add_or_replace_parameters,
    any_to_uri,
    canonicalize_url,
    file_uri_to_path,
    is_url,
    parse_data_uri,
    path_to_file_uri,
    safe_download_url,
    safe_url_string,
    url_query_cleaner,
    url_query_parameter,
)

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.utils.python import to_unicode

__all__ = [
    # crawlfw's own
    "url_is_from_any_domain",
    "url_is_from_spider",
    "url_has_any_extension",
    "parse_url",
    "escape_ajax",
    "add_http_if_no_scheme",
    "guess_scheme",
    "strip_url",
    "urljoin_rfc",
    # re-exported from w3lib.url
    "add_or_replace_parameter",
    "add_or_replace_parameters",
    "any_to_uri",
    "canonicalize_url",
    "file_uri_to_path",
    "is_url",
    "parse_data_uri",
    "path_to_file_uri",
    "safe_download_url",
    "safe_url_string",
    "url_query_cleaner",
    "url_query_parameter",
]


def url_is_from_any_domain(url: str | ParseResult, domains: Iterable[str]) -> bool:
    """Return True if the url's host is one of ``domains`` or a subdomain of one.

    Args:
        url: absolute URL (str) or a ``ParseResult``.
        domains: domain names, e.g. ``['example.com']`` (compared case-insensitively).

    Returns:
        True for ``http://www.example.com/x`` and ``example.com``; False for
        ``http://notexample.com/`` or a URL without host.
    """
    host = parse_url(url).netloc.lower()
    if not host:
        return False
    domains = [d.lower() for d in domains]
    return any((host == d) or host.endswith(f".{d}") for d in domains)


def url_is_from_spider(url: str | ParseResult, spider) -> bool:
    """Return True if ``url`` belongs to ``spider``'s name or its ``allowed_domains``."""
    return url_is_from_any_domain(url, [spider.name] + list(getattr(spider, "allowed_domains", [])))


def url_has_any_extension(url: str | ParseResult, extensions: Iterable[str]) -> bool:
    """Return True if the url path's extension (lower-cased, with dot) is in ``extensions``.

    Args:
        url: URL.
        extensions: e.g. ``{'.jpg', '.pdf'}``.
    """
    return posixpath.splitext(parse_url(url).path)[1].lower() in extensions


def parse_url(url: str | bytes | ParseResult, encoding: str | None = None) -> ParseResult:
    """Return ``urlparse(url)``; a ``ParseResult`` is returned unchanged.

    Args:
        url: str, bytes (decoded with ``encoding``, default utf-8) or ParseResult.
    """
    if isinstance(url, ParseResult):
        return url
    return urlparse(to_unicode(url, encoding))


def escape_ajax(url: str) -> str:
    """Rewrite an AJAX-crawlable ``#!`` URL to its ``_escaped_fragment_`` form.

    Google's (deprecated) AJAX crawling scheme:
    https://developers.google.com/search/docs/ajax-crawling/docs/getting-started

    >>> escape_ajax("www.example.com/ajax.html#!key=value")
    'www.example.com/ajax.html?_escaped_fragment_=key%3Dvalue'
    >>> escape_ajax("www.example.com/ajax.html?k1=v1&k2=v2#!key=value")
    'www.example.com/ajax.html?k1=v1&k2=v2&_escaped_fragment_=key%3Dvalue'
    >>> escape_ajax("www.example.com/ajax.html#key=value")
    'www.example.com/ajax.html#key=value'
    """
    if "#!" not in url:
        return url
    defrag, frag = urldefrag(url)
    if not frag.startswith("!"):
        return url
    return add_or_replace_parameter(defrag, "_escaped_fragment_", frag[1:])


_HAS_SCHEME_RE = re.compile(r"^\w+://", flags=re.I)


def add_http_if_no_scheme(url: str) -> str:
    """Prefix ``http://`` (or ``http:`` for ``//host`` URLs) when ``url`` has no scheme.

    >>> add_http_if_no_scheme("example.com/a"), add_http_if_no_scheme("//example.com")
    ('http://example.com/a', 'http://example.com')
    """
    if not _HAS_SCHEME_RE.match(url):
        parts = urlparse(url)
        scheme = "http:" if parts.netloc else "http://"
        url = scheme + url
    return url


_FILE_PATH_RE = re.compile(
    r"""^                   # start with...
        (
            \.              # ...a single dot,
            (
                \. | [^/\.]+  # optionally followed by either: a second dot or some characters
            )?
        )?      # optional match of ".", ".." or ".blabla"
        /       # at least one "/" for a file path,
        .       # and something after the "/"
    """,
    flags=re.VERBOSE,
)


def guess_scheme(url: str) -> str:
    """Return ``url`` with a scheme: ``file://`` for paths, ``http://`` for host names.

    Used by ``crawlfw shell`` / ``fetch`` on what the user typed.

    >>> guess_scheme("./index.html").startswith("file://")
    True
    >>> guess_scheme("example.com")
    'http://example.com'
    """
    parts = urlparse(url)
    if parts.scheme:
        return url
    # Note: this does not match Windows file paths
    if _FILE_PATH_RE.match(parts.path):
        return any_to_uri(url)
    return add_http_if_no_scheme(url)


_DEFAULT_PORTS = {("http", 80), ("https", 443), ("ftp", 21)}


def strip_url(
    url: str,
    strip_credentials: bool = True,
    strip_default_port: bool = True,
    origin_only: bool = False,
    strip_fragment: bool = True,
) -> str:
    """Strip parts of a URL (later Scrapy's helper, used for Referer policies).

    Args:
        url: absolute URL.
        strip_credentials: drop ``user:password@``.
        strip_default_port: drop ``:80`` for http, ``:443`` for https, ``:21`` for ftp.
        origin_only: keep only ``scheme://host[:port]/`` (implies stripping credentials).
        strip_fragment: drop ``#fragment``.

    Returns:
        The stripped URL (str).
    """
    parsed_url = urlparse(url)
    netloc = parsed_url.netloc
    if (strip_credentials or origin_only) and (parsed_url.username or parsed_url.password):
        netloc = netloc.split("@")[-1]
    if strip_default_port and parsed_url.port:
        if (parsed_url.scheme, parsed_url.port) in _DEFAULT_PORTS:
            netloc = netloc.replace(f":{parsed_url.port}", "")
    return urlunparse(
        (
            parsed_url.scheme,
            netloc,
            "/" if origin_only else parsed_url.path,
            "" if origin_only else parsed_url.params,
            "" if origin_only else parsed_url.query,
            "" if strip_fragment else parsed_url.fragment,
        )
    )


def urljoin_rfc(base: str | bytes, ref: str | bytes, encoding: str = "utf-8") -> str:
    """Deprecated: use ``urllib.parse.urljoin`` or ``Response.urljoin``.

    Returns:
        The absolute URL of ``ref`` against ``base`` (RFC 3986 section 5), as str.
    """
    warnings.warn(
        "crawlfw.utils.url.urljoin_rfc is deprecated, use urllib.parse.urljoin or "
        "Response.urljoin instead",
        CrawlfwDeprecationWarning,
        stacklevel=2,
    )
    return urljoin(to_unicode(base, encoding), to_unicode(ref, encoding))
