"""The revisit schedule's stores (issue 32): where the records of
:mod:`crawlfw.core.frontier.revisit` live.

- :class:`MemoryRevisitSchedule` (no ``JOBDIR``): a dict of packed records by fingerprint
  and a heap by due time (stale heap entries are skipped and compacted away).
- :class:`SqliteRevisitSchedule` (``JOBDIR``): the ``revisits`` table of the job's
  ``frontier.sqlite``, written inside the frontier's open transaction, so it is
  committed with the frontier's checkpoint.
- :class:`SpillingRevisitSchedule` (no ``JOBDIR``): the in-memory one, moved whole to a
  private temporary SQLite file past its share of ``FRONTIER_MEMORY_LIMIT``.

The Redis one (``FRONTIER_URL``) is :mod:`crawlfw.core.frontier.redis_revisit`.
"""

from __future__ import annotations

import heapq
import pickle
import sqlite3
import struct
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from crawlfw.core.frontier.revisit import (
    RevisitConfig,
    RevisitRecord,
    _marshal_dumps,
    _marshal_loads,
    adapt_interval,
    revisit_request,
    stored_request,
)

if TYPE_CHECKING:
    from crawlfw.http import Request
    from crawlfw.spiders import Spider

__all__ = [
    "MemoryRevisitSchedule",
    "QUEUE_MIN_SHARE",
    "SpillingRevisitSchedule",
    "SqliteRevisitSchedule",
]


class _ScheduleBase:
    """What both schedules share: applying a visit's outcome (:meth:`visited`)."""

    config: RevisitConfig
    spider: Spider | None = None
    #: How stored requests are written (None: pickled) and read.
    dumps: Any = None
    loads: Any = staticmethod(pickle.loads)
    #: :func:`middleware_defaults` of the crawl (set when the schedule is opened): what
    #: stored requests leave out. None: they keep every header.
    defaults: Any = None

    #: Records found due at the last :meth:`take_due` but not taken, their revisit
    #: still out (the shared schedule's claims; the others leave that to the Scheduler).
    still_queued = 0

    def request_of(self, record: RevisitRecord) -> Request:
        """The conditional-GET request of ``record`` (:func:`revisit_request`)."""
        return revisit_request(record, self.spider, self.loads)

    #: Now in the schedule's clock (wall-clock seconds): its due times are in it.
    clock = staticmethod(time.time)

    def pushed(self, records: list[RevisitRecord]) -> None:
        """The revisits of ``records`` (taken by :meth:`take_due`) are in the frontier
        now (the shared schedule confirms their claims; nothing to do here)."""

    def in_flight(self) -> int | None:
        """Revisits out now, as the schedule knows (the shared one: every worker's);
        None: the Scheduler counts its own."""
        return None

    def get(self, fp: bytes) -> RevisitRecord | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def put(self, record: RevisitRecord) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def remove(self, fp: bytes) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def visited(self, visit: dict[str, Any], now: float) -> str:
        """Apply one visit (a :func:`classify` dict) at wall-clock ``now``.

        Returns:
            what happened: ``'scheduled'`` (a new page), ``'changed'``,
            ``'unchanged'``, ``'gone'`` (the record waits for the next try),
            ``'dropped'`` (gone ``REVISIT_GONE_LIMIT`` times, or opted out: no more
            revisits), ``'not_stored'`` (a new page whose request cannot be stored: a
            callback that is no spider method, a ``meta`` value that cannot be written),
            ``'ignored'`` (nothing to do: an unknown page's 404 or opt-out, a failed
            revisit).
        """
        config = self.config
        fp = bytes.fromhex(visit["fp"])
        moved_from = visit.get("moved_from")
        old_fp = bytes.fromhex(moved_from) if moved_from else fp
        record = self.get(old_fp)
        outcome = visit["outcome"]
        if outcome == "failed":  # the record keeps the due time take_due gave it
            return "ignored"
        if outcome == "forget":
            if record is not None:
                self.remove(old_fp)
            if fp != old_fp and self.get(fp) is not None:
                self.remove(fp)
            return "dropped" if record is not None else "ignored"
        if outcome == "gone":
            if record is None:
                return "ignored"
            record.gone += 1
            if record.gone >= config.gone_limit:
                self.remove(old_fp)
                return "dropped"
            record.due = now + record.interval
            self.put(record)
            return "gone"
        fixed = visit.get("interval")
        if outcome == "new" and record is not None:  # met again (a dont_filter request)
            outcome = "changed" if record.digest != visit["digest"] else "unchanged"
        if record is None:
            try:
                blob = stored_request(visit["request"], self.spider, self.dumps,
                                      self.defaults)
            except (ValueError, pickle.PicklingError, TypeError, AttributeError):
                return "not_stored"
            interval = fixed if fixed is not None else config.interval_s
            record = RevisitRecord(fp, blob, now + interval, interval, visit["etag"],
                                   visit["last_modified"], visit["digest"],
                                   fixed=fixed is not None)
            if old_fp != fp and self.get(old_fp) is not None:
                self.remove(old_fp)
            self.put(record)
            return "scheduled"
        changed = outcome == "changed"
        if fixed is not None:
            record.interval, record.fixed = fixed, True
        elif config.adaptive and not record.fixed:
            record.interval = adapt_interval(record.interval, changed, config.min_s,
                                             config.max_s)
        elif record.fixed:  # the callback no longer sets it: back to the default
            record.interval, record.fixed = config.interval_s, False
        record.etag = visit["etag"]
        record.last_modified = visit["last_modified"]
        record.digest = visit["digest"]
        record.gone = 0
        record.due = now + record.interval
        if changed or old_fp != fp:  # the request as the site now leads to it
            try:
                # at the page's priority (a retry or a redirect changed the request's)
                priority = self.loads(record.request).get("priority", 0)
                record.request = stored_request(visit["request"], self.spider,
                                                self.dumps, self.defaults, priority)
            except (ValueError, pickle.PicklingError, TypeError, AttributeError):
                pass  # keep the stored one
        if old_fp != fp:
            self.remove(old_fp)
            record.fp = fp
        self.put(record)
        return "changed" if changed else "unchanged"


