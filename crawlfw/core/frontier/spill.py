"""The in-memory frontier's storage on a memory budget: per-host heads in RAM as compact
records, tails spilled to a private SQLite file (issue 30).

:class:`SpillingHostStore` is the storage of
:class:`~crawlfw.core.frontier.frontier.MemoryFrontier` (``take`` for
:meth:`HostQueues.lease <crawlfw.core.frontier.hostqueues.HostQueues.lease>`, as
:class:`~crawlfw.core.frontier.hostqueues.MemoryHostStore`). Per host it keeps the best
part of the queue in RAM and the rest on disk, with one invariant: **every entry of a
host in RAM sorts before every entry of it on disk**. So the host's next requests are
always its RAM part's first ones, whatever was spilled, and the order in which requests
leave is exactly the order of a store without a budget (``tests/core/test_spill.py``
compares them on seeded random pushes, leases, releases and finishes).

Order within a host: sort key (:func:`~crawlfw.core.frontier.hostqueues.sort_key`), then
a position ``p``: within one key, LIFO (even keys when ``lifo``) serves the newest first,
FIFO (odd keys, the start requests, always; even keys when not ``lifo``) the oldest.
In RAM the position is the place in the key's list (LIFO: best at the end) or deque
(FIFO: best at the left); on disk it is the ``p`` column, drawn from two counters: a
decreasing one for entries that go before every entry of their key on disk (a LIFO
push, and the entries an eviction moves down, which are better than what is on disk),
an increasing one for those that go after (a FIFO push).

- **Push**: into RAM when the host has nothing on disk, or the request sorts before
  the host's worst RAM entry (a better key; or the same key and LIFO, where the newest
  is best); else onto disk. Pushes to disk are buffered and written in batches.
- **Budget**: RAM is counted (records' bytes plus fixed costs per entry and per host
  with a RAM part, :data:`RECORD_COST`, :data:`HOST_COST`); past ``limit_bytes`` an
  eviction brings it down to :data:`LOW_WATER` of the limit: it finds the level ``L``
  such that trimming every host's RAM part to ``L`` entries frees enough, and moves
  the worst entries of the hosts above it to disk (the largest queues first; with
  ``L = 0`` the heads go too, so a million hosts of one request each fit the budget,
  apart from :class:`~crawlfw.core.frontier.hostqueues.HostQueues`' own state per
  host).
- **Take**: from RAM; a host whose RAM part runs dry reloads its next entries from
  disk (one indexed ``SELECT`` and one ``DELETE`` per batch).
- Requests that take the general path (:mod:`crawlfw.core.frontier.compact`: a body,
  a lambda callback...) stay objects in memory whatever the budget; when their place
  in the queue is on disk, the disk row holds the number of the object instead.

The disk part (:class:`SpillFile`) is made on the first spill, in a private scratch
directory ``<root>/frontier-<pid>-<random>``
(:class:`~crawlfw.utils._scratch.ScratchDir`, the seen set's helper too; root:
``$TMPDIR/crawlfw-<uid>``, else ``/var/tmp/crawlfw-<uid>``): its ``.lock`` ``flock``-ed
by the crawl, and a SQLite file (no journal, ``synchronous=OFF``: nothing here is meant
to survive the process) that is unlinked as soon as it is open, so the kernel frees
its space when the process ends, even by ``kill -9``. The directory is removed at
:meth:`SpillingHostStore.close`; one left by a crashed crawl (its lock free) is removed
by the next frontier or dupefilter made in any crawl of the same user
(:func:`~crawlfw.utils._scratch.sweep_stale`).
"""

from __future__ import annotations

import collections
import itertools
import logging
import os
import sqlite3
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

from crawlfw.core.frontier.api import FrontierError
from crawlfw.core.frontier.compact import RequestCodec
from crawlfw.utils._scratch import ScratchDir

if TYPE_CHECKING:
    from crawlfw.http import Request

logger = logging.getLogger(__name__)

