"""The seen set (crawlfw/utils/_seen.py) on its own: keys, exactness in memory and across
the spill to disk, the memory it keeps to, its files, its errors, and the Bloom mode.
No threads, no processes (the crash and ^C cases are in tests/test_seen_spill.py)."""

import gc
import hashlib
import os
import random
import tracemalloc

import pytest

from crawlfw.utils import _scratch, _seen
from crawlfw.utils._seen import (
    MIN_MEMORY_LIMIT,
    BloomSeenSet,
    Fingerprints,
    SeenSet,
    SpillError,
    key_of,
    seen_set,
)

SHA = hashlib.sha1(b"GEThttp://example.com/").hexdigest()


@pytest.mark.parametrize("fingerprint, key", [
    (SHA, bytes.fromhex(SHA)),  # request_fingerprint's 40 hex digits: their bytes
    (SHA.upper(), bytes.fromhex(SHA)),
    (SHA[:32], bytes.fromhex(SHA[:32])),  # what iterating gives back
    ("ab" * 32, hashlib.sha1(b"ab" * 32).digest()),  # other lengths: hashed
    ("ab" * 15, hashlib.sha1(b"ab" * 15).digest()),
    (SHA[:-1] + "x", hashlib.sha1((SHA[:-1] + "x").encode()).digest()),  # not hex
    (" ".join(SHA[i:i + 2] for i in range(0, 40, 2)),  # fromhex would skip the spaces
     hashlib.sha1(" ".join(SHA[i:i + 2] for i in range(0, 40, 2)).encode()).digest()),
    ("http://example.com/ünï", hashlib.sha1("http://example.com/ünï".encode()).digest()),
    (bytes.fromhex(SHA), hashlib.sha1(bytes.fromhex(SHA)).digest()),  # Scrapy 2's
    (b"short", hashlib.sha1(b"short").digest()),
])
def test_key_of(fingerprint, key):
    assert key_of(fingerprint) == key
    assert len(key_of(fingerprint)) >= 16


def test_key_of_refuses_other_types():
    with pytest.raises(TypeError, match="a fingerprint must be str or bytes, not int"):
        key_of(12)


