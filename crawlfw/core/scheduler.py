"""The scheduler: a priority queue of requests behind a duplicate filter.

Plain, thread-free logic; :class:`crawlfw.actors.scheduler.SchedulerActor` owns one and
translates messages into these calls. ``SCHEDULER = 'crawlfw.core.scheduler.Scheduler'``
names this class, as Scrapy 1.2 names ``scrapy.core.scheduler.Scheduler``.

With a ``JOBDIR`` (Scrapy 1.2's "jobs: pausing and resuming crawls"), requests are kept
in disk queues under ``<JOBDIR>/requests.queue/`` (one queue per priority,
``SCHEDULER_DISK_QUEUE``, the non-empty priorities listed in ``active.json`` at close)
and the dupefilter keeps ``<JOBDIR>/requests.seen``; a crawl started again with the same
JOBDIR resumes with what was queued. Requests that cannot be serialized (a callback that
is not a spider method) stay in memory; at close they are written to disk if possible.
"""

import json
import logging
import os

from crawlfw.core.pqueue import PriorityQueue
from crawlfw.utils.job import job_dir
from crawlfw.utils.misc import load_object
from crawlfw.utils.reqser import request_from_dict, request_to_dict

logger = logging.getLogger(__name__)

__all__ = ["Scheduler"]


class Scheduler:
    """Queue requests by priority (higher ``Request.priority`` first), dropping duplicates.

    Args:
        dupefilter: an object with ``request_seen(request) -> bool``, ``open()``,
            ``close(reason)`` and ``log(request, spider)``.
        jobdir: the ``JOBDIR`` (None: memory queues only).
        dqclass: the per-priority disk queue class (``SCHEDULER_DISK_QUEUE``).
        mqclass: the per-priority memory queue class (``SCHEDULER_MEMORY_QUEUE``).
        logunser: log requests that cannot be serialized (``LOG_UNSERIALIZABLE_REQUESTS``).
        stats: the crawl's stats collector (``scheduler/enqueued/memory`` etc.).
    """

    def __init__(self, dupefilter, jobdir=None, dqclass=None, mqclass=None, logunser=False,
                 stats=None, **kw):
        self.df = dupefilter
        self.dqdir = _dqdir(jobdir)
        self.dqclass = dqclass or load_object("crawlfw.squeues.PickleLifoDiskQueue")
        self.mqclass = mqclass or load_object("crawlfw.squeues.LifoMemoryQueue")
        self.logunser = logunser
        self.stats = stats
        self.spider = None
        self.mqs = None
        self.dqs = None

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        dupefilter_cls = load_object(settings["DUPEFILTER_CLASS"])
        if hasattr(dupefilter_cls, "from_crawler"):
            dupefilter = dupefilter_cls.from_crawler(crawler)
        else:
            dupefilter = dupefilter_cls.from_settings(settings)
        return cls(
            dupefilter,
            jobdir=job_dir(settings),
            dqclass=load_object(settings["SCHEDULER_DISK_QUEUE"]),
            mqclass=load_object(settings["SCHEDULER_MEMORY_QUEUE"]),
            logunser=settings.getbool("LOG_UNSERIALIZABLE_REQUESTS"),
            stats=crawler.stats,
        )

    def has_pending_requests(self) -> bool:
        return len(self) > 0

    def open(self, spider) -> None:
        self.spider = spider
        self.mqs = PriorityQueue(self._newmq)
        self.dqs = self._dq() if self.dqdir else None
        return self.df.open()

    def close(self, reason: str) -> list:
        """Close the queues and the dupefilter.

        With a JOBDIR, requests held in memory are moved to disk first and the disk
        queues are closed (their priorities saved in ``active.json``).

        Returns:
            the requests still queued that are NOT kept on disk (all of them without a
            JOBDIR), so the caller can report them.
        """
        left = []
        if self.mqs is not None:
            while True:
                request = self.mqs.pop()
                if request is None:
                    break
                if not self._dqpush(request):
                    left.append(request)
            self.mqs.close()
        if self.dqs is not None:
            prios = self.dqs.close()
            with open(os.path.join(self.dqdir, "active.json"), "w") as f:
                json.dump(prios, f)
        self.df.close(reason)
        return left

    def enqueue_request(self, request) -> bool:
        """Queue ``request``; False when the dupefilter dropped it (``dont_filter`` skips it)."""
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            return False
        if self._dqpush(request):
            self._inc("scheduler/enqueued/disk")
        else:
            self.mqs.push(request, -request.priority)
            self._inc("scheduler/enqueued/memory")
        self._inc("scheduler/enqueued")
        return True

    def next_request(self):
        """Pop the next request to download (memory first, then disk), or None."""
        request = self.mqs.pop()
        if request is not None:
            self._inc("scheduler/dequeued/memory")
        else:
            request = self._dqpop()
            if request is None:
                return None
            self._inc("scheduler/dequeued/disk")
        self._inc("scheduler/dequeued")
        return request

    def __len__(self) -> int:
        n = len(self.mqs) if self.mqs is not None else 0
        return n + (len(self.dqs) if self.dqs is not None else 0)

    def _inc(self, key):
        if self.stats is not None:
            self.stats.inc_value(key, spider=self.spider)

    def _dqpush(self, request) -> bool:
        if self.dqs is None:
            return False
        try:
            reqd = request_to_dict(request, self.spider)
            self.dqs.push(reqd, -request.priority)
        except ValueError as e:  # not serializable (e.g. a callback that is no spider method)
            if self.logunser:
                logger.warning(
                    "Unable to serialize request: %(request)s - reason: %(reason)s"
                    " - no more unserializable requests will be logged"
                    " (stats being collected)",
                    {"request": request, "reason": e},
                    exc_info=True,
                    extra={"spider": self.spider},
                )
                self.logunser = False
            self._inc("scheduler/unserializable")
            return False
        return True

    def _dqpop(self):
        if self.dqs is not None:
            d = self.dqs.pop()
            if d is not None:
                return request_from_dict(d, self.spider)
        return None

    def _newmq(self, priority):
        return self.mqclass()

    def _newdq(self, priority):
        return self.dqclass(os.path.join(self.dqdir, f"p{priority}"))

    def _dq(self):
        activef = os.path.join(self.dqdir, "active.json")
        prios = ()
        if os.path.exists(activef):
            with open(activef) as f:
                prios = json.load(f)
        q = PriorityQueue(self._newdq, startprios=prios)
        if len(q):
            logger.info("Resuming crawl (%(queuesize)d requests scheduled)",
                        {"queuesize": len(q)}, extra={"spider": self.spider})
        return q


def _dqdir(jobdir):
    if jobdir:
        dqdir = os.path.join(jobdir, "requests.queue")
        os.makedirs(dqdir, exist_ok=True)
        return dqdir
    return None
