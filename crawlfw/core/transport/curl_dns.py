"""Name resolution on :class:`~crawlfw.core.transport.curl.MultiDriver`'s side
(:class:`PinnedResolution`, a mixin of the driver): each transfer's host addresses as
``CURLOPT_RESOLVE`` entries, pinned per ``scheme://authority`` for their TTL (one dict hit
per transfer), transfers parked while their lookups run, lookup failures as
``DNSLookupError``; split from :mod:`crawlfw.core.transport.curl` (issue 31). Runs on the
driver's thread, like the driver. Also the watch of libcurl's own lookups when it resolves
(``DNS_TIMEOUT`` and the ``DNSCACHE_SIZE`` budget, ``LibcurlResolver``). The design:
ARCHITECTURE.md, "Name resolution"."""

from __future__ import annotations

import functools
import heapq
import logging
import math
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pycurl

from crawlfw.core.transport.curl_transfer import Result, _host_of, _Transfer
from crawlfw.core.transport.dns import Answer, LookupFailed, no_lookup_needed
from crawlfw.exceptions import DNSLookupError, DownloadError, DownloadTimeoutError

if TYPE_CHECKING:
    from crawlfw.core.transport.resolver import Resolver

__all__ = ["PinnedResolution"]

logger = logging.getLogger(__name__)

#: The port of a URL without one, per scheme (a CURLOPT_RESOLVE entry names the port).
_DEFAULT_PORTS = {"http": 80, "https": 443, "ftp": 21}
#: The port of a proxy URL without one, per proxy scheme (libcurl's defaults).
_PROXY_PORTS = {"http": 1080, "https": 443, "socks4": 1080, "socks4a": 1080,
                "socks5": 1080, "socks5h": 1080}
#: Proxy schemes through which libcurl resolves the target's name itself (the others
#: hand the name to the proxy).
_LOCAL_RESOLVING_PROXIES = frozenset({"socks4", "socks5"})
#: Seconds libcurl keeps a CURLOPT_RESOLVE entry given with crawlfw's resolver (each
#: transfer gives its own again; 0 would make libcurl resolve by itself).
_PINNED_DNS_CACHE_S = 60
#: The most pinned addresses kept without a DNS cache (IP literals and localhost).
_LITERAL_PINS = 10000