__all__ = ["HOST_COST", "LOW_WATER", "OBJECT_COST", "OBJECT_SHARE", "RECORD_COST", "QueuedRequests",
           "SpillFile", "SpillingHostStore"]

#: Bytes a compact record costs in RAM besides its length (the ``bytes`` object's
#: header and its slot in a list or deque).
RECORD_COST = 49

#: Bytes a request kept as an object is counted for (a spider's plain GET with a
#: Referer and ``{'depth': n}`` takes ~980, tracemalloc).
OBJECT_COST = 1024

#: While the RAM part is below ``1 / OBJECT_SHARE`` of the budget, requests are kept as
#: the objects they came as: no record is made at the push nor a request rebuilt at the
#: lease (~2 + ~4 us a request; most of a small crawl's queue). Past it they are stored
#: as records, and an object moved to disk is made a record then.
OBJECT_SHARE = 4

#: The budget the object window is a share of when there is none (no limit).
UNLIMITED_WINDOW_BYTES = 96 * 1024 * 1024 // OBJECT_SHARE

#: Bytes a host's RAM part costs besides its entries (its object, a dict of keys, a
#: list of keys, one list or deque).
HOST_COST = 480

#: An eviction brings the RAM part down to this fraction of the limit (a host with
#: entries on disk pushes to disk from then on, so evictions are rare; a lower mark
#: would move more requests to disk than the budget asks, to be read back later).
LOW_WATER = 0.9

#: Entries a host reloads from disk at least (at most :data:`RELOAD_MAX`).
RELOAD_MIN = 32
RELOAD_MAX = 4096

#: Disk pushes buffered before they are written.
FLUSH_EVERY = 4096

class SpillFile:
    """The disk part of a :class:`SpillingHostStore`: one SQLite table of
    ``(host, key, p, data)`` rows, ``data`` a record (``bytes``) or the number of an
    object kept in memory (``int``).

    Args:
        root: the directory to make the private directory in (created 0700 if
            missing; refused if another user owns it or others may write it).
        max_pages: SQLite's ``max_page_count`` (tests: a full disk); None: no limit.

    Raises:
        crawlfw.core.frontier.frontier.FrontierError: the directory or the file cannot
            be made (the message names the path).
    """

    def __init__(self, root: str | None = None, *, max_pages: int | None = None) -> None:
        self.root = root
        self.path = root or "the scratch root"
        self._dir: ScratchDir | None = None
        try:
            self._dir = ScratchDir("frontier", root)
            self.path = self._dir.path
            db = os.path.join(self.path, "queue.sqlite")
            self.conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
            conn = self.conn
            conn.execute("PRAGMA journal_mode=OFF")
            conn.execute("PRAGMA synchronous=OFF")
            conn.execute("PRAGMA locking_mode=EXCLUSIVE")
            conn.execute("PRAGMA cache_size=-4096")  # KiB
            conn.execute("PRAGMA temp_store=MEMORY")
            if max_pages is not None:
                conn.execute(f"PRAGMA max_page_count={int(max_pages)}")
            conn.execute("CREATE TABLE spill (host TEXT NOT NULL, k INTEGER NOT NULL, "
                         "p INTEGER NOT NULL, data NOT NULL, PRIMARY KEY (host, k, p)) "
                         "WITHOUT ROWID")
            conn.execute("BEGIN")
            conn.execute("INSERT INTO spill VALUES ('', 0, 0, 0)")  # takes the lock
            conn.execute("DELETE FROM spill")
            conn.execute("COMMIT")
            os.unlink(db)  # its space goes with the process, whatever way it ends
        except (OSError, sqlite3.Error) as e:
            self.close()
            raise FrontierError(
                f"Cannot make the frontier's spill store in {self.path}: {e} (queued "
                f"requests beyond FRONTIER_MEMORY_LIMIT go there; set TMPDIR to a "
                f"writable directory, or raise FRONTIER_MEMORY_LIMIT)") from e

    def close(self) -> None:
        """Close the file (its space is freed) and remove the directory; idempotent."""
        conn = getattr(self, "conn", None)
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error:
                pass
            del self.conn
        self.close_dir()

    def close_dir(self) -> None:
        """Remove the directory (and give its lock back); the open file stays usable
        until :meth:`close` (it was unlinked when opened). Idempotent."""
        if self._dir is not None:
            self._dir.remove()

    def size_bytes(self) -> int:
        """Bytes the file takes (SQLite pages, free ones included)."""
        conn = getattr(self, "conn", None)
        if conn is None:
            return 0
        try:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            size = conn.execute("PRAGMA page_size").fetchone()[0]
        except sqlite3.Error:  # a failed disk (reported where it failed)
            return 0
        return int(pages) * int(size)


