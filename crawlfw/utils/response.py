"""Helpers for Response objects (Scrapy 1.2's ``scrapy.utils.response``)."""

from __future__ import annotations

import os
import tempfile
import weakref
from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Any

from w3lib import html

from crawlfw.http import Headers, HtmlResponse, Response, TextResponse
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
    "response_from_dict",
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


_DEFAULT_IGNORE_TAGS = ("script", "noscript")


def get_meta_refresh(
    response, ignore_tags: Iterable[str] = _DEFAULT_IGNORE_TAGS
) -> tuple[float, str] | tuple[None, None]:
    """Return the ``<meta http-equiv="refresh">`` redirect of a page (WHATWG HTML,
    "refresh" pragma: ``content="5; url=/next"``).

    Looks in the first 4096 characters of the text, skipping the ``<meta>`` tags inside
    the elements named by ``ignore_tags``; the URL is resolved against the page's base
    URL (:func:`get_base_url`: its ``<base href>``, else its URL), as in Scrapy 2.

    Args:
        response: a :class:`~crawlfw.http.TextResponse`.
        ignore_tags: names of the elements whose content is not looked in (Scrapy
            2's ``ignore_tags``; default ``<script>`` and ``<noscript>``, what a browser
            with scripting does not read as markup). With the default the answer is
            computed once per response.

    Returns:
        ``(interval_seconds, absolute_url)`` (float, str), or ``(None, None)`` when the
        page declares no refresh or a refresh without url (nothing to follow).
    """
    default = ignore_tags is _DEFAULT_IGNORE_TAGS
    if not default:
        ignore_tags = tuple(ignore_tags)
        if sorted(ignore_tags) == sorted(_DEFAULT_IGNORE_TAGS):
            default = True
    if default:
        result = _metaref_cache.get(response)  # (no KeyError raised and caught per response)
        if result is not None:
            return result
    text = response.text
    end, metas, _ = scan_tags(response, text)
    # the pre-check reads w3lib's pattern for the default tags (see _may_refresh)
    if metas and (not default or _may_refresh(text, end, metas)):
        result = html.get_meta_refresh(
            text, get_base_url(response), response.encoding,
            ignore_tags=ignore_tags, max_scan=SCAN_CHARS,
        )
    else:
        result = (None, None)
    if default:
        _metaref_cache[response] = result
    return result


def response_from_dict(d: dict[str, Any]) -> Response:
    """Rebuild a response from ``Response.to_dict()``'s dict (Scrapy 2.19's
    ``scrapy.utils.response.response_from_dict``).

    The class is the one ``d["_class"]`` names (a ``scrapy.`` path is read as the
    ``crawlfw.`` one); without ``_class`` (a plain :class:`Response`'s dict, or one
    made by hand) it is guessed from the headers, URL and body by
    :data:`crawlfw.responsetypes.responsetypes`, as in Scrapy. The class's
    :meth:`~crawlfw.http.Response.from_dict` builds the response.

    Unlike Scrapy, ``_class`` is looked up among the Response subclasses already
    defined in the process, importing nothing (as
    :func:`crawlfw.utils.request.request_from_dict` does, docs/security.md): a cache
    or a queue someone else can write to cannot make the crawler import a module.

    Args:
        d: the dict: ``url`` (required), ``headers`` (a mapping or pairs, or None),
            ``body`` (bytes), and the other constructor arguments of the class.

    Returns:
        The response.

    Raises:
        ValueError: ``_class`` names no Response subclass defined in the process.
        KeyError: ``url`` is missing.
        TypeError: ``d`` has a key the class's constructor does not take.
    """
    from crawlfw.responsetypes import responsetypes

    d = {**d, "headers": Headers(d.get("headers") or {})}
    if "_class" in d:
        response_cls = _named_response_class(d["_class"])
    else:
        response_cls = responsetypes.from_args(
            headers=d["headers"], url=d["url"], body=d.get("body")
        )
    return response_cls.from_dict(d)


def _named_response_class(path) -> type[Response]:
    """The Response subclass whose ``module.QualName`` is ``path`` (a leading
    ``scrapy.`` read as ``crawlfw.``), found among the classes already defined.

    Raises:
        ValueError: ``path`` is not a str naming a loaded Response subclass.
    """
    if isinstance(path, str):
        if path.startswith("scrapy."):
            path = "crawlfw." + path[len("scrapy."):]
        todo = [Response]
        seen = set()
        while todo:
            cls = todo.pop()
            if cls in seen:
                continue
            seen.add(cls)
            if path in (f"{cls.__module__}.{cls.__qualname__}", f"{cls.__module__}.{cls.__name__}"):
                return cls
            todo.extend(cls.__subclasses__())
    raise ValueError(f"Serialized response names {path!r} as its class, which is not a "
                     f"Response subclass defined in this process: refused")


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
