"""The :class:`Request` object: one HTTP request to make, and what to do with its response.

Scrapy 1.2's ``scrapy.http.request``. Requests are created on the hot path (a crawl
makes tens per page), so ``__init__`` does the minimum: validation, one cached
``safe_url_string`` per distinct URL, and copies of the mutable arguments only.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from time import time as _time
from typing import Any, NoReturn

if sys.version_info >= (3, 11):
    from typing import NotRequired, TypedDict
else:  # NotRequired came in 3.11 (PEP 655); typing's TypedDict of 3.10 ignores it.
    # typing_extensions comes with jsonschema (its `referencing` requires it below 3.13).
    from typing_extensions import NotRequired, TypedDict

from crawlfw.http.common import obsolete_setter
from crawlfw.http.headers import Headers
from crawlfw.utils import trackref as _trackref
from crawlfw.utils._url_fastpaths import SAFE_JOINED as _SAFE_JOINED
from crawlfw.utils._url_fastpaths import safe_url
from crawlfw.utils.trackref import object_ref
from crawlfw.utils.url import escape_ajax

__all__ = ["NO_CALLBACK", "Request", "VerboseCookie"]


def NO_CALLBACK(*args: Any, **kwargs: Any) -> NoReturn:
    """The ``callback`` of a request whose response no spider callback should get
    (Scrapy 2.8's ``scrapy.http.request.NO_CALLBACK``): components that make and
    handle their own requests (``Request(url, callback=NO_CALLBACK)``) mark them with
    it, so that middlewares can tell them from requests meant for the spider's
    ``parse``.

    Raises:
        RuntimeError: always -- the request was handed to a spider callback after all.
    """
    raise RuntimeError(
        "The NO_CALLBACK callback has been called. This is a special callback "
        "value intended for requests whose callback is never meant to be called."
    )


# The functional form: its annotations are evaluated (this module's are strings, under
# which a class-form TypedDict of 3.10/3.11 takes every key as required).
VerboseCookie = TypedDict("VerboseCookie", {  # noqa: UP013 (see above)
    "name": str | bytes,
    "value": str | bytes | bool | float | int,
    "domain": NotRequired[str | bytes],
    "path": NotRequired[str | bytes],
    "secure": NotRequired[bool],
})
VerboseCookie.__doc__ = """One cookie of a request's ``cookies`` list (Scrapy 2's
``scrapy.http.request.VerboseCookie``): ``name`` and ``value`` (str or bytes; a value
may also be a bool or a number), optionally ``domain`` and ``path`` (str or bytes) and
``secure`` (bool)."""
VerboseCookie.__module__ = __name__

# (url, encoding) -> made-safe url. Link extraction yields the same navigation links on
# every page, so most Request() calls repeat a url already seen. Plain dict operations
# are atomic under the GIL; the cache is simply emptied when full.
_SAFE_URL_CACHE: dict[tuple[str, str], str] = {}
_SAFE_URL_CACHE_SIZE = 4096

_dict_new = dict.__new__


class _Marker:
    """A module-level marker that copies and pickles as itself (``__reduce__`` names it)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __reduce__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return self.name


_UNSET = _Marker("_UNSET")  # Request._cookies/_flags: the empty default not made yet
_DELETED = _Marker("_DELETED")  # ... deleted (del request.cookies)


def _lazy_default(name: str, make: Callable[[], Any], doc: str) -> property:
    """A property ``name`` that reads, assigns and deletes as a plain attribute would,
    kept in ``_<name>``, whose default ``make()`` is made on first read (the class sets
    ``_<name> = _UNSET``; deleting stores ``_DELETED``: reading then raises
    AttributeError, as a deleted attribute does)."""
    private = "_" + name

    def get(self):
        value = getattr(self, private)
        if value is _UNSET:
            value = make()
            setattr(self, private, value)
        elif value is _DELETED:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        return value

    def set_(self, value) -> None:
        setattr(self, private, value)

    def delete(self) -> None:
        get(self)  # AttributeError when already deleted
        setattr(self, private, _DELETED)

    return property(get, set_, delete, doc=doc)


