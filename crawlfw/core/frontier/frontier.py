"""The crawl frontier: the requests still to download, the fingerprints already seen, and
the leases on requests being worked on. Plain, thread-free objects that
:class:`crawlfw.actors.scheduler.SchedulerActor` wraps (through
:class:`crawlfw.core.scheduler.Scheduler`); their interface is the
:class:`~crawlfw.core.frontier.api.Frontier` Protocol.

Operations (both implementations)::

    frontier.push(request) -> bool      # through the dupefilter; False: not queued
    frontier.lease(n, now_s) -> [Request]  # up to n requests of ready hosts, each with
                                        # ``_lease``, ``_host`` and ``_paced``
    frontier.hosts_finished(counts)     # {host: n}: transfers ended, hosts may be ready
    frontier.next_ready_in_s(now_s)     # when a host waiting for its delay is ready
    frontier.ack(lease_ids)             # their work is durable: forget them
    frontier.release(requests)          # give leased requests back to the queue
    frontier.commit(meta)               # make everything since the last commit durable
    len(frontier)                       # requests queued (not leased)

Both keep one queue per host and a ready-set of hosts
(:class:`~crawlfw.core.frontier.hostqueues.HostQueues`): a lease hands out requests only of hosts
below their concurrency and past their delay (ARCHITECTURE.md, "The frontier: per-host
queues").

:class:`MemoryFrontier` (no ``JOBDIR``) keeps its per-host queues in memory; its leases
are not tracked (``request._lease`` stays None) and ``ack``/``commit`` do nothing.

:class:`~crawlfw.core.frontier.sqlite_frontier.SqliteFrontier` (``JOBDIR`` set) keeps
everything in ``<JOBDIR>/frontier.sqlite``; it lives in :mod:`crawlfw.core.frontier.sqlite_frontier`
with its tables and migrations. This module keeps what both share: the job's lock
(:class:`JobLock`), its record (:class:`JobMeta`, :func:`read_job_meta`) and the errors.
"""

from __future__ import annotations

import collections
import fcntl
import json
import logging
import os
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from crawlfw.core.frontier.api import (
    REVISIT_META,
    FrontierBase,
    FrontierError,
    host_key,
    in_start_lane,
)
from crawlfw.core.frontier.hostqueues import HostQueues, sort_key
from crawlfw.core.frontier.spill import QueuedRequests, SpillingHostStore
from crawlfw.core.transport.hostpolicy import HostPolicy
from crawlfw.core.transport.slot import DOWNLOAD_SLOT, url_host
from crawlfw.dupefilters import RFPDupeFilter
from crawlfw.http.request import Request as _Request
from crawlfw.utils._scratch import scratch_root, sweep_stale
from crawlfw.utils._seen import HOT_FINGERPRINTS, Fingerprints
from crawlfw.utils.request import _GET_FINGERPRINTS, request_fingerprint

if TYPE_CHECKING:
    import random

    from crawlfw.core.frontier.api import DupeFilter
    from crawlfw.http import Request
    from crawlfw.spiders import Spider
    from crawlfw.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

__all__ = ["FrontierError", "JobLocked", "JobLock", "JobMeta", "MemoryFrontier",
           "FRONTIER_FILE", "JOB_FILE", "LOCK_FILE", "read_job_meta"]

#: RFPDupeFilter methods whose replacement on an instance (a guarded hook, a test's
#: spy) makes :meth:`MemoryFrontier.push_many` call them instead of taking their rule
#: inline.
_REPLACEABLE = frozenset({"request_seen", "request_fingerprint", "log"})

#: The frontier's file inside ``JOBDIR``.
FRONTIER_FILE = "frontier.sqlite"

#: The job's record inside ``JOBDIR``: ``{"job": id, "generation": n}``, rewritten
#: (atomically) after each commit of the frontier; a frontier older than it is refused.
JOB_FILE = "job.json"

#: How to start a job over on purpose, said by every refusal of a JOBDIR's history.
START_OVER = ("to start over on purpose, remove the JOBDIR (or use a new one) and move "
              "the job's feeds away")

#: The lock file inside ``JOBDIR``: one crawl at a time holds it (``flock``), and writes
#: its process id into it.
LOCK_FILE = "crawl.lock"

