"""Feed writing, without threads: the logic the Exporter actor wraps.

:class:`FeedWriter` turns the ``FEED_*`` settings into one feed for one spider run
(Scrapy 1.2's ``FeedExporter`` and its ``SpiderSlot`` in one plain object)::

    writer = FeedWriter(settings, spider)   # validates FEED_URI, FEED_FORMAT
    writer.open()                           # resolves the URI, opens the storage
    for item in items:
        writer.export_item(item)
    summary = writer.close()                # finishes, stores, logs; returns a dict

The settings it reads (``FEEDS`` and the ``FEED_*`` settings, Scrapy's names and meanings)
are listed, and parsed, in :mod:`crawlfw.core.feeds.feed_settings`; resuming a feed of a
``JOBDIR`` job and cutting it back to its committed length are in
:mod:`crawlfw.core.feeds.resume`.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, Any, TypeAlias

from crawlfw.core._fds import retry_when_out_of_fds
from crawlfw.core.feeds.feed_settings import (
    _as_settings,
    _check_feed_options,
    _components,
    _export_fields,
    _feed_indent,
    _takes_feed_options,
    resolve_uri,
    uri_scheme,
)
from crawlfw.core.feeds.plugins import ItemFilter, PostProcessingManager
from crawlfw.core.feeds.resume import (
    FeedReplacedError,
    FeedResumeError,
    _check_writable,
    _cut_back,
    _file_identity,
    _is_file_storage,
    _resume_problem,
)
from crawlfw.core.feeds.storage import _redact_uri
from crawlfw.exceptions import NotConfigured
from crawlfw.utils.misc import create_instance, load_object

if TYPE_CHECKING:
    from crawlfw.core._types import CrawlerLike
    from crawlfw.core.feeds.storage import IFeedStorage
    from crawlfw.exporters import BaseItemExporter
    from crawlfw.settings import BaseSettings
    from crawlfw.spiders import Spider

    #: What a feed's exporter writes into: the storage's file, or the post-processing
    #: plug-ins over it.
    FeedFile: TypeAlias = IO[bytes] | PostProcessingManager

__all__ = ["FeedWriter"]

logger = logging.getLogger(__name__)


def _local_path_of(file: object) -> str | None:
    """The path of ``file`` on the local disk if it has one that exists, else None."""
    name = getattr(file, "name", None)
    if isinstance(name, str) and os.path.isfile(name):
        return name
    return None


class FeedWriter:
    """Writes one feed for one spider run, as configured by the ``FEED_*`` settings.

    Not thread-safe; in the runtime one Exporter actor owns it and calls every method.
    Construction checks the configuration; :meth:`open` resolves the URI and opens the
    storage; :meth:`export_item` writes each item; :meth:`close` finishes the document,
    stores it and logs the outcome. Exporting starts lazily, so that an empty feed that
    is not stored leaves no trace (no ``[`` on standard output, no file).

    Args:
        settings: a :class:`~crawlfw.settings.Settings` (or a plain dict of overrides,
            laid over the default settings).
        spider: the :class:`~crawlfw.spiders.Spider` whose items are written; may instead
            be given to :meth:`open`.
        crawler: optional; storages with ``from_crawler(crawler, uri)`` are built with it,
            else with ``from_settings(settings, uri)`` when they have it.
        uri: the feed URI (template) of one ``FEEDS`` entry; None: ``FEED_URI``.
        options: that entry's options dict (see ``FEEDS`` above); used with ``uri``.
            A storage whose constructor takes ``feed_options`` (``FileFeedStorage``:
            ``overwrite``) gets the options, as in Scrapy 2.

    Raises:
        NotConfigured: ``FEED_URI`` is not set; a ``FEEDS`` entry has an unknown or
            unsupported option, or no format and no known file extension;
            ``FEED_FORMAT`` is not a known format or
            the URI scheme not a known storage (the message names it and lists the known
            ones); the storage disabled itself (e.g. boto3 missing for ``s3``); or
            ``FEED_URI_PARAMS`` cannot be imported.

    Attributes:
        format (str): the feed format, as named (lower-cased), e.g. ``'jl'`` for
            ``-o items.jl``, as Scrapy 2 names it.
        uri (str | None): the resolved URI, set by :meth:`open`.
        itemcount (int): items exported so far.
        storage: the storage object, set by :meth:`open`.
        exporter: the item exporter, set by :meth:`open`.
    """

    def __init__(self, settings: BaseSettings | Mapping[str, Any] | None,
                 spider: Spider | None = None, *, crawler: CrawlerLike | None = None,
                 uri: str | None = None, options: Mapping[str, Any] | None = None) -> None:
        self.settings = settings = _as_settings(settings)
        self.spider = spider
        self.crawler = crawler
        exporters = _components(settings, "FEED_EXPORTERS")
        if uri is None:
            urifmt = settings.get("FEED_URI")
            if not urifmt:
                raise NotConfigured("FEED_URI is not set: there is no feed to write")
            self.urifmt = str(urifmt)
            options = {"format": settings.get("FEED_FORMAT")}
            where = "FEED_FORMAT"
        else:
            self.urifmt = str(uri)
            where = f"FEEDS[{_redact_uri(self.urifmt)!r}]"
            options = _check_feed_options(self.urifmt, options, exporters, where)
        self.options: dict[str, Any] = options
        self.format = str(options.get("format") or "").lower()
        self.store_empty = (settings.getbool("FEED_STORE_EMPTY")
                            if options.get("store_empty") is None
                            else bool(options["store_empty"]))
        self.export_fields = _export_fields(options.get("fields"), settings)
        self.export_encoding = (options.get("encoding")
                                or settings.get("FEED_EXPORT_ENCODING") or None)
        self.overwrite = bool(options.get("overwrite", False))
        # Scrapy 2's layout option: None (1.2's layout), 0 (the default: items on lines
        # of their own), N > 0 (also indented); used by the JSON and XML exporters
        self.indent = _feed_indent(options, settings, where)
        self.item_export_kwargs = dict(options.get("item_export_kwargs") or {})

        if self.format not in exporters:
            raise NotConfigured(
                f"Unknown feed format: {self.format!r} ({where}); known formats: "
                f"{', '.join(sorted(exporters))} (add others in FEED_EXPORTERS)"
            )
        self._exporter_cls = load_object(exporters[self.format])
        # the names of this exporter: a JOBDIR feed resumes across them ('jsonlines'/'jl')
        self._formats = {f for f, path in exporters.items() if path == exporters[self.format]}

        storages = _components(settings, "FEED_STORAGES")
        self.scheme = uri_scheme(self.urifmt)
        if self.scheme not in storages:
            known = ", ".join(repr(s) if not s else s for s in sorted(storages))
            raise NotConfigured(
                f"Unknown feed storage scheme: {self.scheme!r} in "
                f"{'FEED_URI' if uri is None else 'FEEDS'} "
                f"{_redact_uri(self.urifmt)!r}; known schemes: {known} "
                f"(add others in FEED_STORAGES)"
            )
        self._storage_cls = load_object(storages[self.scheme])
        try:  # Scrapy 1.2 also builds a storage up front, to find disabled schemes early
            self._make_storage(self.urifmt)
        except NotConfigured as e:
            raise NotConfigured(f"Disabled feed storage scheme: {self.scheme!r}: {e}") from e

        uripar = options.get("uri_params") or settings.get("FEED_URI_PARAMS")
        try:
            self._uripar = load_object(uripar) if uripar else None
        except (ImportError, NameError, ValueError, TypeError) as e:
            raise NotConfigured(f"FEED_URI_PARAMS {uripar!r} cannot be loaded: {e}") from e

        self.uri: str | None = None
        self.itemcount = 0
        self.storage: IFeedStorage | None = None
        self.exporter: BaseItemExporter | None = None
        self.file: FeedFile | None = None
        self._export: Callable[[Any], None] = self._start_and_export
        self._configure_scrapy2(options, settings, where)
        self._state = "new"
        self._resume: Mapping[str, Any] | None = None  # the JOBDIR state prepare() accepted
        self._started = False
        self._resumable = False  # a local file: checkpoint() can give its state
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) of a local file, checked at commits

    @property
    def closed(self) -> bool:
        """True once :meth:`close` or :meth:`discard` finished the feed (nothing more is
        written or stored)."""
        return self._state == "closed"

    @property
    def key(self) -> str:
        """The name of this feed in a ``JOBDIR`` job's metadata: its ``FEED_URI`` template."""
        return self.urifmt

    @classmethod
    def from_crawler(cls, crawler: CrawlerLike, uri: str | None = None,
                     options: Mapping[str, Any] | None = None) -> FeedWriter:
        """Build from ``crawler.settings`` for ``crawler.spider``, storages built with
        ``from_crawler`` (the spider may instead be given to :meth:`open`).

        Args:
            crawler: the Crawler.
            uri, options: one ``FEEDS`` entry (see the constructor); None: ``FEED_URI``.

        Raises:
            NotConfigured: as the constructor.
        """
        return cls(crawler.settings, getattr(crawler, "spider", None), crawler=crawler,
                   uri=uri, options=options)

    # lifecycle

    def open(self, spider: Spider | None = None, resume: Mapping[str, Any] | None = None) -> str:
        """Resolve the feed URI, open the storage and build the exporter.

        Args:
            spider: the spider, if not given to the constructor.
            resume: the state :meth:`checkpoint` gave in an earlier run of the same
                ``JOBDIR`` job, or None. For a local file of the same format, the file
                is cut back to the committed length (dropping what the earlier run wrote
                after its last commit, partial lines included) and the document goes on
                (no second header); the URI is the one resolved then (so ``%(time)s``
                names the same file). Other storages start afresh.

        Returns:
            str: the resolved URI (password redacted).

        Raises:
            RuntimeError: the writer was already opened.
            ValueError: no spider was given.
            NotConfigured: ``FEED_URI`` names a parameter the spider does not have, or
                is not a valid ``%``-template.
            OSError: the storage could not be opened (directory not creatable...).
        """
        if self._state == "new":
            self.prepare(spider, resume)
        elif self._state != "prepared":
            raise RuntimeError(f"FeedWriter for {self.urifmt!r} is already {self._state}")
        resume = self._resume
        uri = self.uri
        assert uri is not None, "prepare() resolved it"
        self.storage = storage = self._make_storage(uri)
        self._resumable = (hasattr(storage, "path") and _is_file_storage(storage)
                           and self.not_rewindable_because is None)
        if resume and self._resumable and _is_file_storage(storage):
            problem = _resume_problem(storage.path, resume["offset"], uri)
            if problem is None:
                _cut_back(storage.path, resume["offset"], uri)
            elif not self.settings.getbool("FEED_RESTART_BROKEN"):
                raise FeedResumeError(problem)
            else:
                resume = None
                aside = None
                if os.path.exists(storage.path):
                    aside = f"{storage.path}.broken-{int(time.time())}"
                    os.replace(storage.path, aside)
                logger.warning("%(problem)s; starting the feed anew (FEED_RESTART_BROKEN)%(kept)s",
                               {"problem": problem,
                                "kept": f"; the old file is kept as {aside}" if aside else ""})
        raw = self._open_storage()
        self._identity = _file_identity(raw) if self._resumable else None
        self.file = self._postprocessed(raw)
        try:
            self.exporter = self._make_exporter()
            if resume and self._resumable and resume.get("started"):
                self._resume_document(resume.get("items", 0), resume.get("fields"))
        except BaseException:
            self._discard()
            raise
        self._state = "open"
        return _redact_uri(uri)

    def prepare(self, spider: Spider | None = None,
                resume: Mapping[str, Any] | None = None) -> str:
        """Resolve the feed URI and check that its target can be written, touching
        nothing: no file is created, opened or emptied. :meth:`open` then opens it.

        The crawl prepares every feed before it opens any, so that a feed refused for
        its configuration (a URI parameter the spider lacks, a local path under a file
        or a directory it may not write) never costs another feed's earlier output
        (an ``overwrite`` feed is emptied when opened).

        Args:
            spider, resume: as :meth:`open` (which, called after this, ignores its own).

        Returns:
            str: the resolved URI (password redacted).

        Raises:
            RuntimeError: the writer was already prepared or opened.
            ValueError: no spider was given.
            NotConfigured: the URI names a parameter the spider does not have, or is not
                a valid ``%``-template.
            OSError: a local feed file could not be created or written (a directory or
                a file in its place, no write permission).
        """
        if self._state != "new":
            raise RuntimeError(f"FeedWriter for {self.urifmt!r} is already {self._state}")
        if spider is not None:
            self.spider = spider
        if self.spider is None:
            raise ValueError("FeedWriter.open() needs the spider (none given to the constructor)")
        if resume and resume.get("format") in self._formats and resume.get("uri"):
            self.uri = uri = resume["uri"]
            self.overwrite = False  # -O emptied the file when the job began, not now
        else:
            resume = None
            self.uri = uri = self._resolve_uri()
        storage = self._make_storage(uri)
        if _is_file_storage(storage):
            _check_writable(storage.path)
        self._resume = resume
        self._state = "prepared"
        return _redact_uri(uri)

    def discard(self) -> None:
        """Give up an opened feed without storing it: the storage's ``discard`` undoes
        its ``open`` (a local file it created is removed, one it appended to cut back to
        its size before); a feed not opened yet is left as is.

        Raises:
            OSError: the local file cannot be removed or cut back.
        """
        if self._state == "open":
            self._state = "closed"
            self._discard()

    # Scrapy 2 feed options: batches, post-processing, item filters

    def _configure_scrapy2(self, options: Mapping[str, Any], settings: BaseSettings,
                           where: str) -> None:
        """Read ``batch_item_count`` (``FEED_EXPORT_BATCH_ITEM_COUNT``),
        ``postprocessing`` and ``item_filter``/``item_classes``; install the
        :meth:`export_item` that applies them (a feed without them keeps the plain one).

        Raises:
            NotConfigured: a bad value; a batch URI without ``%(batch_id)d`` or
                ``%(batch_time)s``; batches or post-processing with ``JOBDIR`` or a
                shared frontier (``FRONTIER_URL``), which they cannot resume exactly
                once; an item filter that cannot be loaded or built.
        """
        if where == "FEED_FORMAT":  # the FEED_URI feed
            where = "FEED_URI"
        self.batch_id = 1
        self._batch_errors: list[str] = []
        self._target: IO[bytes] | None = None  # the storage's file under a PostProcessingManager
        count = options.get("batch_item_count")
        if count is None:
            count = settings.get("FEED_EXPORT_BATCH_ITEM_COUNT", 0) or 0
            origin = "FEED_EXPORT_BATCH_ITEM_COUNT"
        else:
            origin = f"{where} batch_item_count"
        if isinstance(count, str) and count.strip().isdigit():
            count = int(count)
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise NotConfigured(f"{origin} must be a whole number >= 0 (0: no batches), "
                                f"got {count!r}")
        self.batch_item_count = count
        if count and not re.search(r"%\(batch_time\)s|%\(batch_id\)", self.urifmt):
            raise NotConfigured(
                f"%(batch_time)s or %(batch_id)d must be in the feed URI "
                f"({_redact_uri(self.urifmt)}) if FEED_EXPORT_BATCH_ITEM_COUNT setting or "
                f"FEEDS.batch_item_count is specified and greater than 0"
            )
        plugins = options.get("postprocessing") or []
        if isinstance(plugins, (str, type)) or not isinstance(plugins, (list, tuple)):
            raise NotConfigured(f"{where} postprocessing must be a list of plug-in classes "
                                f"or import paths, got {plugins!r}")
        try:
            self.postprocessing = [load_object(p) if isinstance(p, str) else p
                                   for p in plugins]
        except (ImportError, NameError, ValueError, TypeError) as e:
            raise NotConfigured(f"{where} postprocessing: {e}") from e
        features = [name for name, used in (("batch_item_count", count),
                                            ("postprocessing", plugins)) if used]
        #: why a local file feed cannot be cut back (restart, JOBDIR resume), or None
        self.not_rewindable_because = " and ".join(features) or None
        if features and (settings.get("JOBDIR") or settings.get("FRONTIER_URL")):
            raise NotConfigured(
                f"{where}: {' and '.join(features)} cannot be used with "
                f"{'JOBDIR' if settings.get('JOBDIR') else 'a shared frontier (FRONTIER_URL)'}: "
                f"a resumed job could not cut such a feed back to its last commit, so "
                f"items would be written twice or lost; remove the option or run "
                f"without JOBDIR"
            )
        self.item_filter = None
        if options.get("item_filter") is not None or options.get("item_classes"):
            try:
                filter_cls = options.get("item_filter") or ItemFilter
                if isinstance(filter_cls, str):
                    filter_cls = load_object(filter_cls)
                self.item_filter = filter_cls(options)
            except (ImportError, NameError, ValueError, TypeError) as e:
                raise NotConfigured(f"{where} item_filter: {e}") from e
            if not callable(getattr(self.item_filter, "accepts", None)):
                raise NotConfigured(f"{where} item_filter {filter_cls!r} has no accepts(item)")
        if self.item_filter is not None or count:
            self.export_item = self._export_item_scrapy2  # type: ignore[method-assign]

    def _export_item_scrapy2(self, item: Any) -> None:
        """:meth:`export_item` for a feed with an item filter or batches: an item the
        filter refuses is skipped; a batch that is full is stored and the next one
        begins (its file opened by its first item)."""
        if self.item_filter is not None and not self.item_filter.accepts(item):
            return
        self._export(item)
        self.itemcount += 1
        if self.batch_item_count and self.itemcount >= self.batch_item_count:
            self._next_batch()

    def _next_batch(self) -> None:
        """Store the full batch and make the next one current (its URI resolved now:
        ``%(batch_time)s`` is its start)."""
        result = self._store_current()
        if result["error"]:
            self._batch_errors.append(result["error"])
        self.batch_id += 1
        self.uri = self._resolve_uri()
        self.storage = self.file = self.exporter = self._target = None
        self.itemcount = 0
        self._started = False
        self._export = self._start_and_export

    def _open_batch_file(self) -> None:
        """Open the current batch's file (a batch after the first)."""
        assert self.uri is not None, "_next_batch() resolved it"
        self.storage = self._make_storage(self.uri)
        self.file = self._postprocessed(self._open_storage())
        self.exporter = self._make_exporter()

    def _open_storage(self) -> IO[bytes]:
        """``self.storage.open(spider)``, tried again while the process is out of file
        descriptors (``EMFILE``/``ENFILE``: a transient condition, not a failed feed),
        each retry counted in ``feedexport/emfile_retries``; see
        :func:`crawlfw.core._fds.retry_when_out_of_fds`."""
        stats = self._stats()

        def count() -> None:
            if stats is not None:
                stats.inc_value("feedexport/emfile_retries")
        storage = self.storage
        assert storage is not None and self.uri is not None, "opened by the caller"
        return retry_when_out_of_fds(lambda: storage.open(self.spider),
                                     f"feed {_redact_uri(self.uri)}", on_retry=count)

    def _stats(self) -> Any:
        """The crawler's stats collector, or None (a writer without a crawler)."""
        crawler = self.crawler or getattr(self.spider, "crawler", None)
        return getattr(crawler, "stats", None)

    def _count_store(self, outcome: str) -> None:
        """Count a stored (``outcome`` ``'success'``) or failed (``'failed'``) file in
        Scrapy 2's stats, ``feedexport/<outcome>_count/<storage class name>``."""
        stats = self._stats()
        if stats is not None:
            stats.inc_value(f"feedexport/{outcome}_count/{type(self.storage).__name__}")

    def _postprocessed(self, file: IO[bytes]) -> FeedFile:
        """``file`` under a :class:`~crawlfw.extensions.postprocessing.PostProcessingManager`
        when the feed has ``postprocessing``, else ``file``."""
        if not self.postprocessing:
            return file
        self._target = file
        return PostProcessingManager(self.postprocessing, file, self.options)

    @property
    def _raw_file(self) -> FeedFile | None:
        """The storage's own file (under the post-processing, if any)."""
        return self._target if self._target is not None else self.file

    def _finished_file(self) -> IO[bytes]:
        """The file to hand to the storage: the post-processing closed (its last bytes
        written) first."""
        file = self.file
        assert file is not None, "a feed with a file to store"
        if self._target is not None:
            file.close()
            return self._target
        assert not isinstance(file, PostProcessingManager), "its _target is set"
        return file

    def check_resume(self, resume: Mapping[str, Any] | None) -> None:
        """Check, writing nothing, that :meth:`open` can resume this feed from
        ``resume`` (a state of :meth:`checkpoint` committed by an earlier run of the
        job): a local file at least as long as its committed length. Call it for every
        feed of a job before opening any, so a refused resume leaves all of them as
        they are.

        Raises:
            FeedResumeError: the file is missing or shorter than committed, and
                ``FEED_RESTART_BROKEN`` is False (the message names the file, both
                lengths and how to go on).
        """
        if (not resume or resume.get("format") not in self._formats or not resume.get("uri")
                or self.settings.getbool("FEED_RESTART_BROKEN")):
            return
        storage = self._make_storage(resume["uri"])
        if hasattr(storage, "path") and _is_file_storage(storage):
            problem = _resume_problem(storage.path, resume["offset"], resume["uri"])
            if problem is not None:
                raise FeedResumeError(problem)

    def check_identity(self) -> None:
        """Check that the feed's path still names the file this writer writes (a
        local file deleted, moved or replaced during the crawl would lose its items).

        Raises:
            FeedReplacedError: it does not (the message names the file).
        """
        if self._identity is None:
            return
        storage = self.storage
        assert _is_file_storage(storage), "only a local file has an identity"
        try:
            now: tuple[int, int] | None = _file_identity(storage.path)
        except FileNotFoundError:
            now = None
        if now != self._identity:
            what = "deleted or moved" if now is None else "replaced by another file"
            raise FeedReplacedError(
                f"Feed {_redact_uri(self.uri or self.urifmt)}: the file {storage.path} was {what} "
                f"during the crawl; the items written to it are not in it")

    def _make_exporter(self) -> BaseItemExporter:
        from crawlfw.exporters import JsonItemExporter, XmlItemExporter

        kwargs = dict(self.item_export_kwargs)
        exporter_cls = self._exporter_cls
        if self.indent is not None and "indent" not in kwargs:
            if issubclass(exporter_cls, JsonItemExporter) and self.indent > 0:
                kwargs["indent"] = self.indent  # 0: items on lines of their own already
            elif issubclass(exporter_cls, XmlItemExporter):
                kwargs["indent"] = self.indent
        exporter: BaseItemExporter = self._exporter_cls(
            self.file, fields_to_export=self.export_fields, encoding=self.export_encoding,
            **kwargs,
        )
        return exporter

    def _resume_document(self, items: int, fields: list[str] | dict[str, str] | None) -> None:
        """Go on with a document whose header and ``items`` items are in the file."""
        exporter = self.exporter
        assert exporter is not None, "made by the caller"
        exporter.resume_exporting(items, fields)
        self._started = True
        self._export = exporter.export_item
        self.itemcount = items

    @property
    def name(self) -> str:
        """The feed's URI template with any password redacted, for logs."""
        return _redact_uri(self.urifmt)

    @property
    def rewindable(self) -> bool:
        """True when :meth:`rewind` can cut the feed back: a local file, open (stdout,
        FTP and S3 feeds cannot)."""
        return self._state == "open" and self._resumable

    def mark(self) -> tuple[int, int, bool]:
        """The feed's position now, for :meth:`rewind`: no flush (the buffered file's
        ``tell()`` adds what it holds to the raw file's position, one ``lseek`` call).

        Returns:
            tuple: opaque; ``(offset in bytes, items, started)``.
        """
        file = self.file
        assert file is not None, "an open feed"
        return file.tell(), self.itemcount, self._started

    def rewind(self, mark: tuple[int, int, bool]) -> None:
        """Cut the feed back to ``mark`` (a :meth:`mark` of this writer) and go on from
        there with a new exporter, as :meth:`open` resumes a ``JOBDIR`` feed: what was
        written after the mark (half a batch, half a line) is gone, and the document is
        continued (no second header).

        Used by the Exporter actor that dies in the middle of a batch, so that its
        replacement writes the batch once.

        Raises:
            RuntimeError: the feed is not :attr:`rewindable`.
            OSError: the file cannot be flushed or truncated.
        """
        if not self.rewindable:
            raise RuntimeError(f"The feed {self.name} cannot be cut back: only a local "
                               "file's can")
        offset, items, started = mark
        fields = None
        document_fields = getattr(self.exporter, "document_fields", None)
        if started and document_fields is not None:
            fields = document_fields()
        stream = getattr(self.exporter, "stream", None)  # CSV's text layer
        if stream is not None and self._started:
            stream.flush()
        file = self.file
        assert file is not None, "a rewindable feed is open"
        file.flush()
        file.truncate(offset)
        file.seek(offset)  # in "wb" mode truncate() leaves the position past the end
        self.exporter = self._make_exporter()
        self._started = False
        self._export = self._start_and_export
        self.itemcount = items
        if started:
            self._resume_document(items, fields)

    def checkpoint(self, fsync: bool = True) -> dict[str, Any] | None:
        """Flush the feed to the file (and to the disk with ``fsync``) and return its
        state, to be committed in the ``JOBDIR`` frontier with the leases whose items it
        holds.

        Args:
            fsync: ``os.fsync`` the file (survives a power loss, not just the process).

        Returns:
            dict | None: ``{'uri': str, 'format': str, 'offset': int (bytes),
            'items': int, 'started': bool, 'fields': list | dict | None}``; None when
            the feed is not a local file (stdout, FTP, S3: not resumable) or not open.

        Raises:
            OSError: the file cannot be written (disk full...).
            FeedReplacedError: the file was deleted, moved or replaced during the crawl
                (its ``st_dev``/``st_ino`` changed: :meth:`check_identity`).
        """
        if self._state != "open" or not self._resumable:
            return None
        if self._started:
            flush = getattr(self.exporter, "stream", None)  # CSV's text layer
            if flush is not None:
                flush.flush()
        file = self.file
        assert file is not None, "a resumable feed is open"
        file.flush()
        if fsync:
            os.fsync(file.fileno())
        self.check_identity()
        document_fields = getattr(self.exporter, "document_fields", None)
        return {
            "uri": self.uri,
            "format": self.format,
            "offset": file.tell(),
            "items": self.itemcount,
            "started": self._started,
            "fields": document_fields() if document_fields is not None else None,
        }

    def export_item(self, item: Any) -> None:
        """Write one item (the hot path: one exporter call and a counter increment).

        Args:
            item: a dict or an Item.

        Raises:
            Exception: whatever the exporter raises for this item (an unserializable
                value...); the item is then not counted and the feed stays usable.
        """
        self._export(item)
        self.itemcount += 1

    def _start_and_export(self, item: Any) -> None:
        if self._state != "open":
            raise RuntimeError(f"FeedWriter for {self.urifmt!r} is not open ({self._state})")
        if self.file is None:  # the next batch's file, opened by its first item
            self._open_batch_file()
        exporter = self.exporter
        assert exporter is not None, "made with the file"
        exporter.start_exporting()
        self._started = True
        self._export = exporter.export_item
        self._export(item)

    def close(self) -> dict[str, Any]:
        """Finish the document and store it, unless it is empty and ``FEED_STORE_EMPTY``
        is False; log the outcome.

        A local file deleted or replaced during the crawl is not stored: one ERROR line
        naming it (:meth:`check_identity`), and the result's ``error`` set.
        Storage errors are logged (with traceback), not raised: ``"Error storing
        %(format)s feed (%(itemcount)d items) in: %(uri)s"``, followed by the local path
        where the data was kept when there is one (the temporary file of an FTP or S3
        feed, or the local file). Each file stored or not is counted in the crawler's
        stats as Scrapy 2 counts it: ``feedexport/success_count/<storage class>`` or
        ``feedexport/failed_count/<storage class>`` (``FileFeedStorage``...); an empty
        feed not stored is not counted.

        Returns:
            dict: ``{'uri': str (password redacted), 'format': str, 'itemcount': int,
            'stored': bool, 'error': str | None ("ExcType: message"),
            'local_path': str | None (where the data is if storing failed)}``.

        Raises:
            RuntimeError: the writer was never opened or is already closed.
        """
        if self._state != "open":
            raise RuntimeError(f"FeedWriter for {self.urifmt!r} is not open ({self._state})")
        self._state = "closed"
        result = self._store_current()
        if self._batch_errors and not result["error"]:
            result["error"] = self._batch_errors[0]
        return result

    def _store_current(self) -> dict[str, Any]:
        """Finish and store the current file (the feed's, or its current batch's);
        see :meth:`close`."""
        result: dict[str, Any] = {
            "uri": _redact_uri(self.uri or self.urifmt),
            "format": self.format,
            "itemcount": self.itemcount,
            "stored": False,
            "error": None,
            "local_path": None,
        }
        log_args = {"format": self.format, "itemcount": self.itemcount, "uri": result["uri"]}
        extra = {"spider": self.spider}
        if self.file is None:  # a batch after the first that got no item: no file
            return result
        if not self.itemcount and not self.store_empty:
            self._discard()
            logger.debug("Not storing empty %(format)s feed in: %(uri)s (FEED_STORE_EMPTY "
                         "is False)", log_args, extra=extra)
            return result
        exporter, storage = self.exporter, self.storage
        assert exporter is not None and storage is not None, "made with the file"
        try:
            if not self._started:
                exporter.start_exporting()
            exporter.finish_exporting()
            self.check_identity()
            storage.store(self._finished_file())
        except FeedReplacedError as e:  # nothing to store: the file is gone
            result["error"] = f"{type(e).__name__}: {e}"
            logger.error("Error storing %(format)s feed (%(itemcount)d items): %(error)s",
                         {**log_args, "error": e}, extra=extra)
            self._count_store("failed")
            self._finished_file().close()
        except Exception as e:
            result["error"] = f"{type(e).__name__}: {e}"
            result["local_path"] = _local_path_of(self._raw_file)
            msg = "Error storing %(format)s feed (%(itemcount)d items) in: %(uri)s"
            if result["local_path"]:
                log_args["local_path"] = result["local_path"]
                msg += " -- the feed data is kept in %(local_path)s"
            logger.error(msg, log_args, exc_info=True, extra=extra)
            self._count_store("failed")
        else:
            result["stored"] = True
            logger.info("Stored %(format)s feed (%(itemcount)d items) in: %(uri)s",
                        log_args, extra=extra)
            self._count_store("success")
        return result

    def __enter__(self) -> FeedWriter:
        if self._state == "new":
            self.open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._state == "open":
            self.close()

    # helpers

    def _make_storage(self, uri: str) -> IFeedStorage:
        kwargs = {}
        if _takes_feed_options(self._storage_cls, self.crawler):
            kwargs["feed_options"] = {**self.options, "overwrite": self.overwrite}
        storage: IFeedStorage = create_instance(self._storage_cls, self.settings, self.crawler,
                                                uri, **kwargs)
        return storage

    def _discard(self) -> None:
        if self._target is not None and self.file is not None:  # the plug-ins' last bytes
            try:                                                 # go into a file dropped
                self.file.close()
            except Exception:
                logger.debug("Error closing the post-processing of %(uri)s",
                             {"uri": self.name}, exc_info=True)
        file = self._raw_file
        if file is None:  # a batch after the first that got no item: nothing opened
            return
        discard = getattr(self.storage, "discard", None)
        if discard is not None:
            discard(file)
        elif file not in (sys.stdout, getattr(sys.stdout, "buffer", None)):
            file.close()

    def _resolve_uri(self) -> str:
        return resolve_uri(self.urifmt, self.spider, self.settings, self._uripar,
                           self.batch_id)
