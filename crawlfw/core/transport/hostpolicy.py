"""The politeness rule of one host: how many transfers at once, how long between starts.

One definition, used by the downloader's slots (:meth:`crawlfw.core.transport.slot.DownloadSlot.from_settings`)
and by the frontier's per-host queues (:class:`crawlfw.core.frontier.hostqueues.HostQueues`), so the
two never disagree. The rule is Scrapy 1.2's ``Downloader._get_slot``:

- concurrency: ``CONCURRENT_REQUESTS_PER_IP`` when non-zero, else
  ``CONCURRENT_REQUESTS_PER_DOMAIN``; ``spider.max_concurrent_requests`` overrides both;
- delay: ``DOWNLOAD_DELAY``, overridden by ``spider.download_delay`` (or the deprecated
  ``spider.DOWNLOAD_DELAY``, with a warning); AutoThrottle's current delay of a key
  (:meth:`HostPolicy.set_host_delay`) replaces it for that key;
- ``RANDOMIZE_DOWNLOAD_DELAY``: each gap is the delay times a factor drawn uniformly from
  0.5 to 1.5.

Plain and clock-free: nothing here reads a clock or starts a thread.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from crawlfw.exceptions import CrawlfwDeprecationWarning

if TYPE_CHECKING:
    import random

    from crawlfw.core._types import CrawlerLike
    from crawlfw.settings import BaseSettings
    from crawlfw.spiders import Spider

__all__ = ["HostPolicy", "DELAY_MEMORY", "politeness_settings"]

#: Keys whose AutoThrottle delay is remembered (least recently set go first), as
#: AutoThrottle and the downloader's :class:`~crawlfw.core.transport.slots.SlotTable` remember them.
DELAY_MEMORY = 10_000


def politeness_settings(settings: BaseSettings, spider: Spider | None = None) -> tuple[int, float, bool]:
    """The per-host limits the settings and the spider give (Scrapy 1.2's
    ``Downloader._get_slot`` rule, see the module doc).

    Args:
        settings: a :class:`crawlfw.settings.Settings`.
        spider: the running spider, or None.

    Returns:
        ``(concurrency, delay_s, randomize)``: transfers at once per host (an int, at
        least 1), seconds between two starts (a float >= 0), and whether each gap is
        randomized to 0.5-1.5 times the delay.

    Warns:
        CrawlfwDeprecationWarning: the spider has the old ``DOWNLOAD_DELAY`` attribute.
    """
    concurrency = settings.getint("CONCURRENT_REQUESTS_PER_IP") or settings.getint(
        "CONCURRENT_REQUESTS_PER_DOMAIN")
    delay = settings.getfloat("DOWNLOAD_DELAY")
    if spider is not None:
        if hasattr(spider, "DOWNLOAD_DELAY"):
            name = type(spider).__name__
            warnings.warn(
                f"{name}.DOWNLOAD_DELAY attribute is deprecated, use {name}.download_delay instead",
                CrawlfwDeprecationWarning,
                stacklevel=3,
            )
            delay = spider.DOWNLOAD_DELAY
        delay = getattr(spider, "download_delay", delay)
        concurrency = getattr(spider, "max_concurrent_requests", concurrency)
    return int(concurrency), float(delay), settings.getbool("RANDOMIZE_DOWNLOAD_DELAY")


class HostPolicy:
    """Per-host concurrency and start delay, for the frontier's ready-set.

    Args:
        concurrency: transfers at once per host (>= 1).
        delay_s: seconds between two starts of one host (>= 0); 0: no delay.
        randomize: draw each gap from 0.5 to 1.5 times the delay
            (``RANDOMIZE_DOWNLOAD_DELAY``).
        resolve: instead of the three values, a callable returning them, called once
            on first use (so that a spider's ``download_delay`` set by a
            ``spider_opened`` handler, as AutoThrottle does, is seen).

    Raises:
        ValueError: ``concurrency`` < 1 or ``delay_s`` < 0 (when given or resolved).
    """

    def __init__(self, concurrency: int = 8, delay_s: float = 0.0, randomize: bool = False,
                 *, resolve: Callable[[], tuple[int, float, bool]] | None = None) -> None:
        self._resolve = resolve
        self._delays: OrderedDict[str, float] = OrderedDict()
        if resolve is None:
            self._set(concurrency, delay_s, randomize)

    @classmethod
    def from_crawler(cls, crawler: CrawlerLike) -> HostPolicy:
        """The policy of ``crawler``'s settings and spider, resolved at first use (after
        ``spider_opened``), by :func:`politeness_settings`."""
        return cls(resolve=lambda: politeness_settings(crawler.settings, crawler.spider))

    @classmethod
    def from_settings(cls, settings: BaseSettings, spider: Spider | None = None) -> HostPolicy:
        """The policy of ``settings`` and ``spider``, resolved now."""
        return cls(*politeness_settings(settings, spider))

    def _set(self, concurrency: int, delay_s: float, randomize: bool) -> None:
        if not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"HostPolicy concurrency (CONCURRENT_REQUESTS_PER_DOMAIN) must be "
                             f"an int >= 1, got {concurrency!r}")
        if not delay_s >= 0:
            raise ValueError(f"HostPolicy delay_s (DOWNLOAD_DELAY) must be >= 0 seconds, "
                             f"got {delay_s!r}")
        self._concurrency = concurrency
        self._delay_s = float(delay_s)
        self._randomize = bool(randomize)
        self._resolve = None

    def _resolved(self) -> None:
        if self._resolve is not None:
            self._set(*self._resolve())

    @property
    def default_concurrency(self) -> int:
        """Transfers at once per host (the same for every host)."""
        if self._resolve is not None:
            self._resolved()
        return self._concurrency

    @property
    def default_delay_s(self) -> float:
        """The delay of a host AutoThrottle did not adjust, in seconds."""
        if self._resolve is not None:
            self._resolved()
        return self._delay_s

    @property
    def randomize(self) -> bool:
        """Whether gaps are randomized (``RANDOMIZE_DOWNLOAD_DELAY``)."""
        if self._resolve is not None:
            self._resolved()
        return self._randomize

    def concurrency(self, key: str) -> int:
        """Most transfers of host ``key`` at once (>= 1)."""
        if self._resolve is not None:
            self._resolved()
        return self._concurrency

    def base_delay_s(self, key: str) -> float:
        """The delay of host ``key`` before randomization, in seconds: AutoThrottle's
        when it set one, else ``DOWNLOAD_DELAY``'s rule."""
        if self._resolve is not None:
            self._resolved()
        delays = self._delays
        if delays:
            delay = delays.get(key)
            if delay is not None:
                return delay
        return self._delay_s

    def delay_s(self, key: str, rng: random.Random) -> float:
        """Seconds to wait after a start of host ``key`` before the next one: the base
        delay, times a factor drawn from ``rng.uniform(0.5, 1.5)`` when randomized
        (Scrapy's ``RANDOMIZE_DOWNLOAD_DELAY``); 0.0 without a delay.

        Args:
            key: the host key.
            rng: a :class:`random.Random` (tests pass a seeded one).
        """
        delay = self.base_delay_s(key)
        if delay and self._randomize:
            return delay * rng.uniform(0.5, 1.5)
        return delay

    def set_host_delay(self, key: str, delay_s: float) -> None:
        """Set host ``key``'s delay (AutoThrottle's adjustment), remembered for the last
        :data:`DELAY_MEMORY` keys set.

        Raises:
            ValueError: ``delay_s`` is negative or NaN.
        """
        if not delay_s >= 0:
            raise ValueError(f"set_host_delay({key!r}): delay_s must be >= 0 seconds, "
                             f"got {delay_s!r}")
        delays = self._delays
        delays[key] = float(delay_s)
        delays.move_to_end(key)
        if len(delays) > DELAY_MEMORY:
            delays.popitem(last=False)

    def __repr__(self) -> str:
        if self._resolve is not None:
            return "<HostPolicy (not resolved yet)>"
        return (f"<HostPolicy concurrency={self._concurrency} delay_s={self._delay_s} "
                f"randomize={self._randomize} adjusted={len(self._delays)}>")