#: Bytes a page of the in-memory schedule takes besides its packed record (a ``bytes``
#: object: :func:`_pack`): its fingerprint (a 20-byte ``bytes``, 53), its entry in the
#: dict (~40 with the table's slack) and its heap entry (a ``(due, fingerprint)``
#: tuple, 56, its float, 24, and the heap's slot, 8; stale entries, up to as many again,
#: are not counted). ``tests/core/test_revisit.py`` measures the whole with tracemalloc.
_ENTRY_COST = 53 + 40 + 56 + 24 + 8
#: ... and the ``bytes`` object's header (33).
_RECORD_COST = _ENTRY_COST + 33


def _pack(record: RevisitRecord) -> bytes:
    """``record`` as the in-memory schedule keeps it: one ``bytes`` object, its due time
    and interval (little-endian doubles), gone count (4 bytes) and fixed flag (1 byte),
    then :func:`marshal.dumps` of ``(etag, last_modified, digest, stored request)``, the
    digest as its 16 raw bytes when it is the usual 32-digit hex. Private to the
    process, as the frontier's compact records are."""
    digest: Any = record.digest
    if digest is not None and len(digest) == 32:
        try:
            digest = bytes.fromhex(digest)
        except ValueError:
            pass
    return _HEAD.pack(record.due, record.interval, record.gone, record.fixed) + _marshal_dumps(
        (record.etag, record.last_modified, digest, record.request))


def _unpack(fp: bytes, packed: bytes) -> RevisitRecord:
    """The :class:`RevisitRecord` of fingerprint ``fp`` that :func:`_pack` packed."""
    due, interval, gone, fixed = _HEAD.unpack_from(packed)
    etag, last_modified, digest, request = _marshal_loads(memoryview(packed)[_HEAD.size:])
    if digest.__class__ is bytes:
        digest = digest.hex()
    return RevisitRecord(fp, request, due, interval, etag, last_modified, digest, gone,
                         bool(fixed))


_HEAD = struct.Struct("<ddIB")
_due_of = _interval_of = struct.Struct("<d").unpack_from
_pack_due = struct.Struct("<d").pack


