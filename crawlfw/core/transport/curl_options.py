"""The options of a :class:`crawlfw.core.transport.curl.MultiDriver` read from the
settings (:func:`driver_options`: ``DOWNLOAD_TIMEOUT``, ``DNS_TIMEOUT``,
``DOWNLOADER_CLIENT_TLS_METHOD``...), the TLS method names (:data:`TLS_METHODS`) and the
bound on the DNS cache shared by a crawl's drivers (:class:`DnsCacheBudget`,
``DNSCACHE_SIZE``); split from :mod:`crawlfw.core.transport.curl` (issue 19)."""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Any

import pycurl

if TYPE_CHECKING:
    from crawlfw.settings import BaseSettings

__all__ = ["DnsCacheBudget", "TLS_METHODS", "driver_options", "ssl_version"]

#: ``DOWNLOADER_CLIENT_TLS_METHOD`` value -> ``CURLOPT_SSLVERSION`` (minimum | maximum).
TLS_METHODS: dict[str, int] = {
    "TLS": pycurl.SSLVERSION_DEFAULT,
    "TLSv1.0": pycurl.SSLVERSION_TLSv1_0 | pycurl.SSLVERSION_MAX_TLSv1_0,
    "TLSv1.1": pycurl.SSLVERSION_TLSv1_1 | pycurl.SSLVERSION_MAX_TLSv1_1,
    "TLSv1.2": pycurl.SSLVERSION_TLSv1_2 | pycurl.SSLVERSION_MAX_TLSv1_2,
    "TLSv1.3": pycurl.SSLVERSION_TLSv1_3 | pycurl.SSLVERSION_MAX_TLSv1_3,
}


def ssl_version(tls_method: str) -> int:
    """Return the ``CURLOPT_SSLVERSION`` value of a ``DOWNLOADER_CLIENT_TLS_METHOD``.

    Args:
        tls_method: a key of :data:`TLS_METHODS` (Scrapy's names).

    Raises:
        ValueError: an unknown method; the message names the setting and the valid ones.
    """
    try:
        return TLS_METHODS[tls_method]
    except (KeyError, TypeError):
        raise ValueError(
            f"DOWNLOADER_CLIENT_TLS_METHOD must be one of {', '.join(TLS_METHODS)}; "
            f"got {tls_method!r}"
        ) from None


