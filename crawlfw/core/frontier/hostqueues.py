"""Per-host queues and the ready-set of hosts: which host's requests may be handed out now.

The frontier keeps one queue per *host key* (:func:`crawlfw.core.transport.slot.slot_key` without
the IP cache: ``meta['download_slot']`` if set, else the lower-case host name) and hands
out only requests of hosts that are **ready** (Heritrix, BUbiNG and URLFrontier do the
same). A host is ready when

- it has queued requests,
- fewer of its requests are in flight (handed out by :meth:`HostQueues.lease` and not
  yet reported by :meth:`HostQueues.finished`) than its concurrency
  (:meth:`crawlfw.core.transport.hostpolicy.HostPolicy.concurrency`), and
- ``now_s`` is past its next start time: after a host with a delay ``d > 0``
  (``DOWNLOAD_DELAY``, AutoThrottle's) hands out a request, its next start is
  ``now_s + d`` (randomized as ``RANDOMIZE_DOWNLOAD_DELAY`` says), and it hands out one
  request per delay, as a download slot with a delay starts one.

:class:`HostQueues` is the ready-set: it counts each host's queued and in-flight
requests and knows its best queued *sort key* (its head), but holds no request itself:
the frontier's storage does (:class:`MemoryHostStore` in memory; rows of the SQLite
frontier; zsets in Redis), and :meth:`HostQueues.lease` takes requests from it through
a callback. Sort keys are ints, lower first: :func:`sort_key` is ``-2 × priority``, plus
one for a start request, so a higher ``Request.priority`` goes first and start requests
after the other requests of their priority (Scrapy 2.13's start queue); within one key
the storage keeps its order (LIFO or FIFO per ``SCHEDULER_MEMORY_QUEUE`` /
``SCHEDULER_DISK_QUEUE``, start requests FIFO).

Across hosts, :meth:`HostQueues.lease` serves the ready host whose head has the best
sort key first (ties: the host whose requests have waited longest, i.e. that has had
requests queued since the earliest time: a host with a backlog, which bounds when the
crawl can end, gets its turn before hosts whose requests just arrived; a push, which
has no time, counts as happening at the latest ``now_s`` given; then the host with more
queued requests), takes
from it as many requests as its free concurrency allows (one with a delay) while they
are no worse than the next ready host's head, then looks again. Requests thus leave in
global priority order except where politeness holds a host back, which is the point.

Cost: a heap push and pop per host served, a dict lookup per request; never a scan of
every host. Memory: a host with nothing queued and nothing in flight keeps no state,
except its next start time while that is in the future (a small heap, evicted once
passed), so 100,000 hosts crawled do not leave 100,000 empty queues.

Plain and clock-free, like :class:`~crawlfw.core.transport.slots.SlotTable`: every method that
needs the time takes it (``now_s``, a ``time.monotonic()`` value); tested table-driven in
``tests/core/test_hostqueues.py``.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

__all__ = ["HostQueues", "MemoryHostStore", "sort_key"]

if TYPE_CHECKING:
    from crawlfw.core.transport.hostpolicy import HostPolicy
    from crawlfw.http import Request

#: ``take(key, limit, bound) -> (requests, new_head)`` of :meth:`HostQueues.lease`.
Take = Callable[[str, int, "int | None"], "tuple[list[Request], int | None]"]

_INF = float("inf")
_NEVER = float("-inf")


def sort_key(priority: int, start: bool) -> int:
    """The queue order of a request as one int, lower first: ``-2 * priority``, plus 1
    for a start request (after the other requests of its priority)."""
    return -2 * priority + 1 if start else -2 * priority


class _Host:
    """One host's counts (see :class:`HostQueues`)."""

    __slots__ = ("queued", "head", "in_flight", "last_start_s", "gap", "entry", "ready_since",
                 "since")

    def __init__(self, last_start_s: float = _NEVER, gap: float = 1.0) -> None:
        self.queued = 0
        self.head: int | None = None  # best sort key queued, or None
        self.in_flight = 0
        self.last_start_s = last_start_s  # when it last handed out a request
        self.gap = gap  # the delay's factor for the gap after that (randomization)
        self.entry: int | None = None  # seq of its live heap entry (ready or delayed), or None
        self.ready_since: float | None = None  # not None while in the ready heap
        self.since = _NEVER  # since when it has had requests queued (the tie-break)

    def __repr__(self) -> str:
        return (f"_Host(queued={self.queued}, head={self.head}, in_flight={self.in_flight}, "
                f"last_start_s={self.last_start_s})")


