"""The Scraper: runs the spider's code (start requests, callbacks, errbacks) behind the
spider middlewares and hands what it produced to output sinks, in batches.

Plain, thread-free logic (Scrapy 1.2's ``scrapy.core.scraper.Scraper`` without
Deferreds); :class:`crawlfw.actors.spider_runner.SpiderRunnerActor` owns one, turns its
messages into calls, and its sink calls into messages (requests to the Scheduler, items
to the Pipeline, ``close_spider`` to the Engine).

A callback that raises is logged with its traceback ("Spider error processing ..."),
counted in ``spider_exceptions/<Type>``, sent as ``spider_error``; whatever the callback
yielded before raising is kept, and when that includes items the error is handed on
with the last batch of them (:meth:`ScraperSink.items`) so that it is reported after
they are scraped. ``CloseSpider`` closes the spider (:meth:`ScraperSink.close_spider`).

A callback's output is streamed: requests and items go to the sinks in batches of at
most :data:`OUTPUT_BATCH` while the callback runs, so a callback that yields 200,000
requests never holds them all. With a durable frontier (``JOBDIR``) the Scraper
remembers the lease of every request whose callback has finished
(:meth:`Scraper.take_done_leases`) and snapshots ``spider.state``
(:meth:`Scraper.spider_state_snapshot`) for checkpoints.

A web page cannot open local files (beyond Scrapy, as a browser): a ``file:`` request
produced from an ``http``/``https`` response (a link followed, ``response.follow``, a
CrawlSpider rule, an errback of an http(s) request) is dropped with a WARNING ("Ignoring
request <GET file:///...> from <200 http://...>: a web page cannot open local files")
and counted in ``scraper/refused_local_url``. Start requests and requests made from a
``file:`` (or ``ftp:``) response are not affected. ``LOCAL_URLS_FROM_WEB_ENABLED = True``
restores Scrapy's behaviour (follow them). See docs/security.md.

An ``async def`` callback or errback may wait for a download the Engine answers by
message (``await crawler.engine.download(request)``). It runs as a
:class:`~crawlfw.spiders._async.SuspendableRun`: when it waits for such an answer with
nothing else to do, the Scraper parks it (:attr:`Scraper.parked`) and returns None
instead of the counts; the spider runner goes on with other messages and hands each
answer to :meth:`Scraper.download_answered`, which goes on with the callback and returns
the scrapes that ended. A coroutine callback parks before its output exists; an async
generator callback parks between two values: what it yielded before has gone through
the spider middlewares and to the sinks, and the rest of its output goes through
``process_spider_output`` again when it resumes (each middleware's
``process_spider_output`` is called once per stretch of output between two waits).
The durable frontier's lease of the request is done when the callback ends.
"""

from __future__ import annotations

import base64
import inspect
import logging
import pickle
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, cast

from crawlfw import signals
from crawlfw.core.flow.spidermw import SpiderMiddlewareManager
from crawlfw.exceptions import CloseSpider, DownloadError, IgnoreRequest
from crawlfw.http import Request, Response
from crawlfw.item import ITEM_TYPES
from crawlfw.logformatter import format_event
from crawlfw.spiders._async import SuspendableRun, anext_step, run_coroutine
from crawlfw.spiders._start import start_output
from crawlfw.utils._names import public_class_name
from crawlfw.utils.failure import Failure
from crawlfw.utils.log import failure_to_exc_info, logformatter_adapter
from crawlfw.utils.misc import arg_to_iter

if TYPE_CHECKING:
    from crawlfw.core._types import CrawlerLike
    from crawlfw.spiders import Spider

logger = logging.getLogger(__name__)

__all__ = ["OUTPUT_BATCH", "Parked", "Scraper", "ScraperSink", "report_spider_error"]

#: Most requests (and most items) of one callback handed to a sink in one call.
OUTPUT_BATCH = 256