def driver_options(settings: BaseSettings, concurrency: int | None = None) -> dict[str, Any]:
    """The :class:`~crawlfw.core.transport.curl.MultiDriver` keyword arguments the settings give.

    ``CURL_MAXCONNECTS`` -> ``maxconnects`` (0, the default: ``CONCURRENT_REQUESTS``
    shared among the ``DOWNLOADER_ACTORS``, so the idle keep-alive connections kept
    across all hosts are bounded by the concurrency asked for, not by the hosts seen);
    ``DNSCACHE_ENABLED`` False ->
    ``dns_cache_timeout_s=0`` (no caching: every transfer resolves the host name again;
    True keeps libcurl's cache, 60 s per answer, bounded to ``DNSCACHE_SIZE`` names by a
    :class:`DnsCacheBudget` the caller makes: it is shared by a crawl's downloaders);
    ``DNS_TIMEOUT`` -> ``dns_timeout_s``; ``DOWNLOADER_CLIENT_TLS_METHOD`` ->
    ``tls_method``; the schemes of ``DOWNLOAD_HANDLERS`` (+ ``_BASE``) not set to None
    -> ``schemes`` (``DOWNLOAD_HANDLERS = {'ftp': None}`` refuses ftp:// requests with
    ``NotSupported``, as in Scrapy).

    Args:
        settings: a :class:`~crawlfw.settings.Settings`.
        concurrency: the crawl's effective ``CONCURRENT_REQUESTS`` when it was lowered
            to fit the open file limit (None: the setting).

    Returns:
        dict of keyword arguments.

    Raises:
        ValueError: ``DOWNLOADER_CLIENT_TLS_METHOD`` is not a known method, or
            ``DNS_TIMEOUT`` is negative.
    """
    tls_method = settings.get("DOWNLOADER_CLIENT_TLS_METHOD", "TLS")
    ssl_version(tls_method)  # checked here, on the caller's thread
    dns_timeout_s = settings.getfloat("DNS_TIMEOUT", 60)
    if not dns_timeout_s >= 0:
        raise ValueError(f"DNS_TIMEOUT must be a number of seconds >= 0 (0: no limit of "
                         f"its own), got {settings.get('DNS_TIMEOUT')!r}")
    maxconnects = settings.getint("CURL_MAXCONNECTS", 0)
    if maxconnects <= 0:
        downloaders = max(1, settings.getint("DOWNLOADER_ACTORS", 1))
        if concurrency is None:
            concurrency = settings.getint("CONCURRENT_REQUESTS", 16)
        maxconnects = max(1, -(-concurrency // downloaders))
    return {
        "maxconnects": maxconnects,
        "dns_cache_timeout_s": 60 if settings.getbool("DNSCACHE_ENABLED", True) else 0,
        "dns_timeout_s": dns_timeout_s,
        "tls_method": tls_method,
        "schemes": frozenset(
            scheme for scheme, handler in dict(settings.getwithbase("DOWNLOAD_HANDLERS")).items()
            if handler is not None
        ),
    }


class DnsCacheBudget:
    """How long libcurl may keep DNS answers so that its cache holds at most ``size``
    host names: ``DNSCACHE_SIZE``, Scrapy's bound on its resolver cache, honoured
    through the one knob libcurl's cache has, its expiry (``CURLOPT_DNS_CACHE_TIMEOUT``,
    whole seconds; libcurl has no size option).

    libcurl drops, each time a transfer ends, every answer older than that transfer's
    cache timeout, so its cache holds the names resolved within the last timeout
    seconds. The budget keeps the start times of the last ``size`` lookups (a ring of
    ``size`` floats, 8 bytes each); once it has seen ``size`` of them, the timeout is the
    whole seconds since the oldest of those (at most ``max_timeout_s``): the answers
    younger than that are fewer than ``size`` (plus the lookups in flight), and the
    oldest answers go first, as Scrapy's cache drops its oldest entry. A crawl that
    resolves fewer than ``size`` names per ``max_timeout_s`` keeps the full timeout. A
    rate above ``size`` names a second gives 0: no answer is kept past its transfer.

    One budget serves all the downloaders of a crawl (their ``CurlShare`` holds one
    cache); it is updated from their threads without a lock, so under contention an
    update may be lost, which only makes the bound approximate by a lookup or two.

    Args:
        size: ``DNSCACHE_SIZE``, the most names to keep (int >= 1).
        max_timeout_s: the longest an answer is kept (whole seconds >= 0; 60, as
            ``DNSCACHE_ENABLED`` keeps them).

    Attributes:
        timeout_s: the cache timeout (s) new transfers get.
        bounding: True once ``size`` lookups were seen: from then on every transfer is
            given ``timeout_s`` (before, the driver's own timeout stands).

    Raises:
        ValueError: ``size`` is not an int >= 1 (the message names ``DNSCACHE_SIZE``).
    """

    __slots__ = ("size", "max_timeout_s", "timeout_s", "bounding", "_starts", "_next")

    def __init__(self, size: int, max_timeout_s: int = 60) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"DNSCACHE_SIZE must be an int >= 1, got {size!r}")
        self.size = size
        self.max_timeout_s = max(0, int(max_timeout_s))
        self.timeout_s = self.max_timeout_s
        self.bounding = False
        self._starts = array("d")
        self._next = 0  # the ring's oldest start, once full

    def started(self, now_s: float) -> int:
        """Record a name lookup that starts now.

        Args:
            now_s: ``time.monotonic()`` seconds.

        Returns:
            int: the cache timeout (s) new transfers should get (:attr:`timeout_s`).
        """
        starts = self._starts
        if len(starts) < self.size:
            starts.append(now_s)
            if len(starts) < self.size:
                return self.timeout_s
            self.bounding = True
            oldest = starts[0]
        else:
            i = self._next
            starts[i] = now_s
            i += 1
            if i == self.size:
                i = 0
            self._next = i
            oldest = starts[i]
        self.timeout_s = min(self.max_timeout_s, max(0, int(now_s - oldest)))
        return self.timeout_s

    def __repr__(self) -> str:
        return (f"<DnsCacheBudget size={self.size} timeout_s={self.timeout_s} "
                f"bounding={self.bounding}>")
