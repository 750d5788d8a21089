"""The seen set: request fingerprints a crawl has met, in fixed-width records on a memory
budget, for :class:`crawlfw.dupefilters.RFPDupeFilter` (and the memory frontier's inline
copy of its rule).

Plain, synchronous, thread-free (one thread at a time uses an instance). Two kinds, one
interface (``add(key) -> bool``, ``key in s``, ``len(s)``, ``close()``) over *keys*: the
first 16 bytes of a fingerprint's digest (``bytes.fromhex`` of a SHA-1 hex fingerprint;
:func:`key_of` maps any fingerprint value to one):

- :class:`SeenSet`, exact (the default). Keys in RAM are split by their first bits into
  ``2**bits`` buckets (16 bits from a ``DUPEFILTER_MEMORY_LIMIT`` of 48 MiB up, fewer
  below); a bucket is two ``bytearray`` s appended in step: one *tag* byte per key (the
  key's third byte) and 13 bytes of its rest. A lookup scans the bucket's tags with
  ``bytearray.find`` (``memchr``: ~150 bytes at 10M keys) and compares the 13 bytes only
  where the tag matches (a false match per 256 keys of the bucket). 14 bytes a key, no
  Python object per key. Past its budget it *spills*: each bucket's two arrays, as they
  are, become one row of a *run* in a private SQLite file (``seen.sqlite`` in a
  :class:`~crawlfw.utils._scratch.ScratchDir`, removed at :meth:`SeenSet.close`, after
  ^C, and after ``kill -9`` by the next crawl's sweep) and RAM starts over empty. One
  Bloom filter (rbloom, 1 % false positives) of the records on disk stands in front of
  it, so a new key is looked up there once per 100; a key found there is added to RAM
  again, so a link met again and again costs one disk lookup per spill. The filter
  counts against the budget: it is rebuilt for twice the keys on disk when they outgrow
  it, within a quarter of the budget (a higher rate when that is too few bits), and
  dropped when that rate would pass 30 % (every new key is then looked up on disk: RAM
  stays bounded).
- :class:`BloomSeenSet`, approximate (``DUPEFILTER_BLOOM_ERROR_RATE`` > 0): a scalable
  Bloom filter (Almeida et al. 2007: filters of doubling capacity with tightening error
  rates that add up to the rate asked); 2-4 bytes a key, never on disk, never wrong about
  a key it has seen, wrong about a new key at most at that rate (the request is dropped
  as a duplicate).

Memory model and figures: ARCHITECTURE.md, "The seen set".
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import sqlite3
from collections.abc import Iterable, Iterator, MutableSet
from typing import TYPE_CHECKING, Any

from crawlfw.utils._scratch import ScratchDir, scratch_root
from crawlfw.utils._seen_bloom import BloomSeenSet

if TYPE_CHECKING:
    from rbloom import Bloom

__all__ = ["BloomSeenSet", "DEFAULT_MEMORY_LIMIT", "Fingerprints", "KEY_BYTES",
           "MIN_MEMORY_LIMIT", "SeenSet", "SpillError", "key_of", "seen_set"]

logger = logging.getLogger(__name__)

#: Bytes of a fingerprint's digest that identify it here (128 bits).
KEY_BYTES = 16

#: ``DUPEFILTER_MEMORY_LIMIT``'s default.
DEFAULT_MEMORY_LIMIT = 32 * 1024 * 1024  # ~1M keys in RAM

#: The smallest budget accepted (bytes).
MIN_MEMORY_LIMIT = 1024 * 1024

#: Bytes of RAM the budget is kept with: a key (14 stored; with the bytearrays'
#: over-allocation, 1/16 on average, and the allocator's holes that their growth leaves:
#: 24 of RSS a key, measured when RAM is full; 2 more with fewer than 16 bucket bits,
#: whose records are 15 bytes), a bucket (two bytearray objects and their allocations),
#: the disk store once open (SQLite's page cache, ``cache_size``, and its own
#: structures). tests/utils/test_seen.py checks them against tracemalloc,
#: benchmarks/bench_seen_set.py against RSS.
RECORD_BYTES = 24
BUCKET_BYTES = 176
STORE_BYTES = 256 * 1024
_CACHE_KIB = 1024  # SQLite's page cache at most (an eighth of the budget below 8 MiB)

#: False-positive rate of the Bloom filter in front of the disk.
FILTER_FPR = 0.01
#: The filter in front of the disk may use at most ``limit // FILTER_SHARE`` bytes.
FILTER_SHARE = 4
#: Past this false-positive rate a rebuilt filter is not worth its bytes: none is kept.
MAX_FILTER_FPR = 0.3
#: Spills after which each bucket's runs on disk are merged into one (a disk lookup
#: reads a row per run).
MAX_RUNS = 8


class SpillError(OSError):
    """The seen set could not write its spill file (disk full, unwritable directory, an
    I/O error). The message names the file or directory. The set cannot answer
    exactly any more: every later call raises the same error."""


def key_of(fingerprint: Any) -> bytes:
    """The key (16 bytes or more; the first 16 count) of a fingerprint.

    Keys must look random (their first bytes choose a bucket): a SHA-1 digest's 40 hex
    digits (``request_fingerprint``) and the 32 that iterating the set gives back are
    taken as they are; anything else is hashed.

    Args:
        fingerprint: a str (hex digits or any text) or bytes (Scrapy 2's ``fingerprint()``
            gives 20).

    Returns:
        The bytes of 40 or 32 hex digits, else the SHA-1 digest of the value (UTF-8 for a
        str).

    Raises:
        TypeError: neither str nor bytes.
    """
    if fingerprint.__class__ is str and len(fingerprint) == 40:  # request_fingerprint's
        try:
            key = bytes.fromhex(fingerprint)
        except ValueError:  # not hex
            pass
        else:
            if len(key) == 20:  # (fromhex skips spaces)
                return key
    if isinstance(fingerprint, str):
        if len(fingerprint) in (40, 32):
            try:
                key = bytes.fromhex(fingerprint)
            except ValueError:
                pass
            else:
                if len(key) * 2 == len(fingerprint):  # no spaces taken out
                    return key
        return hashlib.sha1(fingerprint.encode("utf-8", "surrogatepass")).digest()
    if isinstance(fingerprint, (bytes, bytearray, memoryview)):
        return hashlib.sha1(fingerprint).digest()
    raise TypeError(f"a fingerprint must be str or bytes, not {type(fingerprint).__name__}")


#: Budgets from which keys are split into 2**16 buckets (below: fewer, so that the
#: buckets' fixed cost stays within a quarter of the budget).
BUCKETS_16_FROM = 48 * 1024 * 1024


def _find_in(tags: Any, recs: Any, t: int, rest: bytes, w: int) -> int:
    """The index of the record ``rest`` (``w`` bytes) with tag ``t`` in a bucket's
    ``tags`` and ``recs`` (bytes or bytearray), or -1."""
    i = tags.find(t)
    while i >= 0:
        j = i * w
        if recs[j:j + w] == rest:
            return int(i)
        i = tags.find(t, i + 1)
    return -1


def _bucket_bits(limit: int) -> int:
    """Bucket bits for a budget: 16 from :data:`BUCKETS_16_FROM` up; below, as many as
    keep the buckets' fixed cost within a quarter of the budget (at least 8)."""
    if limit >= BUCKETS_16_FROM:
        return 16
    bits = 15
    while bits > 8 and (1 << bits) * (BUCKET_BYTES + 16) > limit // 4:
        bits -= 1
    return bits


