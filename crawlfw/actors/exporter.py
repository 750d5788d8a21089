"""ExporterActor: writes the items that left the pipeline to one feed (``FEED_URI``,
``FEED_FORMAT``) through :mod:`crawlfw.core.feeds`; stores the feed when stopped."""

import logging

from crawlfw.actors._base import CrawlActor
from crawlfw.actors.pipeline import forward_checkpoint
from crawlfw.utils import _faults

logger = logging.getLogger(__name__)

__all__ = ["ExporterActor"]


class ExporterActor(CrawlActor):
    """Args:
    crawler: the Crawler (settings, spider).
    writer: the feed's :class:`~crawlfw.core.feeds.FeedWriter`, already opened (by the
        Supervisor, on its thread, so that a feed that cannot be opened fails the
        crawl's start and a ``JOBDIR`` job knows the feed's state before any item).
    **kw: ``CrawlActor`` arguments.
    """

    role = "exporter"

    def __init__(self, crawler, writer, **kw):
        super().__init__(settings=crawler.settings, **kw)
        self.crawler = crawler
        self.writer = writer
        self.fsync = crawler.settings.getbool("FRONTIER_FSYNC", True)

    def on_stop(self):
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def handle_export_items(self, message):
        export_item = self.writer.export_item
        if _faults.armed("feed.mid_batch"):
            self._tear(message["items"])  # fault injection (crash tests) only
        for item in message["items"]:
            try:
                export_item(item)
            except Exception:
                logger.error("Error exporting %(item)r to %(uri)s", {"item": item, "uri": self.writer.uri},
                             exc_info=True, extra={"spider": self.crawler.spider})
                self.crawler.stats.inc_value("feedexport/failed_items")

    def handle_checkpoint(self, message):
        """Make the feed durable up to here and pass the checkpoint on, with this feed's
        state (None for storages that cannot resume: stdout, FTP, S3)."""
        message["feeds"][self.writer.key] = self.writer.checkpoint(fsync=self.fsync)
        forward_checkpoint(self, message, message["next"])

    def _tear(self, items):
        """On the chosen pass, write half the batch and half an item's line, then die."""
        if not _faults.fatal_next("feed.mid_batch"):
            _faults.hit("feed.mid_batch")
            return
        for item in items[: len(items) // 2]:
            self.writer.export_item(item)
        self.writer.file.write(b'{"torn": "half a li')
        self.writer.file.flush()
        _faults.hit("feed.mid_batch")