class _Host:
    """One host's part of a :class:`SpillingHostStore` while it has a RAM part:
    ``keys`` (sorted ascending) and ``queues`` (``{key: list or deque}``) of its RAM
    part (None when empty), ``n_ram`` and ``n_disk`` entries, ``disk_head`` (best key
    on disk, or None). A host with entries only on disk is one int instead
    (:func:`_on_disk`)."""

    __slots__ = ("keys", "queues", "n_ram", "n_disk", "disk_head")

    def __init__(self, n_disk: int = 0, disk_head: int | None = None) -> None:
        self.keys: list[int] | None = None
        self.queues: dict[int, Any] | None = None
        self.n_ram = 0
        self.n_disk = n_disk
        self.disk_head = disk_head


#: A host whose entries are all on disk is kept as one int: its best key on disk
#: times ``2**_DISK_BITS``, plus its number of entries on disk (no object per host:
#: the state of a million such hosts is their keys in a dict and an int each).
_DISK_BITS = 40
_DISK_MASK = (1 << _DISK_BITS) - 1


def _on_disk(n_disk: int, disk_head: int) -> int:
    """The int that stands for a host with ``n_disk`` (< 2**40) entries on disk, the
    best of sort key ``disk_head``."""
    return (disk_head << _DISK_BITS) + n_disk


