"""PipelineActor: runs ``ITEM_PIPELINES`` (an ``ItemPipelineManager``) over each item, in
order; fires ``item_scraped`` / ``item_dropped``; sends surviving items to the Exporter
and the count of finished items to the Engine.

A pipeline that raises ``DropItem`` drops the item (logged at WARNING by the log
formatter); any other exception is logged as "Error processing <item>" with its traceback
and the item is not exported; the crawl goes on.

The actor is restartable (:class:`~crawlfw.actors._childref.RestartableActor`): the
Supervisor restarts it with the same ``ItemPipelineManager`` and the batch it died on is
replayed from the item it died on, its progress kept beside the actor
(:class:`_BatchProgress`); what is run again and what is not is ARCHITECTURE.md's
("Supervision").
"""

import itertools
import logging
from collections import deque

from crawlfw import signals
from crawlfw.actors import messages
from crawlfw.actors._childref import RestartableActor
from crawlfw.core import _faults
from crawlfw.core.flow.scraper import report_spider_error
from crawlfw.exceptions import DownloadCancelled, DropItem
from crawlfw.logformatter import LogFormatter, format_event
from crawlfw.pipelines import AwaitingDownloads, ItemPipelineManager
from crawlfw.utils.failure import Failure
from crawlfw.utils.log import _debug_wanted, failure_to_exc_info, logformatter_adapter
from crawlfw.utils.request import request_fingerprint

logger = logging.getLogger(__name__)

__all__ = ["PipelineActor"]

#: Keys of the ``download`` messages of every Pipeline actor of the process: a restarted
#: actor never takes an answer to its predecessor's download for one of its own.
_DOWNLOAD_KEYS = itertools.count()


class _BatchProgress:
    """How far the Pipeline actor got with one ``process_items`` message: what a
    replacement needs to replay it if the actor dies (kept beside the actor, not in the
    message).

    Attributes:
        message: the ``process_items`` message (by identity).
        done (int): items ``[:done]`` went through the item pipelines.
        passed (list): what they became, the ones that passed every pipeline.
        later (dict): ``{index: (passed, output)}`` of items after ``done`` that went
            through the pipelines while an earlier one waited for its downloads.
        waiting (set): indices of the items waiting for their downloads.
        next (int): the next item to start.
        exported (bool): ``passed`` was sent to the exporters.
    """

    __slots__ = ("message", "done", "passed", "later", "waiting", "next", "exported")

    def __init__(self, message, done: int, passed: list):
        self.message = message
        self.done = done
        self.passed = passed
        self.later: dict = {}
        self.waiting: set = set()
        self.next = done
        self.exported = False

    def finished(self, index: int, survived: bool, output) -> None:
        """Item ``index`` went through the item pipelines (``survived``: it passed
        every one, as ``output``)."""
        if index != self.done:
            self.later[index] = (survived, output)
            return
        if survived:
            self.passed.append(output)
        self.done = index + 1
        later = self.later
        while later and self.done in later:
            survived, output = later.pop(self.done)
            if survived:
                self.passed.append(output)
            self.done += 1

    def complete(self) -> bool:
        """Every item went through the item pipelines."""
        return self.done == len(self.message["items"])


class _Wait:
    """An item waiting for its media downloads (:class:`AwaitingDownloads`): its batch,
    its place, and the outcomes so far.

    Attributes:
        progress: the item's :class:`_BatchProgress`.
        index (int): the item's place in its batch.
        pending: the :class:`AwaitingDownloads` the item pipelines returned.
        outcomes (list): one per request: a Response, an exception, or None (not yet).
        missing (int): downloads still unanswered.
    """

    __slots__ = ("progress", "index", "pending", "outcomes", "missing")

    def __init__(self, progress: _BatchProgress, index: int, pending: AwaitingDownloads):
        self.progress = progress
        self.index = index
        self.pending = pending
        self.outcomes: list = [None] * len(pending.requests)
        self.missing = len(pending.requests)


