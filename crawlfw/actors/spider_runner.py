"""SpiderRunnerActor: the actor shell of the :class:`~crawlfw.core.scraper.Scraper`, which
runs the spider's code (start requests, callbacks, errbacks) behind the spider
middlewares. It turns messages into Scraper calls and what the Scraper hands its sink
into messages: requests to the Scheduler, items to the Pipeline, ``close_spider`` and a
``response_scraped`` count to the Engine.

A callback's output is streamed in batches of at most :data:`OUTPUT_BATCH`; the full
batches of a long callback's requests are paced (:data:`PACED_BATCHES`) against the
Scheduler. With a durable frontier (``JOBDIR``) the runner hands the leases of the
requests whose callback has finished on at each ``checkpoint`` (see
:mod:`crawlfw.actors.scheduler`), with a snapshot of ``spider.state`` taken at that point.

``crawler.engine.download(request)`` awaited in an ``async def`` callback or errback
(:meth:`SpiderRunnerActor.callback_download`) tells the Engine ``download`` with this
actor as ``reply_to``; the callback is parked by the Scraper meanwhile and its
``response_scraped`` waits until it ends, so the crawl stays open. Each
``download_done`` answers its future and goes on with the callback (ARCHITECTURE.md,
"One request's path", step 7).

With ``REVISIT_ENABLED`` each response is classified for the revisit schedule before
its callback (:func:`crawlfw.core.frontier.revisit.classify`): a revisit answered 304,
or whose content digest is the last one's, is *unchanged*: its callback is not called
(``page_unchanged``); a changed one fires ``page_changed`` and runs its callback; a
404/410 fires ``page_gone``. After the callback (which may set ``meta['revisit']`` or
``meta['revisit_interval']`` for this page) the visit goes to the Scheduler
(``revisit_visited``), before the response's lease is noted done.
"""

import collections
import inspect
import itertools
import logging
import types

import pykka

from crawlfw import signals
from crawlfw.actors import messages
from crawlfw.actors._base import CrawlActor
from crawlfw.actors._validation import validate_message
from crawlfw.core.flow.scraper import OUTPUT_BATCH, Scraper, report_spider_error  # noqa: F401
from crawlfw.core.frontier.revisit import _meta_interval, classify, failed_visit
from crawlfw.spiders._async import external_future

# OUTPUT_BATCH and report_spider_error are defined in crawlfw.core.scraper and stay
# importable from here, as before the Scraper was split out.

__all__ = ["SpiderRunnerActor"]

logger = logging.getLogger(__name__)

#: Full batches of requests not yet handled by the Scheduler before a long callback waits.
PACED_BATCHES = 8

#: Seconds between checks that a paced receiver is alive.
_PACE_POLL_S = 1.0


