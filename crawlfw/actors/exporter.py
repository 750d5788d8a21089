"""ExporterActor: writes the items that left the pipeline to one feed (``FEED_URI``,
``FEED_FORMAT``) through :mod:`crawlfw.core.feeds.feeds`; stores the feed when stopped.

The feeds are opened on the Supervisor's thread after the crawl's components are built
and before the actors start, all of them prepared (:func:`prepare_feeds`: configuration
checked, nothing touched) before any is opened (:func:`open_feeds`): a bad ``FEED_*``
setting or ``FEEDS`` option, or a storage that cannot be opened (``-o
/proc/nope/items.jl``) refuses the crawl's start with a
:class:`~crawlfw.exceptions.CrawlStartError`, and no other feed's file was emptied for
it; a component whose constructor raises refuses it before any feed is opened. A write that fails with an ``OSError``
(disk full) or a feed that cannot be stored at the end is a failed feed: the stat
``feedexport/failed_count`` counts it and the crawl closes with ``feed_failed``
(a failure reason: exit status 1).

The actor is restartable (:class:`~crawlfw.actors._childref.RestartableActor`): at the
start of each batch it notes the feed's position (:meth:`FeedWriter.mark
<crawlfw.core.feeds.feeds.FeedWriter.mark>`); dying in the batch it cuts the feed back
there (:meth:`FeedWriter.rewind <crawlfw.core.feeds.feeds.FeedWriter.rewind>`) before
handing its messages over, and its replacement writes the whole batch. Which feeds can
be cut back and what the others do: ARCHITECTURE.md, "Supervision".
"""

import logging

from crawlfw import signals
from crawlfw.actors import messages
from crawlfw.actors._childref import RestartableActor
from crawlfw.actors.pipeline import forward_checkpoint
from crawlfw.core import _faults
from crawlfw.core.feeds.feeds import FeedWriter
from crawlfw.core.feeds.resume import FeedResumeError
from crawlfw.exceptions import CrawlStartError, NotConfigured

logger = logging.getLogger(__name__)

__all__ = ["ExporterActor"]


def _start_error(crawler, uri, e, doing):
    """A :class:`CrawlStartError` naming the feed ``uri`` (None: ``FEED_URI``) and ``e``."""
    name = uri or crawler.settings.get("FEED_URI")
    if isinstance(e, (OSError, NotConfigured)):
        return CrawlStartError(f"Cannot open the feed {name}: {e}")
    # an exporter's or storage's own code failed to start
    logger.error("Error %(doing)s the feed %(name)s", {"doing": doing, "name": name},
                 exc_info=True)
    return CrawlStartError(f"Cannot open the feed {name}: {type(e).__name__}: {e}")


def prepare_feeds(crawler, feeds, resume_states=None) -> list:
    """Build and prepare every feed of the crawl, touching no file: each one's
    configuration is checked (options, format, storage, URI parameters, a local file's
    directory) before any feed is opened, so that a refused feed costs no other feed's
    earlier output.

    Args:
        crawler: the Crawler.
        feeds: ``[(uri, options), ...]`` (:func:`crawlfw.core.feeds.feed_settings.feeds_from_settings`;
            ``uri`` None: ``FEED_URI``).
        resume_states: ``{feed key: state}`` committed by an earlier run of this
            ``JOBDIR`` job, or None (see :meth:`crawlfw.core.feeds.feeds.FeedWriter.open`).

    Returns:
        list of prepared :class:`~crawlfw.core.feeds.feeds.FeedWriter`, in ``feeds`` order.

    Raises:
        CrawlStartError: one line naming the first feed at fault and what is wrong with
            it; an exporter or storage class (user code) raising anything else is named
            with its exception type, and its traceback is logged.
    """
    writers = []
    for uri, options in feeds:
        try:
            writer = FeedWriter.from_crawler(crawler, uri, options)
            state = (resume_states or {}).get(writer.key)
            writer.prepare(resume=state)
            writer.check_resume(state)
        except FeedResumeError as e:  # one line: the message says how to go on
            raise CrawlStartError(str(e)) from e
        except Exception as e:
            raise _start_error(crawler, uri, e, "preparing") from e
        writers.append(writer)
    return writers


def open_feeds(crawler, writers) -> None:
    """Open prepared feeds (:func:`prepare_feeds`): those that empty a file
    (``overwrite``) last, so that another feed failing to open empties none; on a
    failure the feeds already opened are discarded (a file one created removed, one
    it appended to cut back).

    Raises:
        CrawlStartError: as :func:`prepare_feeds`.
    """
    opened = []
    try:
        for writer in sorted(writers, key=lambda w: bool(w.overwrite)):  # stable
            try:
                writer.open()
            except Exception as e:
                raise _start_error(crawler, writer.urifmt, e, "opening") from e
            opened.append(writer)
    except CrawlStartError:
        for writer in opened:
            try:
                writer.discard()
            except OSError:
                logger.error("Error discarding the feed %(name)s", {"name": writer.name},
                             exc_info=True)
        raise


def open_feed(crawler, uri=None, options=None, resume_states=None) -> FeedWriter:
    """Build, prepare and open one feed on the caller's thread (see
    :func:`prepare_feeds`, :func:`open_feeds`).

    Returns:
        FeedWriter: opened.

    Raises:
        CrawlStartError: as :func:`prepare_feeds`.
    """
    writers = prepare_feeds(crawler, [(uri, options)], resume_states)
    open_feeds(crawler, writers)
    return writers[0]


