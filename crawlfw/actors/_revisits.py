"""The SchedulerActor's part for continuous crawling (``REVISIT_ENABLED``, issue 32):
the revisit schedule's messages (``revisit_visited``, ``revisits_due``), its alarm, its
figures, and the revisits a redirect moved. A mixin of
:class:`~crawlfw.actors.scheduler.SchedulerActor` (split from it by what it does; it uses
the actor's ``frontier``, ``crawler``, ``spider``, ``_fail``, ``_dispatch``,
``_maybe_checkpoint``); the schedule itself is
:mod:`crawlfw.core.frontier.revisit`'s. How it works: ARCHITECTURE.md, "Continuous
crawling".
"""

import logging
import sqlite3
import threading
import time

from crawlfw.actors import messages
from crawlfw.core import _faults
from crawlfw.core.frontier.frontier import FrontierError

logger = logging.getLogger("crawlfw.actors.scheduler")

__all__ = ["REVISIT_BATCH", "REVISIT_POLL_S", "RevisitsMixin"]

#: What a failing frontier raises (disk full, I/O error, a damaged file).
_FRONTIER_ERRORS = (sqlite3.Error, FrontierError, OSError)

#: Most due revisits pushed into the frontier per message handled (more wait for the
#: next ``revisits_due``, told at once, so other messages are handled in between).
REVISIT_BATCH = 1024

#: Shared frontier with ``REVISIT_ENABLED``: seconds between two looks at the shared
#: schedule's earliest due time (other workers add records; one that died leaves its due
#: records to the others).
REVISIT_POLL_S = 1.0