class SpiderRunnerActor(CrawlActor):
    """Args:
    crawler: the Crawler (spider, signals, stats).
    scheduler, pipeline, engine: ActorRefs the output goes to.
    durable: the frontier is durable (``JOBDIR``): track leases for checkpoints.
    spidermw: the crawl's SpiderMiddlewareManager (None: built here, from the crawler).
    start_skip: start requests already scheduled by an earlier run of this job (the
        first ``start_skip`` outputs of ``start_requests()`` are skipped; it must yield
        the same requests in the same order each run, as Scrapy's default does).
    start_exhausted: an earlier run of this job consumed all start requests.
    **kw: ``CrawlActor`` arguments.
    """

    role = "spider_runner"
    # Its inbox is usually backlogged: tell the output of several responses in a burst.
    hold_types = frozenset(("scrape_response", "scrape_failure"))

    def __init__(self, crawler, scheduler, pipeline, engine, *, durable=False, spidermw=None,
                 start_skip=0, start_exhausted=False, **kw):
        super().__init__(settings=crawler.settings, **kw)
        # On the starting thread, before spider_opened: a handler may take every free
        # file descriptor (tests/test_fds_transient.py).
        _import_what_callbacks_use(crawler.spider)
        self.crawler = crawler
        self.spider = crawler.spider
        self.scheduler = scheduler
        self.pipeline = pipeline
        self.engine = engine
        self.durable = durable
        # Built on the caller's (supervisor's) thread, before spider_opened is sent: the
        # spider middlewares' from_crawler runs there.
        sink = types.SimpleNamespace(requests=self._send_requests, items=self._send_items,
                                     close_spider=self._send_close_spider)
        self.scraper = Scraper(crawler, sink, spidermw=spidermw, start_skip=start_skip,
                               start_exhausted=start_exhausted)
        self._paced = collections.deque()  # futures of paced batches (_send_paced)
        # The plain enqueue_requests held for the Scheduler, last of the held messages to
        # it: the next one's requests are added to it (send), one push per burst.
        self._held_enqueue: dict | None = None
        self._enqueues_merged = 0
        self._held_scraped: dict | None = None  # the response_scraped held last for the Engine
        # engine.download from callbacks: key -> (future, its run), till download_done
        self._downloads: dict = {}
        self._download_keys = itertools.count()
        # REVISIT_ENABLED: the visits of parked callbacks' responses, by request
        self.revisit = crawler.settings.getbool("REVISIT_ENABLED", False)
        self._parked_visits: dict[int, dict] = {}
        self._held_visits: dict | None = None  # the revisit_visited held in this burst

    def send(self, ref, message) -> None:
        """:meth:`CrawlActor.send <crawlfw.actors._base.CrawlActor.send>`; while a burst
        is held (``hold_types``), a plain ``enqueue_requests`` (only ``requests``: no
        leases, start or transient flag) adds its requests to the plain one held last
        for the Scheduler, up to :attr:`max_held` times. The Scheduler then pushes the
        same requests in the same order, before anything the burst sends it after
        them, in one message (``tests/actors/test_spider_runner.py``). A
        ``response_scraped`` takes in the one held last for the Engine
        (:meth:`_merge_scraped`)."""
        if ref is not self.scheduler:
            if ref is self.engine:
                if message.get("type") == "response_scraped" and self._holding:
                    self._merge_scraped(message)
                    return
                self._held_scraped = None
            super().send(ref, message)
            return
        plain = len(message) == 2 and message.get("type") == "enqueue_requests"
        held = self._held_enqueue
        if plain and held is not None and self._enqueues_merged < self.max_held:
            if self._check_sent:
                validate_message(message)
            if not self._enqueues_merged:
                held["requests"] = list(held["requests"])  # its own list, to extend
            held["requests"].extend(message["requests"])
            self._enqueues_merged += 1
            return
        self._held_enqueue = None
        super().send(ref, message)
        if plain and self._holding:
            self._held_enqueue = message
            self._enqueues_merged = 0

    def _merge_scraped(self, message) -> None:
        """Hold ``message`` (a ``response_scraped``, while holding); if the message held
        last for the Engine is a ``response_scraped`` (fewer than :attr:`max_held`
        merged), that one is taken out and its counts added to ``message``
        (``responses``): the report moves later, after the requests and items of every
        response it counts were held, never earlier (the Engine's idle check needs a
        response's requests at the Scheduler before it hears the response scraped)."""
        if self._check_sent:
            validate_message(message)
        held = self._held_scraped
        if held is not None and held.get("responses", 1) < self.max_held:
            for i in range(len(self._held) - 1, -1, -1):
                if self._held[i][1] is held:
                    del self._held[i]
                    message = {**message,
                               "items": held["items"] + message["items"],
                               "requests": held["requests"] + message["requests"],
                               "size": held["size"] + message["size"],
                               "responses": held.get("responses", 1) + 1}
                    break
        self._held.append((self.engine, message))
        self._held_scraped = message

    def flush_held(self) -> None:
        self._held_enqueue = None
        self._held_scraped = None
        self._held_visits = None
        super().flush_held()

    def on_stop(self):
        self.flush_held()
        abandoned = self.scraper.abandon()
        if abandoned:  # the Engine answers every download, so only if it stopped first
            logger.warning("%(n)d spider callbacks still waiting for engine.download() were "
                           "cancelled as the spider runner stopped", {"n": abandoned},
                           extra={"spider": self.spider})
        self._downloads.clear()
        if self.durable:  # the last checkpoint: acks what this run finished
            self._checkpoint(0, self.scheduler)

    def on_start(self):
        self.scraper.open_start_requests()  # on this thread: async start() uses its loop

    # --- messages -----------------------------------------------------------------------

    def handle_pull_start_requests(self, message: messages.PullStartRequests) -> None:
        batch, consumed, exhausted = self.scraper.pull_start_requests(message["count"])
        if self.durable:  # the count is committed with the requests it scheduled
            self.send(self.scheduler, {"type": "enqueue_requests", "requests": batch,
                                       "start": {"consumed": consumed, "exhausted": exhausted}})
        elif batch:
            self.send(self.scheduler, {"type": "enqueue_requests", "requests": batch})
        pulled = {"type": "start_requests_pulled", "count": len(batch), "exhausted": exhausted}
        scraper = self.scraper
        if scraper.start_items:
            pulled["items"] = scraper.start_items
        if exhausted and scraper.start_error:
            pulled["error"] = True
        self.send(self.engine, pulled)

    def handle_scrape_response(self, message: messages.ScrapeResponse) -> None:
        request, response = message["request"], message["response"]
        visit = self._revisit_visit(request, response) if self.revisit else None
        if visit is not None and visit["outcome"] == "unchanged":
            # the callback is not called: no duplicate items, no links followed again
            self._tell_visit(visit)
            if request._lease is not None:
                self.scraper.done_leases.append(request._lease)
            self.send(self.engine, {"type": "response_scraped", "request": request,
                                    "items": 0, "requests": 0, "size": len(response.body)})
            return
        if visit is None and self.revisit:
            self._revisit_failed(request)  # a revisit answered 5xx...: over all the same
        counts = self.scraper.scrape_response(request, response)
        if counts is None:  # parked: waits for engine.download, reported when it ends
            if visit is not None:
                self._parked_visits[id(request)] = visit
            return
        if visit is not None:
            self._send_visit(visit, request)
        self.send(self.engine, {"type": "response_scraped", "request": request,
                                "items": counts[0], "requests": counts[1],
                                "size": len(response.body)})

    def handle_scrape_failure(self, message: messages.ScrapeFailure) -> None:
        request = message["request"]
        if self.revisit:
            self._revisit_failed(request)
        counts = self.scraper.scrape_failure(request, message["error"])
        if counts is None:
            return
        self.send(self.engine, {"type": "response_scraped", "request": request,
                                "items": counts[0], "requests": counts[1], "size": 0})

    # --- revisits (REVISIT_ENABLED) -----------------------------------------------------

    def _revisit_visit(self, request, response):
        """Classify ``response`` for the revisit schedule, count it (``revisit/*``) and
        fire ``page_changed``/``page_unchanged``/``page_gone``; None when it does not
        touch the schedule. A bad ``meta['revisit_interval']`` or a raising
        ``revisit_content`` hook is logged as a spider error and the page is handled
        as if it changed (its callback runs), never lost."""
        from crawlfw.utils.request import request_fingerprint

        spider = self.spider
        try:
            visit = classify(request, response, spider, request_fingerprint(request))
        except Exception as e:
            self.scraper._spider_error(e, request, response)
            return None
        if visit is None:
            return None
        outcome = visit["outcome"]
        stats = self.crawler.stats
        stats.inc_value(f"revisit/{outcome}", spider=spider)
        if outcome == "unchanged" and response.status == 304:
            stats.inc_value("revisit/not_modified", spider=spider)
        signal = _OUTCOME_SIGNALS.get(outcome)
        if signal is not None:
            self.crawler.signals.send_catch_log(signal, response=response, request=request,
                                                spider=spider)
        return visit

    def _revisit_failed(self, request):
        """``request``, if it is a revisit, got no answer that says anything of the page
        (a download error, a 5xx, a request a middleware dropped, a raising
        ``revisit_content`` hook): counted in ``revisit/failed`` and told to the
        Scheduler, whose record is unchanged (due again an interval after it was taken)
        but which no longer counts it as pending (``revisit/due_now``)."""
        visit = failed_visit(request)
        if visit is not None:
            self.crawler.stats.inc_value("revisit/failed", spider=self.spider)
            self._tell_visit(visit)

    def _send_visit(self, visit, request):
        """Tell the Scheduler the visit of ``request`` once its callback ran: the
        callback may have set ``meta['revisit'] = False`` (no more revisits of this
        page) or ``meta['revisit_interval']``."""
        meta = request.meta
        if meta.get("revisit") is False:
            if visit["outcome"] == "new":
                return
            visit["outcome"] = "forget"
        try:
            visit["interval"] = _meta_interval(meta)
        except ValueError as e:
            logger.error("%(error)s (in %(request)s): the page's interval is the "
                         "schedule's", {"error": e, "request": request},
                         extra={"spider": self.spider})
            visit["interval"] = None
        self._tell_visit(visit)

    def _tell_visit(self, visit):
        """Tell the Scheduler ``visit`` before the response's ``response_scraped``: in a
        burst (``hold_types``) the visits go in one ``revisit_visited``, held where the
        burst's first visit was (so before every response it counts is reported to the
        Engine, whose idle check must find the page in the schedule); it is not a plain
        ``enqueue_requests``, so it does not stop those from being merged."""
        held = self._held_visits
        if held is not None:
            held["visits"].append(visit)
            return
        message = {"type": "revisit_visited", "visits": [visit]}
        CrawlActor.send(self, self.scheduler, message)
        if self._holding:
            self._held_visits = message

    # --- engine.download from async callbacks -------------------------------------------

    def callback_download(self, request):
        """``crawler.engine.download(request)`` called by an ``async def`` callback or
        errback running on this thread: tell the Engine ``download`` (answered with
        ``download_done``) and return the future the callback awaits.

        Returns:
            An ``asyncio.Future`` of this thread's loop: the ``Response``, or the
            download's exception.

        Raises:
            crawlfw.spiders._async.NotSuspendable: not called from such a callback (a
                plain ``def`` one, ``start()``, a middleware): it could not wait.
        """
        future, run = external_future()
        key = next(self._download_keys)
        self._downloads[key] = (future, run)
        self.send(self.engine, {"type": "download", "request": request, "key": key,
                                "reply_to": self.actor_ref})
        return future

    def handle_download_done(self, message: messages.DownloadDone) -> None:
        waiting = self._downloads.pop(message["key"], None)
        if waiting is None:
            return  # abandoned (stopping)
        future, run = waiting
        ended = self.scraper.download_answered(future, run, message.get("response"),
                                               message.get("error"))
        for request, response, n_items, n_requests in ended:
            visit = self._parked_visits.pop(id(request), None) if self._parked_visits else None
            if visit is not None:
                self._send_visit(visit, request)
            self.send(self.engine, {"type": "response_scraped", "request": request,
                                    "items": n_items, "requests": n_requests,
                                    "size": len(response.body) if response is not None else 0})

    # --- the Scraper's sink -------------------------------------------------------------

    def _send_requests(self, requests, running):
        if running:  # a full batch of a callback still running
            self._send_paced(self.scheduler, {"type": "enqueue_requests", "requests": requests})
        else:
            self.send(self.scheduler, {"type": "enqueue_requests", "requests": requests})

    def _send_items(self, items, response, spider_error):
        # Not paced: a media pipeline may be waiting for a download whose callback runs
        # on this thread.
        message = {"type": "process_items", "items": items, "response": response}
        if spider_error is not None:
            message["spider_error"], message["request"] = spider_error
        self.send(self.pipeline, message)

    def _send_close_spider(self, reason):
        self.send(self.engine, {"type": "close_spider", "reason": reason})

    def _send_paced(self, ref, message):
        """Send a full batch of a long callback's requests, at most
        :data:`PACED_BATCHES` ahead of the Scheduler: a callback yielding requests faster
        than the frontier stores them waits, instead of piling them up in the
        scheduler's inbox.

        The batch is sent with ``ask`` (its reply, None, says it was handled). Only the
        Scheduler is paced: it never waits for anything, so this cannot deadlock (the
        Pipeline may wait for a download whose callback runs on this thread). What this
        actor held back is told first, to keep the order of messages."""
        if self._check_sent:
            validate_message(message)
        self.flush_held()
        pending = self._paced
        while len(pending) >= PACED_BATCHES:
            try:
                pending[0].get(timeout=_PACE_POLL_S)
            except pykka.Timeout:
                if ref.is_alive():
                    continue
            except Exception:  # the receiver died or rejected it: stop pacing on it
                pass
            pending.popleft()
        try:
            pending.append(ref.ask(message, block=False))
        except pykka.ActorDeadError:
            self.on_undelivered(ref, message)

    # --- checkpoints (durable frontier) -------------------------------------------------

    def handle_checkpoint(self, message: messages.Checkpoint) -> None:
        self._checkpoint(message["epoch"], message["reply_to"])

    def _checkpoint(self, epoch, reply_to):
        """Hand the leases finished since the last checkpoint down the item path
        (Pipeline -> Exporters -> ``reply_to``): everything they caused was sent before
        this message on the same paths, so it is processed first."""
        self.send(self.pipeline, {"type": "checkpoint", "epoch": epoch, "reply_to": reply_to,
                                  "leases": self.scraper.take_done_leases(),
                                  "spider_state": self.scraper.spider_state_snapshot(),
                                  "feeds": {}})


_OUTCOME_SIGNALS = {"changed": signals.page_changed, "unchanged": signals.page_unchanged,
                    "gone": signals.page_gone}


def _import_what_callbacks_use(spider) -> None:
    """Import, before the crawl runs, the modules that spider callbacks load on first use:
    the selectors (``response.css``/``xpath``) and, for a spider with ``async def``
    methods, asyncio. An import is a file open: made mid-crawl while the process is out
    of file descriptors (``EMFILE``), it would fail the callback and lose its page
    (``tests/crash/test_broad.py::test_out_of_fds_during_transfers_is_transient``);
    start-up keeps importing neither for a crawl that cannot use them (a spider without
    coroutines loads no asyncio)."""
    import crawlfw.selector  # noqa: F401

    for cls in type(spider).__mro__:
        if cls.__module__.split(".")[0] == "crawlfw":
            continue  # crawlfw's own async defaults (Spider.start) run without asyncio
        for method in vars(cls).values():
            if inspect.iscoroutinefunction(method) or inspect.isasyncgenfunction(method):
                import asyncio  # noqa: F401

                return
