"""Benchmark: one crawl spread over 1, 2 and 4 worker processes on a shared Redis frontier
(``FRONTIER_URL``), beside the single in-memory process.

The site is ``bench_crawl.py``'s (``benchmarks/_crawlsite.py``: ``--pages`` pages, 20,000
by default, served by nginx or Python processes outside the measured ones). A
``redis-server`` (on ``PATH``) is started on a free loopback port without persistence;
each worker run uses a fresh ``FRONTIER_KEY``. Every worker runs
``python -m crawlfw.cmdline runspider benchmarks/spiders/bench_spider.py`` with its own
``.jl`` feed and ``CONCURRENT_REQUESTS = --concurrency``; ``CONCURRENT_REQUESTS_PER_DOMAIN``
is ``--concurrency`` times the largest worker count, in every run, because the per-domain
limit holds for the whole crawl: so each worker may keep ``--concurrency`` transfers in
flight, as the single process does.

Measured per run:

* ``wall s`` and ``pages/s``: from the start of the first worker to the exit of the last
  (start-up included);
* ``CPU s``: user + system CPU seconds of the workers (``os.wait4``), and ``redis CPU s``
  of the Redis server (``INFO cpu``) during the run; ``CPU s/1k`` is both per 1,000 pages;
* ``calls/page``: Redis round trips per page (the workers' ``frontier/redis_calls``:
  frontier scripts plus the download slots' permits);
* ``speedup``: pages/s over the 1-worker run's, and over the single process's;
* ``complete``: every page exactly once across the workers' feeds.

Every crawler runs with bytecode cached (in the work directory), after one unmeasured
one-page crawl that fills the cache, as an installed crawlfw would.

Usage::

    python benchmarks/bench_workers.py [--pages N] [--workers 1,2,4] [--concurrency C]
        [--python-server] [--json] [--keep DIR]
"""

import argparse
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from _crawlsite import SiteServer, SiteSpec  # noqa: E402
from bench_crawl import SPIDER_CRAWLFW, _env, read_feed  # noqa: E402

_CALLS_RE = re.compile(r"'frontier/redis_calls': (\d+)")


class _Redis:
    """A ``redis-server`` on a free loopback port, no persistence."""

    def __init__(self, workdir: Path):
        exe = shutil.which("redis-server")
        if exe is None:
            raise SystemExit("bench_workers.py needs redis-server on PATH "
                             "(apt-get install redis-server)")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(workdir)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis

        self.client = redis.Redis(port=self.port)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def cpu_s(self) -> float:
        info = self.client.info("cpu")
        return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])

    def stop(self):
        self.client.close()
        self.proc.terminate()
        self.proc.wait(10)


def _worker_env(workdir: Path) -> dict:
    """The crawlers' environment: ``bench_crawl``'s, with bytecode cached under
    ``workdir`` as a deployed interpreter caches it (this machine's environment sets
    ``PYTHONDONTWRITEBYTECODE``, which charges every process start with compiling
    crawlfw's modules: about 0.1 CPU s, paid once per worker)."""
    env = _env(REPO)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(workdir / "pycache")
    return env


def _warm_up(url: str, workdir: Path, redis_url: str) -> None:
    """Crawl the site's first page, unmeasured, in memory and on the shared frontier:
    compiles the bytecode cache."""
    for frontier in ([], ["-s", f"FRONTIER_URL={redis_url}", "-s", "FRONTIER_KEY=warm-up"]):
        subprocess.run([sys.executable, "-m", "crawlfw.cmdline", "runspider",
                        str(SPIDER_CRAWLFW), "-a", f"base_url={url}", *frontier,
                        "-s", "CLOSESPIDER_PAGECOUNT=1", "-s", "LOG_LEVEL=ERROR"],
                       cwd=REPO, env=_worker_env(workdir), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=120, check=False)