class SeenSet:
    """An exact set of keys within a memory budget, spilling to a private SQLite file.

    Args:
        memory_limit_bytes: the budget for the keys in RAM and the filter in front of
            the disk (``DUPEFILTER_MEMORY_LIMIT``); at least :data:`MIN_MEMORY_LIMIT`.
        tempdir: where the spill's scratch directory is made; None:
            :func:`~crawlfw.utils._scratch.scratch_root` (``$TMPDIR/crawlfw-<uid>``,
            else ``/var/tmp/crawlfw-<uid>``).

    Raises:
        ValueError: ``memory_limit_bytes`` below the minimum (the message names
            ``DUPEFILTER_MEMORY_LIMIT``).
    """

    def __init__(self, memory_limit_bytes: int = DEFAULT_MEMORY_LIMIT, *,
                 tempdir: str | None = None) -> None:
        self.check_limit(memory_limit_bytes)
        self.memory_limit_bytes = memory_limit_bytes
        self.tempdir = tempdir
        bits = _bucket_bits(memory_limit_bytes)
        self._shift = 16 - bits
        # A record: the key's bytes from ``_lo`` to 16 (its tag byte, 2, is kept apart):
        # 3..16 with 16 bucket bits (bytes 0-1 are the bucket), else 1..16 (byte 1 is
        # only partly the bucket: kept whole, byte 2 twice).
        self._lo = 3 if bits == 16 else 1
        self._w = 16 - self._lo
        self._record_bytes = RECORD_BYTES + self._w - 13
        if bits == 16:
            self.add = self._add16  # type: ignore[method-assign]
        self._nbuckets = 1 << bits
        self._store: _DiskStore | None = None
        self._failed: SpillError | None = None
        self._filter: Bloom | None = None  # in front of the disk, once it is used
        self._filter_cap = 0  # keys it was made for
        self._filter_bytes = 0
        self._cache_kib = min(_CACHE_KIB, max(64, memory_limit_bytes // 8 // 1024))
        self._lookup_all = False  # no filter: every new key is looked up on disk
        self._disk_n = 0  # keys on disk
        #: Counters: spills made, disk lookups, lookups that found the key.
        self.spills = self.disk_lookups = self.disk_hits = 0
        self._empty()

    @staticmethod
    def check_limit(memory_limit_bytes: int) -> None:
        """Raise ValueError (naming ``DUPEFILTER_MEMORY_LIMIT``) for a budget below
        :data:`MIN_MEMORY_LIMIT`."""
        if memory_limit_bytes < MIN_MEMORY_LIMIT:
            raise ValueError(f"DUPEFILTER_MEMORY_LIMIT must be at least {MIN_MEMORY_LIMIT} "
                             f"bytes, got {memory_limit_bytes}")

    def _empty(self) -> None:
        """RAM starts over: no key in memory."""
        self._tags: list[Any] = [b""] * self._nbuckets  # bytes b"" until first used
        self._recs: list[Any] = [b""] * self._nbuckets
        self._hot_dupes = 0  # keys in RAM also on disk (found there and added again)
        self._hot_cap = self._capacity()
        self._room = self._hot_cap  # keys RAM takes before the next spill

    @property
    def _hot_n(self) -> int:
        """Keys in RAM."""
        return self._hot_cap - self._room

    def _capacity(self) -> int:
        fixed = self._nbuckets * (BUCKET_BYTES + 16) + self._filter_bytes
        if self._store is not None:
            fixed += self._cache_kib * 1024 + STORE_BYTES
        return max(1024, (self.memory_limit_bytes - fixed) // self._record_bytes)

    # --- the set ------------------------------------------------------------------------

    def add(self, key: bytes) -> bool:
        """Add ``key`` (at least 16 bytes; the first 16 count).

        Returns:
            True when it was new, False when it was in the set already.

        Raises:
            SpillError: the spill file cannot be written (now or before).
        """
        b = (key[0] << 8 | key[1]) >> self._shift
        t = key[2]
        rest = key[1:16]
        tags = self._tags[b]
        if tags:
            recs = self._recs[b]
            i = tags.find(t)
            while i >= 0:
                j = i * 15
                if recs[j:j + 15] == rest:
                    return False
                i = tags.find(t, i + 1)
            new = not self._disk_n or not self._on_disk(key, rest)
            tags.append(t)
            recs += rest
        else:
            new = not self._disk_n or not self._on_disk(key, rest)
            self._tags[b] = bytearray((t,))
            self._recs[b] = bytearray(rest)
        if not new:
            self._hot_dupes += 1
        self._room -= 1
        if self._room <= 0:  # (below 0 only after a failed spill: it raises again)
            self._spill()
        return new

    def _add16(self, key: bytes) -> bool:
        """:meth:`add` with 16 bucket bits (records of bytes 3..16): the hot path of
        every budget from :data:`BUCKETS_16_FROM` up, with its constants written in."""
        b = key[0] << 8 | key[1]
        tags = self._tags[b]
        t = key[2]
        rest = key[3:16]
        if tags:
            recs = self._recs[b]
            i = tags.find(t)
            while i >= 0:
                j = i * 13
                if recs[j:j + 13] == rest:
                    return False
                i = tags.find(t, i + 1)
            new = not self._disk_n or not self._on_disk(key, rest)
            tags.append(t)
            recs += rest
        else:
            new = not self._disk_n or not self._on_disk(key, rest)
            self._tags[b] = bytearray((t,))
            self._recs[b] = bytearray(rest)
        if not new:
            self._hot_dupes += 1
        self._room -= 1
        if self._room <= 0:
            self._spill()
        return new

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, (bytes, bytearray)) or len(key) < KEY_BYTES:
            return False
        key = bytes(key[:16])
        rest = key[self._lo:16]
        return (self._find(self._tags, self._recs, key, rest) >= 0
                or bool(self._disk_n) and self._on_disk(key, rest))

    def _find(self, tagsl: list[Any], recsl: list[Any], key: bytes, rest: bytes) -> int:
        """Where ``key`` (its record ``rest``) is in its bucket of ``tagsl``/``recsl``:
        its index, or -1."""
        b = (key[0] << 8 | key[1]) >> self._shift
        tags = tagsl[b]
        return _find_in(tags, recsl[b], key[2], rest, self._w) if tags else -1

    def discard(self, key: bytes) -> None:
        """Remove ``key`` if present (from RAM and from the disk: every copy)."""
        if self._failed is not None:
            raise self._failed
        key = bytes(key[:16])
        rest, w, t = key[self._lo:16], self._w, key[2]
        b = (key[0] << 8 | key[1]) >> self._shift
        i = self._find(self._tags, self._recs, key, rest)
        if i >= 0:
            del self._tags[b][i]
            del self._recs[b][i * w:i * w + w]
            self._room += 1
        if not self._disk_n or self._store is None:
            return
        kept, found = [], False
        for tags_blob, recs_blob in self._guard(self._store.bucket, b):
            tags, recs = bytearray(tags_blob), bytearray(recs_blob)
            while (j := _find_in(tags, recs, t, rest, w)) >= 0:
                del tags[j]
                del recs[j * w:j * w + w]
                found = True
            if tags:
                kept.append((tags, recs))
        if found:
            self._guard(self._store.replace_bucket, b, kept)
            self._disk_n -= 1
            if i >= 0:
                self._hot_dupes -= 1

    def __len__(self) -> int:
        return self._disk_n + self._hot_n - self._hot_dupes

    def __iter__(self) -> Iterator[bytes]:
        """Every key (16 bytes), once, bucket by bucket, in no particular order."""
        if self._failed is not None:
            raise self._failed
        disk: dict[int, list[tuple[bytes, bytes]]] = {}
        if self._store is not None and self._disk_n:
            for b, tags, recs in self._guard(self._store.rows):
                disk.setdefault(b, []).append((tags, recs))
        for b in range(self._nbuckets):
            parts = disk.pop(b, [])
            if self._tags[b]:
                parts.append((bytes(self._tags[b]), bytes(self._recs[b])))
            keys = set()  # (a key found on disk and added to RAM again is in two parts)
            for tags, recs in parts:
                keys.update(self._keys_of(b, tags, recs))
            yield from sorted(keys)

    def _keys_of(self, b: int, tags: bytes, recs: bytes) -> Iterator[bytes]:
        """The keys of one bucket's ``tags`` and ``recs``."""
        w = self._w
        if w == 13:
            head = b.to_bytes(2, "big")
            for i in range(len(tags)):
                yield head + tags[i:i + 1] + recs[i * 13:i * 13 + 13]
        else:  # byte 0 from the bucket, bytes 1..16 from the record
            head = (b >> (8 - self._shift)).to_bytes(1, "big")
            for i in range(len(tags)):
                yield head + recs[i * 15:i * 15 + 15]

    def clear(self) -> None:
        """Forget every key; the spill file is removed."""
        self.close()

    def close(self) -> None:
        """Empty the set and remove its spill file and directory (idempotent; the set
        can be used again, as a new one)."""
        store, self._store = self._store, None
        self._failed = None
        self._filter, self._filter_cap, self._filter_bytes = None, 0, 0
        self._lookup_all = False
        self._disk_n = 0
        self.spills = self.disk_lookups = self.disk_hits = 0
        self._empty()
        if store is not None:
            store.close()

    @property
    def memory_bytes(self) -> int:
        """The estimate of RAM in use the budget is kept with (bytes)."""
        used = self._nbuckets * 16 + self._filter_bytes
        used += sum(1 for tags in self._tags if tags) * BUCKET_BYTES
        used += self._hot_n * self._record_bytes
        if self._store is not None:
            used += self._cache_kib * 1024 + STORE_BYTES
        return used

    @property
    def disk_bytes(self) -> int:
        """Bytes of the spill file (0 before the first spill)."""
        return self._store.size_bytes() if self._store is not None else 0

    @property
    def spill_path(self) -> str | None:
        """The spill file, once made."""
        return self._store.path if self._store is not None else None

    def __repr__(self) -> str:
        return (f"<SeenSet {len(self)} keys: {self._hot_n} in memory, {self._disk_n} on "
                f"disk, limit {self.memory_limit_bytes} bytes>")

    # --- the disk -----------------------------------------------------------------------

    def _on_disk(self, key: bytes, rest: bytes) -> bool:
        """True when ``key`` (its record ``rest``, the filter's key) is on disk."""
        if self._failed is not None:
            raise self._failed
        if not self._lookup_all and rest not in self._filter:  # type: ignore[operator]
            return False
        self.disk_lookups += 1
        assert self._store is not None  # _disk_n > 0
        t, w = key[2], self._w
        for tags, recs in self._guard(self._store.bucket,
                                      (key[0] << 8 | key[1]) >> self._shift):
            if _find_in(tags, recs, t, rest, w) >= 0:
                self.disk_hits += 1
                return True
        return False

    def _guard(self, call: Any, *args: Any) -> Any:
        """``call(*args)``; an sqlite3 or OS error becomes (and stays) a SpillError."""
        try:
            return call(*args)
        except (sqlite3.Error, OSError) as e:
            self._failed = self._spill_error(e)
            raise self._failed from e

    def _spill_error(self, error: BaseException) -> SpillError:
        where = self._store.path if self._store is not None else (
            self.tempdir or scratch_root())
        return SpillError(
            f"The seen set cannot spill to {where}: {type(error).__name__}: {error} "
            f"(it holds {len(self)} fingerprints, over DUPEFILTER_MEMORY_LIMIT "
            f"{self.memory_limit_bytes} bytes; free space there, set TMPDIR, or raise the limit)")

    def _spill(self) -> None:
        """Write every bucket in RAM to the disk as one *run* (its two bytearrays, as
        they are: no work per key but adding it to the filter in front of the disk),
        then start RAM over. The filter is rebuilt for twice the keys on disk when they
        outgrow it (so each key is read back O(1) times in all); past
        :data:`MAX_RUNS` runs a bucket's are merged into one."""
        if self._failed is not None:
            raise self._failed
        if self._store is None:
            try:
                self._store = _DiskStore(self.tempdir, self._cache_kib)
            except (sqlite3.Error, OSError) as e:
                self._failed = self._spill_error(e)
                raise self._failed from e
        filt = self._filter
        rebuild = not self._lookup_all and (
            filt is None or self._disk_n + self._hot_n > self._filter_cap)
        add = None if rebuild or filt is None else filt.update
        w, tagsl, recsl = self._w, self._tags, self._recs

        def rows() -> Iterator[tuple[int, int, Any, Any]]:
            for b in range(self._nbuckets):
                tags = tagsl[b]
                if tags:
                    recs = recsl[b]
                    if add is not None:
                        blob = bytes(recs)
                        add([blob[j:j + w] for j in range(0, len(blob), w)])
                    yield b, run, tags, recs

        run = self.spills
        self._guard(self._store.write, rows())
        filt = add = None  # (the old filter is not kept while a new one is made)
        added = self._hot_n - self._hot_dupes
        first = not self._disk_n
        self._disk_n += added
        self.spills += 1
        if self.spills % MAX_RUNS == 0:
            self._guard(self._store.merge_runs)
        if rebuild:
            self._rebuild_filter()
        self._empty()
        if first:
            logger.info("The seen set reached DUPEFILTER_MEMORY_LIMIT (%(limit)d bytes): "
                        "%(n)d fingerprints moved to %(path)s; more go there each time it "
                        "fills up", {"limit": self.memory_limit_bytes, "n": added,
                                     "path": self._store.path})

    def _rebuild_filter(self) -> None:
        """A filter for twice the keys on disk at :data:`FILTER_FPR`, within
        ``limit // FILTER_SHARE`` bytes (a higher rate when that is too few bits), or
        none when the rate would pass :data:`MAX_FILTER_FPR`."""
        assert self._store is not None
        self._filter, self._filter_cap, self._filter_bytes = None, 0, 0
        cap = 2 * max(self._disk_n, 1)
        fpr = FILTER_FPR
        most_bits = self.memory_limit_bytes // FILTER_SHARE * 8
        if -cap * math.log(fpr) / math.log(2) ** 2 > most_bits:
            cap = self._disk_n + self._disk_n // 4 + 1
            fpr = math.exp(-(most_bits / cap) * math.log(2) ** 2)
            if fpr > MAX_FILTER_FPR:
                self._lookup_all = True
                logger.warning(
                    "The seen set's filter in front of the disk no longer fits "
                    "DUPEFILTER_MEMORY_LIMIT (%(limit)d bytes, %(n)d fingerprints on "
                    "disk): every new URL is now looked up in %(path)s; raise the limit "
                    "for speed", {"limit": self.memory_limit_bytes, "n": self._disk_n,
                                  "path": self._store.path})
                return
        from rbloom import Bloom  # here: a crawl that never spills never loads rbloom

        filt = Bloom(cap, fpr)
        w = self._w
        for _b, _tags, recs in self._guard(self._store.rows):
            blob = bytes(recs)
            filt.update([blob[j:j + w] for j in range(0, len(blob), w)])
        self._filter, self._filter_cap = filt, cap
        self._filter_bytes = filt.size_in_bits // 8


class _DiskStore:
    """The spill file: one SQLite table of *runs*, a row per bucket and spill holding
    the bucket's two bytearrays as they were in RAM (``tags``, ``recs``), keyed by
    ``(bucket, run)`` (``WITHOUT ROWID``: a bucket's rows are together in the B-tree).
    Private to one process, in a :class:`ScratchDir`; no journal and no fsync: nothing
    in it outlives the crawl (a failed write ends the crawl)."""

    def __init__(self, root: str | None, cache_kib: int) -> None:
        self.dir = ScratchDir("seen", root)
        self.path = os.path.join(self.dir.path, "seen.sqlite")
        try:
            conn = self.conn = sqlite3.connect(self.path, isolation_level=None,
                                               check_same_thread=False)
            conn.execute("PRAGMA journal_mode=OFF")
            conn.execute("PRAGMA synchronous=OFF")
            conn.execute("PRAGMA locking_mode=EXCLUSIVE")
            conn.execute(f"PRAGMA cache_size=-{cache_kib}")
            conn.execute(_RUNS.format(table="seen"))
        except BaseException:
            self.dir.remove()
            raise

    def write(self, rows: Iterable[tuple[int, int, Any, Any]]) -> None:
        """Insert ``rows`` (bucket, run, tags, recs) in one transaction."""
        conn = self.conn
        conn.execute("BEGIN")
        try:
            conn.executemany("INSERT INTO seen VALUES (?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def bucket(self, b: int) -> list[tuple[bytes, bytes]]:
        """The (tags, recs) of bucket ``b``, one pair per run."""
        return self.conn.execute("SELECT tags, recs FROM seen WHERE bucket = ?",
                                 (b,)).fetchall()

    def replace_bucket(self, b: int, parts: list[tuple[Any, Any]]) -> None:
        """Bucket ``b`` becomes ``parts`` (tags, recs), one run each."""
        conn = self.conn
        conn.execute("BEGIN")
        try:
            conn.execute("DELETE FROM seen WHERE bucket = ?", (b,))
            conn.executemany("INSERT INTO seen VALUES (?, ?, ?, ?)",
                             ((b, run, tags, recs) for run, (tags, recs) in enumerate(parts)))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def rows(self) -> Iterator[tuple[int, bytes, bytes]]:
        """Every (bucket, tags, recs), by bucket."""
        yield from self.conn.execute("SELECT bucket, tags, recs FROM seen")

    def merge_runs(self) -> None:
        """Make each bucket's runs one (their blobs joined), in a new table that takes
        the old one's name: a disk lookup then reads one row."""
        conn = self.conn
        conn.execute(_RUNS.format(table="merged"))
        conn.execute("BEGIN")
        try:
            conn.executemany("INSERT INTO merged VALUES (?, 0, ?, ?)", self._merged())
            conn.execute("DROP TABLE seen")
            conn.execute("ALTER TABLE merged RENAME TO seen")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("VACUUM")

    def _merged(self) -> Iterator[tuple[int, bytes, bytes]]:
        bucket, tags, recs = -1, [], []
        for b, t, r in self.conn.execute("SELECT bucket, tags, recs FROM seen"):
            if b != bucket and tags:
                yield bucket, b"".join(tags), b"".join(recs)
                tags, recs = [], []
            bucket = b
            tags.append(t)
            recs.append(r)
        if tags:
            yield bucket, b"".join(tags), b"".join(recs)

    def size_bytes(self) -> int:
        try:
            return os.path.getsize(self.path)
        except OSError:
            return 0

    def close(self) -> None:
        try:
            self.conn.close()
        finally:
            self.dir.remove()


_RUNS = ("CREATE TABLE {table} (bucket INTEGER NOT NULL, run INTEGER NOT NULL, "
         "tags BLOB NOT NULL, recs BLOB NOT NULL, PRIMARY KEY (bucket, run)) WITHOUT ROWID")


def seen_set(memory_limit_bytes: int = DEFAULT_MEMORY_LIMIT, bloom_error_rate: float = 0.0,
             *, tempdir: str | None = None) -> SeenSet | BloomSeenSet:
    """The seen set the settings ask for: :class:`BloomSeenSet` when
    ``bloom_error_rate`` is above 0, else :class:`SeenSet`.

    Raises:
        ValueError: a value out of range (the message names its setting).
    """
    if bloom_error_rate:
        return BloomSeenSet(bloom_error_rate)
    return SeenSet(memory_limit_bytes, tempdir=tempdir)


#: Fingerprints per generation of :attr:`Fingerprints.hot` (two generations).
HOT_FINGERPRINTS = 16384


class Fingerprints(MutableSet[str]):
    """``RFPDupeFilter.fingerprints``: a set of fingerprints as Scrapy's code uses it
    (``fp in fps``, ``fps.add(fp)``, ``len(fps)``, ``update``, ``discard``), stored by
    their keys (:func:`key_of`) in a seen set.

    Iterating gives each fingerprint's key as 32 hex digits (a 40-digit SHA-1
    fingerprint's first 32); ``add`` takes those back as the same fingerprints.

    Args:
        seen: a :class:`SeenSet` or :class:`BloomSeenSet`.
    """

    __slots__ = ("seen", "hot", "prev")

    def __init__(self, seen: SeenSet | BloomSeenSet) -> None:
        self.seen = seen
        #: The fingerprints added or found most recently, as given (str): two generations
        #: of at most :data:`HOT_FINGERPRINTS` each, a cache in front of ``seen`` (a
        #: link met again, as most links of a site are, is answered by a set lookup).
        #: Everything in them is in ``seen``; at most 2 x HOT_FINGERPRINTS strings
        #: (about 3.5 MB), outside the budget.
        self.hot: set[str] = set()
        self.prev: set[str] = set()

    def remember(self, fingerprint: str) -> None:
        """Put ``fingerprint`` (in ``seen`` already) in the newest generation; a full
        one becomes the older, and the older is dropped."""
        hot = self.hot
        hot.add(fingerprint)
        if len(hot) >= HOT_FINGERPRINTS:
            self.prev = hot
            self.hot = set()

    def __contains__(self, fingerprint: object) -> bool:
        if fingerprint in self.hot or fingerprint in self.prev:
            return True
        try:
            return key_of(fingerprint) in self.seen
        except TypeError:
            return False

    def add(self, fingerprint: str) -> None:
        self.add_new(fingerprint)

    def add_new(self, fingerprint: str) -> bool:
        """Add ``fingerprint``; True when it was new (one lookup instead of two)."""
        if fingerprint in self.hot or fingerprint in self.prev:
            return False
        new = self.seen.add(key_of(fingerprint))
        self.remember(fingerprint)
        return new

    def update(self, *fingerprints: Iterable[str]) -> None:
        """Add every fingerprint of each iterable (as ``set.update``)."""
        add = self.seen.add
        for group in fingerprints:
            for fingerprint in group:
                add(key_of(fingerprint))

    def discard(self, fingerprint: str) -> None:
        self.hot.discard(fingerprint)
        self.prev.discard(fingerprint)
        self.seen.discard(key_of(fingerprint))

    def clear(self) -> None:
        self.hot = set()
        self.prev = set()
        self.seen.clear()

    def __len__(self) -> int:
        return len(self.seen)

    def __iter__(self) -> Iterator[str]:
        for key in self.seen:
            yield key.hex()

    def __repr__(self) -> str:
        return f"<Fingerprints {self.seen!r}>"
