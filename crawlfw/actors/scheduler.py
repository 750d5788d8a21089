"""SchedulerActor: owns the crawl's frontier (through a
:class:`crawlfw.core.scheduler.Scheduler`).

Receives ``enqueue_requests`` (from the Engine and the SpiderRunner), ``release_requests``
and ``pull_requests`` (credit) from the Engine, and ``check_idle``; sends
``requests_dequeued`` and ``idle_checked`` to the Engine. Fires ``request_scheduled`` /
``request_dropped``.

The frontier keeps one queue per host: it leases only requests of ready hosts (below
their concurrency, past their delay), so credit the Engine granted may stay unused
while every host with queued requests is busy. ``pull_requests`` carries the transfers
that ended per host since the last one (``finished``) and AutoThrottle's new delays
(``delays``), which make hosts ready again; when credit is left and a host waits only for
its delay, the actor tells itself ``dispatch_due`` by a timer at that time.

With a durable frontier (``JOBDIR``) it also drives checkpoints (every
``FRONTIER_CHECKPOINT_INTERVAL`` seconds a ``checkpoint`` to the SpiderRunner, back as
``checkpoint_reached``, then one commit): the protocol is ARCHITECTURE.md's, "Lose
nothing".

Given the downloader pool, it has host names resolved ahead (issue 31): each host that
gets a queued request while it had nothing queued or in flight (the frontier's
``HostQueues.on_new_host``) is told, batched per push, to the downloader serving it
(``resolve_ahead``), whose resolver looks the name up at once within its bounds, so the
answer waits in its cache when the host's first transfer starts. Not with a shared
frontier (its hosts may be leased by another worker, which resolves for itself).

A ``check_idle`` carrying ``stalled_s`` (the engine found the crawl stuck past
``STALL_TIMEOUT``: requests pending, none dispatched, nothing in flight) makes it log
what the frontier holds (``describe_pending``: counts, the oldest pending request and
who holds its lease) and tell the Supervisor ``stop_crawl`` with ``stalled``.

With a shared frontier (``FRONTIER_URL``, several workers) a timer tells it
``frontier_tick`` every :data:`TICK_S` seconds: it renews its leases, leases what other
workers pushed while it has unused credit, and answers a ``check_idle`` it held back
(the decision is :class:`~crawlfw.core.frontier.shared_idle.SharedIdlePolicy`'s). There,
``enqueue_requests`` messages that arrive in a burst are pushed together, in one Redis
round trip, before any other message is handled. Why and how: ARCHITECTURE.md, "One
crawl, many workers".

With ``REVISIT_ENABLED`` it owns the revisit schedule too (the Scheduler's
``revisits``, :mod:`crawlfw.core.frontier.revisit`): ``revisit_visited`` from the
SpiderRunner applies each page's outcome; a timer at the earliest due time tells it
``revisits_due``, and it pushes the due pages into the frontier as conditional-GET
requests that pass the dupefilter; ``idle_checked`` carries ``revisits`` (pages
scheduled), so the Engine waits for them instead of finishing the crawl.
"""

import logging
import queue
import re
import sqlite3
import threading
import time
from typing import Any

from crawlfw import signals
from crawlfw.actors import messages
from crawlfw.actors._base import CrawlActor, PeekableInbox
from crawlfw.actors._revisits import REVISIT_POLL_S, RevisitsMixin
from crawlfw.core import _faults
from crawlfw.core.frontier.api import FrontierBase
from crawlfw.core.frontier.frontier import FrontierError
from crawlfw.core.frontier.hostqueues import HostQueues
from crawlfw.core.frontier.redis_control import SharedCommands
from crawlfw.core.frontier.redis_link import FrontierStopping
from crawlfw.core.frontier.shared_idle import IDLE_CHECKPOINT, IDLE_HOLD, SharedIdlePolicy
from crawlfw.core.transport.dns import no_lookup_needed
from crawlfw.resolver import resolves_ahead

