"""SpiderRunnerActor: runs the spider's code (start requests, callbacks, errbacks) behind
the spider middlewares, and sends what the spider produced on: requests to the Scheduler,
items to the Pipeline, a ``response_scraped`` count to the Engine.

A callback that raises is logged with its traceback ("Spider error processing ..."),
counted in ``spider_exceptions/<Type>``, sent as ``spider_error``; the crawl goes on and
whatever the callback yielded before raising is kept. ``CloseSpider`` closes the spider.

A callback's output is streamed: requests and items are sent on in batches of at most
:data:`OUTPUT_BATCH` while the callback runs, so a callback that yields 200,000 requests
never holds them all. With a durable frontier (``JOBDIR``) the runner remembers the
lease of every request whose callback has finished and hands those leases on at each
``checkpoint`` (see :mod:`crawlfw.actors.scheduler`), with a snapshot of
``spider.state`` taken at that point.
"""

import base64
import collections
import logging
import pickle

import pykka

from crawlfw import signals
from crawlfw.actors._base import CrawlActor
from crawlfw.actors._validation import validate_message
from crawlfw.core.spidermw import SpiderMiddlewareManager
from crawlfw.exceptions import CloseSpider, DownloadError, IgnoreRequest
from crawlfw.http import Request, Response
from crawlfw.item import BaseItem
from crawlfw.utils.failure import Failure
from crawlfw.utils.log import failure_to_exc_info
from crawlfw.utils.spider import iterate_spider_output

logger = logging.getLogger(__name__)

__all__ = ["SpiderRunnerActor"]

#: Most requests (and most items) of one callback sent in one message.
OUTPUT_BATCH = 256

#: Full batches of requests not yet handled by the Scheduler before a long callback waits.
PACED_BATCHES = 8

#: Seconds between checks that a paced receiver is alive.
_PACE_POLL_S = 1.0


