"""The scheduler: the crawl's frontier behind Scrapy 1.2's scheduler interface.

Plain, thread-free logic; :class:`crawlfw.actors.scheduler.SchedulerActor` owns one and
translates messages into calls on its :attr:`Scheduler.frontier`.
``SCHEDULER = 'crawlfw.core.scheduler.Scheduler'`` names this class, as Scrapy 1.2 names
``scrapy.core.scheduler.Scheduler``; a Scrapy-style scheduler of the user's (only
``enqueue_request``/``next_request``/``__len__``) works too, without a durable frontier.

Without a ``JOBDIR`` the frontier is a :class:`~crawlfw.core.frontier.frontier.MemoryFrontier`.
With one (Scrapy 1.2's "jobs: pausing and resuming crawls") it is a
:class:`~crawlfw.core.frontier.sqlite_frontier.SqliteFrontier` in ``<JOBDIR>/frontier.sqlite``, which
also survives a crash (``kill -9``): see ARCHITECTURE.md, "Lose nothing". With a
``FRONTIER_URL`` it is a :class:`~crawlfw.core.frontier.redis_frontier.RedisFrontier` shared by
every worker of the crawl (ARCHITECTURE.md, "One crawl, many workers").
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from crawlfw.core.frontier.frontier import DEFAULT_MEMORY_LIMIT, MemoryFrontier
from crawlfw.core.frontier.revisit import RevisitConfig, middleware_defaults
from crawlfw.core.frontier.revisit_schedule import (
    SpillingRevisitSchedule,
    SqliteRevisitSchedule,
    _ScheduleBase,
)
from crawlfw.core.frontier.sqlite_frontier import SqliteFrontier
from crawlfw.core.transport.hostpolicy import HostPolicy
from crawlfw.utils.job import job_dir
from crawlfw.utils.misc import load_object

if TYPE_CHECKING:
    from crawlfw.core._types import CrawlerLike
    from crawlfw.core.frontier.api import DupeFilter, Frontier
    from crawlfw.core.frontier.redis_frontier import RedisFrontier
    from crawlfw.http import Request
    from crawlfw.settings import BaseSettings
    from crawlfw.spiders import Spider
    from crawlfw.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

__all__ = ["Scheduler", "PRIORITY_QUEUES", "check_priority_queue"]


class Scheduler:
    """Queue requests by priority (higher ``Request.priority`` first), dropping duplicates.

    Args:
        dupefilter: an object with ``request_seen(request) -> bool``, ``open()``,
            ``close(reason)`` and ``log(request, spider)``.
        jobdir: the ``JOBDIR`` (None: the in-memory frontier).
        dqclass: ``SCHEDULER_DISK_QUEUE``; only its order is used with a ``JOBDIR``
            (a ``Fifo`` class name: breadth-first; else depth-first).
        mqclass: the per-priority memory queue class (``SCHEDULER_MEMORY_QUEUE``).
        logunser: log requests of the crawl's own machinery kept in memory because they
            cannot be stored (``LOG_UNSERIALIZABLE_REQUESTS``).
        stats: the crawl's stats collector (``scheduler/enqueued/disk`` etc.).
        fsync: with a ``JOBDIR``, make each commit survive a power loss
            (``FRONTIER_FSYNC``).
        frontier: a frontier object to use instead of one built from ``jobdir``
            (the shared :class:`~crawlfw.core.frontier.redis_frontier.RedisFrontier`).
        wal_checkpoint_s: with a ``JOBDIR``, most seconds between two checkpoints of
            SQLite's write-ahead log into ``frontier.sqlite``
            (``FRONTIER_WAL_CHECKPOINT_INTERVAL``).
        memory_limit_bytes: without a ``JOBDIR``, bytes of queued requests kept in RAM
            before the rest spill to a temporary file (``FRONTIER_MEMORY_LIMIT``; 0: no
            limit).
        revisit: the ``REVISIT_*`` settings (:class:`~crawlfw.core.frontier.revisit.RevisitConfig`;
            None: off). Enabled, :meth:`open` builds :attr:`revisits`, the revisit
            schedule: in the ``JOBDIR``'s frontier with one, in the shared frontier's
            Redis with a ``FRONTIER_URL``, in memory without either.

    Raises:
        crawlfw.core.frontier.frontier.FrontierError: the ``JOBDIR``'s frontier cannot be opened.
    """

    def __init__(self, dupefilter: DupeFilter, jobdir: str | None = None, dqclass: Any = None,
                 mqclass: Any = None, logunser: bool = False,
                 stats: StatsCollector | None = None, fsync: bool = True,
                 frontier: Frontier | None = None, wal_checkpoint_s: float = 30.0,
                 policy: HostPolicy | None = None,
                 memory_limit_bytes: int = DEFAULT_MEMORY_LIMIT,
                 revisit: RevisitConfig | None = None, **kw: Any) -> None:
        self.df = dupefilter
        self.memory_limit_bytes = memory_limit_bytes
        self.revisit = revisit if revisit is not None and revisit.enabled else None
        #: The revisit schedule (``REVISIT_ENABLED``), built by :meth:`open`; else None.
        self.revisits: _ScheduleBase | None = None
        self.logunser = logunser
        self.stats = stats
        self.spider: Spider | None = None
        self.frontier: Frontier
        if frontier is not None:
            self.frontier = frontier
        elif jobdir:
            dqname = getattr(dqclass, "__name__", "") if dqclass else ""
            self.frontier = SqliteFrontier(jobdir, dupefilter, lifo="Fifo" not in dqname,
                                           fsync=fsync, stats=stats,
                                           wal_checkpoint_s=wal_checkpoint_s, policy=policy,
                                           logunser=logunser)
        else:
            mqclass = mqclass or load_object("crawlfw.squeues.LifoMemoryQueue")
            self.frontier = MemoryFrontier(dupefilter, mqclass, stats=stats, policy=policy,
                                           memory_limit_bytes=memory_limit_bytes)

    @classmethod
    def from_crawler(cls, crawler: CrawlerLike) -> Scheduler:
        """The scheduler of ``crawler``'s settings: ``DUPEFILTER_CLASS``, ``JOBDIR``
        or ``FRONTIER_URL``, ``SCHEDULER_DISK_QUEUE``/``_MEMORY_QUEUE``,
        ``LOG_UNSERIALIZABLE_REQUESTS``, ``FRONTIER_FSYNC``,
        ``FRONTIER_WAL_CHECKPOINT_INTERVAL``, ``FRONTIER_MEMORY_LIMIT``, the
        politeness settings.

        Raises:
            crawlfw.exceptions.CrawlStartError: ``SCHEDULER_PRIORITY_QUEUE`` cannot be
                honoured, ``FRONTIER_MEMORY_LIMIT`` is negative, or the shared frontier
                cannot be opened.
        """
        settings = crawler.settings
        check_priority_queue(settings)
        from crawlfw.exceptions import CrawlStartError

        try:
            revisit = RevisitConfig.from_settings(settings)
        except ValueError as e:
            raise CrawlStartError(str(e)) from None
        memory_limit = settings.getint("FRONTIER_MEMORY_LIMIT", DEFAULT_MEMORY_LIMIT)
        if memory_limit < 0:
            raise CrawlStartError(
                f"FRONTIER_MEMORY_LIMIT must be a number of bytes, or 0 for no limit, got "
                f"{settings.get('FRONTIER_MEMORY_LIMIT')!r}")
        dupefilter_cls = load_object(settings["DUPEFILTER_CLASS"])
        if hasattr(dupefilter_cls, "from_crawler"):
            dupefilter = dupefilter_cls.from_crawler(crawler)
        else:
            dupefilter = dupefilter_cls.from_settings(settings)
        frontier: Frontier | None = None
        if settings.get("FRONTIER_URL"):
            frontier = _redis_frontier(crawler, dupefilter)
        return cls(
            dupefilter,
            policy=HostPolicy.from_crawler(crawler),
            frontier=frontier,
            jobdir=None if frontier is not None else job_dir(settings),
            dqclass=load_object(settings["SCHEDULER_DISK_QUEUE"]),
            mqclass=load_object(settings["SCHEDULER_MEMORY_QUEUE"]),
            logunser=settings.getbool("LOG_UNSERIALIZABLE_REQUESTS"),
            stats=crawler.stats,
            fsync=settings.getbool("FRONTIER_FSYNC", True),
            wal_checkpoint_s=settings.getfloat("FRONTIER_WAL_CHECKPOINT_INTERVAL", 30.0),
            memory_limit_bytes=memory_limit,
            revisit=revisit,
        )

    def has_pending_requests(self) -> bool:
        """True when requests are queued (Scrapy 1.2's interface)."""
        return len(self) > 0

    def open(self, spider: Spider) -> None:
        """Open the frontier and the dupefilter for ``spider``."""
        self.spider = spider
        self.frontier.open(spider)
        if self.revisit is not None:
            conn = getattr(self.frontier, "conn", None)
            if getattr(self.frontier, "shared", False):
                from crawlfw.core.frontier.redis_revisit import RedisRevisitSchedule

                self.revisits = RedisRevisitSchedule(self.frontier,  # type: ignore[arg-type]
                                                     self.revisit, spider)
            elif isinstance(self.frontier, SqliteFrontier) and conn is not None:
                self.revisits = SqliteRevisitSchedule(conn, self.revisit, spider)
            else:
                # on the queue's budget: the two share FRONTIER_MEMORY_LIMIT
                self.revisits = SpillingRevisitSchedule(
                    self.revisit, spider, self.memory_limit_bytes,
                    queue=getattr(self.frontier, "store", None))
            crawler = getattr(spider, "crawler", None)
            if crawler is not None:  # stored requests leave out what middlewares add again
                self.revisits.defaults = middleware_defaults(crawler.settings, spider)
        return self.df.open()

    def close(self, reason: str) -> Sequence[Request]:
        """Close the frontier and the dupefilter.

        Returns:
            the requests still queued that are NOT kept in a ``JOBDIR`` (all of them
            without one), so the caller can report them.
        """
        try:
            return self.frontier.close(reason)
        finally:
            try:
                close = getattr(self.revisits, "close", None)
                if close is not None:
                    close()
            finally:
                self.df.close(reason)

    def enqueue_request(self, request: Request) -> bool:
        """Queue ``request``; False when the dupefilter dropped it (``dont_filter`` skips
        it). With a ``JOBDIR``, a request that cannot be stored (a callback that is no
        spider method) is kept in memory, not resumed (``scheduler/unserializable``,
        logged once with ``LOG_UNSERIALIZABLE_REQUESTS``): the frontier counts it, on
        this path as on the SchedulerActor's ``push_many``."""
        return self.frontier.push(request, transient_ok=True)

    def next_request(self) -> Request | None:
        """Pop the next request to download, or None.

        Scrapy's interface has no leases nor transfers to report: with a ``JOBDIR`` the
        request is acked at once (not downloaded again after a crash), and its host's
        transfer is counted finished at once (the downloader's slot limits its
        concurrency; the frontier still spaces its host's starts by the delay, so the
        downloader applies the delay too: the request is not marked paced)."""
        requests = self.frontier.lease(1)
        if not requests:
            return None
        request = requests[0]
        if request._lease is not None:
            self.frontier.ack([request._lease])
            request._lease = None
        host = request._host
        if host is not None:
            request._host = None
            request._paced = False
            self.frontier.hosts_finished({host: 1})
        return request

    def __len__(self) -> int:
        return len(self.frontier)



#: ``SCHEDULER_PRIORITY_QUEUE`` values crawlfw honours: all mean its per-host queues with
#: a ready-set of hosts (ARCHITECTURE.md, "The frontier: per-host queues"), which is what
#: Scrapy's ``DownloaderAwarePriorityQueue`` (its broad-crawl advice) is for.
PRIORITY_QUEUES = (
    "crawlfw.core.frontier.pqueue.PriorityQueue",  # crawlfw's default
    "crawlfw.pqueues.DownloaderAwarePriorityQueue",
    "scrapy.pqueues.DownloaderAwarePriorityQueue",
)


def check_priority_queue(settings: BaseSettings) -> None:
    """Refuse a ``SCHEDULER_PRIORITY_QUEUE`` crawlfw cannot honour.

    Raises:
        crawlfw.exceptions.CrawlStartError: the setting names another class (one line,
            naming the value and the accepted ones).
    """
    from crawlfw.exceptions import CrawlStartError

    value = settings.get("SCHEDULER_PRIORITY_QUEUE")
    if value is None:
        return
    name = value if isinstance(value, str) else (
        f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', value)}")
    if name not in PRIORITY_QUEUES:
        raise CrawlStartError(
            f"SCHEDULER_PRIORITY_QUEUE = {name!r} cannot be honoured: crawlfw keeps one "
            f"queue per host with a ready-set of hosts (what "
            f"'scrapy.pqueues.DownloaderAwarePriorityQueue' does); use one of "
            f"{', '.join(repr(v) for v in PRIORITY_QUEUES)} or leave it unset")


def max_open_leases(settings: BaseSettings) -> int:
    """``FRONTIER_MAX_OPEN_LEASES``: the most open leases a worker of a shared frontier
    holds; None (the default) is 8 × ``CONCURRENT_REQUESTS``, 0 no limit.

    Raises:
        ValueError: the setting is not a whole number of at least 0.
    """
    value = settings.get("FRONTIER_MAX_OPEN_LEASES")
    if value is None:
        return 8 * max(1, settings.getint("CONCURRENT_REQUESTS"))
    value = settings.getint("FRONTIER_MAX_OPEN_LEASES")
    if value < 0:
        raise ValueError(f"FRONTIER_MAX_OPEN_LEASES must be 0 (no limit) or more, got {value}")
    return value


def _redis_frontier(crawler: CrawlerLike, dupefilter: DupeFilter) -> RedisFrontier:
    """The shared frontier named by ``FRONTIER_URL`` (``FRONTIER_KEY``,
    ``FRONTIER_WORKER``, ``FRONTIER_LEASE_TIMEOUT``, ``FRONTIER_RETRY_TIMEOUT``)."""
    from crawlfw.core.frontier.frontier import FrontierError
    from crawlfw.exceptions import CrawlStartError

    settings = crawler.settings
    if settings.get("JOBDIR"):
        logger.warning("FRONTIER_URL is set: the crawl's frontier is in Redis, not in "
                       "JOBDIR %(jobdir)s", {"jobdir": settings["JOBDIR"]})
    dqname = getattr(load_object(settings["SCHEDULER_DISK_QUEUE"]), "__name__", "")
    try:
        return _open_redis_frontier(crawler, settings, dupefilter, dqname)
    except FrontierError as e:  # one line, as any crawl refused at its start
        raise CrawlStartError(f"shared frontier: {e}") from None


def _open_redis_frontier(crawler: CrawlerLike, settings: BaseSettings, dupefilter: DupeFilter,
                         dqname: str) -> RedisFrontier:
    from crawlfw.core.frontier.redis_frontier import RedisFrontier
    from crawlfw.core.frontier.redis_link import frontier_key, redis_link, worker_id
    from crawlfw.core.transport.hostpolicy import politeness_settings

    def host_limits() -> tuple[int, float, bool]:  # the downloader slots' rule (read after spider_opened)
        return politeness_settings(settings, crawler.spider)

    return RedisFrontier(
        settings["FRONTIER_URL"], frontier_key(settings, crawler.spider.name), dupefilter,
        worker=worker_id(settings), lifo="Fifo" not in dqname,
        lease_timeout_s=settings.getfloat("FRONTIER_LEASE_TIMEOUT", 60.0),
        retry_timeout_s=settings.getfloat("FRONTIER_RETRY_TIMEOUT", 300.0),
        prefetch=settings.getint("CONCURRENT_REQUESTS"),
        max_open=max_open_leases(settings),
        stats=crawler.stats,
        link=redis_link(crawler),
        join_only=settings.getbool("FRONTIER_JOIN_ONLY"),
        host_limits=host_limits,
        logunser=settings.getbool("LOG_UNSERIALIZABLE_REQUESTS"),
    )