class MemoryRevisitSchedule(_ScheduleBase):
    """The schedule in memory (no ``JOBDIR``): a dict fingerprint -> packed record (one
    ``bytes`` object a page: :func:`_pack`; :meth:`get` and :meth:`take_due` give
    :class:`RevisitRecord` copies, which :meth:`put` stores back) and a heap of
    ``(due, fingerprint)``; an entry whose due time no longer is its record's is stale,
    skipped when popped, and the heap is rebuilt when stale entries outnumber records.

    Args:
        config: the :class:`RevisitConfig`.
        spider: the spider (stored requests name its methods); settable later.
    """

    durable = False

    def __init__(self, config: RevisitConfig, spider: Spider | None = None) -> None:
        self.config = config
        self.spider = spider
        self.records: dict[bytes, bytes] = {}  # fingerprint -> _pack(record)
        self._heap: list[tuple[float, bytes]] = []
        self._bytes = 0

    def get(self, fp: bytes) -> RevisitRecord | None:
        """The record of fingerprint ``fp`` (20 bytes), or None (a copy: :meth:`put` it
        back to change it)."""
        packed = self.records.get(fp)
        return None if packed is None else _unpack(fp, packed)

    def put(self, record: RevisitRecord) -> None:
        """Add or update ``record`` (its ``due`` time is what counts from now on)."""
        fp, records = record.fp, self.records
        packed = _pack(record)
        old = records.get(fp)
        self._bytes += len(packed) - (len(old) if old is not None else -_RECORD_COST)
        records[fp] = packed
        self._push(record.due, fp)

    def _push(self, due: float, fp: bytes) -> None:
        """A heap entry for ``fp``'s new due time (the one before goes stale); the heap
        is rebuilt once stale entries outnumber the records."""
        heap, records = self._heap, self.records
        heapq.heappush(heap, (due, fp))
        if len(heap) > 2 * len(records) + 64:
            self._heap = [(_due_of(p)[0], f) for f, p in records.items()]
            heapq.heapify(self._heap)

    def remove(self, fp: bytes) -> None:
        """Forget the record of ``fp`` (its heap entry goes stale)."""
        old = self.records.pop(fp, None)
        if old is not None:
            self._bytes -= _RECORD_COST + len(old)

    def _top(self) -> tuple[float, bytes] | None:
        heap, records = self._heap, self.records
        while heap:
            due, fp = heap[0]
            packed = records.get(fp)
            if packed is not None and _due_of(packed)[0] == due:
                return due, fp
            heapq.heappop(heap)
        return None

    def next_due(self) -> float | None:
        """The earliest due time (wall clock), or None when the schedule is empty."""
        top = self._top()
        return None if top is None else top[0]

    def take_due(self, now: float, limit: int) -> list[RevisitRecord]:
        """Up to ``limit`` records due at ``now``, earliest first; each one's due time
        moves one interval on (the visit's outcome sets it again)."""
        taken: list[bytes] = []
        heap, records = self._heap, self.records
        while len(taken) < limit:
            top = self._top()
            if top is None or top[0] > now:
                break
            heapq.heappop(heap)
            taken.append(top[1])
        out: list[RevisitRecord] = []
        for fp in taken:  # the due time rewritten in place: same size, nothing else packed
            packed = records[fp]
            due = now + _interval_of(packed, 8)[0]
            records[fp] = packed = _pack_due(due) + packed[8:]
            self._push(due, fp)
            out.append(_unpack(fp, packed))
        return out

    def count_due(self, now: float) -> int:
        """Records due at ``now`` not yet taken."""
        return sum(1 for packed in self.records.values() if _due_of(packed)[0] <= now)

    def memory_bytes(self) -> int:
        """About the bytes the schedule takes: per page its packed record (a ``bytes``
        of ~70 bytes plus the stored request and validators) and :data:`_RECORD_COST`,
        besides stale heap entries."""
        return self._bytes

    def commit(self) -> None:
        """Nothing to do: memory only."""

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[RevisitRecord]:
        return iter([_unpack(fp, packed) for fp, packed in self.records.items()])


_SCHEMA = """
CREATE TABLE IF NOT EXISTS revisits (
    fp BLOB PRIMARY KEY,
    due REAL NOT NULL,
    interval REAL NOT NULL,
    etag TEXT,
    last_modified TEXT,
    digest TEXT,
    gone INTEGER NOT NULL DEFAULT 0,
    fixed INTEGER NOT NULL DEFAULT 0,
    request BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS revisits_due ON revisits (due);
"""

_COLUMNS = "fp, request, due, interval, etag, last_modified, digest, gone, fixed"


def _row_record(row: tuple[Any, ...]) -> RevisitRecord:
    return RevisitRecord(bytes(row[0]), bytes(row[1]), row[2], row[3], row[4], row[5],
                         row[6], row[7], bool(row[8]))


