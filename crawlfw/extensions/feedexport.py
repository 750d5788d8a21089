"""Feed exports: storage back ends and the ``FeedExporter`` extension (Scrapy 1.2
``scrapy.extensions.feedexport``).

A *feed storage* says where a feed goes, picked by URI scheme from ``FEED_STORAGES`` /
``FEED_STORAGES_BASE`` (the table of schemes and classes is in
:mod:`crawlfw.core.feeds.storage`).

The storages and :class:`ItemFilter` live in :mod:`crawlfw.core.feeds.storage` and
:mod:`crawlfw.core.feeds.plugins` (``core/`` needs them and imports nothing from
``extensions/``); this Scrapy path names them too.

The actual feed writing logic is :class:`crawlfw.core.feeds.feeds.FeedWriter`; the crawlfw
runtime's Exporter actor drives it directly. :class:`FeedExporter` here is the Scrapy
extension class, kept for code that builds it with ``from_crawler`` and fires the
``spider_opened`` / ``item_scraped`` / ``spider_closed`` signals itself.
"""

from __future__ import annotations

import logging

from crawlfw.core.feeds.plugins import ItemFilter
from crawlfw.core.feeds.feeds import FeedWriter
from crawlfw.core.feeds.storage import (
    BlockingFeedStorage,
    FileFeedStorage,
    FTPFeedStorage,
    IFeedStorage,
    S3FeedStorage,
    StdoutFeedStorage,
)
from crawlfw.exceptions import NotConfigured

__all__ = [
    "IFeedStorage",
    "BlockingFeedStorage",
    "StdoutFeedStorage",
    "FileFeedStorage",
    "FTPFeedStorage",
    "S3FeedStorage",
    "FeedExporter",
    "ItemFilter",
]

logger = logging.getLogger(__name__)


class FeedExporter:
    """The Scrapy 1.2 extension that writes the feed, driven by signals.

    In the crawlfw runtime the Exporter actor writes feeds with
    :class:`crawlfw.core.feeds.feeds.FeedWriter` and this extension is not used. It exists for
    Scrapy-style use: ``FeedExporter.from_crawler(crawler)`` connects to the crawler's
    ``spider_opened``, ``item_scraped`` and ``spider_closed`` signals and forwards them
    to a :class:`~crawlfw.core.feeds.feeds.FeedWriter`.

    Args:
        settings: a :class:`~crawlfw.settings.Settings`.
        crawler: optional crawler, used to build storages with ``from_crawler``.

    Raises:
        NotConfigured: ``FEED_URI`` is not set, or its scheme or ``FEED_FORMAT`` is
            unknown (the message says which and lists the known ones).
    """

    def __init__(self, settings, crawler=None):
        self.settings = settings
        self.writer = FeedWriter(settings, crawler=crawler)

    @classmethod
    def from_crawler(cls, crawler):
        """Build the extension and connect its handlers to the crawler's signals."""
        from crawlfw import signals

        if getattr(crawler, "feeds_written_by_actor", False):
            # The runtime's Exporter actor writes the feed; this extension entry only says
            # whether feed export is enabled (EXTENSIONS = {...FeedExporter: None} disables it).
            raise NotConfigured
        o = cls(crawler.settings, crawler)
        crawler.signals.connect(o.open_spider, signals.spider_opened)
        crawler.signals.connect(o.close_spider, signals.spider_closed)
        crawler.signals.connect(o.item_scraped, signals.item_scraped)
        return o

    def open_spider(self, spider):
        """``spider_opened`` handler: open the feed (resolves the URI, opens the storage)."""
        self.writer.open(spider)

    def close_spider(self, spider):
        """``spider_closed`` handler: finish and store the feed.

        Returns:
            dict: the :meth:`~crawlfw.core.feeds.feeds.FeedWriter.close` summary.
        """
        return self.writer.close()

    def item_scraped(self, item, spider):
        """``item_scraped`` handler: export ``item`` and return it."""
        self.writer.export_item(item)
        return item
