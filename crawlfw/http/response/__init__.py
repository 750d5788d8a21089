"""The :class:`Response` object: a downloaded HTTP response (Scrapy 1.2's ``scrapy.http.response``).

Text responses are in :mod:`crawlfw.http.response.text` (``TextResponse``),
``.html`` (``HtmlResponse``) and ``.xml`` (``XmlResponse``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from time import time as _time
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

    Raises:
        TypeError: ``url`` is not a str, or ``body`` is not bytes (use TextResponse for
            str bodies).
        ValueError: ``status`` is not an integer.
    """

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
        cls = kwargs.pop("cls", self.__class__)
        return cls(*args, **kwargs)

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
        encoding: str = "utf-8",
        priority: int = 0,
        dont_filter: bool = False,
        errback: Callable | None = None,
        flags: list | None = None,
        cb_kwargs: dict | None = None,
    ) -> Request:
        """Return a :class:`Request` for ``url`` resolved against this response (Scrapy >= 1.4).

        Args:
            url: a relative or absolute URL (str), or a Link (any object with a ``.url``);
                on a TextResponse also a Selector of an ``<a>``/``<link>`` element or of an
                attribute value.
            callback, method, ...: as for :class:`Request`.

        Raises:
            ValueError: ``url`` is None.
            TypeError: ``url`` is of an unsupported type.
        """
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

    def follow_all(self, urls: Iterable, callback: Callable | None = None, **kwargs):
        """Return a generator of :meth:`follow` requests, one per item of ``urls``
        (Scrapy >= 2.0).

        Args:
            urls: an iterable of what :meth:`follow` takes (str URLs, Links).
            callback, **kwargs: :meth:`follow`'s other arguments, the same for each.

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
        return (self.follow(url, callback=callback, **kwargs) for url in urls)
