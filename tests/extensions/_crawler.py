"""A test double of :class:`crawlfw.crawler.Crawler` for extension tests.

Written against the Crawler contract (``settings``, ``signals``, ``stats``,
``logformatter``, ``engine``, ``spider``) while ``crawlfw/crawler.py`` is being
written in parallel. Only the engine is fake: it records ``close_spider`` calls
and sets an Event, so tests can wait for a timer-driven close without sleeping.
Settings, SignalManager, stats collector and log formatter are the real ones.
"""

import threading

from crawlfw.logformatter import LogFormatter
from crawlfw.settings import Settings
from crawlfw.signalmanager import SignalManager
from crawlfw.spiders import Spider
from crawlfw.utils.misc import load_object


class RecordingEngine:
    """Records ``close_spider(spider, reason)`` calls (thread-safe)."""

    def __init__(self):
        self.closed = []
        self.close_called = threading.Event()
        self._lock = threading.Lock()

    def close_spider(self, spider, reason='cancelled'):
        with self._lock:
            self.closed.append((spider, reason))
        self.close_called.set()


class CrawlerDouble:
    """The parts of a Crawler that extensions use."""

    def __init__(self, settings_dict=None, spidercls=Spider):
        self.spidercls = spidercls
        self.settings = Settings(settings_dict)
        self.signals = SignalManager(self)
        self.stats = load_object(self.settings['STATS_CLASS'])(self)
        self.logformatter = LogFormatter.from_crawler(self)
        self.engine = RecordingEngine()
        self.spider = None

    def _create_spider(self, *args, **kwargs):
        self.spider = self.spidercls(*args, **kwargs)
        return self.spider


def get_crawler(settings_dict=None, spidercls=Spider):
    """Return a :class:`CrawlerDouble` (same call shape as ``crawlfw.utils.test.get_crawler``)."""
    return CrawlerDouble(settings_dict, spidercls)
