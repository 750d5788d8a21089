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
passed), so 100,000 hosts crawled do not leave 100,000 empty queues; a host with
queued requests is a few list slots and one heap int, no object (:class:`HostQueues`).

Plain and clock-free, like :class:`~crawlfw.core.transport.slots.SlotTable`: every method that
needs the time takes it (``now_s``, a ``time.monotonic()`` value); tested table-driven in
``tests/core/test_hostqueues.py``.
"""

from __future__ import annotations

import heapq
import itertools
import random
import struct
from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

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


def _time_key(t: float) -> int:
    """An int that orders as the float ``t`` does (its IEEE-754 bits, negatives
    mirrored), offset to be >= 0 and < 2**64: what a heap entry keeps of a time."""
    bits: int = _unpack_q(_pack_d(t))[0]
    return (bits if bits >= 0 else -(bits & _MAG)) + _TIME_OFFSET


#: A ready heap entry is one int: ``head``, then the time since when the host has had
#: requests queued (:func:`_time_key`), then ``QUEUED_MAX - queued``, then a placement
#: sequence number, then the host's number, each in its own bit field, so that ints
#: compare as the tuples ``(head, since, -queued, seq)`` did (``head`` may be
#: negative: it is the top field, ``head * 2**_HEAD_SHIFT + the rest``).
_ID_BITS = 32
_SEQ_SHIFT = _ID_BITS
_QUEUED_SHIFT = _SEQ_SHIFT + 40
_QUEUED_MAX = (1 << 32) - 1
_SINCE_SHIFT = _QUEUED_SHIFT + 32
_HEAD_SHIFT = _SINCE_SHIFT + 64
_ID_MASK = (1 << _ID_BITS) - 1
_SEQ_MASK = (1 << 40) - 1
_MAG = (1 << 63) - 1
_TIME_OFFSET = 1 << 63
_pack_d = struct.Struct("<d").pack
_unpack_q = struct.Struct("<q").unpack


class HostQueues:
    """The ready-set of hosts (see the module doc).

    The state of a host is a few fields in parallel lists indexed by a *host number*
    (``hosts[key]``; numbers of forgotten hosts are reused), and at most one heap entry,
    a single int (ready heap) or a tuple (hosts waiting for a delay): no object per
    host. About 170-200 bytes a host with queued requests (the key's dict entry, its
    number, eight list slots, its heap entry), besides the key string, which the
    storage shares (``tests/core/test_spill.py::test_an_idle_host_costs_a_fixed_few_bytes``
    measures both).

    Args:
        policy: a :class:`~crawlfw.core.transport.hostpolicy.HostPolicy` (or any object with
            ``concurrency(key) -> int``, ``base_delay_s(key) -> float`` and
            ``randomize``; each gap is the delay times ``rng.uniform(0.5, 1.5)`` when
            ``randomize``, as :meth:`HostPolicy.delay_s
            <crawlfw.core.transport.hostpolicy.HostPolicy.delay_s>` draws it).
        rng: the random generator for randomized delays (tests pass a seeded one).

    Attributes:
        hosts: ``{key: host number}`` of the hosts with something queued or in flight.
        queued: requests queued, all hosts.
        in_flight: requests leased and not reported finished, all hosts.
    """

    def __init__(self, policy: HostPolicy, *, rng: random.Random | None = None) -> None:
        self.policy = policy
        self.rng = rng or random.Random()
        self.hosts: dict[str, int] = {}
        self.queued = 0
        self.in_flight = 0
        # per host number: its key (None: free), requests queued, best sort key queued
        # (None: none), in flight, last start (-inf: none), the delay's gap factor, since
        # when it has had requests queued (_time_key), and its live heap entry: None, the
        # ready heap's int, or the delayed heap's tuple (compared by identity)
        self._key: list[str | None] = []
        self._queued: list[int] = []
        self._head: list[int | None] = []
        self._in_flight: list[int] = []
        self._last: list[float] = []
        self._gap: list[float] = []
        self._since: list[int] = []
        self._entry: list[Any] = []
        self._free: list[int] = []  # numbers to reuse
        self._ready: list[int] = []  # heap of packed ints (see _HEAD_SHIFT)
        self._delayed: list[tuple[float, int, int]] = []  # heap of (next start, seq, number)
        # Empty hosts within their delay: key -> (next start, last start, gap).
        self._cooling: dict[str, tuple[float, float, float]] = {}
        self._cooling_heap: list[tuple[float, str]] = []  # (next start, key)
        self._seq = itertools.count()
        self._clock = _NEVER  # the latest now_s given: the time of a push (which has none)
        self._clock_key = _time_key(_NEVER)
        #: None, or called with a host's key when the host gets a queued request while
        #: it had nothing queued and nothing in flight (the SchedulerActor has its name
        #: resolved ahead then: ARCHITECTURE.md, "Name resolution")
        self.on_new_host: Callable[[str], None] | None = None

    # --- events -----------------------------------------------------------------------

    def added(self, key: str, head: int, count: int = 1) -> None:
        """``count`` requests of host ``key`` were queued; ``head`` is the best sort key
        among them (:func:`sort_key`)."""
        i = self.hosts.get(key)
        if i is None:
            i = self._new(key)
            if self.on_new_host is not None:
                self.on_new_host(key)
        queued = self._queued
        q = queued[i]
        if not q:
            self._since[i] = self._clock_key
        queued[i] = q + count
        self.queued += count
        old = self._head[i]
        entry = self._entry[i]
        if old is None or head < old:
            self._head[i] = head
            if entry.__class__ is int:  # ready with a worse head: placed again
                self._place(i, None, True)
                return
        if entry is None:
            self._place(i, None, False)

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
        self._tick(now_s)
        self._promote(now_s)
        out: list[Request] = []
        ready = self._ready
        entries = self._entry
        queued = self._queued
        in_flight = self._in_flight
        policy = self.policy
        heappop = heapq.heappop
        while len(out) < n and ready:
            v = heappop(ready)
            i = v & _ID_MASK
            if entries[i] is not v:
                continue  # stale
            entries[i] = None
            key: str = self._key[i]  # type: ignore[assignment]
            q = queued[i]
            free = policy.concurrency(key) - in_flight[i]
            if free <= 0 or not q:
                self._place(i, now_s, True)
                continue
            delay = policy.base_delay_s(key)
            limit = 1 if delay else min(free, n - len(out), q)
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
                in_flight[i] += got
                self.in_flight += got
                self._last[i] = now_s
                if delay:
                    self._gap[i] = self.rng.uniform(0.5, 1.5) if policy.randomize else 1.0
            if not got or new_head is None or got >= q:  # the storage is the truth
                self.queued -= q
                queued[i] = 0
                self._head[i] = None
            else:
                queued[i] = q - got
                self.queued -= got
                self._head[i] = new_head
            self._place(i, now_s, False)
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
        self._tick(now_s)
        hosts = self.hosts
        in_flight = self._in_flight
        for key, count in counts.items():
            i = hosts.get(key)
            if i is None or count <= 0:
                continue
            count = min(count, in_flight[i])
            in_flight[i] -= count
            self.in_flight -= count
            if self._entry[i] is None:
                self._place(i, now_s, False)

    def released(self, key: str, head: int, count: int = 1) -> None:
        """``count`` leased requests of host ``key`` were given back to the queue
        unfinished (no longer in flight, queued again); ``head`` is their best sort key."""
        i = self.hosts.get(key)
        if i is not None:
            in_flight = self._in_flight
            back = min(count, in_flight[i])
            in_flight[i] -= back
            self.in_flight -= back
            if self._entry[i] is None:  # it may be ready now, even if head is no better
                old = self._head[i]
                if old is None or head < old:
                    self._head[i] = head
                if not self._queued[i]:
                    self._since[i] = self._clock_key
                self._queued[i] += count
                self.queued += count
                self._place(i, None, False)
                return
        self.added(key, head, count)

    def delay_changed(self, key: str) -> None:
        """Host ``key``'s delay changed (AutoThrottle): its next start moves with it
        (the last start plus the new delay), as a download slot's does; it is placed
        again at the next :meth:`lease`."""
        i = self.hosts.get(key)
        if i is not None and self._entry[i] is not None:
            self._entry[i] = None
            self._place(i, None, False)

    # --- questions --------------------------------------------------------------------

    def next_ready_in_s(self, now_s: float) -> float | None:
        """Seconds until a host with queued requests becomes ready by its delay: ``0.0``
        when one is ready now; None when none waits for a delay (hosts at their
        concurrency wait for :meth:`finished`)."""
        self._promote(now_s)
        if self._best_head() is not None:
            return 0.0
        delayed = self._delayed
        entries = self._entry
        while delayed:
            t = delayed[0]
            if entries[t[2]] is t:
                wait = t[0] - now_s
                return wait if wait > 0 else 0.0
            heapq.heappop(delayed)
        return None

    def in_flight_of(self, key: str) -> int:
        """Requests of host ``key`` leased and not finished."""
        i = self.hosts.get(key)
        return self._in_flight[i] if i is not None else 0

    def host_figures(self) -> list[tuple[str, int, int, bool]]:
        """``(key, queued, in flight, ready)`` of every host with something queued or in
        flight; ready: its next request may start now (no delay to wait). For observers
        on another thread (the dashboard's sampler): the figures may be a moment apart.

        Raises:
            RuntimeError: the hosts changed while read (read again).
        """
        queued, in_flight, entry = self._queued, self._in_flight, self._entry
        return [(key, queued[i], in_flight[i], entry[i].__class__ is int)
                for key, i in list(self.hosts.items())]

    def state_size(self) -> int:
        """Hosts this object keeps any state for (active, or empty within a delay)."""
        return len(self.hosts) + len(self._cooling)

    def __len__(self) -> int:
        return self.queued

    # --- inside -----------------------------------------------------------------------

    def _tick(self, now_s: float) -> None:
        if now_s != self._clock:
            self._clock = now_s
            self._clock_key = _time_key(now_s)

    def _new(self, key: str) -> int:
        """A host number for ``key`` (a free one, else a new one), with its next start
        if it is empty within its delay."""
        kept = self._cooling.pop(key, None) if self._cooling else None
        last, gap = (kept[1], kept[2]) if kept else (_NEVER, 1.0)
        if self._free:
            i = self._free.pop()
            self._key[i] = key
            self._last[i] = last
            self._gap[i] = gap
        else:
            i = len(self._key)
            if i > _ID_MASK:
                raise OverflowError(f"HostQueues: more than {_ID_MASK} hosts at once")
            self._key.append(key)
            self._queued.append(0)
            self._head.append(None)
            self._in_flight.append(0)
            self._last.append(last)
            self._gap.append(gap)
            self._since.append(0)
            self._entry.append(None)
        self.hosts[key] = i
        return i

    def _place(self, i: int, now_s: float | None, ready: bool) -> None:
        """Put host number ``i`` where its state says: the ready heap, the delayed heap,
        no heap (at its concurrency: :meth:`finished` places it again), or forgotten
        (nothing queued, nothing in flight; its next start kept while in the future).
        ``now_s`` None: unknown (a push); a host with a finite next start then goes to
        the delayed heap, promoted at the next :meth:`lease`. ``ready``: it was in the
        ready heap (or its delay has just passed): its delay is not looked at again."""
        key: str = self._key[i]  # type: ignore[assignment]
        q = self._queued[i]
        if not q:
            self._entry[i] = None
            if not self._in_flight[i]:
                at = self._next_start(key, i)
                if at != _NEVER and (now_s is None or at > now_s):
                    self._cooling[key] = (at, self._last[i], self._gap[i])
                    heapq.heappush(self._cooling_heap, (at, key))
                del self.hosts[key]
                self._key[i] = None
                self._head[i] = None
                self._free.append(i)
            return
        if self._in_flight[i] >= self.policy.concurrency(key):
            self._entry[i] = None
            return
        seq = next(self._seq)
        if not ready:
            at = self._next_start(key, i)
            if at != _NEVER and (now_s is None or at > now_s):
                t = (at, seq, i)
                self._entry[i] = t
                heapq.heappush(self._delayed, t)
                return
        v = ((self._head[i] << _HEAD_SHIFT)  # type: ignore[operator]
             + (self._since[i] << _SINCE_SHIFT)
             + ((_QUEUED_MAX - q if q < _QUEUED_MAX else 0) << _QUEUED_SHIFT)
             + ((seq & _SEQ_MASK) << _SEQ_SHIFT) + i)
        self._entry[i] = v
        heapq.heappush(self._ready, v)

    def _promote(self, now_s: float) -> None:
        """Move hosts whose delay has passed to the ready heap; forget empty hosts whose
        delay has passed."""
        delayed = self._delayed
        entries = self._entry
        while delayed and delayed[0][0] <= now_s:
            t = heapq.heappop(delayed)
            i = t[2]
            if entries[i] is not t:
                continue
            entries[i] = None
            self._place(i, now_s, True)
        cooling_heap = self._cooling_heap
        if cooling_heap:
            cooling = self._cooling
            while cooling_heap and cooling_heap[0][0] <= now_s:
                at, key = heapq.heappop(cooling_heap)
                kept = cooling.get(key)
                if kept is not None and kept[0] == at:
                    del cooling[key]

    def _next_start(self, key: str, i: int) -> float:
        """When host ``key`` (number ``i``) may hand out its next request: its last
        start plus its delay (as it is now: AutoThrottle may have changed it since)
        times the gap's factor; -inf without a delay or before any start."""
        last = self._last[i]
        if last == _NEVER:
            return _NEVER
        delay = self.policy.base_delay_s(key)
        if not delay:
            return _NEVER
        return last + delay * self._gap[i]

    def _best_head(self) -> int | None:
        """The best head among the ready hosts (stale heap tops dropped), or None."""
        ready = self._ready
        entries = self._entry
        while ready:
            v: int = ready[0]
            if entries[v & _ID_MASK] is v:
                head: int = v >> _HEAD_SHIFT
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
