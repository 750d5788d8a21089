"""Stats collectors (Scrapy 1.2's ``scrapy.statscollectors``).

The collector class is chosen by the ``STATS_CLASS`` setting and reached as
``crawler.stats``. Stats are a flat dict of ``{key (str): value}``; keys are
slash-separated by convention (``downloader/request_count``,
``log_count/ERROR``).

Threads: every method may be called from any thread (actors update stats
concurrently); a lock makes each update atomic, so ``inc_value`` from two threads
never loses a count. ``spider`` arguments are accepted for Scrapy compatibility
and ignored (one collector per crawler, one spider per crawler).
"""

from __future__ import annotations

import logging
import pprint
import threading
from typing import TYPE_CHECKING, Any

from crawlfw.utils._spiderarg import spider_of

if TYPE_CHECKING:
    from crawlfw.spiders import Spider

__all__ = ["StatsCollector", "MemoryStatsCollector", "DummyStatsCollector"]

logger = logging.getLogger(__name__)


class StatsCollector:
    """Collects stats in a dict; dumps them to the log when the spider closes.

    Args:
        crawler: the :class:`~crawlfw.crawler.Crawler`; ``STATS_DUMP`` (bool) is
            read from its settings.
    """

    def __init__(self, crawler):
        self._dump = crawler.settings.getbool('STATS_DUMP')
        self._crawler = crawler
        self._stats = {}
        self._lock = threading.Lock()

    def get_value(self, key: str, default: Any = None, spider: Spider | None = None) -> Any:
        """Return the value of a stat, or ``default`` when it is not set."""
        return self._stats.get(key, default)

    def get_stats(self, spider: Spider | None = None) -> dict[str, Any]:
        """Return a snapshot (shallow copy) of all stats.

        Returns:
            dict: ``{key: value}``; later updates do not change it (unlike Scrapy,
            which returned its internal dict, unsafe to iterate with threads).
        """
        with self._lock:
            return dict(self._stats)

    def set_value(self, key: str, value: Any, spider: Spider | None = None) -> None:
        """Set a stat to ``value``."""
        with self._lock:
            self._stats[key] = value

    def set_stats(self, stats, spider=None):
        """Replace all stats with the dict ``stats`` (which the collector then owns)."""
        with self._lock:
            self._stats = stats

    def inc_value(self, key: str, count: float = 1, start: float = 0,
                  spider: Spider | None = None) -> None:
        """Add ``count`` to a stat, starting from ``start`` when it is not set.

        Args:
            key (str): stat name.
            count (int | float): amount to add.
            start (int | float): initial value of a missing stat.
        """
        with self._lock:
            d = self._stats
            d[key] = d.get(key, start) + count

    def _inc_values(self, counts) -> None:
        """``inc_value(key, count)`` for each ``(key, count)`` of ``counts`` (start 0),
        under one lock: for crawlfw's per-request counters (:class:`~crawlfw.\
downloadermiddlewares.stats.DownloaderStats`), used only while a collector's
        ``inc_value`` is this class's."""
        with self._lock:
            d = self._stats
            for key, count in counts:
                d[key] = d.get(key, 0) + count

    def max_value(self, key: str, value: Any, spider: Spider | None = None) -> None:
        """Set a stat to ``value`` if it is unset or lower."""
        with self._lock:
            d = self._stats
            d[key] = max(d.setdefault(key, value), value)

    def min_value(self, key: str, value: Any, spider: Spider | None = None) -> None:
        """Set a stat to ``value`` if it is unset or higher."""
        with self._lock:
            d = self._stats
            d[key] = min(d.setdefault(key, value), value)

    def clear_stats(self, spider=None):
        """Remove every stat."""
        with self._lock:
            self._stats.clear()

    def open_spider(self, spider=None):
        """Called when the spider opens (no-op here; ``spider`` is optional, as in
        Scrapy 2.19)."""

    def close_spider(self, spider=None, reason=None):
        """Dump the stats at INFO (when ``STATS_DUMP``) and persist them.

        Args:
            spider: the closing spider; None (Scrapy 2.19's call): the crawler's.
            reason (str | None): the finish reason.
        """
        spider = spider_of(self, spider)
        stats = self.get_stats()
        if self._dump:
            logger.info("Dumping crawlfw stats:\n" + pprint.pformat(stats),
                        extra={'spider': spider})
        self._persist_stats(stats, spider)

    def _persist_stats(self, stats, spider):
        pass


class MemoryStatsCollector(StatsCollector):
    """Keeps the last stats of each closed spider in :attr:`spider_stats`.

    Attributes:
        spider_stats (dict): ``{spider name: stats dict}``, filled at close.
    """

    def __init__(self, crawler):
        super().__init__(crawler)
        self.spider_stats = {}

    def _persist_stats(self, stats, spider):
        self.spider_stats[spider.name] = stats


class DummyStatsCollector(StatsCollector):
    """Collects nothing: every update is a no-op (fastest, for production runs)."""

    def get_value(self, key, default=None, spider=None):
        return default

    def set_value(self, key, value, spider=None):
        pass

    def set_stats(self, stats, spider=None):
        pass

    def inc_value(self, key, count=1, start=0, spider=None):
        pass

    def max_value(self, key, value, spider=None):
        pass

    def min_value(self, key, value, spider=None):
        pass
