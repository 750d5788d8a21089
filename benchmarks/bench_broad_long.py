"""Benchmark: a long broad crawl whose frontier grows faster than it drains (issue 30).
Does RSS stay flat once the memory budgets are full?

One nginx (``/usr/sbin/nginx`` or on ``PATH``, one worker, a free loopback port) answers
every page of an endless tree of sites: the page ``/p/<digits>`` links to the ten pages
``/p/<digits><i>`` (``i`` = 0..9), each on the host ``h<t><i>.localhost``, ``<t>`` the
last four digits of ``<digits>``: about 111,000 host names, every URL distinct, ten new
URLs discovered per page fetched (nginx builds each page from its path with a regex
location and ``return``: no file, no script). ``*.localhost`` resolves to the loopback
address in crawlfw's resolver and in curl; Scrapy's run gets a ``DNS_RESOLVER`` that
answers ``*.localhost`` with ``127.0.0.1`` without a lookup, as in ``bench_broad.py``.

Each crawler runs as a subprocess from the ten start pages ``h<i>.localhost/p/<i>``,
breadth-first (``DEPTH_PRIORITY=1``, FIFO queues; the settings of Scrapy's "Broad
crawls" guide: ``CONCURRENT_REQUESTS=100``, cookies, retries and redirects off), one
item ``{url}`` per page in a JSON Lines feed, until ``CLOSESPIDER_PAGECOUNT`` pages
(``--pages``, 200,000: 2M URLs discovered). Default settings otherwise, no ``JOBDIR``:
crawlfw's frontier and seen set on their default budgets.

Every ``--sample-s`` seconds (10) the crawler's RSS (``/proc/<pid>/status`` ``VmRSS``)
and its pages so far (the feed's lines) are printed; at the end: pages, URLs
discovered (``scheduler/enqueued`` + ``dupefilter/filtered`` of the crawl's stats),
wall seconds, pages/s, CPU seconds (``os.wait4``), peak RSS (``ru_maxrss``), the RSS
samples after the warm-up (``--warmup-s``, default a fifth of the run) and their range.
``--timeout-s`` bounds a run (SIGINT, then SIGKILL 60 s later): a crawler that does not
finish is reported where it was.

Usage::

    python benchmarks/bench_broad_long.py [--pages 200000] [--only crawlfw|scrapy]
        [--scrapy-python /work/venv-scrapy/bin/python] [--timeout-s 1800] [--json]
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_broad import NginxServer  # noqa: E402  (the nginx of bench_broad.py)

REPO = Path(__file__).resolve().parent.parent

_NGINX_CONF = """\
worker_processes 1;
worker_rlimit_nofile 65536;
daemon off;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{ worker_connections 16384; }}
http {{
    access_log off;
    tcp_nodelay on;
    keepalive_timeout 60s;
    default_type text/html;
    client_body_temp_path {root}/tmp;
    proxy_temp_path {root}/tmp;
    fastcgi_temp_path {root}/tmp;
    uwsgi_temp_path {root}/tmp;
    scgi_temp_path {root}/tmp;
    server {{
        listen 127.0.0.1:{port} reuseport backlog=4096;
        server_name _;
        location ~ "^/p/(?<pre>[0-9]*?)(?<tail>[0-9]{{0,4}})$" {{
            return 200 '<html><head><title>$uri</title></head><body>{links}</body></html>';
        }}
    }}
}}
"""

_LINK = '<a href="http://h${{tail}}{i}.localhost:{port}/p/${{pre}}${{tail}}{i}">{i}</a> '

SPIDER = """\
{imports}


class BroadLongSpider({base}.Spider):
    name = "broad_long"

    {start}
        for i in range(10):
            yield {base}.Request(f"http://h{{i}}.localhost:{{self.port}}/p/{{i}}")

    def parse(self, response):
        yield {{"url": response.url}}
        for href in response.css("a::attr(href)").getall():
            yield {base}.Request(href)
