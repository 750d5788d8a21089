"""The dashboard's plain parts in the crawl process (crawlfw/core/control/history.py): the
bounded sample history, the latency histogram, the recent errors."""

import json
import logging
import random

import pytest

from crawlfw.core.control.history import History, LatencyHistogram, RecentErrors


def _sample(t, pages):
    return {"t": t, "pages": pages, "items": pages // 2, "status": {"200": pages}}


def test_the_last_seconds_are_kept_whole_and_older_ones_one_a_minute():
    history = History(fine_s=600, coarse_interval_s=60, coarse_max=100)
    for i in range(3600):  # an hour, one a second
        history.add(_sample(1000.0 + i, i))
    samples = history.samples()
    times = [s["t"] for s in samples]
    assert times == sorted(times)
    fine = [t for t in times if t >= 1000.0 + 3599 - 600]
    assert fine == [1000.0 + i for i in range(2999, 3600)]  # 601 samples at 1 s
    coarse = [t for t in times if t < 1000.0 + 2999]
    gaps = {b - a for a, b in zip(coarse, coarse[1:], strict=False)}
    assert gaps == {60.0}
    assert coarse[0] == 1000.0  # the run's start is kept
    # cumulative counters: nothing is lost by dropping samples
    assert samples[-1]["pages"] == 3599


def test_memory_stays_bounded_however_long_the_run():
    history = History(fine_s=60, coarse_interval_s=10, coarse_max=50)
    for i in range(200_000):  # 55 hours
        history.add(_sample(float(i), i))
    assert len(history) <= 61 + 51
    samples = history.samples()
    assert samples[0]["t"] == 0.0  # the first sample is never thinned away
    assert samples[-1]["t"] == 199_999.0
    times = [s["t"] for s in samples]
    assert times == sorted(times)


def test_samples_since_and_limit_and_last():
    history = History(fine_s=100)
    for i in range(10):
        history.add(_sample(10.0 + i, i))
    assert [s["t"] for s in history.samples(since=15.0)] == [16.0, 17.0, 18.0, 19.0]
    assert [s["t"] for s in history.samples(since=15.5, limit=2)] == [18.0, 19.0]
    assert history.samples(since=19.0) == []
    assert history.last()["pages"] == 9
    assert History(fine_s=100).last() is None


def test_a_sample_within_half_a_second_replaces_the_last():
    history = History(fine_s=100)
    history.add(_sample(10.0, 1))
    history.add(_sample(10.3, 2))
    history.add(_sample(11.0, 3))
    assert [(s["t"], s["pages"]) for s in history.samples()] == [(10.3, 2), (11.0, 3)]


def test_no_history_kept_with_zero_seconds():
    history = History(fine_s=0)
    history.add(_sample(10.0, 1))
    assert history.samples() == [] and len(history) == 0


def test_saved_history_goes_before_the_samples_of_the_resumed_run(tmp_path):
    path = tmp_path / "dashboard-history.json"
    first = History(fine_s=50, coarse_interval_s=10)
    for i in range(120):
        first.add(_sample(1000.0 + i, i))
    first.save(path)
    assert not (tmp_path / "dashboard-history.json.tmp").exists()
    resumed = History(fine_s=50, coarse_interval_s=10)
    for i in range(5):  # the resumed run's counters start again from 0
        resumed.add(_sample(2000.0 + i, i))
    assert resumed.load(path) == len(first)
    samples = resumed.samples()
    assert [s["t"] for s in samples[-5:]] == [2000.0 + i for i in range(5)]
    assert [s["t"] for s in samples] == sorted(s["t"] for s in samples)
    old = [s for s in samples if s["t"] < 2000.0]
    saved = {s["t"]: s for s in first.samples()}
    assert old[0]["t"] == 1000.0 and len(old) >= 10
    assert all(saved[s["t"]] == s for s in old)  # the saved samples, unchanged
    # older than the fine part now: one every 10 s
    assert all(b["t"] - a["t"] >= 10.0 for a, b in zip(old, old[1:], strict=False))


def test_a_file_that_is_no_history_is_refused_naming_it(tmp_path):
    path = tmp_path / "dashboard-history.json"
    assert History().load(path) == 0  # none yet: a fresh crawl
    path.write_text("{not json")
    with pytest.raises(ValueError, match="dashboard-history.json: not a dashboard history"):
        History().load(path)
    path.write_text(json.dumps({"version": 99}))
    with pytest.raises(ValueError, match="version 1"):
        History().load(path)


def test_latency_buckets_count_as_prometheus_le_does():
    histogram = LatencyHistogram(buckets=(0.1, 1.0))
    rng = random.Random(33)
    values = [rng.uniform(0, 3) for _ in range(500)] + [0.1, 1.0]
    for v in values:
        histogram.observe(v)
    snap = histogram.snapshot()
    assert snap["buckets"] == [0.1, 1.0]
    assert snap["counts"] == [sum(v <= 0.1 for v in values),
                              sum(0.1 < v <= 1.0 for v in values),
                              sum(v > 1.0 for v in values)]
    assert snap["sum"] == pytest.approx(sum(values), abs=1e-4)


def test_recent_errors_keep_kind_traceback_and_url():
    handler = RecentErrors(size=3)
    log = logging.getLogger("tests.dashboard.errors")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("not kept: %s", "below ERROR")
        try:
            raise ZeroDivisionError("boom")
        except ZeroDivisionError:
            log.exception("Spider error processing <GET http://127.0.0.1:1/a?b=1> (referer: None)")
        log.error("Plain error without a URL")
        errors = handler.errors()
        assert [e["kind"] for e in errors] == ["ZeroDivisionError", "ERROR"]
        assert errors[0]["url"] == "http://127.0.0.1:1/a?b=1"
        assert "ZeroDivisionError: boom" in errors[0]["traceback"]
        assert errors[1]["url"] is None and errors[1]["traceback"] is None
        assert set(errors[0]) == {"t", "kind", "message", "traceback", "url"}
        assert handler.errors(since=errors[0]["t"]) == [e for e in errors[1:]
                                                        if e["t"] > errors[0]["t"]]
        for i in range(5):
            log.error("error %d", i)
        assert [e["message"] for e in handler.errors()] == ["error 2", "error 3", "error 4"]
    finally:
        log.removeHandler(handler)


def _full_sample(rng, i):
    """A sample shaped as the sampler's (crawlfw/dashboard/sampler.py build_sample) for a
    one-host continuous crawl, its figures moving as a crawl's do."""
    t = 1795935600.0 + i
    return {"t": t, "pages": 100 * i + rng.randrange(100), "items": 3 * i,
            "bytes": 2_000_000 * i, "status": {"200": 50 * i, "304": 50 * i + rng.randrange(9)},
            "errors": {},
            "latency": {"buckets": [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                                    10.0, 30.0, 60.0],
                        "counts": [rng.randrange(10**6) for _ in range(14)],
                        "sum": round(rng.random() * 1e5, 6)},
            "frontier": {"queued": rng.randrange(20000), "in_flight": 16, "leased": 16,
                         "on_disk": None},
            "hosts": {"ready": 1, "waiting": 0,
                      "busiest": [{"host": "127.0.0.1:38001", "queued": rng.randrange(20000),
                                   "in_flight": 16, "delay": 0.0}]},
            "actors": [{"name": name, "restarts": 0, "mailbox": rng.randrange(50),
                        "cpu": round(rng.random() * 1000, 3)}
                       for name in ("engine", "scheduler", "spider_runner", "pipeline",
                                    "downloader 0", "exporter 0")],
            "memory": {"rss": 100_000_000 + rng.randrange(10**7), "limit": None,
                       "warning": None},
            "revisit": {"due_now": rng.randrange(2000), "next_due": t + 30.5},
            "state": "running", "shared": None}


def test_half_an_hour_of_samples_weighs_about_half_a_megabyte(tmp_path):
    # issue 32 (RSS flat over an hour of continuous crawl): the history, sampled once a
    # second whether or not a dashboard is open, took 4.2 MB in its first hour as JSON
    # text (~1.2 KB a sample); deflated against the first sample, 1.2 MB. Half an hour:
    # 2.1 MB before, 0.6 MB now
    import tracemalloc

    rng = random.Random(32)
    samples = [_full_sample(rng, i) for i in range(1800)]
    history = History(fine_s=3600)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for sample in samples:
            history.add(sample)
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(history) == 1800
    assert kept < 0.9e6, kept
    assert history.samples() == samples  # nothing lost
    assert history.last() == samples[-1]
    history.save(tmp_path / "history.json")
    again = History(fine_s=3600)
    assert again.load(tmp_path / "history.json") == 1800
    assert again.samples() == samples
