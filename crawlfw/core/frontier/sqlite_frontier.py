"""The durable frontier of a ``JOBDIR`` (:class:`SqliteFrontier`), its SQLite tables and
queries, and the migrations of older layouts; split from :mod:`crawlfw.core.frontier.frontier`
(the memory frontier, the job's lock and record, issue 19), whose module docstring gives the
operations both frontiers share.

:class:`SqliteFrontier` (``JOBDIR`` set) keeps everything in ``<JOBDIR>/frontier.sqlite``
(stdlib :mod:`sqlite3`, write-ahead log): the queue with priorities and hosts, the
request fingerprints of the dupefilter, and the crawl's metadata (feed lengths, start
requests already scheduled, ``spider.state``). Only leased requests and the ready-set (a
count and a best sort key per host with queued requests) are in memory, so memory stays
flat however large the queue grows. A lease is a mark on a queued row, never durable on
its own: a process that dies with open leases finds those rows queued again when the
job is opened next, so their pages are downloaded again. ``ack`` deletes the row inside
the open transaction, and :meth:`SqliteFrontier.commit` commits pushes, acks and metadata
together, atomically. See ARCHITECTURE.md ("Lose nothing") for the commit protocol that
decides when a lease may be acked.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import sqlite3
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from crawlfw.core import _faults
from crawlfw.core.frontier.api import FrontierBase, host_key, in_start_lane
from crawlfw.core.frontier.frontier import (
    _REPLACEABLE,
    FRONTIER_FILE,
    JOB_FILE,
    SEEN_CACHE_SIZE,
    START_OVER,
    FrontierError,
    JobLock,
    JobMeta,
)
from crawlfw.core.frontier.hostqueues import HostQueues, MemoryHostStore, sort_key
from crawlfw.core.frontier.pqueue import PriorityQueue
from crawlfw.core.transport.hostpolicy import HostPolicy
from crawlfw.dupefilters import RFPDupeFilter
from crawlfw.http.request import Request as _Request
from crawlfw.utils.reqser import request_from_dict, request_to_dict
from crawlfw.utils.request import _GET_FINGERPRINTS

if TYPE_CHECKING:
    import random

    from crawlfw.core.frontier.api import DupeFilter
    from crawlfw.http import Request
    from crawlfw.spiders import Spider
    from crawlfw.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

__all__ = ["SqliteFrontier", "SCHEMA_VERSION"]

#: Version of the tables below. Version 1 (crawlfw < 0.4: one queue for every host) is
#: migrated on open (:meth:`SqliteFrontier._migrate_to_host_layout`); another version is
#: refused.
SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
    id INTEGER PRIMARY KEY,
    priority INTEGER NOT NULL,
    leased INTEGER NOT NULL DEFAULT 0,
    data BLOB NOT NULL,
    start_seq INTEGER NOT NULL DEFAULT 0,
    host TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS seen (fp BLOB PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

#: ``start_seq`` of a request that is not a start request: before every start request of
#: its priority. A start request's ``start_seq`` is its row id (rows are inserted in
#: increasing ids, from 1), so start requests go first in first out, after the other
#: requests of their priority and before those of lower priorities, whatever the order
#: of the others (Scrapy 2.13's start queues: ``ScrapyPriorityQueue.pop`` takes a
#: priority's regular queue before its start queue).
NOT_START = 0

# One index per queue order, led by the host, so that taking a host's next requests
# walks an index. (The indexes of older layouts are dropped: _OLD_INDEXES.)
_LIFO_INDEX = ("CREATE INDEX IF NOT EXISTS requests_host_lifo ON requests "
               "(host, leased, priority DESC, start_seq, id DESC)")
_FIFO_INDEX = ("CREATE INDEX IF NOT EXISTS requests_host_fifo ON requests "
               "(host, leased, priority DESC, start_seq, id)")
_OLD_INDEXES = ("DROP INDEX IF EXISTS requests_lifo; DROP INDEX IF EXISTS requests_fifo; "
                "DROP INDEX IF EXISTS requests_next_lifo; "
                "DROP INDEX IF EXISTS requests_next_fifo;")
_LIFO_NEXT = ("SELECT id, data, priority, start_seq FROM requests WHERE host = ? AND "
              "leased = 0 ORDER BY priority DESC, start_seq, id DESC LIMIT ?")
_FIFO_NEXT = ("SELECT id, data, priority, start_seq FROM requests WHERE host = ? AND "
              "leased = 0 ORDER BY priority DESC, start_seq, id LIMIT ?")
#: Each host's queued count and best sort key (``1 - max(2 * priority + not start)`` is
#: :func:`~crawlfw.core.frontier.hostqueues.sort_key` of its best row): the ready-set at open.
_HOST_HEADS = ("SELECT host, COUNT(*), 1 - MAX(priority * 2 + (start_seq = 0)) FROM "
               "requests WHERE leased = 0 GROUP BY host")
#: Most pushed requests :class:`SqliteFrontier` keeps as objects besides their rows (about
#: 1.5 KiB each): one leased from this cache is not rebuilt from its row (unpickled,
#: ``request_from_dict``), which was a third of the frontier's CPU in a crawl.
LIVE_CACHE_SIZE = 4096

_PUSH = "INSERT INTO requests (priority, data, host) VALUES (?, ?, ?)"
_PUSH_START = ("INSERT INTO requests (priority, data, host, start_seq) VALUES "
               "(?, ?, ?, (SELECT IFNULL(MAX(id), 0) + 1 FROM requests))")

class SqliteFrontier(FrontierBase):
    """The durable frontier of a ``JOBDIR``, in ``<JOBDIR>/frontier.sqlite``.

    Requests are stored as :func:`crawlfw.utils.reqser.request_to_dict` dicts, pickled
    (the JOBDIR is the crawl's own, trusted disk, and ``meta`` may hold items, as with
    Scrapy's pickle disk queues); callbacks and errbacks by spider method name. A
    request whose callback or errback is no method of the spider cannot be stored:
    ``push`` refuses it with an ERROR naming the request and the function (stat
    ``frontier/refused``), unless ``transient_ok``, for requests of the crawl's own
    machinery (``crawler.engine.download``, robots.txt fetches, shell fetches), which are
    kept in memory and not resumed.

    The dupefilter's fingerprints live in the same file when the dupefilter is an
    :class:`~crawlfw.dupefilters.RFPDupeFilter` (or subclass: its
    ``request_fingerprint`` is used); any other dupefilter is asked
    ``request_seen`` as usual and keeps its own state.

    A job knows its history: each commit raises a generation number (``meta``
    ``generation``), and once committed it is written with the job's id to
    ``<JOBDIR>/job.json`` (:data:`JOB_FILE`, replaced atomically). A frontier that is
    missing, of another job, or older than that record (a lost ``-wal`` file, a restored
    backup, a deleted file) is refused before anything is written, rather than silently
    starting a new job whose items would repeat the committed ones. The write-ahead log
    is checkpointed into the main file (``PRAGMA wal_checkpoint(TRUNCATE)``) at a run's
    first commit, at a clean close and every ``wal_checkpoint_s`` seconds, so
    ``frontier.sqlite`` alone is a consistent (if older) job.

    Args:
        jobdir: the ``JOBDIR`` (created if missing).
        dupefilter: the crawl's dupefilter.
        lifo: True for depth-first order within a priority (Scrapy 1.2's default
            ``PickleLifoDiskQueue``), False for breadth-first (FIFO queues). Either
            way, start requests (``meta['is_start_request']``) and revisits
            (:func:`~crawlfw.core.frontier.api.in_start_lane`) go first in first out,
            after the other requests of their priority (Scrapy 2.13's start queue;
            the ``start_seq`` column, durable: a resumed job keeps their order).
        fsync: True: every commit is on the disk before it returns (SQLite
            ``synchronous=FULL``), surviving a power loss; False: a commit survives the
            process dying (``kill -9``) but not the machine (``synchronous=NORMAL``).
        stats: the crawl's stats collector, or None.
        wal_checkpoint_s: most seconds between two checkpoints of the write-ahead log
            into the main file (``FRONTIER_WAL_CHECKPOINT_INTERVAL``).
        policy: the per-host politeness (:class:`~crawlfw.core.transport.hostpolicy.HostPolicy`);
            default: 8 at once per host, no delay.
        rng: the random generator of randomized delays (tests pass a seeded one).
        logunser: log the first request kept in memory because it cannot be stored
            (``LOG_UNSERIALIZABLE_REQUESTS``).

    Raises:
        JobLocked: another crawl uses the ``JOBDIR``.
        FrontierError: the file is not a frontier or is of another version, or the
            ``JOBDIR``'s history says its frontier is missing or older than what the job
            committed (the message names the file and says how to start over).
    """

    durable = True
    policy: HostPolicy
    hosts: HostQueues

    def __init__(self, jobdir: str, dupefilter: DupeFilter, *, lifo: bool = True,
                 fsync: bool = True, stats: StatsCollector | None = None,
                 wal_checkpoint_s: float = 30.0, policy: HostPolicy | None = None,
                 rng: random.Random | None = None, logunser: bool = False) -> None:
        self.jobdir = jobdir
        self.policy = policy if policy is not None else HostPolicy()
        self.hosts = HostQueues(self.policy, rng=rng)
        self.logunser = logunser
        self.path = os.path.join(jobdir, FRONTIER_FILE)
        self.df = dupefilter
        self.stats = stats
        self.spider = None
        self._fingerprint = (
            dupefilter.request_fingerprint if isinstance(dupefilter, RFPDupeFilter) else None
        )
        self._transient = MemoryHostStore(lifo=True)  # requests that cannot be stored
        self._taken: list[int] = []  # row ids taken by the lease under way
        # row id -> the request pushed as that row, while it waits (at most
        # LIVE_CACHE_SIZE; the row is the truth: a request not here is rebuilt from it)
        self._live: dict[int, Request] = {}
        self._seen_cache: set[str] = set()  # fingerprints known to be in ``seen`` (bounded)
        self._leased = 0
        self.job_path = os.path.join(jobdir, JOB_FILE)
        self.wal_checkpoint_s = wal_checkpoint_s
        self._last_wal_checkpoint = time.monotonic()
        self._wal_checkpointed = False  # not yet in this run
        os.makedirs(jobdir, exist_ok=True)
        # The lock before anything else in the JOBDIR (or any feed) is opened.
        self.lock = JobLock(jobdir)
        self.lock.acquire()
        try:
            self._open(lifo, fsync)
        except BaseException:
            self.lock.release()
            raise

    def _open(self, lifo: bool, fsync: bool) -> None:
        record = self._read_job_record()
        existed = os.path.exists(self.path)
        if record is not None and not existed:
            raise FrontierError(
                f"JOBDIR {self.jobdir}: {FRONTIER_FILE} is missing, but this job has "
                f"committed work ({JOB_FILE}: generation {record['generation']}); resuming "
                f"would start a new job and repeat its items: refused; {START_OVER}")
        try:
            self.conn = sqlite3.connect(self.path, check_same_thread=False,
                                        isolation_level="DEFERRED")
            if record is not None:  # checked before anything is written
                self._check_history(record)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute(f"PRAGMA synchronous={'FULL' if fsync else 'NORMAL'}")
            self.conn.executescript(_SCHEMA)
            self._add_start_seq()
            self.meta = self._read_meta()
            version = self.meta.get("schema_version")
            if version not in (None, 1, SCHEMA_VERSION):
                raise FrontierError(
                    f"{self.path} is a frontier of version {version}; this crawlfw reads "
                    f"versions 1 (migrated) and {SCHEMA_VERSION}: use a new JOBDIR"
                )
            if version == 1 or (version is None and existed):
                self._migrate_to_host_layout()
            self.conn.execute(_LIFO_INDEX if lifo else _FIFO_INDEX)
            self._next_sql = _LIFO_NEXT if lifo else _FIFO_NEXT
            if version != SCHEMA_VERSION:
                self.meta["schema_version"] = SCHEMA_VERSION
                self._write_meta({"schema_version": SCHEMA_VERSION})
            self.generation = self.meta.get("generation", 0)
            if "job" not in self.meta:  # a new job (or one of an older crawlfw)
                self.meta["job"] = uuid.uuid4().hex
                self._write_meta({"job": self.meta["job"]})
            # Leases are never durable: rows leased by a run that died are queued again.
            self.recovered = self.conn.execute(
                "UPDATE requests SET leased = 0 WHERE leased = 1").rowcount
            self._migrate_old_jobdir()
            self.conn.commit()
            # The ready-set: only hosts with queued requests, from one GROUP BY.
            queued = 0
            added = self.hosts.added
            for host, count, head in self.conn.execute(_HOST_HEADS):
                added(host, head, count)
                queued += count
            self._queued = queued
        except sqlite3.DatabaseError as e:
            raise FrontierError(f"Cannot open the frontier {self.path}: {e}") from e
        self.meta["resumed"] = existed

    def _read_job_record(self) -> dict[str, Any] | None:
        """The job's record (:data:`JOB_FILE`), or None when there is none (a new job,
        or a frontier copied alone, which is consistent by itself).

        Raises:
            FrontierError: the record exists but cannot be read.
        """
        record: dict[str, Any]
        try:
            with open(self.job_path, encoding="utf-8") as f:
                record = json.load(f)
            if not isinstance(record.get("job"), str) or not isinstance(
                    record.get("generation"), int):
                raise ValueError("no job id and generation")
        except FileNotFoundError:
            return None
        except (OSError, ValueError, AttributeError) as e:
            raise FrontierError(
                f"JOBDIR {self.jobdir}: cannot read the job's record {self.job_path} "
                f"({e}); if {FRONTIER_FILE} is the job to resume, remove {JOB_FILE}; "
                f"{START_OVER}") from e
        return record

    def _add_start_seq(self) -> None:
        """Give a frontier written by crawlfw < 0.3 (no ``start_seq`` column) the
        column: its queued rows become non-start requests (``NOT_START``; adding a
        column with a constant default rewrites no row), and its old indexes go."""
        columns = {row[1] for row in self.conn.execute("PRAGMA table_info(requests)")}
        if "start_seq" not in columns:
            self.conn.execute("ALTER TABLE requests ADD COLUMN start_seq INTEGER NOT NULL "
                              f"DEFAULT {NOT_START}")
            self.conn.executescript(_OLD_INDEXES)

    def _migrate_to_host_layout(self) -> None:
        """Give a frontier of schema version 1 (one queue for every host) the ``host``
        column, filled from each row's request (``meta['download_slot']`` or the URL's
        host name, :func:`~crawlfw.core.frontier.api.host_key`), and the per-host
        index; its old indexes go. In the open transaction, committed with the open."""
        columns = {row[1] for row in self.conn.execute("PRAGMA table_info(requests)")}
        if "host" not in columns:
            self.conn.execute("ALTER TABLE requests ADD COLUMN host TEXT NOT NULL DEFAULT ''")
        self.conn.executescript(_OLD_INDEXES)
        rows = self.conn.execute("SELECT id, data FROM requests").fetchall()
        updates = []
        for row_id, data in rows:
            d = pickle.loads(data)
            meta = d.get("meta") or {}
            host = meta.get("download_slot") if "download_slot" in meta else (
                urlsplit(d.get("url", "")).hostname or "")
            updates.append((host, row_id))
        self.conn.executemany("UPDATE requests SET host = ? WHERE id = ?", updates)
        logger.warning(
            "JOBDIR %(jobdir)s was written by an older crawlfw (frontier schema version "
            "1, one queue for every host): migrated %(n)d stored requests to per-host "
            "queues (version %(version)d)",
            {"jobdir": self.jobdir, "n": len(updates), "version": SCHEMA_VERSION})

    def _check_history(self, record: Mapping[str, Any]) -> None:
        """Refuse a frontier that is not the job ``record`` describes, or is older than
        its last commit. Reads only (nothing is written before this passes)."""
        conn = self.conn
        meta: dict[str, Any]
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
                        ).fetchone() is None:
            meta = {}
        else:
            meta = {k: json.loads(v) for k, v in conn.execute(
                "SELECT key, value FROM meta WHERE key IN ('job', 'generation')")}
        generation = meta.get("generation", 0)
        if meta.get("job") not in (None, record["job"]):
            problem = (f"{FRONTIER_FILE} belongs to another job ({meta['job']}, not "
                       f"{record['job']} of {JOB_FILE})")
        elif generation < record["generation"]:
            problem = (f"{FRONTIER_FILE} is older than what this job committed (commit "
                       f"{generation}, {JOB_FILE} says {record['generation']}): its "
                       f"write-ahead log ({FRONTIER_FILE}-wal) was lost, or it was "
                       f"restored from an older copy")
        else:
            return
        conn.close()
        raise FrontierError(
            f"JOBDIR {self.jobdir}: {problem}; resuming would repeat or lose committed "
            f"work: refused; {START_OVER}")

    def _write_job_record(self) -> None:
        """Replace :data:`JOB_FILE` with this job's id and last committed generation
        (a new file renamed over the old: never half written)."""
        tmp = self.job_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"job": self.meta["job"], "generation": self.generation}, f)
        os.replace(tmp, self.job_path)

    def checkpoint_log(self) -> None:
        """Move the write-ahead log into the main file now (the Scheduler does it after
        committing the feeds' starting lengths, so that the main file alone holds them:
        the run's first commit, which checkpoints too, came before the feeds opened).

        Raises:
            sqlite3.Error: the disk failed.
        """
        self._checkpoint_wal()

    def _checkpoint_wal(self) -> None:
        """Move the write-ahead log into the main file and empty it."""
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._last_wal_checkpoint = time.monotonic()
        self._wal_checkpointed = True

    # --- the queue ----------------------------------------------------------------------

    def open(self, spider: Spider) -> None:
        """Bind the spider whose methods are the requests' callbacks."""
        self.spider = spider
        if self._queued:
            logger.info(
                "Resuming crawl (%(queuesize)d requests scheduled, %(recovered)d of them "
                "in flight when the last run stopped)",
                {"queuesize": self._queued, "recovered": self.recovered},
                extra={"spider": spider},
            )

    def push(self, request: Request, *, transient_ok: bool = False) -> bool:
        """Queue ``request`` (inside the open transaction) unless the dupefilter drops it.

        Args:
            request: the request.
            transient_ok: keep a request that cannot be stored in memory instead of
                refusing it (see the class doc).

        Returns:
            bool: False when it was a duplicate or was refused.

        Raises:
            sqlite3.Error: the disk failed (the caller ends the crawl).
        """
        if not request.dont_filter and self._seen(request):
            self.df.log(request, self.spider)
            return False
        try:
            data = pickle.dumps(request_to_dict(request, self.spider, compact=True), 5)
        except (ValueError, pickle.PicklingError, TypeError, AttributeError) as e:
            if transient_ok:
                host = host_key(request)
                key = sort_key(request.priority, in_start_lane(request))
                self._transient.push(host, key, request)
                self.hosts.added(host, key)
                self._kept_in_memory(request)
                return True
            logger.error(
                "Request %(request)s refused: with a JOBDIR every request is stored, and "
                "this one cannot be: %(reason)s",
                {"request": request, "reason": e}, extra={"spider": self.spider},
            )
            self._inc("frontier/refused")
            return False
        start = in_start_lane(request)
        host = host_key(request)
        row = self.conn.execute(_PUSH_START if start else _PUSH,
                                (request.priority, data, host)).lastrowid
        if row is not None and len(self._live) < LIVE_CACHE_SIZE:
            self._live[row] = request
        self.hosts.added(host, sort_key(request.priority, start))
        self._queued += 1
        self._inc("scheduler/enqueued/disk")
        self._inc("scheduler/enqueued")
        return True

    def push_many(self, requests: Sequence[Request], *, transient_ok: bool = False,
                  start: Mapping[str, Any] | None = None) -> list[bool]:
        """Queue ``requests`` as :meth:`push` does one by one, in the open transaction
        (:meth:`FrontierBase.push_many <crawlfw.core.frontier.api.FrontierBase.push_many>`).

        With crawlfw's own :class:`~crawlfw.dupefilters.RFPDupeFilter` (its class, no
        method replaced on the instance) once its first duplicate was logged, a request
        whose fingerprint is in the in-memory seen cache (most links of a crawl) is
        answered here (the memo of a plain GET's fingerprint looked up inline, as
        :func:`~crawlfw.utils.request.request_fingerprint` does), and
        ``dupefilter/filtered`` counted once per batch; every other
        request goes through :meth:`push`. Same result as the general path
        (``tests/core/test_frontier_push_many.py`` compares both on a table of batches).

        Returns:
            list[bool]: per request, False when it was a duplicate or was refused.

        Raises:
            sqlite3.Error: the disk failed (the caller ends the crawl).
        """
        df = self.df
        fingerprint = self._fingerprint
        if (fingerprint is None or df.__class__ is not RFPDupeFilter
                or _REPLACEABLE & vars(df).keys()):
            return super().push_many(requests, transient_ok=transient_ok, start=start)
        cache = self._seen_cache
        push = self.push
        get_fingerprints = _GET_FINGERPRINTS
        spider = self.spider
        queued: list[bool] = []
        append = queued.append
        filtered = 0
        try:
            for request in requests:
                if not request.dont_filter and not (df.logdupes or df.debug):
                    # request_fingerprint's memo of a plain GET, looked up inline
                    fp = (get_fingerprints.get(request._url)
                          if request.__class__ is _Request and request.method == "GET"
                          and not request._body else None)
                    if fp is not None:
                        seen = fp in cache
                    else:
                        try:
                            seen = fingerprint(request) in cache
                        except Exception:  # push() contains and reports it
                            seen = False
                    if seen:
                        filtered += 1
                        append(False)
                        continue
                append(push(request, transient_ok=transient_ok))
        finally:
            if filtered:  # (open() bound the spider before any push)
                spider.crawler.stats.inc_value(  # type: ignore[union-attr]
                    "dupefilter/filtered", filtered, spider=spider)
        self._count_start(start)
        return queued

    def _seen(self, request: Request) -> bool:
        if self._fingerprint is None:
            return self.df.request_seen(request)
        try:
            fp = self._fingerprint(request)
        except Exception:  # a custom dupefilter's code: contained, the request goes on
            logger.error("Error in %(df)s.request_fingerprint(%(request)s): the request is "
                         "scheduled unfiltered", {"df": type(self.df).__name__,
                                                  "request": request},
                         exc_info=True, extra={"spider": self.spider})
            self._inc("hook_errors/dupefilter")
            return False
        cache = self._seen_cache
        if fp in cache:  # most links were seen before: answered without SQLite
            return True
        if len(cache) >= SEEN_CACHE_SIZE:
            cache.clear()
        cache.add(fp)
        return not self.conn.execute("INSERT OR IGNORE INTO seen VALUES (?)",
                                     (bytes.fromhex(fp),)).rowcount

    def lease(self, n: int, now_s: float | None = None) -> list[Request]:
        """Take up to ``n`` requests of ready hosts (:mod:`crawlfw.core.frontier.hostqueues`),
        next first; each gets ``request._lease`` (the row id; None for a transient
        request, which is not tracked), ``_host`` and ``_paced``.

        Raises:
            sqlite3.Error: the disk failed.
        """
        if _faults.holding("frontier.lease_none"):  # fault injection: a stuck frontier
            return []
        taken: list[int]
        self._taken = taken = []
        out = self.hosts.lease(n, time.monotonic() if now_s is None else now_s, self._take)
        if taken:
            self.conn.executemany("UPDATE requests SET leased = 1 WHERE id = ?",
                                  [(i,) for i in taken])
            self._queued -= len(taken)
            self._leased += len(taken)
            self._inc("scheduler/dequeued/disk", len(taken))
            _faults.hit("frontier.after_lease")
        if out:
            self._inc("scheduler/dequeued", len(out))
        return out

    def _take(self, host: str, limit: int, bound: int | None) -> tuple[list[Request], int | None]:
        """``take`` of :meth:`HostQueues.lease <crawlfw.core.frontier.hostqueues.HostQueues.lease>`:
        the host's transient requests first, then its rows in queue order (one indexed
        SELECT of at most ``limit + 1`` rows: the one past those taken is the new head).
        The rows' ids go to ``self._taken`` (marked leased by :meth:`lease`)."""
        out: list[Request]
        head: int | None
        out, head = [], None
        transient = self._transient
        if len(transient) and host in transient.hosts:
            out, head = transient.take(host, limit, bound)
        want = limit - len(out)
        spider = self.spider
        taken = self._taken
        live = self._live
        for row_id, data, priority, start_seq in self.conn.execute(
                self._next_sql, (host, want + 1)):
            key = -2 * priority + 1 if start_seq else -2 * priority
            if len(out) >= limit or (out and bound is not None and key > bound):
                if head is None or key < head:
                    head = key
                break
            request = live.pop(row_id, None)  # the object pushed, as the row holds it
            if request is None:
                request = request_from_dict(pickle.loads(data), spider)
            request._lease = row_id
            out.append(request)
            taken.append(row_id)
        return out, head

    def release(self, requests: Iterable[Request]) -> None:
        """Queue leased requests again (the same rows; transient ones in memory); their
        hosts' in-flight counts go down."""
        ids: list[tuple[int]] = []
        hosts = self.hosts
        for request in requests:
            host = request._host
            key = sort_key(request.priority, in_start_lane(request))
            if request._lease is None:
                self._transient.push(host if host is not None else host_key(request), key,
                                     request)
            else:
                ids.append((request._lease,))  # rebuilt from its row when leased again
                # (the downloader middlewares may have changed this object)
            if host is None:
                hosts.added(host_key(request), key)
            else:
                request._host = None
                hosts.released(host, key)
        if ids:
            self.conn.executemany("UPDATE requests SET leased = 0 WHERE id = ?", ids)
            self._queued += len(ids)
            self._leased -= len(ids)

    def ack(self, lease_ids: Sequence[int]) -> None:
        """Forget leased requests whose work is durable (deleted at the next commit)."""
        if lease_ids:
            self.conn.executemany("DELETE FROM requests WHERE id = ?",
                                  [(i,) for i in lease_ids])
            self._leased -= len(lease_ids)

    def commit(self, meta: Mapping[str, Any] | None = None) -> None:
        """Write ``meta`` (JSON-able values by key) and commit everything since the last
        commit in one transaction.

        Raises:
            sqlite3.Error: the disk failed; nothing of this transaction is durable.
        """
        self.generation += 1
        self.set_meta({**meta, "generation": self.generation} if meta
                      else {"generation": self.generation})
        _faults.hit("frontier.in_commit")
        try:
            self.conn.commit()
        except BaseException:
            self.generation -= 1
            raise
        _faults.hit("frontier.after_commit")
        self._write_job_record()
        # The first commit of a run too: the main file then always holds the job (its
        # id, its feeds' starting lengths), never only the log.
        if (not self._wal_checkpointed
                or time.monotonic() - self._last_wal_checkpoint >= self.wal_checkpoint_s):
            self._checkpoint_wal()

    def close(self, reason: str) -> list[Request]:
        """Commit what is pending (a clean stop keeps acked work) and close the file.

        Returns:
            list: transient requests still queued (lost: they are not stored).
        """
        left = self._transient.drain()
        try:
            if reason != "start_failed":  # a refused start commits nothing
                _faults.hit("frontier.in_close")
                self.commit()
            self._checkpoint_wal()  # frontier.sqlite alone is the whole job
        finally:
            try:
                self.conn.close()
            finally:
                self.lock.release()
        return left

    def __len__(self) -> int:
        return self._queued + len(self._transient)

    def describe_pending(self) -> dict[str, Any]:
        """What the frontier holds, for a stalled crawl's report (reads only).

        Returns:
            dict: ``{'queued': int, 'leased': int, 'in memory': int, 'oldest': str}``:
            counts as this object keeps them, and the oldest stored request with who
            holds its lease (this crawl, named by its pid, or nobody).
        """
        out: dict[str, Any] = {"queued": self._queued, "leased": self._leased,
               "in memory": len(self._transient)}
        row = self.conn.execute(
            "SELECT id, leased, data FROM requests ORDER BY id LIMIT 1").fetchone()
        if row is None:
            out["oldest"] = "none stored (the counts disagree with the file)"
        else:
            data = pickle.loads(row[2])
            holder = (f"leased by this crawl (pid {os.getpid()}), not in flight" if row[1]
                      else "queued, leased by nobody")
            out["oldest"] = (f"<{data.get('method', 'GET')} {data.get('url')}> "
                             f"(row {row[0]}, {holder})")
        return out

    # --- metadata -----------------------------------------------------------------------

    def set_meta(self, meta: Mapping[str, Any]) -> None:
        """Write ``meta`` (JSON-able values by key) inside the open transaction: durable
        with the next commit, together with the pushes and acks before it."""
        self._write_meta(meta)
        self.meta.update(meta)

    def _read_meta(self) -> JobMeta:
        meta = JobMeta()
        for key, value in self.conn.execute("SELECT key, value FROM meta"):
            meta[key] = json.loads(value)
        return meta

    def _write_meta(self, meta: Mapping[str, Any]) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [(k, json.dumps(v)) for k, v in meta.items()],
        )

    # --- the JOBDIR format of crawlfw < 0.2 (Scrapy 1.2's) ------------------------------

    def _migrate_old_jobdir(self) -> None:
        """Move ``requests.queue/`` (pickled disk queues) and ``requests.seen`` (hex
        fingerprints), written by earlier versions, into this frontier, in the open
        transaction; the old files are renamed ``*.migrated`` after the commit."""
        queue_dir = os.path.join(self.jobdir, "requests.queue")
        seen_file = os.path.join(self.jobdir, "requests.seen")
        if not (os.path.isdir(queue_dir) or os.path.isfile(seen_file)):
            return
        if self.meta.get("migrated"):
            raise FrontierError(
                f"{self.jobdir} holds both {FRONTIER_FILE} and an old-format queue "
                f"(requests.queue/, requests.seen) that was already migrated: remove the "
                f"old files"
            )
        moved = fps = 0
        if os.path.isfile(seen_file):
            with open(seen_file, encoding="ascii") as f:
                rows = [(bytes.fromhex(line.strip()),) for line in f if line.strip()]
            self.conn.executemany("INSERT OR IGNORE INTO seen VALUES (?)", rows)
            fps = len(rows)
        active = os.path.join(queue_dir, "active.json")
        if os.path.isfile(active):
            from crawlfw.squeues import PickleLifoDiskQueue

            with open(active) as f:
                prios = json.load(f)
            queues = PriorityQueue(
                lambda p: PickleLifoDiskQueue(os.path.join(queue_dir, f"p{p}")), startprios=prios)
            while True:
                d = queues.pop()
                if d is None:
                    break
                meta = d.get("meta") or {}
                host = meta.get("download_slot") if "download_slot" in meta else (
                    urlsplit(d.get("url", "")).hostname or "")
                self.conn.execute(_PUSH, (d.get("priority", 0), pickle.dumps(d, 5), host))
                moved += 1
        self._write_meta({"migrated": True})
        self.conn.commit()
        for old in (queue_dir, seen_file):
            if os.path.exists(old):
                os.replace(old, old + ".migrated")
        logger.warning(
            "JOBDIR %(jobdir)s was written by an older crawlfw (requests.queue/, "
            "requests.seen): migrated %(moved)d queued requests and %(fps)d fingerprints "
            "into %(file)s; the old files are kept as *.migrated",
            {"jobdir": self.jobdir, "moved": moved, "fps": fps, "file": FRONTIER_FILE},
        )
