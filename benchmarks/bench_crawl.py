"""Benchmark: a whole crawl of a generated local site, crawlfw vs Scrapy vs a bare loop.

The site (``benchmarks/_crawlsite.py``): ``--pages`` pages (default 20,000), seeded, of
5-15 KB each with 10-20 links to other pages of the site, every page reachable from ``/``.
It is served on 127.0.0.1 by a server in another process (nginx when it is on ``PATH``,
else Python worker processes sharing the port with ``SO_REUSEPORT``), so the server's CPU
is never counted against a crawler.

Each crawler runs as a subprocess of this script and crawls the whole site from ``/``,
following every link and writing one item ``{url, title}`` per page to a ``.jl`` feed:

* ``crawlfw``: ``python -m crawlfw.cmdline runspider benchmarks/spiders/bench_spider.py``;
* ``scrapy``: the same spider (``bench_spider_scrapy.py``) run by the reference
  virtualenv's python (``benchmarks/_refenv.py``): ``python -m scrapy runspider``;
* ``bare``: ``benchmarks/_bare_crawl.py``, one pycurl ``CurlMulti`` + lxml loop with no
  framework: a floor for what a crawl of this site costs in Python.

Both frameworks get ``LOG_LEVEL=INFO``, ``CONCURRENT_REQUESTS=16`` and
``CONCURRENT_REQUESTS_PER_DOMAIN=16`` (``--concurrency``); Scrapy also gets
``TELNETCONSOLE_ENABLED=0`` and ``REMOTE_CONTROL_ENABLED=0`` (crawlfw has neither
listener). The bare loop keeps 16 transfers in flight.

Measured per crawler, from ``os.wait4`` on its process (so only that process counts):

* ``CPU s``: user + system CPU seconds of the crawler process;
* ``CPU s/1k``: CPU seconds per 1,000 pages crawled (the figure the target is set on);
* ``wall s`` and ``pages/s``: elapsed time from start to exit, and pages per wall second
  (start-up included; on a 2-core machine the server competes for CPU);
* ``peak RSS``: ``ru_maxrss`` of the process, MiB;
* ``pages`` / ``unique``: lines and distinct URLs in the feed; ``complete`` means every
  page of the site appears exactly once.

``ratio`` is crawlfw's CPU s/1k divided by Scrapy's. The report also gives issue 20's
three ratios of CPU s/1k (``ratios`` in the JSON): crawlfw / Scrapy (target at most
0.10), crawlfw / the bare loop (at most 2) and, with ``--jobdir``, crawlfw with
``JOBDIR`` / crawlfw in memory (at most 1.10). One run of each moves by a tenth or more
on a shared machine: for a before/after figure, pair whole runs (benchmarks/README.md).

Usage::

    python benchmarks/bench_crawl.py [--pages N] [--seed S] [--concurrency C]
        [--no-reference] [--no-bare] [--python-server] [--server-workers W] [--json]
        [--keep DIR] [--jobdir] [--rounds N]

``--rounds N`` runs every crawler N times, in turn (crawlfw, Scrapy, the bare loop,
then again): the table gives each crawler's medians and each ratio is the median of the
N rounds' own ratios (runs made side by side), with its min-max.
"""

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from _crawlsite import SiteServer, SiteSpec  # noqa: E402

SPIDER_CRAWLFW = HERE / "spiders" / "bench_spider.py"
SPIDER_SCRAPY = HERE / "spiders" / "bench_spider_scrapy.py"
BARE_CRAWL = HERE / "_bare_crawl.py"

#: Environment variables a crawler subprocess must not inherit: they change its cost
#: (tests/conftest.py turns on message schema validation with the first one).
_DROP_ENV = ("CRAWLFW_VALIDATE_MESSAGES",)
_STAT_RE = re.compile(r"'(downloader/response_count|item_scraped_count|finish_reason)': '?([^',]+)'?")


