"""crawlfw's own name resolution, driven from the downloader's event loop: no thread
per lookup, no thread of its own (c-ares), answers cached, lookups in flight bounded.

:class:`Resolver` is the part every resolver shares: the answer cache
(:class:`~crawlfw.core.transport.dns.DnsCache`), one lookup per name however many
transfers wait for it (each waiter a callback), at most ``max_in_flight`` lookups at
once (the others queued, first come first served), ``DNS_TIMEOUT`` per lookup, and the
counters the ``dns/*`` stats are made of. Its subclasses ask:

- :class:`~crawlfw.core.transport.resolver_cares.CaresResolver` (the default,
  ``DNS_RESOLVER``'s Scrapy names; its own module): c-ares through
  pycares on the caller's selector. The hosts file first (``DNS_HOSTS_FILE``), then
  the name servers of ``resolv.conf`` with its search list and ``ndots``; ``A`` and
  ``AAAA`` asked at once, RFC 8305's Happy Eyeballs v2 section 3: once one family has
  answered with addresses, the other gets the Resolution Delay (50 ms) more, then the
  lookup is answered with what came (a name server that never answers ``AAAA`` costs
  50 ms, not a timeout).
- :class:`ThreadedResolver`: a user's ``DNS_RESOLVER`` class with a blocking
  ``resolve(host)``, called on a few worker threads, the answers handed to the loop
  through a pipe.

Threading: every method runs on the thread of the event loop that owns the selector
given to :meth:`Resolver.attach` (the downloader actor's, through
:class:`~crawlfw.core.transport.curl.MultiDriver`), and so do the waiters' callbacks.
The loop calls :meth:`Resolver.process` when one of the resolver's file descriptors
(``key.data is resolver`` in the selector) is ready, and :meth:`Resolver.on_timer` at
:meth:`Resolver.next_deadline_s`; an idle resolver has no deadline and no socket
activity, so the loop sleeps.
"""

from __future__ import annotations

import collections
import functools
import heapq
import logging
import os
import selectors
import socket
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from crawlfw.core.transport.dns import (
    FAILURE_KINDS,
    Answer,
    DnsCache,
    LookupFailed,
    make_answer,
)

__all__ = ["Resolver", "ThreadedResolver", "Waiter", "Result", "RESOLUTION_DELAY_S"]

logger = logging.getLogger(__name__)

Result = Answer | LookupFailed
#: A waiter: called once with the lookup's :class:`Answer` or :class:`LookupFailed`.
Waiter = Callable[[Result], None]

_READ = selectors.EVENT_READ
_WRITE = selectors.EVENT_WRITE

#: RFC 8305 section 3's recommended Resolution Delay, seconds.
RESOLUTION_DELAY_S = 0.05


class _Lookup:
    """One name being resolved, and who waits for it."""

    __slots__ = ("host", "waiters", "asked_s", "deadline_s", "started", "done", "v4", "v6",
                 "errors", "ttl_s", "he_set", "channel", "ahead")

    def __init__(self, host: str, waiter: Waiter | None, now_s: float,
                 deadline_s: float) -> None:
        self.host = host
        self.waiters = [waiter] if waiter is not None else []
        self.asked_s = now_s
        self.deadline_s = deadline_s
        self.started = False
        self.done = False
        self.v4: list[str] | None = None  # None: not answered yet
        self.v6: list[str] | None = None
        self.errors: list[str] = []  # failure kinds of the families that failed
        self.ttl_s: float | None = None
        self.he_set = False  # the resolution delay is running
        self.channel: Any = None
        self.ahead = waiter is None  # asked ahead (prefetch), no transfer waits yet


