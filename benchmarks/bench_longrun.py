"""Benchmark: does a long crawl's memory stay flat? RSS slope in MB per 10,000 pages.

A crawl of ``--pages`` pages (200,000 by default) of the generated benchmark site
(``_crawlsite.py``: 5-15 KB HTML pages, served on 127.0.0.1 by its multi-process Python
server, or by nginx with ``--nginx``), once per ``--queries`` value (1 and 10 CSS queries
per page by default), by crawlfw and, with ``--scrapy-python``, by Scrapy.

What grows with the pages crawled in any crawler, the duplicate filter (a fingerprint
per page seen) and a frontier that fills up with links, is left out on purpose, so the
slope measures what each page leaves behind in the per-page path (downloader,
response, selectors, spider middlewares, pipeline, feed):

* every request is ``dont_filter=True``, so neither framework's duplicate filter
  records anything (``RFPDupeFilter.request_seen`` is not called for them);
* the spider follows ``--chains`` (16) chains of pages instead of every link: page
  ``i``'s callback requests page ``i + chains`` only, so exactly ``chains`` requests are
  pending or in flight at any time (``CONCURRENT_REQUESTS`` = ``chains``);
* each page still gives one item ``{"i", "title"}``, written to a ``.jl`` feed.

The callback runs the queries with ``response.css(q).getall()`` (``title::text``; for
10 also links, attributes, classes, descendants, text of every paragraph), and every
``--sample-every`` pages (1,000) it reads its own process's RSS (``/proc/self/statm``)
and appends ``pages rss_bytes monotonic_s`` to a samples file. The same spider source
runs in both frameworks (only the import differs).

Printed per run: pages, wall and CPU seconds (``os.wait4``), RSS at the end of the
warm-up and at the end, peak RSS, and the **slope**: the least-squares line through the
samples after ``--warmup`` pages (default: a fifth of the pages, at most 20,000), in MB
(10^6 bytes) per 10,000 pages, also given for the first and the second half of the
measured part to show whether it levels off. Goal (issue 23): under 0.5 MB per
10,000 pages with 10 queries.

Usage::

    python benchmarks/bench_longrun.py                      # 200,000 pages, 1 and 10 queries
    python benchmarks/bench_longrun.py --pages 30000 --queries 10
    python benchmarks/bench_longrun.py --scrapy-python /tmp/scrapyvenv/bin/python

A 200,000-page run takes about 5-15 minutes per crawlfw crawl on 2 shared cores (the
server shares them); Scrapy is about 5 times slower.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from _crawlsite import SiteServer, SiteSpec  # noqa: E402
from bench_crawl import _env, measure  # noqa: E402

#: The CSS queries a callback runs, first ``n`` of them for ``--queries n``.
QUERIES = [
    "title::text",
    "a::attr(href)",
    "h1.title::text",
    "ul.menu li a::text",
    "meta[name=description]::attr(content)",
    "main p::text",
    "a.ref::attr(href)",
    "nav li",
    "footer p.copy::text",
    "link[rel=stylesheet]::attr(href)",
]

SPIDER = '''\
"""bench_longrun.py's spider ({framework}): {chains} chains of pages, dont_filter, RSS samples."""

import time

import {framework}

QUERIES = {queries!r}
_PAGE = 4096


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


class LongRunSpider({framework}.Spider):
    name = "longrun"
    base_url = "http://127.0.0.1:8000"
    pages = "200000"
    queries = "10"
    chains = "16"
    sample_every = "1000"
    samples = "samples.txt"

    def start_requests(self):
        self._n = 0
        self._last = int(self.pages)  # pages 1 .. pages are crawled
        self._chains = int(self.chains)
        self._every = int(self.sample_every)
        self._queries = QUERIES[:int(self.queries)]
        self._out = open(self.samples, "w")
        self._out.write(f"0 {{_rss_bytes()}} {{time.monotonic()}}\\n")
        for i in range(1, min(self._chains, self._last) + 1):
            yield self._request(i)

    async def start(self):
        # Scrapy >= 2.13 calls start(), not start_requests() (crawlfw follows Scrapy 1.2).
        for request in self.start_requests():
            yield request

    def _request(self, i):
        return {framework}.Request(f"{{self.base_url}}/p/{{i}}.html", callback=self.parse,
                               dont_filter=True, meta={{"i": i}})

    def parse(self, response):
        title = None
        for q in self._queries:
            values = response.css(q).getall()
            if title is None:
                title = values[0] if values else ""
        i = response.meta["i"]
        if i + self._chains <= self._last:
            yield self._request(i + self._chains)
        yield {{"i": i, "title": title}}
        self._n += 1
        if self._n % self._every == 0:
            self._out.write(f"{{self._n}} {{_rss_bytes()}} {{time.monotonic()}}\\n")
            self._out.flush()

    def closed(self, reason):
        self._out.write(f"{{self._n}} {{_rss_bytes()}} {{time.monotonic()}}\\n")
        self._out.close()