class PipelineActor(RestartableActor):
    """Args:
    crawler: the Crawler.
    engine: the Engine's ref (told ``items_processed``, and ``download`` for the media
        of an item waiting).
    exporters: refs of Exporter actors (told ``export_items``); may be empty.
    itemproc: the crawl's ``ItemPipelineManager``; None: build one (on the caller's
        thread).
    restart: this actor replaces one that died: ``itemproc`` was opened by it
        (``open_spider`` is not run again).
    opened: a ``pykka.ThreadingFuture`` set once ``open_spider`` ran on this actor's
        thread: to None, or to the one line naming the item pipeline whose
        ``open_spider`` raised (the actor then stops without closing it, and
        reports no failure: the Supervisor refuses the start with that line). None:
        a failing ``open_spider`` fails the actor as any handler would.
    **kw: ``RestartableActor`` arguments (``child_ref``, ``crawl_id``, ``supervisor``).

    An item whose item pipelines return an :class:`AwaitingDownloads` (a media
    pipeline) waits here while the engine downloads its requests (``download`` /
    ``download_done``); the actor goes on with the next items meanwhile. Batches leave
    in the order they came: a batch's surviving items go to the exporters, and
    ``items_processed`` to the engine, once every item of it and of the batches before
    it is done, and a ``checkpoint`` passes on only after the batches received before it
    (so a lease is never acked while an item it caused still waits).
    """

    role = "pipeline"

    #: Batches (:class:`_BatchProgress`) and checkpoints held behind them, in arrival order.
    _queue: deque
    #: download key -> ``[(wait, place of the request in it)]``: the items waiting for it.
    _waits: dict[int, list[tuple[_Wait, int]]]
    #: request fingerprint -> the key of its download in progress, and back.
    _keys_by_fp: dict[str, int]
    _fp_of: dict[int, str]

    def __init__(self, crawler, engine, exporters=(), itemproc=None, restart=False,
                 opened=None, **kw):
        super().__init__(settings=crawler.settings, **kw)
        self.crawler = crawler
        self._opened = opened
        self.spider = crawler.spider
        self.engine = engine
        self.exporters = list(exporters)
        self._open = not restart
        # Built on the caller's (supervisor's) thread, before spider_opened is sent.
        self.itemproc = ItemPipelineManager.from_crawler(crawler) if itemproc is None else itemproc
        self._queue = deque()
        self._waits = {}
        self._keys_by_fp = {}
        self._fp_of = {}

    def on_start(self):
        if self._open:
            if self._opened is None:
                self.itemproc.open_spider(self.spider)
                return
            try:
                self.itemproc.open_spider(self.spider)
            except Exception as e:
                line = open_spider_error(self.itemproc, e)
                logger.debug("%(line)s", {"line": line}, exc_info=True)
                self.itemproc = None  # never opened: not closed either
                self._opened.set(line)
                self.actor_ref.stop(block=False)
                return
        if self._opened is not None:
            self._opened.set(None)

    def on_stop(self):
        for key in list(self._waits):  # the engine stopped without answering (it died)
            self._done(key, DownloadCancelled("Download cancelled: the engine has stopped"))
        if self.itemproc is not None:
            self.itemproc.close_spider(self.spider)

    def handle_process_items(self, message: messages.ProcessItems) -> None:
        if message.get("exported"):
            # A replay after the batch's items went to the exporters: only report.
            progress = _BatchProgress(message, len(message["items"]), [])
            progress.exported = True
            self._queue.append(progress)
            self._drain()
            return
        # A replay (this actor's predecessor died on this batch) starts at the item it
        # died on, with the survivors of the ones before and those done after.
        start = message.get("processed", 0)
        progress = _BatchProgress(message, start, list(message["passed"]) if start else [])
        for finished in message.get("finished", ()):
            progress.later[finished["index"]] = (finished["passed"], finished["item"])
        self._queue.append(progress)
        half = len(message["items"]) // 2
        self._process(progress, half)
        if progress.next == half:
            _faults.hit("pipeline.items")  # restart tests: half of a batch processed
        self._process(progress, len(message["items"]))
        if progress.complete():
            self._drain()

    def handle_download_done(self, message: messages.DownloadDone) -> None:
        """The engine answered a ``download`` of an item waiting here."""
        key = message["key"]
        if key not in self._waits:  # asked by a predecessor that died (its item is replayed)
            logger.debug("download_done %d: no item waits for it", key)
            return
        error = message.get("error")
        self._done(key, message["response"] if error is None else error)

    def _done(self, key: int, outcome) -> None:
        """The download ``key`` ended with ``outcome`` (a Response or an exception):
        every item waiting for it learns it."""
        del self._keys_by_fp[self._fp_of.pop(key)]
        for wait, place in self._waits.pop(key):
            self._answered(wait, place, outcome)

    def _answered(self, wait: _Wait, place: int, outcome) -> None:
        """Note the outcome of the ``place``-th download of ``wait``; the last one
        resumes the item."""
        wait.outcomes[place] = outcome
        wait.missing -= 1
        if wait.missing:
            return
        progress = wait.progress
        progress.waiting.discard(wait.index)
        self._resume(wait)
        if progress.complete():
            self._drain()

    def _process(self, progress: _BatchProgress, end: int) -> None:
        """Run the items of ``progress.message`` from ``progress.next`` to ``end`` through
        the item pipelines; the survivors go to ``progress.passed``, an item waiting for
        downloads to :meth:`_wait`. An exception that escapes (a bug: an item pipeline's
        own errors are logged here) leaves ``progress.next`` at the item it happened on,
        for :meth:`replay_of`."""
        message = progress.message
        items, response = message["items"], message["response"]
        spider = self.spider
        send_signal = self.crawler.signals.send_catch_log
        logformatter = self.crawler.logformatter
        process_item = self.itemproc.process_item
        # The default formatter logs "Scraped from" at DEBUG: skip it when DEBUG is off.
        log_scraped = type(logformatter) is not LogFormatter
        later = progress.later
        passed = progress.passed
        i = progress.next
        try:
            for i in range(progress.next, end):
                if later and i in later:
                    continue  # a replay: it went through the pipelines already
                item = items[i]
                try:
                    output = process_item(item, spider)
                except Exception as e:
                    self._not_scraped(item, e, response)
                    progress.finished(i, False, None)
                    continue
                if output.__class__ is AwaitingDownloads:
                    self._wait(progress, i, output)
                    continue
                if log_scraped or _debug_wanted(logger):
                    logkws = logformatter.scraped(output, response, spider)
                    logger.log(*logformatter_adapter(logkws), extra={"spider": spider})
                send_signal(signals.item_scraped, item=output, response=response,
                            spider=spider)
                if i == progress.done and not later:  # in order: the usual case
                    passed.append(output)
                    progress.done = i + 1  # the last statement of an item's turn
                else:
                    progress.finished(i, True, output)
        except BaseException:
            progress.next = i  # a replay starts with item i
            raise
        progress.next = max(progress.next, end)

    def _resume(self, wait: _Wait) -> None:
        """Resume an item whose downloads are all answered; record how it ends (passed,
        dropped, failed, or waiting again)."""
        progress, i = wait.progress, wait.index
        message = progress.message
        item, response = message["items"][i], message["response"]
        spider = self.spider
        try:
            output = wait.pending.resume(wait.outcomes)
        except Exception as e:
            self._not_scraped(item, e, response)
            progress.finished(i, False, None)
            return
        if output.__class__ is AwaitingDownloads:
            self._wait(progress, i, output)
            return
        logformatter = self.crawler.logformatter
        if type(logformatter) is not LogFormatter or _debug_wanted(logger):
            logkws = logformatter.scraped(output, response, spider)
            logger.log(*logformatter_adapter(logkws), extra={"spider": spider})
        self.crawler.signals.send_catch_log(signals.item_scraped, item=output,
                                            response=response, spider=spider)
        progress.finished(i, True, output)

    def _not_scraped(self, item, error: Exception, response) -> None:
        """Log and signal an item an item pipeline dropped (``DropItem``: logged by the
        log formatter, ``item_dropped``) or failed on ("Error processing", ``item_error``)."""
        spider = self.spider
        send_signal = self.crawler.signals.send_catch_log
        if isinstance(error, DropItem):
            logkws = self.crawler.logformatter.dropped(item, error, response, spider)
            logger.log(*logformatter_adapter(logkws), extra={"spider": spider})
            send_signal(signals.item_dropped, item=item, response=response,
                        spider=spider, exception=error)
            return
        logkws = format_event(self.crawler.logformatter, "item_error", item, error, response,
                              spider)
        logger.log(*logformatter_adapter(logkws), exc_info=failure_to_exc_info(error),
                   extra={"spider": spider, "item": item})
        send_signal(signals.item_error, item=item, response=response,
                    spider=spider, failure=Failure(error))

    def _wait(self, progress: _BatchProgress, i: int, pending: AwaitingDownloads) -> None:
        """Item ``i`` waits: ask the engine for its downloads (one download per
        request fingerprint among the items waiting at once, as Scrapy's
        ``MediaPipeline`` shares one)."""
        wait = _Wait(progress, i, pending)
        progress.waiting.add(i)
        reply_to = self.child_ref if self.child_ref is not None else self.actor_ref
        for place, request in enumerate(pending.requests):
            fp = request_fingerprint(request)
            key = self._keys_by_fp.get(fp)
            if key is not None:
                self._waits[key].append((wait, place))
                continue
            key = next(_DOWNLOAD_KEYS)
            self._waits[key] = [(wait, place)]
            self._keys_by_fp[fp] = key
            self._fp_of[key] = fp
            self.send(self.engine, {"type": "download", "request": request, "key": key,
                                    "reply_to": reply_to})

    def _drain(self) -> None:
        """Send on, in arrival order, the batches done and the checkpoints behind them."""
        queue = self._queue
        while queue:
            head = queue[0]
            if head.__class__ is not _BatchProgress:  # a checkpoint held behind batches
                queue.popleft()
                checkpoint_exporters(self, head, self.exporters)
                continue
            if not head.complete():
                return
            message = head.message
            if not head.exported:
                if head.passed:
                    for exporter in self.exporters:
                        self.send(exporter, {"type": "export_items", "items": head.passed})
                head.exported = True  # a replay from here on must not export again
            error = message.get("spider_error")
            if error is not None:  # the callback raised after yielding these items
                report_spider_error(self.crawler, error, message["request"],
                                    message["response"])
            self.send(self.engine, {"type": "items_processed", "count": len(message["items"])})
            queue.popleft()

    def handle_checkpoint(self, message: messages.Checkpoint) -> None:
        """Pass a checkpoint on to every exporter (:func:`checkpoint_exporters`), after
        every item sent before it; without exporters it is reached here. Behind a batch
        whose items still wait for downloads it is held until that batch is done."""
        if self._queue:
            self._queue.append(message)
        else:
            checkpoint_exporters(self, message, self.exporters)

    def replay_of(self, message):
        """What a replacement must handle in place of what this actor held: each batch
        not sent on yet, rebuilt from its :class:`_BatchProgress` (``processed`` items
        done with their survivors in ``passed``, those done after an item that waited
        in ``finished``; ``exported`` once its items went to the exporters), and the
        checkpoints held behind them, in order; then ``message`` (the one it died on)
        unless it is one of those or a ``download_done`` (the item it answered is
        replayed from its start). Received messages are never changed."""
        entries, self._queue = list(self._queue), deque()
        self._waits.clear()
        self._keys_by_fp.clear()
        self._fp_of.clear()
        replays = []
        held = False
        for entry in entries:
            if entry.__class__ is not _BatchProgress:
                held = held or entry is message
                replays.append(entry)
                continue
            held = held or entry.message is message
            replays.append(self._replay(entry))
        if not held and message.get("type") != "download_done":
            replays.append(message)
        return replays

    @staticmethod
    def _replay(progress: _BatchProgress):
        """The ``process_items`` replaying ``progress`` (see :meth:`replay_of`)."""
        message = progress.message
        if progress.exported:
            return {**message, "exported": True}
        if not progress.done and not progress.later:
            return message
        replay = {**message, "processed": progress.done, "passed": progress.passed}
        if progress.later:
            replay["finished"] = [{"index": i, "passed": survived, "item": output}
                                  for i, (survived, output) in sorted(progress.later.items())]
        return replay