#: URL prefixes of local schemes a web page may not produce requests for (Request URLs
#: have a lower-case scheme).
_LOCAL_PREFIXES = ("file:",)
_WEB_PREFIXES = ("http:", "https:")


class ScraperSink(Protocol):
    """Where a :class:`Scraper` puts what the spider produced. Each method is called once
    per batch (never per object); a batch list belongs to the sink once handed over.
    """

    def requests(self, requests: list[Request], running: bool) -> None:
        """Take a batch of requests (1 to :data:`OUTPUT_BATCH` of them).

        Args:
            requests: the requests, in the order the spider yielded them.
            running: True for a full batch handed over while the callback still runs
                (more may follow: the sink may make it wait, e.g. pace it against the
                frontier); False for the last batch of a callback and for start requests.
        """

    def items(self, items: list[Any], response: Response | None,
              spider_error: tuple[BaseException, Request] | None) -> None:
        """Take a batch of items (1 to :data:`OUTPUT_BATCH`, of any item type: dict, ``Item``,
        dataclass, attrs, pydantic: :data:`crawlfw.item.ITEM_TYPES`).

        Args:
            items: the items, in the order the spider yielded them.
            response: the response whose callback yielded them (None for an errback of a
                download error).
            spider_error: None, or ``(exception, request)`` when the callback raised after
                yielding these items (only with the last batch): the receiver reports it
                with :func:`report_spider_error` after scraping the items, so the log
                tells events in the order they happened.
        """

    def close_spider(self, reason: str) -> None:
        """The spider raised ``CloseSpider``: close it with ``reason`` (its ``reason``,
        else ``"cancelled"``)."""


class _CallbackSuspended(BaseException):
    """Raised by :meth:`Scraper.call_spider` when a coroutine callback (or errback) waits
    for an outside answer: a ``BaseException``, so that it passes the spider
    middlewares' ``except Exception`` to :meth:`Scraper.scrape_response` untouched."""

    def __init__(self, run: SuspendableRun) -> None:
        super().__init__()
        self.run = run


class Parked:
    """A callback or errback of one response (or failure) waiting for outside answers
    (:meth:`Scraper.download_answered` goes on with it).

    Attributes:
        run: its :class:`~crawlfw.spiders._async.SuspendableRun` (a coroutine callback's
            whole run, or one step of an async generator callback).
        request: the request whose callback it is.
        response: the ``Response``, or None for an errback of a download error.
        agen: the async generator callback stepped (None for a coroutine).
        error: the download error an errback of ``scrape_failure`` was called with.
        items, requests: what its output handed to the sinks so far.
    """

    __slots__ = ("run", "request", "response", "agen", "error", "items", "requests")

    def __init__(self, run: SuspendableRun, request: Request, response: Response | None,
                 agen: Any = None, error: BaseException | None = None, items: int = 0,
                 requests: int = 0) -> None:
        self.run = run
        self.request = request
        self.response = response
        self.agen = agen
        self.error = error
        self.items = items
        self.requests = requests