class SqliteRevisitSchedule(_ScheduleBase):
    """The schedule in the job's ``frontier.sqlite`` (``JOBDIR``): table ``revisits``
    (one row per page, an index on ``due``), written on the frontier's connection inside
    its open transaction: the frontier's :meth:`commit` (its checkpoint) makes it durable
    with the leases it acks. Nothing is kept in memory.

    Args:
        conn: the frontier's ``sqlite3`` connection.
        config: the :class:`RevisitConfig`.
        spider: the spider; settable later.

    Raises:
        sqlite3.Error: the table cannot be created.
    """

    durable = True

    def __init__(self, conn: sqlite3.Connection, config: RevisitConfig,
                 spider: Spider | None = None) -> None:
        self.conn = conn
        self.config = config
        self.spider = spider
        for statement in _SCHEMA.strip().split(";"):
            if statement.strip():
                conn.execute(statement)
        self._count: int = conn.execute("SELECT COUNT(*) FROM revisits").fetchone()[0]

    def get(self, fp: bytes) -> RevisitRecord | None:
        """The record of fingerprint ``fp``, or None."""
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM revisits WHERE fp = ?",
                                (fp,)).fetchone()
        return None if row is None else _row_record(row)

    def put(self, record: RevisitRecord) -> None:
        """Insert or replace ``record``'s row."""
        cur = self.conn.execute("UPDATE revisits SET request = ?, due = ?, interval = ?, "
                                "etag = ?, last_modified = ?, digest = ?, gone = ?, "
                                "fixed = ? WHERE fp = ?",
                                (record.request, record.due, record.interval, record.etag,
                                 record.last_modified, record.digest, record.gone,
                                 int(record.fixed), record.fp))
        if cur.rowcount == 0:
            self.conn.execute(f"INSERT INTO revisits ({_COLUMNS}) VALUES "
                              f"(?, ?, ?, ?, ?, ?, ?, ?, ?)",
                              (record.fp, record.request, record.due, record.interval,
                               record.etag, record.last_modified, record.digest,
                               record.gone, int(record.fixed)))
            self._count += 1

    def remove(self, fp: bytes) -> None:
        """Delete the row of ``fp``."""
        self._count -= int(self.conn.execute("DELETE FROM revisits WHERE fp = ?",
                                             (fp,)).rowcount)

    def next_due(self) -> float | None:
        """The earliest due time (wall clock), or None when the schedule is empty."""
        row = self.conn.execute("SELECT MIN(due) FROM revisits").fetchone()
        return None if row[0] is None else float(row[0])

    def take_due(self, now: float, limit: int) -> list[RevisitRecord]:
        """Up to ``limit`` records due at ``now``, earliest first; each one's due time
        moves one interval on (in the open transaction)."""
        rows = self.conn.execute(f"SELECT {_COLUMNS} FROM revisits WHERE due <= ? "
                                 f"ORDER BY due LIMIT ?", (now, limit)).fetchall()
        out = [_row_record(row) for row in rows]
        if out:
            self.conn.executemany("UPDATE revisits SET due = ? + interval WHERE fp = ?",
                                  [(now, r.fp) for r in out])
        for record in out:
            record.due = now + record.interval
        return out

    def count_due(self, now: float) -> int:
        """Records due at ``now`` not yet taken."""
        count: int = self.conn.execute("SELECT COUNT(*) FROM revisits WHERE due <= ?",
                                       (now,)).fetchone()[0]
        return count

    def memory_bytes(self) -> int:
        """0: the records are on disk."""
        return 0

    def commit(self) -> None:
        """Nothing to do: the frontier's commit includes the schedule."""

    def __len__(self) -> int:
        return int(self._count)

    def __iter__(self) -> Iterator[RevisitRecord]:
        rows = self.conn.execute(f"SELECT {_COLUMNS} FROM revisits ORDER BY due").fetchall()
        return iter([_row_record(row) for row in rows])


#: The least share of ``FRONTIER_MEMORY_LIMIT`` the frontier's queue keeps for itself
#: beside an in-memory revisit schedule; the schedule moves to disk past the rest.
QUEUE_MIN_SHARE = 0.25