class SpiderRunnerActor(CrawlActor):
    """Args:
    crawler: the Crawler (spider, signals, stats).
    scheduler, pipeline, engine: ActorRefs the output goes to.
    durable: the frontier is durable (``JOBDIR``): track leases for checkpoints.
    start_skip: start requests already scheduled by an earlier run of this job (the
        first ``start_skip`` outputs of ``start_requests()`` are skipped; it must yield
        the same requests in the same order each run, as Scrapy's default does).
    start_exhausted: an earlier run of this job consumed all start requests.
    **kw: ``CrawlActor`` arguments.
    """

    role = "spider_runner"
    # Its inbox is usually backlogged: tell the output of several responses in a burst.
    hold_types = frozenset(("scrape_response", "scrape_failure"))

    def __init__(self, crawler, scheduler, pipeline, engine, *, durable=False, start_skip=0,
                 start_exhausted=False, **kw):
        super().__init__(settings=crawler.settings, **kw)
        self.crawler = crawler
        self.spider = crawler.spider
        self.scheduler = scheduler
        self.pipeline = pipeline
        self.engine = engine
        # Built on the caller's (supervisor's) thread, before spider_opened is sent.
        self.spidermw = SpiderMiddlewareManager.from_crawler(crawler)
        self.start_requests = None
        self.durable = durable
        self.start_skip = start_skip
        self.start_exhausted = start_exhausted
        self.done_leases = []  # leases whose callback finished since the last checkpoint
        self._paced = collections.deque()  # futures of paced batches (_send_paced)

    def on_stop(self):
        self.flush_held()
        if self.durable:  # the last checkpoint: acks what this run finished
            self._checkpoint(0, self.scheduler)

    def on_start(self):
        if self.start_exhausted:
            self.start_requests = iter(())
            return
        try:
            start = self.spider.start_requests()
            self.start_requests = iter(self.spidermw.process_start_requests(start, self.spider))
            for _ in range(self.start_skip):  # scheduled by an earlier run of this job
                next(self.start_requests)
        except StopIteration:
            pass
        except Exception:
            logger.error("Error while obtaining start requests", exc_info=True,
                         extra={"spider": self.spider})
            self.start_requests = iter(())

    # --- messages -----------------------------------------------------------------------

    def handle_pull_start_requests(self, message):
        batch = []
        exhausted = False
        consumed = 0
        start_requests = self.start_requests
        try:
            for _ in range(message["count"]):
                request = next(start_requests)
                consumed += 1
                if isinstance(request, Request):
                    batch.append(request)
                else:
                    logger.error(
                        "start_requests must yield Request objects, got %(typename)r: %(value)r",
                        {"typename": type(request).__name__, "value": request},
                        extra={"spider": self.spider},
                    )
        except StopIteration:
            exhausted = True
        except Exception:
            logger.error("Error while obtaining start requests", exc_info=True,
                         extra={"spider": self.spider})
            exhausted = True
        if self.durable:  # the count is committed with the requests it scheduled
            self.send(self.scheduler, {"type": "enqueue_requests", "requests": batch,
                                       "start": {"consumed": consumed, "exhausted": exhausted}})
        elif batch:
            self.send(self.scheduler, {"type": "enqueue_requests", "requests": batch})
        self.send(self.engine, {"type": "start_requests_pulled", "count": len(batch),
                                "exhausted": exhausted})

    def handle_scrape_response(self, message):
        request, response = message["request"], message["response"]
        try:
            output = self.spidermw.scrape_response(self._call_spider, response, request, self.spider)
        except Exception as e:
            output = ()
            self._spider_error(e, request, response)
        self._consume(output, request, response, len(response.body))

    def handle_scrape_failure(self, message):
        request, error = message["request"], message["error"]
        try:
            output = self._call_spider(error, request, self.spider)
        except Exception as e:
            output = ()
            if e is not error:
                self._spider_error(e, request, None)
            self._log_download_error(error, request)
        self._consume(output, request, None, 0)

    # --- spider code --------------------------------------------------------------------

    def _call_spider(self, result, request, spider):
        """Run the callback on a response, or the errback on an exception (which is
        re-raised when the request has no errback)."""
        if isinstance(result, Response):
            callback = request.callback or spider.parse
            cb_kwargs = request.cb_kwargs
            if cb_kwargs:
                return iterate_spider_output(callback(result, **cb_kwargs))
            return iterate_spider_output(callback(result))
        if request.errback is None:
            raise result
        return iterate_spider_output(request.errback(Failure(result, request)))

    def _consume(self, output, request, response, size):
        requests, items = [], []
        n_requests = n_items = 0
        error = None
        try:
            for obj in output:
                if isinstance(obj, Request):
                    requests.append(obj)
                    if len(requests) >= OUTPUT_BATCH:
                        n_requests += len(requests)
                        self._send_paced(self.scheduler, {"type": "enqueue_requests",
                                                          "requests": requests})
                        requests = []
                elif isinstance(obj, (BaseItem, dict)):
                    items.append(obj)
                    if len(items) >= OUTPUT_BATCH:
                        n_items += len(items)
                        # Not paced: a media pipeline may be waiting for a download
                        # whose callback runs on this thread.
                        self.send(self.pipeline, {"type": "process_items", "items": items,
                                                  "response": response})
                        items = []
                elif obj is not None:
                    logger.error(
                        "Spider must return Request, BaseItem, dict or None, "
                        "got %(typename)r in %(request)s",
                        {"request": request, "typename": type(obj).__name__},
                        extra={"spider": self.spider},
                    )
        except Exception as e:
            if response is None:
                self._log_download_error(e, request)
            elif items and not isinstance(e, CloseSpider):
                # Reported by the Pipeline after it has scraped the items yielded before
                # the error, so the log tells events in the order they happened.
                error = (e, request)
            else:
                self._spider_error(e, request, response)
        if requests:
            n_requests += len(requests)
            self.send(self.scheduler, {"type": "enqueue_requests", "requests": requests})
        if items:
            n_items += len(items)
            message = {"type": "process_items", "items": items, "response": response}
            if error is not None:
                message["spider_error"], message["request"] = error
            self.send(self.pipeline, message)
        self.send(self.engine, {"type": "response_scraped", "request": request,
                                "items": n_items, "requests": n_requests, "size": size})
        if request._lease is not None:
            self.done_leases.append(request._lease)

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

    def handle_checkpoint(self, message):
        self._checkpoint(message["epoch"], message["reply_to"])

    def _checkpoint(self, epoch, reply_to):
        """Hand the leases finished since the last checkpoint down the item path
        (Pipeline -> Exporters -> ``reply_to``): everything they caused was sent before
        this message on the same paths, so it is processed first."""
        leases, self.done_leases = self.done_leases, []
        self.send(self.pipeline, {"type": "checkpoint", "epoch": epoch, "reply_to": reply_to,
                                  "leases": leases, "spider_state": self._spider_state(),
                                  "feeds": {}})

    def _spider_state(self):
        state = getattr(self.spider, "state", None)
        if state is None:
            return None
        try:
            return base64.b64encode(pickle.dumps(state, pickle.HIGHEST_PROTOCOL)).decode("ascii")
        except Exception as e:
            logger.error("spider.state cannot be saved (it must be picklable): %(error)s",
                         {"error": e}, extra={"spider": self.spider})
            return None

    def _spider_error(self, exc, request, response):
        if isinstance(exc, CloseSpider):
            self.send(self.engine, {"type": "close_spider", "reason": exc.reason or "cancelled"})
            return
        report_spider_error(self.crawler, exc, request, response)

    def _log_download_error(self, error, request):
        if isinstance(error, IgnoreRequest):
            return
        if isinstance(error, CloseSpider):
            self.send(self.engine, {"type": "close_spider", "reason": error.reason or "cancelled"})
            return
        if error.__traceback__ is not None and not isinstance(error, DownloadError):
            logger.error("Error downloading %(request)s", {"request": request},
                         exc_info=failure_to_exc_info(error), extra={"spider": self.spider})
        else:
            logger.error("Error downloading %(request)s: %(errmsg)s",
                         {"request": request, "errmsg": str(error) or type(error).__name__},
                         extra={"spider": self.spider})


def report_spider_error(crawler, exc, request, response):
    """Log "Spider error processing <request>" with the traceback of ``exc``, send
    ``spider_error`` and count ``spider_exceptions/<Type>``.

    Args:
        crawler: the Crawler.
        exc: the exception the callback raised.
        request: the request whose callback raised.
        response: the response it was called with.
    """
    spider = crawler.spider
    referer = request.headers.get("Referer")
    logger.error(
        "Spider error processing %(request)s (referer: %(referer)s)",
        {"request": request, "referer": referer.decode("latin-1") if referer else None},
        exc_info=failure_to_exc_info(exc),
        extra={"spider": spider},
    )
    crawler.signals.send_catch_log(
        signals.spider_error, failure=Failure(exc, request), response=response, spider=spider
    )
    crawler.stats.inc_value(f"spider_exceptions/{type(exc).__name__}", spider=spider)
