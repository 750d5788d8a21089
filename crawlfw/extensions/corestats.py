"""Core crawl stats: start/finish times and reason, item and response counts."""

import datetime

from crawlfw import signals

__all__ = ["CoreStats"]


def _utcnow():
    """Naive UTC datetime, as ``datetime.utcnow()`` returned (deprecated in 3.12)."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


class CoreStats:
    """Records Scrapy 1.2's core stats.

    Keys: ``start_time``, ``finish_time`` (naive UTC :class:`datetime.datetime`),
    ``finish_reason`` (str), ``item_scraped_count``, ``item_dropped_count``,
    ``item_dropped_reasons_count/<ExceptionClass>``, ``response_received_count``.

    Args:
        stats: the crawler's stats collector.
    """

    def __init__(self, stats):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler):
        o = cls(crawler.stats)
        crawler.signals.connect(o.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(o.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(o.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(o.item_dropped, signal=signals.item_dropped)
        crawler.signals.connect(o.response_received, signal=signals.response_received)
        return o

    def spider_opened(self, spider):
        self.stats.set_value('start_time', _utcnow(), spider=spider)

    def spider_closed(self, spider, reason):
        self.stats.set_value('finish_time', _utcnow(), spider=spider)
        self.stats.set_value('finish_reason', reason, spider=spider)

    def item_scraped(self, item, spider):
        self.stats.inc_value('item_scraped_count', spider=spider)

    def response_received(self, spider):
        self.stats.inc_value('response_received_count', spider=spider)

    def item_dropped(self, item, spider, exception):
        reason = exception.__class__.__name__
        self.stats.inc_value('item_dropped_count', spider=spider)
        self.stats.inc_value(f'item_dropped_reasons_count/{reason}', spider=spider)
