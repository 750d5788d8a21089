"""Benchmark: the dupefilter's seen set alone, at 10M fingerprints (issue 30: under 200 MB).

Each variant runs in a subprocess of its own (its peak RSS is its own, ``ru_maxrss``):

* ``set``: the plain Python set of 40-digit hex fingerprints RFPDupeFilter kept before;
* ``exact``: the seen set with room for every key in RAM (``DUPEFILTER_MEMORY_LIMIT``
  256 MiB: no disk);
* ``spill``: the seen set at the default budget (``DUPEFILTER_MEMORY_LIMIT`` 32 MiB): past
  ~1M keys they move to its SQLite file (behind a Bloom filter), each time it fills;
* ``spill64``: the same at 64 MiB (the default before; ~2.2M keys in RAM);
* ``bloom``: ``DUPEFILTER_BLOOM_ERROR_RATE`` 0.001 (a scalable Bloom filter, no disk).

The workload, as a crawl gives it to ``MemoryFrontier.push_many``: SHA-1 hex fingerprints
(``request_fingerprint``'s form), ``--n`` distinct ones inserted (``add``, which answers
"new" or "seen") with about 30 % of the inserts repeating an earlier fingerprint, then
1M lookups (``in``) of fingerprints inserted and 1M of fingerprints never seen. The
compact variants pay ``bytes.fromhex`` per fingerprint, as the frontier does. The
fingerprints are made 20,000 at a time outside the timed loops.

Printed per variant: peak RSS (MiB) and the RSS before the set was made, ns of CPU per
insert and per lookup, disk bytes at the end, spills, disk lookups, and errors (new
fingerprints taken for seen ones, seen ones taken for new: 0 for the exact kinds).
CPU figures move with the machine's load (it is shared): compare runs made together.

Usage::

    python benchmarks/bench_seen_set.py [--n 10000000] [--only set,exact,spill,spill64,bloom]
"""

import argparse
import hashlib
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

VARIANTS = {
    "set": {},
    "exact": {"memory_limit_bytes": 256 * 1024 * 1024},
    "spill": {"memory_limit_bytes": 32 * 1024 * 1024},
    "spill64": {"memory_limit_bytes": 64 * 1024 * 1024},
    "bloom": {"bloom_error_rate": 0.001},
}

CHUNK = 20_000
DUPES = 0.3
LOOKUPS = 1_000_000


def _fp(i: int) -> str:
    return hashlib.sha1(i.to_bytes(8, "little")).hexdigest()


def _rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def run_variant(name: str, n: int, seed: int = 1, lookups: int = LOOKUPS) -> dict:
    """Run one variant in this process; returns its figures."""
    sys.path.insert(0, str(REPO))
    from crawlfw.utils._seen import Fingerprints, seen_set

    rss_before = _rss_mib()
    tmp = tempfile.mkdtemp(prefix="bench-seen-")
    if name == "set":
        fps: set = set()

        def add(fp):
            if fp in fps:
                return False
            fps.add(fp)
            return True

        contains = fps.__contains__
        seen = None
    else:
        seen = seen_set(tempdir=tmp, **VARIANTS[name])
        view = Fingerprints(seen)
        seen_add, fromhex = seen.add, bytes.fromhex

        def add(fp):
            return seen_add(fromhex(fp))

        contains = view.__contains__
    rng = random.Random(seed)
    made = 0  # distinct fingerprints made so far: _fp(0) .. _fp(made - 1)
    inserts = wrong = 0
    cpu = 0.0
    while made < n:
        chunk, fresh = [], []
        while len(chunk) < CHUNK and made < n:
            if made and rng.random() < DUPES:
                chunk.append(_fp(rng.randrange(made)))
                fresh.append(False)
            else:
                chunk.append(_fp(made))
                fresh.append(True)
                made += 1
        t = time.process_time()
        answers = [add(fp) for fp in chunk]
        cpu += time.process_time() - t
        inserts += len(chunk)
        wrong += sum(a is not f for a, f in zip(answers, fresh, strict=True))
    insert_ns = cpu / inserts * 1e9
    # Lookups: lookups // 2 fingerprints inserted, as many never seen (in chunks).
    found_present = found_absent = 0
    cpu = 0.0
    for start in range(0, lookups // 2, CHUNK):
        size = min(CHUNK, lookups // 2 - start)
        present = [_fp(rng.randrange(made)) for _ in range(size)]
        absent = [_fp(n + start + i) for i in range(size)]
        t = time.process_time()
        found_present += sum(1 for fp in present if contains(fp))
        found_absent += sum(1 for fp in absent if contains(fp))
        cpu += time.process_time() - t
    lookup_ns = cpu / max(lookups, 1) * 1e9
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {
        "variant": name, "n": n, "inserts": inserts, "peak_rss_mib": round(peak, 1),
        "rss_before_mib": round(rss_before, 1), "insert_ns": round(insert_ns),
        "lookup_ns": round(lookup_ns), "wrong_inserts": wrong,
        "missed_present": lookups // 2 - found_present, "found_absent": found_absent,
    }
    if seen is not None:
        out.update(disk_bytes=seen.disk_bytes, spills=getattr(seen, "spills", 0),
                   disk_lookups=getattr(seen, "disk_lookups", 0),
                   memory_bytes=seen.memory_bytes, length=len(seen))
        seen.close()
    else:
        out.update(length=len(fps))
    os.rmdir(tmp)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000_000, help="distinct fingerprints")
    parser.add_argument("--only", default=",".join(VARIANTS),
                        help="comma-separated variants: " + ", ".join(VARIANTS))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run_variant(args.child, args.n)))
        return 0
    print(f"{args.n:,} distinct fingerprints, ~{DUPES:.0%} of inserts repeated; "
          f"{LOOKUPS:,} lookups (half present); CPU figures are noisy on a shared machine")
    print(f"{'variant':8} {'peak RSS':>10} {'before':>8} {'insert':>9} {'lookup':>9} "
          f"{'disk':>9} {'spills':>6} {'disk lookups':>12} {'errors':>7}")
    for name in args.only.split(","):
        proc = subprocess.run([sys.executable, __file__, "--n", str(args.n), "--child", name],
                              capture_output=True, text=True, check=False)
        if proc.returncode:
            print(f"{name}: failed\n{proc.stderr[-2000:]}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        errors = r["wrong_inserts"] + r["missed_present"] + r["found_absent"]
        print(f"{name:8} {r['peak_rss_mib']:>7.0f} MiB {r['rss_before_mib']:>4.0f} MiB "
              f"{r['insert_ns']:>6} ns {r['lookup_ns']:>6} ns "
              f"{r.get('disk_bytes', 0) / 2**20:>5.0f} MiB {r.get('spills', 0):>6} "
              f"{r.get('disk_lookups', 0):>12,} {errors:>7}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
