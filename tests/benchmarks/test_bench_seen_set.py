"""benchmarks/bench_seen_set.py at a tiny size, each variant in this process: the figures
are there and the exact kinds make no error. Nothing about speed is asserted."""

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import bench_seen_set  # noqa: E402


@pytest.mark.parametrize("variant", ["set", "exact", "spill", "bloom"])
def test_each_variant_runs_and_counts(variant):
    r = bench_seen_set.run_variant(variant, 6000, lookups=2000)
    assert r["variant"] == variant and r["n"] == 6000
    assert r["inserts"] > 6000 * 1.3  # ~30 % repeats
    assert r["length"] <= 6000 and r["peak_rss_mib"] > 0 and r["insert_ns"] > 0
    if variant != "bloom":
        assert r["length"] == 6000
        assert r["wrong_inserts"] == r["missed_present"] == r["found_absent"] == 0
    else:
        assert r["missed_present"] == 0  # a Bloom filter never forgets