class Resolver:
    """What every resolver shares (see the module docstring); subclasses implement
    :meth:`_start` (ask for one name) and, when they have descriptors, :meth:`attach`
    and :meth:`process`.

    Args:
        timeout_s: ``DNS_TIMEOUT``: seconds a lookup may take from the moment a
            transfer asks for it (queueing included); then its waiters get a
            ``timeout`` failure. 0 or ``math.inf``: no limit of its own.
        max_in_flight: lookups asked at once (``DNS_CONCURRENT_LOOKUPS``, >= 1).
        cache: the :class:`DnsCache` (``DNSCACHE_SIZE``), or None
            (``DNSCACHE_ENABLED`` off: nothing is kept once answered).
        min_ttl_s, max_ttl_s: bounds of the time an answer is kept
            (``DNSCACHE_MIN_TTL``, ``DNSCACHE_MAX_TTL``).
        negative_ttl_s: time a "no such name" or "no address" answer is kept
            (``DNSCACHE_NEGATIVE_TTL``).

    Attributes (counters, read by the downloader for the ``dns/*`` stats):
        lookups: lookups asked (names not in the cache).
        cache_hits: names answered without a new lookup (cache, hosts file, or a lookup
            already in flight); the transport adds its own hits.
        failures: ``{kind: count}`` over :data:`FAILURE_KINDS`.
        answered: lookups answered by the name servers (with addresses or not).
        latency_total_s, latency_max_s: time those took, summed and the longest.
        in_flight: lookups asked and not answered yet.
        queued: lookups waiting for one of ``max_in_flight``.
        prefetched: lookups started ahead of any transfer (:meth:`prefetch`; also
            counted in ``lookups``).
        merged: answers the other address family joined after the lookup was
            answered without it (:meth:`_late_family`).

    Other attributes:
        ahead_window: the most names resolved ahead and not asked for by a transfer
            yet (:meth:`prefetch`): twice ``max_in_flight``, at most half the cache;
            0 without a cache (no lookup ahead).
        ahead_limit: the most names waiting for their turn to be resolved ahead (the
            cache's size); more are dropped.
        on_merged: None, or called with the new :class:`Answer` when a late family was
            merged into the cached one (the transport updates the addresses it gives
            libcurl).

    Raises:
        ValueError: a bound is out of range (the message names the setting).
    """

    #: RFC 8305's Resolution Delay, seconds (a subclass asking two families sets it).
    resolution_delay_s = RESOLUTION_DELAY_S

    def __init__(self, *, timeout_s: float = 60.0, max_in_flight: int = 100,
                 cache: DnsCache | None = None, min_ttl_s: float = 60.0,
                 max_ttl_s: float = 3600.0, negative_ttl_s: float = 30.0) -> None:
        if isinstance(max_in_flight, bool) or not isinstance(max_in_flight, int) \
                or max_in_flight < 1:
            raise ValueError(f"DNS_CONCURRENT_LOOKUPS must be an int >= 1, got {max_in_flight!r}")
        if not timeout_s >= 0:
            raise ValueError(f"DNS_TIMEOUT must be a number of seconds >= 0 (0: no limit of "
                             f"its own), got {timeout_s!r}")
        for name, value in (("DNSCACHE_MIN_TTL", min_ttl_s), ("DNSCACHE_MAX_TTL", max_ttl_s),
                            ("DNSCACHE_NEGATIVE_TTL", negative_ttl_s)):
            if not value >= 0:
                raise ValueError(f"{name} must be a number of seconds >= 0, got {value!r}")
        if max_ttl_s < min_ttl_s:
            raise ValueError(f"DNSCACHE_MAX_TTL ({max_ttl_s!r}) must be >= DNSCACHE_MIN_TTL "
                             f"({min_ttl_s!r})")
        self.timeout_s = float(timeout_s) if 0 < timeout_s < float("inf") else 0.0
        self.max_in_flight = max_in_flight
        self.cache = cache
        self.min_ttl_s = float(min_ttl_s)
        self.max_ttl_s = float(max_ttl_s)
        self.negative_ttl_s = float(negative_ttl_s)
        self._pending: dict[str, _Lookup] = {}
        self._queue: collections.deque[_Lookup] = collections.deque()
        self._timers: list[tuple[float, int, _Lookup, bool]] = []  # (due, seq, lookup, is_he)
        self._seq = 0
        self._outstanding = 0  # queries sent and not answered (the subclass counts)
        self._selector: selectors.BaseSelector | None = None
        # Names to resolve ahead of their transfers (prefetch), in their turn...
        self._ahead: collections.deque[str] = collections.deque()
        # ...and those resolved ahead that no transfer asked for yet: name -> when its
        # place in the window frees by itself (the answer's expiry; the lookup's
        # deadline while it runs). Insertion order: oldest first.
        self._ahead_live: dict[str, float] = {}
        self._filling = False
        size = cache.size if cache is not None else 0
        self.ahead_window = min(2 * max_in_flight, size // 2) if size else 0
        self.ahead_limit = size
        self.on_merged: Callable[[Answer], None] | None = None
        self.prefetched = 0
        self.merged = 0
        self.lookups = 0
        self.cache_hits = 0
        self.failures = dict.fromkeys(FAILURE_KINDS, 0)
        self.answered = 0
        self.latency_total_s = 0.0
        self.latency_max_s = 0.0
        self.in_flight = 0

    # -- the loop's side ---------------------------------------------------------------

    @property
    def queued(self) -> int:
        """Lookups waiting for one of ``max_in_flight``."""
        return len(self._queue)

    @property
    def busy(self) -> bool:
        """True while the loop must ask :meth:`next_deadline_s` (lookups pending, or
        queries still out)."""
        return bool(self._timers) or self._outstanding > 0

    @property
    def pending(self) -> int:
        """Names being resolved (asked or queued)."""
        return len(self._pending)

    def attach(self, selector: selectors.BaseSelector) -> None:
        """Use ``selector`` (the loop's) for the resolver's descriptors, registered with
        ``data`` the resolver itself. Call once, before :meth:`resolve`."""
        self._selector = selector

    def resolve(self, host: str, waiter: Waiter, now_s: float) -> Result | None:
        """The answer for ``host`` if it is known now, else None and ``waiter`` is called
        with it later (from :meth:`process` or :meth:`on_timer`, on this thread).

        Args:
            host: a host name in lower case, not an IP literal (see
                :func:`~crawlfw.core.transport.dns.no_lookup_needed`).
            waiter: called once with the :class:`Answer` or :class:`LookupFailed`;
                it must not raise (an exception is logged and ignored).
            now_s: ``time.monotonic()``.
        """
        live = self._ahead_live
        if live and live.pop(host, None) is not None and self._ahead:
            # a name resolved ahead is asked for: its place in the window is free
            result = self._resolve(host, waiter, now_s)
            self._fill_ahead(now_s)
            return result
        return self._resolve(host, waiter, now_s)

    def _resolve(self, host: str, waiter: Waiter, now_s: float) -> Result | None:
        cache = self.cache
        if cache is not None:
            entry = cache.get(host, now_s)
            if entry is not None:
                self.cache_hits += 1
                return entry
        known = self._known(host, now_s)
        if known is not None:
            self.cache_hits += 1
            return known
        lookup = self._pending.get(host)
        if lookup is not None:
            self.cache_hits += 1
            lookup.waiters.append(waiter)
            if lookup.ahead:  # the first transfer to wait for a lookup asked ahead:
                lookup.ahead = False  # DNS_TIMEOUT counts from its ask
                if self.timeout_s and now_s + self.timeout_s > lookup.deadline_s:
                    lookup.deadline_s = now_s + self.timeout_s
                    self._push(lookup.deadline_s, lookup, False)
            return None
        deadline = now_s + self.timeout_s if self.timeout_s else float("inf")
        lookup = _Lookup(host, waiter, now_s, deadline)
        self._pending[host] = lookup
        if self.timeout_s:
            self._push(deadline, lookup, False)
        if self.in_flight < self.max_in_flight:
            self._begin(lookup, now_s)
        else:
            self._queue.append(lookup)
        return None

    def prefetch(self, host: str, now_s: float) -> bool:
        """Resolve ``host`` ahead of its first transfer (its first request was queued
        in the frontier): the answer waits in the cache, and the transfer that asks for
        it later finds it there, or joins the lookup still running, instead of holding
        its place among ``CONCURRENT_REQUESTS`` for the whole lookup (RFC 8305's
        Resolution Delay included, when a name server never answers ``AAAA``).

        Lookups ahead never hold a transfer's back: one starts only while fewer than
        ``max_in_flight`` lookups are in flight and no transfer's lookup is queued,
        and at most :attr:`ahead_window` names are resolved ahead and not asked for
        yet (an answer keeps its place until a transfer asks for it or it expires; a
        failure frees it at once: the transfer then asks again and gets its own
        ``DNSLookupError``, or the cached NXDOMAIN). The others wait their turn in
        order, at most :attr:`ahead_limit` of them; more are dropped (resolved when
        asked). Nothing without a cache (``DNSCACHE_ENABLED`` off: the answer would be
        kept nowhere).

        Args:
            host: a host name in lower case, not an IP literal.
            now_s: ``time.monotonic()``.

        Returns:
            True when the name is to be resolved ahead (now or in its turn); False when
            there is nothing to do (cached, in the hosts file, being resolved, no
            cache) or no room is left.
        """
        if not self.ahead_window or host in self._pending or host in self._ahead_live:
            return False
        if self.cache.get(host, now_s) is not None:  # type: ignore[union-attr]
            return False
        if len(self._ahead) >= self.ahead_limit:
            return False
        self._ahead.append(host)
        self._fill_ahead(now_s)
        return True

    def _fill_ahead(self, now_s: float) -> None:
        """Start the lookups ahead (:meth:`prefetch`) that the bounds allow now."""
        if self._filling:  # (a lookup answered at once, within _begin, calls back here)
            return
        self._filling = True
        try:
            live = self._ahead_live
            while live:  # answers resolved ahead, never asked for and expired
                host = next(iter(live))
                if live[host] > now_s:
                    break
                del live[host]
            ahead = self._ahead
            pending = self._pending
            cache = self.cache
            while (ahead and self.in_flight < self.max_in_flight and not self._queue
                   and len(live) < self.ahead_window):
                host = ahead.popleft()
                if host in pending or host in live:
                    continue
                if cache is not None and cache.get(host, now_s) is not None:
                    continue
                if self._known(host, now_s) is not None:
                    continue
                deadline = now_s + self.timeout_s if self.timeout_s else float("inf")
                lookup = _Lookup(host, None, now_s, deadline)
                pending[host] = lookup
                live[host] = deadline
                if self.timeout_s:
                    self._push(deadline, lookup, False)
                self.prefetched += 1
                self._begin(lookup, now_s)
        finally:
            self._filling = False

    def next_deadline_s(self, now_s: float) -> float | None:
        """The ``time.monotonic()`` value at which :meth:`on_timer` should run next, or
        None when nothing is timed (no lookup in flight)."""
        timers = self._timers
        return timers[0][0] if timers else None

    def on_timer(self, now_s: float) -> None:
        """Run what is due at ``now_s``: resolution delays that ended, lookups past
        ``DNS_TIMEOUT``."""
        timers = self._timers
        while timers and timers[0][0] <= now_s:
            due, _, lookup, is_he = heapq.heappop(timers)
            if lookup.done or (not is_he and due < lookup.deadline_s):
                continue  # answered, or a transfer asked later (its own DNS_TIMEOUT)
            if is_he:
                self._complete(lookup, now_s)
            else:
                reason = f"no answer for {lookup.host!r} within DNS_TIMEOUT, {self.timeout_s:g} s"
                self._complete(lookup, now_s, LookupFailed(lookup.host, "timeout", reason))

    def process(self, fd: int, events: int) -> None:
        """``fd`` (one of the resolver's) is ready for ``events`` (selector bits)."""

    def close(self) -> None:
        """Stop: pending lookups are dropped without calling their waiters."""
        self._ahead.clear()
        self._ahead_live.clear()
        self._pending.clear()
        self._queue.clear()
        self._timers.clear()

    # -- what subclasses implement ----------------------------------------------------

    def _known(self, host: str, now_s: float) -> Answer | None:
        """An answer known without asking (the hosts file), or None."""
        return None

    def _start(self, lookup: _Lookup, now_s: float) -> None:
        """Ask for ``lookup.host``; call :meth:`_family_answered` /
        :meth:`_complete` as answers come."""
        raise NotImplementedError

    # -- shared machinery --------------------------------------------------------------

    def _push(self, due_s: float, lookup: _Lookup, is_he: bool) -> None:
        self._seq += 1
        heapq.heappush(self._timers, (due_s, self._seq, lookup, is_he))

    def _begin(self, lookup: _Lookup, now_s: float) -> None:
        lookup.started = True
        self.in_flight += 1
        self.lookups += 1
        try:
            self._start(lookup, now_s)
        except Exception as e:  # a name the library refuses, no server...
            if not lookup.done:
                self._complete(lookup, now_s, LookupFailed(
                    lookup.host, "error", f"the lookup of {lookup.host!r} failed: {e}"))

    def _family_answered(self, lookup: _Lookup, family: int, addresses: list[str] | None,
                         ttl_s: float | None, error: str | None, now_s: float,
                         expect_both: bool) -> None:
        """One address family's answer came (``addresses`` non-empty) or failed
        (``error`` a failure kind): answer the lookup, or start the resolution delay
        (RFC 8305 section 3) when the other family has yet to answer."""
        if lookup.done:
            return
        if addresses:
            if family == 4:
                lookup.v4 = addresses
            else:
                lookup.v6 = addresses
            if ttl_s is not None:
                lookup.ttl_s = ttl_s if lookup.ttl_s is None else min(lookup.ttl_s, ttl_s)
        else:
            if family == 4:
                lookup.v4 = []
            else:
                lookup.v6 = []
            lookup.errors.append(error or "nodata")
        other = lookup.v6 if family == 4 else lookup.v4
        if not expect_both or other is not None or error == "nxdomain":
            # NXDOMAIN says the name has no records of any type (RFC 8020): the other
            # family's answer cannot help
            self._complete(lookup, now_s)
        elif (lookup.v4 or lookup.v6) and not lookup.he_set:
            lookup.he_set = True
            self._push(now_s + self.resolution_delay_s, lookup, True)

    def _complete(self, lookup: _Lookup, now_s: float, failed: LookupFailed | None = None
                  ) -> None:
        """Answer ``lookup``'s waiters with what it has (or ``failed``), cache it, and
        start the next queued lookup."""
        lookup.done = True
        self._pending.pop(lookup.host, None)
        if lookup.started:
            self.in_flight -= 1
            self._released(lookup)
        result: Result
        if lookup.v4 or lookup.v6:
            ttl = lookup.ttl_s if lookup.ttl_s is not None else self.min_ttl_s
            ttl = min(max(ttl, self.min_ttl_s), self.max_ttl_s)
            result = make_answer(lookup.host, lookup.v6 or (), lookup.v4 or (), now_s + ttl)
            self._answered(lookup, now_s)
        elif failed is not None:
            result = failed
        else:
            kind = _failure_kind(lookup.errors)
            expires = now_s + self.negative_ttl_s if kind in ("nxdomain", "nodata") else 0.0
            result = LookupFailed(lookup.host, kind, _REASONS[kind].format(host=lookup.host),
                                  expires)
            if kind in ("nxdomain", "nodata"):
                self._answered(lookup, now_s)
        if isinstance(result, LookupFailed):
            self.failures[result.kind] += 1
        cache = self.cache
        if cache is not None and result.expires_s > now_s:
            cache.put(result)
        for waiter in lookup.waiters:
            try:
                waiter(result)
            except Exception:
                logger.exception("A DNS lookup's waiter failed for %r", lookup.host)
        lookup.waiters = []
        queue = self._queue
        while queue and self.in_flight < self.max_in_flight:
            nxt = queue.popleft()
            if not nxt.done:
                self._begin(nxt, now_s)
        live = self._ahead_live
        if live and lookup.host in live:  # resolved ahead: its place until it expires
            if result.expires_s > now_s:
                live[lookup.host] = result.expires_s
            else:
                del live[lookup.host]
        if self._ahead:
            self._fill_ahead(now_s)

    def _late_family(self, host: str, family: int, addresses: list[str],
                     ttl_s: float | None, now_s: float) -> None:
        """``family``'s ``addresses`` came after ``host``'s lookup was answered without
        them (RFC 8305's Resolution Delay ran out first): they join the cached answer,
        for the host's next connections (its expiry the earlier of the two), and
        :attr:`on_merged` is told. Nothing when the cache holds no answer for ``host``
        lacking that family."""
        cache = self.cache
        if cache is None or not addresses:
            return
        entry = cache.get(host, now_s)
        if entry is None or entry.__class__ is not Answer:
            return
        v6 = [a for a in entry.addresses if ":" in a]
        v4 = [a for a in entry.addresses if ":" not in a]
        if (v6 if family == 6 else v4):
            return
        if family == 6:
            v6 = addresses
        else:
            v4 = addresses
        expires = entry.expires_s
        if ttl_s is not None:
            expires = min(expires, now_s + min(max(ttl_s, self.min_ttl_s), self.max_ttl_s))
        answer = make_answer(host, v6, v4, expires)
        cache.put(answer)
        self.merged += 1
        if self.on_merged is not None:
            try:
                self.on_merged(answer)
            except Exception:
                logger.exception("Could not use the merged DNS answer of %r", host)

    def _answered(self, lookup: _Lookup, now_s: float) -> None:
        self.answered += 1
        took = now_s - lookup.asked_s
        self.latency_total_s += took
        if took > self.latency_max_s:
            self.latency_max_s = took

    def _released(self, lookup: _Lookup) -> None:
        """``lookup`` (started) is over: the subclass may free what it held."""


_REASONS = {
    "nxdomain": "no such host name: {host!r} (NXDOMAIN)",
    "nodata": "{host!r} has no address",
    "timeout": "no answer for {host!r} from the name servers",
    "servfail": "the name server failed for {host!r} (SERVFAIL)",
    "refused": "the name server refused the query for {host!r}",
    "error": "the lookup of {host!r} failed",
}


def _failure_kind(errors: list[str]) -> str:
    """The kind of a lookup whose families all failed with ``errors``: NXDOMAIN when a
    family said so and none said the name exists; "no address" when one said the name
    exists and the others had no address either; else the most telling of the
    others."""
    kinds = set(errors)
    if "nxdomain" in kinds and "nodata" not in kinds:
        return "nxdomain"
    if kinds <= {"nxdomain", "nodata"}:
        return "nodata"
    for kind in ("servfail", "refused", "timeout"):
        if kind in kinds:
            return kind
    return "error"


# -- a user's resolver ---------------------------------------------------------------------


class ThreadedResolver(Resolver):
    """A user's ``DNS_RESOLVER`` class whose ``resolve(host)`` blocks: called on up to
    ``threads`` worker threads (``crawlfw-dns-N``), each answer handed to the loop
    through a pipe registered in its selector. The cache, the bound on lookups in
    flight and ``DNS_TIMEOUT`` apply as to the default resolver (a call that overruns
    ``DNS_TIMEOUT`` is left to finish on its thread; its answer is dropped).

    The user's ``resolve(host: str) -> Iterable[str]`` returns the host's IP addresses
    (IPv4 or IPv6, as strings); it raises to fail: ``socket.gaierror`` with
    ``EAI_NONAME`` or :class:`~crawlfw.exceptions.DNSLookupError` count as
    ``nxdomain``, ``TimeoutError`` as ``timeout``, anything else as ``error``. An
    optional attribute ``ttl_s`` (seconds) says how long answers are kept (within the
    cache's bounds; default ``DNSCACHE_MIN_TTL``).

    Args:
        user: the user's resolver object.
        threads: the most worker threads (>= 1).
        **kw: :class:`Resolver`'s arguments.
    """

    def __init__(self, user: Any, *, threads: int = 4, **kw: Any) -> None:
        super().__init__(**kw)
        if not callable(getattr(user, "resolve", None)):
            raise ValueError(f"DNS_RESOLVER: {type(user).__qualname__} has no resolve(host) "
                             f"method")
        self.user = user
        self._executor = ThreadPoolExecutor(max_workers=max(1, threads),
                                            thread_name_prefix="crawlfw-dns")
        self._done: collections.deque[tuple[_Lookup, Future[Any]]] = collections.deque()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._closed = False

    def attach(self, selector: selectors.BaseSelector) -> None:
        super().attach(selector)
        selector.register(self._wake_r, _READ, self)

    def _start(self, lookup: _Lookup, now_s: float) -> None:
        future = self._executor.submit(self.user.resolve, lookup.host)
        future.add_done_callback(functools.partial(self._finished, lookup))

    def _finished(self, lookup: _Lookup, future: Future[Any]) -> None:
        """(a worker thread) Hand the answer to the loop."""
        self._done.append((lookup, future))
        if self._closed:
            return
        try:
            os.write(self._wake_w, b"\0")
        except OSError:  # full (readable anyway) or closed
            pass

    def process(self, fd: int, events: int) -> None:
        try:
            while os.read(self._wake_r, 4096):
                pass
        except (BlockingIOError, OSError):
            pass
        done = self._done
        while done:
            lookup, future = done.popleft()
            if lookup.done:
                continue
            now = time.monotonic()
            error = None
            v4: list[str] = []
            v6: list[str] = []
            try:
                for address in _addresses(future.result()):
                    (v6 if ":" in address else v4).append(address)
            except Exception as e:  # the user's resolver failed
                error = _user_error_kind(e)
            ttl = getattr(self.user, "ttl_s", None)
            if v4 or v6:
                lookup.v4, lookup.v6 = v4, v6
                lookup.ttl_s = float(ttl) if isinstance(ttl, (int, float)) else None
            else:
                lookup.errors.append(error or "nodata")
            self._complete(lookup, now)

    def close(self) -> None:
        super().close()
        self._closed = True
        if self._selector is not None:
            try:
                self._selector.unregister(self._wake_r)
            except (KeyError, ValueError, OSError):
                pass
        self._executor.shutdown(wait=False, cancel_futures=True)
        os.close(self._wake_r)
        os.close(self._wake_w)


def _addresses(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        return [value]
    return [str(a) for a in value]


def _user_error_kind(error: BaseException) -> str:
    from crawlfw.exceptions import DNSLookupError

    if isinstance(error, socket.gaierror) and error.errno == socket.EAI_NONAME:
        return "nxdomain"
    if isinstance(error, DNSLookupError):
        return "nxdomain"
    if isinstance(error, TimeoutError):
        return "timeout"
    return "error"