def measure(argv: list[str], *, cwd: Path, env: dict, log_path: Path, timeout_s: float) -> dict:
    """Run ``argv`` to completion and return what its process cost.

    Args:
        argv: the command.
        cwd: its working directory.
        env: its environment.
        log_path: where its stdout and stderr go.
        timeout_s: wall seconds after which it is killed (``timed_out`` is then True).

    Returns:
        ``{"returncode": int, "timed_out": bool, "wall_s": float, "cpu_user_s": float,
        "cpu_sys_s": float, "cpu_s": float, "peak_rss_mib": float}``; CPU and RSS are the
        process's own (``os.wait4``), children it did not wait for are not included.
    """
    with open(log_path, "wb") as log:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            proc.kill()

        timer = threading.Timer(timeout_s, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall_s = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    rss_scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return {
        "returncode": proc.returncode,
        "timed_out": timed_out.is_set(),
        "wall_s": wall_s,
        "cpu_user_s": usage.ru_utime,
        "cpu_sys_s": usage.ru_stime,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mib": usage.ru_maxrss * rss_scale / 2**20,
    }


def read_feed(path: Path, base_url: str, spec: SiteSpec) -> dict:
    """Count a ``.jl`` feed's items and check it against the site.

    Returns:
        ``{"pages": int (lines), "unique": int (distinct urls), "complete": bool (every
        page exactly once), "missing": int, "foreign": int (urls not of the site),
        "bad_titles": int (items whose title is not the page's)}``.
    """
    expected = {base_url + spec.path(i): f"Page {i}" for i in range(spec.pages)}
    lines = 0
    seen = set()
    bad_titles = 0
    if path.exists():
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                lines += 1
                item = json.loads(line)
                url = item.get("url")
                seen.add(url)
                if expected.get(url, item.get("title")) != item.get("title"):
                    bad_titles += 1
    foreign = len(seen - expected.keys())
    missing = len(expected.keys() - seen)
    return {
        "pages": lines,
        "unique": len(seen),
        "complete": lines == spec.pages and missing == 0 and foreign == 0 and bad_titles == 0,
        "missing": missing,
        "foreign": foreign,
        "bad_titles": bad_titles,
    }


def _log_stats(log_path: Path) -> dict:
    """Pick ``downloader/response_count``, ``item_scraped_count`` and ``finish_reason`` out
    of a framework's final stats dump (both frameworks log it in the same format)."""
    text = log_path.read_text(errors="replace") if log_path.exists() else ""
    found = {}
    for key, value in _STAT_RE.findall(text):
        found[key] = int(value) if value.isdigit() else value
    return found


def _env(extra_path: Path | None, pycache: Path | None = None) -> dict:
    """The environment of one crawler's run: ``extra_path`` first on ``PYTHONPATH``; with
    ``pycache``, bytecode is read from (and written to) that directory
    (``PYTHONPYCACHEPREFIX``) even where the caller's environment forbids writing it
    (``PYTHONDONTWRITEBYTECODE``): an installed package has its bytecode compiled at
    install time (pip does it), so compiling crawlfw's modules on every run would count a
    cost its users do not pay."""
    env = {k: v for k, v in os.environ.items() if k not in _DROP_ENV}
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(extra_path)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    else:
        env.pop("PYTHONPATH", None)
    return env


def _framework_settings(concurrency: int) -> list[str]:
    return ["-s", "LOG_LEVEL=INFO",
            "-s", f"CONCURRENT_REQUESTS={concurrency}",
            "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={concurrency}"]


def _reference_version(python: str) -> str:
    out = subprocess.run([python, "-c", "import scrapy; print(scrapy.__version__)"],
                         capture_output=True, text=True, timeout=120)
    return out.stdout.strip() or "?"


def _ratios(runs: list[dict]) -> dict[str, float]:
    """Issue 20's ratios of CPU s per 1,000 pages among ``runs`` (one round: one run per
    crawler): ``scrapy`` (crawlfw / Scrapy), ``bare`` (crawlfw / the bare loop) and
    ``jobdir`` (crawlfw with JOBDIR / crawlfw in memory), each when both ran."""
    by_name = {r["name"]: r for r in runs}
    ratios = {}
    ours = by_name["crawlfw"]["cpu_s_per_1000_pages"]
    for key, name in (("scrapy", "scrapy"), ("bare", "bare"), ("jobdir", "crawlfw+jobdir")):
        other = by_name.get(name, {}).get("cpu_s_per_1000_pages")
        if ours and other:
            ratios[key] = other / ours if key == "jobdir" else ours / other
    return ratios


def run_benchmark(pages: int = 20000, *, seed: int = 1, concurrency: int = 16,
                  reference: bool = True, bare: bool = True, prefer_nginx: bool = True,
                  server_workers: int = 2, workdir: Path | None = None,
                  timeout_s: float | None = None, progress=None, jobdir: bool = False,
                  rounds: int = 1) -> dict:
    """Serve the site, run each crawler over it, and return the figures.

    Args:
        pages: pages in the generated site.
        seed: the site's seed.
        concurrency: requests in flight for every crawler.
        reference: also run Scrapy (when ``reference_python()`` can provide it).
        bare: also run the bare pycurl + lxml loop.
        prefer_nginx: serve with nginx when it is on ``PATH``.
        server_workers: server processes.
        workdir: where feeds and logs go (kept); a temporary directory when None.
        timeout_s: wall seconds allowed per crawler (default: 120 + 0.05 per page).
        progress: a callable taking a status line, or None.
        jobdir: also run crawlfw with a ``JOBDIR`` (the durable SQLite frontier, its
            feed committed with it), as run ``crawlfw+jobdir``.
        rounds: how many times every crawler runs, in turn (round 1: each once, in
            order; then round 2...), so that each round's ratios compare runs made
            side by side while the machine's speed drifts.

    Returns:
        ``{"site": {...}, "machine": {...}, "rounds": int, "runs": [run, ...],
        "ratio": float | None, "ratios": {"scrapy" | "bare" | "jobdir": float},
        "ratios_by_round": {key: [float, one per round]}, "reference_note": str | None}``
        (``ratio`` is ``ratios["scrapy"]``; each ratio is the median of its rounds'
        ones; ``jobdir`` is crawlfw with ``JOBDIR`` over crawlfw in memory, the others
        crawlfw over the other crawler); each run is ``{"name", "version", "command",
        "log", "round", ...measure(), ...read_feed(), "responses", "finish_reason",
        "pages_per_s", "cpu_s_per_1000_pages"}``.
    """
    say = progress or (lambda line: None)
    spec = SiteSpec(pages, seed)
    timeout_s = timeout_s or 120 + 0.05 * pages
    tmp = None
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="crawlfw-bench-")
        workdir = Path(tmp.name)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)

    import crawlfw

    # crawlfw's bytecode compiled once, before any run, as an install would have it.
    pycache = workdir / "pycache"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(crawlfw.__file__).parent),
                    str(SPIDER_CRAWLFW)], env=_env(REPO, pycache), check=True,
                   stdout=subprocess.DEVNULL)
    plans = [("crawlfw", crawlfw.__version__, lambda url, feed: (
        [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(SPIDER_CRAWLFW),
         "-a", f"base_url={url}", "-o", str(feed), *_framework_settings(concurrency)],
        _env(REPO, pycache)))]
    if jobdir:
        plans.append(("crawlfw+jobdir", crawlfw.__version__, lambda url, feed: (
            [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(SPIDER_CRAWLFW),
             "-a", f"base_url={url}", "-o", str(feed), *_framework_settings(concurrency),
             "-s", f"JOBDIR={feed.with_suffix('.job')}"],
            _env(REPO, pycache))))
    reference_note = None
    if reference:
        from _refenv import reference_python

        ref = reference_python()
        if ref is None:
            reference_note = ("Scrapy not run: no reference virtualenv (see the message "
                              "above from benchmarks/_refenv.py)")
        else:
            plans.append(("scrapy", _reference_version(ref), lambda url, feed, ref=ref: (
                [ref, "-m", "scrapy", "runspider", str(SPIDER_SCRAPY),
                 "-a", f"base_url={url}", "-o", str(feed), *_framework_settings(concurrency),
                 "-s", "TELNETCONSOLE_ENABLED=0", "-s", "REMOTE_CONTROL_ENABLED=0"],
                _env(None))))
    else:
        reference_note = "Scrapy not run (--no-reference)"
    if bare:
        import lxml.etree
        import pycurl

        version = f"pycurl {pycurl.version_info()[1]}, lxml {lxml.etree.__version__}"
        plans.append(("bare", version, lambda url, feed: (
            [sys.executable, str(BARE_CRAWL), url + "/", str(feed),
             "--concurrency", str(concurrency)],
            _env(None))))

    runs = []
    try:
        with SiteServer(spec, workers=server_workers, prefer_nginx=prefer_nginx) as server:
            say(f"site: {pages} pages (seed {seed}) served by {server.kind} at {server.url}")
            for round_no, (name, version, plan) in (
                    (r, p) for r in range(1, rounds + 1) for p in plans):
                stem = name if rounds == 1 else f"{name}.{round_no}"
                feed = workdir / f"{stem}.jl"
                log = workdir / f"{stem}.log"
                if feed.exists():
                    feed.unlink()
                argv, env = plan(server.url, feed)
                say(f"running {name} ..." if rounds == 1
                    else f"running {name} (round {round_no} of {rounds}) ...")
                run = {"name": name, "version": version, "command": argv, "log": str(log),
                       "round": round_no}
                run.update(measure(argv, cwd=REPO, env=env, log_path=log, timeout_s=timeout_s))
                run.update(read_feed(feed, server.url, spec))
                stats = _log_stats(log)
                run["responses"] = stats.get("downloader/response_count")
                run["finish_reason"] = stats.get("finish_reason")
                run["pages_per_s"] = run["pages"] / run["wall_s"] if run["wall_s"] else 0.0
                run["cpu_s_per_1000_pages"] = (
                    1000 * run["cpu_s"] / run["pages"] if run["pages"] else None)
                runs.append(run)
                say(f"  {name}: {run['pages']} pages, {run['cpu_s']:.1f} CPU s, "
                    f"{run['wall_s']:.1f} wall s, exit {run['returncode']}")
            server_kind = server.kind
    finally:
        if tmp is not None:
            tmp.cleanup()

    by_round: dict[str, list[float]] = {}  # ratio key -> one ratio per round
    for round_no in range(1, rounds + 1):
        for key, value in _ratios([r for r in runs if r["round"] == round_no]).items():
            by_round.setdefault(key, []).append(value)
    ratios = {key: statistics.median(values) for key, values in by_round.items()}
    ratio = ratios.get("scrapy")
    return {
        "site": {"pages": pages, "seed": seed, "server": server_kind,
                 "server_workers": server_workers, "concurrency": concurrency},
        "rounds": rounds,
        "ratios_by_round": by_round,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(),
                    "date": time.strftime("%Y-%m-%d")},
        "runs": runs,
        "ratio": ratio,
        "ratios": ratios,
        "reference_note": reference_note,
    }


