"""PipelineActor: runs ``ITEM_PIPELINES`` (an ``ItemPipelineManager``) over each item, in
order; fires ``item_scraped`` / ``item_dropped``; sends surviving items to the Exporter
and the count of finished items to the Engine.

A pipeline that raises ``DropItem`` drops the item (logged at WARNING by the log
formatter); any other exception is logged as "Error processing <item>" with its traceback
and the item is not exported; the crawl goes on.
"""

import logging

from crawlfw import signals
from crawlfw.actors._base import CrawlActor
from crawlfw.core.scraper import report_spider_error
from crawlfw.exceptions import DropItem
from crawlfw.logformatter import LogFormatter
from crawlfw.pipelines import ItemPipelineManager
from crawlfw.utils.log import _debug_wanted, failure_to_exc_info, logformatter_adapter

logger = logging.getLogger(__name__)

__all__ = ["PipelineActor"]


class PipelineActor(CrawlActor):
    """Args:
    crawler: the Crawler.
    engine: the Engine's ref (told ``items_processed``).
    exporters: refs of Exporter actors (told ``export_items``); may be empty.
    **kw: ``CrawlActor`` arguments.
    """

    role = "pipeline"

    def __init__(self, crawler, engine, exporters=(), **kw):
        super().__init__(settings=crawler.settings, **kw)
        self.crawler = crawler
        self.spider = crawler.spider
        self.engine = engine
        self.exporters = list(exporters)
        # Built on the caller's (supervisor's) thread, before spider_opened is sent.
        self.itemproc = ItemPipelineManager.from_crawler(crawler)

    def on_start(self):
        self.itemproc.open_spider(self.spider)

    def on_stop(self):
        if self.itemproc is not None:
            self.itemproc.close_spider(self.spider)

    def handle_process_items(self, message):
        response = message["response"]
        spider = self.spider
        send_signal = self.crawler.signals.send_catch_log
        logformatter = self.crawler.logformatter
        process_item = self.itemproc.process_item
        # The default formatter logs "Scraped from" at DEBUG: skip it when DEBUG is off.
        log_scraped = type(logformatter) is not LogFormatter
        passed = []
        for item in message["items"]:
            try:
                output = process_item(item, spider)
            except DropItem as e:
                logkws = logformatter.dropped(item, e, response, spider)
                logger.log(*logformatter_adapter(logkws), extra={"spider": spider})
                send_signal(signals.item_dropped, item=item, response=response, spider=spider,
                            exception=e)
            except Exception as e:
                logger.error("Error processing %(item)s", {"item": item},
                             exc_info=failure_to_exc_info(e), extra={"spider": spider})
            else:
                if log_scraped or _debug_wanted(logger):
                    logkws = logformatter.scraped(output, response, spider)
                    logger.log(*logformatter_adapter(logkws), extra={"spider": spider})
                send_signal(signals.item_scraped, item=output, response=response, spider=spider)
                passed.append(output)
        if passed:
            for exporter in self.exporters:
                self.send(exporter, {"type": "export_items", "items": passed})
        error = message.get("spider_error")
        if error is not None:  # the callback raised after yielding these items
            report_spider_error(self.crawler, error, message["request"], response)
        self.send(self.engine, {"type": "items_processed", "count": len(message["items"])})

    def handle_checkpoint(self, message):
        """Pass a checkpoint on to the exporters (in a chain), after every item sent
        before it; without exporters it is reached here."""
        forward_checkpoint(self, message, self.exporters)


def forward_checkpoint(actor, message, chain):
    """Send ``message`` (a ``checkpoint``) to the first ref of ``chain`` with the rest
    as its ``next``; with an empty chain, tell its ``reply_to`` ``checkpoint_reached``.

    Args:
        actor: the sending :class:`~crawlfw.actors._base.CrawlActor`.
        message: the checkpoint message (owned by the caller, passed on).
        chain: the refs still to pass, in order.
    """
    if chain:
        actor.send(chain[0], {**message, "type": "checkpoint", "next": list(chain[1:])})
    else:
        reached = {k: v for k, v in message.items() if k not in ("next", "reply_to")}
        reached["type"] = "checkpoint_reached"
        actor.send(message["reply_to"], reached)