def _make_safe_url(url: str, encoding: str) -> str:
    # Only URLs that passed the scheme check are cached: a hit needs no check.
    key = (url, encoding)
    safe = _SAFE_URL_CACHE.get(key)
    if safe is None:
        safe = safe_url(url, encoding)  # safe_url_string, with a shortcut for plain URLs
        if "#!" in safe:
            safe = escape_ajax(safe)
        if not _has_scheme(safe):
            raise ValueError(f"Missing scheme in request url: {safe}")
        if len(_SAFE_URL_CACHE) >= _SAFE_URL_CACHE_SIZE:
            _SAFE_URL_CACHE.clear()
        _SAFE_URL_CACHE[key] = safe
    return safe


def _has_scheme(url: str) -> bool:
    # "scheme://..." (RFC 3986 with an authority), or the authority-less schemes a
    # crawler fetches (data: RFC 2397, about:blank).
    return "://" in url or url.startswith(("data:", "about:"))


class Request(object_ref):
    """An HTTP request, created by a spider and executed by the downloader.

    Args:
        url: absolute URL (``str``). Made safe with w3lib's ``safe_url_string``
            (WHATWG URL parsing, non-ASCII percent-encoded with ``encoding``, IDNA host),
            and AJAX-crawlable ``#!`` fragments become ``_escaped_fragment_`` queries.
        callback: called with the response; None means the spider's ``parse``.
        method: HTTP method; upper-cased.
        headers: header fields: a mapping or ``(name, value)`` pairs (copied into a
            :class:`Headers`).
        body: request body: bytes, or str encoded with ``encoding``; None is ``b''``.
        cookies: ``{name: value}`` or a list of cookie dicts, for the cookies middleware.
        meta: initial ``meta`` dict (shallow-copied).
        encoding: codec for a str url's query/body and str headers (default ``'utf-8'``).
        priority: scheduling priority (higher runs first), an int.
        dont_filter: True to bypass the duplicates filter.
        errback: called with a failure if the request fails (also without a
            ``callback``).
        flags: list of str shown in logs (Scrapy >= 1.4 name).
        cb_kwargs: keyword arguments for the callback (Scrapy >= 1.7 name).

    Raises:
        TypeError: ``url`` is not a str; ``callback``/``errback`` not callable;
            ``priority`` not an int; ``body`` neither str nor bytes.
        ValueError: ``url`` has no scheme (``"Missing scheme in request url: ..."``).

    An ``errback`` without a ``callback`` is accepted (Scrapy 2; Scrapy 1.2 refused
    it): the spider's ``parse`` is the callback.
    """

    #: The names of the public attributes that are also keyword arguments of
    #: ``__init__`` (Scrapy 2's ``Request.attributes``). :meth:`replace` carries them
    #: over, and :meth:`to_dict` and :func:`crawlfw.utils.request.request_from_dict`
    #: store and restore them: a subclass adding a constructor argument kept as a
    #: public attribute of the same name appends it here
    #: (``attributes = (*Request.attributes, "extra")``), as :class:`JsonRequest` does.
    attributes: tuple[str, ...] = (
        "url", "headers", "body", "cookies", "meta", "encoding", "flags", "cb_kwargs",
        "callback", "dont_filter", "errback", "method", "priority",
    )

    #: The frontier lease this request was taken under (an int id given by a ``JOBDIR``
    #: frontier when the scheduler hands the request out), else None. Not copied by
    #: :meth:`replace`: a new request is new work.
    _lease: int | None = None
    #: The frontier's host key this request was handed out for (set by the frontier's
    #: ``lease``, cleared when the engine reports its transfer finished); None otherwise.
    #: Never serialized, not copied by :meth:`replace`.
    _host: str | None = None
    #: True when the frontier spaced this request by its host's delay: the download
    #: slot then applies only its concurrency, not the delay again. Private, never
    #: serialized, not copied by :meth:`replace`.
    _paced: bool = False

    # Recorded for trackref by __init__ (no Python-level __new__: see object_ref), in
    # the instance's _trackref_time attribute (trackref.TIME_ATTR). No __slots__: a
    # subclass may mix in a class with slots of its own.
    _trackref_in_init = True

    def __init__(
        self,
        url: str,
        callback: Callable[..., Any] | None = None,
        method: str = "GET",
        headers=None,
        body: bytes | str | None = None,
        cookies: dict | list | None = None,
        meta: dict | None = None,
        encoding: str = "utf-8",
        priority: int = 0,
        dont_filter: bool = False,
        errback: Callable[..., Any] | None = None,
        flags: list | None = None,
        cb_kwargs: dict | None = None,
    ):
        if _trackref.enabled:  # recorded for trackref (see object_ref)
            self._trackref_time = _time()  # found by live_refs[cls] (ScannedRefs)
        self._encoding = encoding  # first: _set_url and _set_body use it
        self.method = "GET" if method == "GET" and method.__class__ is str else str(method).upper()
        if url is _SAFE_JOINED[0]:  # response.urljoin's shortcut made it: safe as is
            self._url = url
        else:
            # _set_url's work when the made-safe URL is cached (most links repeat ones seen)
            safe = _SAFE_URL_CACHE.get((url, encoding)) if url.__class__ is str else None
            if safe is None:
                self._set_url(url)
            else:
                self._url = safe
        if body is None:
            self._body = b""
        else:
            self._set_body(body)
        if priority.__class__ is not int and not isinstance(priority, int):
            raise TypeError(f"Request priority not an integer: {priority!r}")
        self.priority = priority
        if callback is not None and not callable(callback):
            raise TypeError(f"Request callback must be a callable or None, got {callback!r}")
        if errback is not None and not callable(errback):
            raise TypeError(f"Request errback must be a callable or None, got {errback!r}")
        self.callback = callback
        self.errback = errback
        if cookies:  # else the cookies property makes {} on first use
            self._cookies = cookies
        if headers is None:
            self.headers = h = _dict_new(Headers)  # Headers._empty(encoding), inline
            if encoding != "utf-8" or encoding.__class__ is not str:
                h.encoding = encoding  # else the class's default
        elif headers.__class__ is Headers:
            self.headers = headers.copy()
            self.headers.encoding = encoding
        else:
            self.headers = Headers(headers, encoding=encoding)
        self.dont_filter = dont_filter
        self._meta = dict(meta) if meta else None
        self._cb_kwargs = dict(cb_kwargs) if cb_kwargs else None
        if flags:  # else the flags property makes [] on first use
            self._flags = list(flags)

    # cookies and flags: plain attributes to their users (read, assigned, deleted), whose
    # empty default is made on first read (most requests never have theirs read: the
    # duplicates the scheduler drops). _UNSET: not made yet; _DELETED: deleted.
    _cookies: Any = _UNSET
    _flags: Any = _UNSET
    cookies = _lazy_default(
        "cookies", dict,
        "``{name: value}`` or a list of cookie dicts given to the constructor (the object "
        "itself), else an empty dict, for the cookies middleware.")
    flags = _lazy_default(
        "flags", list, "A list of str shown in logs (a copy of the constructor's ``flags``).")

    @property
    def meta(self) -> dict:
        """Free-form dict carried with the request and its response (created on first use)."""
        if self._meta is None:
            self._meta = {}
        return self._meta

    @property
    def cb_kwargs(self) -> dict:
        """Keyword arguments passed to the callback (created on first use)."""
        if self._cb_kwargs is None:
            self._cb_kwargs = {}
        return self._cb_kwargs

    def _get_url(self) -> str:
        return self._url

    def _set_url(self, url: str) -> None:
        if not isinstance(url, str):
            raise TypeError(f"Request url must be str, got {type(url).__name__}: {url!r}")
        self._url = _make_safe_url(url, self._encoding)  # ValueError: no scheme

    url = property(_get_url, obsolete_setter(_set_url, "url"), doc="The request URL (read-only).")

    def _get_body(self) -> bytes:
        return self._body

    def _set_body(self, body) -> None:
        if body is None:
            self._body = b""
        elif isinstance(body, bytes):
            self._body = body
        elif isinstance(body, str):
            self._body = body.encode(self._encoding)
        else:
            raise TypeError(f"Request body must be bytes or str, got {type(body).__name__}")

    body = property(
        _get_body, obsolete_setter(_set_body, "body"), doc="The request body, bytes (read-only)."
    )

    @property
    def encoding(self) -> str:
        """Codec used for str url parts, body and headers (read-only)."""
        return self._encoding

    def __str__(self) -> str:
        return f"<{self.method} {self._url}>"

    __repr__ = __str__

    @classmethod
    def from_curl(cls, curl_command: str, ignore_unknown_options: bool = True, **kwargs):
        """Build a request from a cURL command line (Scrapy 2's ``Request.from_curl``;
        the options understood are listed in :mod:`crawlfw.utils.curl`).

        Args:
            curl_command: e.g. ``"curl 'https://example.com/api' -H 'Accept: text/html'
                -d 'q=1'"``.
            ignore_unknown_options: warn about (True) or refuse (False) other options.
            **kwargs: request arguments that override the command's (``callback``,
                ``method``, ``headers``...).

        Returns:
            A request of this class.

        Raises:
            ValueError: not a curl command, or an unknown option when
                ``ignore_unknown_options`` is False.
        """
        from crawlfw.utils.curl import curl_to_request_kwargs

        request_kwargs = curl_to_request_kwargs(curl_command, ignore_unknown_options)
        request_kwargs.update(kwargs)
        return cls(**request_kwargs)

    def to_curl(self) -> str:
        """Return a cURL command line that makes this request (Scrapy 2.18's
        ``Request.to_curl``, the inverse of :meth:`from_curl`; see
        :func:`crawlfw.utils.request.request_to_curl`).

        Returns:
            str: ``"curl -X METHOD URL -H 'Name: value' ... --cookie '...'
            --data-raw '...'"``, each part quoted for a POSIX shell.
        """
        from crawlfw.http.request._curl import request_to_curl

        return request_to_curl(self)

    def to_dict(self, *, spider=None) -> dict:
        """Return a dict of this request that
        :func:`crawlfw.utils.request.request_from_dict` turns back into an equal request
        (Scrapy 2's ``Request.to_dict``).

        The dict is JSON-serializable when ``meta``, ``cookies`` and ``cb_kwargs`` are:
        ``callback``/``errback`` are the names of the spider's methods, ``body`` and the
        header names and values are ``str`` (the bytes decoded as latin-1, losslessly),
        ``_class`` names a subclass (see :mod:`crawlfw.utils.reqser`).

        Args:
            spider: the spider whose methods the callback and errback are (required when
                the request has them).

        Raises:
            ValueError: the callback or errback is not a method of ``spider``.
        """
        from crawlfw.http.request._serialize import request_to_dict

        return request_to_dict(self, spider)

    def copy(self) -> Request:
        """Return a copy (headers, meta, cookies-dict reference, flags: see :meth:`replace`)."""
        return self.replace()

    def replace(self, *args, **kwargs) -> Request:
        """Return a new request with the same attributes except those given.

        ``headers``, ``meta``, ``cb_kwargs`` and ``flags`` are copied (not shared);
        ``cookies`` and ``callback``/``errback`` are passed by reference, as in Scrapy.
        The other names of a subclass's :attr:`attributes` are carried over too (to a
        ``cls`` whose ``attributes`` have them).

        Args:
            cls: optional class of the new request (default: this request's class).
            **kwargs: any constructor argument.

        Returns:
            A new request.
        """
        kwargs.setdefault("url", self._url)
        kwargs.setdefault("method", self.method)
        kwargs.setdefault("headers", self.headers)
        kwargs.setdefault("body", self._body)
        kwargs.setdefault("cookies", self.cookies)
        kwargs.setdefault("meta", self._meta)
        kwargs.setdefault("encoding", self._encoding)
        kwargs.setdefault("priority", self.priority)
        kwargs.setdefault("dont_filter", self.dont_filter)
        kwargs.setdefault("callback", self.callback)
        kwargs.setdefault("errback", self.errback)
        kwargs.setdefault("flags", self.flags)
        kwargs.setdefault("cb_kwargs", self._cb_kwargs)
        cls = kwargs.pop("cls", self.__class__)
        if self.attributes is not _BASE_ATTRIBUTES:
            # a subclass's own attributes, carried over when the new class has them too
            target = getattr(cls, "attributes", ())
            for name in self.attributes:
                if name not in _BASE_ATTRIBUTE_SET and name in target:
                    kwargs.setdefault(name, getattr(self, name))
        return cls(*args, **kwargs)


_BASE_ATTRIBUTES = Request.attributes
_BASE_ATTRIBUTE_SET = frozenset(_BASE_ATTRIBUTES)
