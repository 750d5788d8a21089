"""The frontier interface every frontier implements, and the logic they share.

Three frontiers keep a crawl's requests: :class:`~crawlfw.core.frontier.frontier.MemoryFrontier`
(no ``JOBDIR``), :class:`~crawlfw.core.frontier.sqlite_frontier.SqliteFrontier` (``JOBDIR``) and
:class:`~crawlfw.core.frontier.redis_frontier.RedisFrontier` (``FRONTIER_URL``). Each keeps one
queue per host key (:func:`host_key`) and a ready-set of hosts
(:mod:`crawlfw.core.frontier.hostqueues`): :meth:`Frontier.lease` hands out requests of ready
hosts only, so a request never occupies the crawl's global concurrency while it waits
for its host (ARCHITECTURE.md, "The frontier: per-host queues").

:class:`Frontier` is the Protocol (what the SchedulerActor calls);
:class:`FrontierBase` holds what the implementations share: ``push_many`` over ``push``,
the stats counters, and the one path of requests kept in memory because they cannot be
stored (``scheduler/unserializable``, ``LOG_UNSERIALIZABLE_REQUESTS``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from crawlfw.core.transport.slot import slot_key

if TYPE_CHECKING:
    from crawlfw.core.frontier.hostqueues import HostQueues
    from crawlfw.core.transport.hostpolicy import HostPolicy
    from crawlfw.http import Request
    from crawlfw.spiders import Spider
    from crawlfw.statscollectors import StatsCollector

__all__ = ["REVISIT_META", "DupeFilter", "Frontier", "FrontierBase", "FrontierError",
           "host_key", "in_start_lane", "is_start_request"]

logger = logging.getLogger(__name__)


def host_key(request: Request) -> str:
    """The key of ``request``'s host queue: ``meta['download_slot']`` when set, else the
    URL's lower-case host name (:func:`crawlfw.core.transport.slot.slot_key` without the IP cache).

    With ``CONCURRENT_REQUESTS_PER_IP`` the downloader's slots still enforce the per-IP
    limit; the frontier then limits per host name with the same figure (an
    approximation: host names sharing an address are limited together only downstream).
    """
    return slot_key(request)


def is_start_request(request: Request) -> bool:
    """True for a start request (``meta['is_start_request']``, set by the Scraper)."""
    meta = request._meta
    return bool(meta and meta.get("is_start_request"))


#: ``meta`` key of a revisit request of a continuous crawl (``REVISIT_ENABLED``): the
#: record's state (:mod:`crawlfw.core.frontier.revisit`). Here because the frontiers
#: queue revisits in the start lane (:func:`in_start_lane`).
REVISIT_META = "_revisit"


def in_start_lane(request: Request) -> bool:
    """True for a request queued in the *start lane*: first in first out, after the
    other requests of its priority (before those of lower priorities). A start request
    (``meta['is_start_request']``: Scrapy 2.13's start queue) or a revisit
    (``meta[REVISIT_META]``: a backlog of revisits then never starves the new pages a
    crawl finds, and revisits are fetched in the order they fell due, whatever
    ``SCHEDULER_MEMORY_QUEUE`` says; docs/continuous-crawling.md)."""
    meta = request._meta
    return bool(meta and (meta.get("is_start_request") or REVISIT_META in meta))


class FrontierError(Exception):
    """The frontier cannot be used: its file is not a frontier, is of another version,
    or the disk failed (a ``JOBDIR``'s, or the memory frontier's spill store). The
    message names the file or directory. (Importable from
    :mod:`crawlfw.core.frontier.frontier` too.)"""


class DupeFilter(Protocol):
    """What a frontier uses of a ``DUPEFILTER_CLASS`` instance (Scrapy 1.2's
    ``BaseDupeFilter`` interface, :mod:`crawlfw.dupefilters`)."""

    def request_seen(self, request: Request) -> bool:
        """True when ``request`` is a duplicate of one seen before (it is recorded)."""

    def open(self) -> None:
        """Called as the crawl opens."""

    def close(self, reason: str) -> None:
        """Called as the crawl closes with ``reason``."""

    def log(self, request: Request, spider: Spider | None) -> None:
        """Log that ``request`` was filtered."""


@runtime_checkable
class Frontier(Protocol):
    """What a frontier offers the SchedulerActor (all three implementations).

    Attributes:
        durable: True when pushes, acks and metadata survive the process (``commit``).
        meta: the job's metadata as last committed (a dict; see
            :class:`~crawlfw.core.frontier.frontier.JobMeta`).
    """

    durable: bool
    meta: dict[str, Any]

    def open(self, spider: Spider) -> None:
        """Bind the spider whose methods are the requests' callbacks."""

    def push(self, request: Request, *, transient_ok: bool = False) -> bool:
        """Queue ``request`` in its host's queue unless the dupefilter drops it (or it
        cannot be stored and ``transient_ok`` is False); False when not queued."""

    def push_many(self, requests: Sequence[Request], *, transient_ok: bool = False,
                  start: Mapping[str, Any] | None = None) -> list[bool]:
        """``push`` each request; with ``start`` (``{'consumed': int, 'exhausted':
        bool}``) also count the start requests consumed, in the same transaction.
        Returns a list of bools."""

    def lease(self, n: int, now_s: float | None = None) -> list[Request]:
        """Up to ``n`` requests of ready hosts (see :mod:`crawlfw.core.frontier.hostqueues`),
        each stamped ``_host``, ``_paced`` and ``_lease``. ``now_s``: a
        ``time.monotonic()`` value (None: read now)."""

    def hosts_finished(self, counts: Mapping[str, int], now_s: float | None = None) -> None:
        """Transfers of these hosts ended (``{host key: count}``): they may be ready."""

    def next_ready_in_s(self, now_s: float | None = None) -> float | None:
        """Seconds until a host with queued requests becomes ready by its delay (0.0:
        now), None when none waits for a delay."""

    def set_host_delay(self, key: str, delay_s: float) -> None:
        """AutoThrottle's delay for host ``key``, in seconds."""

    def release(self, requests: Iterable[Request]) -> None:
        """Give leased requests back unfinished (their hosts' counts too)."""

    def ack(self, lease_ids: Sequence[int]) -> None:
        """Forget leased requests whose work is durable."""

    def commit(self, meta: Mapping[str, Any] | None = None) -> None:
        """Make everything since the last commit durable, with ``meta``."""

    def set_meta(self, meta: Mapping[str, Any]) -> None:
        """Write metadata, durable with the next commit."""

    def close(self, reason: str) -> Sequence[Request]:
        """Close; returns the requests that are lost with the process (a sequence: the
        memory frontier's decodes them only when iterated)."""

    def __len__(self) -> int:
        """Requests queued (not leased), all hosts."""


