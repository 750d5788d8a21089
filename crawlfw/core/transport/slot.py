"""Download slots: per-domain request queueing, concurrency and delay.

A download slot is Scrapy 1.2's ``scrapy.core.downloader.Slot``: every request goes
to the slot named by :func:`slot_key` (normally the URL's host name), and each slot
lets at most ``concurrency`` transfers run at once and, when ``delay_s`` is set,
starts at most one request per ``delay_s`` seconds (``DOWNLOAD_DELAY``), randomized
to 0.5x-1.5x when ``randomize_delay`` (``RANDOMIZE_DOWNLOAD_DELAY``).

Unlike Scrapy's slot, :class:`DownloadSlot` never reads a clock: every decision takes
the current time as an argument (``now_s``, a ``time.monotonic()`` value), so it is
plain logic testable without sleeping. A downloader actor keeps the slots it serves in a
:class:`crawlfw.core.transport.slots.SlotTable`.

Request meta keys read here:

``download_slot``
    Put the request in the slot with this key instead of its host's; requests that
    share it share the concurrency and delay limits (Scrapy 1.2's ``download_slot``).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from crawlfw.core.transport.hostpolicy import politeness_settings

if TYPE_CHECKING:
    from crawlfw.http import Request
    from crawlfw.settings import BaseSettings
    from crawlfw.spiders import Spider

__all__ = ["DownloadSlot", "IpCache", "slot_key", "url_host", "DOWNLOAD_SLOT"]

#: The request meta key that overrides the slot key (Scrapy's ``Downloader.DOWNLOAD_SLOT``).
DOWNLOAD_SLOT = "download_slot"


def slot_key(request: Request, ip_cache: Mapping[str, str] | None = None) -> str:
    """The key of the download slot ``request`` belongs to (Scrapy 1.2's ``_get_slot_key``).

    Args:
        request: a :class:`crawlfw.http.Request`.
        ip_cache: only when ``CONCURRENT_REQUESTS_PER_IP`` is non-zero: a mapping of
            host name -> IP address already resolved (the engine's :class:`IpCache`,
            filled from :attr:`crawlfw.core.transport.curl.Result.remote_ip`). A host found there
            is keyed by its IP, so host names sharing an IP share a slot; a host not yet
            resolved keeps its name, as with Scrapy's ``dnscache``.

    Returns:
        ``request.meta['download_slot']`` when set, else the URL's host name in
        lower case (``''`` for URLs without a host, e.g. ``file:///x``), or its IP
        per ``ip_cache``.
    """
    meta = request._meta
    if meta and DOWNLOAD_SLOT in meta:
        slot: str = meta[DOWNLOAD_SLOT]
        return slot
    key = url_host(request.url)
    if ip_cache is not None:
        key = ip_cache.get(key, key)
    return key


def url_host(url: str) -> str:
    """The host of ``url`` in lower case, as ``urllib.parse.urlsplit(url).hostname or ''``
    says it, in a third of the time (it runs twice per request: the frontier's host key
    and the download slot's).

    The authority of ``scheme://authority/...`` (RFC 3986 section 3.2: it ends at the
    first ``/``, ``?`` or ``#``) without its ``userinfo@`` and ``:port``; an IPv6 literal
    without its brackets. A URL without ``//`` after its scheme (``data:``, ``mailto:``)
    goes through ``urlsplit``.

    Args:
        url: a request's URL (a str).

    Returns:
        str: the host name, or ``''`` when the URL has none (``file:///x``).
    """
    i = url.find(":")
    if i <= 0 or not url.startswith("//", i + 1):
        return urlsplit(url).hostname or ""
    start = i + 3
    end = len(url)
    for sep in "/?#":
        j = url.find(sep, start, end)
        if j != -1:
            end = j
    at = url.rfind("@", start, end)
    if at != -1:
        start = at + 1
    if url.startswith("[", start):
        close = url.find("]", start, end)
        host = url[start + 1:close if close != -1 else end]
    else:
        colon = url.find(":", start, end)
        host = url[start:colon if colon != -1 else end]
    return host.lower()


class IpCache(dict[str, str]):
    """Host name -> the IP address its responses came from, for ``slot_key`` under
    ``CONCURRENT_REQUESTS_PER_IP`` (Scrapy's ``dnscache`` plays this part): host names
    on one address then share one slot. At most ``size`` names; the oldest learned goes
    first.

    Args:
        size: the most names kept (>= 1).
    """

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = max(1, int(size))

    def learn(self, request: Request, ip: str | None) -> None:
        """Remember that ``request``'s host answered from ``ip`` (the address curl
        connected to). Nothing is learned through a proxy (``meta['proxy']``: the
        address is the proxy's) or without an address."""
        if not ip or request.meta.get("proxy"):
            return
        host = urlsplit(request.url).hostname
        if not host:
            return
        if host not in self:
            if len(self) >= self.size:
                del self[next(iter(self))]
            self[host] = ip
        elif self[host] != ip:
            self[host] = ip


class DownloadSlot:
    """FIFO queue of requests for one slot, with a concurrency limit and a start delay.

    Args:
        concurrency: most transfers in flight at once (>= 1;
            ``CONCURRENT_REQUESTS_PER_DOMAIN`` or ``CONCURRENT_REQUESTS_PER_IP``).
        delay_s: seconds between two request starts (>= 0; ``DOWNLOAD_DELAY``). When
            non-zero at most ONE request starts per delay, whatever ``concurrency``
            allows (Scrapy 1.2 "prevents bursts" the same way).
        randomize_delay: draw each gap uniformly from ``0.5 * delay_s`` to
            ``1.5 * delay_s`` (``RANDOMIZE_DOWNLOAD_DELAY``).
        rng: the random generator for the gaps (tests pass a seeded one).

    Attributes:
        concurrency: as above; may be changed at any time.
        delay_s: as above; may be changed at any time (AutoThrottle does), the
            next start is then ``delay_s * factor`` after the last one.
        randomize_delay: as above.
        queue: the waiting requests (a ``deque``, oldest first).
        inprogress: the requests in flight, in start order (a dict used as an
            ordered set: ``request in slot.inprogress``, ``list(slot.inprogress)``), so
            a restarted downloader can re-queue them (Scrapy's slot keeps
            ``transferring`` for the same reason).

    Raises:
        ValueError: ``concurrency`` < 1 or ``delay_s`` < 0.
    """

    def __init__(
        self,
        concurrency: int,
        delay_s: float,
        randomize_delay: bool,
        *,
        rng: random.Random | None = None,
    ) -> None:
        if not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"DownloadSlot concurrency must be an int >= 1, got {concurrency!r}")
        if not delay_s >= 0:
            raise ValueError(f"DownloadSlot delay_s must be >= 0 seconds, got {delay_s!r}")
        self.concurrency = concurrency
        self.delay_s = float(delay_s)
        self.randomize_delay = bool(randomize_delay)
        self.queue: deque[Request] = deque()
        self.inprogress: dict[Request, None] = {}
        self._rng = rng or random
        self._last_start_s = float("-inf")  # when the latest request started
        self._gap_factor = 1.0  # multiplies delay_s for the gap after that start

    @classmethod
    def from_settings(cls, settings: BaseSettings, spider: Spider | None = None,
                      **kw: Any) -> DownloadSlot:
        """A slot configured like Scrapy 1.2's ``Downloader._get_slot``.

        The rule is :func:`crawlfw.core.transport.hostpolicy.politeness_settings`, the one the
        frontier's per-host queues use too: concurrency is ``CONCURRENT_REQUESTS_PER_IP``
        when non-zero, else ``CONCURRENT_REQUESTS_PER_DOMAIN``, overridden by
        ``spider.max_concurrent_requests``; the delay is ``DOWNLOAD_DELAY`` overridden by
        ``spider.download_delay`` (or the deprecated ``spider.DOWNLOAD_DELAY``, with a
        warning); randomization is ``RANDOMIZE_DOWNLOAD_DELAY``.

        Args:
            settings: a :class:`crawlfw.settings.Settings`.
            spider: the running spider, or None.
            **kw: passed to the constructor (``rng``).

        Returns:
            A new :class:`DownloadSlot`.
        """
        concurrency, delay, randomize = politeness_settings(settings, spider)
        return cls(concurrency, delay, randomize, **kw)

    # -- counts -------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """Number of requests started and not yet :meth:`transfer_done`."""
        return len(self.inprogress)

    @property
    def queued(self) -> int:
        """Number of requests waiting to start."""
        return len(self.queue)

    def free_transfer_slots(self) -> int:
        """``concurrency`` minus the transfers in flight (negative if concurrency shrank)."""
        return self.concurrency - len(self.inprogress)

    def is_idle(self) -> bool:
        """True when nothing is queued and nothing is in flight."""
        return not self.queue and not self.inprogress

    def free_at_s(self) -> float:
        """The earliest time (``time.monotonic()`` seconds) the delay lets the next
        request start: ``-inf`` without a delay or before any start. A slot idle past
        this time holds nothing politeness needs, so a new slot may replace it."""
        if not self.delay_s:
            return float("-inf")
        return self._last_start_s + self.delay_s * self._gap_factor

    # -- flow ---------------------------------------------------------------------

    def enqueue(self, request: Request) -> None:
        """Queue ``request`` behind the others."""
        self.queue.append(request)

    def pop_ready(self, now_s: float) -> list[Request]:
        """Take the requests that may start now and mark them in flight.

        Args:
            now_s: the current time in seconds (``time.monotonic()``).

        Returns:
            The requests to start now, oldest first: as many as free transfer slots
            allow when there is no delay; at most one when ``delay_s`` is set and the
            gap since the previous start has passed; else ``[]``.
        """
        queue = self.queue
        if not queue:
            return []
        free = self.concurrency - len(self.inprogress)
        if free <= 0:
            return []
        if self.delay_s:
            if getattr(queue[0], "_paced", False):
                return self._pop_paced(now_s, free)
            if now_s < self._last_start_s + self.delay_s * self._gap_factor:
                return []
            free = 1
            self._last_start_s = now_s
            self._gap_factor = self._rng.uniform(0.5, 1.5) if self.randomize_delay else 1.0
        started = []
        inprogress = self.inprogress
        while queue and free > 0:
            request = queue.popleft()
            inprogress[request] = None
            started.append(request)
            free -= 1
        return started

    def _pop_paced(self, now_s: float, free: int) -> list[Request]:
        """:meth:`pop_ready` for the paced requests at the head of the queue (the
        frontier already spaced them by the delay, ``request._paced``): as many as the
        concurrency allows, not again one per delay. A start is still a start: a request
        that is not paced (robots.txt, ``crawler.engine.download``) waits the delay
        after it."""
        queue = self.queue
        inprogress = self.inprogress
        started = []
        while queue and free > 0 and getattr(queue[0], "_paced", False):
            request = queue.popleft()
            inprogress[request] = None
            started.append(request)
            free -= 1
        self._last_start_s = now_s
        self._gap_factor = self._rng.uniform(0.5, 1.5) if self.randomize_delay else 1.0
        return started

    def next_ready_in_s(self, now_s: float) -> float | None:
        """Seconds until :meth:`pop_ready` can return a request again.

        Args:
            now_s: the current time in seconds (``time.monotonic()``).

        Returns:
            ``0.0`` when a request may start now; the seconds left of the delay when
            only the delay holds the queue back; None when nothing is queued or every
            transfer slot is busy (a :meth:`transfer_done` will free one).
        """
        if not self.queue or len(self.inprogress) >= self.concurrency:
            return None
        if not self.delay_s or getattr(self.queue[0], "_paced", False):
            return 0.0
        wait = self._last_start_s + self.delay_s * self._gap_factor - now_s
        return wait if wait > 0 else 0.0

    def transfer_done(self, request: Request) -> None:
        """Mark ``request`` (returned by :meth:`pop_ready`) as no longer in flight.

        Raises:
            KeyError: ``request`` is not in flight in this slot.
        """
        try:
            del self.inprogress[request]
        except KeyError:
            raise KeyError(
                f"transfer_done({request!r}): request is not in flight in this slot"
            ) from None

    def requeue_inprogress(self) -> list[Request]:
        """Put every in-flight request back at the head of the queue, in start order.

        For a downloader that lost its transfers (restart, ``MultiDriver.abort_all``).

        Returns:
            The re-queued requests.
        """
        requests = list(self.inprogress)
        self.inprogress.clear()
        self.queue.extendleft(reversed(requests))
        return requests

    def extend(self, requests: Iterable[Request]) -> None:
        """Queue several requests, in order."""
        self.queue.extend(requests)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(concurrency={self.concurrency!r}, delay_s={self.delay_s:.2f}, "
            f"randomize_delay={self.randomize_delay!r}, queued={len(self.queue)}, "
            f"in_flight={len(self.inprogress)})"
        )