class HostQueues:
    """The ready-set of hosts (see the module doc).

    Args:
        policy: a :class:`~crawlfw.core.transport.hostpolicy.HostPolicy` (or any object with
            ``concurrency(key) -> int``, ``base_delay_s(key) -> float`` and
            ``randomize``; each gap is the delay times ``rng.uniform(0.5, 1.5)`` when
            ``randomize``, as :meth:`HostPolicy.delay_s
            <crawlfw.core.transport.hostpolicy.HostPolicy.delay_s>` draws it).
        rng: the random generator for randomized delays (tests pass a seeded one).

    Attributes:
        hosts: ``{key: _Host}`` of the hosts with something queued or in flight.
        queued: requests queued, all hosts.
        in_flight: requests leased and not reported finished, all hosts.
    """

    def __init__(self, policy: HostPolicy, *, rng: random.Random | None = None) -> None:
        self.policy = policy
        self.rng = rng or random.Random()
        self.hosts: dict[str, _Host] = {}
        self.queued = 0
        self.in_flight = 0
        # heap of (head, since, -queued, seq, key); a host's head is never None once queued
        self._ready: list[tuple[int | None, float, int, int, str]] = []
        self._delayed: list[tuple[float, int, str]] = []  # heap of (next_start_s, seq, key)
        # Empty hosts within their delay: key -> (next start, last start, gap).
        self._cooling: dict[str, tuple[float, float, float]] = {}
        self._cooling_heap: list[tuple[float, str]] = []  # (next start, key)
        self._seq = itertools.count()
        self._clock = _NEVER  # the latest now_s given: the time of a push (which has none)
        #: None, or called with a host's key when the host gets a queued request while
        #: it had nothing queued and nothing in flight (the SchedulerActor has its name
        #: resolved ahead then: ARCHITECTURE.md, "Name resolution")
        self.on_new_host: Callable[[str], None] | None = None

    # --- events -----------------------------------------------------------------------

    def added(self, key: str, head: int, count: int = 1) -> None:
        """``count`` requests of host ``key`` were queued; ``head`` is the best sort key
        among them (:func:`sort_key`)."""
        h = self.hosts.get(key)
        if h is None:
            kept = self._cooling.pop(key, None) if self._cooling else None
            h = self.hosts[key] = _Host(kept[1], kept[2]) if kept else _Host()
            if self.on_new_host is not None:
                self.on_new_host(key)
        if not h.queued:
            h.since = self._clock
        h.queued += count
        self.queued += count
        if h.head is None or head < h.head:
            h.head = head
            if h.ready_since is not None:  # ready with a worse head: re-placed below
                h.entry = None
        if h.entry is None:
            self._place(key, h, None)

    def lease(self, n: int, now_s: float, take: Take) -> list[Request]:
        """Up to ``n`` requests of ready hosts, best head first (see the module doc).

        Args:
            n: most requests wanted.
            now_s: the current time (``time.monotonic()`` seconds).
            take: ``take(key, limit, bound) -> (requests, new_head)``: the storage
                removes and returns up to ``limit`` (>= 1) requests of host ``key`` in
                queue order, stopping before one whose sort key is greater than
                ``bound`` (None: no bound) but returning at least one, and says the
                host's best remaining sort key (None: nothing left).

        Returns:
            The requests, each stamped ``request._host = key``, and ``request._paced =
            True`` when its host has a delay (the frontier spaced them: the download slot
            applies only its concurrency, not the delay again).
        """
        self._clock = now_s
        self._promote(now_s)
        out: list[Request] = []
        ready = self._ready
        hosts = self.hosts
        policy = self.policy
        while len(out) < n and ready:
            _, _, _, seq, key = heapq.heappop(ready)
            h = hosts.get(key)
            if h is None or h.entry != seq:
                continue  # stale
            h.entry = None
            free = policy.concurrency(key) - h.in_flight
            if free <= 0 or not h.queued:
                self._place(key, h, now_s)
                continue
            delay = policy.base_delay_s(key)
            limit = 1 if delay else min(free, n - len(out), h.queued)
            requests, new_head = take(key, limit, self._best_head())
            got = len(requests)
            if got:
                if delay:
                    for request in requests:
                        request._host = key
                        request._paced = True
                else:
                    for request in requests:
                        request._host = key
                out.extend(requests)
                h.in_flight += got
                self.in_flight += got
                h.last_start_s = now_s
                if delay:
                    h.gap = self.rng.uniform(0.5, 1.5) if policy.randomize else 1.0
            if not got or new_head is None or got >= h.queued:  # the storage is the truth
                self.queued -= h.queued
                h.queued = 0
                h.head = None
            else:
                h.queued -= got
                self.queued -= got
                h.head = new_head
            h.ready_since = None
            self._place(key, h, now_s)
        return out

    def finished(self, counts: Mapping[str, int], now_s: float) -> None:
        """Transfers of these hosts ended (downloaded, failed, dropped, answered by a
        middleware, replaced, released): their in-flight counts go down and they may be
        ready again.

        Args:
            counts: ``{key: requests finished}`` (counts of hosts not in flight here,
                e.g. leased before a restart, are ignored).
            now_s: the current time.
        """
        self._clock = now_s
        hosts = self.hosts
        for key, count in counts.items():
            h = hosts.get(key)
            if h is None or count <= 0:
                continue
            count = min(count, h.in_flight)
            h.in_flight -= count
            self.in_flight -= count
            if h.entry is None:
                self._place(key, h, now_s)

    def released(self, key: str, head: int, count: int = 1) -> None:
        """``count`` leased requests of host ``key`` were given back to the queue
        unfinished (no longer in flight, queued again); ``head`` is their best sort key."""
        h = self.hosts.get(key)
        if h is not None:
            back = min(count, h.in_flight)
            h.in_flight -= back
            self.in_flight -= back
            if h.entry is None:  # it may be ready now, even if head is no better
                h.head = head if h.head is None or head < h.head else h.head
                if not h.queued:
                    h.since = self._clock
                h.queued += count
                self.queued += count
                self._place(key, h, None)
                return
        self.added(key, head, count)

    def delay_changed(self, key: str) -> None:
        """Host ``key``'s delay changed (AutoThrottle): its next start moves with it
        (the last start plus the new delay), as a download slot's does; it is placed
        again at the next :meth:`lease`."""
        h = self.hosts.get(key)
        if h is not None and h.entry is not None:
            h.entry = None
            h.ready_since = None
            self._place(key, h, None)

    # --- questions --------------------------------------------------------------------

    def next_ready_in_s(self, now_s: float) -> float | None:
        """Seconds until a host with queued requests becomes ready by its delay: ``0.0``
        when one is ready now; None when none waits for a delay (hosts at their
        concurrency wait for :meth:`finished`)."""
        self._promote(now_s)
        if self._best_head() is not None:
            return 0.0
        delayed = self._delayed
        hosts = self.hosts
        while delayed:
            at, seq, key = delayed[0]
            h = hosts.get(key)
            if h is not None and h.entry == seq:
                wait = at - now_s
                return wait if wait > 0 else 0.0
            heapq.heappop(delayed)
        return None

    def in_flight_of(self, key: str) -> int:
        """Requests of host ``key`` leased and not finished."""
        h = self.hosts.get(key)
        return h.in_flight if h is not None else 0

    def state_size(self) -> int:
        """Hosts this object keeps any state for (active, or empty within a delay)."""
        return len(self.hosts) + len(self._cooling)

    def __len__(self) -> int:
        return self.queued

    # --- inside -----------------------------------------------------------------------

    def _place(self, key: str, h: _Host, now_s: float | None) -> None:
        """Put host ``key`` where its state says: the ready heap, the delayed heap, no
        heap (at its concurrency: :meth:`finished` places it again), or forgotten
        (nothing queued, nothing in flight; its next start kept while in the future).
        ``now_s`` None: unknown (a push); a host with a finite next start then goes to
        the delayed heap, promoted at the next :meth:`lease`."""
        if not h.queued:
            h.entry = None
            h.ready_since = None
            if not h.in_flight:
                del self.hosts[key]
                at = self._next_start(key, h)
                if at != _NEVER and (now_s is None or at > now_s):
                    self._cooling[key] = (at, h.last_start_s, h.gap)
                    heapq.heappush(self._cooling_heap, (at, key))
            return
        if h.in_flight >= self.policy.concurrency(key):
            h.entry = None
            h.ready_since = None
            return
        seq = next(self._seq)
        h.entry = seq
        at = self._next_start(key, h)
        if h.ready_since is None and at != _NEVER and (now_s is None or at > now_s):
            heapq.heappush(self._delayed, (at, seq, key))
            return
        h.ready_since = h.since
        heapq.heappush(self._ready, (h.head, h.since, -h.queued, seq, key))

    def _promote(self, now_s: float) -> None:
        """Move hosts whose delay has passed to the ready heap; forget empty hosts whose
        delay has passed."""
        delayed = self._delayed
        hosts = self.hosts
        while delayed and delayed[0][0] <= now_s:
            at, seq, key = heapq.heappop(delayed)
            h = hosts.get(key)
            if h is None or h.entry != seq:
                continue
            h.entry = None
            h.ready_since = at
            self._place(key, h, now_s)
        cooling_heap = self._cooling_heap
        if cooling_heap:
            cooling = self._cooling
            while cooling_heap and cooling_heap[0][0] <= now_s:
                at, key = heapq.heappop(cooling_heap)
                kept = cooling.get(key)
                if kept is not None and kept[0] == at:
                    del cooling[key]

    def _next_start(self, key: str, h: _Host) -> float:
        """When host ``key`` may hand out its next request: its last start plus its
        delay (as it is now: AutoThrottle may have changed it since) times the gap's
        factor; -inf without a delay or before any start."""
        if h.last_start_s == _NEVER:
            return _NEVER
        delay = self.policy.base_delay_s(key)
        if not delay:
            return _NEVER
        return h.last_start_s + delay * h.gap

    def _best_head(self) -> int | None:
        """The best head among the ready hosts (stale heap tops dropped), or None."""
        ready = self._ready
        hosts = self.hosts
        while ready:
            head, _, _, seq, key = ready[0]
            h = hosts.get(key)
            if h is not None and h.entry == seq:
                return head
            heapq.heappop(ready)
        return None