class RevisitsMixin:
    """The revisit schedule's side of the SchedulerActor (see the module docstring)."""

    def _init_revisits(self, scheduler) -> None:
        """The revisit state (``scheduler``: the actor's scheduler object, whose ``open``
        builds ``revisits``, read in ``on_start``)."""
        # The revisit schedule (REVISIT_ENABLED; the scheduler's, built by its open()).
        self.revisits = None
        self._revisit_at = None  # wall-clock time the revisits_due alarm rings
        self._revisit_timer = None  # the _Alarm, made at the first arming
        # Pages due within this many seconds of each other share one wake: 2 % of the
        # shortest interval a page starts with or adapts to (REVISIT_INTERVAL or
        # REVISIT_INTERVAL_MIN), between 10 ms and 1 s (late by that much at most).
        config = getattr(scheduler, "revisit", None)
        self._revisit_slack_s = (
            min(1.0, max(0.01, 0.02 * min(config.interval_s, config.min_s)))
            if config is not None else 0.01)
        self._revisit_outstanding: set[str] = set()  # fingerprints pushed, not answered
        self._revisit_polled = 0.0  # shared frontier: when the schedule was last looked at

    def handle_revisit_visited(self, message: messages.RevisitVisited) -> None:
        """Apply each visit's outcome to the schedule (due again after its interval,
        adapted; gone; moved by a redirect; dropped)."""
        revisits = self.revisits
        if revisits is None or self.failed:
            return
        now = revisits.clock()
        stats, spider = self.crawler.stats, self.spider
        outstanding = self._revisit_outstanding
        try:
            for visit in message["visits"]:
                outstanding.discard(visit["fp"])
                if visit["moved_from"]:
                    outstanding.discard(visit["moved_from"])
                    stats.inc_value("revisit/moved", spider=spider)
                result = revisits.visited(visit, now)
                if result == "dropped":
                    stats.inc_value("revisit/dropped", spider=spider)
                elif result == "not_stored":
                    self._not_stored(visit["request"])
                elif result == "stale":  # shared: a later visit's outcome is in already
                    stats.inc_value("revisit/stale", spider=spider)
                elif result == "conflict":
                    logger.warning("The revisit outcome of %(request)s was not applied: "
                                   "other workers kept changing its record",
                                   {"request": visit["request"]}, extra={"spider": spider})
                    stats.inc_value("revisit/conflicts", spider=spider)
        except _FRONTIER_ERRORS as e:
            self._fail(e)
            return
        self._revisit_figures()
        self._arm_revisits(now)
        if self.durable:
            self._maybe_checkpoint()

    def _not_stored(self, request):
        """A page crawled but not scheduled: its request cannot be stored (counted in
        ``revisit/not_stored``; the first one logged as a WARNING)."""
        stats = self.crawler.stats
        if not stats.get_value("revisit/not_stored", spider=self.spider):
            logger.warning("%(request)s is not scheduled for revisits: its request cannot "
                           "be stored (a callback or errback that is not a method of the "
                           "spider, or a meta or cb_kwargs value that cannot be written); "
                           "further ones are counted in revisit/not_stored",
                           {"request": request}, extra={"spider": self.spider})
        stats.inc_value("revisit/not_stored", spider=self.spider)

    def handle_revisits_due(self, message: messages.RevisitsDue) -> None:
        """The earliest record is due (the timer :meth:`_arm_revisits` started): push the
        due records into the frontier, :data:`REVISIT_BATCH` at a time."""
        if self.revisits is None or self.failed:
            return
        self._revisit_at = None
        revisits = self.revisits
        now = revisits.clock()
        try:
            # due within the slack too: they would ring the alarm again at once
            records = revisits.take_due(now + self._revisit_slack_s, REVISIT_BATCH)
            if revisits.still_queued:  # the shared schedule's claims skipped those
                self.crawler.stats.inc_value("revisit/still_queued", revisits.still_queued,
                                             spider=self.spider)
            if records:
                _faults.hit("revisit.claimed")  # crash tests: claimed, not pushed
            requests = []
            taken = []
            # (a shared frontier's revisit may be answered by another worker: this
            # worker's set does not know when it is; there the claims hold)
            outstanding = self._revisit_outstanding if not self.shared else ()
            for record in records:
                if record.fp.hex() in outstanding:
                    # its last revisit is still queued (a backlog longer than the
                    # interval): one request per page at a time, or both answers would
                    # be compared with the same old digest (an item twice); the visit's
                    # outcome sets the due time again
                    self.crawler.stats.inc_value("revisit/still_queued", spider=self.spider)
                    continue
                try:
                    requests.append(self.revisits.request_of(record))
                except (AttributeError, ValueError) as e:  # the spider lost a method
                    logger.error("Page not revisited any more: its stored request "
                                 "cannot be rebuilt (%(error)s)", {"error": e},
                                 extra={"spider": self.spider})
                    self.revisits.remove(record.fp)
                    continue
                taken.append(record)
                if not self.shared:
                    self._revisit_outstanding.add(record.fp.hex())
            if requests:
                queued = self.frontier.push_many(requests)
                revisits.pushed([r for r, ok in zip(taken, queued, strict=True) if ok])
                self.crawler.stats.inc_value("revisit/requests", len(requests),
                                             spider=self.spider)
        except _FRONTIER_ERRORS as e:
            self._fail(e)
            return
        if len(records) >= REVISIT_BATCH:
            self.actor_ref.tell({"type": "revisits_due"})  # the rest, after other messages
        else:
            self._arm_revisits(now)
        self._revisit_figures()
        self._dispatch()

    def _arm_revisits(self, now):
        """Set the alarm telling this actor ``revisits_due`` at the schedule's earliest
        due time (in the schedule's clock, read after it: ``now`` is not used) plus the
        slack (:attr:`_revisit_slack_s`, so pages due at nearby times share one wake),
        unless it rings by then; none when the schedule is empty. The crawl uses no CPU meanwhile: one alarm thread waits on
        a condition, no polling and no thread per wake."""
        due = self.revisits.next_due()
        if due is None:
            return
        now = self.revisits.clock()  # (the shared schedule's clock: measured just now)
        at = due + self._revisit_slack_s
        if self._revisit_at is not None and self._revisit_at <= at:
            return  # the alarm rings first
        self._revisit_at = at
        if self._revisit_timer is None:
            self._revisit_timer = _Alarm(self.actor_ref, {"type": "revisits_due"})
        self._revisit_timer.set(max(at - now, 0.0))

    def _revisit_figures(self):
        """The schedule's gauges in the stats (``crawlfw status`` shows them):
        ``revisit/scheduled`` pages, ``revisit/due_now`` (pushed, not answered yet),
        ``revisit/next_due`` (wall-clock time of the earliest one not pushed),
        ``revisit/memory_bytes`` (the in-memory schedule)."""
        revisits, stats, spider = self.revisits, self.crawler.stats, self.spider
        stats.set_value("revisit/scheduled", len(revisits), spider=spider)
        in_flight = revisits.in_flight()
        stats.set_value("revisit/due_now", len(self._revisit_outstanding)
                        if in_flight is None else in_flight, spider=spider)
        due = revisits.next_due()
        stats.set_value("revisit/next_due", round(due, 3) if due is not None else None,
                        spider=spider)
        if not revisits.durable:
            stats.set_value("revisit/memory_bytes", revisits.memory_bytes(), spider=spider)
            disk_bytes = getattr(revisits, "disk_bytes", None)
            if disk_bytes is not None:
                stats.set_value("revisit/disk_bytes", disk_bytes(), spider=spider)

    @staticmethod
    def _moved_revisits(requests):
        """The indexes of revisits a redirect moved to another URL, made to go through
        the dupefilter (a revisit itself passes it: ``dont_filter``, which the redirect
        copied): the new URL is a new URL. Returns {index: the old page's fingerprint}."""
        from crawlfw.core.frontier.revisit import REVISIT_META
        from crawlfw.utils.request import request_fingerprint

        moved = {}
        for i, request in enumerate(requests):
            meta = request._meta
            if meta is None:
                continue
            state = meta.get(REVISIT_META)
            if state is not None and request_fingerprint(request) != state[0]:
                request.dont_filter = False
                moved[i] = state[0]
        return moved

    def _moved_to_known_pages(self, requests, queued, moved):
        """A revisit redirected to a URL the crawl already knows (the dupefilter dropped
        it): that page has its own record; the old one is dropped (no revisits of a
        redirect, no item twice)."""
        for i, old_fp in moved.items():
            if not queued[i]:
                self._revisit_outstanding.discard(old_fp)
                self.revisits.visited({"fp": old_fp, "outcome": "forget", "moved_from": None},
                                      self.revisits.clock())
                self.crawler.stats.inc_value("revisit/dropped", spider=self.spider)