def _table(seed, n, dupes=0.3, crowded=False):
    """``n`` keys (20 bytes, as SHA-1 digests), about ``dupes`` of them repeats of
    earlier ones. ``crowded``: near twins too, keys that share their first 3 bytes
    (bucket and tag byte) with an earlier one, or its first 15 (or all but one bit of
    byte 1, or of byte 2), or differ from it only past the 16th byte (the same key)."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        if out and rng.random() < dupes:
            out.append(rng.choice(out))
        elif crowded and out and rng.random() < 0.5:
            key = rng.choice(out)
            out.append(rng.choice([
                key[:3] + rng.randbytes(17),
                key[:15] + bytes([key[15] ^ 1]) + key[16:],
                key[:1] + bytes([key[1] ^ 1]) + key[2:],
                key[:2] + bytes([key[2] ^ 128]) + key[3:],
                key[:16] + rng.randbytes(4),
            ]))
        else:
            out.append(rng.randbytes(20))
    return out


def _check_exact(s, keys, rng):
    """Add ``keys`` to ``s`` and check every answer against a Python set; then every key
    is in, and as many fresh keys are not."""
    ref = set()
    for key in keys:
        assert s.add(key) is (key[:16] not in ref)
        ref.add(key[:16])
    assert len(s) == len(ref)
    for key in keys:
        assert key in s
        assert s.add(key) is False
    assert len(s) == len(ref)
    fresh = [rng.randbytes(20) for _ in range(len(keys))]
    assert not any(key in s for key in fresh if key[:16] not in ref)
    assert len(s) == len(ref)


@pytest.mark.parametrize("limit, n, crowded, spills", [
    (64 << 20, 20_000, False, False),  # 2**15 buckets, everything in RAM
    (64 << 20, 20_000, True, False),
    (24 << 20, 20_000, False, False),  # 2**16 buckets: no bucket bit in the records
    (MIN_MEMORY_LIMIT, 120_000, False, True),  # 2**9 buckets, several spills
    (MIN_MEMORY_LIMIT, 120_000, True, True),
    pytest.param(4 << 20, 400_000, False, True, marks=pytest.mark.slow),  # (~5 s)
])
@pytest.mark.parametrize("seed", [1, 2])
def test_exact_in_memory_and_across_the_spill(tmp_path, limit, n, crowded, spills, seed):
    s = SeenSet(limit, tempdir=str(tmp_path))
    try:
        _check_exact(s, _table(seed, n, crowded=crowded), random.Random(seed + 100))
        assert (s.spills > 0) is spills
        if spills:
            assert s._disk_n > 0 and s.disk_bytes > 0
            # promoted keys (met on disk, added to RAM again) are counted once
            assert s._hot_dupes > 0
    finally:
        s.close()


@pytest.mark.slow  # (~10 s)
def test_runs_on_disk_are_merged(tmp_path, monkeypatch):
    """Each spill writes a run (a row per bucket); every MAX_RUNS spills a bucket's runs
    become one, and nothing is lost or doubled."""
    monkeypatch.setattr(_seen, "MAX_RUNS", 2)
    s = SeenSet(MIN_MEMORY_LIMIT, tempdir=str(tmp_path))
    keys = _table(9, 250_000)
    _check_exact(s, keys, random.Random(9))
    assert s.spills >= 4
    rows = s._store.conn.execute(
        "SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM seen GROUP BY bucket)").fetchone()[0]
    assert rows <= 2
    assert sorted(s) == sorted({k[:16] for k in keys})
    s.close()


def test_keys_found_on_disk_cost_one_lookup_per_spill(tmp_path):
    s = SeenSet(MIN_MEMORY_LIMIT, tempdir=str(tmp_path))
    rng = random.Random(7)
    old = [rng.randbytes(16) for _ in range(100)]
    for key in old:
        s.add(key)
    while s._disk_n < 100:  # push them to disk
        s.add(rng.randbytes(16))
    hits = s.disk_hits
    for _ in range(5):  # a link met again and again
        for key in old:
            assert not s.add(key)
    assert s.disk_hits - hits == 100  # once each: then answered from RAM
    s.close()


def test_new_keys_rarely_reach_the_disk(tmp_path):
    """The filter in front of the disk: about 1 % of new keys are looked up there."""
    s = SeenSet(MIN_MEMORY_LIMIT, tempdir=str(tmp_path))
    rng = random.Random(3)
    while s._disk_n == 0:
        s.add(rng.randbytes(16))
    lookups = s.disk_lookups
    for _ in range(20_000):
        s.add(rng.randbytes(16))
    assert s.disk_lookups - lookups < 20_000 * 0.02
    s.close()


def test_discard_and_iteration(tmp_path):
    s = SeenSet(MIN_MEMORY_LIMIT, tempdir=str(tmp_path))
    keys = [k[:16] for k in _table(5, 60_000, dupes=0.0)]
    for key in keys:
        s.add(key)
    assert s.spills > 0
    assert sorted(s) == sorted(keys)  # disk and RAM, each key once
    gone = keys[::3]
    for key in gone:
        s.discard(key)
    s.discard(b"\0" * 16)  # absent: nothing happens
    assert len(s) == len(keys) - len(gone)
    assert not any(key in s for key in gone)
    assert all(key in s for key in keys[1::3])
    assert sorted(s) == sorted(set(keys) - set(gone))
    s.close()


@pytest.mark.slow  # (~3 s each under tracemalloc)
@pytest.mark.parametrize("limit, n", [(MIN_MEMORY_LIMIT, 150_000), (2 << 20, 300_000)])
def test_memory_stays_within_the_budget(tmp_path, limit, n):
    """tracemalloc sees what Python allocates (the keys in RAM, the sorting at a spill);
    the filter in front of the disk (rbloom's) and SQLite's cache are counted by the
    set's own estimate, which stays within the budget too."""
    rng = random.Random(11)
    tracemalloc.start()
    try:
        s = SeenSet(limit, tempdir=str(tmp_path))
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        most = 0
        for i in range(n):
            s.add(rng.randbytes(16))
            if i % 5000 == 0:
                most = max(most, s.memory_bytes)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert s.spills >= 3
    assert peak <= limit, (peak, limit)
    assert most <= limit, (most, limit)
    assert s._filter_bytes <= limit // _seen.FILTER_SHARE
    s.close()


@pytest.mark.slow  # (~3 s under tracemalloc)
@pytest.mark.parametrize("limit, bits", [(48 << 20, 16), (24 << 20, 15), (4 << 20, 12)])
def test_the_estimate_is_not_below_what_ram_holds(limit, bits):
    """RECORD_BYTES and BUCKET_BYTES are not too small: the keys in RAM, measured by
    tracemalloc, cost at most what the budget is kept with (bytes per key at 10M:
    benchmarks/bench_seen_set.py)."""
    rng = random.Random(12)
    keys = [rng.randbytes(16) for _ in range(300_000)]
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        s = SeenSet(limit)
        for key in keys[:s._hot_cap - 1]:  # full, not yet spilled
            s.add(key)
        used = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert s._nbuckets == 1 << bits and s.spills == 0
    assert used <= s.memory_bytes, (used, s.memory_bytes)


def test_files_are_removed_at_close_and_when_dropped(tmp_path):
    s = SeenSet(MIN_MEMORY_LIMIT, tempdir=str(tmp_path))
    rng = random.Random(1)
    while not s.spills:
        s.add(rng.randbytes(16))
    spill_dir = os.path.dirname(s.spill_path)
    assert os.path.basename(spill_dir).startswith("seen-")
    assert os.path.exists(s.spill_path)
    s.close()
    assert os.listdir(tmp_path) == []
    assert len(s) == 0 and s.spill_path is None  # empty, usable again
    while not s.spills:
        s.add(rng.randbytes(16))
    assert len(os.listdir(tmp_path)) == 1
    del s
    gc.collect()
    assert os.listdir(tmp_path) == []


def test_a_live_scratch_dir_is_not_swept_a_dead_one_is(tmp_path):
    live = _scratch.ScratchDir("seen", str(tmp_path))
    assert _scratch.sweep_stale(str(tmp_path)) == []
    assert os.path.isdir(live.path)
    # a dead owner: its lock file is there but nobody holds it
    dead = tmp_path / "seen-1-x"
    dead.mkdir()
    (dead / ".lock").touch()
    (dead / "seen.sqlite").write_bytes(b"x" * 100)
    # one that never got its lock: left alone while young and its maker lives,
    # removed once old
    young = tmp_path / f"seen-{os.getpid()}-y"
    young.mkdir()
    old = tmp_path / f"seen-{os.getpid()}-z"
    old.mkdir()
    os.utime(old, (1, 1))
    other = tmp_path / "crawlfw-workers-1"  # not ours
    other.mkdir()
    assert sorted(_scratch.sweep_stale(str(tmp_path))) == sorted([str(dead), str(old)])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [os.path.basename(live.path), young.name, other.name])
    live.remove()
    live.remove()  # idempotent
    assert not os.path.exists(live.path)