class SpillingRevisitSchedule(_ScheduleBase):
    """The schedule without a ``JOBDIR``, on the frontier's memory budget
    (``FRONTIER_MEMORY_LIMIT``, ``limit_bytes``), shared with the queued requests: in
    memory (:class:`MemoryRevisitSchedule`) while it takes at most
    ``(1 - QUEUE_MIN_SHARE)`` of the budget, the queue keeping to what the schedule
    leaves (``queue.limit_bytes`` is set to the budget less the schedule's bytes, at
    least :data:`QUEUE_MIN_SHARE` of it: past that the queue moves its worst entries to
    its spill file as it does past the whole budget); then the schedule moves whole into
    a private temporary SQLite file (the frontier's spill directory: ``$TMPDIR``, else
    ``/var/tmp``; unlinked at once, so its space goes with the process), kept there as a
    :class:`SqliteRevisitSchedule` (nothing of it in memory), and the queue has the whole
    budget again. The two together stay within the budget.

    Args:
        config: the :class:`RevisitConfig`.
        spider: the spider; settable later (:attr:`spider`).
        limit_bytes: the RAM budget (bytes); 0: no limit.
        queue: the frontier's queue store (whose ``limit_bytes`` this sets), or None
            (the schedule alone on the budget).

    Raises:
        crawlfw.core.frontier.frontier.FrontierError: from :meth:`put`, when the
            temporary file cannot be made.
    """

    durable = False

    def __init__(self, config: RevisitConfig, spider: Spider | None = None,
                 limit_bytes: int = 0, queue: Any = None) -> None:
        self.config = config
        self._spider = spider
        self.limit_bytes = max(0, int(limit_bytes or 0))
        self.inner: MemoryRevisitSchedule | SqliteRevisitSchedule = MemoryRevisitSchedule(
            config, spider)
        self.file: Any = None  # the SpillFile once spilled
        self.queue = queue if self.limit_bytes else None
        self._own_limit = int(self.limit_bytes * (1 - QUEUE_MIN_SHARE))
        self._queue_floor = self.limit_bytes - self._own_limit

    @property
    def spider(self) -> Spider | None:
        return self._spider

    @spider.setter
    def spider(self, spider: Spider | None) -> None:
        self._spider = spider
        self.inner.spider = spider

    def get(self, fp: bytes) -> RevisitRecord | None:
        """The record of ``fp``, or None."""
        return self.inner.get(fp)

    def put(self, record: RevisitRecord) -> None:
        """Add or update ``record``; past its share of the budget, the schedule moves to
        disk (and the queue has the whole budget again)."""
        inner = self.inner
        inner.put(record)
        if self.limit_bytes and self.file is None and isinstance(inner, MemoryRevisitSchedule):
            used = inner.memory_bytes()
            if used > self._own_limit:
                self._spill(inner)
                used = 0
            if self.queue is not None:
                self.queue.limit_bytes = max(self.limit_bytes - used, self._queue_floor)

    def _spill(self, memory: MemoryRevisitSchedule) -> None:
        import logging

        from crawlfw.core.frontier.spill import SpillFile

        self.file = SpillFile()
        conn = self.file.conn
        disk = SqliteRevisitSchedule(conn, self.config, self._spider)
        conn.execute("BEGIN")
        for record in memory:
            disk.put(record)
        conn.execute("COMMIT")
        self.file.close_dir()  # the open file stays; nothing is left on disk by name
        logging.getLogger(__name__).info(
            "The revisit schedule (%(n)d pages) exceeds its share of FRONTIER_MEMORY_LIMIT "
            "(%(share)d of %(limit)d bytes; the queued requests keep the rest): moved to a "
            "temporary file", {"n": len(memory), "share": self._own_limit,
                               "limit": self.limit_bytes})
        self.inner = disk

    def remove(self, fp: bytes) -> None:
        """Forget the record of ``fp`` (its bytes go back to the queue's share)."""
        inner = self.inner
        inner.remove(fp)
        if self.queue is not None and self.file is None:
            self.queue.limit_bytes = max(self.limit_bytes - inner.memory_bytes(),
                                         self._queue_floor)

    def next_due(self) -> float | None:
        """The earliest due time, or None."""
        return self.inner.next_due()

    def take_due(self, now: float, limit: int) -> list[RevisitRecord]:
        """Up to ``limit`` records due at ``now`` (see :meth:`MemoryRevisitSchedule.take_due`)."""
        return self.inner.take_due(now, limit)

    def count_due(self, now: float) -> int:
        """Records due at ``now`` not yet taken."""
        return self.inner.count_due(now)

    def memory_bytes(self) -> int:
        """Bytes the schedule takes in memory (0 once moved to disk)."""
        return self.inner.memory_bytes()

    def disk_bytes(self) -> int:
        """Bytes of the temporary file (0 while in memory)."""
        return self.file.size_bytes() if self.file is not None else 0

    def close(self) -> None:
        """Close the temporary file, if any (its space is freed)."""
        if self.file is not None:
            self.file.close()
            self.file = None

    def commit(self) -> None:
        """Nothing to do: temporary."""

    def __len__(self) -> int:
        return len(self.inner)

    def __iter__(self) -> Iterator[RevisitRecord]:
        return iter(self.inner)
