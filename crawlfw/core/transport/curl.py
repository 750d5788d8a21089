"""The pycurl transfer core: many concurrent HTTP(S)/FTP/file transfers on one thread.

:class:`MultiDriver` owns one ``pycurl.CurlMulti``, a pool of reusable ``pycurl.Curl``
easy handles and a :mod:`selectors` selector (epoll on Linux) driven by libcurl's
socket API (``CURLMOPT_SOCKETFUNCTION`` / ``CURLMOPT_TIMERFUNCTION`` and
``curl_multi_socket_action``; see libcurl's "multi_socket" documentation). That
scales past 1024 file descriptors, unlike ``fdset``/``select``, and never busy-polls:
with nothing to do, :meth:`MultiDriver.perform` sleeps in the selector.

Threading: a driver is NOT thread-safe. Create it, call every method, and close it
on one thread (the Downloader actor's): libcurl handles must only ever be touched by
one thread (pycurl ``doc/thread-safety.rst``).

Failures: network problems never raise. A transfer that fails below HTTP comes back
from :meth:`MultiDriver.perform` as a :class:`Result` whose ``error`` is a
:class:`crawlfw.exceptions.DownloadError` subclass (mapping in
:mod:`crawlfw.core.transport._curl_errors`). HTTP error statuses (404, 500...) are ordinary
responses. Only caller mistakes raise (unsupported scheme, invalid arguments, use
after :meth:`~MultiDriver.close`).

Typical use (what the Downloader actor does)::

    driver = MultiDriver(maxconnects=16)
    driver.add(request, timeout_s=180, maxsize_bytes=1 << 30, warnsize_bytes=32 << 20)
    while driver.active:
        for result in driver.perform(wait_s=1.0, wake_fd=wake_r):
            handle(result.request, result.response or result.error)
    driver.close()
"""

from __future__ import annotations

import collections
import functools
import logging
import math
import selectors
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

import pycurl

from crawlfw.core.transport._curl_errors import exception_for
from crawlfw.core.transport.curl_dns import (
    _LITERAL_PINS,
    _PINNED_DNS_CACHE_S,
    PinnedResolution,
)
from crawlfw.core.transport.curl_options import (
    DnsCacheBudget,
    ssl_version,
)
from crawlfw.core.transport.curl_peer import PROTOCOLS, ConnectionCertificates
from crawlfw.core.transport.curl_transfer import (
    Result,
    StreamSignals,
    _content_length,
    _header_lines,
    _headers_from_lines,
    _make_writer,
    _maxsize_error,
    _stream_signals,
    _Transfer,
)
from crawlfw.exceptions import (
    DownloadError,
    ResponseFailed,
    UnsupportedURLSchemeError,
)
from crawlfw.http import Headers
from crawlfw.responsetypes import responsetypes

if TYPE_CHECKING:
    from crawlfw.core.transport.resolver import Resolver
    from crawlfw.exceptions import StopDownload
    from crawlfw.http import Request, Response

__all__ = ["MultiDriver", "Result", "SUPPORTED_SCHEMES"]

logger = logging.getLogger(__name__)

#: URL schemes :meth:`MultiDriver.add` accepts.
SUPPORTED_SCHEMES = frozenset({"http", "https", "ftp", "file"})

# libcurl's socket "what" and socket_action's ev_bitmask use the same bits as
# selectors' events: POLL_IN == CSELECT_IN == EVENT_READ == 1 and
# POLL_OUT == CSELECT_OUT == EVENT_WRITE == 2, so masks pass through unchanged.
assert pycurl.POLL_IN == pycurl.CSELECT_IN == selectors.EVENT_READ
assert pycurl.POLL_OUT == pycurl.CSELECT_OUT == selectors.EVENT_WRITE
_RW = selectors.EVENT_READ | selectors.EVENT_WRITE

# Longest single sleep in the selector; perform() loops, so an infinite wait_s works.
_MAX_SELECT_S = 3600.0

# CURLOPT_PROTOCOLS per transfer: only the request's own scheme (a URL of another
# scheme can never be fetched by a transfer made for this one). CURLOPT_REDIR_PROTOCOLS:
# http and https only, should redirects ever be followed by curl (they are not:
# FOLLOWLOCATION is off, RedirectMiddleware follows them). See docs/security.md.
_SCHEME_PROTOCOLS = {
    "http": pycurl.PROTO_HTTP,
    "https": pycurl.PROTO_HTTPS,
    "ftp": pycurl.PROTO_FTP,
    "file": pycurl.PROTO_FILE,
}
_REDIR_PROTOCOLS = pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS

