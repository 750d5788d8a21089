"""PipelineActor: runs ``ITEM_PIPELINES`` (an ``ItemPipelineManager``) over each item, in
order; fires ``item_scraped`` / ``item_dropped``; sends surviving items to the Exporter
and the count of finished items to the Engine.

A pipeline that raises ``DropItem`` drops the item (logged at WARNING by the log
formatter); any other exception is logged as "Error processing <item>" with its traceback
and the item is not exported; the crawl goes on.

The actor is restartable (:class:`~crawlfw.actors._childref.RestartableActor`): if it
dies (a bug, not an item pipeline's exception), the Supervisor starts another with the
same ``ItemPipelineManager`` (``open_spider``/``close_spider`` run once per crawl), and
the batch it was handling is replayed from the item it died on: the items before it are
not run through the item pipelines again, the one it died on is (at-least-once for that
item's pipeline code). A batch's surviving items go to the exporters once, after the
whole batch: a replay after that point only reports and counts.
"""

import logging

from crawlfw import signals
from crawlfw.actors import messages
from crawlfw.actors._childref import RestartableActor
from crawlfw.core.flow.scraper import report_spider_error
from crawlfw.exceptions import DropItem
from crawlfw.logformatter import LogFormatter
from crawlfw.pipelines import ItemPipelineManager
from crawlfw.core import _faults
from crawlfw.utils.failure import Failure
from crawlfw.utils.log import _debug_wanted, failure_to_exc_info, logformatter_adapter

logger = logging.getLogger(__name__)

__all__ = ["PipelineActor"]


class _BatchProgress:
    """How far the Pipeline actor got with one ``process_items`` message: what a
    replacement needs to replay it if the actor dies on it (kept beside the actor, not
    in the message).

    Attributes:
        message: the ``process_items`` message (by identity).
        done (int): items ``[:done]`` went through the item pipelines.
        passed (list): what they became, the ones that passed every pipeline.
        exported (bool): ``passed`` was sent to the exporters.
    """

    __slots__ = ("message", "done", "passed", "exported")

    def __init__(self, message, done: int, passed: list):
        self.message = message
        self.done = done
        self.passed = passed
        self.exported = False


class PipelineActor(RestartableActor):
    """Args:
    crawler: the Crawler.
    engine: the Engine's ref (told ``items_processed``).
    exporters: refs of Exporter actors (told ``export_items``); may be empty.
    itemproc: the crawl's ``ItemPipelineManager``; None: build one (on the caller's
        thread).
    restart: this actor replaces one that died: ``itemproc`` was opened by it
        (``open_spider`` is not run again).
    **kw: ``RestartableActor`` arguments (``child_ref``, ``crawl_id``, ``supervisor``).
    """

    role = "pipeline"

    def __init__(self, crawler, engine, exporters=(), itemproc=None, restart=False, **kw):
        super().__init__(settings=crawler.settings, **kw)
        self.crawler = crawler
        self.spider = crawler.spider
        self.engine = engine
        self.exporters = list(exporters)
        self._open = not restart
        # Built on the caller's (supervisor's) thread, before spider_opened is sent.
        self.itemproc = ItemPipelineManager.from_crawler(crawler) if itemproc is None else itemproc
        self._progress: _BatchProgress | None = None  # the batch being processed

    def on_start(self):
        if self._open:
            self.itemproc.open_spider(self.spider)

    def on_stop(self):
        if self.itemproc is not None:
            self.itemproc.close_spider(self.spider)

    def handle_process_items(self, message: messages.ProcessItems) -> None:
        if not message.get("exported"):
            # A replay (this actor's predecessor died on this batch) starts at the item
            # it died on, with the survivors of the ones before.
            start = message.get("processed", 0)
            progress = self._progress = _BatchProgress(
                message, start, list(message["passed"]) if start else [])
            half = len(message["items"]) // 2
            self._process(progress, half)
            if progress.done == half:
                _faults.hit("pipeline.items")  # restart tests: half of a batch processed
            self._process(progress, len(message["items"]))
            if progress.passed:
                for exporter in self.exporters:
                    self.send(exporter, {"type": "export_items", "items": progress.passed})
            progress.exported = True  # a replay from here on must not export again
        error = message.get("spider_error")
        if error is not None:  # the callback raised after yielding these items
            report_spider_error(self.crawler, error, message["request"], message["response"])
        self.send(self.engine, {"type": "items_processed", "count": len(message["items"])})
        self._progress = None

    def _process(self, progress: _BatchProgress, end: int) -> None:
        """Run the items of ``progress.message`` from ``progress.done`` to ``end`` through
        the item pipelines; the survivors go to ``progress.passed``. An exception that
        escapes (a bug: an item pipeline's own errors are logged here) leaves
        ``progress.done`` at the item it happened on, for :meth:`replay_of`."""
        message = progress.message
        items, response = message["items"], message["response"]
        spider = self.spider
        send_signal = self.crawler.signals.send_catch_log
        logformatter = self.crawler.logformatter
        process_item = self.itemproc.process_item
        # The default formatter logs "Scraped from" at DEBUG: skip it when DEBUG is off.
        log_scraped = type(logformatter) is not LogFormatter
        passed = progress.passed
        i = progress.done
        try:
            for i in range(progress.done, end):
                item = items[i]
                try:
                    output = process_item(item, spider)
                except DropItem as e:
                    logkws = logformatter.dropped(item, e, response, spider)
                    logger.log(*logformatter_adapter(logkws), extra={"spider": spider})
                    send_signal(signals.item_dropped, item=item, response=response,
                                spider=spider, exception=e)
                except Exception as e:
                    logger.error("Error processing %(item)s", {"item": item},
                                 exc_info=failure_to_exc_info(e), extra={"spider": spider})
                    send_signal(signals.item_error, item=item, response=response,
                                spider=spider, failure=Failure(e))
                else:
                    if log_scraped or _debug_wanted(logger):
                        logkws = logformatter.scraped(output, response, spider)
                        logger.log(*logformatter_adapter(logkws), extra={"spider": spider})
                    send_signal(signals.item_scraped, item=output, response=response,
                                spider=spider)
                    passed.append(output)  # the last statement of an item's turn
        except BaseException:
            progress.done = i  # items[:i] done; a replay starts with item i
            raise
        progress.done = max(progress.done, end)

    def handle_checkpoint(self, message: messages.Checkpoint) -> None:
        """Pass a checkpoint on to the exporters (in a chain), after every item sent
        before it; without exporters it is reached here."""
        forward_checkpoint(self, message, self.exporters)

    def replay_of(self, message):
        """Replay a ``process_items`` from the item this actor died on (``processed``,
        with the survivors so far in ``passed``), or, once its items went to the
        exporters, only what came after (``exported``). The received message is never
        changed: the replay is a new one, built from :class:`_BatchProgress`."""
        if message.get("type") != "process_items" or message.get("exported"):
            return [message]
        progress, self._progress = self._progress, None
        if progress is None or progress.message is not message:
            return [message]
        if progress.exported:
            return [{**message, "exported": True}]
        if not progress.done:
            return [message]
        return [{**message, "processed": progress.done, "passed": progress.passed}]


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