logger = logging.getLogger(__name__)

__all__ = ["SchedulerActor"]

#: Seconds between two publications of a shared crawl's figures (``frontier/shared``).
FIGURES_INTERVAL_S = 2.0

#: What a failing frontier raises (disk full, I/O error, a damaged file).
_FRONTIER_ERRORS = (sqlite3.Error, FrontierError, OSError)

#: Seconds between ``frontier_tick`` messages with a shared frontier.
TICK_S = 0.1

#: Seconds a ``dispatch_due`` timer may fire after the time a host becomes ready, so
#: that hosts ready at nearby times share one timer.
WAKE_SLACK_S = 0.01

#: Shared frontier: most requests of coalesced ``enqueue_requests`` messages pushed in
#: one Redis call.
PUSH_BATCH = 512

#: A host key that is a host name worth resolving ahead: dotted, of the characters of
#: a (punycode) host name. A ``download_slot`` of another shape is no name to resolve.
_HOST_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)+\.?")


class SchedulerActor(RevisitsMixin, CrawlActor):
    """Args:
    crawler: the Crawler (``signals``, ``spider``, ``settings``).
    scheduler: a scheduler object: a :class:`crawlfw.core.scheduler.Scheduler` (its
        ``frontier`` is used) or any object with Scrapy's scheduler interface
        (``open``, ``close``, ``enqueue_request``, ``next_request``, ``__len__``).
    downloaders: the crawl's :class:`~crawlfw.actors.downloader.DownloaderPool`, told
        ``resolve_ahead`` for new hosts; None: no name is resolved ahead.
    **kw: ``CrawlActor`` arguments.
    """

    role = "scheduler"

    def __init__(self, crawler, scheduler, downloaders=None, **kw):
        self.frontier = frontier_of(scheduler)
        # read by _create_actor_inbox, which CrawlActor.__init__ calls
        self.shared = getattr(self.frontier, "shared", False)
        super().__init__(settings=crawler.settings, **kw)
        self.crawler = crawler
        self.spider = crawler.spider
        self.scheduler = scheduler
        self.durable = self.frontier.durable
        self.credit = 0
        self.reply_to = None
        self.failed = False
        # Checkpoints (durable frontier only).
        self.spider_runner = None
        self.checkpoint_interval_s = crawler.settings.getfloat("FRONTIER_CHECKPOINT_INTERVAL", 1.0)
        self.epoch = 0
        #: epoch -> the ``checkpoint_reached`` parts received so far (several Exporters)
        self._checkpoint_parts: dict[int, list] = {}
        self.checkpoint_pending = False
        self.last_checkpoint = time.monotonic()
        # A shared frontier (several workers, self.shared): heartbeat, polling,
        # idleness in Redis.
        self.idle_check = None  # a check_idle held back (shared frontier)
        self.last_renew = time.monotonic()
        self.last_figures = 0.0  # shared frontier: when crawl_figures was last called
        self._commands = None  # shared frontier: SharedCommands (pause, resume, stop)
        self.idle_policy = SharedIdlePolicy(TICK_S) if self.shared else None
        self._ticker = None
        self._coalesced = []  # shared frontier: enqueue_requests waiting to be pushed
        self._coalesced_n = 0
        # Shared frontier with FRONTIER_MAX_OPEN_LEASES: a checkpoint once half that many
        # leases were handed out since the last one, so finished ones are acked before
        # the limit stops the leasing.
        self.checkpoint_leases = getattr(self.frontier, "max_open", 0) // 2 if self.shared else 0
        self.handed_out = 0  # leases handed out since the last checkpoint started
        # Per-host queues: the frontier is told the transfers finished per host (with
        # pull_requests) and the actor wakes itself when a host's delay passes.
        self.per_host = hasattr(self.frontier, "hosts_finished")
        self._wake_at = None  # when the dispatch_due timer started last fires
        self._wake_timer = None
        self._init_revisits(scheduler)
        # Names resolved ahead: the hosts new to the frontier since the last push, told
        # to their downloaders after it (HostQueues.on_new_host appends to this list).
        self._downloaders = downloaders
        self._new_hosts = []  # (str host keys)
        hosts = getattr(self.frontier, "hosts", None)
        if (downloaders is not None and not self.shared and isinstance(hosts, HostQueues)
                and resolves_ahead(crawler.settings)):
            hosts.on_new_host = self._new_hosts.append

    def on_start(self):
        _faults.hit("scheduler.open")  # crash tests: Redis dies now
        try:
            self.scheduler.open(self.spider)
        except _FRONTIER_ERRORS as e:  # one ERROR line, the crawl ends frontier_failed
            self._fail(e)
            return
        if self.shared:
            self._ticker = _Ticker(self.actor_ref, TICK_S)
            self._ticker.start()
            self._follow_shared_commands(getattr(self.frontier, "opened_control", None))
        self.revisits = getattr(self.scheduler, "revisits", None)
        if self.revisits is not None:
            try:
                self._revisit_figures()
                self._arm_revisits(time.time())  # a resumed job's schedule goes on
            except _FRONTIER_ERRORS as e:
                self._fail(e)

    def on_stop(self):
        if self._ticker is not None:
            self._ticker.stop()
        if self._wake_timer is not None:
            self._wake_timer.cancel()
        if self._revisit_timer is not None:
            self._revisit_timer.stop()
        self._push_coalesced()
        try:
            left = self.scheduler.close("finished")
        except _FRONTIER_ERRORS as e:
            self._fail(e)
            return
        if left:
            self.crawler.stats.set_value("scheduler/unprocessed", len(left), spider=self.spider)

    # --- messages -----------------------------------------------------------------------

    def handle_enqueue_requests(self, message: messages.EnqueueRequests) -> None:
        if self.failed:
            return
        if self.shared and "start" not in message:
            # A burst: push it with the enqueue_requests right behind it, in one round trip.
            self._coalesced.append(message)
            self._coalesced_n += len(message["requests"])
            if self._coalesced_n < PUSH_BATCH and self._next_is_enqueue():
                return
            self._push_coalesced()
        else:
            self._push((message,))
        self._dispatch()

    def _create_actor_inbox(self) -> "queue.SimpleQueue[Any]":  # type: ignore[override]  # pykka hook, reads self.shared
        """A :class:`~crawlfw.actors._base.PeekableInbox` with a shared frontier
        (:meth:`_next_is_enqueue` looks at the message at its head), else the base
        class's ``SimpleQueue``."""
        return PeekableInbox() if self.shared else queue.SimpleQueue()

    def _next_is_enqueue(self) -> bool:
        """True when the next message in the inbox is an ``enqueue_requests`` (so no
        other message can be handled before the coalesced ones are pushed)."""
        try:
            message = self.actor_inbox.peek().message  # type: ignore[attr-defined]  # PeekableInbox
        except (queue.Empty, AttributeError):
            return False
        return message.__class__ is dict and message.get("type") == "enqueue_requests"

    def _push_coalesced(self):
        messages, self._coalesced, self._coalesced_n = self._coalesced, [], 0
        if not messages:
            return
        if len(messages) == 1:
            self._push(messages)
            return
        # One push per transient_ok value (the crawl's own requests may stay in memory).
        for transient_ok in (False, True):
            group = [m for m in messages if bool(m.get("transient_ok")) is transient_ok]
            if group:
                self._push(group)

    def _push(self, messages):
        """Push the requests of ``messages`` (``enqueue_requests`` alike in
        ``transient_ok``; ``start`` only in a lone message) in one ``push_many``, fire
        ``request_scheduled``/``request_dropped``, then ack their ``done`` leases."""
        if self.failed:
            return
        first = messages[0]
        if len(messages) == 1:
            requests = first["requests"]
        else:
            requests = [r for m in messages for r in m["requests"]]
        manager = self.crawler.signals
        moved = self._moved_revisits(requests) if self.revisits is not None else None
        try:
            queued = self.frontier.push_many(requests,
                                             transient_ok=first.get("transient_ok", False),
                                             start=first.get("start"))
            # one test per batch: with no receiver, no per-request send at all
            if manager.has_receivers(signals.request_scheduled, signals.request_dropped):
                send = manager.send_catch_log
                for request, ok in zip(requests, queued, strict=True):
                    send(signals.request_scheduled if ok else signals.request_dropped,
                         request=request, spider=self.spider)
            if moved:
                self._moved_to_known_pages(requests, queued, moved)
            for message in messages:
                done = message.get("done")
                if done:
                    self.frontier.ack(done)
        except _FRONTIER_ERRORS as e:
            self._fail(e)
        if self._new_hosts:
            self._resolve_ahead()

    def _resolve_ahead(self):
        """Tell each downloader the new hosts it serves whose names are to be resolved
        (``resolve_ahead``: one message per downloader)."""
        keys = self._new_hosts[:]
        self._new_hosts.clear()
        pool = self._downloaders
        batches = {}  # downloader index -> host names
        match = _HOST_NAME.fullmatch
        for key in keys:
            if match(key) and not no_lookup_needed(key):
                batches.setdefault(pool.index_of(key), []).append(key)
        for index, hosts in batches.items():
            ref = pool.refs[index]
            if ref is not None:
                self.send(ref, {"type": "resolve_ahead", "hosts": hosts})

    def handle_release_requests(self, message: messages.ReleaseRequests) -> None:
        """Leased requests the engine could not finish (the spider is closing): queued
        again (a durable frontier keeps them for the next run)."""
        if self.failed:
            return
        try:
            self.frontier.release(message["requests"])
        except _FRONTIER_ERRORS as e:
            self._fail(e)
        self._new_hosts.clear()  # (their names were resolved once: they are cached)

    def handle_pull_requests(self, message: messages.PullRequests) -> None:
        """Credit from the engine, with the transfers finished per host since its last
        ``pull_requests`` (``finished``) and AutoThrottle's new delays (``delays``)."""
        finished = message.get("finished")
        delays = message.get("delays")
        if (finished or delays) and self.per_host and not self.failed:
            frontier = self.frontier
            if delays:
                for key, delay_s in delays.items():
                    frontier.set_host_delay(key, delay_s)
            if finished:
                frontier.hosts_finished(finished, time.monotonic())
        self.credit += message["count"]
        self.reply_to = message["reply_to"]
        self._dispatch()

    def handle_dispatch_due(self, message: messages.DispatchDue) -> None:
        """A host's delay has passed (the timer :meth:`_wake_later` started)."""
        if self._wake_at is not None and time.monotonic() >= self._wake_at:
            self._wake_at = None
        self._dispatch()

    def handle_check_idle(self, message: messages.CheckIdle) -> None:
        if self.idle_policy is not None:  # a shared frontier: the whole crawl decides
            self.idle_check = message
            self._answer_idle_check(first=True)
            return
        self._maybe_checkpoint()
        if "stalled_s" in message and not self.failed:
            wait_s = self.frontier.next_ready_in_s(time.monotonic()) if self.per_host else None
            if wait_s is None or wait_s <= 0:  # none waits, or one is ready yet not leased
                self._stalled(message["stalled_s"])
            else:  # a host waits for its delay (one longer than STALL_TIMEOUT): not stuck
                logger.info("No request dispatched for %(s).1f s: the next host is ready "
                            "by its delay in %(wait).1f s", {"s": message["stalled_s"],
                                                             "wait": wait_s},
                            extra={"spider": self.spider})
        answer = {"type": "idle_checked", "token": message["token"],
                  "pending": len(self.frontier)}
        if self.revisits is not None and not self.failed:
            answer["revisits"] = len(self.revisits)
            if self.durable and answer["revisits"]:
                # the crawl rests till the next revisit: commit what the last visits did
                self._maybe_checkpoint(force=True)
        self.send(message["reply_to"], answer)

    def _stalled(self, stalled_s):
        """The crawl has been stuck ``stalled_s`` seconds (``STALL_TIMEOUT``): log what
        the frontier holds and stop the crawl with ``stalled`` (a failure)."""
        describe = getattr(self.frontier, "describe_pending", None)
        try:
            held = describe() if describe is not None else {}
        except _FRONTIER_ERRORS as e:
            held = {"error": f"{type(e).__name__}: {e}"}
        logger.error(
            "Crawl stalled: %(pending)d requests pending in the frontier (%(detail)s), "
            "none dispatched, nothing in flight and nothing happening for %(s).1f s "
            "(STALL_TIMEOUT); oldest pending request: %(oldest)s; closing the crawl "
            "(stalled)",
            {"pending": len(self.frontier), "s": stalled_s,
             "detail": ", ".join(f"{k} {v}" for k, v in held.items() if k != "oldest")
             or "no detail",
             "oldest": held.get("oldest", "unknown")},
            extra={"spider": self.spider})
        self.crawler.stats.set_value("frontier/stalled_s", stalled_s, spider=self.spider)
        if self.supervisor is not None:
            self.send(self.supervisor, {"type": "stop_crawl", "crawl_id": self.crawl_id,
                                        "reason": "stalled"})

    def handle_start_checkpoints(self, message: messages.StartCheckpoints) -> None:
        """The Supervisor names the SpiderRunner, where checkpoints start, and gives
        the feeds' starting points, committed now (before any item can come: the
        Engine starts after this message); a commit that fails ends the crawl
        ``frontier_failed`` (one ERROR line)."""
        self.spider_runner = message["spider_runner"]
        if "feeds" in message and not self.failed:
            try:
                self.frontier.commit({"feeds": message["feeds"]})
                checkpoint_log = getattr(self.frontier, "checkpoint_log", None)
                if checkpoint_log is not None:  # JOBDIR: in the main file, not only the log
                    checkpoint_log()
            except _FRONTIER_ERRORS as e:
                self._fail(e)

    def handle_checkpoint_reached(self, message: messages.CheckpointReached) -> None:
        """Everything the listed leases caused is durable (their requests pushed, their
        items in every feed): ack them and commit, with the feeds' states. A checkpoint
        the Pipeline sent to several Exporters is reached when all of them answered
        (``parts``), their feeds' states merged."""
        parts = message.get("parts", 1)
        if parts > 1:
            epoch = message["epoch"]
            got = self._checkpoint_parts.setdefault(epoch, [])
            got.append(message)
            if len(got) < parts:
                return
            del self._checkpoint_parts[epoch]
            feeds: dict = {}
            for part in got:
                feeds.update(part["feeds"])
            message = {**message, "feeds": feeds}
        self.checkpoint_pending = False
        if self.failed:
            return
        meta: dict[str, Any] = {}
        if message["feeds"]:
            feeds = dict(self.frontier.meta.get("feeds", {}))
            feeds.update(message["feeds"])
            meta["feeds"] = feeds
        if message.get("spider_state") is not None:
            meta["spider_state"] = message["spider_state"]
        _faults.hit("feed.before_commit")
        try:
            self.frontier.ack(message["leases"])
            self.frontier.commit(meta)
        except _FRONTIER_ERRORS as e:
            self._fail(e)
            return
        if self.idle_check is not None:
            self.idle_policy.forget_status()  # ask Redis again now
            self._answer_idle_check(first=True)
        elif self.shared:
            self._dispatch()  # leases acked: the open-lease limit may allow more

    def handle_frontier_tick(self, message: messages.FrontierTick) -> None:
        """Shared frontier: renew leases, poll for requests, answer a held idle check."""
        self._ticker.pending = False
        if self.failed:
            return
        failure = getattr(getattr(self.frontier, "link", None), "failure", None)
        if failure is not None:  # met by a download slot (a permanent Redis fault)
            self._fail(failure)
            return
        now = time.monotonic()
        try:
            if now - self.last_renew >= self.frontier.lease_timeout_s / 3:
                self.last_renew = now
                lost = self.frontier.renew()
                if lost:
                    logger.warning(
                        "%(n)d leases of this worker expired (it stalled for more than "
                        "FRONTIER_LEASE_TIMEOUT) and were taken over by other workers",
                        {"n": len(lost)}, extra={"spider": self.spider})
        except _FRONTIER_ERRORS as e:
            self._fail(e)
            return
        self._dispatch()
        if self.idle_check is not None:
            self._answer_idle_check(first=False)
        if self.revisits is not None and now - self._revisit_polled >= REVISIT_POLL_S:
            # the shared schedule: records other workers added, or left (one died)
            self._revisit_polled = now
            try:
                self._arm_revisits(time.time())
            except _FRONTIER_ERRORS as e:
                self._fail(e)
                return
        if now - self.last_figures >= FIGURES_INTERVAL_S:
            self.last_figures = now
            self._publish_figures()

    def _publish_figures(self):
        """Shared frontier: publish this worker's pages and items and keep the whole
        crawl's figures in the stats (``frontier/shared``: what ``crawlfw status`` shows)."""
        stats = self.crawler.stats
        own = {"pages": stats.get_value("response_received_count", 0, spider=self.spider),
               "items": stats.get_value("item_scraped_count", 0, spider=self.spider)}
        try:
            figures = self.frontier.crawl_figures(own)
        except _FRONTIER_ERRORS as e:  # only figures: the next tick tries again
            logger.debug("Shared crawl figures not read: %(error)s", {"error": e})
            return
        stats.set_value("frontier/shared", figures, spider=self.spider)
        self._follow_shared_commands(getattr(self.frontier, "control", None))

    def _follow_shared_commands(self, state) -> None:
        """Carry out the commands written in Redis for every worker of the shared crawl
        (the dashboard's whole view: :mod:`crawlfw.core.frontier.redis_control`) that
        ``state`` (the control hash as just read; None: not read) holds for this worker,
        as the control endpoint would: through the Supervisor. Followed when the
        frontier opens (a standing pause, before any download is granted credit) and
        at every figures publication."""
        if state is None:
            return
        if self._commands is None:
            self._commands = SharedCommands(getattr(self.frontier, "opened_control", {}))
        for command, reason in self._commands.follow(state):
            logger.info("Shared crawl: %(command)s for every worker (a command in Redis)",
                        {"command": command}, extra={"spider": self.spider})
            if self.supervisor is None:
                continue
            message: dict[str, Any] = {"type": f"{command}_crawl", "crawl_id": self.crawl_id}
            if command == "stop":
                message["reason"] = reason
            self.send(self.supervisor, message)

    def on_undelivered(self, ref, message):
        if message["type"] == "requests_dequeued":
            # The engine stopped (shutdown) before taking these: keep them queued, so a
            # JOBDIR keeps them for the resumed crawl.
            self.credit = 0
            self.reply_to = None
            if not self.failed:
                try:
                    self.frontier.release(message["requests"])
                except _FRONTIER_ERRORS as e:
                    self._fail(e)
            return
        if message["type"] == "checkpoint":
            self.checkpoint_pending = False  # the spider runner stopped: no more checkpoints
            self.spider_runner = None
            return
        super().on_undelivered(ref, message)

    # --- internals ----------------------------------------------------------------------

    def _dispatch(self):
        if self.durable:
            self._maybe_checkpoint()
        if not self.credit or self.reply_to is None or self.failed:
            return
        try:
            if self.per_host:
                now = time.monotonic()
                batch = self.frontier.lease(self.credit, now)
                if self.credit > len(batch):  # credit left: wake when a delay passes
                    wait = self.frontier.next_ready_in_s(now)
                    if wait is not None:
                        self._wake_later(now, wait)
            else:
                batch = self.frontier.lease(self.credit)
        except _FRONTIER_ERRORS as e:
            self._fail(e)
            return
        if not batch:
            # Scrapy's scheduler_empty: the engine asked (credit) and the frontier holds
            # nothing (not: its hosts wait for their delays). Asked only when a handler
            # is connected (len() of a shared frontier is a Redis call).
            sigs = self.crawler.signals
            if sigs.has_receivers(signals.scheduler_empty) and not len(self.frontier):
                sigs.send_catch_log(signals.scheduler_empty)
            return
        self.credit -= len(batch)
        self.handed_out += len(batch)
        self.send(
            self.reply_to,
            {"type": "requests_dequeued", "requests": batch, "pending": len(self.frontier)},
        )
        if self.idle_check is not None:  # the engine has work again: not idle
            message, self.idle_check = self.idle_check, None
            self.send(message["reply_to"], {"type": "idle_checked",
                                            "token": message["token"],
                                            "pending": len(batch)})

    def _wake_later(self, now, wait_s):
        """Tell this actor ``dispatch_due`` in ``wait_s`` seconds (a host of the frontier
        becomes ready by its delay then), unless a timer already fires by then or at most
        :data:`WAKE_SLACK_S` later (so hosts ready at nearby times share one timer
        thread: never late for politeness, at most that much late for speed)."""
        at = now + max(wait_s, 0.001)
        if self._wake_at is not None and now < self._wake_at <= at + WAKE_SLACK_S:
            return
        self._wake_at = at
        ref = self.actor_ref

        def tell():
            try:
                ref.tell({"type": "dispatch_due"})
            except Exception:  # the scheduler stopped meanwhile
                pass

        timer = self._wake_timer = threading.Timer(at - now, tell)
        timer.daemon = True
        timer.start()

    def _answer_idle_check(self, first):
        """Shared frontier: answer the held ``check_idle`` from the whole crawl's state:
        "idle" when the shared queue is empty, no worker holds a lease and the start
        requests are all scheduled. When only leases keep the crawl going, this
        worker's done leases are committed at once (a checkpoint), since every worker
        waits for them. Redis is asked at most once per :data:`TICK_S`; a busy answer
        waits for the next tick (``first`` False), so an idle worker polls."""
        policy = self.idle_policy
        now = time.monotonic()
        if not policy.asks_status(now, first):
            return  # Redis was asked at the last tick: asked again at the next one
        frontier = self.frontier
        try:
            status = frontier.status()
        except _FRONTIER_ERRORS as e:
            self._fail(e)
            return
        action, pending = policy.decide(
            status, now, first=first, pending_local=frontier.pending_local(),
            has_unacked=frontier.has_unacked(),
            can_checkpoint=self.spider_runner is not None and not self.checkpoint_pending,
            last_checkpoint_s=self.last_checkpoint)
        if action == IDLE_CHECKPOINT:
            self._maybe_checkpoint(force=True)
            return  # asked again when the checkpoint is reached
        if action == IDLE_HOLD:
            return  # asked again at the next tick
        message, self.idle_check = self.idle_check, None
        answer = {"type": "idle_checked", "token": message["token"], "pending": pending}
        if self.revisits is not None and not pending:
            try:
                answer["revisits"] = len(self.revisits)
            except _FRONTIER_ERRORS as e:
                self._fail(e)
                return
        self.send(message["reply_to"], answer)

    def _maybe_checkpoint(self, force=False):
        if self.checkpoint_pending or self.spider_runner is None:
            return
        if (not force
                and time.monotonic() - self.last_checkpoint < self.checkpoint_interval_s
                and not (self.checkpoint_leases and self.handed_out >= self.checkpoint_leases)):
            return
        self.handed_out = 0
        self.epoch += 1
        self.checkpoint_pending = True
        self.last_checkpoint = time.monotonic()
        self.send(self.spider_runner, {"type": "checkpoint", "epoch": self.epoch,
                                       "reply_to": self.actor_ref, "leases": [],
                                       "spider_state": None, "feeds": {}})

    def _fail(self, error):
        if self.failed:
            return
        self.failed = True
        where = getattr(self.frontier, "path", "the frontier")
        if isinstance(error, FrontierStopping):  # the crawl is stopping already
            logger.warning("%(error)s: this worker's open leases were not given back; "
                           "they expire after FRONTIER_LEASE_TIMEOUT and are crawled "
                           "again", {"error": error}, extra={"spider": self.spider})
            return
        logger.error("Frontier failed: %(error)s (%(where)s): closing the crawl",
                     {"error": f"{type(error).__name__}: {error}", "where": where},
                     extra={"spider": self.spider})
        self.crawler.stats.set_value("frontier/error", f"{type(error).__name__}: {error}",
                                     spider=self.spider)
        if self.supervisor is not None:
            self.send(self.supervisor, {"type": "stop_crawl", "crawl_id": self.crawl_id,
                                        "reason": "frontier_failed"})


