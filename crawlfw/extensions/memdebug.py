"""MemoryDebugger extension: at spider close, record in stats the objects the garbage
collector could not free and the live tracked objects (``MEMDEBUG_ENABLED``)."""

import gc

from crawlfw import signals
from crawlfw.exceptions import NotConfigured
from crawlfw.utils.trackref import live_counts

__all__ = ["MemoryDebugger"]


class MemoryDebugger:
    """Stats keys: ``memdebug/gc_garbage_count`` and ``memdebug/live_refs/<ClassName>``.

    Raises:
        NotConfigured: ``MEMDEBUG_ENABLED`` is False (the default).
    """

    def __init__(self, stats):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler):
        if not crawler.settings.getbool("MEMDEBUG_ENABLED"):
            raise NotConfigured
        o = cls(crawler.stats)
        crawler.signals.connect(o.spider_closed, signal=signals.spider_closed)
        return o

    def spider_closed(self, spider, reason):
        gc.collect()
        self.stats.set_value("memdebug/gc_garbage_count", len(gc.garbage), spider=spider)
        for cls, count in live_counts().items():  # one pass for Request/Response classes
            if not count:
                continue
            self.stats.set_value(f"memdebug/live_refs/{cls.__name__}", count, spider=spider)