#: ``FRONTIER_MEMORY_LIMIT``'s default: bytes of queued requests the in-memory frontier
#: keeps in RAM before it spills to disk (ARCHITECTURE.md, "The frontier: per-host queues").
DEFAULT_MEMORY_LIMIT = 96 * 1024 * 1024

#: Seconds between two updates of the stats ``frontier/memory_bytes`` and
#: ``frontier/disk_bytes`` (at a lease).
FIGURES_EVERY_S = 1.0

#: Most fingerprints kept in memory to answer repeated links without SQLite (about
#: 130 bytes each; the set is emptied when full, so memory stays bounded).
SEEN_CACHE_SIZE = 100_000


class JobLocked(FrontierError):
    """Another crawl (this process or another one) holds the ``JOBDIR``'s lock."""


class JobLock:
    """The exclusive lock of one ``JOBDIR``: at most one crawl uses a job directory.

    An OS file lock (``flock(LOCK_EX | LOCK_NB)``, POSIX/BSD advisory locking) on
    ``<JOBDIR>/crawl.lock``, held as long as the crawl runs. The kernel releases it when
    the holder's file is closed or its process dies, so a ``kill -9`` never leaves a stale
    lock. The holder writes its process id (and command line) into the file so a refused
    crawl can name it; the file itself is left in place (removing it would let a third
    crawl lock a new file while the second still holds the old one).

    Args:
        jobdir: the ``JOBDIR`` (must exist).
    """

    def __init__(self, jobdir: str) -> None:
        self.jobdir = jobdir
        self.path = os.path.join(jobdir, LOCK_FILE)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock without waiting.

        Raises:
            JobLocked: another crawl holds it; the message names the ``JOBDIR`` and the
                owner's process id as it wrote it.
            FrontierError: the lock file cannot be created or locked (an ``OSError``).
        """
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise FrontierError(f"Cannot create the lock file {self.path}: {e}") from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                owner = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "unknown"
            finally:
                os.close(fd)
            raise JobLocked(
                f"JOBDIR {self.jobdir} is in use by another crawl ({owner}): one crawl at "
                f"a time per JOBDIR; stop it first, or use another JOBDIR") from None
        except OSError as e:
            os.close(fd)
            raise FrontierError(f"Cannot lock {self.path}: {e}") from e
        try:
            owner = f"pid {os.getpid()}"
            try:
                with open(f"/proc/{os.getpid()}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
                if cmd:
                    owner += f": {cmd[:300]}"
            except OSError:
                pass
            os.ftruncate(fd, 0)
            os.pwrite(fd, (owner + "\n").encode(), 0)
        except OSError:  # the lock is what counts; the owner's name is a courtesy
            pass
        self._fd = fd

    def release(self) -> None:
        """Give the lock back (closing the file releases it); idempotent."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


class JobMeta(dict[str, Any]):
    """The metadata a ``JOBDIR`` frontier keeps, as committed by the last run (a dict).

    Keys: ``start_requests`` (int, start requests already scheduled), ``start_exhausted``
    (bool), ``feeds`` (``{feed key: state dict}``, see
    :meth:`crawlfw.core.feeds.feeds.FeedWriter.checkpoint`), ``spider_state`` (str, the pickled
    ``spider.state`` as latin-1 text, or absent), ``resumed`` (bool: the job existed).
    """


def read_job_meta(jobdir: str) -> JobMeta:
    """Read the committed metadata of the frontier in ``jobdir`` without opening it for
    writing (a separate read-only connection; safe while a crawl runs).

    Args:
        jobdir: the ``JOBDIR``.

    Returns:
        JobMeta: empty (``resumed`` False) when there is no frontier file yet.

    Raises:
        FrontierError: the file exists but cannot be read as a frontier.
    """
    path = os.path.join(jobdir, FRONTIER_FILE)
    meta = JobMeta(resumed=False)
    if not os.path.exists(path):
        return meta
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = conn.execute("SELECT key, value FROM meta").fetchall()
        finally:
            conn.close()
    except sqlite3.Error as e:
        raise FrontierError(f"Cannot read the frontier {path}: {e}") from e
    meta.update((k, json.loads(v)) for k, v in rows)
    meta["resumed"] = True
    return meta