class FrontierBase:
    """What the frontiers share: ``push_many`` over ``push``, stats counting, and the
    requests kept in memory because they cannot be stored.

    Subclasses set ``stats`` (a stats collector or None), ``spider``, ``meta`` and
    ``logunser`` (``LOG_UNSERIALIZABLE_REQUESTS``) and define ``push`` and ``set_meta``.
    """

    stats: StatsCollector | None = None
    spider: Spider | None = None
    logunser = False
    if TYPE_CHECKING:  # what the subclasses define
        meta: dict[str, Any]

        def push(self, request: Request, *, transient_ok: bool = False) -> bool: ...
        def set_meta(self, meta: Mapping[str, Any]) -> None: ...

    def push_many(self, requests: Sequence[Request], *, transient_ok: bool = False,
                  start: Mapping[str, Any] | None = None) -> list[bool]:
        """Queue ``requests`` (see ``push``); with ``start``, ``{'consumed': int,
        'exhausted': bool}``, also count the start requests they came from in the
        metadata, in the same transaction (a resumed job skips that many).

        Returns:
            list[bool]: per request, False when it was a duplicate or was refused.
        """
        push = self.push
        queued = [push(request, transient_ok=transient_ok) for request in requests]
        self._count_start(start)
        return queued

    def _count_start(self, start: Mapping[str, Any] | None) -> None:
        """Count, in the metadata (committed with the batch's pushes), the start requests
        a :meth:`push_many` batch came from: ``start`` is ``{'consumed': int,
        'exhausted': bool}``, or None for a batch of other requests."""
        if start is not None:
            meta = {"start_requests": self.meta.get("start_requests", 0) + start["consumed"]}
            if start["exhausted"]:
                meta["start_exhausted"] = True
            self.set_meta(meta)

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(key, count, spider=self.spider)

    def _kept_in_memory(self, request: Request) -> None:
        """``request`` cannot be stored and is kept in memory, not resumed (a request of
        the crawl's own machinery): counted in ``scheduler/unserializable`` (and the
        memory enqueue counters), and with ``LOG_UNSERIALIZABLE_REQUESTS`` the first
        such request logged (Scrapy's line)."""
        self._inc("scheduler/unserializable")
        self._inc("scheduler/enqueued/memory")
        self._inc("scheduler/enqueued")
        if self.logunser:
            logger.warning(
                "Unable to serialize request: %(request)s - it is kept in memory and not "
                "resumed - no more unserializable requests will be logged (stats being "
                "collected)", {"request": request}, extra={"spider": self.spider})
            self.logunser = False

    # The per-host part, for frontiers whose ready-set is a HostQueues in ``hosts``
    # (None: no per-host queues, e.g. a Scrapy-style scheduler seen as a frontier).

    hosts: HostQueues | None = None
    policy: HostPolicy | None = None

    def hosts_finished(self, counts: Mapping[str, int], now_s: float | None = None) -> None:
        """Transfers of these hosts ended (``{host key: count}``): their in-flight
        counts go down and they may be ready again."""
        if self.hosts is not None and counts:
            self.hosts.finished(counts, time.monotonic() if now_s is None else now_s)

    def next_ready_in_s(self, now_s: float | None = None) -> float | None:
        """Seconds until a host with queued requests becomes ready by its delay (0.0:
        one is ready now), None when none waits for a delay
        (:meth:`crawlfw.core.frontier.hostqueues.HostQueues.next_ready_in_s`)."""
        if self.hosts is None:
            return None
        return self.hosts.next_ready_in_s(time.monotonic() if now_s is None else now_s)

    def set_host_delay(self, key: str, delay_s: float) -> None:
        """AutoThrottle's delay for host ``key`` (seconds; ``ValueError`` if negative)."""
        if self.policy is not None:
            self.policy.set_host_delay(key, delay_s)
            if self.hosts is not None:
                self.hosts.delay_changed(key)
