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

from crawlfw.core.transport.hostpolicy import DELAY_MEMORY  # slots whose AutoThrottle delay is kept
from crawlfw.core.transport.slot import DownloadSlot

__all__ = ["SlotTable", "DELAY_MEMORY"]


class SlotTable:
    """The download slots of one downloader, keyed by slot key.

    Args:
        new_slot: ``new_slot(key) -> DownloadSlot``: builds the slot for a key seen for
            the first time (or again after its eviction), e.g.
            ``lambda key: DownloadSlot.from_settings(settings, spider)``.

    Attributes:
        slots: ``{key: DownloadSlot}``, the slots alive (active, or idle within their
            delay). Read it; change it only through the methods.
        queued: requests queued in all slots (not started yet).
        in_flight: requests started (returned by :meth:`pop_ready`) and not yet
            :meth:`done`.
        evicted: slots evicted so far (a count).
    """

    def __init__(self, new_slot: Callable[[str], DownloadSlot]):
        self._new_slot = new_slot
        self.slots: dict[str, DownloadSlot] = {}
        self.queued = 0
        self.in_flight = 0
        self.evicted = 0
        self._ready: list = []  # heap of (at_s, seq, key): slots that may start then
        self._at: dict[str, float] = {}  # key -> at_s of its live _ready entry
        self._idle: list = []  # heap of (evictable at_s, seq, key)
        self._seq = itertools.count()
        self._delays: OrderedDict[str, float] = OrderedDict()  # set_delay, remembered

    # --- events ---------------------------------------------------------------------------

    def enqueue(self, key: str, request, now_s: float) -> None:
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

    def pop_ready(self, now_s: float) -> list:
        """Take every request that may start now, marking them in flight.

        Args:
            now_s: the current time (``time.monotonic()`` seconds).

        Returns:
            ``[(key, request), ...]``, slot by slot in the order they became due,
            each slot's requests oldest first (at most its free concurrency; one per
            delay when it has a ``delay_s``). ``[]`` when nothing is due.
        """
        started = []
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

    def done(self, key: str, request, now_s: float) -> None:
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

    def requeue_all(self, now_s: float) -> list:
        """Put every request in flight back at the head of its slot's queue, in start
        order (the transfers were lost: a closed ``CurlMulti``).

        Args:
            now_s: the current time (``time.monotonic()`` seconds).

        Returns:
            ``[(key, request), ...]``, the re-queued requests. They are due at once (as
            far as each slot's delay allows) at the next :meth:`pop_ready`.
        """
        requeued = []
        for key, slot in self.slots.items():
            if slot.inprogress:
                requests = slot.requeue_inprogress()
                requeued.extend((key, r) for r in requests)
                self.in_flight -= len(requests)
                self.queued += len(requests)
                self._at.pop(key, None)
                self._schedule(key, slot, now_s)
        return requeued

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
        slot = self._new_slot(key)
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

    def _create(self, key: str) -> DownloadSlot:
        slot = self.slots[key] = self._new_slot(key)
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
