"""The :class:`Response` object: a downloaded HTTP response (Scrapy 1.2's ``scrapy.http.response``).

Text responses are in :mod:`crawlfw.http.response.text` (``TextResponse``),
``.html`` (``HtmlResponse``) and ``.xml`` (``XmlResponse``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from time import time as _time
from typing import Any
from urllib.parse import urljoin

from crawlfw.exceptions import NotSupported
from crawlfw.http.common import obsolete_setter
from crawlfw.http.headers import Headers
from crawlfw.http.request import Request
from crawlfw.utils import trackref as _trackref
from crawlfw.utils.trackref import object_ref

__all__ = ["Response"]


class _NotText(NotSupported, AttributeError):
    """Raised by text-only members of a binary Response.

    A NotSupported (what Scrapy documents for ``css``/``xpath``) that is also an
    AttributeError, so ``hasattr(response, 'text')`` is False rather than an error.
    """


class Response(object_ref):
    """An HTTP response, as built by the downloader and passed to spider callbacks.

    Args:
        url: the final URL of the response (str).
        status: HTTP status code (int, or a str of digits).
        headers: header fields: :class:`Headers`, a mapping, or ``(name, value)`` pairs.
            A Headers object is copied (use ``Headers.from_raw_pairs`` to build it).
        body: the body, bytes (already decompressed); None is ``b''``.
        flags: list of str shown in logs (e.g. ``['cached']``).
        request: the :class:`Request` that produced this response.
        certificate: the server's TLS certificate (Scrapy 2.1), a
            :class:`crawlfw.http.Certificate` for an HTTPS response the downloader
            made, else None.
        ip_address: the address the response came from (Scrapy 2.1): an
            ``ipaddress.IPv4Address``/``IPv6Address`` (a str is converted), or None.
        protocol: the protocol of the response (Scrapy 2.5), e.g. ``"HTTP/1.1"``; None
            when not known (``file:``, ``ftp:``, ``data:``, a response built by hand).

    Raises:
        TypeError: ``url`` is not a str, or ``body`` is not bytes (use TextResponse for
            str bodies).
        ValueError: ``status`` is not an integer, or ``ip_address`` a str that is no
            IP address.
    """

    #: The names of the public attributes that are also keyword arguments of
    #: ``__init__`` (Scrapy 2's ``Response.attributes``): :meth:`replace` carries them
    #: over and :meth:`to_dict` stores them (but ``request`` and ``certificate``). A
    #: subclass adding a constructor argument kept as a public attribute of the same
    #: name appends it (``attributes = (*Response.attributes, "extra")``).
    attributes: tuple[str, ...] = (
        "url", "headers", "body", "flags", "status", "request", "certificate",
        "ip_address", "protocol",
    )

    # Class defaults: the constructor stores the three below only when given (the
    # downloader builds a response per page). _ip_address is an ipaddress object, or
    # the str of one the downloader stored, converted on first read (see ip_address).
    certificate: Any = None
    protocol: str | None = None
    _ip_address: Any = None

    # Recorded for trackref by __init__ (no Python-level __new__: see object_ref), in
    # the instance's _trackref_time attribute (trackref.TIME_ATTR). No __slots__: a
    # subclass may mix in a class with slots of its own.
    _trackref_in_init = True

    def __init__(
        self,
        url: str,
        status: int = 200,
        headers=None,
        body: bytes = b"",
        flags: list | None = None,
        request: Request | None = None,
        certificate: Any = None,
        ip_address: Any = None,
        protocol: str | None = None,
    ):
        if _trackref.enabled:  # recorded for trackref (see object_ref)
            self._trackref_time = _time()  # found by live_refs[cls] (ScannedRefs)
        if headers is None:
            self.headers = Headers._empty()  # Headers(), without its constructor chain
        elif isinstance(headers, Headers):
            self.headers = headers.copy()
        else:
            self.headers = Headers(headers)
        self.status = int(status)
        self._set_body(body)
        self._set_url(url)
        self.request = request
        self.flags = list(flags) if flags else []
        if certificate is not None:
            self.certificate = certificate
        if ip_address is not None:
            self.ip_address = ip_address
        if protocol is not None:
            self.protocol = protocol

    @property
    def ip_address(self) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
        """The IP address of the server the response came from (Scrapy 2.1): an
        ``ipaddress.IPv4Address`` or ``IPv6Address`` -- for a downloaded response the
        address curl connected to (``CURLINFO_PRIMARY_IP``; a proxy's when a proxy was
        used) -- or None (``file:``, ``data:``, a cached or hand-made response).

        Assigning a str converts it (``ValueError`` if it is no IP address).
        """
        ip = self._ip_address
        if ip.__class__ is str:  # the downloader's str, converted on first read
            ip = self._ip_address = ipaddress.ip_address(ip)
        return ip

    @ip_address.setter
    def ip_address(self, value) -> None:
        self._ip_address = ipaddress.ip_address(value) if isinstance(value, str) else value

    @property
    def cb_kwargs(self) -> dict:
        """``self.request.cb_kwargs`` (Scrapy 2).

        Raises:
            AttributeError: the response has no request.
        """
        try:
            return self.request.cb_kwargs
        except AttributeError:
            raise AttributeError(
                "Response.cb_kwargs not available, this response is not tied to any request"
            ) from None

    @property
    def meta(self) -> dict:
        """``self.request.meta``.

        Raises:
            AttributeError: the response has no request.
        """
        try:
            return self.request.meta
        except AttributeError:
            raise AttributeError(
                "Response.meta not available, this response is not tied to any request"
            ) from None

    def _get_url(self) -> str:
        return self._url

    def _set_url(self, url: str) -> None:
        if isinstance(url, str):
            self._url = url
        else:
            raise TypeError(
                f"{type(self).__name__} url must be str, got {type(url).__name__}: {url!r}"
            )

    url = property(_get_url, obsolete_setter(_set_url, "url"), doc="The response URL (read-only).")

    def _get_body(self) -> bytes:
        return self._body

    def _set_body(self, body) -> None:
        if body is None:
            self._body = b""
        elif not isinstance(body, bytes):
            raise TypeError(
                f"Response body must be bytes, got {type(body).__name__}. "
                "If you want to pass a str body use TextResponse or HtmlResponse."
            )
        else:
            self._body = body

    body = property(
        _get_body, obsolete_setter(_set_body, "body"), doc="The response body, bytes (read-only)."
    )

    def __str__(self) -> str:
        return f"<{self.status} {self._url}>"

    __repr__ = __str__

    def copy(self) -> Response:
        """Return a copy of this response (headers and flags copied, request shared)."""
        return self.replace()

    def replace(self, *args, **kwargs) -> Response:
        """Return a new response with the same attributes except those given.

        Every name of :attr:`attributes` is carried over (to a ``cls`` that has it in
        its own ``attributes``).

        Args:
            cls: optional class of the new response (default: this response's class).
            **kwargs: any constructor argument.
        """
        kwargs.setdefault("url", self._url)
        kwargs.setdefault("status", self.status)
        kwargs.setdefault("headers", self.headers)
        kwargs.setdefault("body", self._body)
        kwargs.setdefault("request", self.request)
        kwargs.setdefault("flags", self.flags)
        kwargs.setdefault("certificate", self.certificate)
        kwargs.setdefault("ip_address", self._ip_address)
        kwargs.setdefault("protocol", self.protocol)
        cls = kwargs.pop("cls", self.__class__)
        if self.attributes is not _BASE_ATTRIBUTES:
            # a subclass's own attributes, carried over when the new class has them too
            target = getattr(cls, "attributes", ())
            for name in self.attributes:
                if name not in _BASE_ATTRIBUTE_SET and name in target:
                    kwargs.setdefault(name, getattr(self, name))
        return cls(*args, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        """Return a dict of this response that :meth:`from_dict` and
        :func:`crawlfw.utils.response.response_from_dict` turn back into an equal
        response (Scrapy 2.19's ``Response.to_dict``).

        Returns:
            dict: ``headers`` (``{bytes name: [bytes value, ...]}``) and every other
            name of :attr:`attributes` but ``request`` and ``certificate`` (tied to
            one crawl), the values as they are (``body`` bytes, ``ip_address`` an
            ``ipaddress`` object or None; a TextResponse's resolved ``encoding``), and
            ``_class``, the dotted path of the class, unless it is :class:`Response`.
            Picklable; not JSON-able as it is (bytes).
        """
        d: dict[str, Any] = {"headers": dict(self.headers)}
        for name in self.attributes:
            if name != "request" and name != "certificate":
                d.setdefault(name, getattr(self, name))
        if type(self) is not Response:
            d["_class"] = f"{type(self).__module__}.{type(self).__name__}"
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]):
        """Return a response of this class built from ``d``, a dict of :meth:`to_dict`
        (its ``_class`` is ignored: see
        :func:`crawlfw.utils.response.response_from_dict`, which picks the class).

        Raises:
            TypeError: ``d`` has a key that is not a constructor argument.
        """
        return cls(**{key: value for key, value in d.items() if key != "_class"})

    def urljoin(self, url: str) -> str:
        """Return ``url`` made absolute against the response URL (RFC 3986 section 5)."""
        return urljoin(self._url, url)

    @property
    def text(self) -> str:
        """For text responses only.

        Raises:
            NotSupported: always (also an AttributeError) -- the body is not text.
        """
        raise _NotText("Response content isn't text")

    def body_as_unicode(self) -> str:
        """Scrapy 1.2 name of :attr:`text`; raises NotSupported on a binary response."""
        raise _NotText("Response content isn't text")

    @property
    def selector(self):
        """For text responses only.

        Raises:
            NotSupported: always (also an AttributeError) -- the body is not text.
        """
        raise _NotText("Response content isn't text")

    def css(self, *a, **kw):
        """For text responses only.

        Raises:
            NotSupported: always -- the body is not text.
        """
        raise _NotText("Response content isn't text")

    def xpath(self, *a, **kw):
        """For text responses only.

        Raises:
            NotSupported: always -- the body is not text.
        """
        raise _NotText("Response content isn't text")

    def jmespath(self, *a, **kw):
        """For text responses only (Scrapy 2.19).

        Raises:
            NotSupported: always -- the body is not text.
        """
        raise _NotText("Response content isn't text")

    def _follow_url(self, url) -> str:
        """Return the absolute URL to follow for a str or a Link-like (``.url``)."""
        if url is None:
            raise ValueError("url can't be None")
        if not isinstance(url, str):
            link_url = getattr(url, "url", None)
            if not isinstance(link_url, str):
                raise TypeError(
                    f"follow() needs a str url or an object with a str .url (a Link), got {url!r}"
                )
            url = link_url
        return self.urljoin(url)

    def follow(
        self,
        url,
        callback: Callable | None = None,
        method: str = "GET",
        headers=None,
        body=None,
        cookies=None,
        meta: dict | None = None,
        encoding: str | None = "utf-8",
        priority: int = 0,
        dont_filter: bool = False,
        errback: Callable | None = None,
        cb_kwargs: dict | None = None,
        flags: list | None = None,
    ) -> Request:
        """Return a :class:`Request` for ``url`` resolved against this response (Scrapy >= 1.4).

        The arguments after ``url`` are :class:`Request`'s, in Scrapy 2's order
        (``..., errback, cb_kwargs, flags``).

        Args:
            url: a relative or absolute URL (str), or a Link (any object with a ``.url``);
                on a TextResponse also a Selector of an ``<a>``/``<link>`` element or of an
                attribute value.
            callback, method, ...: as for :class:`Request`.

        Raises:
            ValueError: ``url`` is None, or ``encoding`` is None.
            TypeError: ``url`` is of an unsupported type.
        """
        if encoding is None:
            raise ValueError("encoding can't be None")
        return Request(
            self._follow_url(url),
            callback=callback,
            method=method,
            headers=headers,
            body=body,
            cookies=cookies,
            meta=meta,
            encoding=encoding,
            priority=priority,
            dont_filter=dont_filter,
            errback=errback,
            flags=flags,
            cb_kwargs=cb_kwargs,
        )

    def follow_all(
        self,
        urls: Iterable,
        callback: Callable | None = None,
        method: str = "GET",
        headers=None,
        body=None,
        cookies=None,
        meta: dict | None = None,
        encoding: str | None = "utf-8",
        priority: int = 0,
        dont_filter: bool = False,
        errback: Callable | None = None,
        cb_kwargs: dict | None = None,
        flags: list | None = None,
    ):
        """Return a generator of :meth:`follow` requests, one per item of ``urls``
        (Scrapy >= 2.0).

        Each request gets its own ``meta`` and ``cb_kwargs`` dicts, whose values are
        shared (as in Scrapy).

        Args:
            urls: an iterable of what :meth:`follow` takes (str URLs, Links).
            callback, method, ...: :meth:`follow`'s other arguments, the same for each.

        Returns:
            A generator of :class:`Request`; ``urls`` is checked at once, each item
            when the generator reaches it.

        Raises:
            ValueError: ``urls`` is None.
            TypeError: ``urls`` is not iterable.
        """
        if urls is None:
            raise ValueError("urls can't be None")
        if not hasattr(urls, "__iter__"):
            raise TypeError(f"'urls' argument must be an iterable, got {urls!r}")
        return (
            self.follow(
                url, callback=callback, method=method, headers=headers, body=body,
                cookies=cookies, meta=meta, encoding=encoding, priority=priority,
                dont_filter=dont_filter, errback=errback, cb_kwargs=cb_kwargs, flags=flags,
            )
            for url in urls
        )


_BASE_ATTRIBUTES = Response.attributes
_BASE_ATTRIBUTE_SET = frozenset(_BASE_ATTRIBUTES)
