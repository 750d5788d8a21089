"""Core crawl stats: start/finish times and reason, item and response counts."""

import datetime
import time

from crawlfw import signals
from crawlfw.utils._names import public_class_name

__all__ = ["CoreStats"]


def _utcnow():
    """The time now, timezone-aware UTC (Scrapy 2's ``start_time``/``finish_time``)."""
    return datetime.datetime.now(datetime.timezone.utc)


class CoreStats:
    """Records the core stats, with Scrapy 2.19's keys and types.

    Keys: ``start_time``, ``finish_time`` (timezone-aware UTC
    :class:`datetime.datetime`, as Scrapy 2 records them; Scrapy 1.2's were naive),
    ``elapsed_time_seconds`` (float, from ``spider_opened`` to ``spider_closed`` on the
    monotonic clock), ``finish_reason`` (str), ``item_scraped_count``,
    ``item_dropped_count``, ``item_dropped_reasons_count/<ExceptionClass>`` (the
    nearest public class: :func:`crawlfw.utils._names.public_class_name`),
    ``response_received_count``.

    Args:
        stats: the crawler's stats collector.
    """

    def __init__(self, stats):
        self.stats = stats
        self._start_monotonic_s = None

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
        self._start_monotonic_s = time.monotonic()
        self.stats.set_value('start_time', _utcnow(), spider=spider)

    def spider_closed(self, spider, reason):
        finish_time, now_s = _utcnow(), time.monotonic()
        if self._start_monotonic_s is not None:
            self.stats.set_value('elapsed_time_seconds', now_s - self._start_monotonic_s,
                                 spider=spider)
        self.stats.set_value('finish_time', finish_time, spider=spider)
        self.stats.set_value('finish_reason', reason, spider=spider)

    def item_scraped(self, item, spider):
        self.stats.inc_value('item_scraped_count', spider=spider)

    def response_received(self, spider):
        self.stats.inc_value('response_received_count', spider=spider)

    def item_dropped(self, item, spider, exception):
        reason = public_class_name(type(exception))
        self.stats.inc_value('item_dropped_count', spider=spider)
        self.stats.inc_value(f'item_dropped_reasons_count/{reason}', spider=spider)
