"""Helpers for Response objects (Scrapy 1.2's ``scrapy.utils.response``)."""

from __future__ import annotations

import os
import tempfile
import weakref
from collections.abc import Callable
from http import HTTPStatus

from w3lib import html

from crawlfw.http import HtmlResponse, Response, TextResponse
from crawlfw.http._base_url import (  # noqa: F401  (_baseurl_cache: tests/utils)
    SCAN_CHARS,
    _baseurl_cache,
    get_base_url,
    scan_tags,
)

# body_or_str (added for Scrapy 1.2 parity) is public too; __all__ is pinned by the
# owner's tests/http/test_exported_members.py, which is to list it.
__all__ = [
    "get_base_url",
    "get_meta_refresh",
    "response_status_message",
    "response_httprepr",
    "open_in_browser",
]

_metaref_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

try:
    # the pattern w3lib >= 2.5's get_meta_refresh scans the text with (its default
    # ignore_tags, sorted as it sorts them): a <meta> tag's attributes are its "attrs"
    _META_SCAN = html._build_meta_scan_pattern(("noscript", "script"))
except AttributeError:  # pragma: no cover - another w3lib: no pre-check
    _META_SCAN = None


def _may_refresh(text: str, end: int, metas: tuple[int, ...]) -> bool:
    """Whether w3lib's ``get_meta_refresh`` of ``text`` (scanning ``text[:end]``) may
    find a refresh: False is exact, True means "ask w3lib".

    w3lib 2.5 reads a ``<meta`` tag's attributes only when they hold "refresh" once
    lowered (``"refresh" in attrs.lower()``, before entities are replaced). This matches
    w3lib's own scan pattern at every ``<meta`` of ``text[:end]`` (``metas``, from
    :func:`~crawlfw.http._base_url.scan_tags`), each on its own: wherever w3lib's scan
    reads a ``<meta`` tag it gets the same attributes; the tags it skips (in a comment
    or a script) are looked at too, which only sends more pages to w3lib.
    """
    scan = _META_SCAN
    if scan is None:
        return True
    for i in metas:
        tag = scan.match(text, i, end)
        if tag is not None:
            attrs = tag.group("attrs")
            if attrs is not None and "refresh" in attrs.lower():
                return True
    return False


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
    result = _metaref_cache.get(response)  # (no KeyError raised and caught per response)
    if result is None:
        text = response.text
        end, metas, _ = scan_tags(response, text)
        if metas and _may_refresh(text, end, metas):
            result = html.get_meta_refresh(
                text, response.url, response.encoding, max_scan=SCAN_CHARS
            )
        else:
            result = (None, None)
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


def __getattr__(name: str):
    # webbrowser (and the shlex it loads) is imported by open_in_browser, a debugging
    # aid; crawlfw.utils.response.webbrowser is still there for who reaches for it (PEP 562)
    if name == "webbrowser":
        import webbrowser

        return webbrowser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_in_browser(response, _openfunc: Callable[[str], object] | None = None):
    """Open a response in the local web browser (debugging aid).

    The body is written to a temporary file; for HTML, a ``<base href>`` pointing at the
    response URL is injected after ``<head>`` (unless the page has one) so relative
    links, styles and images resolve.

    Args:
        response: an HtmlResponse (``.html`` file) or TextResponse (``.txt`` file).
        _openfunc: called with the ``file://`` URL (for tests; default
            ``webbrowser.open``, looked up at the call).

    Returns:
        What ``_openfunc`` returns (``webbrowser.open``: bool).

    Raises:
        TypeError: a binary (non-text) response.
    """
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
    if _openfunc is None:
        import webbrowser

        _openfunc = webbrowser.open
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
