"""ExporterActor: writes the items that left the pipeline to one feed (``FEED_URI``,
``FEED_FORMAT``) through :mod:`crawlfw.core.feeds`; stores the feed when stopped."""

import logging

from crawlfw.actors._base import CrawlActor
from crawlfw.core.feeds import FeedWriter

logger = logging.getLogger(__name__)

__all__ = ["ExporterActor"]


class ExporterActor(CrawlActor):
    """Args:
    crawler: the Crawler (settings, spider).
    uri, options: the feed, one ``FEEDS`` entry; None: ``FEED_URI`` (see FeedWriter).
    **kw: ``CrawlActor`` arguments.
    """

    role = "exporter"

    def __init__(self, crawler, uri=None, options=None, **kw):
        super().__init__(settings=crawler.settings, **kw)
        self.crawler = crawler
        # Built here, on the caller's thread, so a bad FEED_* setting fails the crawl's start
        # with NotConfigured naming it.
        self.writer = FeedWriter.from_crawler(crawler, uri, options)

    def on_start(self):
        self.writer.open()

    def on_stop(self):
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def handle_export_items(self, message):
        export_item = self.writer.export_item
        for item in message["items"]:
            try:
                export_item(item)
            except Exception:
                logger.error("Error exporting %(item)r to %(uri)s", {"item": item, "uri": self.writer.uri},
                             exc_info=True, extra={"spider": self.crawler.spider})
                self.crawler.stats.inc_value("feedexport/failed_items")