def frontier_of(scheduler):
    """The frontier to drive: the Scheduler's own, unless the scheduler is not a
    :class:`~crawlfw.core.scheduler.Scheduler` or a subclass overrides Scrapy's
    ``enqueue_request``/``next_request`` (then those are called, without leases)."""
    from crawlfw.core.frontier.scheduler import Scheduler

    frontier = getattr(scheduler, "frontier", None)  # (an empty frontier is falsy)
    cls = type(scheduler)
    if (frontier is None or cls.enqueue_request is not Scheduler.enqueue_request
            or cls.next_request is not Scheduler.next_request):
        return _ScrapySchedulerFrontier(scheduler)
    return frontier


class _Ticker(threading.Thread):
    """Tells an actor ``frontier_tick`` every ``interval_s`` seconds until stopped, at
    most one tick waiting in its inbox at a time."""

    def __init__(self, ref, interval_s):
        super().__init__(name="frontier-tick", daemon=True)
        self.ref = ref
        self.interval_s = interval_s
        self.pending = False
        self._stopped = threading.Event()

    def run(self):
        while not self._stopped.wait(self.interval_s):
            if self.pending:
                continue
            self.pending = True
            try:
                self.ref.tell({"type": "frontier_tick"})
            except Exception:  # the actor stopped
                return

    def stop(self):
        self._stopped.set()


