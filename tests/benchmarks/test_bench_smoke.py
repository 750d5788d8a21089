"""Smoke run of the crawl benchmark's machinery at a tiny size, and checks of its site.

The crawl run is a real one (site server in another process, crawlfw and the bare loop as
subprocesses); Scrapy is never run here. Nothing about speed is asserted.
"""

import json
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections import deque
from pathlib import Path
from urllib.parse import urljoin

import pytest
from lxml import html as lxml_html

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

from _crawlsite import (  # noqa: E402
    MAX_PAGE_BYTES,
    MIN_PAGE_BYTES,
    SiteServer,
    SiteSpec,
)

SMOKE_PAGES = 50


def _hrefs(body: bytes) -> list[str]:
    return lxml_html.fromstring(body).xpath("//a/@href")


@pytest.mark.slow
@pytest.mark.parametrize("pages,seed", [(2, 1), (11, 3), (50, 1), (500, 7)])
def test_site_pages_links_and_reachability(pages, seed):
    spec = SiteSpec(pages, seed)
    seen = {0}
    todo = deque([0])
    while todo:
        i = todo.popleft()
        body = spec.body(i)
        assert MIN_PAGE_BYTES <= len(body) <= MAX_PAGE_BYTES
        doc = lxml_html.fromstring(body)
        assert doc.findtext(".//title") == f"Page {i}"
        targets = [spec.page_of_path(urljoin("http://h" + spec.path(i), h)[len("http://h"):])
                   for h in _hrefs(body)]
        assert targets == spec.links(i)
        assert None not in targets and i not in targets
        assert len(set(targets)) == len(targets)
        assert min(10, pages - 1) <= len(targets) <= 20
        for j in targets:
            if j not in seen:
                seen.add(j)
                todo.append(j)
    assert seen == set(range(pages))


def test_site_is_deterministic_and_seeded():
    a, b, c = SiteSpec(300, 5), SiteSpec(300, 5), SiteSpec(300, 6)
    assert [a.body(i) for i in range(0, 300, 7)] == [b.body(i) for i in range(0, 300, 7)]
    assert a.body(17) != c.body(17)


@pytest.mark.parametrize("path,page", [
    ("/", 0), ("/p/1.html", 1), ("/p/49.html", 49), ("/p/49.html?x=1", 49),
    ("/p/50.html", None), ("/p/0.html", None), ("/p/01.html", None), ("/index.html", None),
    ("/p/-1.html", None), ("/robots.txt", None),
])
def test_site_paths(path, page):
    assert SiteSpec(50).page_of_path(path) == page


def test_site_rejects_too_few_pages():
    with pytest.raises(ValueError, match="pages=1"):
        SiteSpec(1)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["python", "nginx"])
def test_server_serves_pages_and_404(kind):
    if kind == "nginx" and shutil.which("nginx") is None:
        pytest.skip("nginx is not installed")
    spec = SiteSpec(30, 2)
    with SiteServer(spec, workers=2, prefer_nginx=kind == "nginx") as server:
        assert server.kind == kind
        for i in (0, 1, 29):
            with urllib.request.urlopen(server.url + spec.path(i), timeout=10) as r:
                assert r.headers["Content-Type"] == "text/html; charset=utf-8"
                assert r.read() == spec.body(i)
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(server.url + "/p/30.html", timeout=10)
        assert err.value.code == 404


def test_spiders_are_in_step():
    ours = (BENCH / "spiders" / "bench_spider.py").read_text()
    theirs = (BENCH / "spiders" / "bench_spider_scrapy.py").read_text()

    def code(text):  # the class body up to parse(), with the framework name neutralised
        return text[text.index("class BenchSpider"):].replace("scrapy", "FW").replace("crawlfw", "FW")

    start = code(theirs).index("    async def start(self):")
    end = code(theirs).index("    def parse(self")
    assert code(theirs)[:start] + code(theirs)[end:] == code(ours)