_WAKE = object()  # selector key data of the caller's wake fd



class MultiDriver(PinnedResolution):
    """Runs concurrent transfers over one ``pycurl.CurlMulti`` on the calling thread.

    One instance per Downloader actor; see the module docstring for the threading
    rule. Connections are kept alive and reused between transfers to the same host
    (libcurl's connection cache, owned by the multi handle), and DNS answers are
    cached for ``dns_cache_timeout_s``.

    Protocol behaviour (Scrapy 1.2's HTTP/1.1 download handler is the reference):
    HTTP/1.1 only (also over TLS: no ALPN h2); exactly the request's headers are sent
    (curl's own ``Accept``, ``Expect`` and ``Content-Type`` are suppressed; ``Host`` and
    ``Content-Length`` are automatic unless the request sets them); redirects are never
    followed (RedirectMiddleware's job); content encodings are never decoded
    (HttpCompressionMiddleware's job), chunked transfer-encoding is; proxy environment
    variables are ignored (HttpProxyMiddleware's job).

    Args:
        maxconnects: size of the multi handle's connection cache (idle
            keep-alive connections kept open), ``CURLMOPT_MAXCONNECTS``.
        user_agent: default ``User-Agent`` for requests that carry none
            (None: send no User-Agent, like Scrapy's handler).
        dns_cache_timeout_s: seconds a resolved host name is cached
            (``CURLOPT_DNS_CACHE_TIMEOUT``).
        dns_cache_budget: a :class:`DnsCacheBudget` that lowers that timeout so the
            cache holds at most its ``size`` names (``DNSCACHE_SIZE``), or None.
        dns_timeout_s: seconds a host name may take to resolve (``DNS_TIMEOUT``, as
            Scrapy's resolver waits): a transfer whose lookup has not answered by then
            ends with a :class:`~crawlfw.exceptions.DNSLookupError`. libcurl has no
            timeout of the lookup alone (``CURLOPT_CONNECTTIMEOUT`` also covers the TCP
            and TLS handshakes, which Scrapy bounds by ``DOWNLOAD_TIMEOUT`` only), so the
            driver notes when each lookup starts (``CURLOPT_RESOLVER_START_FUNCTION``,
            called for real lookups only, not for cached answers) and ends the
            transfer if its ``NAMELOOKUP_TIME`` is still 0 at the deadline. 0 or
            ``math.inf``: no limit but the transfer's own timeout, which also covers
            the lookup (a lookup cut by it is a ``DownloadTimeoutError``, as in Scrapy).
        verify_tls: verify TLS certificates and host names (off by default, as
            Scrapy 1.2 does not verify).
        buffer_size_bytes: receive buffer per transfer (``CURLOPT_BUFFERSIZE``);
            larger means fewer write callbacks for big bodies.
        tls_method: the TLS protocol version(s) to use (``CURLOPT_SSLVERSION``), as the
            ``DOWNLOADER_CLIENT_TLS_METHOD`` setting names them: ``'TLS'`` (negotiate
            the highest both sides support), ``'TLSv1.0'``, ``'TLSv1.1'``,
            ``'TLSv1.2'`` (exactly that version, as Scrapy 1.2's method does) or
            ``'TLSv1.3'``.
        schemes: the URL schemes to accept, a subset of :data:`SUPPORTED_SCHEMES` (the
            others are refused with ``NotSupported``).
        share: a ``pycurl.CurlShare`` every transfer uses (``CURLOPT_SHARE``), e.g. one
            sharing the DNS cache (``LOCK_DATA_DNS``) among the drivers of a crawl's
            downloaders; None: this driver's multi handle keeps its own.
        resolver: crawlfw's :class:`~crawlfw.core.transport.resolver.Resolver`, driven
            from :meth:`perform`'s selector (the driver closes it; see
            :mod:`~crawlfw.core.transport.curl_dns`: libcurl then never resolves, a
            transfer waits for its lookup outside the multi, counted in
            :attr:`active`, and a failed lookup is a ``DNSLookupError``;
            ``dns_timeout_s`` and ``dns_cache_budget`` are ignored), or None: libcurl
            resolves (its threaded resolver, with those two).

    Raises:
        ValueError: an argument is out of range, or ``tls_method`` is none of those.
    """

    def __init__(
        self,
        *,
        maxconnects: int = 100,
        user_agent: str | bytes | None = None,
        dns_cache_timeout_s: float = 60,
        dns_cache_budget: DnsCacheBudget | None = None,
        dns_timeout_s: float = 60,
        verify_tls: bool = False,
        buffer_size_bytes: int = 64 * 1024,
        tls_method: str = "TLS",
        schemes: Iterable[str] = SUPPORTED_SCHEMES,
        share: pycurl.CurlShare | None = None,
        resolver: Resolver | None = None,
    ) -> None:
        if maxconnects < 1:
            raise ValueError(f"MultiDriver maxconnects must be >= 1, got {maxconnects!r}")
        if not dns_cache_timeout_s >= 0:
            raise ValueError(
                f"MultiDriver dns_cache_timeout_s must be >= 0, got {dns_cache_timeout_s!r}"
            )
        if not 1024 <= buffer_size_bytes <= 10 * 1024 * 1024:
            raise ValueError(
                f"MultiDriver buffer_size_bytes must be in 1024..10485760, got {buffer_size_bytes!r}"
            )
        if not dns_timeout_s >= 0:
            raise ValueError(f"MultiDriver dns_timeout_s must be >= 0 (DNS_TIMEOUT), "
                             f"got {dns_timeout_s!r}")
        self._user_agent = user_agent
        self._dns_cache_timeout_s = int(dns_cache_timeout_s)
        # DNSCACHE_SIZE: only while answers are cached at all
        self._dns_budget = dns_cache_budget if self._dns_cache_timeout_s else None
        self._dns_timeout_s = (float(dns_timeout_s) if 0 < dns_timeout_s < math.inf
                               else 0.0)
        #: (deadline, handle, lookup number) per lookup started, deadlines in order
        self._resolving: collections.deque[tuple[float, pycurl.Curl, int]] = collections.deque()
        self._lookups = 0  # lookups started (numbers the entries of _resolving)
        self._watch_lookups = bool(self._dns_timeout_s or self._dns_budget is not None)
        self._resolver = resolver
        #: ``scheme://authority`` -> (expires_s, CURLOPT_RESOLVE lines or None, ip)
        self._pins: dict[str, tuple[float, list[str] | None, str | None]] = {}
        self._pins_max = _LITERAL_PINS
        self._resolve_set: dict[pycurl.Curl, list[str]] = {}  # each handle's RESOLVE list
        #: (deadline, number, handle, transfer) of the transfers waiting for lookups
        self._parked_deadlines: list[tuple[float, int, pycurl.Curl, _Transfer]] = []
        self._parked_no = 0
        #: lookups libcurl made by itself although a resolver was given (none expected)
        self.curl_lookups = 0
        #: host name -> the keys of ``_pins`` made from its answers (oldest first; may
        #: name pins evicted since): a late address family re-pins them
        self._host_pins: dict[str, list[str]] = {}
        if resolver is not None:
            resolver.on_merged = self._merged
            self._dns_budget = None
            self._dns_timeout_s = 0.0
            self._watch_lookups = False
            self._dns_cache_timeout_s = _PINNED_DNS_CACHE_S
            if resolver.cache is not None:
                self._pins_max = max(resolver.cache.size, 1)
        self._verify = 1 if verify_tls else 0
        self._verify_host = 2 if verify_tls else 0
        self._buffer_size = int(buffer_size_bytes)
        self._ssl_version = ssl_version(tls_method)
        self._schemes = frozenset(schemes) & SUPPORTED_SCHEMES
        self._share = share

        self._multi = pycurl.CurlMulti()
        self._multi.setopt(pycurl.M_SOCKETFUNCTION, self._on_socket)
        self._multi.setopt(pycurl.M_TIMERFUNCTION, self._on_timer)
        self._multi.setopt(pycurl.M_MAXCONNECTS, int(maxconnects))
        self._selector = selectors.DefaultSelector()
        if resolver is not None:
            resolver.attach(self._selector)
        self._watched: dict[int, int] = {}  # curl socket fd -> selector events
        self._timer_deadline: float | None = None  # time.monotonic() value
        self._transfers: dict[pycurl.Curl, _Transfer] = {}  # in flight, in add order
        self._pool: list[tuple[pycurl.Curl, bool]] = []  # idle (handle, needs_reset)
        self._wake_fd: int | None = None
        self._done: list[Result] = []
        self._closed = False
        self._certificates = ConnectionCertificates()  # Response.certificate, per connection
        #: Set by the owner: an object with ``wanted() -> bool`` (checked once per
        #: transfer), ``headers_received(headers, body_length, request)`` and
        #: ``bytes_received(data, request)``, each returning a StopDownload to stop the
        #: transfer or None (Scrapy 2's ``headers_received``/``bytes_received`` signals).
        self.stream_signals: StreamSignals | None = None

    # -- public API ---------------------------------------------------------------

    @property
    def active(self) -> int:
        """Number of transfers added and not yet returned by :meth:`perform` (one that
        failed as it was added, such as a cached failed lookup, counts until then)."""
        return len(self._transfers) + len(self._done)

    def add(
        self,
        request: Request,
        *,
        timeout_s: float,
        maxsize_bytes: int = 0,
        warnsize_bytes: int = 0,
        proxy: str | None = None,
        bindaddress: str | tuple[str, int] | None = None,
    ) -> None:
        """Start fetching ``request``; its :class:`Result` comes from :meth:`perform`.

        Nothing is sent before the next :meth:`perform` call. The request must not be
        mutated until its result is returned (the driver reads ``meta`` and writes
        ``meta['download_latency']``).

        Methods: ``HEAD`` never waits for a body; ``POST`` always sends a body
        (``Content-Length: 0`` when empty, as Scrapy 1.2 does); any other method
        sends a body only when ``request.body`` is non-empty.

        Other schemes, as Scrapy 1.2's handlers: an ``ftp://`` URL downloads the file
        (``request.meta['ftp_user']`` / ``['ftp_password']`` when present, anonymous
        otherwise) into a status 200 response with headers ``Local Filename`` (empty)
        and ``Size``; a missing remote file gives a status 404 response whose body is
        the error text. A ``file://`` URL reads a local file into a status 200 response
        without headers; an unreadable file is a ``DownloadError`` (curl 37).

        Args:
            request: a :class:`crawlfw.http.Request` (``url`` str, ``method`` str,
                ``headers`` :class:`crawlfw.http.Headers`, ``body`` bytes, ``meta``
                dict).
            timeout_s: seconds the whole transfer (DNS, connect, TLS, response) may
                take (``DOWNLOAD_TIMEOUT``); 0 or ``math.inf`` means no limit. Exceeding it gives a
                :class:`~crawlfw.exceptions.DownloadTimeoutError` result.
            maxsize_bytes: cancel the transfer when the body (announced by
                ``Content-Length`` or received) exceeds this many bytes
                (``DOWNLOAD_MAXSIZE``); 0 means no limit. Gives a
                :class:`~crawlfw.exceptions.DownloadCancelled` result.
            warnsize_bytes: log one warning per transfer when the body exceeds this
                many bytes (``DOWNLOAD_WARNSIZE``); 0 means never.
            proxy: proxy URL (``request.meta['proxy']``), e.g.
                ``"http://user:pass@host:3128"``; a ``Proxy-Authorization`` request
                header is sent to the proxy (on the ``CONNECT`` for https URLs, never to
                the origin). None: connect directly.
            bindaddress: local address to connect from (``request.meta['bindaddress']``):
                a host/IP string, or a ``(host, port)`` tuple (port 0: any).

        Raises:
            UnsupportedURLSchemeError (a NotSupported): the URL scheme is not in :data:`SUPPORTED_SCHEMES`, or was
                left out of ``schemes``.
            ValueError: a negative size or timeout, a header containing CR or LF,
                or a URL curl cannot take (non-ASCII: URLs must already be escaped).
            RuntimeError: the driver is closed.
        """
        if self._closed:
            raise RuntimeError("MultiDriver.add() called after close()")
        url = request.url
        colon = url.find(":")
        scheme = url[:colon].lower() if colon > 0 else ""
        if scheme not in self._schemes:
            if scheme in SUPPORTED_SCHEMES:
                raise UnsupportedURLSchemeError(f"Unsupported URL scheme {scheme!r} (disabled in "
                                                f"DOWNLOAD_HANDLERS): {url}")
            raise UnsupportedURLSchemeError(f"Unsupported URL scheme {scheme!r}: {url}")
        if not timeout_s >= 0:
            raise ValueError(f"timeout_s must be >= 0 seconds, got {timeout_s!r} for {url}")
        if maxsize_bytes < 0 or warnsize_bytes < 0:
            raise ValueError(
                f"maxsize_bytes and warnsize_bytes must be >= 0, got "
                f"{maxsize_bytes!r} and {warnsize_bytes!r} for {url}"
            )
        if self._pool:
            c, needs_reset = self._pool.pop()
            if needs_reset:
                c.reset()
                self._resolve_set.pop(c, None)
                self._set_base_options(c)
        else:
            c = pycurl.Curl()
            self._set_base_options(c)
        xfer = _Transfer(request, url, scheme, maxsize_bytes)
        budget = self._dns_budget
        if budget is not None and budget.bounding:
            c.setopt(pycurl.DNS_CACHE_TIMEOUT, budget.timeout_s)
        try:
            dirty = self._set_request_options(
                c, xfer, timeout_s, maxsize_bytes, warnsize_bytes, proxy, bindaddress
            )
        except BaseException:
            self._pool.append((c, True))
            raise
        xfer.dirty = dirty
        self._transfers[c] = xfer
        if self._resolver is not None and scheme != "file" and not self._addresses_for(
                c, xfer, colon, proxy, timeout_s):
            return  # waiting for a lookup, or failed (its Result is in self._done)
        self._multi.add_handle(c)

    def perform(self, wait_s: float, wake_fd: int | None = None) -> list[Result]:
        """Drive the transfers until some finish, ``wake_fd`` is readable, or time runs out.

        Returns as soon as at least one transfer finished (with everything that
        finished by then), or ``wake_fd`` became readable, or ``wait_s`` seconds
        passed, whichever comes first. While nothing is ready it sleeps in the
        selector for at most ``min(wait_s, curl's next timer)``: no busy polling. With
        no transfers it just waits for ``wake_fd`` (up to ``wait_s``).

        Per-call cost is small (a few ``time.monotonic()`` calls and one selector
        wait): calling it in a loop is the intended use. ``wait_s=0`` polls once
        without sleeping.

        Args:
            wait_s: longest time to block, in seconds (>= 0; ``math.inf`` is allowed
                when a ``wake_fd`` is given).
            wake_fd: a file descriptor owned by the caller (the read end of a pipe or
                socketpair) whose readability ends the wait, so another thread can
                interrupt ``perform``. It is NOT read: the caller drains it. Pass the
                same fd on every call; it stays registered in the selector until a
                call passes a different fd (or None), or :meth:`close`. Don't close it
                while registered.

        Returns:
            The finished transfers' :class:`Result` objects, in completion order
            (possibly empty). Every added transfer is returned exactly once, unless
            removed by :meth:`abort_all`.

        Raises:
            ValueError: ``wait_s`` is negative or NaN.
            RuntimeError: the driver is closed.
        """
        if self._closed:
            raise RuntimeError("MultiDriver.perform() called after close()")
        if not wait_s >= 0:
            raise ValueError(f"wait_s must be >= 0 seconds, got {wait_s!r}")
        if wake_fd != self._wake_fd:
            self._set_wake_fd(wake_fd)
        monotonic = time.monotonic
        select = self._selector.select
        action = self._socket_action
        done = self._done
        deadline = monotonic() + wait_s
        woken = False
        first = True
        resolving = self._resolving
        resolver = self._resolver
        parked = self._parked_deadlines
        dns_due = None
        while True:
            timer = self._timer_deadline
            if timer is not None and monotonic() >= timer:
                self._timer_deadline = None
                action(pycurl.SOCKET_TIMEOUT, 0)
                self._read_info()
            if resolving and resolving[0][0] <= monotonic():
                self._expire_lookups(monotonic())
            if resolver is not None:
                if resolver.busy:
                    now = monotonic()
                    dns_due = resolver.next_deadline_s(now)
                    if dns_due is not None and dns_due <= now:
                        resolver.on_timer(now)
                        dns_due = resolver.next_deadline_s(now) if resolver.busy else None
                else:
                    dns_due = None
                if parked and parked[0][0] <= monotonic():
                    self._expire_parked(monotonic())
            if done or woken:
                break
            now = monotonic()
            timeout = deadline - now
            if timeout <= 0:
                if not first:
                    break
                timeout = 0.0
            first = False
            timer = self._timer_deadline
            if timer is not None and timer - now < timeout:
                timeout = max(timer - now, 0.0)
            if resolving and resolving[0][0] - now < timeout:
                timeout = max(resolving[0][0] - now, 0.0)
            if dns_due is not None and dns_due - now < timeout:
                timeout = max(dns_due - now, 0.0)
            if parked and parked[0][0] - now < timeout:
                timeout = max(parked[0][0] - now, 0.0)
            if timeout > _MAX_SELECT_S:
                timeout = _MAX_SELECT_S
            events = select(timeout)
            if events:
                for key, mask in events:
                    data = key.data
                    if data is None:
                        action(key.fd, mask & _RW)
                    elif data is _WAKE:
                        woken = True
                    else:  # the resolver's
                        data.process(key.fd, mask)
                self._read_info()
        self._done = []
        return done

    def abort_all(self) -> list[Request]:
        """Remove every transfer in flight, without results.

        Returns:
            The removed transfers' requests, in the order they were added, so the
            caller can re-queue them. They will not appear in :meth:`perform` results.
        """
        requests = []
        for c, xfer in list(self._transfers.items()):
            requests.append(xfer.request)
            self._remove(c)
        self._parked_deadlines.clear()
        return requests

    def close(self) -> None:
        """Abort every transfer (see :meth:`abort_all`), free curl handles and the selector.

        Idempotent. Other methods raise ``RuntimeError`` afterwards.
        """
        if self._closed:
            return
        self.abort_all()
        self._closed = True
        for c, _ in self._pool:
            c.close()
        self._pool.clear()
        self._resolve_set.clear()
        self._multi.close()
        if self._resolver is not None:
            self._resolver.close()
        self._selector.close()
        self._watched.clear()
        self._wake_fd = None

    def __enter__(self) -> MultiDriver:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"active={len(self._transfers)}"
        return f"<MultiDriver {state} pooled_handles={len(self._pool)}>"

    # -- easy handle configuration --------------------------------------------------

    def _set_base_options(self, c: pycurl.Curl) -> None:
        """Options shared by every transfer (set on a new or reset handle)."""
        setopt = c.setopt
        setopt(pycurl.NOSIGNAL, 1)
        setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_1_1)
        setopt(pycurl.PATH_AS_IS, 1)  # send the path as given: no dot-segment squashing
        setopt(pycurl.PROXY, "")  # no proxy, and ignore http_proxy & co.
        setopt(pycurl.PROTOCOLS, pycurl.PROTO_HTTP)  # set per transfer to its scheme
        setopt(pycurl.REDIR_PROTOCOLS, _REDIR_PROTOCOLS)
        setopt(pycurl.FOLLOWLOCATION, 0)
        setopt(pycurl.SSL_VERIFYPEER, self._verify)
        setopt(pycurl.SSL_VERIFYHOST, self._verify_host)
        setopt(pycurl.OPT_CERTINFO, 1)  # the chain, once per TLS connection: see curl_peer
        setopt(pycurl.PROXY_SSL_VERIFYPEER, self._verify)
        setopt(pycurl.PROXY_SSL_VERIFYHOST, self._verify_host)
        setopt(pycurl.DNS_CACHE_TIMEOUT, self._dns_cache_timeout_s)
        setopt(pycurl.SSLVERSION, self._ssl_version)
        setopt(pycurl.BUFFERSIZE, self._buffer_size)
        if self._share is not None:
            setopt(pycurl.SHARE, self._share)
        if self._watch_lookups:
            setopt(pycurl.RESOLVER_START_FUNCTION, functools.partial(self._on_resolver_start, c))
        elif self._resolver is not None:
            setopt(pycurl.RESOLVER_START_FUNCTION, functools.partial(self._count_curl_lookup, c))
        if self._user_agent:
            setopt(pycurl.USERAGENT, self._user_agent)
        else:
            # pycurl sets "PycURL/x libcurl/y" by default; curl sends no header for ""
            setopt(pycurl.USERAGENT, "")

    def _set_request_options(
        self, c: pycurl.Curl, xfer: _Transfer, timeout_s: float, maxsize: int, warnsize: int,
        proxy: str | None, bindaddress: str | tuple[str, int] | None,
    ) -> bool:
        """Per-transfer options. Returns True when the handle needs a reset before reuse."""
        request = xfer.request
        setopt = c.setopt
        setopt(pycurl.PROTOCOLS, _SCHEME_PROTOCOLS[xfer.scheme])
        try:
            setopt(pycurl.URL, xfer.url)
        except UnicodeEncodeError:
            raise ValueError(
                f"URL must be ASCII (percent-escaped) to be fetched: {xfer.url!r}"
            ) from None
        # 0 means no limit to curl: only for timeout_s == 0 or inf, never by rounding
        timeout_ms = math.ceil(timeout_s * 1000) if timeout_s != math.inf else 0
        setopt(pycurl.TIMEOUT_MS, timeout_ms)
        setopt(pycurl.CONNECTTIMEOUT_MS, timeout_ms)
        setopt(pycurl.MAXFILESIZE_LARGE, maxsize)
        setopt(pycurl.HEADERFUNCTION, xfer.header_lines.append)
        if maxsize or warnsize:
            setopt(pycurl.WRITEFUNCTION, _make_writer(xfer, maxsize, warnsize))
        else:
            setopt(pycurl.WRITEFUNCTION, xfer.chunks.append)
        stream = self.stream_signals
        if stream is not None and stream.wanted():
            _stream_signals(setopt, xfer, stream, maxsize, warnsize)

        lines, proxy_auth = _header_lines(request.headers, bool(proxy) and xfer.scheme == "https")
        setopt(pycurl.HTTPHEADER, lines)

        dirty = False
        method = request.method
        body = request.body
        if method == "GET" and not body:
            pass  # the default (and reset) state
        elif method == "HEAD":
            setopt(pycurl.NOBODY, 1)
            dirty = True
        else:
            if method != "POST":
                setopt(pycurl.CUSTOMREQUEST, method)
            if body or method == "POST":
                setopt(pycurl.POSTFIELDS, body)
            dirty = True

        if proxy:
            if proxy.endswith("?noconnect"):  # Scrapy 1.2 flag; curl always tunnels https
                proxy = proxy[: -len("?noconnect")]
            setopt(pycurl.PROXY, proxy)
            if proxy_auth:
                setopt(pycurl.HEADEROPT, pycurl.HEADER_SEPARATE)
                setopt(pycurl.PROXYHEADER, proxy_auth)
            dirty = True
        if bindaddress:
            if isinstance(bindaddress, (tuple, list)):
                host, port = bindaddress
            else:
                host, port = bindaddress, 0
            if host:
                setopt(pycurl.INTERFACE, host)
            if port:
                setopt(pycurl.LOCALPORT, int(port))
            dirty = True
        if xfer.scheme == "ftp":
            meta = request.meta
            if "ftp_user" in meta:
                setopt(pycurl.USERNAME, meta["ftp_user"])
                setopt(pycurl.PASSWORD, meta.get("ftp_password", ""))
                dirty = True
        return dirty

    # -- libcurl callbacks (must never raise) -------------------------------------------

    def _on_socket(self, what: int, fd: int, multi: pycurl.CurlMulti, socketp: object) -> None:
        """CURLMOPT_SOCKETFUNCTION: keep the selector's set of curl sockets in sync."""
        try:
            watched = self._watched
            sel = self._selector
            if what == pycurl.POLL_REMOVE or not what & _RW:
                if watched.pop(fd, None) is not None:
                    try:
                        sel.unregister(fd)
                    except (KeyError, ValueError, OSError):
                        pass
                return
            events = what & _RW
            old = watched.get(fd)
            if old == events:
                return
            try:
                if old is None:
                    sel.register(fd, events)
                else:
                    sel.modify(fd, events)
            except (KeyError, ValueError, OSError):
                # A stale registration (fd number reused): start over.
                try:
                    sel.unregister(fd)
                except (KeyError, ValueError, OSError):
                    pass
                sel.register(fd, events)
            watched[fd] = events
        except Exception:
            self._watched.pop(fd, None)
            logger.exception("curl socket callback failed for fd %d (what=%d)", fd, what)

    def _on_timer(self, timeout_ms: int) -> None:
        """CURLMOPT_TIMERFUNCTION: remember when curl wants ``socket_action(TIMEOUT)``."""
        try:
            if timeout_ms < 0:
                self._timer_deadline = None
            else:
                self._timer_deadline = time.monotonic() + timeout_ms / 1000.0
        except Exception:
            logger.exception("curl timer callback failed (timeout_ms=%r)", timeout_ms)

    # -- driving ------------------------------------------------------------------------

    def _socket_action(self, fd: int, ev_bitmask: int) -> None:
        try:
            self._multi.socket_action(fd, ev_bitmask)
        except pycurl.error:
            logger.exception("curl_multi_socket_action(%d, %d) failed", fd, ev_bitmask)

    def _set_wake_fd(self, wake_fd: int | None) -> None:
        if self._wake_fd is not None:
            try:
                self._selector.unregister(self._wake_fd)
            except (KeyError, ValueError, OSError):
                pass
            self._wake_fd = None
        if wake_fd is not None:
            if wake_fd in self._watched:
                raise ValueError(f"wake_fd {wake_fd} is a socket curl is using")
            self._selector.register(wake_fd, selectors.EVENT_READ, _WAKE)
            self._wake_fd = wake_fd

    def _read_info(self) -> None:
        """Move every transfer curl reports finished into ``self._done``."""
        info_read = self._multi.info_read
        done = self._done
        while True:
            queued, ok_list, err_list = info_read()
            for c in ok_list:
                done.append(self._finish(c, 0, ""))
            for c, code, message in err_list:
                done.append(self._finish(c, code, message))
            if not queued:
                return

    def _remove(self, c: pycurl.Curl) -> _Transfer:
        xfer = self._transfers.pop(c)
        if xfer.parked:  # never added to the multi
            xfer.parked = False
        else:
            self._multi.remove_handle(c)
        xfer.chunks.clear()
        xfer.header_lines.clear()
        self._pool.append((c, xfer.dirty))
        return xfer

    def _finish(self, c: pycurl.Curl, code: int, message: str) -> Result:
        xfer = self._transfers[c]
        request = xfer.request
        getinfo = c.getinfo
        total = getinfo(pycurl.TOTAL_TIME)
        latency = getinfo(pycurl.STARTTRANSFER_TIME) or total
        ip = getinfo(pycurl.PRIMARY_IP) or None
        response: Response | None = None
        error: DownloadError | StopDownload | None = xfer.error
        stopped = xfer.stopped
        if stopped is not None:  # a signal handler raised StopDownload: code 23, no error
            code, message, error = 0, "", None
        try:
            if error is None and code:
                error = self._error_for(c, xfer, code, message)
            if error is None or (code == 78 and xfer.scheme == "ftp"):
                response = self._build_response(c, xfer, code, message)
                if ip is not None:
                    response._ip_address = ip  # a str: Response.ip_address converts it
                if xfer.scheme == "https":
                    cert = self._certificates.for_transfer(c)
                    if cert is not None:
                        response.certificate = cert
                error = None
                body_len = len(response.body)
            else:
                body_len = sum(map(len, xfer.chunks))
        except Exception as exc:
            logger.exception("Could not build the response for %s", xfer.url)
            error = ResponseFailed(
                f"Response failed: {xfer.url} (could not build the response: {exc!r})",
                xfer.url,
            )
            error.__cause__ = exc
            response = None
            body_len = sum(map(len, xfer.chunks))
        if response is not None:
            request.meta["download_latency"] = latency
            if stopped is not None:
                response.flags.append("download_stopped")
                if stopped.fail:
                    stopped.response = response
                    response, error = None, stopped
        self._remove(c)
        return Result(request, response, error, latency, total, body_len, ip, xfer.ip)

    def _error_for(self, c: pycurl.Curl, xfer: _Transfer, code: int,
                   message: str) -> DownloadError:
        if code == 63 and xfer.maxsize:  # CURLE_FILESIZE_EXCEEDED
            # curl fails on the Content-Length header before recording it in getinfo
            expected = _content_length(xfer.header_lines)
            if expected > xfer.maxsize:
                return _maxsize_error(xfer, expected, expected=True)
            return _maxsize_error(xfer, None, expected=False)
        os_errno = c.getinfo(pycurl.OS_ERRNO) if code == 7 else 0
        return exception_for(code, message, xfer.url, os_errno)

    def _build_response(self, c: pycurl.Curl, xfer: _Transfer, code: int,
                        message: str) -> Response:
        chunks = xfer.chunks
        body = b"".join(chunks)
        url = xfer.url
        scheme = xfer.scheme
        protocol = None  # Scrapy's ftp:, file: and data: handlers give none
        if scheme == "http" or scheme == "https":
            status = c.getinfo(pycurl.RESPONSE_CODE)
            protocol = PROTOCOLS.get(c.getinfo(pycurl.INFO_HTTP_VERSION))
            headers = _headers_from_lines(xfer.header_lines)
        elif scheme == "ftp":
            if code == 78:  # CURLE_REMOTE_FILE_NOT_FOUND: Scrapy's FTP handler answers 404
                status, body = 404, message.encode("utf-8", "replace")
            else:
                status = 200
            headers = Headers.from_raw_pairs(
                [(b"Local Filename", b""), (b"Size", str(len(body)).encode("ascii"))]
            )
        else:  # file: Scrapy's file handler gives status 200 and no headers
            status = 200
            headers = Headers.from_raw_pairs([])
        respcls = responsetypes.from_args(headers=headers, url=url, body=body)
        # the headers were just built for this response: given to it, not copied (a
        # Response copies a Headers passed to its constructor)
        response = respcls(url=url, status=status, body=body, request=xfer.request)
        response.headers = headers
        if protocol is not None:
            response.protocol = protocol
        return response