def test_an_unwritable_spill_directory_is_one_clear_error(tmp_path):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    s = SeenSet(MIN_MEMORY_LIMIT, tempdir=str(not_a_dir))
    rng = random.Random(1)
    with pytest.raises(SpillError) as info:
        for _ in range(100_000):
            s.add(rng.randbytes(16))
    message = str(info.value)
    assert f"The seen set cannot spill to {not_a_dir}: NotADirectoryError" in message
    assert "DUPEFILTER_MEMORY_LIMIT 1048576 bytes" in message and "\n" not in message
    with pytest.raises(SpillError):  # it stays failed: no answer can be trusted
        s.add(rng.randbytes(16))
    s.close()


def test_a_failed_write_names_the_spill_file(tmp_path, monkeypatch):
    s = SeenSet(MIN_MEMORY_LIMIT, tempdir=str(tmp_path))
    rng = random.Random(2)
    while not s.spills:
        s.add(rng.randbytes(16))
    path = s.spill_path

    def full(rows):
        raise _seen.sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(s._store, "write", full)  # (the real disk full: test_seen_spill.py)
    with pytest.raises(SpillError, match=f"cannot spill to {path}: OperationalError: "
                                         "database or disk is full"):
        for _ in range(100_000):
            s.add(rng.randbytes(16))
    s.close()
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("limit", [0, -1, MIN_MEMORY_LIMIT - 1])
def test_a_budget_too_small_is_refused(limit):
    with pytest.raises(ValueError, match=f"DUPEFILTER_MEMORY_LIMIT must be at least "
                                         f"{MIN_MEMORY_LIMIT} bytes, got {limit}"):
        SeenSet(limit)


