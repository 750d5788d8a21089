"""bench_broad.py's skewed mix (issue 18): one busy host among many small ones.

Run as ``python benchmarks/bench_broad.py --skewed [options]`` (``--skewed --help``
lists them). One big host ``big.localhost`` of ``--big-pages`` (600) pages beside
``--small-hosts`` (300) hosts ``site<i>.localhost`` of ``--small-pages`` (3), each page
linking to the next ``--links`` (20), every answer held ``--latency`` (0.1) s:
``tests/support/broadsite.py``'s ``BroadSite``, in this process (a fresh one per crawl,
recording its requests), closing each connection. ``CONCURRENT_REQUESTS=32``
(``--concurrency``, per process), ``CONCURRENT_REQUESTS_PER_DOMAIN=8``
(``--per-domain``), cookies and retries off, ``LOG_LEVEL=INFO``; the spiders are
``spiders/skewed_spider.py`` and, for Scrapy, ``spiders/skewed_spider_scrapy.py`` (its
``LocalhostResolver`` answers ``*.localhost`` without a lookup, as curl does). Each
configuration (``--configs``) crawls the big host alone, the politeness floor (measured;
its bound is big pages / per-domain x latency = 7.5 s), then the mix, ``--repeat`` times:

* ``memory``: crawlfw, in-memory frontier;
* ``jobdir``: crawlfw with ``JOBDIR`` (SQLite frontier);
* ``redis``: crawlfw ``runspider --workers 2`` with ``FRONTIER_URL`` on a
  ``redis-server`` the benchmark starts on a free port (and stops);
* ``scrapy``, ``scrapy-dapq``: Scrapy (``--scrapy-python``, e.g. 2.19 in a virtualenv)
  with its default queue, and with ``SCHEDULER_PRIORITY_QUEUE =
  'scrapy.pqueues.DownloaderAwarePriorityQueue'``.

Reported per configuration (medians of the repeats): the floor's and the mix's wall time
(start to exit) and their ratio (the target: crawlfw's mix within 10 % of its floor), the
same at the server (first request to last answer: start-up left out), the mix's start-up
(start to first request) and end (last answer to exit), CPU seconds (the crawler and its
children, ``os.wait4``) and seconds its threads waited for a CPU (:class:`CpuWaitSampler`),
the most requests one host had outstanding at once (:func:`most_at_once`), whether every
feed holds every page exactly once (exit status 1 when one does not), and the 1-minute
load average at the runs' starts. ``--trace`` adds, per crawl, where it lost time
against its floor (:func:`big_host_trace`)::

    python benchmarks/bench_broad.py --skewed --scrapy-python /tmp/scrapyvenv/bin/python \\
        [--repeat 3] [--configs memory,jobdir,redis] [--trace] [--keep DIR] [--json]
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SPIDERS = HERE / "spiders"

#: The skewed mix's configurations, in the order they run: crawlfw's three frontiers
#: and Scrapy's two priority queues.
SKEWED_CONFIGS = ("memory", "jobdir", "redis", "scrapy", "scrapy-dapq")
SKEWED_LABELS = {
    "memory": "crawlfw in memory",
    "jobdir": "crawlfw JOBDIR",
    "redis": "crawlfw FRONTIER_URL, --workers 2",
    "scrapy": "Scrapy, default queue",
    "scrapy-dapq": "Scrapy, DownloaderAwarePriorityQueue",
}
SKEWED_SETTINGS = {"COOKIES_ENABLED": "False", "RETRY_ENABLED": "False", "LOG_LEVEL": "INFO"}
SKEWED_SCRAPY = {"TELNETCONSOLE_ENABLED": "False", "REMOTE_CONTROL_ENABLED": "False",
                 "DNS_RESOLVER": "skewed_spider_scrapy.LocalhostResolver"}
SKEWED_BIG = "big.localhost"


def skewed_expected(port: int, big: str, big_pages: int, small_hosts: int,
                    small_pages: int) -> set:
    """The URLs a crawl of the skewed mix must fetch, each once.

    Args:
        port: the site's TCP port on 127.0.0.1.
        big: the big host's name (``big.localhost``).
        big_pages: its pages (>= 1); ``small_hosts`` hosts ``site<i>.localhost`` of
            ``small_pages`` pages each (``small_hosts=0``: the big host alone).

    Returns:
        ``{url}``: ``http://<host>:<port>/`` for page 0, ``.../p/<n>`` for page n, as
        ``tests/support/broadsite.py`` serves and links them.
    """
    def site(host, pages):
        return {f"http://{host}:{port}/" + ("" if n == 0 else f"p/{n}") for n in range(pages)}
    urls = site(big, big_pages)
    for i in range(small_hosts):
        urls |= site(f"site{i}.localhost", small_pages)
    return urls


def read_feed_urls(path: Path) -> list:
    """The ``url`` of every item of a JSON Lines feed, in order; ``[]`` when the file is
    missing. Raises ``ValueError`` naming the file and line for a line that is not an
    item with a ``url``."""
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        return []
    urls = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        try:
            urls.append(json.loads(line)["url"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: not an item with a url: {line[:80]!r}") from exc
    return urls


def check_feed(urls: list, expected: set) -> dict:
    """How a feed's URLs compare with the pages expected.

    Returns:
        ``{"pages": items, "unique": distinct URLs, "missing": expected URLs not in the
        feed, "twice": items beyond the first of their URL, "extra": URLs not expected,
        "complete": every expected page exactly once and nothing else}``.
    """
    unique = set(urls)
    missing = len(expected - unique)
    extra = len(unique - expected)
    twice = len(urls) - len(unique)
    return {"pages": len(urls), "unique": len(unique), "missing": missing, "twice": twice,
            "extra": extra, "complete": not (missing or extra or twice)}


def most_at_once(log, latency_s: float) -> dict:
    """The most requests each host had outstanding at once, from the arrival times
    at a server that holds every answer ``latency_s`` seconds.

    A request that arrived at ``t`` cannot have been answered before ``t + latency_s``,
    so every request of its host arriving in ``[t, t + latency_s)`` was outstanding
    together with it: the count is a lower bound of the crawler's concurrency on that
    host, and exact up to the server's own delays. (Counting requests being served, as
    ``BroadSite.max_active`` does, can count one more at a hand-over: the server counts
    a request done only after writing its answer, the crawler may start the next one as
    soon as it has read it.)

    Args:
        log: ``(time.monotonic(), host name, ...)`` per request received, in any order
            (``BroadSite.log``).
        latency_s: seconds each answer is held (> 0).

    Returns:
        ``{host name: requests outstanding at once, at most}``.
    """
    import bisect

    times = {}
    for entry in log:
        times.setdefault(entry[1], []).append(entry[0])
    most = {}
    for host, arrivals in times.items():
        arrivals.sort()
        most[host] = max(bisect.bisect_left(arrivals, t + latency_s, lo=i) - i
                         for i, t in enumerate(arrivals))
    return most


def big_host_trace(log, big: str, latency_s: float, per_domain: int, total: int,
                   bin_s: float = 0.5, step_s: float = 0.01, frontier=None) -> dict:
    """Where a crawl of the skewed mix lost time against its floor, from the arrival
    times of its requests at a server holding each answer ``latency_s`` (> 0) seconds.

    A request counts as outstanding from its arrival for ``latency_s`` (it cannot have
    been answered sooner; later answers are not seen, so the counts are lower bounds).

    Args:
        log: ``(time.monotonic(), host name, ...)`` per request (``BroadSite.log``).
        big: the big host's name.
        per_domain: ``CONCURRENT_REQUESTS_PER_DOMAIN``.
        total: the crawl's transfers at most (``CONCURRENT_REQUESTS`` times the workers).
        bin_s: the width of the start counts' bins, seconds.
        step_s: the sampling step over the big host's span, seconds.
        frontier: ``[(time.monotonic(), requests of the big host the shared frontier
            counts in flight)]``, sampled during the crawl, or None.

    Returns:
        ``{"big_starts": [requests to the big host per bin from the first request],
        "other_starts": [the other hosts', per bin], "turnaround_p50_s",
        "turnaround_p90_s" (the time from the i-th answer of the big host to its
        (i + per_domain)-th request: how fast a freed transfer was used again while the
        host was kept at its limit), "samples" (from its first to its last request),
        "under_limit" (samples where it had fewer than ``per_domain`` outstanding),
        "under_limit_credit_free" (of those, samples where all hosts together had fewer
        than ``total``: the crawl could have started one of its requests),
        with ``frontier`` also ``"frontier": {phase: {"samples", "frontier_mean",
        "server_mean"}}`` for the phases ``"others_running"`` (up to the last request
        to another host) and ``"big_alone"`` (after it): the big host's mean in-flight
        count in the shared frontier against the mean outstanding at the server}``;
        ``{}`` without requests to ``big``.
    """
    import bisect

    times = sorted(entry[0] for entry in log)
    mine = sorted(entry[0] for entry in log if entry[1] == big)
    if not mine:
        return {}
    t0 = times[0]
    bins = int((times[-1] - t0) // bin_s) + 1
    big_starts, other_starts = [0] * bins, [0] * bins
    for entry in log:
        (big_starts if entry[1] == big else other_starts)[int((entry[0] - t0) // bin_s)] += 1
    gaps = sorted(mine[i + per_domain] - mine[i] - latency_s
                  for i in range(len(mine) - per_domain))

    def outstanding(arrivals, t):
        return bisect.bisect_right(arrivals, t) - bisect.bisect_right(arrivals, t - latency_s)

    samples = int((mine[-1] - mine[0]) / step_s + 1e-9) + 1
    under = free = 0
    for k in range(samples):
        t = mine[0] + k * step_s
        if outstanding(mine, t) < per_domain:
            under += 1
            if outstanding(times, t) < total:
                free += 1

    def pct(q):
        return round(gaps[int(q * (len(gaps) - 1))], 4) if gaps else None

    result = {"big_starts": big_starts, "other_starts": other_starts,
              "turnaround_p50_s": pct(0.5), "turnaround_p90_s": pct(0.9),
              "samples": samples, "under_limit": under, "under_limit_credit_free": free}
    if frontier is not None:
        others_end = max((e[0] for e in log if e[1] != big), default=mine[0])
        phases = {"others_running": (mine[0], others_end), "big_alone": (others_end, mine[-1])}
        result["frontier"] = {}
        for phase, (lo, hi) in phases.items():
            picked = [(count, outstanding(mine, t)) for t, count in frontier if lo <= t < hi]
            result["frontier"][phase] = {
                "samples": len(picked),
                "frontier_mean": round(sum(c for c, _ in picked) / len(picked), 2)
                if picked else None,
                "server_mean": round(sum(o for _, o in picked) / len(picked), 2)
                if picked else None}
    return result


def median(values):
    """The median of a non-empty list of numbers (the mean of the middle two for an
    even count); None when any value is None."""
    if any(v is None for v in values):
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def skewed_summary(runs: list) -> list:
    """One row per configuration from the runs of :func:`run_skewed`.

    Args:
        runs: dicts with ``config``, ``kind`` (``"alone"`` or ``"mix"``), ``wall_s``,
            ``span_s``, ``startup_s``, ``tail_s``, ``cpu_s``, ``complete`` and
            optionally ``cpu_wait_s`` and ``max_per_host`` (the largest of any run
            reported); several of one config and kind are
            repeats, summarised by their median.

    Returns:
        ``[{"config", "label", "floor_wall_s", "mix_wall_s", "ratio_wall",
        "floor_span_s", "mix_span_s", "ratio_span", "floor_startup_s",
        "mix_startup_s", "floor_tail_s", "mix_tail_s", "mix_cpu_s", "mix_cpu_wait_s",
        "max_per_host", "complete", "repeats"}]`` in :data:`SKEWED_CONFIGS` order; ``ratio_*`` is the mix's median
        over the big host alone's (the politeness floor, measured), None when either
        is missing; ``complete`` is True only when every run fetched every page once.
    """
    rows = []
    for config in SKEWED_CONFIGS:
        mine = [r for r in runs if r["config"] == config]
        if not mine:
            continue
        alone = [r for r in mine if r["kind"] == "alone"]
        mix = [r for r in mine if r["kind"] == "mix"]

        def med(kind_runs, key):
            return median([r[key] for r in kind_runs]) if kind_runs else None

        row = {"config": config, "label": SKEWED_LABELS[config],
               "complete": all(r["complete"] for r in mine),
               "repeats": max(len(alone), len(mix))}
        for key in ("wall_s", "span_s", "startup_s", "tail_s"):
            floor, whole = med(alone, key), med(mix, key)
            name = key[:-2]
            row[f"floor_{name}_s"] = floor
            row[f"mix_{name}_s"] = whole
            if key in ("wall_s", "span_s"):
                row[f"ratio_{name}"] = (whole / floor) if floor and whole is not None else None
        row["mix_cpu_s"] = med(mix, "cpu_s")
        waits = [r.get("cpu_wait_s") for r in mix]
        row["mix_cpu_wait_s"] = median(waits) if mix else None
        row["max_per_host"] = max((r.get("max_per_host", 0) for r in mine), default=0)
        rows.append(row)
    return rows


class CpuWaitSampler(threading.Thread):
    """CPU time and run-queue wait of process ``pid`` and its descendants, from each
    thread's ``/proc/<pid>/task/<tid>/schedstat`` (Linux: nanoseconds on a CPU, then
    nanoseconds runnable but waiting for one), sampled every ``interval_s`` seconds.

    After :meth:`stop`: ``run_s`` and ``wait_s``, seconds summed over every thread
    seen (a thread's last ``interval_s`` before it ended is missed). ``wait_s`` well
    above ``run_s`` means the crawler waited for a CPU more than it ran: on a shared
    machine its wall times measure the machine's load, not the crawler.
    ``available`` is False where ``schedstat`` cannot be read (both stay 0).
    """

    def __init__(self, pid: int, interval_s: float = 0.05):
        super().__init__(daemon=True, name="cpu-wait-sampler")
        self.pid, self.interval_s = pid, interval_s
        self.run_s = self.wait_s = 0.0
        self.available = os.path.exists(f"/proc/{pid}/task/{pid}/schedstat")
        self._last = {}
        self._halt = threading.Event()
        self.start()

    def _sample(self):
        todo, seen = [self.pid], set()
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                base = f"/proc/{pid}/task/{tid}"
                try:
                    with open(base + "/schedstat") as f:
                        on_cpu, waiting = f.read().split()[:2]
                    with open(base + "/children") as f:
                        todo.extend(int(c) for c in f.read().split())
                except (OSError, ValueError):
                    continue
                self._last[(pid, tid)] = (int(on_cpu), int(waiting))

    def run(self):
        while self.available:
            self._sample()
            if self._halt.wait(self.interval_s):
                return

    def stop(self):
        """Stop sampling, take a last sample (call it after the process exited, before
        it is reaped) and sum the figures; a second call changes nothing."""
        if self._halt.is_set():
            return
        self._halt.set()
        self.join()
        if self.available:
            self._sample()
        self.run_s = sum(c for c, _ in self._last.values()) / 1e9
        self.wait_s = sum(w for _, w in self._last.values()) / 1e9


class InFlightPoller(threading.Thread):
    """Samples every ``interval_s`` seconds how many requests of ``host`` the shared
    frontier at ``redis_url`` (``FRONTIER_KEY`` ``key``) counts in flight (its
    ``{key}:inflight`` hash: leased, prefetched or finished but not yet reported);
    ``samples`` holds ``(time.monotonic(), count)``. Redis errors end the sampling."""

    def __init__(self, redis_url: str, key: str, host: str, interval_s: float = 0.01):
        import redis

        super().__init__(daemon=True, name="inflight-poller")
        self.client = redis.Redis.from_url(redis_url)
        self.name_, self.host, self.interval_s = f"{{{key}}}:inflight", host, interval_s
        self.samples = []
        self._halt = threading.Event()
        self.start()

    def run(self):
        import redis

        while not self._halt.wait(self.interval_s):
            try:
                count = int(self.client.hget(self.name_, self.host) or 0)
            except redis.RedisError:
                return
            self.samples.append((time.monotonic(), count))

    def stop(self):
        """Stop sampling and close the connection."""
        self._halt.set()
        self.join()
        self.client.close()


def _wait_rusage(proc, timeout_s, before_reap=None):
    """Wait for ``proc`` at most ``timeout_s`` seconds; returns ``(exit code, rusage,
    timed_out)``. On time-out its whole process group is killed. ``before_reap()`` is
    called once the process has exited, before it is reaped (its ``/proc`` entry is
    still there then)."""
    deadline = time.monotonic() + timeout_s
    while True:
        if before_reap is not None:
            try:
                exited = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                exited = True
            if exited is not None:
                before_reap()
                before_reap = None
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage, False
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage, True
        time.sleep(0.02)


class SkewedBench:
    """Runs the skewed mix and the big host alone for each configuration.

    Args:
        work: a directory for the runs' feeds, logs, job directories and bytecode.
        big_pages, small_hosts, small_pages, links, latency_s: the site (see
            ``tests/support/broadsite.py``): the big host's pages, the small hosts and
            their pages, the links per page, seconds each answer is held.
        concurrency, per_domain: ``CONCURRENT_REQUESTS`` (per process: each of the two
            workers has as many) and ``CONCURRENT_REQUESTS_PER_DOMAIN``.
        scrapy_python: a python with Scrapy, for the ``scrapy*`` configurations.
        redis_url: the Redis of the ``redis`` configuration.
        timeout_s: seconds one crawl may take before it is killed (and counted failed).
        trace: add :func:`big_host_trace` to each run's figures (``--trace``).
    """

    def __init__(self, work: Path, *, big_pages, small_hosts, small_pages, links, latency_s,
                 concurrency, per_domain, scrapy_python=None, redis_url=None, timeout_s=300,
                 trace=False):
        self.work = Path(work)
        self.big_pages, self.small_hosts, self.small_pages = big_pages, small_hosts, small_pages
        self.links, self.latency_s = links, latency_s
        self.concurrency, self.per_domain = concurrency, per_domain
        self.scrapy_python, self.redis_url, self.timeout_s = scrapy_python, redis_url, timeout_s
        self.trace = trace
        self.count = 0
        env = {k: v for k, v in os.environ.items() if k != "CRAWLFW_VALIDATE_MESSAGES"}
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
        # Bytecode cached, as an installed crawlfw has it (this environment may set
        # PYTHONDONTWRITEBYTECODE, which would charge every start with compiling).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(self.work / "pycache")
        self.crawlfw_env = env
        self.scrapy_env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
                           "PYTHONPATH": str(SPIDERS)}

    def argv(self, config: str, port: int, hosts: int, run_dir: Path, feed: Path) -> list:
        """The command line of one crawl of ``config`` (a :data:`SKEWED_CONFIGS` name)."""
        settings = {**SKEWED_SETTINGS, "CONCURRENT_REQUESTS": str(self.concurrency),
                    "CONCURRENT_REQUESTS_PER_DOMAIN": str(self.per_domain)}
        args = ["-a", f"port={port}", "-a", f"big={SKEWED_BIG}", "-a", f"hosts={hosts}",
                "-o", str(feed)]
        if config.startswith("scrapy"):
            settings.update(SKEWED_SCRAPY)
            if config == "scrapy-dapq":
                settings["SCHEDULER_PRIORITY_QUEUE"] = \
                    "scrapy.pqueues.DownloaderAwarePriorityQueue"
            head = [self.scrapy_python, "-m", "scrapy", "runspider",
                    str(SPIDERS / "skewed_spider_scrapy.py")]
        else:
            settings["CONTROL_ENDPOINT"] = "False"
            head = [sys.executable, "-m", "crawlfw.cmdline", "runspider",
                    str(SPIDERS / "skewed_spider.py")]
            if config == "jobdir":
                settings["JOBDIR"] = str(run_dir / "job")
            elif config == "redis":
                settings["FRONTIER_URL"] = self.redis_url
                settings["FRONTIER_KEY"] = self.frontier_key(run_dir)
                args += ["--workers", "2"]
        return [*head, *args, *(x for k, v in settings.items() for x in ("-s", f"{k}={v}"))]

    @staticmethod
    def frontier_key(run_dir: Path) -> str:
        """The ``FRONTIER_KEY`` of the crawl run in ``run_dir``."""
        return f"bench-skewed-{run_dir.name}"

    def run(self, config: str, kind: str, site_factory, big_pages: int | None = None) -> dict:
        """One crawl: ``kind`` ``"alone"`` (the big host only: the politeness floor) or
        ``"mix"`` (the big host and the small ones), against a fresh site from
        ``site_factory(host_pages)`` (a ``BroadSite``); ``big_pages`` replaces the big
        host's pages (for a warm-up).

        Returns:
            ``{"config", "kind", "exit", "timed_out", "wall_s" (start to exit, start-up
            included), "span_s" (at the server: first request to last answer),
            "startup_s" (start to the first request), "tail_s" (the last answer to the
            exit: idle detection, closing, the feed's store), "cpu_s"
            (user + system, the crawler and its children), "cpu_wait_s" (seconds its
            threads were runnable but waited for a CPU: :class:`CpuWaitSampler`; None
            where it cannot be read), "max_per_host" (the most requests one host had
            outstanding at once: :func:`most_at_once` on a site recording its requests,
            else the server's ``max_active``), "load1" (the 1-minute load
            average at the start), **check_feed(...)}``, and with ``trace`` (latency
            above 0) ``"trace"``: :func:`big_host_trace` of the run.
        """
        hosts = self.small_hosts if kind == "mix" else 0
        big_pages = big_pages or self.big_pages
        self.count += 1
        run_dir = self.work / f"{self.count:02d}-{config}-{kind}"
        run_dir.mkdir(parents=True)
        feed = run_dir / "items.jl"
        site = site_factory({SKEWED_BIG: big_pages})
        try:
            argv = self.argv(config, site.port, hosts, run_dir, feed)
            env = self.scrapy_env if config.startswith("scrapy") else self.crawlfw_env
            load1 = os.getloadavg()[0]
            with open(run_dir / "crawl.log", "wb") as log:
                start = time.monotonic()
                proc = subprocess.Popen(argv, cwd=run_dir, env=env, stdout=subprocess.DEVNULL,
                                        stderr=log, start_new_session=True)
                sampler = CpuWaitSampler(proc.pid)
                poller = None
                if self.trace and config == "redis":
                    poller = InFlightPoller(self.redis_url, self.frontier_key(run_dir),
                                            SKEWED_BIG)
                code, usage, timed_out = _wait_rusage(proc, self.timeout_s, sampler.stop)
                wall = time.monotonic() - start
                sampler.stop()
                if poller is not None:
                    poller.stop()
            end = start + wall
            span = startup = tail = None
            if site.first_s is not None:
                span = site.last_s - site.first_s
                startup, tail = site.first_s - start, end - site.last_s
            if self.latency_s > 0 and site.log:
                max_per_host = max(most_at_once(site.log, self.latency_s).values())
            else:
                max_per_host = max(site.max_active.values(), default=0)
            trace = None
            if self.trace and self.latency_s > 0 and site.log:
                workers = 2 if config == "redis" else 1
                trace = big_host_trace(site.log, SKEWED_BIG, self.latency_s, self.per_domain,
                                       self.concurrency * workers,
                                       frontier=poller.samples if poller else None)
        finally:
            site.stop()
        expected = skewed_expected(site.port, SKEWED_BIG, big_pages, hosts,
                                   self.small_pages)
        try:
            check = check_feed(read_feed_urls(feed), expected)
        except ValueError as exc:
            print(f"  {exc}", file=sys.stderr)
            check = {"pages": 0, "unique": 0, "missing": len(expected), "twice": 0,
                     "extra": 0, "complete": False}
        row = {"config": config, "kind": kind, "exit": code, "timed_out": timed_out,
               "wall_s": round(wall, 2), "span_s": round(span, 2) if span else None,
               "startup_s": None if startup is None else round(startup, 2),
               "tail_s": None if tail is None else round(tail, 2),
               "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
               "cpu_wait_s": round(sampler.wait_s, 2) if sampler.available else None,
               "max_per_host": max_per_host, "load1": round(load1, 2), **check}
        if trace is not None:
            row["trace"] = trace
        row["complete"] = check["complete"] and code == 0 and not timed_out
        return row


def run_skewed(args) -> dict:
    """The skewed mix for the ``--skewed`` options ``args``; see :func:`main`.

    Returns:
        ``{"site": {...}, "runs": [SkewedBench.run rows], "rows": skewed_summary(runs),
        "skipped": {config: why}}``.
    """
    sys.path.insert(0, str(REPO))
    from tests.support.broadsite import BroadSite

    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = [c for c in configs if c not in SKEWED_CONFIGS]
    if unknown:
        raise SystemExit(f"bench_broad.py: --configs: unknown {', '.join(unknown)} "
                         f"(known: {', '.join(SKEWED_CONFIGS)})")
    skipped = {}
    if not args.scrapy_python:
        for c in configs:
            if c.startswith("scrapy"):
                skipped[c] = "no --scrapy-python"
        configs = [c for c in configs if not c.startswith("scrapy")]

    def site_factory(host_pages):
        return BroadSite(pages=args.small_pages, links=args.links, host_pages=host_pages,
                         latency_s=args.latency, record=True)

    redis = None
    runs = []
    with tempfile.TemporaryDirectory(prefix="crawlfw-bench-skewed-") as tmp:
        work = Path(args.keep or tmp)
        work.mkdir(parents=True, exist_ok=True)
        try:
            if "redis" in configs:
                from tests.support.redisserver import RedisServer, redis_available

                if redis_available():
                    redis = RedisServer(work / "redis").start()
                else:
                    skipped["redis"] = "no redis-server on PATH"
                    configs.remove("redis")
            bench = SkewedBench(
                work, big_pages=args.big_pages, small_hosts=args.small_hosts,
                small_pages=args.small_pages, links=args.links, latency_s=args.latency,
                concurrency=args.concurrency, per_domain=args.per_domain,
                scrapy_python=args.scrapy_python, redis_url=redis and redis.url,
                timeout_s=args.timeout, trace=args.trace)
            # One unmeasured crawl of each crawlfw kind first: compiles the bytecode cache.
            for config in [c for c in ("memory", "jobdir", "redis") if c in configs]:
                bench.run(config, "alone", lambda hp: BroadSite(pages=2, host_pages=hp),
                          big_pages=2)
            for _ in range(args.repeat):
                for config in configs:
                    for kind in ("alone", "mix"):
                        row = bench.run(config, kind, site_factory)
                        runs.append(row)
                        print(f"  {SKEWED_LABELS[config]}, {kind}: {row['wall_s']} s wall "
                              f"= {row['startup_s']} s start-up + {row['span_s']} s at the "
                              f"server + {row['tail_s']} s end, load {row['load1']}, "
                              f"{row['pages']} pages, complete {row['complete']}",
                              file=sys.stderr, flush=True)
        finally:
            if redis is not None:
                redis.stop()
    return {"site": {"big_pages": args.big_pages, "small_hosts": args.small_hosts,
                     "small_pages": args.small_pages, "links": args.links,
                     "latency_s": args.latency, "concurrency": args.concurrency,
                     "per_domain": args.per_domain,
                     "floor_s": args.big_pages / args.per_domain * args.latency},
            "runs": runs, "rows": skewed_summary(runs), "skipped": skipped}


def print_skewed(result: dict) -> None:
    """The skewed mix's table: one line per configuration."""
    site = result["site"]
    print(f"skewed mix: 1 host of {site['big_pages']} pages + {site['small_hosts']} hosts of "
          f"{site['small_pages']} ({site['links']} links a page), every answer "
          f"{site['latency_s']} s late, CONCURRENT_REQUESTS={site['concurrency']}, "
          f"CONCURRENT_REQUESTS_PER_DOMAIN={site['per_domain']}; the big host's pages / "
          f"per-domain x latency = {site['floor_s']:.2f} s")
    loads = [r["load1"] for r in result["runs"]]
    if loads:
        print(f"load average (1 min) at the runs' starts: {min(loads)}-{max(loads)}")

    def f(value, spec):
        return "-" if value is None else format(value, spec)
    print(f"{'configuration':<38} {'floor s':>8} {'mix s':>7} {'ratio':>6} "
          f"{'floor@srv':>9} {'mix@srv':>8} {'ratio':>6} {'start':>6} {'end':>5} "
          f"{'CPU s':>6} {'wait s':>6} {'max/host':>8} complete")
    for row in result["rows"]:
        print(f"{row['label']:<38} {f(row['floor_wall_s'], '.2f'):>8} "
              f"{f(row['mix_wall_s'], '.2f'):>7} {f(row['ratio_wall'], '.2f'):>6} "
              f"{f(row['floor_span_s'], '.2f'):>9} {f(row['mix_span_s'], '.2f'):>8} "
              f"{f(row['ratio_span'], '.2f'):>6} {f(row['mix_startup_s'], '.2f'):>6} "
              f"{f(row['mix_tail_s'], '.2f'):>5} {f(row['mix_cpu_s'], '.1f'):>6} "
              f"{f(row['mix_cpu_wait_s'], '.1f'):>6} {row['max_per_host']:>8} "
              f"{row['complete']}")
    print("floor: the big host alone; mix: with the small hosts; s: wall (start to exit); "
          "@srv: at the server (first request to last answer); start, end: the mix's "
          "start to first request, last answer to exit; CPU s, wait s: the mix's CPU "
          "time and time waiting for a CPU (run queue); max/host: the most requests one "
          "host had outstanding at once (from the arrivals at the server); medians of "
          f"{max((r['repeats'] for r in result['rows']), default=0)} run(s)")
    for config, why in result["skipped"].items():
        print(f"{SKEWED_LABELS[config]}: skipped ({why})")
    for run in result["runs"]:
        trace = run.get("trace")
        if not trace:
            continue
        print(f"\n{SKEWED_LABELS[run['config']]}, {run['kind']}: requests started per 0.5 s, "
              f"big host / others: " + " ".join(
                  f"{b}/{o}" for b, o in zip(trace["big_starts"], trace["other_starts"],
                                             strict=True)))
        print(f"  big host's turnaround (answer to the next request {site['per_domain']} "
              f"later): median {trace['turnaround_p50_s']} s, 90th percentile "
              f"{trace['turnaround_p90_s']} s; under its limit in {trace['under_limit']} of "
              f"{trace['samples']} samples (10 ms), the crawl's credit free in "
              f"{trace['under_limit_credit_free']} of those")
        for phase, figures in trace.get("frontier", {}).items():
            if not figures["samples"]:
                continue
            print(f"  {phase.replace('_', ' ')}: the shared frontier counted the big host "
                  f"{figures['frontier_mean']} in flight on average, the server saw "
                  f"{figures['server_mean']} outstanding ({figures['samples']} samples)")


def main(argv=None) -> int:
    """``bench_broad.py --skewed``: parse ``argv`` (``sys.argv[1:]`` by default), run,
    print the table (or the JSON with ``--json``). Returns the exit status: 0, or 1 when a
    crawl did not fetch every page exactly once."""
    parser = argparse.ArgumentParser(
        prog="bench_broad.py --skewed",
        description="Issue 18's skewed mix: one big host beside small ones on a slow "
                    "site, each configuration also with the big host alone (the "
                    "politeness floor).")
    parser.add_argument("--skewed", action="store_true", help="(this mode)")
    parser.add_argument("--big-pages", type=int, default=600)
    parser.add_argument("--small-hosts", type=int, default=300)
    parser.add_argument("--small-pages", type=int, default=3)
    parser.add_argument("--links", type=int, default=20, help="links per page to the next ones")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per answer")
    parser.add_argument("--concurrency", type=int, default=32,
                        help="CONCURRENT_REQUESTS (per process)")
    parser.add_argument("--per-domain", type=int, default=8,
                        help="CONCURRENT_REQUESTS_PER_DOMAIN")
    parser.add_argument("--configs", default=",".join(SKEWED_CONFIGS),
                        help="which of " + ",".join(SKEWED_CONFIGS))
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each configuration (medians reported)")
    parser.add_argument("--scrapy-python", help="a python with Scrapy installed")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per crawl")
    parser.add_argument("--trace", action="store_true",
                        help="also where each crawl lost time: the big host's starts per "
                             "0.5 s, its turnaround, its samples under the limit")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", help="keep the runs' logs and feeds in this directory")
    args = parser.parse_args(argv)
    for name in ("big_pages", "small_pages", "per_domain", "repeat", "links", "concurrency"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, "
                         f"got {getattr(args, name)}")
    if args.small_hosts < 0 or args.latency < 0:
        parser.error("--small-hosts and --latency must not be negative")
    result = run_skewed(args)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_skewed(result)
    return 0 if all(r["complete"] for r in result["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
