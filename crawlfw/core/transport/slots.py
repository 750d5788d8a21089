"""The slot table: every download slot one downloader serves, plain and clock-free.

A downloader actor serves many download slots (hosts, or IPs with
``CONCURRENT_REQUESTS_PER_IP``) on one ``CurlMulti``. :class:`SlotTable` keeps their
politeness state (one :class:`~crawlfw.core.transport.slot.DownloadSlot` each: its queue, its
concurrency, ``DOWNLOAD_DELAY`` and its randomization, AutoThrottle's delay) and decides
which requests may start now, so that the actor is a thin shell: it calls
:meth:`SlotTable.enqueue` for a ``fetch``, :meth:`SlotTable.pop_ready` to know what to
hand curl, :meth:`SlotTable.done` when a transfer ends, and waits in curl at most
:meth:`SlotTable.next_ready_in_s` seconds.

Cost: the slots that may start a request are kept in a heap by the time they may (a
slot enters it when a request is queued behind free capacity, when a transfer ends with
requests waiting, or when its delay will have passed), so a pump costs O(log n) per
slot started, never a scan of every slot. Entries made stale by a later change are
skipped when they come up (the table remembers each slot's one live entry).

Memory follows the slots active now, not every host ever seen: a slot with nothing
queued and nothing in flight is evicted (:meth:`SlotTable.evict_idle`) once its delay
has passed (before that, its last start time is what politeness needs: a new slot would
start at once). A delay set from outside (AutoThrottle, :meth:`SlotTable.set_delay`) is
remembered for the last :data:`DELAY_MEMORY` slots, and given back to a slot created
again for the same key.

The table is the crawl's one per-request ledger of the transfers a downloader holds:
what its slots have queued (``DownloadSlot.queue``) and in flight
(``DownloadSlot.inprogress``). The Engine counts only how many it sent
(``FlowControl.downloading``). So the table outlives the actor that fills it: the
downloader pool keeps it, and when a downloader dies its replacement takes the table
over and calls :meth:`SlotTable.requeue_after_crash` (the transfers that were running
start again; a request in flight in :data:`POISON_CRASHES` deaths is taken out instead,
a *poison request*, counted per request fingerprint in :attr:`SlotTable.crashes`). When
the downloader stops, :meth:`SlotTable.release_all` gives back what it still holds.

Like :class:`~crawlfw.core.flow.flow.FlowControl`, nothing here reads a clock, starts a
thread or sends a message: every method takes the current time (``now_s``, a
``time.monotonic()`` value) and the table is tested table-driven
(``tests/core/test_slots.py``).
"""

from __future__ import annotations

import heapq
import itertools
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from crawlfw.core.transport.hostpolicy import DELAY_MEMORY  # slots whose AutoThrottle delay is kept
from crawlfw.core.transport.slot import DownloadSlot
from crawlfw.utils.request import request_fingerprint

if TYPE_CHECKING:
    from crawlfw.http import Request

#: ``(slot key, request)``: a request and the slot it is in.
Keyed = tuple[str, "Request"]

__all__ = ["SlotTable", "DELAY_MEMORY", "POISON_CRASHES"]

#: Downloader deaths a request may be in flight for before it is a poison request: not
#: started again but failed (``DownloaderCrashed``).
POISON_CRASHES = 2