#: Kept for code written against crawlfw < 0.4: every frontier's ``push_many``.
PushMany = FrontierBase


def _lifo_of(mqclass: Any) -> bool:
    """The order a ``SCHEDULER_MEMORY_QUEUE``/``SCHEDULER_DISK_QUEUE`` class stands for
    within one priority: a class named ``...Fifo...`` is first in first out, any other
    last in first out (Scrapy 1.2's default)."""
    return "Fifo" not in (getattr(mqclass, "__name__", "") if mqclass is not None else "")


class MemoryFrontier(FrontierBase):
    """The in-memory frontier (no ``JOBDIR``): one queue per host behind the dupefilter,
    and a ready-set of hosts (:mod:`crawlfw.core.frontier.hostqueues`), on a memory
    budget: the queued requests are kept as compact records, per-host heads in RAM and
    the rest spilled to a private temporary file beyond ``memory_limit_bytes``
    (:mod:`crawlfw.core.frontier.spill`); nothing of it is resumable.

    Within a host: higher ``Request.priority`` first; within one priority the order of
    ``mqclass`` (``SCHEDULER_MEMORY_QUEUE``: a ``...Fifo...`` class first in first out,
    else last in first out, Scrapy 1.2's default). Start requests
    (``meta['is_start_request']``, set by the Scraper) go first in first out, after the
    other requests of the same priority (Scrapy 2.13's start queue): ``start_urls`` are
    fetched in their order; so do revisits (``REVISIT_ENABLED``:
    :func:`~crawlfw.core.frontier.api.in_start_lane`). Across hosts: see :meth:`HostQueues.lease
    <crawlfw.core.frontier.hostqueues.HostQueues.lease>`. The same order whether a
    request waited in RAM or on disk.

    Args:
        dupefilter: an object with ``request_seen(request) -> bool`` and
            ``log(request, spider)``.
        mqclass: the per-priority queue class (only its order is used).
        stats: the crawl's stats collector, or None.
        policy: the per-host politeness (:class:`~crawlfw.core.transport.hostpolicy.HostPolicy`);
            default: 8 at once per host, no delay.
        rng: the random generator of randomized delays (tests pass a seeded one).
        memory_limit_bytes: ``FRONTIER_MEMORY_LIMIT``: bytes of queued requests kept in
            RAM (0: no limit, nothing spilled).
        spill_dir: where the spill directory is made (default
            :func:`~crawlfw.utils._scratch.scratch_root`).

    Attributes:
        path: the spill directory once made (else the directory it would be made in),
            for error messages.
    """

    durable = False
    policy: HostPolicy
    hosts: HostQueues

    def __init__(self, dupefilter: DupeFilter, mqclass: Any = None,
                 stats: StatsCollector | None = None, *, policy: HostPolicy | None = None,
                 rng: random.Random | None = None,
                 memory_limit_bytes: int = DEFAULT_MEMORY_LIMIT,
                 spill_dir: str | None = None) -> None:
        self.df = dupefilter
        self.stats = stats
        self.spider = None
        self.policy = policy if policy is not None else HostPolicy()
        self.spill_dir = spill_dir if spill_dir is not None else scratch_root()
        if memory_limit_bytes:
            sweep_stale(self.spill_dir)  # what crashed crawls left
        self.store = SpillingHostStore(lifo=_lifo_of(mqclass), limit_bytes=memory_limit_bytes,
                                       root=self.spill_dir)
        self.hosts = HostQueues(self.policy, rng=rng)
        self.meta = JobMeta(resumed=False)
        self._figures_at = 0.0

    @property
    def path(self) -> str:
        """The spill directory (before the first spill: where it will be made)."""
        return self.store.path or self.spill_dir

    def open(self, spider: Spider) -> None:
        """Bind the spider (for the dupefilter's log, the stats, and the callbacks of
        the compact records)."""
        self.spider = spider
        self.store.codec.spider = spider

    def push(self, request: Request, *, transient_ok: bool = True) -> bool:
        """Queue ``request`` in its host's queue; False when the dupefilter dropped it
        (``dont_filter`` bypasses the dupefilter). ``transient_ok`` is ignored: nothing
        here is durable."""
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            return False
        meta = request._meta
        key = sort_key(request.priority, bool(meta and (meta.get("is_start_request")
                                                        or REVISIT_META in meta)))
        host = host_key(request)
        self.store.push(host, key, request)
        self.hosts.added(host, key)
        stats = self.stats
        if stats is not None:
            stats.inc_value("scheduler/enqueued/memory", spider=self.spider)
            stats.inc_value("scheduler/enqueued", spider=self.spider)
        return True

    def push_many(self, requests: Sequence[Request], *, transient_ok: bool = False,
                  start: Mapping[str, Any] | None = None) -> list[bool]:
        """Queue ``requests`` as :meth:`push` does one by one
        (:meth:`FrontierBase.push_many <crawlfw.core.frontier.api.FrontierBase.push_many>`).

        With crawlfw's own :class:`~crawlfw.dupefilters.RFPDupeFilter` (its class, no
        ``requests.seen`` file, no method replaced on the instance, its own
        ``fingerprints``) the filter's rule is taken inline: a request is a duplicate
        when the seen set's ``add`` of its fingerprint's digest says it was there (then
        ``log``); and the stats
        (``dupefilter/filtered`` once the first duplicate was logged,
        ``scheduler/enqueued/memory``, ``scheduler/enqueued``) are counted once per
        batch instead of once per request; the memo of a plain GET's fingerprint
        (:func:`~crawlfw.utils.request.request_fingerprint`), :func:`sort_key` and
        :func:`host_key` are taken inline too. Same result as the general path
        (``tests/core/test_frontier_push_many.py`` compares both on a table of batches).

        Returns:
            list[bool]: per request, False when it was a duplicate.
        """
        df = self.df
        if (df.__class__ is not RFPDupeFilter or df.file is not None
                or df.fingerprinter is not None
                or _REPLACEABLE & vars(df).keys()
                or df.fingerprints.__class__ is not Fingerprints):
            return super().push_many(requests, transient_ok=transient_ok, start=start)
        fps = df.fingerprints
        seen_add = fps.seen.add  # (digest bytes) -> True when new
        hot, prev = fps.hot, fps.prev  # the recent fingerprints (Fingerprints.remember)
        fromhex = bytes.fromhex
        store_push = self.store.push
        added = self.hosts.added
        get_fingerprints = _GET_FINGERPRINTS
        spider = self.spider
        queued: list[bool] = []
        append = queued.append
        filtered = enqueued = 0
        try:
            for request in requests:
                if not request.dont_filter:
                    # request_fingerprint's memo of a plain GET, looked up inline
                    fp = (get_fingerprints.get(request._url)
                          if request.__class__ is _Request and request.method == "GET"
                          and not request._body else None)
                    if fp is None:
                        fp = request_fingerprint(request)
                    if fp in hot or fp in prev:
                        new = False
                    else:
                        new = seen_add(fromhex(fp))
                        hot.add(fp)  # Fingerprints.remember, inline
                        if len(hot) >= HOT_FINGERPRINTS:
                            prev = fps.prev = hot
                            hot = fps.hot = set()
                    if not new:
                        if df.logdupes or df.debug:
                            df.log(request, spider)  # the log line, and its count
                        else:
                            filtered += 1
                        append(False)
                        continue
                # sort_key() and host_key(), inline
                meta = request._meta
                if meta:
                    key = (-2 * request.priority + 1
                           if meta.get("is_start_request") or REVISIT_META in meta
                           else -2 * request.priority)
                    host = (meta[DOWNLOAD_SLOT] if DOWNLOAD_SLOT in meta
                            else url_host(request.url))
                else:
                    key = -2 * request.priority
                    host = url_host(request.url)
                store_push(host, key, request)
                added(host, key)
                enqueued += 1
                append(True)
        finally:
            if filtered:  # (open() bound the spider before any push)
                spider.crawler.stats.inc_value(  # type: ignore[union-attr]
                    "dupefilter/filtered", filtered, spider=spider)
            stats = self.stats
            if enqueued and stats is not None:
                stats.inc_value("scheduler/enqueued/memory", enqueued, spider=spider)
                stats.inc_value("scheduler/enqueued", enqueued, spider=spider)
        self._count_start(start)
        return queued

    def lease(self, n: int, now_s: float | None = None) -> list[Request]:
        """Up to ``n`` requests of ready hosts, next first (their ``_lease`` stays None:
        not tracked); each carries ``_host``, to be reported by :meth:`hosts_finished`.
        At most once a second, sets the stats ``frontier/memory_bytes`` and
        ``frontier/disk_bytes`` (what the queued requests take; ``crawlfw status``
        shows them)."""
        if now_s is None:
            now_s = time.monotonic()
        out = self.hosts.lease(n, now_s, self.store.take)
        stats = self.stats
        if stats is not None:
            if out:
                stats.inc_value("scheduler/dequeued/memory", len(out), spider=self.spider)
                stats.inc_value("scheduler/dequeued", len(out), spider=self.spider)
            if now_s - self._figures_at >= FIGURES_EVERY_S:
                self._figures_at = now_s
                self.set_figures()
        return out

    def set_figures(self) -> None:
        """Set the stats ``frontier/memory_bytes`` (queued requests' bytes in RAM, as
        counted against ``FRONTIER_MEMORY_LIMIT``) and ``frontier/disk_bytes`` (the
        spill file's size)."""
        if self.stats is not None:
            self.stats.set_value("frontier/memory_bytes", self.store.memory_bytes(),
                                 spider=self.spider)
            self.stats.set_value("frontier/disk_bytes", self.store.disk_bytes(),
                                 spider=self.spider)

    def release(self, requests: Iterable[Request]) -> None:
        """Queue leased requests again (the dupefilter is bypassed: it saw them); their
        hosts' in-flight counts go down."""
        for request in requests:
            host = request._host
            key = sort_key(request.priority, in_start_lane(request))
            again = request.replace(dont_filter=True)
            if host is None:
                host = host_key(request)
                self.store.push(host, key, again)
                self.hosts.added(host, key)
            else:
                request._host = None
                self.store.push(host, key, again)
                self.hosts.released(host, key)

    def ack(self, lease_ids: Sequence[int]) -> None:
        """Nothing to do: memory leases are not tracked."""

    def commit(self, meta: Mapping[str, Any] | None = None) -> None:
        """Nothing to do: nothing is durable."""

    def set_meta(self, meta: Mapping[str, Any]) -> None:
        """Nothing to do: nothing is durable."""

    def close(self, reason: str) -> QueuedRequests:
        """Return the requests still queued (they are lost with the process), as a
        :class:`~crawlfw.core.frontier.spill.QueuedRequests`: counted at once, decoded
        only if iterated; the spill directory is removed now."""
        try:
            self.set_figures()
        finally:  # (a failed disk may fail the figures too: the directory goes anyway)
            left = self.store.drain()
            self.hosts = HostQueues(self.policy)
        return left

    def __len__(self) -> int:
        return len(self.store)


