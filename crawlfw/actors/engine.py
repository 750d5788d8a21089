"""EngineActor: moves requests from the Scheduler through the downloader middlewares to
the per-slot Downloaders, and responses on to the SpiderRunner; detects idleness and asks
the Supervisor to close the spider.

Flow control is credit-based: the engine grants the Scheduler credit (``pull_requests``)
for as many requests as it has free download capacity (``CONCURRENT_REQUESTS`` minus
transfers in flight, and none while responses waiting for the spider exceed
``SCRAPER_SLOT_MAX_ACTIVE_SIZE`` bytes). Start requests are pulled from the SpiderRunner
only while credit is unused, i.e. while the Scheduler is empty (Scrapy consumes start
requests lazily in the same way).

Idle detection: when no transfer, no response in the spider and no item in the pipeline
is outstanding, start requests are exhausted and credit is unused, the engine sends
``check_idle`` to the Scheduler; the answer counts only if nothing happened in between
(``token``). Then ``spider_idle`` is fired; unless a handler raises ``DontCloseSpider``
the check is made once more and the spider is closed with ``finish_reason = 'finished'``.

Downloader restarts (``downloader_failed`` from the Supervisor, after its backoff): the
requests in flight in the dead downloader's slot are sent again to a new one, except a
request that was in flight in :data:`POISON_CRASHES` downloader deaths, which fails with
:class:`~crawlfw.exceptions.DownloaderCrashed` instead (crashes are counted per request
fingerprint, only when a downloader dies). Idle downloaders are reaped on a timer
(``DOWNLOADER_IDLE_TIMEOUT``) and started again on demand.

Pause (``pause_crawl``, from the control endpoint): no credit is granted and no idle
check is made; requests the Scheduler still sends against credit granted before are
held (``paused_requests``) and downloaded on ``resume_crawl``, or sent back to the
Scheduler if the spider closes meanwhile. Transfers in flight finish.
"""

import logging
import threading

from crawlfw import signals
from crawlfw.actors._base import CrawlActor
from crawlfw.actors.downloader import DownloaderActor
from crawlfw.core.downloadermw import DownloaderMiddlewareManager, RequestParked
from crawlfw.core.slot import slot_key
from crawlfw.exceptions import DontCloseSpider, DownloaderCrashed, IgnoreRequest
from crawlfw.http import Request, Response
from crawlfw.logformatter import LogFormatter
from crawlfw.utils.log import _debug_wanted, logformatter_adapter
from crawlfw.utils.request import request_fingerprint

logger = logging.getLogger(__name__)

__all__ = ["EngineActor"]

#: Seconds between ``spider_idle`` signals while a handler keeps the spider open.
IDLE_RECHECK_S = 5.0

#: Downloader deaths a request may be in flight for before it is a poison request.
POISON_CRASHES = 2