class _Alarm(threading.Thread):
    """Tells an actor ``message`` once the delay last :meth:`set` has passed; one thread
    for all the wakes of a crawl (``threading.Timer`` starts a thread per wake), waiting
    on a condition without polling.

    Args:
        ref: the actor to tell.
        message: what to tell it (the same dict each time: it carries only ``type``).
    """

    def __init__(self, ref, message):
        super().__init__(name="revisit-alarm", daemon=True)
        self.ref = ref
        self.message = message
        self._cond = threading.Condition()
        self._at: float | None = None  # monotonic seconds
        self._stopped = False
        self.start()

    def set(self, delay_s: float) -> None:
        """Ring in ``delay_s`` seconds (replacing the time set before)."""
        with self._cond:
            self._at = time.monotonic() + delay_s
            self._cond.notify()

    def stop(self) -> None:
        """Never ring again; the thread ends."""
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def run(self):
        cond = self._cond
        while True:
            with cond:
                while not self._stopped:
                    if self._at is None:
                        cond.wait()
                        continue
                    wait_s = self._at - time.monotonic()
                    if wait_s <= 0:
                        self._at = None
                        break
                    cond.wait(wait_s)
                if self._stopped:
                    return
            try:
                self.ref.tell(dict(self.message))
            except Exception:  # the actor stopped
                return


