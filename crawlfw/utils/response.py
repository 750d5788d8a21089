"""Helpers for Response objects (Scrapy 1.2's ``scrapy.utils.response``)."""

from __future__ import annotations

import os
import re
import tempfile
import weakref
import webbrowser
from collections.abc import Callable
from http import HTTPStatus

from w3lib import html

# body_or_str (added for Scrapy 1.2 parity) is public too; __all__ is pinned by the
# owner's tests/http/test_exported_members.py, which is to list it.
__all__ = [
    "get_base_url",
    "get_meta_refresh",
    "response_status_message",
    "response_httprepr",
    "open_in_browser",
]

#: How much of a document's text (characters) is scanned for <base>/<meta refresh>, as
#: in Scrapy; a tag starting before the limit is read to its end.
_SCAN_CHARS = 4096

# w3lib's own pre-test for a <base> tag (same pattern, same flags): w3lib declares a base
# only where it matches, so a page where it matches nowhere is answered without w3lib's
# scan. (A case-insensitive search that does not start with "<" has no fast scan in re:
# a pre-test for "refresh" cost more than w3lib's whole get_meta_refresh.)
_BASE_TAG = re.compile("<base", re.IGNORECASE)

_baseurl_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_metaref_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def get_base_url(response) -> str:
    """Return the base URL of a text response, computed once per response.

    The first ``<base href>`` in the first 4096 characters, resolved against the
    response URL (WHATWG HTML, "document base URL"), else the response URL.

    Args:
        response: a :class:`~crawlfw.http.TextResponse`.

    Returns:
        Absolute URL (str).
    """
    try:
        return _baseurl_cache[response]
    except KeyError:
        text = response.text
        if _BASE_TAG.search(text) is None:
            # no <base> anywhere: w3lib would return safe_url_string(url) (UTF-8)
            from crawlfw.utils._urls import safe_url

            base = safe_url(response.url, None)
        else:
            base = html.get_base_url(text, response.url, response.encoding,
                                     max_scan=_SCAN_CHARS)
        _baseurl_cache[response] = base
        return base


def get_meta_refresh(response) -> tuple[float, str] | tuple[None, None]:
    """Return the ``<meta http-equiv="refresh">`` redirect of a page, computed once per response.

    Looks in the first 4096 characters of the text, ignoring tags inside ``<script>``
    and ``<noscript>`` (WHATWG HTML, "refresh" pragma: ``content="5; url=/next"``).

    Args:
        response: a :class:`~crawlfw.http.TextResponse`.

    Returns:
        ``(interval_seconds, absolute_url)`` (float, str), or ``(None, None)`` when the
        page declares no refresh or a refresh without url (nothing to follow).
    """
    try:
        return _metaref_cache[response]
    except KeyError:
        result = html.get_meta_refresh(
            response.text, response.url, response.encoding, max_scan=_SCAN_CHARS
        )
        _metaref_cache[response] = result
        return result


def _reason_phrase(status: int) -> str | None:
    try:
        return HTTPStatus(int(status)).phrase
    except ValueError:
        return None


def response_status_message(status: int | str) -> str:
    """Return ``"<status> <reason phrase>"``, e.g. ``"404 Not Found"`` (RFC 9110 section 15).

    Args:
        status: HTTP status code (int or digit str).

    Returns:
        str; the phrase is ``"Unknown Status"`` for unregistered codes.

    Raises:
        ValueError: ``status`` is not an integer.
    """
    status = int(status)
    return f"{status} {_reason_phrase(status) or 'Unknown Status'}"


def response_httprepr(response) -> bytes:
    """Return the raw HTTP/1.1 representation of a response (status line, headers, body).

    An approximation (header order and case as stored), for stats and debugging only.
    """
    phrase = _reason_phrase(response.status) or ""
    s = b"HTTP/1.1 " + str(response.status).encode() + b" " + phrase.encode("ascii") + b"\r\n"
    if response.headers:
        s += response.headers.to_string() + b"\r\n"
    s += b"\r\n"
    s += response.body
    return s


def open_in_browser(response, _openfunc: Callable[[str], object] = webbrowser.open):
    """Open a response in the local web browser (debugging aid).

    The body is written to a temporary file; for HTML, a ``<base href>`` pointing at the
    response URL is injected after ``<head>`` (unless the page has one) so relative
    links, styles and images resolve.

    Args:
        response: an HtmlResponse (``.html`` file) or TextResponse (``.txt`` file).
        _openfunc: called with the ``file://`` URL (for tests).

    Returns:
        What ``_openfunc`` returns (``webbrowser.open``: bool).

    Raises:
        TypeError: a binary (non-text) response.
    """
    from crawlfw.http import HtmlResponse, TextResponse

    body = response.body
    if isinstance(response, HtmlResponse):
        if b"<base" not in body:
            repl = f'<head><base href="{response.url}">'.encode()
            body = body.replace(b"<head>", repl, 1)
        ext = ".html"
    elif isinstance(response, TextResponse):
        ext = ".txt"
    else:
        raise TypeError(f"Unsupported response type: {response.__class__.__name__}")
    fd, fname = tempfile.mkstemp(ext)
    try:
        os.write(fd, body)
    finally:
        os.close(fd)
    return _openfunc(f"file://{fname}")


def body_or_str(obj, unicode: bool = True):
    """Return the text (or bytes) of a response, or a string as text (or bytes).

    Args:
        obj: a ``Response``, ``str`` or ``bytes``.
        unicode: True for ``str`` (a ``TextResponse``'s ``text``; other bodies and
            ``bytes`` decoded as UTF-8), False for ``bytes`` (the body; ``str`` encoded
            as UTF-8).

    Raises:
        TypeError: ``obj`` is none of these types (the message names its type).
        UnicodeDecodeError: bytes to decode are not UTF-8.
    """
    from crawlfw.http import Response, TextResponse

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
    raise TypeError(f"obj must be a Response, str or bytes, not {type(obj).__name__}")
