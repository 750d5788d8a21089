"""Duplicate request filters (Scrapy 1.2's ``scrapy.dupefilters``).

``RFPDupeFilter`` remembers request fingerprints (``crawlfw.utils.request.request_fingerprint``:
SHA1 over method, canonical URL and body) in a seen set on a memory budget
(``crawlfw.utils._seen``: 16 bytes a fingerprint, spilling to a private file past
``DUPEFILTER_MEMORY_LIMIT``; a Bloom filter with ``DUPEFILTER_BLOOM_ERROR_RATE``). Built
with a ``path``, it appends them to ``<path>/requests.seen``; in a crawl with a ``JOBDIR``
the durable frontier keeps them instead (``crawlfw.core.frontier.sqlite_frontier.SqliteFrontier``),
so a resumed crawl skips what it already fetched.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from crawlfw.utils._scratch import sweep_stale
from crawlfw.utils._seen import DEFAULT_MEMORY_LIMIT, Fingerprints, seen_set
from crawlfw.utils.request import request_fingerprint

if TYPE_CHECKING:
    from crawlfw.http import Request
    from crawlfw.spiders import Spider

__all__ = ["BaseDupeFilter", "RFPDupeFilter"]


class BaseDupeFilter:
    """A filter that lets every request through."""

    @classmethod
    def from_settings(cls, settings):
        return cls()

    @classmethod
    def from_crawler(cls, crawler):
        """Build for ``crawler`` (Scrapy 2's constructor): :meth:`from_settings` with its
        settings, so a subclass that overrides only ``from_settings`` (Scrapy 1.2's way)
        is still built by its own."""
        return cls.from_settings(crawler.settings)

    def request_seen(self, request: Request) -> bool:
        return False

    def open(self) -> None:
        pass

    def close(self, reason: str) -> None:
        pass

    def log(self, request: Request, spider: Spider | None) -> None:
        """Log that a request has been filtered."""


class RFPDupeFilter(BaseDupeFilter):
    """Request Fingerprint duplicates filter.

    ``fingerprints`` works as Scrapy's set of hex fingerprints does (``fp in
    df.fingerprints``, ``add``, ``update``, ``discard``, ``len``) but keeps 16 bytes of
    each (:class:`~crawlfw.utils._seen.Fingerprints`: iterating gives those 16 bytes as
    32 hex digits), in RAM up to ``memory_limit`` bytes and past it in a private file
    under ``TMPDIR`` (beside the frontier's), removed at :meth:`close` (ARCHITECTURE.md, "The seen set").

    Args:
        path: a JOBDIR where ``requests.seen`` (one hex fingerprint per line) is kept.
        debug: log every filtered request (``DUPEFILTER_DEBUG``), not just the first.
        fingerprinter: Scrapy 2's request fingerprinter (an object whose
            ``fingerprint(request)`` returns bytes), or None for crawlfw's
            ``request_fingerprint`` (what a crawl's dupefilter uses).
        memory_limit: bytes of RAM for the fingerprints (``DUPEFILTER_MEMORY_LIMIT``).
        bloom_error_rate: above 0, keep the fingerprints in a Bloom filter that takes at
            most this share of new requests for duplicates (``DUPEFILTER_BLOOM_ERROR_RATE``);
            0: exact.
        tempdir: where the spill file's scratch directory goes; None:
            ``$TMPDIR/crawlfw-<uid>``, else ``/var/tmp/crawlfw-<uid>``
            (:func:`~crawlfw.utils._scratch.scratch_root`), as the frontier's.

    Raises:
        ValueError: ``memory_limit`` or ``bloom_error_rate`` out of range (the message
            names the setting).
    """

    def __init__(self, path=None, debug=False, *, fingerprinter=None,
                 memory_limit: int = DEFAULT_MEMORY_LIMIT, bloom_error_rate: float = 0.0,
                 tempdir: str | None = None):
        self.file = None
        #: Scrapy 2's request fingerprinter (``fingerprint(request) -> bytes``), or None:
        #: crawlfw's :func:`~crawlfw.utils.request.request_fingerprint`.
        self.fingerprinter = fingerprinter
        self.tempdir = tempdir
        self.fingerprints = Fingerprints(seen_set(memory_limit, bloom_error_rate,
                                                  tempdir=tempdir))
        self.logdupes = True
        self.debug = debug
        self.logger = logging.getLogger(__name__)
        if path:
            self.file = open(os.path.join(path, "requests.seen"), "a+", encoding="ascii")
            self.file.seek(0)
            self.fingerprints.update(x.rstrip() for x in self.file)

    @classmethod
    def from_settings(cls, settings):
        """Build from ``DUPEFILTER_DEBUG``, ``DUPEFILTER_MEMORY_LIMIT`` and
        ``DUPEFILTER_BLOOM_ERROR_RATE``. With a ``JOBDIR`` the fingerprints are kept by
        the crawl's frontier (``<JOBDIR>/frontier.sqlite``, committed with the queue), not
        in ``requests.seen``.

        Raises:
            ValueError: a setting out of range, named in the message.
        """
        return cls(None, settings.getbool("DUPEFILTER_DEBUG"),
                   memory_limit=settings.getint("DUPEFILTER_MEMORY_LIMIT", DEFAULT_MEMORY_LIMIT),
                   bloom_error_rate=settings.getfloat("DUPEFILTER_BLOOM_ERROR_RATE", 0.0))

    def open(self) -> None:
        """Remove the spill directories that crashed crawls left (``kill -9``)."""
        sweep_stale(self.tempdir)

    def request_seen(self, request: Request) -> bool:
        """True if a request with the same fingerprint was seen; else remember it.

        Raises:
            crawlfw.utils._seen.SpillError: the fingerprints are over their budget and
                cannot be written to disk (the crawl ends: ``frontier_failed``).
        """
        fp = self.request_fingerprint(request)
        fingerprints = self.fingerprints
        if fingerprints.__class__ is Fingerprints:
            if not fingerprints.add_new(fp):
                return True
        else:  # a set of the user's
            if fp in fingerprints:
                return True
            fingerprints.add(fp)
        if self.file:
            self.file.write(fp + "\n")
            self.file.flush()
        return False

    def request_fingerprint(self, request: Request) -> str:
        """The hex fingerprint of ``request``: the ``fingerprinter``'s given at
        construction, else :func:`~crawlfw.utils.request.request_fingerprint`."""
        if self.fingerprinter is not None:
            return self.fingerprinter.fingerprint(request).hex()
        return request_fingerprint(request)

    def close(self, reason: str) -> None:
        """Close ``requests.seen``; empty the fingerprints and remove their spill file."""
        if self.file:
            self.file.close()
        if isinstance(self.fingerprints, Fingerprints):
            self.fingerprints.seen.close()

    def log(self, request: Request, spider: Spider | None) -> None:
        if self.debug:
            msg = "Filtered duplicate request: %(request)s"
            self.logger.debug(msg, {"request": request}, extra={"spider": spider})
        elif self.logdupes:
            msg = (
                "Filtered duplicate request: %(request)s"
                " - no more duplicates will be shown"
                " (see DUPEFILTER_DEBUG to show all duplicates)"
            )
            self.logger.debug(msg, {"request": request}, extra={"spider": spider})
            self.logdupes = False
        spider.crawler.stats.inc_value("dupefilter/filtered", spider=spider)