class PinnedResolution:
    """The resolver's methods of :class:`~crawlfw.core.transport.curl.MultiDriver`
    (its state is made in the driver's ``__init__``)."""

    _resolver: Resolver | None
    _pins: dict[str, tuple[float, list[str] | None, str | None]]
    _pins_max: int
    _host_pins: dict[str, list[str]]
    _resolve_set: dict[pycurl.Curl, list[str]]
    _parked_deadlines: list[tuple[float, int, pycurl.Curl, _Transfer]]
    _parked_no: int
    _transfers: dict[pycurl.Curl, _Transfer]
    _done: list[Any]
    _multi: pycurl.CurlMulti
    curl_lookups: int

    _dns_timeout_s: float
    _dns_budget: Any
    _resolving: Any
    _lookups: int

    def _remove(self, c: pycurl.Curl) -> _Transfer:
        raise NotImplementedError

    def _finish(self, c: pycurl.Curl, code: int, message: str) -> Any:
        raise NotImplementedError

    # -- libcurl's resolver (DNS_RESOLVER = 'crawlfw.resolver.LibcurlResolver') --------

    def _on_resolver_start(self, c: pycurl.Curl) -> int:
        """CURLOPT_RESOLVER_START_FUNCTION: a real lookup (no cached answer) starts for
        ``c``'s transfer: note its ``DNS_TIMEOUT`` deadline and tell the cache budget."""
        try:
            now = time.monotonic()
            if self._dns_timeout_s:
                xfer = self._transfers.get(c)
                if xfer is not None:
                    self._lookups += 1
                    xfer.resolve_no = self._lookups
                    self._resolving.append((now + self._dns_timeout_s, c, self._lookups))
            if self._dns_budget is not None:
                self._dns_budget.started(now)
        except Exception:
            logger.exception("curl resolver start callback failed")
        return 0

    def _expire_lookups(self, now: float) -> None:
        """End, with a ``DNSLookupError``, each transfer whose lookup is past its
        ``DNS_TIMEOUT`` deadline and still unanswered (its ``NAMELOOKUP_TIME`` 0)."""
        resolving = self._resolving
        transfers = self._transfers
        while resolving and resolving[0][0] <= now:
            _, c, number = resolving.popleft()
            xfer = transfers.get(c)
            if xfer is None or xfer.resolve_no != number:
                continue  # finished, or the handle serves a later transfer now
            if c.getinfo(pycurl.NAMELOOKUP_TIME) > 0:
                continue  # answered in time
            host = _host_of(xfer.url)
            xfer.error = DNSLookupError(
                f"DNS lookup failed: {xfer.url} (no answer for {host!r} within "
                f"DNS_TIMEOUT, {self._dns_timeout_s:g} s)", xfer.url, pycurl.E_OPERATION_TIMEDOUT)
            self._done.append(self._finish(c, pycurl.E_OPERATION_TIMEDOUT, ""))

    # -- crawlfw's resolver ---------------------------------------------------------------

    def _addresses_for(self, c: pycurl.Curl, xfer: _Transfer, colon: int, proxy: str | None,
                       timeout_s: float) -> bool:
        """Give ``c`` the addresses its transfer connects to (``CURLOPT_RESOLVE``).
        Returns True when it may start now; False when it waits for a lookup (parked)
        or failed (its :class:`Result` queued)."""
        url = xfer.url
        now = time.monotonic()
        key = ""
        if not proxy:
            key = _authority_key(url, colon)
            pin = self._pins.get(key)
            if pin is not None and pin[0] > now:  # the hot path: one dict hit
                lines = pin[1]
                if lines is not None:
                    if pin[0] != math.inf:  # an answer, not a localhost name
                        self._resolver.cache_hits += 1  # type: ignore[union-attr]
                    if self._resolve_set.get(c) is not lines:
                        c.setopt(pycurl.RESOLVE, lines)
                        self._resolve_set[c] = lines
                xfer.ip = pin[2]
                return True
        return self._resolve(c, xfer, colon, key, proxy, timeout_s, now)

    def _resolve(self, c: pycurl.Curl, xfer: _Transfer, colon: int, key: str,
                 proxy: str | None, timeout_s: float, now: float) -> bool:
        """:meth:`_addresses_for` past the pins: each name to resolve (the host, or the
        proxy's, or both through a SOCKS proxy resolving locally) is pinned, looked up,
        or waited for."""
        url = xfer.url
        needs: list[tuple[str, str, int, bool]] = []  # (pin key, host, port, is the proxy)
        if proxy:
            purl = proxy if "://" in proxy else "http://" + proxy
            pscheme = purl.split("://", 1)[0].lower()
            phost, pport = _host_port(purl, _PROXY_PORTS.get(pscheme, 1080))
            if phost:
                needs.append((f"{pscheme}://{phost}:{pport}", phost, pport, True))
        if not proxy or pscheme in _LOCAL_RESOLVING_PROXIES:
            host, port = _host_port(url, _DEFAULT_PORTS.get(xfer.scheme, 0))
            if host:
                needs.append((key or _authority_key(url, colon), host, port, False))
        xfer.parked = True  # not in the multi (until _unpark)
        lines_all: list[str] = []
        resolver = self._resolver
        assert resolver is not None
        waiting = 0
        for pkey, host, port, is_proxy in needs:
            pin = self._pins.get(pkey)
            if pin is None or pin[0] <= now:
                if no_lookup_needed(host):
                    if host == "localhost" or host.endswith(".localhost"):
                        # RFC 6761: loopback, given as libcurl itself would (IPv6 first)
                        loopback = "[::1],127.0.0.1" if resolver_ipv6(resolver) \
                            else "127.0.0.1"
                        pin = self._pin(pkey, math.inf, [f"+{host}:{port}:{loopback}"],
                                        "127.0.0.1")
                    else:  # an IP literal: nothing to resolve
                        pin = self._pin(pkey, math.inf, None, host or None)
                else:
                    result = resolver.resolve(host, functools.partial(
                        self._answered, c, xfer, pkey, host, port, is_proxy), now)
                    if result is None:
                        waiting += 1
                        continue
                    if isinstance(result, LookupFailed):
                        self._fail_parked(c, xfer, _dns_error(xfer.url, result, is_proxy))
                        return False
                    pin = self._pin_answer(pkey, host, port, result)
            elif pin[1] is not None and pin[0] != math.inf:
                resolver.cache_hits += 1
            if pin[1]:
                lines_all.extend(pin[1])
            if not is_proxy:
                xfer.ip = pin[2]
        xfer.resolve_lines = lines_all
        if not waiting:
            xfer.parked = False
            if lines_all and self._resolve_set.get(c) != lines_all:
                c.setopt(pycurl.RESOLVE, lines_all)
                self._resolve_set[c] = lines_all
            return True
        xfer.waiting = waiting
        xfer.parked_s = now
        xfer.timeout_s = timeout_s if timeout_s != math.inf else 0.0
        if xfer.timeout_s:
            self._parked_no += 1
            heapq.heappush(self._parked_deadlines,
                           (now + xfer.timeout_s, self._parked_no, c, xfer))
        return False

    def _pin(self, key: str, expires_s: float, lines: list[str] | None,
             ip: str | None) -> tuple[float, list[str] | None, str | None]:
        pins = self._pins
        if key not in pins and len(pins) >= self._pins_max:
            del pins[next(iter(pins))]  # the oldest pinned
        pin = pins[key] = (expires_s, lines, ip)
        return pin

    def _pin_answer(self, key: str, host: str, port: int,
                    answer: Answer) -> tuple[float, list[str] | None, str | None]:
        """The pin of ``answer`` for ``key`` (kept only with a DNS cache)."""
        addresses = ",".join(f"[{a}]" if ":" in a else a for a in answer.addresses)
        lines = [f"+{host}:{port}:{addresses}"]
        if self._resolver is not None and self._resolver.cache is not None:
            keys = self._host_pins.get(host)
            if keys is None:
                host_pins = self._host_pins
                if len(host_pins) >= self._pins_max:
                    del host_pins[next(iter(host_pins))]  # the oldest
                keys = host_pins[host] = []
            if key not in keys:
                keys.append(key)
            return self._pin(key, answer.expires_s, lines, answer.ip)
        return (answer.expires_s, lines, answer.ip)

    def _merged(self, answer: Answer) -> None:
        """The resolver's ``on_merged``: the other address family of ``answer.host``
        came after its lookup was answered (RFC 8305's Resolution Delay): the host's
        pinned addresses become the merged answer's, so its next transfers give libcurl
        both families to race."""
        host = answer.host
        keys = self._host_pins.get(host)
        if not keys:
            return
        addresses = ",".join(f"[{a}]" if ":" in a else a for a in answer.addresses)
        pins = self._pins
        for key in keys:
            pin = pins.get(key)
            if pin is None or not pin[1]:
                continue
            lines = []
            for line in pin[1]:
                name, port, _ = line[1:].split(":", 2)
                lines.append(f"+{name}:{port}:{addresses}" if name == host else line)
            pins[key] = (min(pin[0], answer.expires_s), lines, answer.ip)

    def _answered(self, c: pycurl.Curl, xfer: _Transfer, key: str, host: str, port: int,
                  is_proxy: bool, result: Answer | LookupFailed) -> None:
        """A lookup a parked transfer waits for is answered (from the resolver, during
        :meth:`perform`)."""
        if self._transfers.get(c) is not xfer or not xfer.parked:
            return  # ended meanwhile (timed out, failed, aborted)
        if isinstance(result, LookupFailed):
            self._fail_parked(c, xfer, _dns_error(xfer.url, result, is_proxy))
            return
        pin = self._pin_answer(key, host, port, result)
        if pin[1]:
            xfer.resolve_lines = [*(xfer.resolve_lines or ()), *pin[1]]
        if not is_proxy:
            xfer.ip = pin[2]
        xfer.waiting -= 1
        if xfer.waiting <= 0:
            self._unpark(c, xfer)

    def _unpark(self, c: pycurl.Curl, xfer: _Transfer) -> None:
        """Start a parked transfer whose addresses are all known, with what is left of
        its timeout."""
        xfer.parked = False
        lines = xfer.resolve_lines
        if lines:
            c.setopt(pycurl.RESOLVE, lines)
            self._resolve_set[c] = lines
        if xfer.timeout_s:
            left_ms = math.ceil((xfer.timeout_s - (time.monotonic() - xfer.parked_s)) * 1000)
            c.setopt(pycurl.TIMEOUT_MS, max(1, left_ms))
            c.setopt(pycurl.CONNECTTIMEOUT_MS, max(1, left_ms))
        self._multi.add_handle(c)

    def _fail_parked(self, c: pycurl.Curl, xfer: _Transfer, error: DownloadError) -> None:
        """End a transfer that never reached the multi with ``error``."""
        took = time.monotonic() - xfer.parked_s if xfer.parked_s else 0.0
        self._remove(c)
        self._done.append(Result(xfer.request, None, error, took, took, 0, None, xfer.ip))

    def _expire_parked(self, now: float) -> None:
        """End, with a ``DownloadTimeoutError``, each transfer still waiting for a lookup
        at the end of its timeout (``DOWNLOAD_TIMEOUT`` covers the lookup, as in
        Scrapy)."""
        parked = self._parked_deadlines
        transfers = self._transfers
        while parked and parked[0][0] <= now:
            _, _, c, xfer = heapq.heappop(parked)
            if transfers.get(c) is not xfer or not xfer.parked:
                continue
            self._fail_parked(c, xfer, DownloadTimeoutError(
                f"Download timed out: {xfer.url} (its host name was not resolved within the "
                f"download timeout, {xfer.timeout_s:g} s)", xfer.url, pycurl.E_OPERATION_TIMEDOUT))

    def _count_curl_lookup(self, c: pycurl.Curl) -> int:
        """CURLOPT_RESOLVER_START_FUNCTION with a resolver: libcurl starts a lookup of
        its own, never expected but for IP literals (which libcurl reads without
        asking anyone); counted in ``dns/curl_lookups``."""
        try:
            xfer = self._transfers.get(c)
            if xfer is None or not no_lookup_needed(_host_of(xfer.url)) or xfer.request.meta.get(
                    "proxy"):
                self.curl_lookups += 1
        except Exception:
            logger.exception("curl resolver start callback failed")
        return 0