class FeedFailures:
    """The feeds of one crawl whose storage failed (a write ``OSError``, a failed store, a
    file replaced under a checkpoint): recovery state the Supervisor keeps in the crawl's
    tree and hands to each Exporter and its replacements, so a replacement knows its
    feed failed and the crawl ends with ``feed_failed``.

    Attributes:
        uris (list[str]): the failed feeds' URI templates, in the order they failed.
    """

    __slots__ = ("uris",)

    def __init__(self) -> None:
        self.uris: list[str] = []

    def add(self, uri: str) -> None:
        """Record that the feed ``uri`` failed."""
        self.uris.append(uri)

    def __contains__(self, uri: object) -> bool:
        return uri in self.uris

    def __bool__(self) -> bool:
        return bool(self.uris)


class ExporterActor(RestartableActor):
    """Args:
    crawler: the Crawler (settings, spider, stats).
    writer: the feed's :class:`~crawlfw.core.feeds.feeds.FeedWriter`, already opened (by the
        Supervisor, on its thread, so that a feed that cannot be opened fails the
        crawl's start and a ``JOBDIR`` job knows the feed's state before any item); a
        replacement gets the writer of the actor it replaces.
    failures: the crawl's :class:`FeedFailures` (None: a record of its own).
    **kw: ``RestartableActor`` arguments (``child_ref``, ``crawl_id``, ``supervisor``,
        ``key``).
    """

    role = "exporter"

    def __init__(self, crawler, writer, failures: FeedFailures | None = None, **kw):
        super().__init__(settings=crawler.settings, **kw)
        self.crawler = crawler
        self.writer = writer
        self.fsync = crawler.settings.getbool("FRONTIER_FSYNC", True)
        self.failures = FeedFailures() if failures is None else failures
        self.failed = writer.urifmt in self.failures  # a predecessor's storage failed
        self._rewindable = writer.rewindable
        self._mark: tuple | None = None  # the feed's position at the start of the batch being written

    def on_stop(self):
        if self.writer is not None and not self.writer.closed:  # (discarded: a failed start)
            summary = self.writer.close()
            if summary["error"]:
                self._feed_failed()
            if summary["stored"] or summary["error"]:  # Scrapy: once its store was tried
                # Scrapy 2's feed_slot_closed; the FeedWriter stands for its FeedSlot
                # (uri, format, itemcount).
                self.crawler.signals.send_catch_log(signals.feed_slot_closed,
                                                    slot=self.writer)
            self.writer = None

    def _feed_failed(self):
        """Count a failed feed, record it in the crawl's :class:`FeedFailures` and ask
        the Supervisor to close the crawl with ``feed_failed`` (once)."""
        if self.failed:
            return
        self.failed = True
        self.crawler.stats.inc_value("feedexport/failed_count")
        self.failures.add(self.writer.urifmt if self.writer else "?")
        if self.supervisor is not None:
            self.send(self.supervisor, {"type": "stop_crawl", "crawl_id": self.crawl_id,
                                        "reason": "feed_failed"})

    def handle_export_items(self, message: messages.ExportItems) -> None:
        if self.failed:  # the storage failed: the spider is closing, the items are lost
            self.crawler.stats.inc_value("feedexport/failed_items", len(message["items"]))
            return
        export_item = self.writer.export_item
        items = message["items"]
        if self._rewindable:
            self._mark = self.writer.mark()
        _faults.hit("exporter.items")  # restart tests: a batch got, nothing written
        _faults.hit("feed.mid_batch", _faults.half_written_batch, self.writer, items)
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

    def handle_checkpoint(self, message: messages.Checkpoint) -> None:
        """Make the feed durable up to here and pass the checkpoint on, with this feed's
        state (None for storages that cannot resume: stdout, FTP, S3). A feed that
        failed (a write error, its file deleted or replaced: checked here) stops the
        checkpoint: the leases whose items it lost are not acked, and the crawl closes
        with ``feed_failed``."""
        if self.failed:  # its items are not all in the feed: nothing may be acked
            return
        try:
            message["feeds"][self.writer.key] = self.writer.checkpoint(fsync=self.fsync)
        except OSError as e:  # disk full, or the file deleted or replaced meanwhile
            logger.error("Feed %(feed)s failed: %(error)s; closing the crawl (feed_failed)",
                         {"feed": self.writer.name, "error": e},
                         extra={"spider": self.crawler.spider})
            self._feed_failed()
            return
        forward_checkpoint(self, message, message["next"])

    def prepare_restart(self) -> bool:
        """Cut the feed back to where the batch being written began (on this dying
        actor's thread, the last to touch the writer before its replacement)."""
        message, mark = self._message, self._mark
        if message is None or message.get("type") != "export_items" or self.failed:
            return True  # nothing half-written (a checkpoint only flushes)
        if not self._rewindable:
            logger.error(
                "Exporter of feed %(feed)s cannot be restarted: it died while writing a "
                "batch, and %(what)s cannot be cut back to where the batch began "
                "(only a local file's can%(unless)s); closing the crawl (exporter_failed)",
                {"feed": self.writer.name,
                 "what": (f"a {self.writer.scheme or 'file'} feed"
                          if self.writer.not_rewindable_because is None
                          else f"a feed with {self.writer.not_rewindable_because}"),
                 "unless": ("" if self.writer.not_rewindable_because is None
                            else ", without batch_item_count or postprocessing")},
                extra={"spider": self.crawler.spider})
            return False
        if mark is None:  # died before the batch's first write
            return True
        self.writer.rewind(mark)
        logger.info("Feed %(feed)s cut back to %(offset)d bytes, %(items)d items: where the "
                    "batch its exporter died on began (its replacement writes the batch)",
                    {"feed": self.writer.name, "offset": mark[0], "items": mark[1]},
                    extra={"spider": self.crawler.spider})
        return True
