"""Counts log records by level in the stats (Scrapy 2.14's ``LogCount`` extension)."""

import logging

from crawlfw import signals
from crawlfw.utils.log import LogCounterHandler

__all__ = ["LogCount"]


class LogCount:
    """Counts every log record at or above ``LOG_LEVEL`` in the stat
    ``log_count/<LEVEL>`` (``log_count/INFO``, ``log_count/ERROR``...), with a
    :class:`~crawlfw.utils.log.LogCounterHandler` on the root logger.

    crawlfw's :class:`~crawlfw.crawler.Crawler` installs such a handler when it is made
    (before its extensions, so the lines logged while they are built count too); this
    extension takes it over: the crawler's handler is removed and this one's installed
    in its place, so each record is counted once. Its handler is removed when the
    engine stops (the crawler's was removed then too). Scrapy 2.19 installs its
    handler at ``spider_opened`` and removes it at ``spider_closed``, so it counts
    fewer lines of the start and the end than crawlfw does.

    A project that disables this extension (``EXTENSIONS = {...LogCount: None}``) still
    gets the crawler's own counts.

    Args:
        crawler: the :class:`~crawlfw.crawler.Crawler`.

    Attributes:
        handler (LogCounterHandler | None): the installed handler, None once removed.
    """

    def __init__(self, crawler):
        self.crawler = crawler
        self.handler = None

    @classmethod
    def from_crawler(cls, crawler):
        o = cls(crawler)
        o.install()
        crawler.signals.connect(o.engine_stopped, signal=signals.engine_stopped)
        return o

    def install(self) -> None:
        """Replace the crawler's counting handlers with this extension's one."""
        for handler in list(logging.root.handlers):
            if isinstance(handler, LogCounterHandler) and handler.crawler is self.crawler:
                logging.root.removeHandler(handler)
        self.handler = LogCounterHandler(self.crawler,
                                         level=self.crawler.settings.get("LOG_LEVEL"))
        logging.root.addHandler(self.handler)

    def spider_opened(self, spider) -> None:
        """Scrapy 2.19's hook: install the handler unless it is installed."""
        if self.handler is None:
            self.install()

    def spider_closed(self, spider, reason=None) -> None:
        """Scrapy 2.19's hook: remove the handler (crawlfw calls it at
        ``engine_stopped``, after the stats are dumped)."""
        if self.handler is not None:
            logging.root.removeHandler(self.handler)
            self.handler = None

    def engine_stopped(self) -> None:
        self.spider_closed(None)