"""

CRAWLFW_SPIDER = SPIDER.format(imports="import crawlfw", base="crawlfw",
                               start="def start_requests(self):")
SCRAPY_SPIDER = SPIDER.format(imports='''import scrapy
from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer


class LocalhostResolver(CachingThreadedResolver):
    """*.localhost -> 127.0.0.1 without a lookup (as curl does)."""

    def getHostByName(self, name, timeout=()):
        if name == "localhost" or name.endswith(".localhost"):
            return defer.succeed("127.0.0.1")
        return super().getHostByName(name, timeout)''', base="scrapy",
                              start="async def start(self):")

BROAD = {"COOKIES_ENABLED": "False", "RETRY_ENABLED": "False", "REDIRECT_ENABLED": "False",
         "DOWNLOAD_TIMEOUT": "15", "DEPTH_PRIORITY": "1", "LOG_LEVEL": "INFO",
         "CONCURRENT_REQUESTS": "100"}
CRAWLFW_ONLY = {"SCHEDULER_MEMORY_QUEUE": "crawlfw.squeues.FifoMemoryQueue"}
SCRAPY_ONLY = {
    "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.DownloaderAwarePriorityQueue",
    "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
    "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    "REACTOR_THREADPOOL_MAXSIZE": "20", "TELNETCONSOLE_ENABLED": "False",
    "DNS_RESOLVER": "spider.LocalhostResolver",
}


class Nginx(NginxServer):
    """nginx serving the endless tree of pages (see the module doc)."""

    def __init__(self):
        super().__init__("bench_broad_long.py", "crawlfw-bench-broad-long-")
        links = "".join(_LINK.format(i=i, port=self.port) for i in range(10))
        self._launch(_NGINX_CONF, links=links)


def _rss_mib(pid) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            m = re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M)
    except OSError:
        return None
    return int(m.group(1)) / 1024 if m else None


def _lines(path: Path) -> int:
    try:
        with open(path, "rb") as f:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    except OSError:
        return 0


def run_one(label, argv, cwd, env, feed, sample_s, timeout_s):
    """Run one crawler, printing RSS samples; returns its figures."""
    log = Path(cwd) / f"{label}.log"
    err = open(log, "wb")
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
    samples = []  # (seconds, pages, rss MiB)
    done = threading.Event()
    timed_out = []

    def sample():
        while not done.wait(sample_s):
            t = time.monotonic() - start
            rss = _rss_mib(proc.pid)
            if rss is None:
                return
            pages = _lines(feed)
            samples.append((round(t), pages, round(rss, 1)))
            print(f"  {label:8} {t:7.0f} s {pages:9,} pages  RSS {rss:8.1f} MiB", flush=True)
            if t > timeout_s and not timed_out:
                timed_out.append(t)
                proc.send_signal(signal.SIGINT)
            elif timed_out and t > timed_out[0] + 60:
                proc.kill()

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    done.set()
    sampler.join()
    err.close()
    text = log.read_text(errors="replace")

    def stat(name):
        found = re.findall(rf"'{re.escape(name)}': (\d+)", text)
        return int(found[-1]) if found else 0

    pages = _lines(feed)
    cpu = usage.ru_utime + usage.ru_stime
    return {"crawler": label, "exit": os.waitstatus_to_exitcode(status),
            "finished": not timed_out, "pages": pages,
            "discovered": stat("scheduler/enqueued") + stat("dupefilter/filtered"),
            "wall_s": round(wall, 1), "pages_per_s": round(pages / wall, 1),
            "cpu_s": round(cpu, 1), "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
            "samples": samples}


def report(r, warmup_s):
    after = [rss for t, _, rss in r["samples"] if t >= warmup_s]
    flat = (f"after {warmup_s:.0f} s: {min(after):.0f}-{max(after):.0f} MiB"
            if after else "no sample after the warm-up")
    print(f"{r['crawler']}: exit {r['exit']}{'' if r['finished'] else ' (stopped at the time bound)'}, "
          f"{r['pages']:,} pages, {r['discovered']:,} URLs discovered, {r['wall_s']} s, "
          f"{r['pages_per_s']} pages/s, CPU {r['cpu_s']} s, peak RSS {r['peak_rss_mib']} MiB; "
          f"RSS {flat}")
    print("  RSS samples (s, pages, MiB): " + ", ".join(
        f"({t}, {p}, {rss:.0f})" for t, p, rss in r["samples"]), flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200_000)
    parser.add_argument("--only", choices=["crawlfw", "scrapy"])
    parser.add_argument("--scrapy-python", default="/work/venv-scrapy/bin/python")
    parser.add_argument("--sample-s", type=float, default=10.0)
    parser.add_argument("--warmup-s", type=float, help="default: a fifth of each run")
    parser.add_argument("--timeout-s", type=float, default=1800.0)
    parser.add_argument("--keep", help="keep the runs' logs and feeds in this directory")
    parser.add_argument("-s", dest="settings", action="append", default=[],
                        metavar="NAME=VALUE", help="one more setting for both crawlers")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    server = Nginx()
    results = []
    try:
        with tempfile.TemporaryDirectory(prefix="crawlfw-bench-broad-long-run-") as tmp:
            tmp = Path(args.keep or tmp)
            tmp.mkdir(parents=True, exist_ok=True)
            for label in [args.only] if args.only else ["crawlfw", "scrapy"]:
                run_dir = tmp / label
                run_dir.mkdir(exist_ok=True)
                feed = run_dir / "items.jl"
                feed.unlink(missing_ok=True)
                settings = {**BROAD, "CLOSESPIDER_PAGECOUNT": str(args.pages),
                            **(CRAWLFW_ONLY if label == "crawlfw" else SCRAPY_ONLY)}
                settings.update(s.split("=", 1) for s in args.settings)
                if label == "crawlfw":
                    (run_dir / "spider.py").write_text(CRAWLFW_SPIDER)
                    python, module = sys.executable, "crawlfw.cmdline"
                    env = {**os.environ, "PYTHONPATH": str(REPO)}
                else:
                    (run_dir / "spider.py").write_text(SCRAPY_SPIDER)
                    python, module = args.scrapy_python, "scrapy"
                    env = {**os.environ, "PYTHONPATH": str(run_dir)}
                argv_ = [python, "-m", module, "runspider", "spider.py", "-a",
                         f"port={server.port}", "-o", str(feed)]
                for k, v in settings.items():
                    argv_ += ["-s", f"{k}={v}"]
                print(f"{label}: {args.pages:,} pages, nginx on port {server.port}", flush=True)
                r = run_one(label, argv_, run_dir, env, feed, args.sample_s, args.timeout_s)
                results.append(r)
                report(r, args.warmup_s if args.warmup_s is not None else r["wall_s"] / 5)
    finally:
        server.stop()
    if args.json:
        print(json.dumps(results))
    return 0 if all(r["exit"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
