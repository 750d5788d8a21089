"""Benchmark: keeping a crawl fresh - a continuous crawl's rounds of revisits against
re-running the whole crawl (issue 32).

The site (``benchmarks/_revisitsite.py``): the crawl benchmark's generated site of
``--pages`` pages (20,000), in rounds: from one round to the next ``--change`` (2 %) of
its pages change (a seeded sample; the body says its version in ``<p id="version">``),
every ``N``-th page carries ``ETag`` and ``Last-Modified`` and answers 304 to a
conditional GET when unchanged, the others carry no validator. One server process on
127.0.0.1 serves it and counts, per ``User-Agent``, the requests, the bytes written (status
line, headers and body), the 304s and how often each page was asked for - the download
figures come from the server, not from the crawlers.

``--validator-every`` names the *mixes* run, one after the other, each on its own server:
``2,1`` by default, so that both of the issue's figures come from one run: **half the
pages with validators** (every 2nd page: the other half can only be compared by digest,
so each of its revisits downloads the whole page) and **every page with validators**
(an unchanged page costs a 304). The report gives each mix's table and ratios, then a
summary line per mix and continuous mode.

The spider (one source, written for each framework; only the import differs): from ``/``,
follow every link, one item ``{"url", "v" (the page's version), "t" (time.time())}`` per
page that reaches the callback.

For each round ``r`` of ``1 .. --rounds`` (the site put in round ``r`` first):

* ``scrapy``: Scrapy (``--scrapy-python``, else ``benchmarks/_refenv.py``'s virtualenv)
  re-runs the whole crawl: ``python -m scrapy runspider``, a fresh process;
* ``crawlfw``: crawlfw re-runs the whole crawl the same way;

runs made side by side (interleaved by round). Then, per ``--modes`` (``fixed`` and
``adaptive`` by default), **one** crawlfw process runs a continuous crawl
(``-s REVISIT_ENABLED=True -s REVISIT_INTERVAL=<--interval> -s REVISIT_INTERVAL_MIN=1
-s REVISIT_ADAPTIVE=<False|True>``): the site is in round 0 when it starts; every
``--interval`` seconds (2 s before the pages of the last round fall due again) the
harness reads the crawler's CPU (``/proc/<pid>/stat``) and the server's counters, then
puts the site in the next round. Window 0 is the first crawl; window ``r`` is round
``r``'s revisits. At the end the crawl is stopped with SIGINT and its feed read.

Per run (re-run) or window (continuous): requests, bytes downloaded, 304s, CPU seconds
of the crawler process (``os.wait4`` for a re-run, so start-up is included; the
``/proc`` delta over the window for the continuous crawl, idle time included), items,
and whether every page changed in that round became an item with its new version
(``caught``: by the end of the run or window). The issue's targets: a round of the
continuous crawl at most **0.2 of the bytes** and **0.3 of the CPU** of a Scrapy re-run,
every changed page caught; ratios are per round (each against the same round's Scrapy
run), their median given.

``--longrun SECONDS``: instead, one continuous crawl (of the first mix) for that long, the site moving to
the next round every ``--interval`` seconds, the crawler's RSS (``/proc/<pid>/statm``)
sampled every ``--sample-s`` seconds: RSS after the first crawl, at the end, peak, and the
least-squares slope in MB per hour after the first crawl (issue 32: flat over one hour).

Usage::

    python benchmarks/bench_revisit.py --scrapy-python /path/to/venv/bin/python
    python benchmarks/bench_revisit.py --pages 2000 --rounds 2 --interval 20 --no-scrapy
    python benchmarks/bench_revisit.py --validator-every 2 --modes fixed   # one mix
    python benchmarks/bench_revisit.py --longrun 600 --interval 60

Run it alone (``flock /work/wt/BENCH.lock ...`` on the shared machine).
"""

import argparse
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from _revisitsite import RevisitSite, RevisitSiteServer  # noqa: E402
from bench_crawl import _env, _reference_version, measure  # noqa: E402
from bench_longrun import least_squares_slope  # noqa: E402

