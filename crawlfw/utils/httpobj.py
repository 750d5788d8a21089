"""Helpers for Request and Response objects (Scrapy 1.2's ``scrapy.utils.httpobj``)."""

from __future__ import annotations

import weakref
from urllib.parse import ParseResult, urlparse

__all__ = ["urlparse_cached"]

_urlparse_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def urlparse_cached(request_or_response) -> ParseResult:
    """Return ``urllib.parse.urlparse(obj.url)``, computed once per object.

    The result is cached in a weak dictionary keyed by the object (a Request's or
    Response's url cannot change, ``replace()`` makes a new object).

    Args:
        request_or_response: any weak-referenceable object with a ``url`` str.

    Returns:
        The 6-tuple ``ParseResult(scheme, netloc, path, params, query, fragment)``.
    """
    try:
        return _urlparse_cache[request_or_response]
    except KeyError:
        result = _urlparse_cache[request_or_response] = urlparse(request_or_response.url)
        return result