def run_workers(n, *, url, feeds_dir, concurrency, per_domain, redis_url, key, timeout_s,
                env=None):
    """Start ``n`` workers (or one plain process when ``redis_url`` is None) and wait for
    them all. Returns wall seconds, the workers' CPU seconds, exit statuses, feeds, logs."""
    procs = []
    start = time.perf_counter()
    for i in range(n):
        feed = feeds_dir / f"w{i}.jl"
        log = feeds_dir / f"w{i}.log"
        argv = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(SPIDER_CRAWLFW),
                "-a", f"base_url={url}", "-o", str(feed), "-s", "LOG_LEVEL=INFO",
                "-s", f"CONCURRENT_REQUESTS={concurrency}",
                "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={per_domain}"]
        if redis_url:
            argv += ["-s", f"FRONTIER_URL={redis_url}", "-s", f"FRONTIER_KEY={key}",
                     "-s", f"FRONTIER_WORKER=w{i}"]
        with open(log, "wb") as f:
            procs.append((subprocess.Popen(argv, cwd=REPO, env=env or _env(REPO), stdout=f,
                                           stderr=subprocess.STDOUT), feed, log))
    cpu = 0.0
    codes = []
    deadline = time.monotonic() + timeout_s
    for proc, _, _ in procs:
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
            time.sleep(0.05)
        cpu += usage.ru_utime + usage.ru_stime
        codes.append(os.waitstatus_to_exitcode(status))
    wall = time.perf_counter() - start
    return wall, cpu, codes, [p[1] for p in procs], [p[2] for p in procs]


def _merge_feeds(feeds, out: Path) -> None:
    with open(out, "wb") as w:
        for feed in feeds:
            if feed.exists():
                w.write(feed.read_bytes())


def run_benchmark(pages=20000, *, seed=1, workers=(1, 2, 4), concurrency=16,
                  prefer_nginx=True, server_workers=2, workdir=None, progress=None):
    """Serve the site, crawl it once per entry of ``workers`` (and once as the single
    in-memory process), and return the figures (see the module doc).

    Returns:
        ``{"site": {...}, "machine": {...}, "runs": [{"name", "workers", "pages",
        "complete", "wall_s", "pages_per_s", "cpu_s", "redis_cpu_s",
        "cpu_s_per_1000_pages", "redis_calls_per_page", "speedup", "codes"}, ...]}``.
    """
    say = progress or (lambda line: None)
    spec = SiteSpec(pages, seed)
    timeout_s = 120 + 0.05 * pages
    tmp = None
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="crawlfw-bench-workers-")
        workdir = Path(tmp.name)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    runs = []
    redis = _Redis(workdir)
    try:
        with SiteServer(spec, workers=server_workers, prefer_nginx=prefer_nginx) as server:
            say(f"site: {pages} pages (seed {seed}) served by {server.kind} at {server.url}")
            _warm_up(server.url, workdir, redis.url)
            plans = [("single", 1, None)] + [(f"{n} worker{'s' * (n > 1)}", n, redis.url)
                                              for n in workers]
            for name, n, redis_url in plans:
                run_dir = workdir / name.replace(" ", "-")
                run_dir.mkdir(exist_ok=True)
                say(f"running {name} ...")
                redis_before = redis.cpu_s()
                wall, cpu, codes, feeds, logs = run_workers(
                    n, url=server.url, feeds_dir=run_dir, concurrency=concurrency,
                    per_domain=concurrency * max(workers),
                    redis_url=redis_url, key=f"bench-{n}-{time.time_ns()}",
                    timeout_s=timeout_s, env=_worker_env(workdir))
                redis_cpu = redis.cpu_s() - redis_before if redis_url else 0.0
                merged = run_dir / "all.jl"
                _merge_feeds(feeds, merged)
                feed = read_feed(merged, server.url, spec)
                calls = sum(int(m) for log in logs
                            for m in _CALLS_RE.findall(log.read_text(errors="replace")))
                run = {"name": name, "workers": n if redis_url else 0, "codes": codes,
                       "wall_s": wall, "cpu_s": cpu, "redis_cpu_s": redis_cpu, **feed}
                run["pages_per_s"] = feed["pages"] / wall if wall else 0.0
                run["cpu_s_per_1000_pages"] = (1000 * (cpu + redis_cpu) / feed["pages"]
                                               if feed["pages"] else None)
                run["redis_calls_per_page"] = calls / feed["pages"] if feed["pages"] else None
                runs.append(run)
                say(f"  {name}: {feed['pages']} pages, {wall:.1f} wall s, "
                    f"{cpu:.1f} + {redis_cpu:.1f} CPU s, exit {codes}")
            server_kind = server.kind
    finally:
        redis.stop()
        if tmp is not None:
            tmp.cleanup()
    one = next((r for r in runs if r["workers"] == 1), None)
    single = runs[0]
    for r in runs:
        r["speedup"] = r["pages_per_s"] / one["pages_per_s"] if one and one["pages_per_s"] else None
        r["speedup_vs_single"] = (r["pages_per_s"] / single["pages_per_s"]
                                  if single["pages_per_s"] else None)
    return {
        "site": {"pages": pages, "seed": seed, "server": server_kind,
                 "server_workers": server_workers, "concurrency": concurrency},
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(), "date": time.strftime("%Y-%m-%d")},
        "runs": runs,
    }


