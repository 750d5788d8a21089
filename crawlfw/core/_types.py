"""What the core and the actors use of the objects above them, as types they can name
without importing those layers (``tests/test_layers.py``: ``core/`` and ``actors/`` never
import ``crawlfw.crawler``).

:class:`CrawlerLike` is the part of :class:`crawlfw.crawler.Crawler` they touch;
``StartCrawl.crawler`` is annotated with it (its JSON Schema still names the real class,
``pyclass: crawlfw.crawler.Crawler``, which message validation checks at run time).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from crawlfw.logformatter import LogFormatter
    from crawlfw.settings import Settings
    from crawlfw.signalmanager import SignalManager
    from crawlfw.spiders import Spider
    from crawlfw.statscollectors import StatsCollector

__all__ = ["CrawlerLike"]


class CrawlerLike(Protocol):
    """The attributes and method of a :class:`crawlfw.crawler.Crawler` that the core and
    the actors use.

    Structural (PEP 544): a ``Crawler`` is one without naming this class. Only type
    checkers read it; nothing is checked at run time.
    """

    settings: Settings
    """The crawl's frozen settings."""
    stats: StatsCollector
    """The crawl's stats collector (``STATS_CLASS``)."""
    signals: SignalManager
    """The crawl's signal manager."""
    logformatter: LogFormatter
    """The crawl's ``LOG_FORMATTER`` instance."""
    spider: Spider
    """The crawl's spider (set before ``start_crawl`` is sent)."""
    engine: Any
    """The ``crawlfw.actors._facade.EngineFacade`` once the crawl runs, else None."""
    _crawl_id: str | None
    """The id the Supervisor gave the crawl (None before ``start_crawl``)."""

    def _crawl_finished(self, reason: str) -> None:
        """Called by the Supervisor once the spider is closed with ``reason``."""
