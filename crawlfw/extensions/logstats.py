"""Logs crawl progress (pages and items, with per-minute rates) periodically."""

import logging

from crawlfw import signals
from crawlfw.exceptions import NotConfigured
from crawlfw.extensions._periodic import PeriodicCall

__all__ = ["LogStats"]

logger = logging.getLogger(__name__)

#: Seconds after the spider opens when the first line is logged (when the interval is
#: longer): it then shows real figures instead of Scrapy's "Crawled 0 pages".
FIRST_LINE_S = 5.0


class LogStats:
    """Every ``LOGSTATS_INTERVAL`` seconds, logs at INFO::

        Crawled 120 pages (at 60 pages/min), scraped 40 items (at 20 items/min)

    The first line is logged :data:`FIRST_LINE_S` seconds after the spider opens (or
    after one interval, if shorter), so it shows real figures; then one line every
    interval. Rates are per minute over the time since the previous line (the first
    line's over the time since the spider opened). Lines are
    logged from a daemon timer thread, which stops when the spider closes.
    ``LOGSTATS_INTERVAL = 0`` disables the extension. When the spider closes, the
    stats ``responses_per_minute`` and ``items_per_minute`` are set to the crawl's
    averages (Scrapy 2.11; :meth:`calculate_final_stats`), None when it took under a
    second (as Scrapy 2.19 sets them).

    Args:
        stats: the crawler's stats collector (``response_received_count`` and
            ``item_scraped_count`` are read).
        interval (float): seconds between lines.
    """

    def __init__(self, stats, interval=60.0):
        self.stats = stats
        self.interval = interval
        self.multiplier = 60.0 / self.interval
        self.task = None
        self.pagesprev = 0
        self.itemsprev = 0
        self.first_multiplier = None  # for the first line, after FIRST_LINE_S

    @classmethod
    def from_crawler(cls, crawler):
        interval = crawler.settings.getfloat('LOGSTATS_INTERVAL')
        if not interval:
            raise NotConfigured
        o = cls(crawler.stats, interval)
        crawler.signals.connect(o.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(o.spider_closed, signal=signals.spider_closed)
        return o

    def spider_opened(self, spider):
        self.pagesprev = 0
        self.itemsprev = 0
        first_s = min(self.interval, FIRST_LINE_S)
        self.first_multiplier = 60.0 / first_s
        self.task = PeriodicCall(lambda: self.log(spider), self.interval,
                                 name='crawlfw-logstats')
        self.task.start(now=False, delay_s=first_s)

    def log(self, spider):
        """Log one progress line (called by the timer thread)."""
        self.calculate_stats()
        msg = ("Crawled %(pages)d pages (at %(pagerate)d pages/min), "
               "scraped %(items)d items (at %(itemrate)d items/min)")
        log_args = {'pages': self.pages, 'pagerate': self.prate,
                    'items': self.items, 'itemrate': self.irate}
        logger.info(msg, log_args, extra={'spider': spider})

    def calculate_stats(self):
        """Read the counts and the rates since the previous call (Scrapy 2.11's split of
        :meth:`log`, for subclasses that log them otherwise): sets ``pages``
        (``response_received_count``), ``items`` (``item_scraped_count``), ``prate``
        and ``irate`` (per minute; the first call's over :data:`FIRST_LINE_S`)."""
        self.items = self.stats.get_value('item_scraped_count', 0)
        self.pages = self.stats.get_value('response_received_count', 0)
        multiplier, self.first_multiplier = self.first_multiplier or self.multiplier, None
        self.irate = (self.items - self.itemsprev) * multiplier
        self.prate = (self.pages - self.pagesprev) * multiplier
        self.pagesprev, self.itemsprev = self.pages, self.items

    def calculate_final_stats(self, spider):
        """The crawl's average rates (Scrapy 2.11): ``(responses per minute, items per
        minute)`` over ``finish_time - start_time`` in whole seconds, as Scrapy counts
        them; ``(None, None)`` when either time is missing or under one second passed.

        Returns:
            tuple[float, float] | tuple[None, None]
        """
        start_time = self.stats.get_value('start_time')
        finish_time = self.stats.get_value('finish_time')
        if not start_time or not finish_time:
            return None, None
        mins_elapsed = (finish_time - start_time).seconds / 60
        if mins_elapsed == 0:
            return None, None
        items = self.stats.get_value('item_scraped_count', 0)
        pages = self.stats.get_value('response_received_count', 0)
        return pages / mins_elapsed, items / mins_elapsed

    def spider_closed(self, spider, reason):
        if self.task is not None:
            self.task.stop()
        rpm_final, ipm_final = self.calculate_final_stats(spider)
        # None under a second, as Scrapy 2.19 dumps them: two runs' stats diff cleanly
        self.stats.set_value('responses_per_minute', rpm_final)
        self.stats.set_value('items_per_minute', ipm_final)
