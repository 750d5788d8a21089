"""AutoThrottle: adjust each download slot's delay from observed latencies.

Scrapy 1.2's algorithm (docs "AutoThrottle extension"): the target delay of a slot is
``latency / AUTOTHROTTLE_TARGET_CONCURRENCY``; the new delay is the mean of the current
delay and the target, never below the target, clamped to ``[DOWNLOAD_DELAY,
AUTOTHROTTLE_MAX_DELAY]``; non-200 responses may only increase it. Slots start at
``AUTOTHROTTLE_START_DELAY`` seconds from their first request (``spider.download_delay``
is set to it when the spider opens, as Scrapy 2 does).

Runs on the Engine's thread (``response_downloaded``); it writes ``slot.delay_s``, which
the slot's Downloader actor reads before starting each request (a float assignment).
"""

import logging

from crawlfw import signals
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
        self._started = set()
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
        key = request.meta.get("download_slot")
        if key is None:
            from crawlfw.core.slot import slot_key

            key = slot_key(request)
        slot = self.crawler.download_slots.get(key)
        latency = request.meta.get("download_latency")
        if latency is None or slot is None:
            return
        if key not in self._started:
            self._started.add(key)
            slot.delay_s = self.startdelay
        olddelay = slot.delay_s
        self._adjust_delay(slot, latency, response)
        if self.debug:
            diff = slot.delay_s - olddelay
            size = len(response.body)
            conc = slot.in_flight
            logger.info(
                "slot: %(slot)s | conc:%(concurrency)2d | delay:%(delay)5d ms (%(delaydiff)+d) | "
                "latency:%(latency)5d ms | size:%(size)6d bytes",
                {"slot": key, "concurrency": conc, "delay": slot.delay_s * 1000,
                 "delaydiff": diff * 1000, "latency": latency * 1000, "size": size},
                extra={"spider": spider},
            )

    def _adjust_delay(self, slot, latency, response):
        target_delay = latency / self.target_concurrency
        new_delay = (slot.delay_s + target_delay) / 2.0
        new_delay = max(target_delay, new_delay)
        new_delay = min(max(self.mindelay, new_delay), self.maxdelay)
        if response.status != 200 and new_delay <= slot.delay_s:
            return
        slot.delay_s = new_delay