class SlotTable:
    """The download slots of one downloader, keyed by slot key.

    Args:
        new_slot: ``new_slot(key) -> DownloadSlot``: builds the slot for a key seen for
            the first time (or again after its eviction), e.g.
            ``lambda key: DownloadSlot.from_settings(settings, spider)``; or None, to be
            set (:attr:`new_slot`) by the downloader that fills the table.
        poison_crashes: downloader deaths a request may be in flight for before
            :meth:`requeue_after_crash` takes it out as a poison request
            (:data:`POISON_CRASHES`).

    Attributes:
        new_slot: the slot factory (each downloader incarnation sets its own: a shared
            slot is made on its thread's Redis connection).
        crashes: ``{request fingerprint: downloader deaths it was in flight for}``
            (only requests in flight at a death have an entry).
        slots: ``{key: DownloadSlot}``, the slots alive (active, or idle within their
            delay). Read it; change it only through the methods.
        queued: requests queued in all slots (not started yet).
        in_flight: requests started (returned by :meth:`pop_ready`) and not yet
            :meth:`done`.
        evicted: slots evicted so far (a count).
    """

    def __init__(self, new_slot: Callable[[str], DownloadSlot] | None = None,
                 poison_crashes: int = POISON_CRASHES) -> None:
        self.new_slot = new_slot
        self.poison_crashes = poison_crashes
        self.crashes: dict[str, int] = {}
        self._poisoned: list[tuple[str, Request, int]] = []  # (key, request, crashes): died_on_fetch's poison
        self.slots: dict[str, DownloadSlot] = {}
        self.queued = 0
        self.in_flight = 0
        self.evicted = 0
        self._ready: list[tuple[float, int, str]] = []  # heap of (at_s, seq, key): slots that may start then
        self._at: dict[str, float] = {}  # key -> at_s of its live _ready entry
        self._idle: list[tuple[float, int, str]] = []  # heap of (evictable at_s, seq, key)
        self._seq = itertools.count()
        self._delays: OrderedDict[str, float] = OrderedDict()  # set_delay, remembered

    # --- events ---------------------------------------------------------------------------

    def enqueue(self, key: str, request: Request, now_s: float) -> None:
        """Queue ``request`` in slot ``key`` (created if needed), behind the others.

        Args:
            key: the slot key (:func:`crawlfw.core.transport.slot.slot_key`).
            request: a :class:`crawlfw.http.Request`.
            now_s: the current time (``time.monotonic()`` seconds).
        """
        slot = self.slots.get(key)
        if slot is None:
            slot = self._create(key)
        slot.queue.append(request)
        self.queued += 1
        self._schedule(key, slot, now_s)

    def pop_ready(self, now_s: float) -> list[Keyed]:
        """Take every request that may start now, marking them in flight.

        Args:
            now_s: the current time (``time.monotonic()`` seconds).

        Returns:
            ``[(key, request), ...]``, slot by slot in the order they became due,
            each slot's requests oldest first (at most its free concurrency; one per
            delay when it has a ``delay_s``). ``[]`` when nothing is due.
        """
        started: list[Keyed] = []
        due = []
        ready = self._ready
        at_of = self._at
        slots = self.slots
        while ready and ready[0][0] <= now_s:
            at, _, key = heapq.heappop(ready)
            if at_of.get(key) == at:
                del at_of[key]
                due.append(key)
        for key in due:
            slot = slots[key]
            requests = slot.pop_ready(now_s)
            if requests:
                self.queued -= len(requests)
                self.in_flight += len(requests)
                started.extend((key, r) for r in requests)
            # Rescheduled after this pass, so a slot due again at once waits for the next.
            self._schedule(key, slot, now_s)
        return started

    def done(self, key: str, request: Request, now_s: float) -> None:
        """The transfer of ``request`` (from :meth:`pop_ready`, slot ``key``) ended.

        Raises:
            KeyError: ``request`` is not in flight in slot ``key``.
        """
        slot = self.slots.get(key)
        if slot is None:
            raise KeyError(f"done({key!r}, {request!r}): no slot {key!r} in the table")
        slot.transfer_done(request)
        self.in_flight -= 1
        if slot.queue:
            self._schedule(key, slot, now_s)
        elif not slot.inprogress:
            self._became_idle(key, slot, now_s)

    def set_delay(self, key: str, delay_s: float, now_s: float) -> None:
        """Set slot ``key``'s delay between starts (AutoThrottle's adjustment): the next
        start is ``delay_s`` (randomized as the slot says) after the last one. Kept for
        the key (at most :data:`DELAY_MEMORY` keys) and given to the slot if it is
        evicted and created again.

        Raises:
            ValueError: ``delay_s`` is negative or NaN.
        """
        if not delay_s >= 0:
            raise ValueError(f"set_delay({key!r}): delay_s must be >= 0 seconds, got {delay_s!r}")
        delays = self._delays
        delays[key] = delay_s
        delays.move_to_end(key)
        if len(delays) > DELAY_MEMORY:
            delays.popitem(last=False)
        slot = self.slots.get(key)
        if slot is not None:
            slot.delay_s = delay_s
            self._at.pop(key, None)  # its due time may be earlier now
            self._schedule(key, slot, now_s)

    def requeue_all(self, now_s: float) -> list[Keyed]:
        """Put every request in flight back at the head of its slot's queue, in start
        order (the transfers were lost: a closed ``CurlMulti``).

        Args:
            now_s: the current time (``time.monotonic()`` seconds).

        Returns:
            ``[(key, request), ...]``, the re-queued requests. They are due at once (as
            far as each slot's delay allows) at the next :meth:`pop_ready`.
        """
        requeued: list[Keyed] = []
        for key, slot in self.slots.items():
            if slot.inprogress:
                requests = slot.requeue_inprogress()
                requeued.extend((key, r) for r in requests)
                self.in_flight -= len(requests)
                self.queued += len(requests)
                self._at.pop(key, None)
                self._schedule(key, slot, now_s)
        return requeued

    def died_on_fetch(self, key: str, request: Request) -> bool:
        """The downloader died handling the ``fetch`` of ``request`` (slot ``key``): it
        may be what killed it, so it counts as in flight in this death.

        Call it on the dying downloader's thread, before its replacement takes the
        table over (:meth:`requeue_after_crash`).

        Returns:
            True when the ``fetch`` is to be handled again by the replacement: the
            request was not in the table yet, its crash is counted now, and it is under
            ``poison_crashes`` (at it, it is kept for :meth:`requeue_after_crash` to
            return as poisoned). False when the table holds it: queued (now counted as
            in flight) or in flight already.
        """
        slot = self.slots.get(key)
        if slot is not None:
            if request in slot.inprogress:
                return False
            try:
                slot.queue.remove(request)  # O(queue), once per death
            except ValueError:
                pass
            else:
                self.queued -= 1
                slot.inprogress[request] = None
                self.in_flight += 1
                return False
        fp = request_fingerprint(request)
        n = self.crashes[fp] = self.crashes.get(fp, 0) + 1
        if n >= self.poison_crashes:
            self._poisoned.append((key, request, n))
            return False
        return True

    def requeue_after_crash(self, now_s: float) -> tuple[list[Keyed], list[tuple[str, Request, int]]]:
        """The downloader holding this table died (its transfers are lost): count one
        crash for each request in flight (:attr:`crashes`, by request fingerprint);
        take out those in flight in ``poison_crashes`` deaths or more (poison requests:
        not started again), and :meth:`requeue_all` the others.

        Args:
            now_s: the current time (``time.monotonic()`` seconds).

        Returns:
            ``(requeued, poisoned)``: ``[(key, request), ...]`` queued again at the head
            of their slots, in start order; ``[(key, request, crashes), ...]`` taken out
            of the table (and the poisoned fetch :meth:`died_on_fetch` kept), to fail
            (``DownloaderCrashed``). Requests only queued when it died are neither
            counted nor moved.
        """
        crashes = self.crashes
        poisoned, self._poisoned = self._poisoned, []
        for key, slot in list(self.slots.items()):
            for request in list(slot.inprogress):
                fp = request_fingerprint(request)
                n = crashes[fp] = crashes.get(fp, 0) + 1
                if n >= self.poison_crashes:
                    poisoned.append((key, request, n))
                    self.done(key, request, now_s)
        return self.requeue_all(now_s), poisoned

    def release_all(self) -> list[Keyed]:
        """Take every request out of the table, in flight and queued (the downloader
        stops: its transfers are aborted, its queues given back).

        Returns:
            ``[(key, request), ...]``, slot by slot, each slot's in-flight requests
            first, then its queue in order. The slots stay (empty), to be closed.
        """
        released: list[Keyed] = []
        for key, slot in self.slots.items():
            if slot.inprogress:
                released.extend((key, r) for r in slot.inprogress)
                slot.inprogress.clear()
            if slot.queue:
                released.extend((key, r) for r in slot.queue)
                slot.queue.clear()
        self.queued = self.in_flight = 0
        self._ready.clear()
        self._at.clear()
        return released

    def evict_idle(self, now_s: float) -> int:
        """Forget the slots idle (nothing queued, nothing in flight, no permit held)
        whose delay has passed by ``now_s``.

        Returns:
            How many slots were evicted.
        """
        idle = self._idle
        slots = self.slots
        evicted = 0
        while idle and idle[0][0] <= now_s:
            _, _, key = heapq.heappop(idle)
            slot = slots.get(key)
            if slot is None or slot.queue or slot.inprogress:
                continue  # evicted already, or busy again: back here when idle
            if getattr(slot, "holding", False):  # a shared slot's permits: later
                heapq.heappush(idle, (now_s + 1.0, next(self._seq), key))
                continue
            free_at = slot.free_at_s()
            if free_at > now_s:  # the delay grew meanwhile (AutoThrottle)
                heapq.heappush(idle, (free_at, next(self._seq), key))
                continue
            del slots[key]
            self._at.pop(key, None)
            close = getattr(slot, "close", None)
            if close is not None:
                close()
            evicted += 1
        self.evicted += evicted
        return evicted

    # --- questions ------------------------------------------------------------------------

    def next_ready_in_s(self, now_s: float) -> float | None:
        """Seconds until :meth:`pop_ready` can return a request again.

        Returns:
            ``0.0`` when one is due now; the seconds until the earliest delay passes;
            None when no slot can start anything until a transfer ends (nothing queued,
            or every slot with a queue at its concurrency).
        """
        ready = self._ready
        at_of = self._at
        while ready:
            at, _, key = ready[0]
            if at_of.get(key) == at:
                wait = at - now_s
                return wait if wait > 0 else 0.0
            heapq.heappop(ready)  # stale
        return None

    def next_evict_in_s(self, now_s: float) -> float | None:
        """Seconds until :meth:`evict_idle` may evict a slot (``0.0``: now), or None
        when no slot is idle."""
        if not self._idle:
            return None
        wait = self._idle[0][0] - now_s
        return wait if wait > 0 else 0.0

    def peek(self, key: str, make: bool = True) -> DownloadSlot | None:
        """Slot ``key`` as it is now, or, when the table does not hold it (evicted, or
        never seen) and ``make`` is true, the slot :meth:`enqueue` would make for it now
        (its remembered delay given), NOT stored: what ``crawler.engine.downloader.slots``
        reports for a key asked by name. Read it; never change it.

        Returns:
            a :class:`~crawlfw.core.transport.slot.DownloadSlot`, or None (not held, ``make`` false).
        """
        slot = self.slots.get(key)
        if slot is not None or not make:
            return slot
        slot = self._make(key)
        delay = self._delays.get(key)
        if delay is not None:
            slot.delay_s = delay
        return slot

    def in_flight_of(self, key: str) -> int:
        """Requests in flight in slot ``key`` (0 for a slot not in the table)."""
        slot = self.slots.get(key)
        return len(slot.inprogress) if slot is not None else 0

    def __len__(self) -> int:
        return len(self.slots)

    def __repr__(self) -> str:
        return (f"<SlotTable slots={len(self.slots)} queued={self.queued} "
                f"in_flight={self.in_flight} evicted={self.evicted}>")

    # --- inside ---------------------------------------------------------------------------

    def _make(self, key: str) -> DownloadSlot:
        if self.new_slot is None:
            raise RuntimeError(f"SlotTable: no new_slot factory to make slot {key!r}")
        return self.new_slot(key)

    def _create(self, key: str) -> DownloadSlot:
        slot = self.slots[key] = self._make(key)
        delay = self._delays.get(key)
        if delay is not None:
            slot.delay_s = delay
        return slot

    def _schedule(self, key: str, slot: DownloadSlot, now_s: float) -> None:
        """Put ``key`` in the heap at the time it may start a request (if any, and if
        not there already at that time or earlier)."""
        wait = slot.next_ready_in_s(now_s)
        if wait is None:
            return
        at = now_s + wait
        old = self._at.get(key)
        if old is not None and old <= at:
            return
        self._at[key] = at
        heapq.heappush(self._ready, (at, next(self._seq), key))

    def _became_idle(self, key: str, slot: DownloadSlot, now_s: float) -> None:
        free_at = slot.free_at_s()
        heapq.heappush(self._idle, (free_at if free_at > now_s else now_s, next(self._seq), key))