class EngineActor(CrawlActor):
    """Args:
    crawler: the Crawler (settings, signals, stats, logformatter, spider).
    scheduler: the SchedulerActor's ref.
    spider_runner: the SpiderRunnerActor's ref.
    **kw: ``CrawlActor`` arguments (``crawl_id``, ``supervisor``).
    """

    role = "engine"
    # Its inbox is often backlogged: tell what several messages caused in one burst.
    hold_types = frozenset(
        ("response_downloaded", "response_scraped", "items_processed", "requests_dequeued")
    )

    def __init__(self, crawler, scheduler, spider_runner, **kw):
        super().__init__(settings=crawler.settings, **kw)
        self.crawler = crawler
        self.spider = crawler.spider
        self.scheduler = scheduler
        self.spider_runner = spider_runner
        settings = crawler.settings
        self.max_concurrency = max(1, settings.getint("CONCURRENT_REQUESTS"))
        self.max_active_size = settings.getint("SCRAPER_SLOT_MAX_ACTIVE_SIZE")
        self.downloaders = {}  # slot key -> DownloaderActor ref
        self.parked = {}  # fingerprint -> lease of a request a middleware parked
        self.in_flight = {}  # slot key -> set of requests sent to that downloader
        self.downloading = 0
        self.credit = 0  # granted to the scheduler, not yet used
        self.in_spider = 0  # responses/failures sent to the spider runner
        self.in_spider_bytes = 0
        self.in_pipeline = 0  # items sent to the pipeline, not yet processed
        self.start_exhausted = False
        self.start_pull_pending = False
        self.running = False
        self.closing = None  # the close reason once closing
        self.activity = 0  # bumped by every message that means work; the idle token
        self.idle_check_pending = False
        self.idle_signal_token = None  # activity value when spider_idle was last sent
        self._idle_timer = None
        self.paused = False
        self.paused_requests = []  # dequeued while paused, downloaded on resume
        self.pipeline = None  # for add_items (user actors), from start_engine
        self.early_items = []  # add_items before start_engine
        self.blocked_slots = {}  # slot key -> reason (block_slot, from user actors)
        self.crashes = {}  # request fingerprint -> downloader deaths it was in flight for
        self.reap_after_s = settings.getfloat("DOWNLOADER_IDLE_TIMEOUT", 60.0)
        self._reap_marks = set()  # slots idle at the last reaper tick
        self._reap_timer = None
        # Built on the caller's (supervisor's) thread, before spider_opened is sent.
        self.mw = DownloaderMiddlewareManager.from_crawler(crawler)
        self.logformatter = crawler.logformatter
        # The default formatter logs "Crawled" lines at DEBUG: skip building them when
        # DEBUG is off. A custom formatter may choose another level, so it always runs.
        self._log_crawled = type(self.logformatter) is not LogFormatter

    def on_start(self):
        self.mw.open_spider(self.spider)

    def on_stop(self):
        self.flush_held()
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        if self._reap_timer is not None:
            self._reap_timer.cancel()
        for ref in self.downloaders.values():  # normally stopped by the supervisor already
            ref.stop(block=False)
        if self.mw is not None:
            self.mw.close_spider(self.spider)

    # --- messages -----------------------------------------------------------------------

    def handle_start_engine(self, message):
        self.spider_runner = message["spider_runner"]
        self.pipeline = message.get("pipeline")
        self.running = True
        if self.early_items and self.pipeline is not None:
            items, self.early_items = self.early_items, []
            self.handle_add_items({"type": "add_items", "items": items})
        if self.reap_after_s > 0:
            self._arm_reaper()
        self._after()

    def on_undelivered(self, ref, message):
        if message["type"] == "fetch":  # its downloader died: re-sent on downloader_failed
            return
        super().on_undelivered(ref, message)

    def handle_requests_dequeued(self, message):
        self.activity += 1
        requests = message["requests"]
        self.credit -= len(requests)
        if self.closing:
            self._requeue(requests)
            return
        if self.paused:
            self.paused_requests.extend(requests)
            return
        for request in requests:
            self._download(request)
        self._after()

    def handle_response_downloaded(self, message):
        self.activity += 1
        request = message["request"]
        if not self._transfer_done(message["slot"], request) and self.closing:
            return  # requeued when the spider started closing
        response = message["response"]
        self.crawler.signals.send_catch_log(
            signals.response_downloaded, response=response, request=request, spider=self.spider
        )
        self._process_response(request, response)
        self._after()

    def handle_download_failed(self, message):
        self.activity += 1
        request = message["request"]
        if not self._transfer_done(message["slot"], request) and self.closing:
            return  # requeued when the spider started closing
        self._process_exception(request, message["error"])
        self._after()

    def handle_start_requests_pulled(self, message):
        self.activity += 1
        self.start_pull_pending = False
        self.start_exhausted = message["exhausted"]
        self._after()

    def handle_response_scraped(self, message):
        self.activity += 1
        self.in_spider -= 1
        self.in_spider_bytes -= message["size"]
        self.in_pipeline += message["items"]
        self._after()

    def handle_items_processed(self, message):
        self.activity += 1
        self.in_pipeline -= message["count"]
        self._after()

    def handle_crawl(self, message):
        self.activity += 1
        request = message["request"]
        enqueue = {"type": "enqueue_requests", "requests": [request], "transient_ok": True}
        if self.parked:  # a parked request re-issued (robots.txt): it replaces its lease
            lease = self.parked.pop(request_fingerprint(request), None)
            if lease is not None:
                enqueue["done"] = [lease]
        self.send(self.scheduler, enqueue)
        self._after()

    def handle_idle_checked(self, message):
        self.idle_check_pending = False
        if self.paused:
            return  # checked again on resume
        if message["token"] != self.activity or message["pending"] or not self._looks_idle():
            self._after()
            return
        if self.idle_signal_token == self.activity:
            if self._idle_timer is not None:
                return  # a handler raised DontCloseSpider: wait for the recheck timer
            self._close("finished")
            return
        self.idle_signal_token = self.activity
        if self._fire_spider_idle():
            self._after()  # handlers may have scheduled requests: check once more
        else:
            self._schedule_idle_recheck()

    def handle_recheck_idle(self, message):
        self._idle_timer = None
        self.idle_signal_token = None
        self._after()

    def handle_pause_crawl(self, message):
        if not self.paused and not self.closing:
            self.paused = True
            logger.info("Crawl paused", extra={"spider": self.spider})

    def handle_resume_crawl(self, message):
        if not self.paused:
            return
        self.paused = False
        self.activity += 1
        logger.info("Crawl resumed", extra={"spider": self.spider})
        held, self.paused_requests = self.paused_requests, []
        for request in held:
            self._download(request)
        self._after()

    def handle_close_spider(self, message):
        self._close(message["reason"])

    def handle_downloader_failed(self, message):
        slot = message["slot"]
        self.downloaders.pop(slot, None)
        self._reap_marks.discard(slot)
        requests = self.in_flight.pop(slot, set())
        self.downloading -= len(requests)
        if requests:
            logger.warning(
                "Downloader for %(slot)s failed; re-sending its %(n)d requests",
                {"slot": slot, "n": len(requests)},
                extra={"spider": self.spider},
            )
            crashes = self.crashes
            for request in requests:
                fp = request_fingerprint(request)
                n = crashes[fp] = crashes.get(fp, 0) + 1
                if n < POISON_CRASHES:
                    self._fetch(request)
                    continue
                error = DownloaderCrashed(
                    f"{request} was being downloaded when the downloader of {slot} died, "
                    f"{n} times: not sent again")
                logger.error("Poison request: %(error)s", {"error": error},
                             extra={"spider": self.spider})
                self.crawler.stats.inc_value("supervisor/poison_requests")
                self._process_exception(request, error)
        self._after()

    def handle_add_items(self, message):
        items = message["items"]
        if self.closing:
            logger.warning("%(n)d items added while the spider is closing were dropped",
                           {"n": len(items)}, extra={"spider": self.spider})
            return
        if not self.running:  # before start_engine (a spider_opened handler): kept till then
            self.early_items.extend(items)
            return
        self.activity += 1
        self.in_pipeline += len(items)
        self.send(self.pipeline, {"type": "process_items", "items": items, "response": None})

    def handle_block_slot(self, message):
        slot = message["slot"]
        if slot not in self.blocked_slots:
            self.blocked_slots[slot] = message["reason"]
            logger.info("Download slot %(slot)s blocked: %(reason)s",
                        {"slot": slot, "reason": message["reason"]}, extra={"spider": self.spider})

    def handle_reap_downloaders(self, message):
        """Stop the downloaders idle since the last tick (started again on demand)."""
        self._reap_timer = None
        if self.closing:
            return
        marks = self._reap_marks
        for key, requests in list(self.in_flight.items()):
            if requests:
                marks.discard(key)
            elif key not in marks:
                marks.add(key)
            else:
                marks.discard(key)
                ref = self.downloaders.pop(key, None)
                del self.in_flight[key]
                self.crawler.download_slots.pop(key, None)
                if ref is not None:
                    self.crawler.stats.inc_value("downloader/reaped")
                    ref.stop(block=False)
                    logger.debug("Idle downloader of %(slot)s stopped", {"slot": key},
                                 extra={"spider": self.spider})
                    if self.supervisor is not None:
                        self.send(self.supervisor, {"type": "child_stopped",
                                                    "crawl_id": self.crawl_id,
                                                    "role": "downloader", "key": key})
        self._arm_reaper()

    def _arm_reaper(self):
        self._reap_timer = self._tell_later({"type": "reap_downloaders"}, self.reap_after_s)

    def handle_get_status(self, message):
        return {
            "running": self.running,
            "closing": self.closing,
            "downloading": self.downloading,
            "slots": {k: len(v) for k, v in self.in_flight.items()},
            "in_spider": self.in_spider,
            "in_pipeline": self.in_pipeline,
            "start_requests_exhausted": self.start_exhausted,
            "credit": self.credit,
            "paused": self.paused,
            "held": len(self.paused_requests),
        }

    # --- downloading --------------------------------------------------------------------

    def _download(self, request):
        try:
            result = self.mw.process_request(request, self.spider)
        except RequestParked:
            # A middleware keeps it and re-sends it later (robots.txt pending) as a new
            # request; with a durable frontier, that one replaces this lease.
            if request._lease is not None:
                self.parked[request_fingerprint(request)] = request._lease
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
        key = slot_key(request)
        if self.blocked_slots and key in self.blocked_slots:
            self._process_exception(request, IgnoreRequest(
                f"download slot {key} is blocked: {self.blocked_slots[key]}"))
            return
        ref = self.downloaders.get(key)
        if ref is None:
            ref = DownloaderActor.start(
                self.crawler, key, self.actor_ref, crawl_id=self.crawl_id, supervisor=self.supervisor
            )
            self.downloaders[key] = ref
            self.in_flight[key] = set()
            self._reap_marks.discard(key)
            if self.supervisor is not None:
                self.send(self.supervisor, {"type": "child_started", "crawl_id": self.crawl_id,
                                            "role": "downloader", "key": key, "ref": ref})
        self.in_flight[key].add(request)
        if self._reap_marks:
            self._reap_marks.discard(key)
        self.downloading += 1
        self.send(ref, {"type": "fetch", "request": request, "reply_to": self.actor_ref})

    def _transfer_done(self, slot, request) -> bool:
        """Forget an in-flight request; False if it was not in flight (requeued)."""
        in_flight = self.in_flight.get(slot)
        if in_flight is not None and request in in_flight:
            in_flight.discard(request)
            self.downloading -= 1
            return True
        return False

    def _process_response(self, request, response):
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
        self.in_spider += 1
        self.in_spider_bytes += len(response.body)
        self.send(self.spider_runner, {"type": "scrape_response", "request": request,
                                       "response": response})

    def _process_exception(self, request, error):
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
        self.in_spider += 1
        self.send(self.spider_runner, {"type": "scrape_failure", "request": request, "error": error})

    def _schedule(self, request, replaces):
        """Schedule ``request``, which a middleware returned in place of ``replaces``
        (a redirect, a retry): with a durable frontier, in the same transaction as the
        ack of ``replaces``' lease."""
        message = {"type": "enqueue_requests", "requests": [request]}
        if replaces._lease is not None:
            message["done"] = [replaces._lease]
        self.send(self.scheduler, message)

    def _requeue(self, requests):
        # Closing: requests the scheduler handed out go back (a durable frontier keeps
        # them for the next run).
        self.send(self.scheduler, {"type": "release_requests", "requests": list(requests)})

    # --- flow control and idleness ------------------------------------------------------

    def _after(self):
        """Grant credit, pull start requests, or check for idleness after each message."""
        if not self.running or self.closing or self.paused:
            return
        free = self.max_concurrency - self.downloading - self.credit
        if self.in_spider_bytes > self.max_active_size:
            free = 0
        if free > 0:
            self.credit += free
            self.send(self.scheduler, {"type": "pull_requests", "count": free,
                                       "reply_to": self.actor_ref})
        if self.credit > 0 and not self.start_exhausted and not self.start_pull_pending:
            self.start_pull_pending = True
            self.send(self.spider_runner, {"type": "pull_start_requests", "count": self.credit})
        if not self.idle_check_pending and self._looks_idle():
            self.idle_check_pending = True
            self.send(self.scheduler, {"type": "check_idle", "token": self.activity,
                                       "reply_to": self.actor_ref})

    def _looks_idle(self) -> bool:
        return (
            self.start_exhausted
            and not self.start_pull_pending
            and self.downloading == 0
            and self.in_spider == 0
            and self.in_pipeline == 0
            and self.credit > 0
        )

    def _fire_spider_idle(self) -> bool:
        """Send ``spider_idle``; True when no handler raised DontCloseSpider."""
        results = self.crawler.signals.send_catch_log(
            signals.spider_idle, spider=self.spider, dont_log=DontCloseSpider
        )
        return not any(
            isinstance(getattr(x, "value", x), DontCloseSpider) for _, x in results
        )

    def _schedule_idle_recheck(self):
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
        if self.closing:
            return
        self.closing = reason
        logger.info("Closing spider (%(reason)s)", {"reason": reason}, extra={"spider": self.spider})
        # Transfers still running are abandoned (the downloaders stop next): their requests
        # go back to the scheduler, which keeps them in JOBDIR for a resumed crawl.
        abandoned = [r for requests in self.in_flight.values() for r in requests]
        abandoned += self.paused_requests
        self.paused_requests = []
        if abandoned:
            for requests in self.in_flight.values():
                requests.clear()
            self.downloading = 0
            self._requeue(abandoned)
        if self.supervisor is not None:
            self.send(self.supervisor, {"type": "spider_closing", "crawl_id": self.crawl_id,
                                        "reason": reason})