class SpillingHostStore:
    """Requests queued per host, heads in RAM as compact records, tails on disk (see
    the module doc). The interface of
    :class:`~crawlfw.core.frontier.hostqueues.MemoryHostStore`.

    Args:
        lifo: the order of the non-start requests within one priority (True: newest
            first, Scrapy 1.2's default).
        limit_bytes: the RAM budget of the queued requests (bytes); 0 or None: no
            budget, nothing is spilled.
        root: where the spill directory is made (default
            :func:`~crawlfw.utils._scratch.scratch_root`).
        max_pages: for tests: the spill file's most SQLite pages (a full disk).

    Attributes:
        codec: the :class:`~crawlfw.core.frontier.compact.RequestCodec` (bind the
            spider through ``codec.spider``).
        hosts: ``{host: state}`` of the hosts with something queued (a ``_Host``
            while it has a RAM part, else an int: its count and best key on disk).
        ram_bytes: the RAM part's bytes as counted against the budget.
        object_bytes: requests kept as objects while their place is on disk.
        spilled: entries on disk.
    """

    def __init__(self, lifo: bool = True, limit_bytes: int | None = None, *,
                 root: str | None = None, max_pages: int | None = None) -> None:
        self.lifo = lifo
        self.limit_bytes = limit_bytes or 0
        self.root = root
        self.max_pages = max_pages
        self.codec = RequestCodec()
        self.hosts: dict[str, Any] = {}  # _Host, or an int: all on disk (_on_disk)
        self.ram_bytes = 0
        self.object_bytes = 0
        self.spilled = 0
        self._len = 0
        self._file: SpillFile | None = None
        self._pending: list[tuple[str, int, int, Any]] = []  # disk pushes not written
        self._objects: dict[int, Request] = {}  # number -> object whose place is on disk
        self._next_object = 0
        self._front = 0  # positions before every entry on disk: decreasing
        self._back = 0  # after: increasing
        self._level = RELOAD_MIN  # the last eviction's level (entries per host)

    # --- the interface of MemoryHostStore -----------------------------------------------

    def push(self, host: str, key: int, request: Request) -> None:
        """Queue ``request`` of ``host`` with sort key ``key``.

        Raises:
            crawlfw.core.frontier.frontier.FrontierError: the spill store cannot be
                made or written (a full disk; the message names the path).
        """
        item: Any
        limit = self.limit_bytes
        if self.ram_bytes * OBJECT_SHARE < (limit or UNLIMITED_WINDOW_BYTES):
            item, cost = request, OBJECT_COST  # within the object window
        else:
            item = self.codec.encode(request)
            if item is None:  # the general path
                item, cost = request, OBJECT_COST
            else:
                cost = RECORD_COST + len(item)
        h = self.hosts.get(host)
        self._len += 1
        if h is not None and h.__class__ is _Host and not h.n_disk:
            # the common case: a host with a RAM part, nothing on disk, a key it has
            ram = h.queues
            tail: Any = ram.get(key) if ram is not None else None
            if tail is not None:
                tail.append(item)
                h.n_ram += 1
                self.ram_bytes += cost
                if limit and self.ram_bytes > limit:
                    self._evict()
                return
        lifo_key = self.lifo and not key & 1
        if h is None:
            h = self.hosts[host] = _Host()
        elif h.__class__ is int:  # all on disk: so is this one
            if lifo_key:
                self._front -= 1
                p = self._front
            else:
                self._back += 1
                p = self._back
            head = h >> _DISK_BITS
            self.hosts[host] = _on_disk((h & _DISK_MASK) + 1, key if key < head else head)
            self._write(host, key, p, item)
            return
        if h.n_disk and not (h.n_ram and (key < h.keys[-1]  # type: ignore[index]
                                          or (key == h.keys[-1] and lifo_key))):  # type: ignore[index]
            if lifo_key:
                self._front -= 1
                p = self._front
            else:
                self._back += 1
                p = self._back
            self._to_disk(host, h, key, p, item)
            return
        queues = h.queues
        if queues is None:
            h.keys = [key]
            queues = h.queues = {}
            q: Any = [] if lifo_key else collections.deque()
            queues[key] = q
            self.ram_bytes += HOST_COST
        else:
            q = queues.get(key)
            if q is None:
                q = queues[key] = [] if lifo_key else collections.deque()
                keys = h.keys
                assert keys is not None
                if key > keys[-1]:
                    keys.append(key)
                else:
                    keys.append(key)
                    keys.sort()
        q.append(item)
        h.n_ram += 1
        self.ram_bytes += cost
        if limit and self.ram_bytes > limit:
            self._evict()

    def take(self, host: str, limit: int, bound: int | None) -> tuple[list[Request], int | None]:
        """See ``take`` in :meth:`HostQueues.lease
        <crawlfw.core.frontier.hostqueues.HostQueues.lease>`.

        Raises:
            crawlfw.core.frontier.frontier.FrontierError: the spill store failed.
        """
        h = self.hosts.get(host)
        if h is None:
            return [], None
        if h.__class__ is int:
            h = self.hosts[host] = _Host(h & _DISK_MASK, h >> _DISK_BITS)
        out: list[Request] = []
        decode = self.codec.decode
        freed = 0
        while len(out) < limit:
            if not h.n_ram:
                if not h.n_disk:
                    break
                self._reload(host, h, limit - len(out))
            keys = h.keys
            queues = h.queues
            assert keys is not None and queues is not None
            key = keys[0]
            if out and bound is not None and key > bound:
                break
            q = queues[key]
            pop = q.pop if q.__class__ is list else q.popleft
            while q and len(out) < limit:
                item = pop()
                if item.__class__ is bytes:
                    freed += RECORD_COST + len(item)
                    item = decode(item, key)
                else:
                    freed += OBJECT_COST
                out.append(item)
                h.n_ram -= 1
            if not q:
                del queues[key]
                del keys[0]
                if not keys:
                    h.keys = h.queues = None
                    freed += HOST_COST
        self.ram_bytes -= freed
        self._len -= len(out)
        if self.limit_bytes and self.ram_bytes > self.limit_bytes:  # after a reload
            self._evict()
        if h.n_ram:
            return out, h.keys[0]  # type: ignore[index]
        if h.n_disk:
            self.hosts[host] = _on_disk(h.n_disk, h.disk_head)  # type: ignore[arg-type]
            return out, h.disk_head
        del self.hosts[host]
        return out, None

    def head(self, host: str) -> int | None:
        """The best sort key queued for ``host``, or None."""
        h = self.hosts.get(host)
        if h is None:
            return None
        if h.__class__ is int:
            return int(h >> _DISK_BITS)
        head: int | None = h.keys[0] if h.n_ram else h.disk_head
        return head

    def drain(self) -> QueuedRequests:
        """Remove every queued request; returns them as a :class:`QueuedRequests`
        (its length at once, the requests decoded one by one when iterated: a million
        queued requests are not made objects to be counted). The spill directory is
        removed now; the open file (already unlinked) goes with the returned object."""
        unwritten: dict[str, list[tuple[int, Any]]] = {}
        try:
            self._flush()
        except FrontierError:  # the disk failed (reported already): kept, not written
            for host, key, _, data in self._pending:
                unwritten.setdefault(host, []).append((key, data))
            self._pending = []
        hosts, self.hosts = self.hosts, {}
        left = QueuedRequests(self._len, hosts, self.codec, self._file, self._objects,
                              unwritten)
        self._file = None
        self._objects = {}
        self._len = 0
        self.ram_bytes = self.object_bytes = self.spilled = 0
        if left.file is not None:
            left.file.close_dir()
        return left

    def __len__(self) -> int:
        return self._len

    # --- figures ------------------------------------------------------------------------

    @property
    def path(self) -> str | None:
        """The spill directory (None before the first spill)."""
        return self._file.path if self._file is not None else None

    def memory_bytes(self) -> int:
        """Bytes the queued requests take in memory, as counted: the RAM part, objects
        whose place is on disk, and the table of Referer values the records share
        (:class:`~crawlfw.core.frontier.compact.RequestCodec`)."""
        return self.ram_bytes + self.object_bytes + self.codec.table_bytes

    def disk_bytes(self) -> int:
        """Bytes of the spill file."""
        return self._file.size_bytes() if self._file is not None else 0

    def close(self) -> None:
        """Drop everything and remove the spill directory; idempotent."""
        self.drain().close()

    # --- inside -------------------------------------------------------------------------

    def _spill_file(self) -> SpillFile:
        if self._file is None:
            self._file = SpillFile(self.root, max_pages=self.max_pages)
            logger.info("The frontier's queued requests exceed FRONTIER_MEMORY_LIMIT "
                        "(%(limit)d bytes): the rest spill to %(path)s",
                        {"limit": self.limit_bytes, "path": self._file.path})
        return self._file

    def _to_disk(self, host: str, h: _Host, key: int, p: int, item: Any) -> None:
        h.n_disk += 1
        if h.disk_head is None or key < h.disk_head:
            h.disk_head = key
        self._write(host, key, p, item)

    def _write(self, host: str, key: int, p: int, item: Any) -> None:
        """Queue the disk row ``(host, key, p, item)``: a request object as its record,
        or by its number when it takes the general path."""
        if item.__class__ is not bytes:
            item = self._disk_item(item)
        self._pending.append((host, key, p, item))
        self.spilled += 1
        if len(self._pending) >= FLUSH_EVERY:
            self._flush()

    def _disk_item(self, request: Request) -> bytes | int:
        """What a disk row holds for ``request``: its record, else (the general path)
        the number of the object, kept in memory (:attr:`object_bytes`)."""
        record = self.codec.encode(request)
        if record is not None:
            return record
        self._next_object += 1
        self._objects[self._next_object] = request
        self.object_bytes += OBJECT_COST
        return self._next_object

    def _flush(self) -> None:
        pending = self._pending
        if not pending:
            return
        self._pending = []
        f = self._spill_file()
        # in key order (neighbouring rows go to the same B-tree pages; positions are
        # unique, so the tuples compare by (host, key, p) and never by their data) and
        # in one transaction (not one per row): ~25 % less CPU a row
        pending.sort()
        conn = f.conn
        try:
            conn.execute("BEGIN")
            conn.executemany("INSERT INTO spill VALUES (?, ?, ?, ?)", pending)
            conn.execute("COMMIT")
        except sqlite3.Error as e:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:  # (the error is reported below)
                    pass
            raise self._failed(f, e) from e

    def _failed(self, f: SpillFile, error: Exception) -> Exception:
        return FrontierError(
            f"Cannot write the frontier's spill store in {f.path}: {error} (queued "
            f"requests beyond FRONTIER_MEMORY_LIMIT go there; free disk space, set TMPDIR "
            f"to a larger disk, or raise FRONTIER_MEMORY_LIMIT)")

    def _reload(self, host: str, h: _Host, want: int) -> None:
        """Move host ``host``'s best entries from disk to its (empty) RAM part: at
        least ``want``, as many as the last eviction's level allows."""
        self._flush()
        f = self._file
        assert f is not None and h.n_ram == 0
        n = min(max(want, self._level, RELOAD_MIN), RELOAD_MAX)
        conn = f.conn
        try:
            rows = conn.execute("SELECT k, p, data FROM spill WHERE host = ? ORDER BY k, p "
                                "LIMIT ?", (host, n + 1)).fetchall()
            if len(rows) > n:
                h.disk_head = rows[n][0]
                del rows[n:]
            else:
                h.disk_head = None
            last_k, last_p = rows[-1][0], rows[-1][1]
            conn.execute("DELETE FROM spill WHERE host = ? AND (k, p) <= (?, ?)",
                         (host, last_k, last_p))
        except sqlite3.Error as e:
            raise self._failed(f, e) from e
        lifo = self.lifo
        objects = self._objects
        queues: dict[int, Any] = {}
        added = 0
        for k, _, data in rows:  # best first
            q = queues.get(k)
            if q is None:
                q = queues[k] = collections.deque()
            if data.__class__ is int:
                data = objects.pop(data)
                self.object_bytes -= OBJECT_COST
                added += OBJECT_COST
            else:
                added += RECORD_COST + len(data)
            q.append(data)
        for k, q in queues.items():
            if lifo and not k & 1:  # a list, best at the end
                q.reverse()
                queues[k] = list(q)
        h.queues = queues
        h.keys = sorted(queues)
        h.n_ram = len(rows)
        h.n_disk -= len(rows)
        self.spilled -= len(rows)
        self.ram_bytes += added + HOST_COST

    def _evict(self) -> None:
        """Bring the RAM part down to :data:`LOW_WATER` of the limit, moving the worst
        entries of the largest RAM parts to disk (see the module doc)."""
        target = int(self.limit_bytes * LOW_WATER)
        while self.ram_bytes > target and self._evict_pass(self.ram_bytes - target):
            pass
        self._flush()

    def _evict_pass(self, excess: int) -> bool:
        """Move the worst entries of the largest RAM parts to disk, about ``excess``
        bytes' worth (by their mean size); False when there was nothing to move."""
        counts = sorted((h.n_ram for h in self.hosts.values()
                         if h.__class__ is not int and h.n_ram), reverse=True)
        entries = sum(counts)
        if not entries:
            return False
        per_entry = max(1, (self.ram_bytes - HOST_COST * len(counts)) // entries)
        want = -(-excess // per_entry)  # entries to move
        # the level L: trimming every part to L entries moves sum(max(0, c - L))
        level = 0
        moved = 0
        for i, c in enumerate(counts):
            nxt = counts[i + 1] if i + 1 < len(counts) else 0
            # parts 0..i are all at least c; lowering them from c to nxt moves (i+1)(c-nxt)
            if moved + (i + 1) * (c - nxt) >= want:
                level = c - -(-(want - moved) // (i + 1))
                break
            moved += (i + 1) * (c - nxt)
        level = max(level, 0)
        self._level = max(level, RELOAD_MIN)
        front = self._front
        hosts = self.hosts
        for host, h in hosts.items():
            if h.__class__ is int:
                continue
            n = h.n_ram - level
            if n <= 0:
                continue
            keys = h.keys
            queues = h.queues
            assert keys is not None and queues is not None
            worst: list[tuple[int, Any]] = []  # worst first
            while n > 0:
                key = keys[-1]
                q = queues[key]
                m = min(n, len(q))
                if q.__class__ is list:  # LIFO: the worst (oldest) at the front
                    worst.extend((key, item) for item in q[:m])
                    del q[:m]
                else:  # a deque, FIFO: the worst (newest) at the right
                    pop = q.pop
                    worst.extend((key, pop()) for _ in range(m))
                n -= m
                if not q:
                    del queues[key]
                    keys.pop()
            # best first, positions increasing, all before what is on disk (the rows
            # _to_disk would queue, written here without a call per entry)
            freed = 0
            front -= len(worst)
            p = front
            pending = self._pending
            for key, item in reversed(worst):
                if item.__class__ is bytes:
                    freed += RECORD_COST + len(item)
                else:
                    freed += OBJECT_COST
                    item = self._disk_item(item)
                pending.append((host, key, p, item))
                p += 1
            best = worst[-1][0]
            if h.disk_head is None or best < h.disk_head:
                h.disk_head = best
            h.n_disk += len(worst)
            self.spilled += len(worst)
            h.n_ram -= len(worst)
            if not keys:
                h.keys = h.queues = None
                freed += HOST_COST
                hosts[host] = _on_disk(h.n_disk, h.disk_head)
            self.ram_bytes -= freed
            if len(pending) >= FLUSH_EVERY:
                self._flush()
        self._front = front
        return True


class QueuedRequests(Sequence["Request"]):
    """The requests a closed :class:`SpillingHostStore` still held: its length at
    once, the requests decoded as they are iterated (host by host, each in queue
    order; after a disk failure, the pushes it could not take come last). Indexing
    makes the list once."""

    def __init__(self, count: int, hosts: dict[str, Any], codec: RequestCodec,
                 file: SpillFile | None, objects: dict[int, Request],
                 unwritten: dict[str, list[tuple[int, Any]]] | None = None) -> None:
        self._count = count
        self.unwritten = unwritten or {}
        self.hosts = hosts
        self.codec = codec
        self.file = file
        self.objects = objects
        self._list: list[Request] | None = None

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Request]:
        if self._list is not None:
            yield from self._list
            return
        decode = self.codec.decode
        conn = getattr(self.file, "conn", None) if self.file is not None else None
        for host, h in self.hosts.items():
            if h.__class__ is int:  # all on disk
                h = _Host(h & _DISK_MASK, h >> _DISK_BITS)
            for key in h.keys or ():
                q = h.queues[key]
                items = reversed(q) if q.__class__ is list else q
                for item in items:
                    yield decode(item, key) if item.__class__ is bytes else item
            if h.n_disk and conn is not None:
                rows = conn.execute(
                    "SELECT k, data FROM spill WHERE host = ? ORDER BY k, p", (host,))
                # (pushes the failed disk could not take last, in their own order)
                for k, data in itertools.chain(rows, self.unwritten.get(host, ())):
                    yield (self.objects[data] if data.__class__ is int
                           else decode(data, k))

    @overload
    def __getitem__(self, index: int) -> Request: ...
    @overload
    def __getitem__(self, index: slice) -> list[Request]: ...
    def __getitem__(self, index: int | slice) -> Request | list[Request]:
        if self._list is None:
            self._list = list(self)
        return self._list[index]

    def close(self) -> None:
        """Free the spill file now (else when this object goes)."""
        if self.file is not None:
            self.file.close()
            self.file = None
        self.hosts = {}
        self.objects = {}
