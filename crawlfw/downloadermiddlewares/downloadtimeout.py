"""Set ``request.meta['download_timeout']`` from ``DOWNLOAD_TIMEOUT`` or the spider."""

from crawlfw import signals
from crawlfw.utils._spiderarg import spider_of

__all__ = ["DownloadTimeoutMiddleware"]


class DownloadTimeoutMiddleware:
    """Give every request a ``download_timeout`` meta key (seconds) unless it has one.

    The value is the spider's ``download_timeout`` attribute when it has one, else the
    ``DOWNLOAD_TIMEOUT`` setting (default 180 s). A timeout of 0 leaves the meta unset
    (no timeout). The downloader reads the meta key.

    Args:
        timeout: the default timeout in seconds.
    """

    _opened_spider = None
    crawler = None  # set by from_crawler

    def __init__(self, timeout: float = 180):
        self._timeout = timeout

    @classmethod
    def from_crawler(cls, crawler):
        o = cls(crawler.settings.getfloat("DOWNLOAD_TIMEOUT"))
        crawler.signals.connect(o.spider_opened, signal=signals.spider_opened)
        o.crawler = crawler
        return o

    def spider_opened(self, spider):
        """Signal handler: adopt ``spider.download_timeout`` when the spider sets one.

        Also called by the first ``process_request`` for a spider, in case the signal
        was never sent to it (a middleware used outside a crawl; in the runtime the
        managers are built before ``spider_opened`` is sent).
        """
        self._opened_spider = spider
        self._timeout = getattr(spider, "download_timeout", self._timeout)

    def process_request(self, request, spider=None):
        if self._opened_spider is not spider or spider is None:
            spider = spider_of(self, spider)  # (None: the crawler's spider, Scrapy 2.19)
            if spider is not None and spider is not self._opened_spider:
                self.spider_opened(spider)
        if self._timeout:
            request.meta.setdefault("download_timeout", self._timeout)
