"""Closes the spider after a time, or a number of items, pages or errors."""

import threading
from collections import defaultdict

from crawlfw import signals
from crawlfw.exceptions import NotConfigured

__all__ = ["CloseSpider"]


class CloseSpider:
    """Closes the spider when a ``CLOSESPIDER_*`` limit is reached.

    =========================  ========================================  ======================
    setting                    counts                                    finish reason
    =========================  ========================================  ======================
    CLOSESPIDER_TIMEOUT        seconds since spider_opened               closespider_timeout
    CLOSESPIDER_ITEMCOUNT      item_scraped signals                      closespider_itemcount
    CLOSESPIDER_PAGECOUNT      response_received signals                 closespider_pagecount
    CLOSESPIDER_ERRORCOUNT     spider_error signals                      closespider_errorcount
    =========================  ========================================  ======================

    0 disables a limit; all 0 disables the extension (NotConfigured). The spider
    is closed through ``crawler.engine.close_spider(spider, reason)`` (thread-safe),
    once per limit, when the count reaches the limit. The timeout runs on a
    daemon :class:`threading.Timer`, cancelled when the spider closes.

    Args:
        crawler: the crawler (``settings``, ``signals``, ``engine``).
    """

    def __init__(self, crawler):
        self.crawler = crawler

        self.close_on = {
            'timeout': crawler.settings.getfloat('CLOSESPIDER_TIMEOUT'),
            'itemcount': crawler.settings.getint('CLOSESPIDER_ITEMCOUNT'),
            'pagecount': crawler.settings.getint('CLOSESPIDER_PAGECOUNT'),
            'errorcount': crawler.settings.getint('CLOSESPIDER_ERRORCOUNT'),
        }

        if not any(self.close_on.values()):
            raise NotConfigured

        self.counter = defaultdict(int)
        self._lock = threading.Lock()
        self.task = None

        if self.close_on.get('errorcount'):
            crawler.signals.connect(self.error_count, signal=signals.spider_error)
        if self.close_on.get('pagecount'):
            crawler.signals.connect(self.page_count, signal=signals.response_received)
        if self.close_on.get('timeout'):
            crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        if self.close_on.get('itemcount'):
            crawler.signals.connect(self.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def _count(self, what, spider):
        # signals arrive from several actor threads: count under the lock, close once
        with self._lock:
            self.counter[what] += 1
            reached = self.counter[what] == self.close_on[what]
        if reached:
            self.crawler.engine.close_spider(spider, f'closespider_{what}')

    def error_count(self, failure, response, spider):
        self._count('errorcount', spider)

    def page_count(self, response, request, spider):
        self._count('pagecount', spider)

    def item_scraped(self, item, spider):
        self._count('itemcount', spider)

    def spider_opened(self, spider):
        self.task = threading.Timer(self.close_on['timeout'], self.crawler.engine.close_spider,
                                    args=(spider,), kwargs={'reason': 'closespider_timeout'})
        self.task.name = 'crawlfw-closespider-timeout'
        self.task.daemon = True
        self.task.start()

    def spider_closed(self, spider):
        task = self.task
        if task is not None:
            task.cancel()