class MemoryHostStore:
    """Requests queued per host in memory, in sort-key order (for :class:`HostQueues`).

    Within one sort key: last in first out when ``lifo`` (``SCHEDULER_MEMORY_QUEUE``'s
    default, Scrapy 1.2's depth-first order), else first in first out; start requests
    (odd keys) always first in first out. A host whose queue empties is dropped.

    Args:
        lifo: the order of the non-start requests within one priority.
    """

    def __init__(self, lifo: bool = True) -> None:
        self.lifo = lifo
        self.hosts: dict[str, tuple[list[int], dict[int, deque[Request]]]] = {}  # key -> (heap of sort keys, {sort key: deque})
        self._len = 0

    def push(self, host: str, key: int, request: Request) -> None:
        """Queue ``request`` of ``host`` with sort key ``key``."""
        entry = self.hosts.get(host)
        if entry is None:
            entry = self.hosts[host] = ([], {})
        heap, queues = entry
        q = queues.get(key)
        if q is None:
            q = queues[key] = deque()
            heapq.heappush(heap, key)
        q.append(request)
        self._len += 1

    def take(self, host: str, limit: int, bound: int | None) -> tuple[list[Request], int | None]:
        """See ``take`` in :meth:`HostQueues.lease`."""
        entry = self.hosts.get(host)
        if entry is None:
            return [], None
        heap, queues = entry
        out: list[Request] = []
        lifo = self.lifo
        while len(out) < limit and heap:
            key = heap[0]
            if out and bound is not None and key > bound:
                break
            q = queues[key]
            while q and len(out) < limit:
                out.append(q.pop() if lifo and not key & 1 else q.popleft())
            if not q:
                heapq.heappop(heap)
                del queues[key]
        self._len -= len(out)
        if not heap:
            del self.hosts[host]
            return out, None
        return out, heap[0]

    def head(self, host: str) -> int | None:
        """The best sort key queued for ``host``, or None."""
        entry = self.hosts.get(host)
        return entry[0][0] if entry else None

    def drain(self) -> list[Request]:
        """Remove and return every queued request (host by host, each in queue order)."""
        out: list[Request] = []
        for host in list(self.hosts):
            out.extend(self.take(host, self._len or 1, None)[0])
        return out

    def __len__(self) -> int:
        return self._len
