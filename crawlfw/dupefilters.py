"""Duplicate request filters (Scrapy 1.2's ``scrapy.dupefilters``).

``RFPDupeFilter`` remembers request fingerprints (``crawlfw.utils.request.request_fingerprint``:
SHA1 over method, canonical URL and body). Built with a ``path``, it appends them to
``<path>/requests.seen``; in a crawl with a ``JOBDIR`` the durable frontier keeps them
instead (``crawlfw.core.frontier.sqlite_frontier.SqliteFrontier``), so a resumed crawl skips what it
already fetched.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

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

    Args:
        path: a JOBDIR where ``requests.seen`` (one hex fingerprint per line) is kept.
        debug: log every filtered request (``DUPEFILTER_DEBUG``), not just the first.
    """

    def __init__(self, path=None, debug=False):
        self.file = None
        self.fingerprints = set()
        self.logdupes = True
        self.debug = debug
        self.logger = logging.getLogger(__name__)
        if path:
            self.file = open(os.path.join(path, "requests.seen"), "a+", encoding="ascii")
            self.file.seek(0)
            self.fingerprints.update(x.rstrip() for x in self.file)

    @classmethod
    def from_settings(cls, settings):
        """Build from ``DUPEFILTER_DEBUG``. With a ``JOBDIR`` the fingerprints are kept by
        the crawl's frontier (``<JOBDIR>/frontier.sqlite``, committed with the queue), not
        in ``requests.seen``."""
        return cls(None, settings.getbool("DUPEFILTER_DEBUG"))

    def request_seen(self, request: Request) -> bool:
        """True if a request with the same fingerprint was seen; else remember it."""
        fp = self.request_fingerprint(request)
        if fp in self.fingerprints:
            return True
        self.fingerprints.add(fp)
        if self.file:
            self.file.write(fp + "\n")
            self.file.flush()
        return False

    def request_fingerprint(self, request: Request) -> str:
        return request_fingerprint(request)

    def close(self, reason: str) -> None:
        if self.file:
            self.file.close()

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
