"""EngineActor: moves requests from the Scheduler through the downloader middlewares to
the Downloader serving each request's slot (one of the crawl's :class:`DownloaderPool`),
and responses on to the SpiderRunner; detects idleness and asks the Supervisor to close
the spider.

The flow-control state and its decisions live in a plain object,
:class:`crawlfw.core.flow.flow.FlowControl` (``self.flow``); this actor turns each message into
calls on it and its answers into messages, signals, middleware calls and fetches.

Flow control is credit-based (``pull_requests``, ARCHITECTURE.md, "The frontier:
per-host queues", the credit rule): free download capacity is ``CONCURRENT_REQUESTS``
minus transfers in flight, and none while responses waiting for the spider exceed
``SCRAPER_SLOT_MAX_ACTIVE_SIZE`` bytes. Each request the frontier handed out for a host
(``request._host``) is counted per host in ``FlowControl.finished`` as it leaves the
download stage and sent with the next ``pull_requests``. Start requests are pulled from
the SpiderRunner only while credit is unused.

Idle detection: when no transfer, no response in the spider and no item in the pipeline
is outstanding, start requests are exhausted and credit is unused, the engine sends
``check_idle`` to the Scheduler; the answer counts only if nothing happened in between
(``token``). Then ``spider_idle`` is fired; unless a handler raises ``DontCloseSpider``
the check is made once more and the spider is closed with ``finish_reason = 'finished'``
(or ``'start_error'`` when ``start()`` raised). A ``DontCloseSpider`` keeps it open until
new work makes it idle again (``spider_idle`` then fires again, once per idle turn) or,
without new work, until the recheck :data:`IDLE_RECHECK_S` later; a ``spider_idle`` that
nobody keeps open closes the spider at once. User actors subscribed to ``spider_idle``
get the event as a message: the engine makes no idle check until each has answered the
``idle_barrier`` told after it, so the requests and items they add then (``crawl``,
``add_items``, which reach the engine before the answer) are processed before the close.
An answer with requests pending while nothing else is outstanding and nothing happened
(the Scheduler cannot dispatch them) is asked again on the next event or after
:data:`STUCK_RECHECK_S`, never at once; stuck for ``STALL_TIMEOUT`` seconds, the crawl
is reported by the Scheduler and ends ``stalled`` (see :mod:`crawlfw.core.flow.flow`).

Its place in a request's path (credit, the downloader middlewares, parked requests,
downloads outside the frontier, idleness, pause) and the one count of transfers in
flight are described once, in ARCHITECTURE.md: "One request's path, from
``start_requests`` to a feed line" and "The actor tree". What a downloader's death does
to a ``fetch`` (kept behind its ``ChildRef``, started again, or failed as a poison request
with :class:`~crawlfw.exceptions.DownloaderCrashed`): "Supervision". The engine sees only
the answers: every ``fetch`` is answered once. Closing answers every ``download`` still
pending with ``DownloadCancelled``; a parked request goes back to the Scheduler only
then, with the transfers abandoned.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import pykka

from crawlfw import signals
from crawlfw.actors import messages
from crawlfw.actors._base import CrawlActor
from crawlfw.actors._user import IDLE_BARRIER
from crawlfw.core.flow.downloadermw import DownloaderMiddlewareManager, RequestParked
from crawlfw.core.flow.flow import (
    DOWNLOAD,
    HOLD,
    IDLE_BUSY,
    IDLE_CLOSE,
    IDLE_REVISIT,
    IDLE_SIGNAL,
    IDLE_STALLED,
    IDLE_STUCK,
    NO_ACTIONS,
    FlowControl,
)
from crawlfw.core.transport.slot import DOWNLOAD_SLOT, IpCache, slot_key
from crawlfw.core.transport.slots import POISON_CRASHES
from crawlfw.exceptions import DontCloseSpider, DownloadCancelled, IgnoreRequest
from crawlfw.http import Request, Response
from crawlfw.logformatter import LogFormatter
from crawlfw.utils.log import _debug_wanted, logformatter_adapter

if TYPE_CHECKING:
    from collections.abc import Mapping

    from crawlfw.actors._types import CrawlerLike
    from crawlfw.actors.downloader import DownloaderPool

logger = logging.getLogger(__name__)

__all__ = ["EngineActor", "IDLE_RECHECK_S", "POISON_CRASHES", "STUCK_RECHECK_S"]

#: Host names whose address the engine keeps for ``CONCURRENT_REQUESTS_PER_IP`` slot keys.
IP_CACHE_SIZE = 10_000

#: Seconds between ``spider_idle`` signals while a handler keeps the spider open.
IDLE_RECHECK_S = 5.0

#: Seconds before asking the Scheduler again when it holds requests it cannot dispatch
#: and nothing else happens (the next event asks sooner).
STUCK_RECHECK_S = 1.0


def merge_pull_requests(into: dict[str, Any], message: Mapping[str, Any]) -> None:
    """Add the ``pull_requests`` ``message`` to the earlier ``into`` (not sent yet), so
    that the Scheduler handling ``into`` alone does what handling both in turn does
    (:meth:`SchedulerActor.handle_pull_requests
    <crawlfw.actors.scheduler.SchedulerActor.handle_pull_requests>`): the credit
    adds up, the finished transfers add up per host key, a host's later delay replaces
    its earlier one. ``message``'s ``finished`` dict may become ``into``'s (both are
    the sender's, handed over by ``FlowControl.take_reports``)."""
    into["count"] += message["count"]
    finished = message.get("finished")
    if finished:
        mine = into.get("finished")
        if not mine:
            into["finished"] = finished
        else:
            for key, n in finished.items():
                mine[key] = mine.get(key, 0) + n
    delays = message.get("delays")
    if delays:
        mine = into.get("delays")
        if not mine:
            into["delays"] = delays
        else:
            mine.update(delays)


class EngineActor(CrawlActor):
    """Args:
    crawler: the Crawler (settings, signals, stats, logformatter, spider).
    scheduler: the SchedulerActor's ref.
    spider_runner: the SpiderRunnerActor's ref.
    downloaders: the crawl's :class:`~crawlfw.actors.downloader.DownloaderPool` (the
        Supervisor fills it with the downloaders it starts).
    max_concurrency: transfers in flight at most; default ``CONCURRENT_REQUESTS`` (the
        Supervisor passes less when the open file limit cannot hold that many).
    mw: the crawl's DownloaderMiddlewareManager (None: built here, from the crawler).
    **kw: ``CrawlActor`` arguments (``crawl_id``, ``supervisor``).
    """

    role = "engine"
    # Its inbox is often backlogged: tell what several messages caused in one burst.
    hold_types = frozenset(
        ("response_downloaded", "response_scraped", "items_processed", "requests_dequeued")
    )

    def __init__(self, crawler: CrawlerLike, scheduler: pykka.ActorRef[Any],
                 spider_runner: pykka.ActorRef[Any] | None, downloaders: DownloaderPool,
                 max_concurrency: int | None = None,
                 mw: DownloaderMiddlewareManager | None = None, **kw: Any) -> None:
        super().__init__(settings=crawler.settings, **kw)
        self.crawler = crawler
        self.spider = crawler.spider
        self.scheduler = scheduler
        self.spider_runner = spider_runner
        settings = crawler.settings
        if max_concurrency is None:
            max_concurrency = settings.getint("CONCURRENT_REQUESTS")
        # A shared frontier paces its own answers (at its tick) and waits on other
        # workers' leases: no stall timeout there.
        self.shared_frontier = bool(settings.get("FRONTIER_URL"))
        self.flow = FlowControl(max_concurrency,
                                settings.getint("SCRAPER_SLOT_MAX_ACTIVE_SIZE"),
                                stall_timeout_s=0.0 if self.shared_frontier
                                else settings.getfloat("STALL_TIMEOUT", 300.0))
        self._stuck_timer: threading.Timer | None = None  # the recheck while the scheduler's requests are stuck
        self.pool = downloaders
        # CONCURRENT_REQUESTS_PER_IP: host name -> IP its last response came from, so
        # later requests are keyed by IP (as Scrapy's dnscache does).
        self.ip_cache = IpCache(IP_CACHE_SIZE) \
            if settings.getint("CONCURRENT_REQUESTS_PER_IP") else None
        # Requests a downloader middleware parked (RequestParked: robots.txt pending) ->
        # the index of the middleware after it, where process_request goes on when
        # resume_parked comes; their frontier leases stay theirs meanwhile.
        self.parked: dict[Request, int] = {}
        # Downloads outside the frontier (``download``: media pipelines,
        # crawler.engine.download): request -> (reply_to ref or Future, key). A redirect
        # or retry a middleware returns takes its original's place.
        self.direct: dict[Request, tuple[pykka.ActorRef[Any] | Future[Any], int]] = {}
        # Later ``download``s of a Request object that is in ``direct`` already, in the
        # order they came: request -> [(reply_to ref or Future, key)]. One object is in
        # one download at a time (the downloaders key a transfer by it); the next one
        # starts when the object leaves ``direct`` (answered, or replaced by a redirect).
        self.direct_waiting: dict[Request, list[tuple[pykka.ActorRef[Any] | Future[Any],
                                                      int]]] = {}
        # (request, first middleware) of ``download`` and ``resume_parked`` requests
        # received while paused: downloaded on resume
        self.direct_held: list[tuple[Request, int]] = []
        self._idle_timer: threading.Timer | None = None  # the recheck after DontCloseSpider
        self._waited_for_revisits = False  # "Waiting for revisits" logged at INFO once
        self._finish_reason = "finished"  # "start_error" once start() raised
        self.pipeline: pykka.ActorRef[Any] | None = None  # for add_items (user actors), from start_engine
        self.early_items: list[Any] = []  # add_items before start_engine
        self.blocked_slots: dict[str, str] = {}  # slot key -> reason (block_slot, from user actors)
        # Built on the caller's (supervisor's) thread, before spider_opened is sent (by
        # the Supervisor, before the feeds are opened: _tree.build_components).
        self.mw = DownloaderMiddlewareManager.from_crawler(crawler) if mw is None else mw
        self.logformatter = crawler.logformatter
        # The default formatter logs "Crawled" lines at DEBUG: skip building them when
        # DEBUG is off. A custom formatter may choose another level, so it always runs.
        self._log_crawled = type(self.logformatter) is not LogFormatter
        # The pull_requests held for the Scheduler, last of the held messages to it:
        # the next one is added to it (_pull), so a burst grants its credit in one.
        self._held_pull: dict[str, Any] | None = None
        self._pulls_merged = 0  # pull_requests added to it

    def on_start(self):
        self.mw.open_spider(self.spider)

    def on_stop(self):
        self.flush_held()
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        if self._stuck_timer is not None:
            self._stuck_timer.cancel()
        if self.mw is not None:
            self.mw.close_spider(self.spider)

    # --- messages -----------------------------------------------------------------------

    def handle_start_engine(self, message: messages.StartEngine) -> None:
        self.spider_runner = message["spider_runner"]
        self.pipeline = message.get("pipeline")
        self.flow.start()
        facade = self.crawler.engine
        if facade is not None and hasattr(facade, "downloader"):  # AutoThrottle reads them
            facade.downloader.ip_cache = self.ip_cache
            facade.downloader.host_delays = self.flow.host_delays
        if self.early_items and self.pipeline is not None:
            items, self.early_items = self.early_items, []
            self.handle_add_items({"type": "add_items", "items": items})
        self._after()

    def on_undelivered(self, ref, message):
        kind = message["type"]
        if kind == "fetch":  # its downloader died for good (the crawl fails): give it back
            self.flow.transfer_done()
            self._requeue([message["request"]])
            return
        if kind == "set_slot_delay":
            return
        super().on_undelivered(ref, message)

    def handle_requests_dequeued(self, message: messages.RequestsDequeued) -> None:
        requests = message["requests"]
        what = self.flow.dequeued(requests)
        if what is DOWNLOAD:
            for request in requests:
                self._download(request)
            self._after()
        elif what is not HOLD:  # RELEASE: closing
            self._requeue(requests)

    def handle_response_downloaded(self, message: messages.ResponseDownloaded) -> None:
        request = message["request"]
        if not self.flow.transfer_done():  # closing: back to the Scheduler
            self._requeue([request])
            return
        response = message["response"]
        if self.ip_cache is not None and "ip" in message:
            self.ip_cache.learn(request, message["ip"])
        self.crawler.signals.send_catch_log(
            signals.response_downloaded, response=response, request=request, spider=self.spider
        )
        self._process_response(request, response)
        self._after()

    def handle_download_failed(self, message: messages.DownloadFailed) -> None:
        request = message["request"]
        if not self.flow.transfer_done():  # closing: back to the Scheduler
            self._requeue([request])
            return
        self._process_exception(request, message["error"])
        self._after()

    def handle_start_requests_pulled(self, message: messages.StartRequestsPulled) -> None:
        if message.get("items"):  # items start() yielded, in the pipeline now
            self.flow.items_added(message["items"])
        if message.get("error"):
            self._finish_reason = "start_error"
        self.flow.start_pulled(message["exhausted"])
        self._after()

    def handle_response_scraped(self, message: messages.ResponseScraped) -> None:
        self.flow.scraped(message["size"], message["items"], message.get("responses", 1))
        self._after()

    def handle_items_processed(self, message: messages.ItemsProcessed) -> None:
        self.flow.items_processed(message["count"])
        self._after()

    def handle_crawl(self, message: messages.Crawl) -> None:
        self.flow.crawl_requested()
        self.send(self.scheduler, {"type": "enqueue_requests", "requests": [message["request"]],
                                   "transient_ok": True})
        self._after()

    def handle_download(self, message: messages.Download) -> None:
        """Download a request outside the frontier (Scrapy's ``engine.download``) and
        answer its sender once (see :class:`crawlfw.actors.messages.Download`)."""
        request = message["request"]
        target: pykka.ActorRef[Any] | Future[Any] | None = message.get("reply_to")
        if target is None:
            target = message["future"]
        if request in self.direct:  # the same object twice at once: after the first
            self.direct_waiting.setdefault(request, []).append((target, message["key"]))
            return
        self._start_direct(request, target, message["key"])
        self._after()

    def _start_direct(self, request, target, key):
        """Download ``request`` for ``target`` (its ``download``'s sender), which
        ``key`` names to it; answer at once when closing, hold it while paused."""
        self.direct[request] = (target, key)
        if self.flow.closing:
            self._answer(request, error=DownloadCancelled(
                f"Download of {request.url} cancelled: the spider is closing"))
            return
        self.flow.crawl_requested()
        if self.flow.paused:
            self.direct_held.append((request, 0))
            return
        self._download(request)

    def _next_direct(self, request):
        """``request`` has left :attr:`direct`: start the next ``download`` of the
        same object that waited for it, if any."""
        waiting = self.direct_waiting.get(request)
        if waiting is None or request in self.direct:
            return
        target, key = waiting.pop(0)
        if not waiting:
            del self.direct_waiting[request]
        self._start_direct(request, target, key)

    def handle_resume_parked(self, message: messages.ResumeParked) -> None:
        """A middleware gives back a request it parked: go on with the middlewares after
        it, or with ``error``, to ``process_exception``."""
        request = message["request"]
        start = self.parked.pop(request, None)
        if start is None:
            return  # released (or cancelled) when the spider started closing
        self.flow.crawl_requested()
        error = message.get("error")
        if error is not None:
            self._process_exception(request, error)
        else:
            request._paced = False  # it waited: the slot applies the host's delay again
            if self.flow.paused:
                self.direct_held.append((request, start))
                return
            self._download(request, start)
        self._after()

    def handle_idle_checked(self, message: messages.IdleChecked) -> None:
        revisits = message.get("revisits", 0)
        decision = self.flow.idle_checked(message["token"], message["pending"],
                                          time.monotonic(), revisits)
        if decision is IDLE_BUSY:
            self._after()
        elif decision is IDLE_STUCK:
            if self.shared_frontier:
                self._after()  # the shared scheduler answers at its next tick
            elif self._stuck_timer is None:  # the next event asks sooner
                self._stuck_timer = self._tell_later({"type": "recheck_idle", "stuck": True},
                                                     STUCK_RECHECK_S)
        elif decision is IDLE_STALLED:
            # The Scheduler says what it holds and stops the crawl (stalled).
            stuck_since = self.flow.stuck_since
            assert stuck_since is not None, "set with the first stuck answer"
            self.send(self.scheduler, {
                "type": "check_idle", "token": message["token"], "reply_to": self.actor_ref,
                "stalled_s": round(time.monotonic() - stuck_since, 1)})
        elif decision is IDLE_SIGNAL:
            if self._fire_spider_idle():
                self.flow.idle_released()
                if self._idle_timer is not None:  # an earlier turn's recheck: not needed
                    self._idle_timer.cancel()
                    self._idle_timer = None
                self._after()  # handlers may have scheduled requests: check once more
            else:
                self.flow.idle_kept_open()
                self._schedule_idle_recheck()
        elif decision is IDLE_CLOSE:
            self._close(self._finish_reason)
        elif decision is IDLE_REVISIT:
            # Continuous crawl: nothing to do till the Scheduler pushes due revisits
            # (they come against the credit it holds and wake this actor).
            level = logging.DEBUG if self._waited_for_revisits else logging.INFO
            self._waited_for_revisits = True
            logger.log(level, "Waiting for revisits: %(n)d pages scheduled (REVISIT_ENABLED: "
                       "the crawl runs until stopped)", {"n": revisits},
                       extra={"spider": self.spider})
        # IDLE_IGNORE: paused (checked again on resume); IDLE_WAIT: a handler raised
        # DontCloseSpider, the recheck timer runs

    def handle_recheck_idle(self, message: messages.RecheckIdle) -> None:
        if message.get("stuck"):
            self._stuck_timer = None
            self._after()
            return
        timer = self._idle_timer
        if timer is not None and timer.finished.is_set():  # (not a newer one, still due)
            self._idle_timer = None
        self.flow.idle_rechecked()
        self._after()

    def handle_pause_crawl(self, message: messages.PauseCrawl) -> None:
        if self.flow.pause():
            logger.info("Crawl paused", extra={"spider": self.spider})

    def handle_resume_crawl(self, message: messages.ResumeCrawl) -> None:
        held = self.flow.resume()
        if held is None:
            return  # not paused
        logger.info("Crawl resumed", extra={"spider": self.spider})
        for request in held:
            self._download(request)
        direct, self.direct_held = self.direct_held, []
        for request, start in direct:
            self._download(request, start)
        self._after()

    def handle_close_spider(self, message: messages.CloseSpider) -> None:
        self._close(message["reason"])

    def handle_add_items(self, message: messages.AddItems) -> None:
        items = message["items"]
        if self.flow.closing:
            logger.warning("%(n)d items added while the spider is closing were dropped",
                           {"n": len(items)}, extra={"spider": self.spider})
            return
        if not self.flow.running or self.pipeline is None:
            # before start_engine (a spider_opened handler), or no pipeline was named:
            # kept till then
            self.early_items.extend(items)
            return
        self.flow.items_added(len(items))
        self.send(self.pipeline, {"type": "process_items", "items": items, "response": None})

    def handle_block_slot(self, message: messages.BlockSlot) -> None:
        slot = message["slot"]
        if slot not in self.blocked_slots:
            self.blocked_slots[slot] = message["reason"]
            logger.info("Download slot %(slot)s blocked: %(reason)s",
                        {"slot": slot, "reason": message["reason"]}, extra={"spider": self.spider})

    def handle_get_status(self, message: messages.GetStatus) -> messages.EngineStatus:
        # FlowControl.status() gives EngineStatus's fields (the core cannot name the type)
        status: messages.EngineStatus = self.flow.status()  # type: ignore[assignment]
        return status

    # --- downloading --------------------------------------------------------------------

    def _download(self, request, start=0):
        try:
            result = self.mw.process_request(request, self.spider, start)
        except RequestParked as parked:
            # A middleware keeps it until it sends resume_parked (robots.txt pending):
            # it waits here, its lease kept; its host's frontier slot is given back.
            self.flow.host_done(request)
            self.parked[request] = parked.resume_at
            return
        except Exception as e:
            self._process_exception(request, e)
            return
        if result is None:
            self._fetch(request)
        elif isinstance(result, Response):
            self._process_response(request, result)
        else:
            self._schedule(result, request)

    def _fetch(self, request):
        key = request._host  # the frontier's host key: the slot key, parsed once
        if key is None or self.ip_cache is not None or (
                request._meta and DOWNLOAD_SLOT in request._meta):
            if self.ip_cache is not None:
                # CONCURRENT_REQUESTS_PER_IP: slots are per address, the frontier's
                # delay per host name, so the downloader applies the address's delay too.
                request._paced = False
            key = slot_key(request, self.ip_cache)
        if self.blocked_slots and key in self.blocked_slots:
            self._process_exception(request, IgnoreRequest(
                f"download slot {key} is blocked: {self.blocked_slots[key]}"))
            return
        self.flow.transfer_started()
        self.send(self.pool.ref_for(key), {"type": "fetch", "request": request, "slot": key,
                                           "reply_to": self.actor_ref})

    def _process_response(self, request, response):
        self.flow.host_done(request)
        try:
            result = self.mw.process_response(request, response, self.spider)
        except Exception as e:
            self._to_spider_failure(request, e)
            return
        if isinstance(result, Request):
            self._schedule(result, request)
            return
        response = result
        response.request = request
        if self._log_crawled or _debug_wanted(logger):
            logkws = self.logformatter.crawled(request, response, self.spider)
            logger.log(*logformatter_adapter(logkws), extra={"spider": self.spider})
        self.crawler.signals.send_catch_log(
            signals.response_received, response=response, request=request, spider=self.spider
        )
        if self.direct and request in self.direct:
            self._answer(request, response=response)
            return
        self.flow.sent_to_spider(len(response.body))
        self.send(self.spider_runner, {"type": "scrape_response", "request": request,
                                       "response": response})

    def _process_exception(self, request, error):
        self.flow.host_done(request)
        try:
            result = self.mw.process_exception(request, error, self.spider)
        except Exception as e:
            result, error = None, e
        if result is None:
            self._to_spider_failure(request, error)
        elif isinstance(result, Response):
            self._process_response(request, result)
        else:
            self._schedule(result, request)

    def _to_spider_failure(self, request, error):
        if self.direct and request in self.direct:
            self._answer(request, error=error)
            return
        self.flow.sent_to_spider()
        self.send(self.spider_runner, {"type": "scrape_failure", "request": request, "error": error})

    def _schedule(self, request, replaces):
        """Schedule ``request``, which a middleware returned in place of ``replaces``
        (a redirect, a retry): with a durable frontier, in the same transaction as the
        ack of ``replaces``' lease. A download outside the frontier (``download``)
        downloads its replacement at once, as Scrapy's ``engine.download`` does."""
        self.flow.host_done(replaces)
        if self.direct and replaces in self.direct:
            self.direct[request] = self.direct.pop(replaces)
            self._download(request)
            if self.direct_waiting and replaces in self.direct_waiting:
                self._next_direct(replaces)  # that object is free again
            return
        message = {"type": "enqueue_requests", "requests": [request]}
        if replaces._lease is not None:
            message["done"] = [replaces._lease]
        self.send(self.scheduler, message)

    def _answer(self, request, response=None, error=None):
        """Answer the sender of the ``download`` of ``request`` (or of the request it
        replaced) with ``response`` or ``error``; forget it, and start the next
        ``download`` of the same object, if one waits for it."""
        target, key = self.direct.pop(request)
        if isinstance(target, Future):
            if not target.done():  # the caller may have given up (timeout)
                if error is None:
                    target.set_result(response)
                else:
                    target.set_exception(error)
        else:
            reply = {"type": "download_done", "key": key}
            if error is None:
                reply["response"] = response
            else:
                reply["error"] = error
            self.send(target, reply)
        if self.direct_waiting and request in self.direct_waiting:
            self._next_direct(request)

    def _requeue(self, requests):
        # Closing: requests the scheduler handed out go back (a durable frontier keeps
        # them for the next run).
        self.send(self.scheduler, {"type": "release_requests", "requests": list(requests)})

    # --- flow control and idleness ------------------------------------------------------

    def send(self, ref: pykka.ActorRef[Any], message: Mapping[str, Any]) -> None:
        """:meth:`CrawlActor.send <crawlfw.actors._base.CrawlActor.send>`; a message to
        the Scheduler ends the adding to a held ``pull_requests`` (:meth:`_pull`)."""
        if ref is self.scheduler:
            self._held_pull = None
        super().send(ref, message)

    def flush_held(self) -> None:
        self._held_pull = None
        super().flush_held()

    def _pull(self, message: messages.PullRequests) -> None:
        """Send ``message`` (a ``pull_requests``) to the Scheduler; while a burst is held
        (``hold_types``) and the last message held for the Scheduler is a
        ``pull_requests``, add it to that one instead (:func:`merge_pull_requests`): the
        Scheduler gets the same credit and reports, in the same order with respect to
        everything else the Engine tells it, in one message and one answer."""
        held = self._held_pull
        if held is not None and self._pulls_merged < self.max_held:
            merge_pull_requests(held, message)
            self._pulls_merged += 1  # as many as max_held: then told as usual
            return
        self.send(self.scheduler, message)
        if self._holding:
            self._held_pull = message  # type: ignore[assignment]  # a dict
            self._pulls_merged = 0

    def _after(self):
        """Grant credit, pull start requests, or check for idleness after each message."""
        flow = self.flow
        actions = flow.next_actions()
        if actions is NO_ACTIONS:
            if flow.reports_pending():  # the Scheduler holds credit: tell it at once
                self._pull(flow.take_reports(
                    {"type": "pull_requests", "count": 0, "reply_to": self.actor_ref}))
            return
        credit, start_count, idle_token = actions
        if credit:
            self._pull(flow.take_reports(
                {"type": "pull_requests", "count": credit, "reply_to": self.actor_ref}))
        elif flow.reports_pending():
            self._pull(flow.take_reports(
                {"type": "pull_requests", "count": 0, "reply_to": self.actor_ref}))
        if start_count:
            self.send(self.spider_runner, {"type": "pull_start_requests", "count": start_count})
        if idle_token is not None:
            self.send(self.scheduler, {"type": "check_idle", "token": idle_token,
                                       "reply_to": self.actor_ref})

    def _fire_spider_idle(self) -> bool:
        """Send ``spider_idle``; True when no handler raised DontCloseSpider. User
        actors told the event (their relays answer ``IDLE_BARRIER``) hold the idle check
        until each answers ``idle_barrier_passed``."""
        results = self.crawler.signals.send_catch_log(
            signals.spider_idle, spider=self.spider, dont_log=DontCloseSpider
        )
        barriers = sum(1 for _, x in results if x is IDLE_BARRIER)
        if barriers:
            self.flow.idle_barriers_sent(barriers)
        return not any(
            isinstance(getattr(x, "value", x), DontCloseSpider) for _, x in results
        )

    def handle_idle_barrier_passed(self, message: messages.IdleBarrierPassed) -> None:
        """A user actor handled ``spider_idle``; what it added came before this."""
        self.flow.idle_barrier_passed()
        self._after()

    def _schedule_idle_recheck(self):
        # One recheck timer at a time: a new idle turn kept open (new activity since the
        # last spider_idle) starts the wait again. A timer replaced without being
        # cancelled would fire spider_idle once more, and outlive the stopped engine.
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        self._idle_timer = self._tell_later({"type": "recheck_idle"}, IDLE_RECHECK_S)

    def _tell_later(self, message, delay_s) -> threading.Timer:
        """Tell this actor ``message`` after ``delay_s`` seconds (a daemon timer; nothing
        happens if the engine has stopped by then). Returns the started timer."""
        ref = self.actor_ref

        def tell():
            try:
                ref.tell(message)
            except Exception:  # the engine stopped meanwhile
                pass

        timer = threading.Timer(delay_s, tell)
        timer.daemon = True
        timer.start()
        return timer

    def _close(self, reason):
        # Requests held while paused go back to the scheduler (which keeps them in JOBDIR
        # for a resumed crawl); so does each request a downloader answers from now on, and
        # the downloaders give back what they still hold when they stop.
        abandoned = self.flow.close(reason)
        if abandoned is None:
            return  # already closing
        logger.info("Closing spider (%(reason)s)", {"reason": reason}, extra={"spider": self.spider})
        if self.parked or self.direct_held:  # parked requests go back too
            abandoned = [*abandoned, *self.parked,
                         *(request for request, _ in self.direct_held)]
            self.parked.clear()
            self.direct_held.clear()
        if self.direct:  # downloads outside the frontier: their senders learn it now
            abandoned = [request for request in abandoned if request not in self.direct]
            for request in list(self.direct):
                self._answer(request, error=DownloadCancelled(
                    f"Download of {request.url} cancelled: the spider is closing ({reason})"))
        if abandoned:
            self._requeue(abandoned)
        if self.supervisor is not None:
            self.send(self.supervisor, {"type": "spider_closing", "crawl_id": self.crawl_id,
                                        "reason": reason})