def _pop_up_to(queue: Any, n: int) -> list[Any]:
    """Pop up to ``n`` objects from ``queue`` (whose ``pop()`` returns None when empty)."""
    out: list[Any] = []
    pop = queue.pop
    while len(out) < n:
        obj = pop()
        if obj is None:
            break
        out.append(obj)
    return out


class _Fifo(collections.deque[Any]):
    """A first-in, first-out deque with the queue interface the PriorityQueue needs."""

    __slots__ = ()

    def push(self, obj: Any) -> None:
        self.append(obj)

    # the queue interface's pop(): no index, None when empty (not deque's)
    def pop(self) -> Any:  # type: ignore[override]  # noqa: D102 - popleft, returning None when empty
        return self.popleft() if self else None

    def close(self) -> None:
        self.clear()


def _new_fifo(priority: int) -> _Fifo:
    return _Fifo()


class _Lifo(list[Any]):
    """A last-in, first-out list with the queue interface the PriorityQueue needs."""

    __slots__ = ()

    def push(self, obj: Any) -> None:
        self.append(obj)

    # the queue interface's pop(): no index, None when empty (not list's)
    def pop(self) -> Any:  # type: ignore[override]  # noqa: D102 - list.pop, returning None when empty
        return super().pop() if self else None

    def close(self) -> None:
        self.clear()
