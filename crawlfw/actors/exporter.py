"""ExporterActor: writes the items that left the pipeline to one feed (``FEED_URI``,
``FEED_FORMAT``) through :mod:`crawlfw.core.feeds`; stores the feed when stopped.

The feed is opened when the actor is built, on the Supervisor's thread: a bad ``FEED_*``
setting or a storage that cannot be opened (``-o /proc/nope/items.jl``) refuses the
crawl's start with a :class:`~crawlfw.exceptions.CrawlStartError`. A write that fails with an ``OSError``
(disk full) or a feed that cannot be stored at the end is a failed feed: the stat
``feedexport/failed_count`` counts it and the crawl closes with ``feed_failed``
(a failure reason: exit status 1).
"""

import logging

from crawlfw.actors._base import CrawlActor
from crawlfw.core.feeds import FeedWriter
from crawlfw.exceptions import CrawlStartError, NotConfigured

logger = logging.getLogger(__name__)

__all__ = ["ExporterActor"]


class ExporterActor(CrawlActor):
    """Args:
    crawler: the Crawler (settings, spider).
    **kw: ``CrawlActor`` arguments.
    """

    role = "exporter"

    def __init__(self, crawler, **kw):
        super().__init__(settings=crawler.settings, **kw)
        self.crawler = crawler
        # Built and opened here, on the caller's (the Supervisor's) thread, so a bad FEED_*
        # setting or a storage that cannot be opened refuses the crawl's start (an error
        # in on_start would never reach the Supervisor: pykka does not report it).
        try:
            self.writer = FeedWriter.from_crawler(crawler)
            self.writer.open()
        except (OSError, NotConfigured) as e:
            uri = crawler.settings.get("FEED_URI")
            raise CrawlStartError(f"Cannot open the feed {uri}: {e}") from e
        self.failed = False

    def on_stop(self):
        if self.writer is not None:
            summary = self.writer.close()
            if summary["error"]:
                self._feed_failed()
            self.writer = None

    def _feed_failed(self):
        """Count a failed feed and close the spider with ``feed_failed`` (once)."""
        if self.failed:
            return
        self.failed = True
        self.crawler.stats.inc_value("feedexport/failed_count")
        self.crawler._failed_feeds.append(self.writer.urifmt if self.writer else "?")
        if self.crawler.engine is not None:
            self.crawler.engine.close_spider(self.crawler.spider, "feed_failed")

    def handle_export_items(self, message):
        if self.failed:  # the storage failed: the spider is closing, the items are lost
            self.crawler.stats.inc_value("feedexport/failed_items", len(message["items"]))
            return
        export_item = self.writer.export_item
        items = message["items"]
        for i, item in enumerate(items):
            try:
                export_item(item)
            except Exception as e:
                logger.error("Error exporting %(item)r to %(uri)s", {"item": item, "uri": self.writer.uri},
                             exc_info=True, extra={"spider": self.crawler.spider})
                self.crawler.stats.inc_value("feedexport/failed_items")
                if isinstance(e, OSError):  # the storage itself failed (disk full...)
                    self._feed_failed()
                    if len(items) - i - 1:
                        self.crawler.stats.inc_value("feedexport/failed_items", len(items) - i - 1)
                    break