@pytest.mark.slow
def test_bench_crawl_smoke(tmp_path):
    """The benchmark script end to end at 50 pages: figures for crawlfw and the bare loop,
    every page crawled exactly once, the table and the JSON line printed."""
    out = subprocess.run(
        [sys.executable, str(BENCH / "bench_crawl.py"), "--pages", str(SMOKE_PAGES),
         "--no-reference", "--python-server", "--timeout", "60", "--keep", str(tmp_path),
         "--json"],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    table, last = out.stdout.rstrip().rsplit("\n", 1)
    result = json.loads(last)
    assert [r["name"] for r in result["runs"]] == ["crawlfw", "bare"]
    assert result["ratio"] is None and "--no-reference" in result["reference_note"]
    bare_ratio = result["runs"][0]["cpu_s_per_1000_pages"] / result["runs"][1]["cpu_s_per_1000_pages"]
    assert result["ratios"] == {"bare": pytest.approx(bare_ratio)}
    assert f"ratio crawlfw/bare loop CPU s per 1,000 pages: {bare_ratio:.2f}" in table
    assert result["site"]["pages"] == SMOKE_PAGES and result["site"]["server"] == "python"
    for run in result["runs"]:
        assert run["returncode"] == 0 and not run["timed_out"]
        assert run["pages"] == run["unique"] == SMOKE_PAGES and run["complete"], run
        assert run["cpu_s"] > 0 and run["wall_s"] > 0 and run["peak_rss_mib"] > 0
        assert run["cpu_s_per_1000_pages"] == pytest.approx(1000 * run["cpu_s"] / SMOKE_PAGES)
        assert f"{run['name']:<8}" in table
    crawlfw_run = result["runs"][0]
    assert crawlfw_run["responses"] == SMOKE_PAGES
    assert crawlfw_run["finish_reason"] == "finished"
    urls = {json.loads(line)["url"] for line in (tmp_path / "crawlfw.jl").read_text().splitlines()}
    assert len(urls) == SMOKE_PAGES
    assert "CPU s/1k" in table and "--no-reference" in table


@pytest.mark.slow
def test_bench_crawl_rounds(tmp_path):
    """``--rounds 2``: every crawler runs twice, in turn; the table gives medians and each
    ratio is the median of the rounds' own ratios, with their spread."""
    out = subprocess.run(
        [sys.executable, str(BENCH / "bench_crawl.py"), "--pages", str(SMOKE_PAGES),
         "--no-reference", "--python-server", "--timeout", "60", "--keep", str(tmp_path),
         "--rounds", "2", "--json"],
        capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    table, last = out.stdout.rstrip().rsplit("\n", 1)
    result = json.loads(last)
    assert result["rounds"] == 2
    assert [(r["name"], r["round"]) for r in result["runs"]] == [
        ("crawlfw", 1), ("bare", 1), ("crawlfw", 2), ("bare", 2)]
    per_round = [result["runs"][i]["cpu_s_per_1000_pages"] / result["runs"][i + 1]["cpu_s_per_1000_pages"]
                 for i in (0, 2)]
    assert result["ratios_by_round"] == {"bare": pytest.approx(per_round)}
    assert result["ratios"]["bare"] == pytest.approx(sum(per_round) / 2)  # median of two
    assert (f"ratio crawlfw/bare loop CPU s per 1,000 pages: {result['ratios']['bare']:.3f} "
            f"({min(per_round):.3f}-{max(per_round):.3f})") in table
    assert "each crawler ran 2 times" in table
    rows = [line for line in table.splitlines() if line.startswith(("crawlfw ", "bare "))]
    assert len(rows) == 2  # one row of medians per crawler
    for run in result["runs"]:
        assert run["complete"] and run["returncode"] == 0, run
    assert sorted(p.name for p in tmp_path.glob("*.jl")) == [
        "bare.1.jl", "bare.2.jl", "crawlfw.1.jl", "crawlfw.2.jl"]
    bad = subprocess.run([sys.executable, str(BENCH / "bench_crawl.py"), "--rounds", "0"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--rounds must be at least 1, got 0" in bad.stderr


@pytest.mark.slow
def test_bench_idle_smoke():
    """The idle-CPU benchmark runs and reports (its figure is not judged here)."""
    out = subprocess.run([sys.executable, str(BENCH / "bench_idle.py"), "--seconds", "0.2",
                          "--budget", "-1", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["finish_reason"] == "finished" and result["ok"] is True
    assert result["idle_s"] >= 0.2 and result["cpu_s"] >= 0
    bad = subprocess.run([sys.executable, str(BENCH / "bench_idle.py"), "--seconds", "0"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--seconds must be positive" in bad.stderr


@pytest.mark.slow
def test_bench_crawl_rejects_bad_options():
    out = subprocess.run([sys.executable, str(BENCH / "bench_crawl.py"), "--pages", "1"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--pages must be at least 2, got 1" in out.stderr


@pytest.mark.slow
def test_bench_workers_smoke(tmp_path):
    """bench_workers.py end to end at 50 pages with 1 and 2 workers on a real
    redis-server: every run complete, Redis round trips per page counted."""
    from tests.support.redisserver import require_redis

    require_redis()
    out = subprocess.run(
        [sys.executable, str(BENCH / "bench_workers.py"), "--pages", str(SMOKE_PAGES),
         "--workers", "1,2", "--python-server", "--keep", str(tmp_path), "--json"],
        capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    table, last = out.stdout.rstrip().rsplit("\n", 1)
    result = json.loads(last)
    assert [r["name"] for r in result["runs"]] == ["single", "1 worker", "2 workers"]
    for run in result["runs"]:
        assert run["codes"] == [0] * max(1, run["workers"])
        assert run["pages"] == run["unique"] == SMOKE_PAGES and run["complete"], run
        assert run["cpu_s_per_1000_pages"] > 0
    single, one, two = result["runs"]
    assert single["redis_calls_per_page"] == 0 and single["redis_cpu_s"] == 0
    assert one["redis_calls_per_page"] > 0 and two["redis_calls_per_page"] > 0
    assert "calls/page" in table and "2 workers" in table


@pytest.mark.slow
def test_bench_longrun_smoke(tmp_path):
    """bench_longrun.py end to end at 600 pages, 1 and 10 queries: every page crawled
    once (dont_filter chains), RSS sampled every 100 pages, a slope computed."""
    out = subprocess.run(
        [sys.executable, str(BENCH / "bench_longrun.py"), "--pages", "600",
         "--sample-every", "100", "--chains", "4", "--keep", str(tmp_path), "--json"],
        capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout + out.stderr
    table, last = out.stdout.rstrip().rsplit("\n", 1)
    result = json.loads(last)
    assert result["warmup"] == 120
    assert [(r["framework"], r["queries"]) for r in result["runs"]] == [
        ("crawlfw", 1), ("crawlfw", 10)]
    for run in result["runs"]:
        assert run["returncode"] == 0 and not run["timed_out"] and run["pages"] == 600
        assert [p for p, _ in run["samples"]] == [0, *range(100, 700, 100), 600]
        assert all(rss > 10e6 for _, rss in run["samples"])
        assert run["slope"] is not None and run["rss_end_mb"] > 0
        feed = tmp_path / f"crawlfw-q{run['queries']}.jl"
        items = [json.loads(line) for line in feed.read_text().splitlines()]
        assert sorted(item["i"] for item in items) == list(range(1, 601))
        assert all(item["title"] == f"Page {item['i']}" for item in items)
    assert "MB/10k pages" in table


@pytest.mark.slow
def test_bench_longrun_slope_and_options():
    import bench_longrun

    line = [(p, 50_000_000 + 30 * p, 0.0) for p in range(0, 50_001, 1000)]
    figures = bench_longrun.analyse(line, warmup=10_000)
    assert figures["slope"] == pytest.approx(0.3)  # 30 bytes/page = 0.3 MB per 10,000
    assert figures["slope_first_half"] == pytest.approx(0.3)
    assert figures["rss_warm_mb"] == pytest.approx(50.3)
    out = subprocess.run([sys.executable, str(BENCH / "bench_longrun.py"), "--pages", "100"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "at least twice --sample-every" in out.stderr
    out = subprocess.run([sys.executable, str(BENCH / "bench_longrun.py"), "--queries", "11"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "each must be 1-10" in out.stderr


@pytest.mark.slow
def test_bench_pagepath_smoke():
    """The per-page path benchmark at 20 pages: every page's requests and item come out
    (the site's pages link to 10-20 other pages each), and a figure is printed."""
    out = subprocess.run(
        [sys.executable, str(BENCH / "bench_pagepath.py"), "--pages", "20", "--repeat", "2",
         "--json"],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["pages"] == 20 and result["items"] == 20
    assert 20 * 10 <= result["requests"] <= 20 * 20
    assert len(result["passes"]) == 2 and result["us_per_page"] == min(result["passes"]) > 0
    bad = subprocess.run([sys.executable, str(BENCH / "bench_pagepath.py"), "--pages", "0"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--pages and --repeat must be at least 1" in bad.stderr
