"""What the dashboard costs a crawl (issue 33): CPU seconds per page of the crawl process,
paired runs in turn on the crawl benchmark's generated site (``_crawlsite.py serve``).

    flock /work/wt/BENCH.lock python benchmarks/bench_dashboard.py --base /tmp/base --pages 5000 --rounds 4

Configurations, each round running them one after the other:

* ``base``: the checkout given by ``--base`` (a crawlfw before the dashboard), defaults;
* ``off``: this checkout, defaults (the history is sampled once a second, no listener);
* ``on``: this checkout with ``DASHBOARD_ENABLED=True``, a page watching: an event
  stream read throughout, ``/api/crawls`` every 2 s and ``/metrics`` every 5 s (as a
  Prometheus scraping), so the per-host detail is computed too.

Reports per round ``off/base`` and ``on/off`` (CPU per page), then the medians with
min-max. The CPU is the crawl process's own (``os.wait4``), user + system.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SPIDER = HERE / "spiders" / "bench_spider.py"


def _env(path: Path, runtime: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLUMNS")}
    env["PYTHONPATH"] = str(path)
    env["XDG_RUNTIME_DIR"] = str(runtime)
    return env


class _Watcher(threading.Thread):
    """A page watching the in-crawl dashboard whose URL the crawl logs."""

    def __init__(self, log: Path):
        super().__init__(daemon=True)
        self.log = log
        self.stop = threading.Event()
        self.events = 0

    def run(self):
        url = None
        while url is None and not self.stop.is_set():
            try:
                match = re.search(r"Dashboard: (http://127\.0\.0\.1:\d+)/\?token=(\S+)",
                                  self.log.read_text(errors="replace"))
            except OSError:
                match = None
            if match:
                url = match
            else:
                time.sleep(0.05)
        if url is None:
            return
        base, token = url.group(1), url.group(2)
        headers = {"Authorization": f"Bearer {token}"}

        def get(path):
            with urllib.request.urlopen(urllib.request.Request(base + path, headers=headers),
                                        timeout=10) as r:
                return r.read()

        try:
            crawls = json.loads(get("/api/crawls"))
            crawl = crawls[0]["id"]
            get(f"/api/crawls/{crawl}/history")
            threading.Thread(target=self._poll, args=(get,), daemon=True).start()
            req = urllib.request.Request(f"{base}/api/crawls/{crawl}/events", headers=headers)
            with urllib.request.urlopen(req, timeout=30) as stream:
                for line in stream:
                    if self.stop.is_set():
                        return
                    if line.startswith(b"data:"):
                        self.events += 1
        except (OSError, IndexError, ValueError):
            return  # the crawl ended

    def _poll(self, get):
        n = 0
        while not self.stop.wait(1.0):
            n += 1
            try:
                if n % 2 == 0:
                    get("/api/crawls")
                if n % 5 == 0:
                    get("/metrics")
            except OSError:
                return


def run_once(name: str, path: Path, url: str, workdir: Path, extra: list[str]) -> dict:
    runtime = Path(tempfile.mkdtemp(prefix="cfwb"))
    os.chmod(runtime, 0o700)
    feed = workdir / f"{name}.jl"
    log = workdir / f"{name}.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(SPIDER), "-a",
             f"base_url={url}", "-O", str(feed), "-s", "LOG_LEVEL=INFO",
             "-s", "CONCURRENT_REQUESTS=16", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=16",
             *extra], env=_env(path, runtime), stdout=subprocess.DEVNULL, stderr=err,
            cwd=str(workdir))
        watcher = None
        if name == "on":
            watcher = _Watcher(log)
            watcher.start()
        started = time.monotonic()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - started
        if watcher is not None:
            watcher.stop.set()
    pages = sum(1 for _ in open(feed, "rb"))
    cpu = usage.ru_utime + usage.ru_stime
    return {"name": name, "pages": pages, "cpu_s": round(cpu, 3), "wall_s": round(wall, 2),
            "cpu_ms_per_page": round(1000 * cpu / max(1, pages), 4), "status": status,
            "events": watcher.events if watcher is not None else None}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True,
                        help="a checkout of crawlfw before the dashboard")
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args(argv)
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="crawlfw-bench-dash-"))
    workdir.mkdir(parents=True, exist_ok=True)
    server = subprocess.Popen([sys.executable, str(HERE / "_crawlsite.py"), "serve", "--pages",
                               str(args.pages), "--workers", "2"], stdout=subprocess.PIPE,
                              text=True)
    try:
        line = server.stdout.readline()
        url = line.split()[1]
        configs = [("base", args.base, []), ("off", REPO, []),
                   ("on", REPO, ["-s", "DASHBOARD_ENABLED=True"])]
        for name, path, _ in configs[:2]:  # bytecode compiled, caches warm
            run_once(f"warmup-{name}", path, url, workdir, [])
        rounds = []
        for i in range(args.rounds):
            runs = {name: run_once(name, path, url, workdir, extra)
                    for name, path, extra in configs}
            for run in runs.values():
                assert run["pages"] == args.pages and run["status"] == 0, run
            ratio = {"off/base": runs["off"]["cpu_ms_per_page"] / runs["base"]["cpu_ms_per_page"],
                     "on/off": runs["on"]["cpu_ms_per_page"] / runs["off"]["cpu_ms_per_page"]}
            rounds.append(ratio)
            print(f"round {i + 1}: " + ", ".join(
                f"{n} {r['cpu_ms_per_page']:.4f} ms/page ({r['wall_s']} s)"
                for n, r in runs.items()) + " | " + ", ".join(
                f"{k} {v:.3f}" for k, v in ratio.items())
                + f" | events seen {runs['on']['events']}", flush=True)
        for key in ("off/base", "on/off"):
            values = [r[key] for r in rounds]
            print(f"{key}: median {statistics.median(values):.3f} "
                  f"({min(values):.3f}-{max(values):.3f}) over {len(values)} rounds")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
