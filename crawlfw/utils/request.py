"""Helpers for Request objects (Scrapy 1.2's ``scrapy.utils.request``)."""

from __future__ import annotations

import hashlib
import json
import weakref
from collections.abc import Iterable
from urllib.parse import urlunparse

from w3lib.http import basic_auth_header
from w3lib.url import canonicalize_url

from crawlfw.http.request._curl import request_to_curl  # (here: Scrapy's path)
from crawlfw.utils._url_fastpaths import canonical_url
from crawlfw.utils.httpobj import urlparse_cached
from crawlfw.utils.python import to_bytes

# referer_str (added for Scrapy 1.2 parity) is public too; __all__ is pinned by the
# owner's tests/http/test_exported_members.py, which is to list it.
__all__ = ["request_fingerprint", "request_authenticate", "request_httprepr",
           "fingerprint", "RequestFingerprinter", "request_from_dict", "request_to_curl"]

# {request: {include_headers key: hex fingerprint}}
_fingerprint_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

# {url: hex fingerprint} of GET requests without a body: a crawl meets the same links on
# many pages. Two generations of at most _GET_FINGERPRINTS_SIZE each: the newest (which
# the frontiers' push_many read inline) and the one before it; a URL found in the older
# is put back in the newest, and a full newest becomes the older (so a site whose pages
# link to more URLs than one generation holds still finds its links: emptied when full,
# a 20,000-page site's links missed every time). The dicts keep their identity (the
# frontiers import them); plain dict operations are atomic under the GIL.
_GET_FINGERPRINTS: dict[str, str] = {}
_GET_FINGERPRINTS_OLDER: dict[str, str] = {}
_GET_FINGERPRINTS_SIZE = 16384


def _remember_get_fingerprint(url: str, digest: str) -> None:
    """Put ``url``'s fingerprint in the newest generation of the GET memo, first
    making a full newest generation the older one."""
    newest = _GET_FINGERPRINTS
    if len(newest) >= _GET_FINGERPRINTS_SIZE:
        older = _GET_FINGERPRINTS_OLDER
        older.clear()
        older.update(newest)
        newest.clear()
    newest[url] = digest


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
            digest = _GET_FINGERPRINTS_OLDER.get(url)
            if digest is None:
                digest = hashlib.sha1(b"GET" + to_bytes(canonical_url(url))).hexdigest()
            _remember_get_fingerprint(url, digest)
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


# --- Scrapy 2 -------------------------------------------------------------------------

# {request: {(include_headers, keep_fragments): 20-byte digest}}
_fingerprint2_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def fingerprint(request, *, include_headers: Iterable[str | bytes] | None = None,
                keep_fragments: bool = False) -> bytes:
    """Return the fingerprint of ``request``: Scrapy 2.7+'s ``fingerprint``, whose value
    equals Scrapy's for the same request (so fingerprints stored by Scrapy match).

    The SHA-1 of the JSON object ``{"body": body as hex, "headers": {name as hex:
    [values as hex]}, "method": method, "url": canonical URL}`` (keys sorted): the URL
    canonicalized by w3lib's ``canonicalize_url`` (query arguments sorted, fragment
    dropped unless ``keep_fragments``), only the headers named in ``include_headers``
    (case-insensitive). Cached per request (weakly) and per argument set.

    Args:
        request: a :class:`~crawlfw.http.Request`.
        include_headers: header names whose values are part of the fingerprint.
        keep_fragments: keep the URL's ``#fragment``.

    Returns:
        bytes: the 20-byte SHA-1 digest (``.hex()`` for text).
    """
    names = (tuple(to_bytes(h.lower()) for h in sorted(include_headers))
             if include_headers else ())
    cache = _fingerprint2_cache.get(request)
    if cache is None:
        cache = _fingerprint2_cache[request] = {}
    key = (names, keep_fragments)
    digest = cache.get(key)
    if digest is None:
        headers = {}
        for name in names:
            if name in request.headers:
                headers[name.hex()] = [v.hex() for v in request.headers.getlist(name)]
        url = (canonicalize_url(request.url, keep_fragments=True) if keep_fragments
               else canonical_url(request.url))
        data = {"method": request.method, "url": url,
                "body": (request.body or b"").hex(), "headers": headers}
        digest = cache[key] = hashlib.sha1(
            json.dumps(data, sort_keys=True).encode()).digest()
    return digest


class RequestFingerprinter:
    """Scrapy 2.7+'s default request fingerprinter: ``fingerprint(request)`` ->
    :func:`fingerprint` of the request (bytes). ``from_crawler`` builds one (no
    settings read: Scrapy's ``REQUEST_FINGERPRINTER_IMPLEMENTATION`` only chooses this
    behaviour)."""

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def __init__(self, crawler=None):
        self._fingerprint = fingerprint

    def fingerprint(self, request) -> bytes:
        """Returns: the request's 20-byte fingerprint (see :func:`fingerprint`)."""
        return self._fingerprint(request)


def request_from_dict(d: dict, *, spider=None):
    """Rebuild a request from ``Request.to_dict()``'s dict (Scrapy 2's
    ``scrapy.utils.request.request_from_dict``). Also reads a dict Scrapy 2 made
    (``encoding`` key, ``bytes`` body, headers as ``{bytes: [bytes]}``).

    Args:
        d: the dict.
        spider: the spider on which the callback and errback names are looked up
            (without one the request has neither).

    Returns:
        The request, of the class named by ``_class`` (default
        :class:`~crawlfw.http.Request`).

    Raises:
        ValueError: ``spider`` has no method of the callback's or errback's name.
        KeyError: ``url`` is missing.
    """
    from crawlfw.utils import reqser

    if "encoding" in d and "_encoding" not in d:
        d = dict(d, _encoding=d["encoding"])
    return reqser.request_from_dict(d, spider)