def resolver_ipv6(resolver: Resolver) -> bool:
    """Whether ``resolver`` gives IPv6 addresses (the c-ares one asks ``AAAA`` only when
    IPv6 sockets can be made)."""
    return bool(getattr(resolver, "ipv6", True))


def _authority_key(url: str, colon: int) -> str:
    """``scheme://authority`` of ``url`` (its scheme ending at ``colon``): the key of
    the addresses pinned for it."""
    start = colon + 3
    end = len(url)
    for sep in "/?#":
        j = url.find(sep, start, end)
        if j != -1:
            end = j
    return url[:end]


def _host_port(url: str, default_port: int) -> tuple[str, int]:
    """The host name (lower case, no brackets) and port of ``url``; ``('', 0)`` when it
    has no valid one (libcurl then reports the URL's fault)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        return host, parts.port or default_port
    except ValueError:
        return "", 0


def _dns_error(url: str, failed: LookupFailed, is_proxy: bool) -> DNSLookupError:
    """The ``DNSLookupError`` of a failed lookup (curl's codes: 5 for a proxy's name, 6
    for a host's, 28 for ``DNS_TIMEOUT``)."""
    label = "Proxy DNS lookup failed" if is_proxy else "DNS lookup failed"
    code = 5 if is_proxy else 6
    if failed.kind == "timeout" and "DNS_TIMEOUT" in failed.reason:
        code = pycurl.E_OPERATION_TIMEDOUT
    return DNSLookupError(f"{label}: {url} ({failed.reason})", url, code)
