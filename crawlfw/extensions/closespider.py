"""Closes the spider after a time, or a number of items, pages or errors."""

import logging
import threading
from collections import defaultdict

from crawlfw import signals
from crawlfw.exceptions import NotConfigured
from crawlfw.extensions._periodic import PeriodicCall

logger = logging.getLogger(__name__)

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
    CLOSESPIDER_TIMEOUT_NO     seconds of a period without item_scraped  closespider_timeout_no_item
    _ITEM                      (checked every that many seconds)
    CLOSESPIDER_PAGECOUNT_NO   response_received since the last          closespider_pagecount_no_item
    _ITEM                      item_scraped
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
            'timeout_no_item': crawler.settings.getint('CLOSESPIDER_TIMEOUT_NO_ITEM'),
            'pagecount_no_item': crawler.settings.getint('CLOSESPIDER_PAGECOUNT_NO_ITEM'),
        }

        if not any(self.close_on.values()):
            raise NotConfigured

        self.counter = defaultdict(int)
        self._lock = threading.Lock()
        self.task = None

        if self.close_on.get('errorcount'):
            crawler.signals.connect(self.error_count, signal=signals.spider_error)
        if self.close_on.get('pagecount') or self.close_on.get('pagecount_no_item'):
            crawler.signals.connect(self.page_count, signal=signals.response_received)
        if self.close_on.get('timeout'):
            crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        if self.close_on.get('itemcount') or self.close_on.get('pagecount_no_item'):
            crawler.signals.connect(self.item_scraped, signal=signals.item_scraped)
        self.task_no_item = None
        if self.close_on.get('timeout_no_item'):
            self.timeout_no_item = self.close_on['timeout_no_item']
            self.items_in_period = 0
            crawler.signals.connect(self.spider_opened_no_item, signal=signals.spider_opened)
            crawler.signals.connect(self.item_scraped_no_item, signal=signals.item_scraped)
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
        if self.close_on['pagecount']:
            self._count('pagecount', spider)
        limit = self.close_on['pagecount_no_item']
        if limit:
            with self._lock:
                self.counter['pagecount_since_last_item'] += 1
                reached = self.counter['pagecount_since_last_item'] == limit
            if reached:
                self.crawler.engine.close_spider(spider, 'closespider_pagecount_no_item')

    def item_scraped(self, item, spider):
        if self.close_on['pagecount_no_item']:
            with self._lock:
                self.counter['pagecount_since_last_item'] = 0
        if self.close_on['itemcount']:
            self._count('itemcount', spider)

    def spider_opened_no_item(self, spider):
        """Start checking, every ``CLOSESPIDER_TIMEOUT_NO_ITEM`` seconds, that items
        were scraped in the period (a daemon timer thread)."""
        self.task_no_item = PeriodicCall(lambda: self._count_items_produced(spider),
                                         self.timeout_no_item,
                                         name='crawlfw-closespider-no-item')
        self.task_no_item.start(now=False)
        logger.info("Spider will stop when no items are produced after %(s)s seconds.",
                    {"s": self.timeout_no_item}, extra={"spider": spider})

    def item_scraped_no_item(self, item, spider):
        """Count an item in the current period."""
        with self._lock:
            self.items_in_period += 1

    def _count_items_produced(self, spider):
        with self._lock:
            produced, self.items_in_period = self.items_in_period, 0
        if produced:
            return
        logger.info("Closing spider since no items were produced in the last %(s)s seconds.",
                    {"s": self.timeout_no_item}, extra={"spider": spider})
        self.task_no_item.stop()
        self.crawler.engine.close_spider(spider, 'closespider_timeout_no_item')

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
        if self.task_no_item is not None:
            self.task_no_item.stop()
            self.task_no_item = None
