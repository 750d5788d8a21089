"""AutoThrottle: adjust each download slot's delay from observed latencies.

Scrapy 1.2's algorithm (docs "AutoThrottle extension"): the target delay of a slot is
``latency / AUTOTHROTTLE_TARGET_CONCURRENCY``; the new delay is the mean of the current
delay and the target, never below the target, clamped to ``[DOWNLOAD_DELAY,
AUTOTHROTTLE_MAX_DELAY]``; non-200 responses may only increase it. Slots start at
``AUTOTHROTTLE_START_DELAY`` seconds from their first request (``spider.download_delay``
is set to it when the spider opens, as Scrapy 2 does).

Runs on the Engine's thread (``response_downloaded``). It keeps each slot's delay itself
(the last :data:`~crawlfw.core.transport.slots.DELAY_MEMORY` slots it adjusted) and tells the
downloader serving the slot its new delay (``crawler.engine.downloader.set_slot_delay``,
a ``set_slot_delay`` message, only when it changes): the slot belongs to that actor's
thread, which applies it before its next start there.
"""

import logging
from collections import OrderedDict

from crawlfw import signals
from crawlfw.core.transport.slot import slot_key
from crawlfw.core.transport.slots import DELAY_MEMORY
from crawlfw.exceptions import NotConfigured

logger = logging.getLogger(__name__)

__all__ = ["AutoThrottle"]


class AutoThrottle:
    """Raises:
    NotConfigured: ``AUTOTHROTTLE_ENABLED`` is False.
    ValueError: ``AUTOTHROTTLE_TARGET_CONCURRENCY`` is not positive (naming it).
    """

    def __init__(self, crawler):
        self.crawler = crawler
        if not crawler.settings.getbool("AUTOTHROTTLE_ENABLED"):
            raise NotConfigured
        self.debug = crawler.settings.getbool("AUTOTHROTTLE_DEBUG")
        self.target_concurrency = crawler.settings.getfloat("AUTOTHROTTLE_TARGET_CONCURRENCY")
        if self.target_concurrency <= 0.0:
            raise ValueError(
                "AUTOTHROTTLE_TARGET_CONCURRENCY must be positive, "
                f"got {self.target_concurrency!r}"
            )
        self._delays = OrderedDict()  # slot key -> its delay (s), least recently used first
        crawler.signals.connect(self._spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self._response_downloaded, signal=signals.response_downloaded)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def _spider_opened(self, spider):
        self.mindelay = self._min_delay(spider)
        self.maxdelay = self._max_delay(spider)
        self.startdelay = max(self.mindelay, self._start_delay(spider))
        # Slots are made with the spider's download_delay: the first requests of a slot
        # are then already AUTOTHROTTLE_START_DELAY apart, one at a time (a slot with a
        # delay starts one request per delay), as in Scrapy 2, instead of a first burst
        # of CONCURRENT_REQUESTS_PER_DOMAIN before the first response adjusts the delay.
        spider.download_delay = self.startdelay

    def _min_delay(self, spider):
        s = self.crawler.settings
        return getattr(spider, "download_delay", s.getfloat("DOWNLOAD_DELAY"))

    def _max_delay(self, spider):
        return self.crawler.settings.getfloat("AUTOTHROTTLE_MAX_DELAY")

    def _start_delay(self, spider):
        return self.crawler.settings.getfloat("AUTOTHROTTLE_START_DELAY")

    def _response_downloaded(self, response, request, spider):
        latency = request.meta.get("download_latency")
        if latency is None:
            return
        engine = self.crawler.engine
        key = engine.downloader.slot_key(request) if engine is not None else slot_key(request)
        delays = self._delays
        olddelay = delays.pop(key, None)
        first = olddelay is None
        if first:
            olddelay = self.startdelay
        newdelay = self._adjust_delay(olddelay, latency, response)
        delays[key] = newdelay
        if len(delays) > DELAY_MEMORY:
            delays.popitem(last=False)
        if first or newdelay != olddelay:
            if engine is not None:
                engine.downloader.set_slot_delay(key, newdelay)
        if self.debug:
            diff = newdelay - olddelay
            size = len(response.body)
            conc = self.crawler.engine.downloader.in_flight_of(key)
            logger.info(
                "slot: %(slot)s | conc:%(concurrency)2d | delay:%(delay)5d ms (%(delaydiff)+d) | "
                "latency:%(latency)5d ms | size:%(size)6d bytes",
                {"slot": key, "concurrency": conc, "delay": newdelay * 1000,
                 "delaydiff": diff * 1000, "latency": latency * 1000, "size": size},
                extra={"spider": spider},
            )

    def _adjust_delay(self, delay_s, latency, response) -> float:
        """Scrapy's rule: the new delay of a slot whose delay is ``delay_s`` after a
        response of ``latency`` seconds."""
        target_delay = latency / self.target_concurrency
        new_delay = (delay_s + target_delay) / 2.0
        new_delay = max(target_delay, new_delay)
        new_delay = min(max(self.mindelay, new_delay), self.maxdelay)
        if response.status != 200 and new_delay <= delay_s:
            return delay_s
        return new_delay
