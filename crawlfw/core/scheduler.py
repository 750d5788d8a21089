"""The scheduler: a priority queue of requests behind a duplicate filter.

Plain, thread-free logic; :class:`crawlfw.actors.scheduler.SchedulerActor` owns one and
translates messages into these calls. ``SCHEDULER = 'crawlfw.core.scheduler.Scheduler'``
names this class, as Scrapy 1.2 names ``scrapy.core.scheduler.Scheduler``.
"""

import logging

from crawlfw.core.pqueue import PriorityQueue
from crawlfw.utils.misc import load_object

logger = logging.getLogger(__name__)

__all__ = ["Scheduler"]


class Scheduler:
    """Queue requests by priority (higher ``Request.priority`` first), dropping duplicates.

    Args:
        dupefilter: an object with ``request_seen(request) -> bool``, ``open()``,
            ``close(reason)`` and ``log(request, spider)``.
        mqclass: the per-priority memory queue class (``SCHEDULER_MEMORY_QUEUE``).
        stats: the crawl's stats collector (``scheduler/enqueued/memory`` etc.).
        jobdir: reserved for the persistent queue (``JOBDIR``).
    """

    def __init__(self, dupefilter, mqclass=None, stats=None, jobdir=None, logunser=False, **kw):
        self.df = dupefilter
        self.mqclass = mqclass or load_object("crawlfw.squeues.LifoMemoryQueue")
        self.stats = stats
        self.jobdir = jobdir
        self.logunser = logunser
        self.spider = None
        self.mqs = None

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        dupefilter_cls = load_object(settings["DUPEFILTER_CLASS"])
        if hasattr(dupefilter_cls, "from_crawler"):
            dupefilter = dupefilter_cls.from_crawler(crawler)
        else:
            dupefilter = dupefilter_cls.from_settings(settings)
        mqclass = load_object(settings["SCHEDULER_MEMORY_QUEUE"])
        return cls(
            dupefilter,
            mqclass=mqclass,
            stats=crawler.stats,
            logunser=settings.getbool("LOG_UNSERIALIZABLE_REQUESTS"),
        )

    def open(self, spider) -> None:
        self.spider = spider
        self.mqs = PriorityQueue(self._newmq)
        return self.df.open()

    def close(self, reason: str) -> list:
        """Close the queues and the dupefilter; return the requests still queued."""
        left = []
        if self.mqs is not None:
            while True:
                request = self.mqs.pop()
                if request is None:
                    break
                left.append(request)
            self.mqs.close()
        self.df.close(reason)
        return left

    def enqueue_request(self, request) -> bool:
        """Queue ``request``; False when the dupefilter dropped it (``dont_filter`` skips it)."""
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            return False
        self.mqs.push(request, -request.priority)
        if self.stats is not None:
            self.stats.inc_value("scheduler/enqueued/memory", spider=self.spider)
            self.stats.inc_value("scheduler/enqueued", spider=self.spider)
        return True

    def next_request(self):
        """Pop the next request to download, or None when the queue is empty."""
        request = self.mqs.pop()
        if request is not None and self.stats is not None:
            self.stats.inc_value("scheduler/dequeued/memory", spider=self.spider)
            self.stats.inc_value("scheduler/dequeued", spider=self.spider)
        return request

    def has_pending_requests(self) -> bool:
        return len(self) > 0

    def __len__(self) -> int:
        return len(self.mqs) if self.mqs is not None else 0

    def _newmq(self, priority):
        return self.mqclass()