@pytest.mark.parametrize("rate", [-0.1, 0.6, 1.0])
def test_a_bloom_rate_out_of_range_is_refused(rate):
    with pytest.raises(ValueError, match="DUPEFILTER_BLOOM_ERROR_RATE must be above 0"):
        seen_set(bloom_error_rate=rate)


@pytest.mark.parametrize("rate", [0.01, 0.001])
def test_bloom_mode_never_forgets_and_errs_at_most_at_its_rate(rate):
    s = seen_set(bloom_error_rate=rate)
    assert isinstance(s, BloomSeenSet)
    s = BloomSeenSet(rate, initial_capacity=10_000)  # small, so that it grows
    rng = random.Random(4)
    keys = [rng.randbytes(20) for _ in range(60_000)]
    taken = sum(not s.add(key) for key in keys)  # new keys taken for seen ones
    assert len(s._filters) >= 3
    assert all(key in s for key in keys)  # no false negative
    assert all(not s.add(key) for key in keys[:1000])
    fresh = [rng.randbytes(20) for _ in range(200_000)]
    wrong = sum(key in s for key in fresh)  # (Python's hash of bytes is not seeded: the
    assert wrong <= 200_000 * rate * 1.3, wrong  # bound is 4 sigmas from its mean)
    assert taken <= 60_000 * rate * 1.3
    assert len(s) == 60_000 - taken
    with pytest.raises(TypeError, match="cannot list its fingerprints"):
        iter(s).__next__()
    with pytest.raises(TypeError, match="cannot forget"):
        s.discard(keys[0])
    s.close()
    assert len(s) == 0 and keys[0] not in s


def test_fingerprints_behave_as_a_set_of_hex_fingerprints(tmp_path):
    fps = Fingerprints(SeenSet(MIN_MEMORY_LIMIT, tempdir=str(tmp_path)))
    assert SHA not in fps and len(fps) == 0
    fps.add(SHA)
    assert SHA in fps and SHA.upper() in fps and len(fps) == 1
    assert list(fps) == [SHA[:32]]
    assert not fps.add_new(SHA) and fps.add_new("custom fingerprint")
    fps.update(["a", "b"], ["b", SHA[:32]])
    assert len(fps) == 4 and "a" in fps and 12 not in fps and None not in fps
    fps.discard("a")
    assert "a" not in fps and len(fps) == 3
    fps2 = Fingerprints(SeenSet(MIN_MEMORY_LIMIT, tempdir=str(tmp_path)))
    fps2.update(fps)  # what iterating gives, added back: the same fingerprints
    assert all(fp in fps2 for fp in (SHA, "custom fingerprint", "b")) and len(fps2) == 3
    fps.clear()
    assert len(fps) == 0