class Scraper:
    """Call the spider and hand its output to a sink.

    Args:
        crawler: the Crawler (its ``spider``, ``signals``, ``stats``).
        sink: a :class:`ScraperSink`; its three methods are looked up once, here.
        spidermw: the spider middleware manager (default: built from the crawler's
            ``SPIDER_MIDDLEWARES``; building it runs the middlewares' ``from_crawler``).
        start_skip: start requests already scheduled by an earlier run of this job (the
            first ``start_skip`` outputs of ``start_requests()`` are skipped; it must yield
            the same requests in the same order each run, as Scrapy's default does).
        start_exhausted: an earlier run of this job consumed all start requests.

    Not thread-safe: one thread (the SpiderRunner's) calls every method, which matters
    for ``async def`` callbacks and ``start()`` (each thread has its own event loop).
    """

    def __init__(self, crawler: CrawlerLike, sink: ScraperSink, *,
                 spidermw: SpiderMiddlewareManager | None = None, start_skip: int = 0,
                 start_exhausted: bool = False) -> None:
        self.crawler = crawler
        self.spider = crawler.spider
        self.spidermw = (spidermw if spidermw is not None
                         else SpiderMiddlewareManager.from_crawler(crawler))
        self._requests_sink = sink.requests
        self._items_sink = sink.items
        self._close_spider_sink = sink.close_spider
        self.start_skip = start_skip
        self.start_exhausted = start_exhausted
        self.start_requests: Iterator[Any] | None = None
        #: True once ``start_requests()``/``start()`` raised: the crawl's finish reason
        #: becomes ``start_error`` (Scrapy 2.13) instead of ``finished``.
        self.start_error = False
        #: Items the last :meth:`pull_start_requests` handed to the sink (Scrapy 2.13
        #: accepts items from ``start()``).
        self.start_items = 0
        self.done_leases: list[int] = []  # leases whose callback finished since take_done_leases
        #: Callbacks waiting for outside answers, by their run (see the module docstring).
        self.parked: dict[SuspendableRun, Parked] = {}
        # (run, async generator) of an async generator callback that has just parked
        # while its output was consumed (set by _steps, taken by _consume)
        self._parking: tuple[SuspendableRun, Any] | None = None
        self._resuming: Parked | None = None  # the parked scrape being gone on with
        settings = getattr(crawler, "settings", None)
        self._local_guard = not (
            settings is not None and settings.getbool("LOCAL_URLS_FROM_WEB_ENABLED")
        )

    # --- start requests -----------------------------------------------------------------

    def open_start_requests(self) -> None:
        """Open the spider's start output (``spider.start()``, Scrapy 2.13's entry point,
        whose default iterates ``start_requests()``: :mod:`crawlfw.spiders._start`)
        through the middlewares' ``process_start_requests``/``process_start`` and skip
        the first ``start_skip`` outputs. Call it on the thread that will pull them.
        An exception is reported (:meth:`_start_failed`) and ends the start requests;
        none is raised.
        """
        if self.start_exhausted:
            self.start_requests = iter(())
            return
        try:
            start = start_output(self.spider)
            self.start_requests = iter(self.spidermw.process_start_requests(start, self.spider))
            for _ in range(self.start_skip):  # scheduled by an earlier run of this job
                next(self.start_requests)
        except StopIteration:
            pass
        except Exception as exc:
            self.start_requests = iter(())
            self._start_failed(exc)

    def _start_failed(self, exc: Exception) -> None:
        """The start output raised ``exc``: ``CloseSpider`` closes the spider with its
        reason (else ``cancelled``); any other error is logged as Scrapy 2.19 does
        ("Error while reading start items and requests: <error>.", with the traceback),
        sent as ``spider_error`` (``response`` None), counted in
        ``spider_exceptions/count`` and ``spider_exceptions/<Type>``, and makes the
        finish reason ``start_error``."""
        if isinstance(exc, CloseSpider):
            self._close_spider_sink(exc.reason or "cancelled")
            return
        self.start_error = True
        logger.error("Error while reading start items and requests: %(error)s.",
                     {"error": exc}, exc_info=True, extra={"spider": self.spider})
        self.crawler.signals.send_catch_log(signals.spider_error, failure=Failure(exc),
                                            response=None, spider=self.spider)
        stats = self.crawler.stats
        stats.inc_value("spider_exceptions/count", spider=self.spider)
        stats.inc_value(f"spider_exceptions/{type(exc).__name__}", spider=self.spider)

    def pull_start_requests(self, count: int) -> tuple[list[Request], int, bool]:
        """Take up to ``count`` outputs of the start requests (opened first if
        :meth:`open_start_requests` was not called). Items among them (Scrapy 2.13) go
        to the sink at once (their count in :attr:`start_items`); any other output is
        logged ("start_requests must yield Request objects or items, got ...") and
        dropped; an exception ends them (:meth:`_start_failed`: reported, and
        :attr:`start_error` set, or the spider closed for ``CloseSpider``). Requests get
        ``meta['is_start_request'] = True`` unless the meta already has that key.

        Returns:
            ``(batch, consumed, exhausted)``: the Requests (not handed to the sink: the
            caller sends them with the count), how many outputs were taken (dropped ones
            included: what ``start_skip`` counts), and whether the start requests ended.
        """
        if self.start_requests is None:
            self.open_start_requests()
        batch: list[Request] = []
        items: list[Any] = []
        exhausted = False
        consumed = 0
        start_requests = cast("Iterator[Any]", self.start_requests)  # opened above
        try:
            for _ in range(count):
                request = next(start_requests)
                consumed += 1
                if isinstance(request, Request):
                    # first in, first out (2.13); a spider may opt a request out (False)
                    request.meta.setdefault("is_start_request", True)
                    batch.append(request)
                elif isinstance(request, ITEM_TYPES):
                    items.append(request)
                elif request is not None:
                    logger.error(
                        "start_requests must yield Request objects or items, got "
                        "%(typename)r: %(value)r",
                        {"typename": type(request).__name__, "value": request},
                        extra={"spider": self.spider},
                    )
        except StopIteration:
            exhausted = True
        except Exception as exc:
            exhausted = True
            self._start_failed(exc)
        self.start_items = len(items)
        if items:
            self._items_sink(items, None, None)
        return batch, consumed, exhausted

    # --- responses and failures ---------------------------------------------------------

    def scrape_response(self, request: Request, response: Response) -> tuple[int, int] | None:
        """Run the spider middlewares and the callback on ``response`` and hand the output
        to the sink (a raising callback: see the module docstring).

        Returns:
            ``(n_items, n_requests)`` handed to the sink; None when the callback waits
            for an outside answer (parked: :meth:`download_answered` reports it).
        """
        output: Iterable[Any]
        try:
            output = self.spidermw.scrape_response(self.call_spider, response, request,
                                                   self.spider)
        except _CallbackSuspended as suspended:
            self._park(Parked(suspended.run, request, response))
            return None
        except Exception as e:
            output = ()
            self._spider_error(e, request, response)
        return self._consume(output, request, response)

    def scrape_failure(self, request: Request, error: BaseException) -> tuple[int, int] | None:
        """Call ``request.errback`` with a :class:`~crawlfw.utils.failure.Failure` of the
        download ``error`` (no spider middlewares, as in Scrapy 1.2) and hand its output
        to the sink. Without an errback the error is logged ("Error downloading
        <request>"; an ``IgnoreRequest`` is silent); an errback that raises is reported
        as a spider error, then the download error is logged.

        Returns:
            ``(n_items, n_requests)`` handed to the sink; None when the errback waits for
            an outside answer (as :meth:`scrape_response`).
        """
        output: Iterable[Any]
        try:
            output = self.call_spider(error, request, self.spider)
        except _CallbackSuspended as suspended:
            self._park(Parked(suspended.run, request, None, error=error))
            return None
        except Exception as e:
            output = ()
            if e is not error:
                self._spider_error(e, request, None)
            self._log_download_error(error, request)
        return self._consume(output, request, None)

    def call_spider(self, result: Response | BaseException, request: Request,
                    spider: Spider) -> Iterable[Any]:
        """Run the callback on a Response, or the errback on an exception (Scrapy 1.2's
        ``Scraper.call_spider``; the ``scrape_func`` of
        :meth:`~crawlfw.core.spidermw.SpiderMiddlewareManager.scrape_response`).

        Args:
            result: a ``Response`` or an exception instance.
            request: the request (its ``callback``/``errback``, ``cb_kwargs``).
            spider: the spider (``spider.parse`` when the request has no callback).

        Returns:
            An iterable of the output, as
            :func:`~crawlfw.utils.spider.iterate_spider_output` makes it, but for
            ``async def`` ones: a coroutine runs as a
            :class:`~crawlfw.spiders._async.SuspendableRun`, an async generator is
            stepped by one (:meth:`_steps`).

        Raises:
            ``result`` itself when it is an exception and the request has no errback;
            whatever the callback or errback raises; ``_CallbackSuspended`` when a
            coroutine waits for an outside answer.
        """
        if isinstance(result, Response):
            callback = request.callback or spider.parse
            cb_kwargs = request.cb_kwargs
            if cb_kwargs:
                return self._output(callback(result, **cb_kwargs))
            return self._output(callback(result))
        if request.errback is None:
            raise result
        return self._output(request.errback(Failure(result, request)))

    def _output(self, result: Any) -> Iterable[Any]:
        """What a callback returned as an iterable (``iterate_spider_output``'s rules),
        ``async def`` callbacks run so that they can wait for outside answers."""
        if inspect.iscoroutine(result):
            run = SuspendableRun(result)
            if not run.drive():
                raise _CallbackSuspended(run)
            result = run.task.result()
        if inspect.isasyncgen(result):
            return self._steps(result)
        output: Iterable[Any] = arg_to_iter(result)
        return output

    def _steps(self, agen: Any, first: SuspendableRun | None = None) -> Iterator[Any]:
        """Step the async generator callback ``agen``, each step a
        :class:`~crawlfw.spiders._async.SuspendableRun`: the plain iterable the spider
        middlewares consume. When a step waits for an outside answer, it notes
        ``(run, agen)`` in ``_parking`` and ends (the output so far is consumed; the
        rest is a new call of this, with ``first`` the run of that step). Leaving it
        early closes ``agen`` (its ``finally`` blocks run), as
        :func:`~crawlfw.spiders._async.iterate_async_generator` does.
        """
        parked = finished = False
        run = first if first is not None else SuspendableRun()
        step_done = first is not None
        try:
            while True:
                if not step_done:
                    run.start(anext_step(agen))
                    if not run.drive():
                        self._parking = (run, agen)
                        parked = True
                        return
                try:
                    value = run.task.result()
                except StopAsyncIteration:
                    finished = True
                    return
                except BaseException:
                    finished = True  # a generator that raised has ended
                    raise
                step_done = False
                yield value
        finally:
            if not (parked or finished) and getattr(agen, "ag_frame", True) is not None:
                run_coroutine(agen.aclose())

    def _consume(self, output: Iterable[Any], request: Request,
                 response: Response | None) -> tuple[int, int] | None:
        requests: list[Request] = []
        items: list[Any] = []
        n_requests = n_items = 0
        error: tuple[BaseException, Request] | None = None
        source = response if response is not None else request
        from_web = self._local_guard and source.url.startswith(_WEB_PREFIXES)
        try:
            for obj in output:
                ocls = obj.__class__
                if ocls is Request or isinstance(obj, Request):
                    # a plain Request's url property read without calling it
                    if from_web and (obj._url if ocls is Request else obj.url).startswith(
                            _LOCAL_PREFIXES):
                        self._refuse_local(obj, source)
                        continue
                    requests.append(obj)
                    if len(requests) >= OUTPUT_BATCH:
                        n_requests += len(requests)
                        self._requests_sink(requests, True)
                        requests = []
                elif isinstance(obj, ITEM_TYPES):  # dict, Item first; then any adaptable type
                    items.append(obj)
                    if len(items) >= OUTPUT_BATCH:
                        n_items += len(items)
                        self._items_sink(items, response, None)
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
                # Reported by the items' receiver after it has scraped the items yielded
                # before the error, so the log tells events in the order they happened.
                error = (e, request)
            else:
                self._spider_error(e, request, response)
        if requests:
            n_requests += len(requests)
            self._requests_sink(requests, False)
        if items:
            n_items += len(items)
            self._items_sink(items, response, error)
        if self._parking is not None:  # an async generator callback waits: not done
            run, agen = self._parking
            self._parking = None
            self._park(Parked(run, request, response, agen, items=n_items,
                              requests=n_requests))
            return None
        if request._lease is not None:
            self.done_leases.append(request._lease)
        return n_items, n_requests

    # --- callbacks waiting for outside answers ------------------------------------------

    def _park(self, parked: Parked) -> None:
        resuming = self._resuming
        if resuming is not None:  # parked again: what it produced before counts too
            parked.items += resuming.items
            parked.requests += resuming.requests
            if parked.error is None:
                parked.error = resuming.error
        parked.run.owner = parked
        self.parked[parked.run] = parked

    def download_answered(self, future: Any, run: SuspendableRun, response: Response | None,
                          error: BaseException | None = None
                          ) -> list[tuple[Request, Response | None, int, int]]:
        """Set the answer to an outside wait (a ``download_done``) and go on with the
        callbacks that can: the one that waits for it, and any other parked one whose
        task ended meanwhile (the loop ran for others).

        Args:
            future: the future :func:`~crawlfw.spiders._async.external_future` made.
            run: the run it belongs to.
            response: the answer (None with ``error``).
            error: the exception to raise in the callback instead.

        Returns:
            ``[(request, response_or_None, n_items, n_requests)]``: the scrapes that
            ended (their output handed to the sinks; ``response`` None for an errback of
            a download error), in the order they ended.
        """
        if not future.done():  # the callback may have given up on it (cancelled it)
            if error is None:
                future.set_result(response)
            else:
                future.set_exception(error)
        ended = []
        parked = self.parked.get(run)
        if parked is not None and run.drive():
            ended.append(self._go_on(parked))
        if self.parked:
            for parked in [p for run, p in self.parked.items() if run.task.done()]:
                ended.append(self._go_on(parked))
        return [e for e in ended if e is not None]

    def _go_on(self, parked: Parked) -> tuple[Request, Response | None, int, int] | None:
        """Hand on the output of a parked callback whose run is done (through the spider
        middlewares for a response's, as :meth:`scrape_response` would have); None when
        it parks again."""
        del self.parked[parked.run]
        request, response, run = parked.request, parked.response, parked.run
        self._resuming = parked
        try:
            output: Iterable[Any]
            if parked.agen is not None:
                output = self._steps(parked.agen, run)
                if response is not None:
                    try:
                        output = self.spidermw.process_spider_output(response, output,
                                                                     self.spider)
                    except Exception as e:
                        output = ()
                        self._spider_error(e, request, response)
            elif response is not None:
                try:
                    output = self.spidermw.scrape_result(
                        lambda: self._output(run.task.result()), response, self.spider)
                except _CallbackSuspended as suspended:
                    self._park(Parked(suspended.run, request, response))
                    return None
                except Exception as e:
                    output = ()
                    self._spider_error(e, request, response)
            else:
                error = parked.error
                try:
                    output = self._output(run.task.result())
                except _CallbackSuspended as suspended:
                    self._park(Parked(suspended.run, request, None, error=error))
                    return None
                except Exception as e:
                    output = ()
                    if e is not error:
                        self._spider_error(e, request, None)
                    if error is not None:
                        self._log_download_error(error, request)
            counts = self._consume(output, request, response)
        finally:
            self._resuming = None
        if counts is None:
            return None
        return request, response, parked.items + counts[0], parked.requests + counts[1]

    def abandon(self) -> int:
        """Cancel every parked callback (the spider runner stops: no answer will come);
        their async generators are closed. Returns how many there were."""
        parked, self.parked = list(self.parked.values()), {}
        for p in parked:
            p.run.cancel()
            agen = p.agen
            if agen is not None and getattr(agen, "ag_frame", True) is not None:
                try:
                    run_coroutine(agen.aclose())
                except Exception:  # noqa: S110  # its finally raising: nothing to tell
                    pass
        return len(parked)

    def _refuse_local(self, request: Request, source: Request | Response) -> None:
        logger.warning(
            "Ignoring request %(request)s from %(source)s: a web page cannot open local "
            "files (set LOCAL_URLS_FROM_WEB_ENABLED = True to allow it)",
            {"request": request, "source": source},
            extra={"spider": self.spider},
        )
        stats = getattr(self.crawler, "stats", None)
        if stats is not None:
            stats.inc_value("scraper/refused_local_url", spider=self.spider)

    # --- errors -------------------------------------------------------------------------

    def _spider_error(self, exc: BaseException, request: Request,
                      response: Response | None) -> None:
        if isinstance(exc, CloseSpider):
            self._close_spider_sink(exc.reason or "cancelled")
            return
        report_spider_error(self.crawler, exc, request, response)

    def _log_download_error(self, error: BaseException, request: Request) -> None:
        if isinstance(error, IgnoreRequest):
            return
        if isinstance(error, CloseSpider):
            self._close_spider_sink(error.reason or "cancelled")
            return
        formatter = getattr(self.crawler, "logformatter", None)
        if error.__traceback__ is not None and not isinstance(error, DownloadError):
            logkws = format_event(formatter, "download_error", Failure(error), request,
                                  self.spider)
            exc_info = failure_to_exc_info(error)
        else:
            logkws = format_event(formatter, "download_error", Failure(error), request,
                                  self.spider, str(error) or type(error).__name__)
            exc_info = None
        logger.log(*logformatter_adapter(logkws), exc_info=exc_info,
                   extra={"spider": self.spider})

    # --- checkpoints (durable frontier) -------------------------------------------------

    def take_done_leases(self) -> list[int]:
        """Return the leases of the requests whose callback (or errback) finished since
        the last call, in that order, and forget them."""
        leases, self.done_leases = self.done_leases, []
        return leases

    def spider_state_snapshot(self) -> str | None:
        """``spider.state`` pickled (highest protocol) and base64-encoded (ASCII), or None
        when the spider has no ``state`` or it cannot be pickled (logged: "spider.state
        cannot be saved (it must be picklable): <error>")."""
        state = getattr(self.spider, "state", None)
        if state is None:
            return None
        try:
            return base64.b64encode(pickle.dumps(state, pickle.HIGHEST_PROTOCOL)).decode("ascii")
        except Exception as e:
            logger.error("spider.state cannot be saved (it must be picklable): %(error)s",
                         {"error": e}, extra={"spider": self.spider})
            return None