class _ScrapySchedulerFrontier(FrontierBase):
    """A Scrapy-style scheduler object (``enqueue_request``/``next_request``) seen
    through the frontier interface: not durable, leases not tracked."""

    durable = False

    def __init__(self, scheduler):
        self.scheduler = scheduler

    def open(self, spider):
        """Nothing to do: the actor opens the scheduler itself."""

    def close(self, reason):
        """Nothing to do: the actor closes the scheduler itself."""
        return []

    def push(self, request, *, transient_ok=True) -> bool:
        return self.scheduler.enqueue_request(request)

    def next_ready_in_s(self, now_s=None):
        """When the wrapped scheduler's own frontier (a
        :class:`~crawlfw.core.scheduler.Scheduler` subclass calling ``super()``) has a
        host ready by its delay; None for any other scheduler."""
        inner = getattr(self.scheduler, "frontier", None)
        if inner is None or not hasattr(inner, "next_ready_in_s"):
            return None
        return inner.next_ready_in_s(now_s)

    def lease(self, n, now_s=None):
        out = []
        while len(out) < n:
            request = self.scheduler.next_request()
            if request is None:
                break
            out.append(request)
        return out

    def release(self, requests):
        for request in requests:
            self.scheduler.enqueue_request(request.replace(dont_filter=True))

    def ack(self, lease_ids):
        pass

    def commit(self, meta=None):
        pass

    def set_meta(self, meta):
        pass

    meta = {}

    def __len__(self):
        return len(self.scheduler)