def _median_runs(runs: list[dict]) -> list[dict]:
    """One row per crawler (in the order they ran) holding the median of each figure
    over its runs; ``complete`` only when every run was, the worst exit status."""
    rows = []
    for name in dict.fromkeys(r["name"] for r in runs):
        mine = [r for r in runs if r["name"] == name]
        row = dict(mine[0])
        for key in ("pages", "wall_s", "pages_per_s", "cpu_s", "cpu_s_per_1000_pages",
                    "peak_rss_mib"):
            values = [r[key] for r in mine if r.get(key) is not None]
            row[key] = statistics.median(values) if values else None
        row["pages"] = int(row["pages"] or 0)
        row["complete"] = all(r["complete"] for r in mine)
        rows.append(row)
    return rows


def format_table(result: dict) -> str:
    """Return the human-readable report of ``run_benchmark()``'s result."""
    site, machine = result["site"], result["machine"]
    lines = [
        f"crawl benchmark, {machine['date']}: {site['pages']} pages (seed {site['seed']}), "
        f"server {site['server']} x{site['server_workers']}, concurrency {site['concurrency']}; "
        f"{machine['cpus']} CPUs, Python {machine['python']}, {machine['platform']}",
        "",
        f"{'crawler':<8} {'version':<28} {'pages':>7} {'complete':>8} {'wall s':>8} "
        f"{'pages/s':>8} {'CPU s':>8} {'CPU s/1k':>9} {'peak RSS':>9}",
    ]
    rounds = result.get("rounds", 1)
    for r in _median_runs(result["runs"]) if rounds > 1 else result["runs"]:
        per_k = r["cpu_s_per_1000_pages"]
        lines.append(
            f"{r['name']:<8} {r['version'][:28]:<28} {r['pages']:>7} "
            f"{'yes' if r['complete'] else 'NO':>8} {r['wall_s']:>8.1f} {r['pages_per_s']:>8.0f} "
            f"{r['cpu_s']:>8.1f} {per_k if per_k is not None else float('nan'):>9.2f} "
            f"{r['peak_rss_mib']:>6.0f} MiB")
    lines.append("")
    for r in result["runs"]:
        problems = []
        if r["returncode"] != 0:
            problems.append(f"exit status {r['returncode']}")
        if r["timed_out"]:
            problems.append("killed after the timeout")
        if not r["complete"]:
            problems.append(f"{r['unique']} distinct pages of {site['pages']} in {r['pages']} items, "
                            f"{r['missing']} missing, {r['foreign']} foreign, "
                            f"{r['bad_titles']} wrong titles")
        if problems:
            lines.append(f"{r['name']}: " + "; ".join(problems) + f" (log: {r['log']})")
    targets = (("scrapy", "crawlfw/scrapy", 0.10), ("bare", "crawlfw/bare loop", 2.0),
               ("jobdir", "crawlfw with JOBDIR/crawlfw in memory", 1.10))
    if rounds > 1:
        lines.append(f"(each crawler ran {rounds} times, in turn: its row gives the medians; "
                     f"each ratio is the median of the {rounds} rounds' ratios, min-max after it)")
    for key, what, target in targets:
        value = result.get("ratios", {}).get(key)
        if value is not None:
            verdict = "meets" if value <= target else "misses"
            figure = f"{value:.2f}"
            values = result.get("ratios_by_round", {}).get(key, [])
            if len(values) > 1:
                figure = f"{value:.3f} ({min(values):.3f}-{max(values):.3f})"
            lines.append(f"ratio {what} CPU s per 1,000 pages: {figure} "
                         f"({verdict} issue 20's target of at most {target:.2f})")
    if result["ratio"] is None and result["reference_note"]:
        lines.append(result["reference_note"])
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=20000, help="pages in the site (20000)")
    parser.add_argument("--seed", type=int, default=1, help="the site's seed (1)")
    parser.add_argument("--concurrency", type=int, default=16,
                        help="requests in flight per crawler (16)")
    parser.add_argument("--no-reference", action="store_true", help="do not run Scrapy")
    parser.add_argument("--no-bare", action="store_true",
                        help="do not run the bare pycurl + lxml loop")
    parser.add_argument("--python-server", action="store_true",
                        help="serve with the Python server even when nginx is installed")
    parser.add_argument("--server-workers", type=int, default=2, help="server processes (2)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="wall seconds allowed per crawler (120 + 0.05 per page)")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="keep feeds and logs in DIR")
    parser.add_argument("--jobdir", action="store_true",
                        help="also run crawlfw with a JOBDIR (the durable frontier)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run every crawler this many times, in turn; report medians and "
                             "the median of each round's ratios (1)")
    parser.add_argument("--json", action="store_true",
                        help="also print the results as one JSON line at the end")
    args = parser.parse_args(argv)
    if args.pages < 2:
        parser.error(f"--pages must be at least 2, got {args.pages}")
    if args.concurrency < 1:
        parser.error(f"--concurrency must be at least 1, got {args.concurrency}")
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    if args.keep is not None and args.keep.exists() and not args.keep.is_dir():
        parser.error(f"--keep {args.keep}: exists and is not a directory")
    result = run_benchmark(
        args.pages, seed=args.seed, concurrency=args.concurrency,
        reference=not args.no_reference, bare=not args.no_bare,
        prefer_nginx=not args.python_server and shutil.which("nginx") is not None,
        server_workers=args.server_workers, workdir=args.keep, timeout_s=args.timeout,
        progress=lambda line: print(line, file=sys.stderr, flush=True), jobdir=args.jobdir,
        rounds=args.rounds)
    print(format_table(result))
    if args.json:
        print(json.dumps(result))
    failed = any(r["returncode"] != 0 or not r["complete"] for r in result["runs"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
