"""bench_broad.py --skewed (issue 18; benchmarks/_skewed.py): its pure helpers, its
spiders, and one smoke run at a tiny scale (real crawls of crawlfw's three frontiers against a real slow site and
redis-server; Scrapy is never run here). Nothing about speed is asserted."""

import http.client
import json
import re
import subprocess
import sys
from collections import deque
from pathlib import Path

import pytest

from tests.support.broadsite import BroadSite

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import _skewed  # noqa: E402


def _get(port, host, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers={"Host": f"{host}:{port}"})
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def test_skewed_expected_is_what_the_site_links():
    """Every URL reachable from the hosts' ``/`` on a real BroadSite, and nothing else."""
    site = BroadSite(pages=3, links=20, host_pages={"big.localhost": 45})
    try:
        reached = set()
        todo = deque(f"http://{h}:{site.port}/" for h in
                     ("big.localhost", "site0.localhost", "site1.localhost"))
        while todo:
            url = todo.popleft()
            if url in reached:
                continue
            reached.add(url)
            host, path = re.match(r"http://([^:/]+):\d+(/.*)", url).groups()
            status, body = _get(site.port, host, path)
            assert status == 200, url
            todo.extend(f"http://{host}:{site.port}{href}"
                        for href in re.findall(r'href="([^"]+)"', body))
    finally:
        site.stop()
    expected = _skewed.skewed_expected(site.port, "big.localhost", 45, 2, 3)
    assert reached == expected and len(expected) == 45 + 2 * 3
    assert _skewed.skewed_expected(8000, "big.localhost", 1, 0, 3) == {
        "http://big.localhost:8000/"}


def test_check_feed_counts_missing_twice_and_extra():
    expected = {"a", "b", "c"}
    assert _skewed.check_feed(["c", "a", "b"], expected) == {
        "pages": 3, "unique": 3, "missing": 0, "twice": 0, "extra": 0, "complete": True}
    check = _skewed.check_feed(["a", "a", "x"], expected)
    assert check == {"pages": 3, "unique": 2, "missing": 2, "twice": 1, "extra": 1,
                     "complete": False}
    assert not _skewed.check_feed(["a", "b", "c", "c"], expected)["complete"]
    assert not _skewed.check_feed([], expected)["complete"]


def test_read_feed_urls(tmp_path):
    feed = tmp_path / "items.jl"
    assert _skewed.read_feed_urls(feed) == []  # missing: nothing crawled
    feed.write_text('{"url": "http://a/"}\n\n{"url": "http://b/"}\n')
    assert _skewed.read_feed_urls(feed) == ["http://a/", "http://b/"]
    feed.write_text('{"url": "http://a/"}\n{"title": "no url"}\n')
    with pytest.raises(ValueError, match=r"items\.jl:2: not an item with a url"):
        _skewed.read_feed_urls(feed)


def test_most_at_once_counts_requests_outstanding_together():
    # big: 3 within 0.1 s of 1.00, then one at 1.10 (the first answered by then).
    log = [(1.00, "big"), (1.05, "big"), (1.09, "big"), (1.10, "big"), (1.12, "big"),
           (5.0, "small"), (1.0, "other"), (1.2, "other")]
    assert _skewed.most_at_once(log, 0.1) == {"big": 4, "small": 1, "other": 1}
    assert _skewed.most_at_once(log, 1.0)["big"] == 5
    assert _skewed.most_at_once(list(reversed(log)), 0.1)["big"] == 4  # any order