SPIDER = '''\
"""bench_revisit.py's spider ({framework}): follow every link, one item per page seen."""

import re
import time

import {framework}

_VERSION = re.compile(r'<p id="version">version (\\d+)</p>')


class RevisitBenchSpider({framework}.Spider):
    name = "revisit_bench"
    base_url = "http://127.0.0.1:8000"

    def start_requests(self):
        yield {framework}.Request(self.base_url.rstrip("/") + "/", callback=self.parse)

    async def start(self):
        # Scrapy >= 2.13 calls start(), not start_requests() (crawlfw follows Scrapy 1.2).
        for request in self.start_requests():
            yield request

    def parse(self, response):
        found = _VERSION.search(response.text)
        yield {{"url": response.url, "v": int(found.group(1)) if found else None,
               "t": time.time()}}
        for href in response.css("a::attr(href)").getall():
            yield {framework}.Request(response.urljoin(href), callback=self.parse)
'''

_STATS_RE = re.compile(r"'((?:revisit|downloader/response_status_count)/[^']+)': (\d+)")
_CLK_TCK = os.sysconf("SC_CLK_TCK")
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


def proc_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (all its threads), or None
    when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def proc_rss_bytes(pid: int) -> int | None:
    """Resident set size of process ``pid`` in bytes, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * _PAGE_BYTES
    except OSError:
        return None


def read_items(path: Path, site: RevisitSite) -> list:
    """The feed's items as ``[(page number, version, time), ...]`` (items whose URL is
    not a page of the site are left out)."""
    out = []
    if path.exists():
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    item = json.loads(line)
                    i = site.spec.page_of_path(urlsplit(item["url"]).path or "/")
                    if i is not None:
                        out.append((i, item.get("v"), item.get("t") or 0.0))
    return out


def caught(items: list, changed: list, round_no: int, before: float | None = None) -> int:
    """How many pages of ``changed`` have an item with version ``round_no`` (made before
    the time ``before``, when given)."""
    have = {i for i, v, t in items if v == round_no and (before is None or t < before)}
    return sum(1 for i in changed if i in have)


def agent_delta(after: dict, before: dict | None, agent: str) -> dict:
    """The server's counters of ``agent`` between two ``stats()`` answers (``before``
    None: since the start): ``{"requests", "bytes", "body_bytes", "not_modified",
    "pages_seen" (pages asked for at least once in all)}``."""
    a = after["agents"].get(agent, {})
    b = (before or {"agents": {}})["agents"].get(agent, {})
    out = {k: a.get(k, 0) - b.get(k, 0) for k in ("requests", "bytes", "body_bytes",
                                                   "not_modified")}
    out["pages_seen"] = sum(n for count, n in a.get("visits", {}).items() if int(count) > 0)
    return out


def log_stats(log: Path) -> dict:
    """The ``revisit/*`` and ``downloader/response_status_count/*`` stats of the final
    stats dump in a crawl's log."""
    text = log.read_text(errors="replace") if log.exists() else ""
    return {k: int(v) for k, v in _STATS_RE.findall(text)}


def slope_mb_per_hour(samples: list) -> float | None:
    """Least-squares slope of ``[(seconds, rss_bytes), ...]`` in MB (10^6 bytes) per hour."""
    slope = least_squares_slope(samples)
    return None if slope is None else slope * 3600 / 1e6


class Bench:
    """One benchmark run's shared parts: the arguments, the site, the work directory."""

    def __init__(self, args, server: RevisitSiteServer, workdir: Path, pycache: Path,
                 validator_every: int):
        self.args, self.server, self.workdir, self.pycache = args, server, workdir, pycache
        self.validator_every = validator_every
        self.site = RevisitSite(args.pages, args.seed, args.change, validator_every)
        for framework in ("crawlfw", "scrapy"):
            (workdir / f"revisit_{framework}.py").write_text(SPIDER.format(framework=framework))

    def _settings(self, agent: str) -> list:
        c = self.args.concurrency
        return ["-s", "LOG_LEVEL=INFO", "-s", f"CONCURRENT_REQUESTS={c}",
                "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={c}", "-s", f"USER_AGENT={agent}"]

    def crawlfw_argv(self, feed: Path, agent: str, extra=()) -> list:
        return [sys.executable, "-m", "crawlfw.cmdline", "runspider",
                str(self.workdir / "revisit_crawlfw.py"), "-a", f"base_url={self.server.url}",
                "-o", str(feed), *self._settings(agent), *extra]

    def rerun(self, name: str, python: str | None, round_no: int) -> dict:
        """Re-run the whole crawl with ``name`` (``crawlfw`` or ``scrapy``) in round
        ``round_no`` (the site is already in it); return its figures."""
        agent = f"bench-revisit-{name}-r{round_no}"
        feed, log = (self.workdir / f"{name}.r{round_no}.jl",
                     self.workdir / f"{name}.r{round_no}.log")
        if name == "scrapy":
            argv = [python, "-m", "scrapy", "runspider", str(self.workdir / "revisit_scrapy.py"),
                    "-a", f"base_url={self.server.url}", "-o", str(feed),
                    *self._settings(agent), "-s", "TELNETCONSOLE_ENABLED=0",
                    "-s", "REMOTE_CONTROL_ENABLED=0"]
            env = _env(None)
        else:
            argv = self.crawlfw_argv(feed, agent)
            env = _env(REPO, self.pycache)
        before = self.server.stats()
        run = {"name": name, "round": round_no, "log": str(log)}
        run.update(measure(argv, cwd=self.workdir, env=env, log_path=log,
                           timeout_s=self.args.timeout))
        run.update(agent_delta(self.server.stats(), before, agent))
        items = read_items(feed, self.site)
        changed = self.site.changed_in(round_no)
        run.update(items=len(items), changed=len(changed),
                   caught=caught(items, changed, round_no),
                   complete=len({i for i, _, _ in items}) == self.args.pages)
        return run

    def continuous(self, adaptive: bool, rounds: int, *, sample_s: float | None = None,
                   duration_s: float | None = None, say=print) -> dict:
        """Run one continuous crawl over ``rounds`` rounds of ``--interval`` seconds
        (or, with ``duration_s``, for that long, rounds moving on as long as it runs);
        return its windows' figures and, with ``sample_s``, RSS samples."""
        a = self.args
        mode = "adaptive" if adaptive else "fixed"
        agent = f"bench-revisit-continuous-{mode}"
        feed, log = self.workdir / f"continuous-{mode}.jl", self.workdir / f"continuous-{mode}.log"
        for path in (feed, log):
            if path.exists():
                path.unlink()
        self.server.set_round(0)
        self.site.set_round(0)
        argv = self.crawlfw_argv(feed, agent, [
            "-s", "REVISIT_ENABLED=True", "-s", f"REVISIT_INTERVAL={a.interval}",
            "-s", "REVISIT_INTERVAL_MIN=1", "-s", f"REVISIT_ADAPTIVE={adaptive}"])
        margin = 2.0
        if duration_s is not None:
            rounds = max(1, int((duration_s + margin) // a.interval) - 1)
        windows, samples = [], []
        with open(log, "wb") as out:
            t0 = time.monotonic()
            proc = subprocess.Popen(argv, cwd=self.workdir, env=_env(REPO, self.pycache),
                                    stdout=out, stderr=subprocess.STDOUT)
            try:
                mark = {"t": t0, "wall": time.time(), "cpu": 0.0, "stats": self.server.stats()}
                for r in range(1, rounds + 2):
                    end = t0 + r * a.interval - margin
                    if duration_s is not None and r == rounds + 1:
                        end = t0 + duration_s
                    while True:
                        now = time.monotonic()
                        if proc.poll() is not None or now >= end:
                            break
                        wait = end - now
                        if sample_s:
                            rss = proc_rss_bytes(proc.pid)
                            if rss is not None:
                                samples.append((now - t0, rss))
                            wait = min(wait, sample_s)
                        time.sleep(wait)
                    if proc.poll() is not None:
                        say(f"  the continuous crawl exited early (status {proc.returncode}; "
                            f"log: {log})")
                        break
                    cpu = proc_cpu_s(proc.pid) or mark["cpu"]
                    stats = self.server.stats()
                    window = {"round": r - 1, "wall_s": time.monotonic() - mark["t"],
                              "cpu_s": cpu - mark["cpu"], "start": mark["wall"],
                              "end": time.time(), "rss_mib": (proc_rss_bytes(proc.pid) or 0)
                              / 2**20}
                    window.update(agent_delta(stats, mark["stats"], agent))
                    windows.append(window)
                    say(f"  {mode} window {r - 1}: {window['requests']} requests, "
                        f"{window['bytes'] / 1e6:.1f} MB, {window['not_modified']} x 304, "
                        f"{window['cpu_s']:.1f} CPU s, {window['pages_seen']} pages seen")
                    mark = {"t": time.monotonic(), "wall": window["end"], "cpu": cpu,
                            "stats": stats}
                    if r <= rounds:
                        self.server.set_round(r)
                        self.site.set_round(r)
            finally:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGINT)
                    try:
                        proc.wait(a.stop_timeout)
                    except subprocess.TimeoutExpired:
                        say(f"  the continuous crawl did not stop {a.stop_timeout} s after "
                            f"SIGINT: killed (log: {log})")
                        proc.kill()
                        proc.wait()
        items = read_items(feed, self.site)
        for w in windows:
            changed = self.site.changed_in(w["round"]) if w["round"] else []
            w["changed"] = len(changed)
            w["caught"] = caught(items, changed, w["round"], before=w["end"]) if changed else 0
            w["caught_by_end"] = caught(items, changed, w["round"]) if changed else 0
            w["items"] = sum(1 for _, _, t in items if w["start"] <= t < w["end"])
        distinct = len({(i, v) for i, v, _ in items})
        return {"mode": mode, "returncode": proc.returncode, "log": str(log),
                "windows": windows, "items": len(items), "duplicate_items": len(items) - distinct,
                "stats": log_stats(log), "samples": samples}


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _ratio(a, b):
    return a / b if a is not None and b else None


def run_rounds(args, bench: Bench, scrapy_python: str | None, say) -> dict:
    reruns = []
    for r in range(1, args.rounds + 1):
        bench.server.set_round(r)
        bench.site.set_round(r)
        plans = ([("scrapy", scrapy_python)] if scrapy_python else []) + [("crawlfw", None)]
        for name, python in plans:
            say(f"round {r}: {name} re-runs the whole crawl ...")
            run = bench.rerun(name, python, r)
            reruns.append(run)
            say(f"  {run['requests']} requests, {run['bytes'] / 1e6:.1f} MB, "
                f"{run['cpu_s']:.1f} CPU s, {run['wall_s']:.1f} wall s, caught "
                f"{run['caught']}/{run['changed']}, exit {run['returncode']}")
    continuous = []
    for mode in args.modes:
        say(f"continuous crawl ({mode}), {args.rounds} rounds of {args.interval:g} s ...")
        continuous.append(bench.continuous(mode == "adaptive", args.rounds, say=say))
    ratios = {}
    for c in continuous:
        for other in ("scrapy", "crawlfw"):
            per = {"bytes": [], "cpu_s": [], "requests": []}
            for w in c["windows"][1:]:
                run = next((x for x in reruns if x["name"] == other
                            and x["round"] == w["round"]), None)
                if run is not None:
                    for key in per:
                        per[key].append(_ratio(w[key], run[key]))
            entry = {k: {"median": _median(v), "all": v} for k, v in per.items()}
            # over all rounds: the windows' sums over the re-runs' sums (an adaptive
            # crawl's revisits drift across windows; the sum does not care)
            runs = [x for x in reruns if x["name"] == other]
            if runs and len(c["windows"]) > 1:
                for key in per:
                    entry[key]["total"] = _ratio(
                        sum(w[key] for w in c["windows"][1:]),
                        sum(x[key] for x in runs) * (len(c["windows"]) - 1) / len(runs))
            ratios[f"{c['mode']}/{other}"] = entry
    return {"reruns": reruns, "continuous": continuous, "ratios": ratios}


def mix_name(validator_every: int) -> str:
    """How the report names a mix: which share of the pages carries validators."""
    if validator_every == 0:
        return "no page with validators"
    if validator_every == 1:
        return "every page with validators"
    if validator_every == 2:
        return "half the pages with validators"
    return f"1 page in {validator_every} with validators"


def format_report(args, result: dict, versions: dict, validator_every: int) -> str:
    lines = [f"revisit benchmark, {time.strftime('%Y-%m-%d')}: {args.pages} pages (seed "
             f"{args.seed}), {args.change:.0%} changing per round, "
             f"{mix_name(validator_every)} (1 in {validator_every}), "
             f"{args.rounds} rounds of {args.interval:g} s, "
             f"concurrency {args.concurrency}; {os.cpu_count()} CPUs (shared), Python "
             f"{platform.python_version()}, crawlfw {versions.get('crawlfw')}, Scrapy "
             f"{versions.get('scrapy', '-')}", ""]
    head = (f"{'run':<26} {'round':>5} {'requests':>8} {'MB':>7} {'304s':>6} {'CPU s':>7} "
            f"{'wall s':>7} {'items':>6} {'caught':>9}")
    lines.append(head)
    for r in result["reruns"]:
        lines.append(f"{r['name'] + ' re-run':<26} {r['round']:>5} {r['requests']:>8} "
                     f"{r['bytes'] / 1e6:>7.1f} {r['not_modified']:>6} {r['cpu_s']:>7.1f} "
                     f"{r['wall_s']:>7.1f} {r['items']:>6} {r['caught']:>4}/{r['changed']:<4}")
    for c in result["continuous"]:
        for w in c["windows"]:
            label = f"continuous {c['mode']}" + (" (1st)" if w["round"] == 0 else "")
            catch = f"{w['caught']:>4}/{w['changed']:<4}" if w["round"] else f"{'-':>9}"
            lines.append(f"{label:<26} {w['round']:>5} {w['requests']:>8} "
                         f"{w['bytes'] / 1e6:>7.1f} {w['not_modified']:>6} {w['cpu_s']:>7.1f} "
                         f"{w['wall_s']:>7.1f} {w['items']:>6} {catch}")
    lines.append("")
    for c in result["continuous"]:
        changed = sum(w["changed"] for w in c["windows"])
        lines.append(f"continuous {c['mode']}: exit {c['returncode']}, {c['items']} items, "
                     f"{c['duplicate_items']} duplicate (url, version) items; changed pages "
                     f"caught in their round {sum(w['caught'] for w in c['windows'])}/"
                     f"{changed}, by the end {sum(w['caught_by_end'] for w in c['windows'])}/"
                     f"{changed}; stats "
                     + ", ".join(f"{k}={v}" for k, v in sorted(c["stats"].items())
                                 if k.startswith("revisit/")))
    for key, per in result["ratios"].items():
        mode, other = key.split("/")
        b, cpu = per["bytes"]["median"], per["cpu_s"]["median"]
        if b is None:
            continue
        line = (f"continuous ({mode}) / {other} re-run, median per round: bytes {b:.3f}, "
                f"CPU {cpu:.3f}, requests {per['requests']['median']:.3f}")
        if per["bytes"].get("total") is not None:
            line += (f"; over all rounds: bytes {per['bytes']['total']:.3f}, CPU "
                     f"{per['cpu_s']['total']:.3f}")
        if other == "scrapy":
            line += (f" (targets: bytes <= 0.2 {'met' if b <= 0.2 else 'MISSED'}, CPU <= 0.3 "
                     f"{'met' if cpu <= 0.3 else 'MISSED'})")
        lines.append(line)
    return "\n".join(lines)


def format_summary(mixes: list) -> str:
    """One line per mix and continuous mode: its median ratios per round against the
    Scrapy re-run (else crawlfw's) and the changed pages caught in their round."""
    lines = ["summary, per round (median) against a re-run of the whole crawl:"]
    for mix in mixes:
        result = mix["result"]
        for c in result["continuous"]:
            changed = sum(w["changed"] for w in c["windows"])
            got = sum(w["caught"] for w in c["windows"])
            for other in ("scrapy", "crawlfw"):
                per = result["ratios"].get(f"{c['mode']}/{other}")
                if per and per["bytes"]["median"] is not None:
                    lines.append(
                        f"  {mix_name(mix['validator_every'])}, {c['mode']} intervals, vs "
                        f"{other}: bytes {per['bytes']['median']:.3f}, CPU "
                        f"{per['cpu_s']['median']:.3f}; changed pages caught in their round "
                        f"{got}/{changed}")
                    break
    return "\n".join(lines)


def format_longrun(args, run: dict) -> str:
    samples = run["samples"]
    first = run["windows"][0]["wall_s"] if run["windows"] else 0
    warm = [(t, r) for t, r in samples if t >= first]
    slope = slope_mb_per_hour(warm)
    half = len(warm) // 2
    lines = [f"revisit long run, {time.strftime('%Y-%m-%d')}: {args.pages} pages, "
             f"{args.change:.0%} changing per round of {args.interval:g} s, "
             f"{run['mode']} intervals, {args.longrun:g} s, RSS every {args.sample_s:g} s; "
             f"{os.cpu_count()} CPUs (shared)",
             f"rounds: {len(run['windows']) - 1} after the first crawl; requests "
             f"{sum(w['requests'] for w in run['windows'])}, 304s "
             f"{sum(w['not_modified'] for w in run['windows'])}, CPU s per round (median) "
             f"{_median([w['cpu_s'] for w in run['windows'][1:]]) or 0:.1f}",
             f"RSS after the first crawl {warm[0][1] / 2**20 if warm else 0:.0f} MiB, at the "
             f"end {samples[-1][1] / 2**20 if samples else 0:.0f} MiB, peak "
             f"{max((r for _, r in samples), default=0) / 2**20:.0f} MiB; slope after the "
             f"first crawl {slope if slope is not None else float('nan'):.2f} MB/hour "
             f"(1st half {slope_mb_per_hour(warm[:half + 1]) or float('nan'):.2f}, 2nd half "
             f"{slope_mb_per_hour(warm[half:]) or float('nan'):.2f})",
             f"exit {run['returncode']}, {run['items']} items, {run['duplicate_items']} "
             f"duplicate (url, version) items"]
    if len(run["windows"]) > 2:
        # the first round of revisits raises the high-water mark once (every page due
        # at once): the slope after it says whether anything keeps growing
        later_start = sum(w["wall_s"] for w in run["windows"][:2])
        later = [(t, r) for t, r in samples if t >= later_start]
        value = slope_mb_per_hour(later)
        lines.append(f"slope after the first round of revisits "
                     f"{value if value is not None else float('nan'):.2f} MB/hour; RSS at "
                     f"the end of each round (MiB): "
                     + " ".join(f"{w['rss_mib']:.1f}" for w in run["windows"]))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=20000, help="pages in the site (20000)")
    parser.add_argument("--seed", type=int, default=1, help="the site's seed (1)")
    parser.add_argument("--change", type=float, default=0.02,
                        help="share of the pages changing per round (0.02)")
    parser.add_argument("--validator-every", default="2,1", metavar="N[,N...]",
                        help="the mixes to run, one after the other: in each, every Nth page "
                             "carries ETag and Last-Modified (0: none); 2,1: half the pages, "
                             "then every page (2,1)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of changes (3)")
    parser.add_argument("--interval", type=float, default=90.0,
                        help="seconds per round = REVISIT_INTERVAL of the continuous crawl; "
                             "must exceed the time of one whole crawl (90)")
    parser.add_argument("--modes", default="fixed,adaptive",
                        help="continuous crawls to run: fixed (REVISIT_ADAPTIVE=False), "
                             "adaptive, both (fixed,adaptive), or none (re-runs only)")
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight (16)")
    parser.add_argument("--scrapy-python", metavar="PATH", default=None,
                        help="a python that can import scrapy (default: benchmarks/_refenv.py's)")
    parser.add_argument("--no-scrapy", action="store_true", help="do not run Scrapy")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="wall seconds allowed per re-run (600)")
    parser.add_argument("--stop-timeout", type=float, default=60.0,
                        help="seconds a continuous crawl has to stop after SIGINT (60)")
    parser.add_argument("--longrun", type=float, default=None, metavar="SECONDS",
                        help="instead: one continuous crawl for SECONDS, RSS sampled")
    parser.add_argument("--sample-s", type=float, default=5.0,
                        help="seconds between RSS samples with --longrun (5)")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="keep spiders, feeds and logs in DIR")
    parser.add_argument("--json", action="store_true", help="also print one JSON line")
    args = parser.parse_args(argv)
    modes = args.modes
    args.modes = [m.strip() for m in modes.split(",") if m.strip() not in ("", "none")]
    if not set(args.modes) <= {"fixed", "adaptive"} or (args.longrun and not args.modes):
        parser.error(f"--modes takes fixed and/or adaptive (or none), got {modes!r}")
    if args.pages < 2 or args.rounds < 1 or args.interval <= 4:
        parser.error("--pages must be >= 2, --rounds >= 1 and --interval > 4 s")
    if not 0 <= args.change <= 1:
        parser.error(f"--change must be 0-1, got {args.change}")
    try:
        args.mixes = [int(n) for n in str(args.validator_every).split(",") if n.strip()]
    except ValueError:
        args.mixes = []
    if not args.mixes or min(args.mixes) < 0:
        parser.error(f"--validator-every takes whole numbers >= 0 separated by commas, got "
                     f"{args.validator_every!r}")

    def say(line):
        print(line, file=sys.stderr, flush=True)

    scrapy_python = None
    if not args.no_scrapy and args.longrun is None:
        if args.scrapy_python:
            scrapy_python = args.scrapy_python
        else:
            from _refenv import reference_python

            scrapy_python = reference_python()
    tmp = None
    workdir = args.keep
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="crawlfw-revisit-")
        workdir = Path(tmp.name)
    workdir.mkdir(parents=True, exist_ok=True)
    workdir = workdir.resolve()
    import crawlfw

    versions = {"crawlfw": crawlfw.__version__}
    if scrapy_python:
        versions["scrapy"] = _reference_version(scrapy_python)
    pycache = workdir / "pycache"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(crawlfw.__file__).parent)],
                   env=_env(REPO, pycache), check=True, stdout=subprocess.DEVNULL)
    mixes = []
    try:
        for every in args.mixes if args.longrun is None else args.mixes[:1]:
            mixdir = workdir / f"validators-1in{every}"
            mixdir.mkdir(exist_ok=True)
            with RevisitSiteServer(args.pages, args.seed, args.change, every) as srv:
                say(f"site: {args.pages} pages, {mix_name(every)}, at {srv.url}")
                bench = Bench(args, srv, mixdir, pycache, every)
                if args.longrun is not None:
                    run = bench.continuous(args.modes[-1] == "adaptive", 0,
                                           sample_s=args.sample_s, duration_s=args.longrun,
                                           say=say)
                    print(format_longrun(args, run))
                    if args.json:
                        print(json.dumps(run))
                    return 0 if run["windows"] else 1
                mixes.append({"validator_every": every,
                              "result": run_rounds(args, bench, scrapy_python, say)})
    finally:
        if tmp is not None:
            tmp.cleanup()
    print("\n\n".join(format_report(args, m["result"], versions, m["validator_every"])
                      for m in mixes))
    if any(m["result"]["continuous"] for m in mixes):
        print("\n" + format_summary(mixes))
    if args.json:
        print(json.dumps({"args": {k: (str(v) if isinstance(v, Path) else v)
                                   for k, v in vars(args).items()},
                          "mixes": [{"validator_every": m["validator_every"], **m["result"]}
                                    for m in mixes]}))
    failed = False
    for m in mixes:
        result = m["result"]
        failed |= any(r["returncode"] != 0 or r["caught"] < r["changed"]
                      for r in result["reruns"])
        failed |= any(c["returncode"] not in (0, -signal.SIGINT) for c in result["continuous"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