def open_spider_error(itemproc, exc: Exception) -> str:
    """The line refusing a crawl whose item pipeline's ``open_spider`` raised ``exc``:
    ``"ITEM_PIPELINES: '<class path>'.open_spider failed: <ExcType>: <message>"``, the
    pipeline found among the traceback's frames (``'?'`` if none is one of theirs)."""
    names = {}
    for method in itemproc.methods.get("open_spider", ()):
        code = getattr(getattr(method, "__func__", method), "__code__", None)
        owner = getattr(method, "__self__", None)
        if code is not None and owner is not None:
            names[code] = f"{type(owner).__module__}.{type(owner).__qualname__}"
    name = "?"
    tb = exc.__traceback__
    while tb is not None and name == "?":
        name = names.get(tb.tb_frame.f_code, "?")
        tb = tb.tb_next
    return f"ITEM_PIPELINES: {name!r}.open_spider failed: {type(exc).__name__}: {exc}"


def checkpoint_exporters(actor, message, exporters):
    """Send ``message`` (a ``checkpoint``) to every Exporter, a copy each (``next``
    empty, ``parts``: how many), each answering the Scheduler with its feed's state;
    without exporters, tell the Scheduler ``checkpoint_reached`` at once.

    Each copy goes from the Pipeline itself, behind the items it sent that Exporter
    before (an actor's inbox is FIFO per sender): a chain Exporter -> Exporter would
    let the second Exporter write items the Pipeline sent after the checkpoint before
    the checkpoint reached it, and commit a feed length past the acked leases (items
    written twice after a resume).

    Args:
        actor: the sending Pipeline (a :class:`~crawlfw.actors._base.CrawlActor`).
        message: the checkpoint message (owned by the caller, passed on).
        exporters: the Exporter refs.
    """
    if not exporters:
        forward_checkpoint(actor, message, [])
        return
    for exporter in exporters:
        actor.send(exporter, {**message, "type": "checkpoint", "next": [],
                              "feeds": dict(message["feeds"]), "leases": list(message["leases"]),
                              "parts": len(exporters)})


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