def test_most_at_once_on_a_real_server_holding_answers():
    """Eight requests at once to one host of a BroadSite holding answers 0.2 s, then
    one more after they were answered: 8, not 9."""
    import threading

    site = BroadSite(pages=3, latency_s=0.2, record=True)
    try:
        threads = [threading.Thread(target=_get, args=(site.port, "big.localhost", "/"))
                   for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        _get(site.port, "big.localhost", "/p/1")
    finally:
        site.stop()
    assert _skewed.most_at_once(site.log, 0.2) == {"big.localhost": 8}


def test_big_host_trace():
    """Two transfers per host, three in all, answers held 0.1 s: the big host's pairs
    at 0, 0.105 and 0.255 s leave it under its limit at 0.10 s and from 0.21 to 0.25 s;
    three other requests at 0.212-0.214 s take all the credit from 0.22 s on."""
    log = [(t, "big") for t in (0.0, 0.0, 0.105, 0.105, 0.255, 0.255)]
    log += [(t, "small") for t in (0.212, 0.213, 0.214)]
    trace = _skewed.big_host_trace(log, "big", 0.1, per_domain=2, total=3, bin_s=0.1)
    assert trace == {
        "big_starts": [2, 2, 2], "other_starts": [0, 0, 3],
        "turnaround_p50_s": 0.005, "turnaround_p90_s": 0.05,
        "samples": 26, "under_limit": 6, "under_limit_credit_free": 2}
    assert _skewed.big_host_trace(log, "nosuch", 0.1, 2, 3) == {}
    # The shared frontier's count beside the server's: 2 then 1 while the small hosts
    # run (until 0.214 s), 2 after; the server saw 2 at 0.05 and 0.15 s, 0 at 0.22 s.
    frontier = [(0.05, 2), (0.15, 1), (0.22, 2), (0.30, 2)]
    figures = _skewed.big_host_trace(log, "big", 0.1, 2, 3, frontier=frontier)["frontier"]
    assert figures == {
        "others_running": {"samples": 2, "frontier_mean": 1.5, "server_mean": 2.0},
        "big_alone": {"samples": 1, "frontier_mean": 2.0, "server_mean": 0.0}}


def test_median():
    assert _skewed.median([3.0]) == 3.0
    assert _skewed.median([5, 1, 3]) == 3
    assert _skewed.median([4, 1, 3, 2]) == 2.5
    assert _skewed.median([1, None]) is None


def _run(config, kind, wall, span, cpu=1.0, complete=True, startup=0.5, tail=0.2):
    return {"config": config, "kind": kind, "wall_s": wall, "span_s": span, "cpu_s": cpu,
            "complete": complete, "startup_s": startup, "tail_s": tail, "cpu_wait_s": 2.0,
            "max_per_host": 8 if config == "memory" else 20}


def test_skewed_summary_ratios_over_the_measured_floor():
    runs = [_run("scrapy", "alone", 8.0, 7.6), _run("scrapy", "mix", 12.0, 11.4),
            _run("memory", "alone", 9.0, 7.8), _run("memory", "mix", 9.9, 8.0),
            _run("memory", "alone", 8.0, 7.7), _run("memory", "mix", 8.6, 7.9),
            _run("memory", "alone", 8.5, 7.6, complete=True),
            _run("memory", "mix", 20.0, 19.0, complete=False, tail=10.0)]
    rows = _skewed.skewed_summary(runs)
    assert [r["config"] for r in rows] == ["memory", "scrapy"]  # SKEWED_CONFIGS order
    memory, scrapy = rows
    assert memory["repeats"] == 3 and not memory["complete"]
    assert memory["floor_wall_s"] == 8.5 and memory["mix_wall_s"] == 9.9
    assert memory["ratio_wall"] == pytest.approx(9.9 / 8.5)
    assert memory["ratio_span"] == pytest.approx(8.0 / 7.7)
    assert memory["mix_tail_s"] == 0.2 and memory["floor_startup_s"] == 0.5
    assert memory["mix_cpu_wait_s"] == 2.0 and memory["max_per_host"] == 8
    assert scrapy["complete"] and scrapy["ratio_wall"] == pytest.approx(1.5)
    assert scrapy["max_per_host"] == 20
    assert scrapy["label"] == "Scrapy, default queue"
    # A configuration with no mix (or no floor) has no ratio.
    only = _skewed.skewed_summary([_run("jobdir", "alone", 8.0, 7.5)])
    assert only[0]["ratio_wall"] is None and only[0]["mix_wall_s"] is None


def test_skewed_spiders_are_in_step():
    ours = (BENCH / "spiders" / "skewed_spider.py").read_text()
    theirs = (BENCH / "spiders" / "skewed_spider_scrapy.py").read_text()

    def code(text):  # the spider class, the framework name neutralised
        return text[text.index("class SkewedSpider"):].replace("scrapy", "FW").replace(
            "crawlfw", "FW")

    start = code(theirs).index("    async def start(self):")
    end = code(theirs).index("    def parse(self")
    assert code(theirs)[:start] + code(theirs)[end:] == code(ours)
    assert "import crawlfw" not in theirs and "import scrapy" not in ours


@pytest.mark.slow
def test_bench_broad_rejects_bad_skewed_options():
    out = subprocess.run([sys.executable, str(BENCH / "bench_broad.py"), "--skewed",
                          "--configs", "memory,nosuch"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "--configs: unknown nosuch" in out.stderr
    out = subprocess.run([sys.executable, str(BENCH / "bench_broad.py"), "--skewed",
                          "--big-pages", "0"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--big-pages must be at least 1, got 0" in out.stderr
    out = subprocess.run([sys.executable, str(BENCH / "bench_broad.py"), "--skewed", "--help"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "--small-hosts" in out.stdout
    out = subprocess.run([sys.executable, str(BENCH / "bench_broad.py"), "--help"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "--skewed" in out.stdout and "--hosts" in out.stdout


@pytest.mark.slow
def test_bench_broad_skewed_smoke(tmp_path):
    """The skewed mix end to end at a tiny scale, crawlfw in memory, with JOBDIR and on
    two workers sharing a redis-server the benchmark starts: every run complete (every
    page once in its feed), a floor and a ratio per configuration, the table printed;
    without --scrapy-python the Scrapy rows are skipped and say why."""
    from tests.support.redisserver import require_redis

    require_redis()
    argv = [sys.executable, str(BENCH / "bench_broad.py"), "--skewed", "--big-pages", "30",
            "--small-hosts", "6", "--latency", "0.02", "--per-domain", "4",
            "--concurrency", "8", "--keep", str(tmp_path)]
    out = subprocess.run([*argv, "--json", "--trace"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    result = json.loads(out.stdout)
    assert result["site"]["floor_s"] == pytest.approx(30 / 4 * 0.02)
    assert result["skipped"] == {"scrapy": "no --scrapy-python",
                                 "scrapy-dapq": "no --scrapy-python"}
    assert [r["config"] for r in result["rows"]] == ["memory", "jobdir", "redis"]
    assert [(r["config"], r["kind"]) for r in result["runs"]] == [
        (c, k) for c in ("memory", "jobdir", "redis") for k in ("alone", "mix")]
    for run in result["runs"]:
        assert run["complete"] and run["exit"] == 0, run
        assert run["pages"] == run["unique"] == 30 + (6 * 3 if run["kind"] == "mix" else 0)
        assert 0 < run["max_per_host"] <= 4, run  # the per-domain limit, at the server
        assert run["span_s"] > 0 and run["startup_s"] > 0 and run["tail_s"] >= 0
        assert run["wall_s"] >= run["span_s"]
        trace = run["trace"]  # --trace: the big host's 30 requests, the others' 18
        assert sum(trace["big_starts"]) == 30
        assert sum(trace["other_starts"]) == (18 if run["kind"] == "mix" else 0)
        assert trace["samples"] > 0 and trace["under_limit_credit_free"] <= trace["under_limit"]
        if run["config"] == "redis":  # --trace samples the shared frontier's count
            assert trace["frontier"]["big_alone"]["samples"] + trace["frontier"][
                "others_running"]["samples"] > 0
        if run["cpu_wait_s"] is not None:  # Linux schedstat: the crawler's run-queue wait
            assert run["cpu_wait_s"] >= 0
    for row in result["rows"]:
        assert row["complete"] and row["ratio_wall"] > 0 and row["ratio_span"] > 0
    assert (tmp_path / "redis").is_dir()  # the benchmark's own redis-server ran there