def format_table(result) -> str:
    """The human-readable report of :func:`run_benchmark`'s result."""
    site, machine = result["site"], result["machine"]
    lines = [
        f"workers benchmark, {machine['date']}: {site['pages']} pages (seed {site['seed']}), "
        f"server {site['server']} x{site['server_workers']}, concurrency {site['concurrency']}"
        f" per worker; {machine['cpus']} CPUs, Python {machine['python']}",
        "",
        f"{'run':<10} {'pages':>7} {'complete':>8} {'wall s':>7} {'pages/s':>8} "
        f"{'CPU s':>7} {'redis CPU s':>11} {'CPU s/1k':>9} {'calls/page':>10} "
        f"{'speedup':>8} {'vs single':>9}",
    ]

    def f(value, fmt):
        return format(value, fmt) if value is not None else "-"

    for r in result["runs"]:
        lines.append(
            f"{r['name']:<10} {r['pages']:>7} {'yes' if r['complete'] else 'NO':>8} "
            f"{r['wall_s']:>7.1f} {r['pages_per_s']:>8.0f} {r['cpu_s']:>7.1f} "
            f"{r['redis_cpu_s']:>11.1f} {f(r['cpu_s_per_1000_pages'], '.2f'):>9} "
            f"{f(r['redis_calls_per_page'] if r['workers'] else None, '.2f'):>10} "
            f"{f(r['speedup'] if r['workers'] else None, '.2f'):>8} "
            f"{f(r['speedup_vs_single'], '.2f'):>9}")
    for r in result["runs"]:
        if any(r["codes"]) or not r["complete"]:
            lines.append(f"{r['name']}: exit {r['codes']}, {r['unique']} distinct of "
                         f"{site['pages']} in {r['pages']} items")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=20000, help="pages in the site (20000)")
    parser.add_argument("--seed", type=int, default=1, help="the site's seed (1)")
    parser.add_argument("--workers", default="1,2,4", help="worker counts to run (1,2,4)")
    parser.add_argument("--concurrency", type=int, default=16,
                        help="requests in flight per worker (16)")
    parser.add_argument("--python-server", action="store_true",
                        help="serve with the Python server even when nginx is installed")
    parser.add_argument("--server-workers", type=int, default=2, help="server processes (2)")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="keep feeds and logs in DIR")
    parser.add_argument("--json", action="store_true",
                        help="also print the results as one JSON line at the end")
    args = parser.parse_args(argv)
    try:
        workers = [int(w) for w in args.workers.split(",")]
    except ValueError:
        parser.error(f"--workers must be a comma-separated list of numbers, got {args.workers!r}")
    if args.pages < 2 or any(w < 1 for w in workers):
        parser.error("--pages must be at least 2 and each --workers count at least 1")
    result = run_benchmark(
        args.pages, seed=args.seed, workers=workers, concurrency=args.concurrency,
        prefer_nginx=not args.python_server and shutil.which("nginx") is not None,
        server_workers=args.server_workers, workdir=args.keep,
        progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(format_table(result))
    if args.json:
        print(json.dumps(result))
    failed = any(any(r["codes"]) or not r["complete"] for r in result["runs"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
