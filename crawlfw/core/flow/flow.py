"""The crawl's flow control as a plain object: the state machine behind the EngineActor.

:class:`FlowControl` holds every counter the Engine keeps to decide what to do next and
makes those decisions; it sends nothing, starts no thread and no timer, and knows no actor.
The EngineActor calls one method per message it receives (an *event*) and turns the
returned values into messages, signals, middleware calls and Downloader starts.

Credit (``pull_requests``): the Scheduler may send at most as many requests as it was
granted; the engine grants ``max_concurrency`` minus the transfers in flight minus the
credit still unused, and none while the bodies of the responses in the spider exceed
``max_active_size`` bytes (Scrapy's ``SCRAPER_SLOT_MAX_ACTIVE_SIZE``). Start requests are
pulled from the spider (``pull_start_requests``, as many as the unused credit) only while
credit is unused, i.e. while the Scheduler is empty, and one pull at a time: Scrapy
consumes ``start_requests`` lazily in the same way.

Idleness: when start requests are exhausted, nothing is downloading, in the spider or in
the pipeline, and credit is unused, the engine asks the Scheduler (``check_idle``) with
the current *activity* token, which every event meaning work bumps; an answer whose token
is stale, or that reports pending requests, counts for nothing. The first clean answer
fires ``spider_idle``; the next one, with nothing happened in between, closes the spider
(``finished``). A ``spider_idle`` handler raising ``DontCloseSpider`` keeps it open until
a recheck timer (the actor's) clears the signal and checks again. An answer that finds
requests pending though nothing is outstanding and nothing happened is *stuck*: the
actor asks again on the next event or after a pause, never at once, and a stretch stuck
for ``stall_timeout_s`` ends the crawl (``stalled``).

Pause: no credit, no start-request pull and no idle check; requests the Scheduler still
sends against credit granted before are held, and handed back on resume (or on close).

Transfers in flight are one integer here (``downloading``: requests sent to the
downloaders and not answered yet), what the credit and the idle decision need. Which
requests they are, per slot, is kept in one place, the downloaders' slot tables
(:class:`crawlfw.core.transport.slots.SlotTable`), which also start again what a dead downloader
had in flight and fail its poison requests: every ``fetch`` is answered once
(``response_downloaded`` or ``download_failed``), whatever dies meanwhile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

if TYPE_CHECKING:
    from crawlfw.http import Request

__all__ = [
    "FlowControl",
    "NO_ACTIONS",
    "DOWNLOAD",
    "HOLD",
    "RELEASE",
    "IDLE_BUSY",
    "IDLE_CLOSE",
    "IDLE_IGNORE",
    "IDLE_SIGNAL",
    "IDLE_STALLED",
    "IDLE_REVISIT",
    "IDLE_STUCK",
    "IDLE_WAIT",
]

#: :meth:`FlowControl.next_actions`' answer: ``(credit, start_count, idle_token)``.
Actions = tuple[int, int, "int | None"]

#: :meth:`FlowControl.next_actions` when there is nothing to send.
NO_ACTIONS: Actions = (0, 0, None)


class HostReports(TypedDict, total=False):
    """What :meth:`FlowControl.take_reports` puts in a ``pull_requests`` message (its
    ``finished`` and ``delays`` fields, ``crawlfw/actors/messages.py``)."""

    finished: dict[str, int]
    delays: dict[str, float]


_Reports = TypeVar("_Reports", bound=HostReports)

# What to do with dequeued requests (FlowControl.dequeued).
#: Download them now (through the downloader middlewares).
DOWNLOAD = "download"
#: Paused: they are held (:meth:`FlowControl.resume` hands them back).
HOLD = "hold"
#: Closing: send them back to the Scheduler (``release_requests``).
RELEASE = "release"

# What an answer to check_idle means (FlowControl.idle_checked).
#: Paused, or the answer came after close: do nothing (checked again on resume).
IDLE_IGNORE = "ignore"
#: Not idle (a stale token, pending requests, work outstanding): run next_actions().
IDLE_BUSY = "busy"
#: Idle for the first time: fire ``spider_idle`` (then idle_kept_open() or next_actions()).
IDLE_SIGNAL = "signal"
#: Idle again after ``spider_idle`` with nothing happened: close the spider (``finished``).
IDLE_CLOSE = "close"
#: Idle again, but a handler kept the spider open: wait for the recheck timer.
IDLE_WAIT = "wait"
#: Nothing outstanding and nothing happened, yet the Scheduler holds requests it did not
#: dispatch: ask again on the next event or after a pause (the actor's timer), never at
#: once (that would ping-pong check_idle/idle_checked at full CPU).
IDLE_STUCK = "stuck"
#: Idle again after ``spider_idle``, but pages wait in the revisit schedule
#: (``REVISIT_ENABLED``): do not close; the Scheduler pushes them when due (against the
#: credit it holds), which wakes the Engine. No timer: an idle continuous crawl uses no CPU.
IDLE_REVISIT = "revisit"
#: Stuck for ``stall_timeout_s`` with nothing happening: report it and end the crawl
#: (``stalled``). Returned once.
IDLE_STALLED = "stalled"


class FlowControl:
    """The Engine's flow-control state and decisions (one per crawl; one thread at a time).

    Args:
        max_concurrency: ``CONCURRENT_REQUESTS``, transfers in flight at most (at least 1
            is used).
        max_active_size: ``SCRAPER_SLOT_MAX_ACTIVE_SIZE``, in bytes: no credit is granted
            while the bodies of the responses in the spider add up to more.
        stall_timeout_s: seconds a crawl may be stuck (requests pending, none
            dispatched, nothing outstanding, nothing happening) before
            :meth:`idle_checked` says :data:`IDLE_STALLED` (``STALL_TIMEOUT``); 0: never.

    State (read by the actor, changed only through the event methods):
        downloading: requests sent to the downloaders (``fetch``) and not answered
            yet, in all slots (the downloaders' slot tables say which).
        credit: requests the Scheduler was granted and has not sent yet.
        in_spider: responses and failures sent to the spider, not yet scraped.
        in_spider_bytes: the bodies of those responses, in bytes.
        in_pipeline: items sent to the pipeline, not yet processed.
        start_exhausted: the spider's start requests are all pulled.
        start_pull_pending: a ``pull_start_requests`` is unanswered.
        running: :meth:`start` was called (``start_engine``).
        closing: the close reason once closing, else None.
        paused: between :meth:`pause` and :meth:`resume`.
        held: requests dequeued while paused, in arrival order.
        activity: bumped by every event that means work; the idle check's token.
        idle_check_pending: a ``check_idle`` is unanswered.
        idle_signal_token: ``activity`` when ``spider_idle`` was last fired, else None.
        recheck_pending: a handler raised ``DontCloseSpider``; the recheck timer runs.
        idle_barriers: user actors told ``spider_idle`` that have not answered yet (no
            idle check until they have).
        stuck_token, stuck_since: the token of the first :data:`IDLE_STUCK` answer of
            the current stuck stretch and when it came (None when not stuck).
        stalled: :data:`IDLE_STALLED` was returned.
        finished: ``{host key: count}`` of requests handed out by the frontier (with
            ``request._host``) that left the download stage since the last report
            (:meth:`host_done`; sent with the next ``pull_requests``, :meth:`take_reports`).
        host_delays: ``{slot key: seconds}``, AutoThrottle's delays set since the last
            report (filled by ``crawler.engine.downloader.set_slot_delay``).
    """

    def __init__(self, max_concurrency: int, max_active_size: int,
                 stall_timeout_s: float = 0.0) -> None:
        self.max_concurrency = max(1, max_concurrency)
        self.max_active_size = max_active_size
        self.downloading = 0
        self.credit = 0
        self.in_spider = 0
        self.in_spider_bytes = 0
        self.in_pipeline = 0
        self.start_exhausted = False
        self.start_pull_pending = False
        self.running = False
        self.closing: str | None = None
        self.paused = False
        self.held: list[Request] = []
        self.activity = 0
        self.idle_check_pending = False
        self.idle_signal_token: int | None = None
        self.recheck_pending = False
        self.idle_barriers = 0
        self.stall_timeout_s = stall_timeout_s
        self.stuck_token: int | None = None
        self.stuck_since: float | None = None
        self.stalled = False
        self.finished: dict[str, int] = {}
        self.host_delays: dict[str, float] = {}

    # --- what to send -------------------------------------------------------------------

    def next_actions(self) -> Actions:
        """Decide what to send after an event, and count it as sent.

        Returns:
            ``(credit, start_count, idle_token)``: ``credit`` > 0 is to be granted to the
            Scheduler (``pull_requests``); ``start_count`` > 0 start requests are to be
            pulled from the spider (``pull_start_requests``); ``idle_token`` not None is
            the token of a ``check_idle`` to send. :data:`NO_ACTIONS` when there is
            nothing to send (always before :meth:`start`, while closing or paused).
        """
        if not self.running or self.closing or self.paused:
            return NO_ACTIONS
        free = self.max_concurrency - self.downloading - self.credit
        if free > 0 and self.in_spider_bytes <= self.max_active_size:
            self.credit += free
        else:
            free = 0
        start = 0
        if self.credit > 0 and not self.start_exhausted and not self.start_pull_pending:
            self.start_pull_pending = True
            start = self.credit
        token = None
        if not self.idle_check_pending and self.looks_idle():
            self.idle_check_pending = True
            token = self.activity
        if free or start or token is not None:
            return free, start, token
        return NO_ACTIONS

    def looks_idle(self) -> bool:
        """True when nothing is outstanding on the engine's side: start requests
        exhausted, no transfer, no response in the spider, no item in the pipeline, and
        credit unused (the Scheduler had nothing to send)."""
        return (
            self.start_exhausted
            and not self.start_pull_pending
            and self.downloading == 0
            and self.in_spider == 0
            and self.in_pipeline == 0
            and self.credit > 0
            and not self.idle_barriers
        )

    # --- events -------------------------------------------------------------------------

    def start(self) -> None:
        """The engine starts (``start_engine``): from now on :meth:`next_actions` acts."""
        self.running = True

    def dequeued(self, requests: list[Request]) -> str:
        """The Scheduler sent ``requests`` (a list) against credit.

        Returns:
            :data:`DOWNLOAD` (download them), :data:`HOLD` (paused: kept in ``held``) or
            :data:`RELEASE` (closing: send them back to the Scheduler).
        """
        self.activity += 1
        self.credit -= len(requests)
        if self.closing:
            return RELEASE
        if self.paused:
            self.held.extend(requests)
            return HOLD
        return DOWNLOAD

    def transfer_started(self) -> None:
        """A request was sent to a downloader (``fetch``)."""
        self.downloading += 1

    def transfer_done(self) -> bool:
        """A downloader answered a ``fetch`` (a response or a failure).

        Returns:
            False while closing (:meth:`close` stopped counting transfers: the request
            goes back to the Scheduler); True otherwise. (An answer with no transfer
            counted, which a downloader never sends, changes no count.)
        """
        self.activity += 1
        if self.closing:
            return False
        if self.downloading > 0:
            self.downloading -= 1
        return True

    def host_done(self, request: Request) -> None:
        """``request`` left the download stage (downloaded, failed, dropped or answered
        by a middleware, replaced by a redirect or retry, parked): if the frontier
        handed it out for a host (``request._host``), count it for that host, once (the
        mark is cleared)."""
        host = request._host
        if host is not None:
            request._host = None
            finished = self.finished
            finished[host] = finished.get(host, 0) + 1

    def take_reports(self, message: _Reports) -> _Reports:
        """Move the pending ``finished`` counts and ``host_delays`` into ``message``
        (a ``pull_requests``) and return it."""
        if self.finished:
            message["finished"], self.finished = self.finished, {}
        if self.host_delays:
            message["delays"] = dict(self.host_delays)
            self.host_delays.clear()  # the same dict: the facade writes into it
        return message

    def reports_pending(self) -> bool:
        """True when there are host reports to send and the Scheduler holds credit it
        could use on them (so a ``pull_requests`` of count 0 is worth sending)."""
        return bool((self.finished or self.host_delays) and self.credit > 0
                    and self.running and not self.closing)

    def sent_to_spider(self, size: int = 0) -> None:
        """A response of ``size`` body bytes (0 for a failure) was sent to the spider."""
        self.in_spider += 1
        self.in_spider_bytes += size

    def scraped(self, size: int, items: int, responses: int = 1) -> None:
        """The spider finished with a response of ``size`` body bytes (0 for a failure),
        which produced ``items`` items, now in the pipeline (or with ``responses`` of
        them, their sizes and items summed)."""
        self.activity += 1
        self.in_spider -= responses
        self.in_spider_bytes -= size
        self.in_pipeline += items

    def items_added(self, count: int) -> None:
        """``count`` items were sent to the pipeline from outside the spider (user
        actors' ``add_items``)."""
        self.activity += 1
        self.in_pipeline += count

    def items_processed(self, count: int) -> None:
        """The pipeline is done with ``count`` items."""
        self.activity += 1
        self.in_pipeline -= count

    def start_pulled(self, exhausted: bool) -> None:
        """The spider answered ``pull_start_requests``; ``exhausted``: it has no more."""
        self.activity += 1
        self.start_pull_pending = False
        self.start_exhausted = exhausted

    def crawl_requested(self) -> None:
        """A request was sent to the Scheduler from outside (``crawl``): work to wait for."""
        self.activity += 1

    def idle_checked(self, token: int, pending: int, now: float | None = None,
                     revisits: int = 0) -> str:
        """The Scheduler answered ``check_idle`` sent with ``token``; ``pending``: it
        still holds requests.

        Args:
            token: the answer's token.
            pending: requests the Scheduler holds (0: none).
            now: a monotonic time in seconds, for the stall timeout (None: not timed).
            revisits: pages waiting in the revisit schedule (``REVISIT_ENABLED``).

        Returns:
            :data:`IDLE_IGNORE` (paused), :data:`IDLE_BUSY` (not idle: call
            :meth:`next_actions`), :data:`IDLE_STUCK` (requests pending, none
            dispatched, nothing else outstanding or happened since the check was sent:
            call :meth:`next_actions` on the next event or after a pause, not at once),
            :data:`IDLE_STALLED` (stuck for ``stall_timeout_s`` seconds: end the crawl;
            once), :data:`IDLE_SIGNAL` (fire ``spider_idle``, then call
            :meth:`idle_kept_open` if a handler raised ``DontCloseSpider``, else
            :meth:`next_actions`), :data:`IDLE_CLOSE` (close the spider, ``finished``),
            :data:`IDLE_WAIT` (kept open: wait for the recheck timer) or
            :data:`IDLE_REVISIT` (idle, pages wait for their revisit: wait for the
            Scheduler).
        """
        self.idle_check_pending = False
        if self.paused:
            return IDLE_IGNORE
        if token != self.activity or not self.looks_idle():
            return IDLE_BUSY
        if pending:
            if self.stuck_token != token:  # stuck since this token: nothing happened
                self.stuck_token, self.stuck_since = token, now
            elif (self.stall_timeout_s > 0 and now is not None and self.stuck_since is not None
                  and now - self.stuck_since >= self.stall_timeout_s and not self.stalled):
                self.stalled = True
                return IDLE_STALLED
            return IDLE_STUCK
        if self.idle_signal_token == self.activity:
            if self.recheck_pending:
                return IDLE_WAIT
            return IDLE_REVISIT if revisits else IDLE_CLOSE
        self.idle_signal_token = self.activity
        return IDLE_SIGNAL

    def idle_barriers_sent(self, count: int) -> None:
        """``spider_idle`` was told to ``count`` user actors: not idle until each
        answered (:meth:`idle_barrier_passed`), so what they add is waited for."""
        self.idle_barriers += count

    def idle_barrier_passed(self) -> None:
        """A user actor answered its ``idle_barrier``; what it added before was counted
        already (``crawl_requested``, ``items_added``: new activity)."""
        if self.idle_barriers > 0:
            self.idle_barriers -= 1

    def idle_kept_open(self) -> None:
        """A ``spider_idle`` handler raised ``DontCloseSpider``: no close until
        :meth:`idle_rechecked`."""
        self.recheck_pending = True

    def idle_released(self) -> None:
        """``spider_idle`` fired and no handler raised ``DontCloseSpider``: a recheck
        still pending from an earlier turn no longer holds the spider open, so the next
        clean idle check closes it at once (Scrapy 2: one ``spider_idle`` per idle turn,
        no close delay)."""
        self.recheck_pending = False

    def idle_rechecked(self) -> None:
        """The recheck timer fired: the next clean idle check fires ``spider_idle`` again."""
        self.recheck_pending = False
        self.idle_signal_token = None

    def pause(self) -> bool:
        """Pause (``pause_crawl``). Returns True if the crawl was running and is now
        paused (False: already paused, or closing)."""
        if self.paused or self.closing:
            return False
        self.paused = True
        return True

    def resume(self) -> list[Request] | None:
        """Resume (``resume_crawl``).

        Returns:
            the list of requests held while paused, to download now in order, or None
            when the crawl was not paused (nothing to do).
        """
        if not self.paused:
            return None
        self.paused = False
        self.activity += 1
        held, self.held = self.held, []
        return held

    def close(self, reason: str) -> list[Request] | None:
        """Start closing with ``reason`` (``finish_reason``).

        Returns:
            None when already closing (nothing to do); else the list of requests to send
            back to the Scheduler: every request held while paused. Transfers in flight
            are no longer counted (``downloading`` drops to 0): a downloader's answer
            from now on sends its request back (:meth:`transfer_done` says False), and
            what the downloaders still hold when they stop they give back themselves
            (``SlotTable.release_all``).
        """
        if self.closing:
            return None
        self.closing = reason
        abandoned, self.held = self.held, []
        self.downloading = 0
        return abandoned

    def status(self) -> dict[str, Any]:
        """The figures of ``get_status`` (``EngineStatus``): ``running``, ``closing``,
        ``downloading``, ``in_spider``,
        ``in_pipeline``, ``start_requests_exhausted``, ``credit``, ``paused``, ``held``
        (requests held while paused)."""
        return {
            "running": self.running,
            "closing": self.closing,
            "downloading": self.downloading,
            "in_spider": self.in_spider,
            "in_pipeline": self.in_pipeline,
            "start_requests_exhausted": self.start_exhausted,
            "credit": self.credit,
            "paused": self.paused,
            "held": len(self.held),
        }
