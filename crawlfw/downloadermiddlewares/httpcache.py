"""Serve responses from an HTTP cache and store downloaded ones in it.

Enabled by ``HTTPCACHE_ENABLED``. The policy (``HTTPCACHE_POLICY``) and storage
(``HTTPCACHE_STORAGE``) are described in :mod:`crawlfw.extensions.httpcache`.

Flow, per request (Scrapy 1.2):

1. ``meta['dont_cache']`` skips the cache entirely. A request the policy does not
   cache is downloaded and its response not stored.
2. A cached, fresh response is returned at once (stat ``httpcache/hit``) with the flag
   ``'cached'``: no download. Not cached: ``httpcache/miss`` and a download, or with
   ``HTTPCACHE_IGNORE_MISSING`` an ``IgnoreRequest`` (``httpcache/ignore``).
3. A cached but stale response is kept in ``meta['cached_response']`` and the request
   is downloaded (the policy may add validators). If the answer validates the cached
   one (RFC2616Policy: 304, or 5xx without ``must-revalidate``), the cached response
   is used (``httpcache/revalidate``); otherwise the new one is stored
   (``httpcache/invalidate``). If the download fails with a network error the cached
   response is used (``httpcache/errorrecovery``).
4. A first-hand response (``httpcache/firsthand``) gets a ``Date`` header if it lacks
   one (RFC 2616 §14.18) and is stored if the policy allows (``httpcache/store``, else
   ``httpcache/uncacheable``).
"""

import threading
from email.utils import formatdate

from crawlfw import signals
from crawlfw.exceptions import (
    ConnectError,
    ConnectionLostError,
    ConnectionRefusedError,
    DNSLookupError,
    DownloadTimeoutError,
    IgnoreRequest,
    NotConfigured,
    ResponseFailed,
)
from crawlfw.utils._spiderarg import spider_of
from crawlfw.utils.misc import load_object

__all__ = ["HttpCacheMiddleware"]


class HttpCacheMiddleware:
    """Cache responses with a pluggable policy and storage.

    Args:
        settings: the crawler's settings.
        stats: the stats collector.

    Raises:
        NotConfigured: ``HTTPCACHE_ENABLED`` is false.
    """

    #: Download errors for which a stale cached response is served instead.
    DOWNLOAD_EXCEPTIONS = (
        DownloadTimeoutError,
        TimeoutError,
        DNSLookupError,
        ConnectionRefusedError,
        ConnectError,
        ConnectionLostError,
        ResponseFailed,
        IOError,
    )

    def __init__(self, settings, stats):
        if not settings.getbool("HTTPCACHE_ENABLED"):
            raise NotConfigured
        self.policy = load_object(settings["HTTPCACHE_POLICY"])(settings)
        self.storage = load_object(settings["HTTPCACHE_STORAGE"])(settings)
        self.ignore_missing = settings.getbool("HTTPCACHE_IGNORE_MISSING")
        self.stats = stats
        self._opened_spider = None
        self.crawler = None  # set by from_crawler
        self._open_lock = threading.Lock()

    @classmethod
    def from_crawler(cls, crawler):
        o = cls(crawler.settings, crawler.stats)
        crawler.signals.connect(o.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(o.spider_closed, signal=signals.spider_closed)
        o.crawler = crawler
        return o

    def spider_opened(self, spider):
        """Signal handler: open the storage for ``spider`` (once).

        Also called by the first ``process_request`` for a spider, in case the signal
        was never sent to it (a middleware used outside a crawl; in the runtime the
        managers are built before ``spider_opened`` is sent); the
        signal runs on another thread, hence the lock.
        """
        with self._open_lock:
            if self._opened_spider is spider:
                return
            self.storage.open_spider(spider)
            self._opened_spider = spider

    def spider_closed(self, spider):
        """Signal handler: close the storage (if it was opened)."""
        with self._open_lock:
            if self._opened_spider is None:
                return
            self.storage.close_spider(spider)
            self._opened_spider = None

    def process_request(self, request, spider=None):
        if self._opened_spider is not spider or spider is None:
            spider = spider_of(self, spider)  # (None: the crawler's spider, Scrapy 2.19)
            if spider is None:
                spider = self._opened_spider
            elif spider is not self._opened_spider:
                self.spider_opened(spider)
        if request.meta.get("dont_cache", False):
            return None
        if not self.policy.should_cache_request(request):
            request.meta["_dont_cache"] = True  # uncacheable: skip in process_response
            return None
        cachedresponse = self.storage.retrieve_response(spider, request)
        if cachedresponse is None:
            self.stats.inc_value("httpcache/miss", spider=spider)
            if self.ignore_missing:
                self.stats.inc_value("httpcache/ignore", spider=spider)
                raise IgnoreRequest(f"Ignored request not in cache: {request}")
            return None  # first time request
        cachedresponse.flags.append("cached")
        if self.policy.is_cached_response_fresh(cachedresponse, request):
            self.stats.inc_value("httpcache/hit", spider=spider)
            return cachedresponse
        # stale: keep it to avoid a second lookup in process_response
        request.meta["cached_response"] = cachedresponse
        return None

    def process_response(self, request, response, spider=None):
        if request.meta.get("dont_cache", False):
            return response
        if spider is None:
            spider = spider_of(self) or self._opened_spider
        # cached responses and uncacheable requests pass through
        if "cached" in response.flags or "_dont_cache" in request.meta:
            request.meta.pop("_dont_cache", None)
            return response
        # RFC 2616 §14.18: origin servers must send Date
        if b"Date" not in response.headers:
            response.headers[b"Date"] = formatdate(usegmt=True)
        cachedresponse = request.meta.pop("cached_response", None)
        if cachedresponse is None:
            self.stats.inc_value("httpcache/firsthand", spider=spider)
            self._cache_response(spider, response, request, cachedresponse)
            return response
        if self.policy.is_cached_response_valid(cachedresponse, response, request):
            self.stats.inc_value("httpcache/revalidate", spider=spider)
            return cachedresponse
        self.stats.inc_value("httpcache/invalidate", spider=spider)
        self._cache_response(spider, response, request, cachedresponse)
        return response

    def process_exception(self, request, exception, spider=None):
        cachedresponse = request.meta.pop("cached_response", None)
        if cachedresponse is not None and isinstance(exception, self.DOWNLOAD_EXCEPTIONS):
            self.stats.inc_value("httpcache/errorrecovery", spider=spider)
            return cachedresponse
        return None

    def _cache_response(self, spider, response, request, cachedresponse):
        if self.policy.should_cache_response(response, request):
            self.stats.inc_value("httpcache/store", spider=spider)
            self.storage.store_response(spider, request, response)
        else:
            self.stats.inc_value("httpcache/uncacheable", spider=spider)