def report_spider_error(crawler: CrawlerLike, exc: BaseException, request: Request,
                        response: Response | None) -> None:
    """Log "Spider error processing <request>" with the traceback of ``exc``, send
    ``spider_error`` and count ``spider_exceptions/count`` (Scrapy 2's total) and
    ``spider_exceptions/<Type>`` (the nearest public class:
    ``spider_exceptions/NotSupported`` for a private subclass of it, as Scrapy 2.19
    counts it; :func:`crawlfw.utils._names.public_class_name`).

    Args:
        crawler: the Crawler.
        exc: the exception the callback raised.
        request: the request whose callback raised.
        response: the response it was called with (None for an errback).
    """
    spider = crawler.spider
    logkws = format_event(getattr(crawler, "logformatter", None), "spider_error",
                          Failure(exc, request), request, response, spider)
    logger.log(*logformatter_adapter(logkws), exc_info=failure_to_exc_info(exc),
               extra={"spider": spider})
    crawler.signals.send_catch_log(
        signals.spider_error, failure=Failure(exc, request), response=response, spider=spider
    )
    crawler.stats.inc_value("spider_exceptions/count", spider=spider)  # Scrapy 2's total
    crawler.stats.inc_value(f"spider_exceptions/{public_class_name(type(exc))}", spider=spider)
