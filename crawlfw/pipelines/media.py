"""MediaPipeline: the base of item pipelines that download media referenced by items
(Scrapy 1.2's ``scrapy.pipelines.media``).

For each item, :meth:`MediaPipeline.get_media_requests` names the requests to download;
each is answered from the per-spider cache (same request fingerprint, downloaded
earlier in the crawl), by :meth:`MediaPipeline.media_to_download` (e.g. "already stored
and fresh"), or downloaded through the running crawl with ``crawler.engine.download``
and passed to :meth:`MediaPipeline.media_downloaded` or
:meth:`MediaPipeline.media_failed`. :meth:`MediaPipeline.item_completed` then receives
``[(success, result_or_failure), ...]`` in request order and returns the item.

Scrapy chains Deferreds: the item's processing resumes when its downloads return, and
other items go on meanwhile. Here too: in a running crawl ``process_item`` returns an
:class:`~crawlfw.pipelines.AwaitingDownloads` when the item has media to download; the
Pipeline actor asks the engine for them (``download`` messages, answered with
``download_done``), goes on with other items, and resumes this item
(``media_downloaded``/``media_failed``, ``item_completed``, the later pipelines) when
the last answer comes. The downloads of one item run in parallel. Every overridable hook
runs on the Pipeline actor's thread, one at a time. With a ``download_func`` (or no
crawl) the downloads are made synchronously, at most
:attr:`MediaPipeline.MAX_PARALLEL_DOWNLOADS` at a time, and the finished item is
returned. Two items waiting at once for requests of one fingerprint share its download
(the Pipeline actor asks once) and its ``media_downloaded`` (run once, cached).
"""

import concurrent.futures
import inspect
import logging
from collections import defaultdict

from crawlfw.pipelines import AwaitingDownloads
from crawlfw.utils._spiderarg import spider_of
from crawlfw.utils.failure import Failure
from crawlfw.utils.misc import arg_to_iter
from crawlfw.utils.request import request_fingerprint

logger = logging.getLogger(__name__)

__all__ = ["MediaPipeline"]


def _init_takes_crawler(cls) -> bool:
    """Whether ``cls(...)`` accepts a ``crawler`` keyword (a parameter of that name, or
    ``**kwargs``): Scrapy 2.19's pipeline constructors."""
    try:
        params = inspect.signature(cls.__init__).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "crawler" and p.kind != p.POSITIONAL_ONLY
               or p.kind == p.VAR_KEYWORD for p in params)


