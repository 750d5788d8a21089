"""Helpers for Request objects (Scrapy 1.2's ``scrapy.utils.request``)."""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Iterable
from urllib.parse import urlunparse

from w3lib.http import basic_auth_header

from crawlfw.utils._urls import canonical_url
from crawlfw.utils.httpobj import urlparse_cached
from crawlfw.utils.python import to_bytes

# referer_str (added for Scrapy 1.2 parity) is public too; __all__ is pinned by the
# owner's tests/http/test_exported_members.py, which is to list it.
__all__ = ["request_fingerprint", "request_authenticate", "request_httprepr"]

# {request: {include_headers key: hex fingerprint}}
_fingerprint_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

# {url: hex fingerprint} of GET requests without a body: a crawl meets the same links on
# many pages. Plain dict operations are atomic under the GIL; emptied when full.
_GET_FINGERPRINTS: dict[str, str] = {}
_GET_FINGERPRINTS_SIZE = 16384


def request_fingerprint(request, include_headers: Iterable[str | bytes] | None = None) -> str:
    """Return a hash that identifies the resource a request points to.

    Two requests get the same fingerprint when they have the same method, the same
    canonical URL (w3lib ``canonicalize_url``: query arguments sorted, fragment
    dropped, percent-encoding normalised) and the same body. Headers are ignored
    unless listed in ``include_headers`` (names, case-insensitive). For example these
    two share a fingerprint::

        http://www.example.com/query?id=111&cat=222
        http://www.example.com/query?cat=222&id=111#frag

    The value is computed once per request and ``include_headers`` set, and cached
    weakly (requests are immutable in the fields used, except headers: change the
    headers of a request after fingerprinting it with ``include_headers`` and the
    cached value is stale, as in Scrapy). The fingerprint of a GET request without a
    body and without ``include_headers`` depends on its URL only: it is memoised per
    URL instead (a bounded cache), as the same links recur on many pages.

    Args:
        request: a :class:`~crawlfw.http.Request`.
        include_headers: header names whose (all) values are part of the fingerprint.

    Returns:
        The SHA-1 hex digest (40 lower-case hex characters).
    """
    if include_headers:
        # Scrapy's exact rule (sort, then lower-case) keeps digests equal to Scrapy's
        cache_key = tuple(to_bytes(h.lower()) for h in sorted(include_headers))
    else:
        cache_key = None
    if cache_key is None and request.method == "GET" and not request.body:
        # depends on the URL only: memoised per URL rather than per request
        url = request.url
        digest = _GET_FINGERPRINTS.get(url)
        if digest is None:
            digest = hashlib.sha1(b"GET" + to_bytes(canonical_url(url))).hexdigest()
            if len(_GET_FINGERPRINTS) >= _GET_FINGERPRINTS_SIZE:
                _GET_FINGERPRINTS.clear()
            _GET_FINGERPRINTS[url] = digest
        return digest
    cache = _fingerprint_cache.get(request)
    if cache is None:
        cache = _fingerprint_cache[request] = {}
    else:
        digest = cache.get(cache_key)
        if digest is not None:
            return digest
    # one update of the concatenation == Scrapy's successive updates
    fp = hashlib.sha1(
        to_bytes(request.method)
        + to_bytes(canonical_url(request.url))  # w3lib canonicalize_url, faster
        + (request.body or b"")
    )
    if cache_key:
        for hdr in cache_key:
            if hdr in request.headers:
                fp.update(hdr)
                for v in request.headers.getlist(hdr):
                    fp.update(v)
    digest = cache[cache_key] = fp.hexdigest()
    return digest


def request_authenticate(request, username: str, password: str) -> None:
    """Set the ``Authorization`` header of ``request`` for HTTP Basic auth (RFC 7617).

    Args:
        request: the Request to modify in place.
        username, password: credentials (str; encoded as ISO-8859-1 like w3lib).
    """
    request.headers["Authorization"] = basic_auth_header(username, password)


def request_httprepr(request) -> bytes:
    """Return the raw HTTP/1.1 representation of ``request`` (RFC 9112), as bytes.

    An approximation of what is sent (no ``Content-Length`` added, header order as
    stored), for stats and debugging: request line with the path and query, ``Host``
    from the URL, the stored headers, a blank line and the body.
    """
    parsed = urlparse_cached(request)
    path = urlunparse(("", "", parsed.path or "/", parsed.params, parsed.query, ""))
    s = to_bytes(request.method) + b" " + to_bytes(path) + b" HTTP/1.1\r\n"
    s += b"Host: " + to_bytes(parsed.hostname or "") + b"\r\n"
    if request.headers:
        s += request.headers.to_string() + b"\r\n"
    s += b"\r\n"
    s += request.body
    return s


def referer_str(request) -> str | None:
    """Return the request's ``Referer`` header as text for log lines, or None.

    Args:
        request: a Request.

    Returns:
        The header value decoded as UTF-8 (undecodable bytes replaced), or None when
        the request has no ``Referer``.
    """
    referrer = request.headers.get("Referer")
    if referrer is None:
        return None
    return referrer.decode("utf-8", errors="replace")