'''


def least_squares_slope(points):
    """Least-squares slope of ``[(x, y), ...]`` (y units per x unit), or None with fewer
    than two points or all at one x."""
    n = len(points)
    if n < 2:
        return None
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in points) / sxx


def _fit(points):
    """Least-squares slope of ``[(pages, rss_bytes), ...]`` in MB per 10,000 pages."""
    slope = least_squares_slope(points)
    return None if slope is None else slope * 10_000 / 1e6


def analyse(samples, warmup):
    """Figures from the samples file's ``[(pages, rss_bytes, t), ...]``.

    Returns:
        ``{"slope", "slope_first_half", "slope_second_half"}`` in MB per 10,000 pages
        (None without enough samples), ``"rss_warm_mb"`` and ``"rss_end_mb"`` (MB).
    """
    measured = [(p, r) for p, r, _ in samples if p >= warmup]
    half = len(measured) // 2
    return {
        "slope": _fit(measured),
        "slope_first_half": _fit(measured[:half + 1]),
        "slope_second_half": _fit(measured[half:]),
        "rss_warm_mb": measured[0][1] / 1e6 if measured else None,
        "rss_end_mb": samples[-1][1] / 1e6 if samples else None,
    }


def _read_samples(path):
    out = []
    if path.exists():
        for line in path.read_text().splitlines():
            p, r, t = line.split()
            out.append((int(p), int(r), float(t)))
    return out


def run_one(framework, python, queries, args, base_url, workdir):
    """Run one crawl and return its figures (a dict)."""
    import_name = "scrapy" if framework == "scrapy" else "crawlfw"
    spider = workdir / f"longrun_{framework}.py"
    spider.write_text(SPIDER.format(framework=import_name, queries=QUERIES,
                                    chains=args.chains))
    tag = f"{framework}-q{queries}"
    samples, feed, log = workdir / f"{tag}.samples", workdir / f"{tag}.jl", workdir / f"{tag}.log"
    for path in (samples, feed):
        if path.exists():
            path.unlink()
    settings = ["-s", "LOG_LEVEL=INFO", "-s", f"CONCURRENT_REQUESTS={args.chains}",
                "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={args.chains}"]
    spider_args = ["-a", f"base_url={base_url}", "-a", f"pages={args.pages}",
                   "-a", f"queries={queries}", "-a", f"chains={args.chains}",
                   "-a", f"sample_every={args.sample_every}", "-a", f"samples={samples}"]
    if framework == "scrapy":
        argv = [python, "-m", "scrapy", "runspider", str(spider), "-o", str(feed),
                *spider_args, *settings, "-s", "TELNETCONSOLE_ENABLED=0"]
        env = _env(None)
    else:
        argv = [python, "-m", "crawlfw.cmdline", "runspider", str(spider), "-o", str(feed),
                *spider_args, *settings]
        env = _env(REPO)
    timeout_s = args.timeout or 300 + (0.25 if framework == "scrapy" else 0.05) * args.pages
    run = {"framework": framework, "queries": queries, "log": str(log)}
    run.update(measure(argv, cwd=workdir, env=env, log_path=log, timeout_s=timeout_s))
    points = _read_samples(samples)
    run["pages"] = points[-1][0] if points else 0
    run.update(analyse(points, args.warmup))
    run["samples"] = [(p, r) for p, r, _ in points]
    return run


def _version(python, module):
    out = subprocess.run([python, "-c", f"import {module}; print({module}.__version__)"],
                         capture_output=True, text=True, timeout=120,
                         env=_env(REPO if module == "crawlfw" else None))
    return out.stdout.strip() or None


def _fmt(value, spec):
    return format(value, spec) if value is not None else "-"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200_000, help="pages per crawl (200000)")
    parser.add_argument("--queries", default="1,10",
                        help="comma-separated CSS queries per page to run, each 1-10 (1,10)")
    parser.add_argument("--warmup", type=int, default=None,
                        help="pages left out of the slope (a fifth of --pages, at most 20000)")
    parser.add_argument("--chains", type=int, default=16,
                        help="chains of pages crawled side by side = concurrency (16)")
    parser.add_argument("--sample-every", type=int, default=1000,
                        help="pages between two RSS samples (1000)")
    parser.add_argument("--scrapy-python", metavar="PATH", default=None,
                        help="a python that can import scrapy: also run Scrapy with it")
    parser.add_argument("--no-crawlfw", action="store_true", help="run only Scrapy")
    parser.add_argument("--nginx", action="store_true",
                        help="serve with nginx (writes the whole site to a temporary "
                             "directory first: about 10 KB per page)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="wall seconds per crawl (300 + 0.05 s per page, 0.25 for Scrapy)")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="keep spiders, samples, feeds and logs in DIR")
    parser.add_argument("--json", action="store_true",
                        help="also print the results as one JSON line at the end")
    args = parser.parse_args(argv)
    if args.pages < 2 * args.sample_every:
        parser.error(f"--pages must be at least twice --sample-every, got {args.pages}")
    try:
        queries = [int(q) for q in args.queries.split(",")]
    except ValueError:
        parser.error(f"--queries: expected numbers such as 1,10, got {args.queries!r}")
    if not all(1 <= q <= len(QUERIES) for q in queries):
        parser.error(f"--queries: each must be 1-{len(QUERIES)}, got {args.queries!r}")
    if args.warmup is None:
        args.warmup = min(20_000, args.pages // 5)
    if args.warmup >= args.pages - args.sample_every:
        parser.error(f"--warmup {args.warmup} leaves too few pages to measure")

    plans = []
    if not args.no_crawlfw:
        plans.append(("crawlfw", sys.executable, _version(sys.executable, "crawlfw")))
    if args.scrapy_python:
        version = _version(args.scrapy_python, "scrapy")
        if version is None:
            print(f"Scrapy not run: {args.scrapy_python} cannot import scrapy", file=sys.stderr)
        else:
            plans.append(("scrapy", args.scrapy_python, version))
    if not plans:
        parser.error("nothing to run")

    tmp = None
    workdir = args.keep
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="crawlfw-longrun-")
        workdir = Path(tmp.name)
    workdir.mkdir(parents=True, exist_ok=True)
    workdir = workdir.resolve()
    runs = []
    spec = SiteSpec(args.pages + 1, seed=1)
    try:
        with SiteServer(spec, workers=2, prefer_nginx=args.nginx) as server:
            print(f"site: {args.pages:,} pages served by {server.kind} at {server.url}; "
                  f"{args.chains} chains, dont_filter; slope after {args.warmup:,} pages",
                  file=sys.stderr, flush=True)
            for q in queries:
                for framework, python, version in plans:
                    print(f"running {framework} {version}, {q} queries per page ...",
                          file=sys.stderr, flush=True)
                    run = run_one(framework, python, q, args, server.url, workdir)
                    run["version"] = version
                    runs.append(run)
                    print(f"  {run['pages']:,} pages, {run['wall_s']:.0f} s wall, exit "
                          f"{run['returncode']}, slope {_fmt(run['slope'], '.3f')} MB/10k pages",
                          file=sys.stderr, flush=True)
    finally:
        if tmp is not None:
            tmp.cleanup()

    print(f"long-run memory, {time.strftime('%Y-%m-%d')}: {args.pages:,} pages per crawl, "
          f"{args.chains} chains (dont_filter: no duplicate filter growth), RSS sampled every "
          f"{args.sample_every:,} pages, slope after {args.warmup:,} pages; "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.platform()}")
    print()
    print(f"{'crawler':<16} {'queries':>7} {'pages':>8} {'wall s':>7} {'CPU s/1k':>8} "
          f"{'RSS warm':>9} {'RSS end':>8} {'peak':>6} {'MB/10k pages':>12} "
          f"{'1st half':>8} {'2nd half':>8}")
    failed = False
    for r in runs:
        cpu_k = 1000 * r["cpu_s"] / r["pages"] if r["pages"] else None
        print(f"{r['framework'] + ' ' + (r['version'] or '?'):<16} {r['queries']:>7} "
              f"{r['pages']:>8} {r['wall_s']:>7.0f} {_fmt(cpu_k, '.2f'):>8} "
              f"{_fmt(r['rss_warm_mb'], '.0f'):>6} MB {_fmt(r['rss_end_mb'], '.0f'):>5} MB "
              f"{r['peak_rss_mib'] * 2**20 / 1e6:>3.0f} MB {_fmt(r['slope'], '.3f'):>12} "
              f"{_fmt(r['slope_first_half'], '.3f'):>8} {_fmt(r['slope_second_half'], '.3f'):>8}")
        if r["returncode"] != 0 or r["timed_out"] or r["pages"] < args.pages:
            failed = True
            print(f"  {r['framework']}: exit {r['returncode']}"
                  f"{', killed after the timeout' if r['timed_out'] else ''}, "
                  f"{r['pages']} of {args.pages} pages (log: {r['log']})")
    if args.json:
        print(json.dumps({"pages": args.pages, "chains": args.chains, "warmup": args.warmup,
                          "runs": runs}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