class MediaPipeline:
    """Download the media of each item, then complete the item.

    Subclasses implement :meth:`get_media_requests` and usually :meth:`media_downloaded`
    and :meth:`item_completed`. A request's own ``callback`` / ``errback`` (if set) are
    applied to its result: the callback receives what ``media_downloaded`` returned,
    the errback the :class:`~crawlfw.utils.failure.Failure`; they are removed from the
    request before it is downloaded.

    Args:
        download_func: ``download_func(request, spider) -> Response`` used instead of
            ``crawler.engine.download`` (Scrapy keeps it for tests); may raise.
        crawler: the Crawler (Scrapy 2.19 passes it, keyword only); None: set by
            :meth:`from_crawler` after building.

    Attributes:
        crawler: the Crawler, set by :meth:`from_crawler`.
        spiderinfo: the :class:`SpiderInfo` of the open spider.
    """

    #: ``item_completed`` logs each failed result at ERROR (with its traceback).
    LOG_FAILED_RESULTS = True

    #: With a ``download_func``: media of one item downloaded at the same time at most
    #: (crawlfw addition). In a crawl the engine downloads them all at once, within the
    #: download slots' concurrency; each ends by ``DOWNLOAD_TIMEOUT`` at the latest.
    MAX_PARALLEL_DOWNLOADS = 16

    class SpiderInfo:
        """Per-spider state.

        Attributes:
            spider: the spider.
            downloading: fingerprints of requests being downloaded now.
            downloaded: fingerprint -> result (a value, or a ``Failure``): the cache.
            waiting: fingerprint -> requests waiting for that result (kept for Scrapy
                compatibility; requests of one item sharing a fingerprint share one
                download).
        """

        def __init__(self, spider):
            self.spider = spider
            self.downloading = set()
            self.downloaded = {}
            self.waiting = defaultdict(list)

    def __init__(self, download_func=None, *, crawler=None):
        self.download_func = download_func
        self.crawler = crawler
        self.spiderinfo = None
        self._pool = None

    def _key_for_pipe(self, key, base_class_name=None, settings=None):
        """Name of the setting ``key`` for this pipeline class.

        A subclass ``MyPipe`` of ``base_class_name`` reads ``MYPIPE_<key>`` when that
        setting is set, else ``key``; the base class itself (or no ``base_class_name``)
        reads ``key``.

        Args:
            key: a setting name, e.g. ``'FILES_EXPIRES'``.
            base_class_name: the name of the pipeline class the settings belong to.
            settings: the settings to look ``MYPIPE_<key>`` up in; None: always the
                prefixed name for a subclass.

        Returns:
            str: the setting name to read.
        """
        class_name = type(self).__name__
        formatted_key = f"{class_name.upper()}_{key}"
        if (not base_class_name or class_name == base_class_name
                or (settings is not None and not settings.get(formatted_key))):
            return key
        return formatted_key

    @classmethod
    def from_crawler(cls, crawler):
        """Build the pipeline and attach ``crawler``.

        Scrapy 1.2's way when the class has ``from_settings`` (``FilesPipeline``'s own
        from_crawler builds Scrapy 2.19's way unless a subclass overrides it or takes
        no ``crawler``); else Scrapy 2.19's ``cls(crawler=crawler)`` when ``__init__``
        takes a ``crawler``, else ``cls()``.
        """
        if hasattr(cls, "from_settings"):
            pipe = cls.from_settings(crawler.settings)
        elif _init_takes_crawler(cls):
            pipe = cls(crawler=crawler)
        else:
            pipe = cls()
        pipe.crawler = crawler
        return pipe

    def open_spider(self, spider=None):
        """Start the per-spider state for ``spider`` (None, Scrapy 2.19's call: the
        crawler's spider)."""
        self.spiderinfo = self.SpiderInfo(spider_of(self, spider))

    def close_spider(self, spider):
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def process_item(self, item, spider=None):
        """Download the item's media (see the module docstring) and complete the item.

        Returns:
            What :meth:`item_completed` returns (normally the item), or, in a running
            crawl when something is to be downloaded, an
            :class:`~crawlfw.pipelines.AwaitingDownloads` that returns it once resumed
            with the downloads' outcomes (a subclass overriding ``process_item`` chains
            its own step with ``.then(step)``, as on Scrapy's Deferred).

        Raises:
            Exception: whatever ``get_media_requests`` or ``item_completed`` raise
                (``DropItem`` drops the item).
        """
        info = self.spiderinfo
        if spider is None:  # (Scrapy 2.19's call: the open spider, else the crawler's)
            spider = info.spider if info is not None else spider_of(self)
        if info is None or info.spider is not spider:
            info = self.spiderinfo = self.SpiderInfo(spider)
        requests = list(arg_to_iter(self.get_media_requests(item, info)))
        plans, to_download = self._plan(requests, info)
        if to_download and self.download_func is None and self.crawler is not None \
                and self.crawler.engine is not None:
            for request in to_download.values():
                request.meta["handle_httpstatus_all"] = True

            def resume(outcomes):
                for (fp, request), outcome in zip(to_download.items(), outcomes, strict=True):
                    if fp not in info.downloaded:  # another item's (the same download) did
                        self._cache(fp, self._handle_download(outcome, request, info), info)
                return self.item_completed(self._results(plans, info), item, info)

            return AwaitingDownloads(to_download.values(), resume)
        if to_download:
            for fp, request, outcome in self._download_all(to_download, info):
                self._cache(fp, self._handle_download(outcome, request, info), info)
        return self.item_completed(self._results(plans, info), item, info)

    # --- the download of one item's requests ------------------------------------------

    def _plan(self, requests, info):
        """Sort ``requests`` out: ``(plans, to_download)``, ``plans`` a list of
        ``(request, fp, callback, errback)`` in order, ``to_download`` ``{fp: request}``
        of those neither cached nor answered by ``media_to_download``, in first-seen
        order."""
        plans = []  # (request, fp, callback, errback)
        to_download = {}  # fp -> request, in first-seen order
        for request in requests:
            fp = request_fingerprint(request)
            callback, errback = request.callback, request.errback
            request.callback = None
            request.errback = None
            plans.append((request, fp, callback, errback))
            if fp in info.downloaded or fp in to_download:
                info.waiting[fp].append(request)
                continue
            info.downloading.add(fp)
            try:
                result = self.media_to_download(request, info)
            except Exception as e:
                result = Failure(e, request)
            if result is None:
                to_download[fp] = request
            else:
                self._cache(fp, result, info)
        return plans, to_download

    def _results(self, plans, info):
        """``[(success, value), ...]`` of ``plans``, in order, from the cache."""
        return [self._apply(info.downloaded[fp], callback, errback, request)
                for request, fp, callback, errback in plans]

    def _download_all(self, to_download, info):
        """Download the requests; yield ``(fp, request, response_or_exception)`` in
        order. Waits happen on a small thread pool; nothing else runs there."""
        for request in to_download.values():
            request.meta["handle_httpstatus_all"] = True
        if len(to_download) == 1:
            [(fp, request)] = to_download.items()
            yield fp, request, self._download_one(request, info)
            return
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=self.MAX_PARALLEL_DOWNLOADS,
                thread_name_prefix=f"{type(self).__name__}-download",
            )
        futures = [(fp, request, self._pool.submit(self._download_one, request, info))
                   for fp, request in to_download.items()]
        for fp, request, future in futures:
            yield fp, request, future.result()

    def _download_one(self, request, info):
        """The response, or the exception the download raised (never raises)."""
        try:
            if self.download_func is not None:
                return self.download_func(request, info.spider)
            raise RuntimeError(  # process_item asks a running crawl's engine otherwise
                f"{type(self).__name__} has no running crawl to download "
                f"{request.url} with: build it with from_crawler(), or pass download_func"
            )
        except Exception as e:
            return e

    def _handle_download(self, outcome, request, info):
        """Run ``media_downloaded`` or ``media_failed``; return a value or a Failure."""
        try:
            if isinstance(outcome, BaseException):
                result = self.media_failed(Failure(outcome, request), request, info)
            else:
                result = self.media_downloaded(outcome, request, info)
        except Exception as e:
            return Failure(e, request)
        return result

    def _cache(self, fp, result, info):
        info.downloading.discard(fp)
        info.downloaded[fp] = result
        info.waiting.pop(fp, None)

    @staticmethod
    def _apply(result, callback, errback, request):
        """Apply a request's own callback/errback; return ``(success, value)``."""
        try:
            if isinstance(result, Failure):
                if errback is None:
                    return False, result
                result = errback(result)
            elif callback is not None:
                result = callback(result)
        except Exception as e:
            return False, Failure(e, request)
        if isinstance(result, Failure):
            return False, result
        return True, result

    # --- overridable interface ---------------------------------------------------------

    def media_to_download(self, request, info):
        """Check ``request`` before it is downloaded.

        Returns:
            None to download it; any other value is its result (no download).
            Raising makes the result a failure.
        """
        return None

    def get_media_requests(self, item, info):
        """Return the requests (a Request, a list of them, or None) to download for
        ``item``."""
        return None

    def media_downloaded(self, response, request, info):
        """Handle a downloaded ``response`` (any HTTP status); return the result.
        Raising makes the result a failure."""
        return response

    def media_failed(self, failure, request, info):
        """Handle a failed download (``failure.value`` is the exception); return the
        failure to keep the result failed, or a value to recover."""
        return failure

    def item_completed(self, results, item, info):
        """Called once all of an item's media are processed.

        Args:
            results: ``[(True, result) | (False, Failure), ...]``, one per request of
                ``get_media_requests``, in order.
            item: the item.
            info: the :class:`SpiderInfo`.

        Returns:
            The item (or raise ``DropItem``). The default logs every failure at
            ERROR when :attr:`LOG_FAILED_RESULTS` is true and returns ``item``.
        """
        if self.LOG_FAILED_RESULTS:
            for ok, value in results:
                if not ok:
                    logger.error(
                        "%(class)s found errors processing %(item)s",
                        {"class": type(self).__name__, "item": item},
                        exc_info=_exc_info(value),
                        extra={"spider": info.spider},
                    )
        return item


def _exc_info(value):
    """``(type, value, traceback)`` of a Failure or an exception, for logging."""
    if isinstance(value, Failure):
        return value.exc_info()
    if isinstance(value, BaseException):
        return (type(value), value, value.__traceback__)
    return None
