"""Benchmark: a broad crawl, N hosts x P pages, crawlfw (and Scrapy side by side).

``--skewed`` runs issue 18's skewed mix instead (one big host of 600 slow pages beside
300 small hosts; crawlfw in memory, with ``JOBDIR`` and on two Redis workers, Scrapy with
and without ``DownloaderAwarePriorityQueue``; each against the big host alone, the
politeness floor): see ``benchmarks/_skewed.py`` and ``--skewed --help``.

One nginx (``/usr/sbin/nginx`` or on ``PATH``, run as a non-daemon on a free loopback
port with a generated config, one worker) answers for every host name with the same small
site: ``/`` links to ``/p/1``, ``/p/<n>`` to ``/p/<n+1>``, up to ``P`` pages. Host names
are ``site<i>.localhost``: curl resolves ``*.localhost`` to the loopback address itself;
Scrapy (Twisted, getaddrinfo) cannot, so its run gets a ``DNS_RESOLVER`` that answers
``*.localhost`` with ``127.0.0.1`` without a lookup (neither side pays for DNS here).

Each crawler runs as a subprocess that starts at every host's ``/`` and follows the
links, one item ``{url}`` per page in a JSON Lines feed, with the settings of Scrapy's
"Broad crawls" guide: ``CONCURRENT_REQUESTS=100`` (``--concurrency``), cookies, retries
and redirects off, ``DOWNLOAD_TIMEOUT=15``, ``DEPTH_PRIORITY=1`` with FIFO queues
(breadth-first), ``LOG_LEVEL=INFO``; Scrapy also ``DownloaderAwarePriorityQueue``,
``REACTOR_THREADPOOL_MAXSIZE=20``, telnet off.

``--etc-hosts`` (root only): names through the system resolver instead. Hosts are
``site<i>.<run>.bench.test`` (``<run>`` unique to the run), each with one
``127.0.0.1 <name>  # crawlfw-bench-broad <run>`` line appended to ``/etc/hosts``; a
copy of the file as it was is kept in ``/etc/hosts.bench_broad.bak`` first, and at the
end (in a ``finally``) exactly those lines are taken out again, the rest of the file
untouched (written in place: ``/etc/hosts`` is often a bind mount). libcurl then
resolves every name with ``getaddrinfo`` on its threaded resolver; peak threads show
what that costs. libcurl (8.x) asks for the IPv6 address apart, which ``/etc/hosts``
does not give, so glibc would ask the machine's name server for it: the crawler runs in
a mount namespace of its own (``unshare -m``) whose ``/etc/resolv.conf`` names a
loopback address where no server listens, so those queries fail at once and none
leaves the machine (``/etc/hosts`` is the same file there).

``--dns a-only`` / ``--dns both`` (root only, issue 31): names through a name server.
Hosts are ``site<i>.bench.test``; a DNS server of the tests (``tests/support/
dnsserver.py``, dnslib, on UDP port 53 of a ``127.53.x.y`` address) answers each name's
``A`` with ``127.0.0.1`` at once and, with ``a-only``, never answers ``AAAA`` (an
IPv4-only network's name server that drops them), with ``both`` answers it with ``::1``
(refused by nginx at once, so curl goes on to 127.0.0.1). Each crawler runs in a mount
namespace whose ``/etc/resolv.conf`` names that server and whose ``/etc/hosts`` has only
``localhost``: crawlfw's resolver (c-ares) and Scrapy's (``getaddrinfo`` on its thread
pool) ask it, and no query leaves the loopback. Its ``resolv.conf`` says ``options
timeout:5 attempts:2`` (two tries, glibc's default). The server's query counts are
printed.

Measured per crawler: ``pages``/``complete`` (every page exactly once), ``wall s`` and
``pages/s`` (start-up included), ``CPU s/1k`` (user + system CPU seconds of the crawler
process per 1,000 pages, from ``os.wait4``), and, sampled from ``/proc/<pid>`` every
20 ms, ``threads`` and ``fds`` (peak), and ``RSS`` (peak, ``ru_maxrss``, MiB).

Usage::

    python benchmarks/bench_broad.py [--hosts 2000] [--pages 2] [--concurrency 100]
        [--actors 1,2] [--scrapy-python /path/to/venv/bin/python] [--nofile N] [--json]
        [--etc-hosts | --dns a-only|both] [--set NAME=VALUE ...]
"""

import argparse
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

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
    types {{ text/html html; }}
    default_type text/html;
    client_body_temp_path {root}/tmp;
    proxy_temp_path {root}/tmp;
    fastcgi_temp_path {root}/tmp;
    uwsgi_temp_path {root}/tmp;
    scgi_temp_path {root}/tmp;
    server {{
        listen 127.0.0.1:{port} reuseport backlog=4096;
        server_name _;
        root {root}/site;
        location / {{ try_files $uri $uri.html $uri/index.html =404; }}
    }}
}}
"""

CRAWLFW_SPIDER = """\
import crawlfw


class BroadSpider(crawlfw.Spider):
    name = "broad"

    def start_requests(self):
        domain = getattr(self, "domain", "localhost")
        for i in range(int(self.hosts)):
            yield crawlfw.Request(f"http://site{i}.{domain}:{self.port}/")

    def parse(self, response):
        yield {"url": response.url}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)
"""

SCRAPY_SPIDER = """\
import scrapy
from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer


class LocalhostResolver(CachingThreadedResolver):
    \"\"\"*.localhost -> 127.0.0.1 without a lookup (as curl does).\"\"\"

    def getHostByName(self, name, timeout=()):
        if name == "localhost" or name.endswith(".localhost"):
            return defer.succeed("127.0.0.1")
        return super().getHostByName(name, timeout)


class BroadSpider(scrapy.Spider):
    name = "broad"

    async def start(self):
        domain = getattr(self, "domain", "localhost")
        for i in range(int(self.hosts)):
            yield scrapy.Request(f"http://site{i}.{domain}:{self.port}/")

    def parse(self, response):
        yield {"url": response.url}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)
"""

BROAD = {"COOKIES_ENABLED": "False", "RETRY_ENABLED": "False", "REDIRECT_ENABLED": "False",
         "DOWNLOAD_TIMEOUT": "15", "DEPTH_PRIORITY": "1", "LOG_LEVEL": "INFO"}
SCRAPY_ONLY = {
    "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.DownloaderAwarePriorityQueue",
    "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
    "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    "REACTOR_THREADPOOL_MAXSIZE": "20", "TELNETCONSOLE_ENABLED": "False",
    "REMOTE_CONTROL_ENABLED": "False",
    "DNS_RESOLVER": "spider.LocalhostResolver",
}


HOSTS_FILE = "/etc/hosts"
HOSTS_TAG = "# crawlfw-bench-broad"


def hosts_lines(names, run: str) -> list[str]:
    """The ``/etc/hosts`` lines (no newline) naming ``names`` as 127.0.0.1, each tagged
    with ``run`` so they are told apart from every other line."""
    return [f"127.0.0.1 {name}  {HOSTS_TAG} {run}" for name in names]


def add_hosts_lines(path, lines, backup=None) -> None:
    """Append ``lines`` to the hosts file ``path``, after copying it to ``backup`` (a
    path, or None for no copy). Nothing else in the file changes.

    Raises:
        ValueError: a line of ``lines`` is already in the file (it could not be told
            apart from the existing one when removed).
        OSError: the file cannot be read or written.
    """
    path = Path(path)
    text = path.read_text()
    present = set(text.splitlines())
    clash = next((line for line in lines if line in present), None)
    if clash is not None:
        raise ValueError(f"{path} already holds the line {clash!r}")
    if backup is not None:
        shutil.copyfile(path, backup)
    with open(path, "a") as f:
        if text and not text.endswith("\n"):
            f.write("\n")
        f.write("".join(line + "\n" for line in lines))


def remove_hosts_lines(path, lines) -> int:
    """Take exactly ``lines`` (those :func:`add_hosts_lines` added) out of the hosts file
    ``path``, each once, keeping every other line byte for byte and in order; the file
    is rewritten in place (``/etc/hosts`` may be a bind mount, which a rename cannot
    replace). Returns the number of lines removed.

    Raises:
        OSError: the file cannot be read or written.
    """
    path = Path(path)
    wanted = set(lines)
    with open(path, "r+") as f:
        text = f.read()
        kept, removed = [], 0
        for line in text.splitlines(keepends=True):
            if line.rstrip("\n") in wanted:
                wanted.discard(line.rstrip("\n"))
                removed += 1
            else:
                kept.append(line)
        if removed:
            f.seek(0)
            f.write("".join(kept))
            f.truncate()
    return removed


NO_DNS = "127.53.0.53"  # a loopback address where no name server listens


def in_resolver_namespace(argv, resolv_conf) -> list:
    """``argv`` run in a new mount namespace whose ``/etc/resolv.conf`` is
    ``resolv_conf`` (root only); the process keeps its pid (``unshare`` and ``sh``
    exec it), so it is sampled and reaped as itself."""
    return ["unshare", "-m", "sh", "-c", 'mount --bind "$0" /etc/resolv.conf && exec "$@"',
            str(resolv_conf), *map(str, argv)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class NginxServer:
    """An nginx of its own on a free loopback port, in a temporary directory (also
    benchmarks/bench_broad_long.py's): a subclass writes its site under :attr:`root` and
    calls :meth:`_launch` with its configuration, a format string of ``root`` and
    ``port``.

    Raises:
        SystemExit: no nginx, or it exited or did not listen within 30 s.
    """

    def __init__(self, script: str, prefix: str):
        self._nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.path.exists(self._nginx):
            raise SystemExit(f"{script} needs nginx (/usr/sbin/nginx or on PATH)")
        self._tmp = tempfile.TemporaryDirectory(prefix=prefix)
        self.root = Path(self._tmp.name)
        self.root.chmod(0o755)
        (self.root / "tmp").mkdir()
        self.port = _free_port()

    def _launch(self, conf: str, **fields) -> None:
        root = self.root
        (root / "nginx.conf").write_text(conf.format(root=root, port=self.port, **fields))
        self.proc = subprocess.Popen([self._nginx, "-c", str(root / "nginx.conf"),
                                      "-p", str(root), "-e", str(root / "error.log")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     start_new_session=True)
        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                raise SystemExit("nginx exited: " + self.proc.stderr.read().decode())
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise SystemExit("nginx did not listen within 30 s") from None
                time.sleep(0.05)

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc.stderr.close()
        self._tmp.cleanup()


class Nginx(NginxServer):
    """nginx serving ``pages`` pages for any host name, on a free loopback port."""

    def __init__(self, pages: int):
        super().__init__("bench_broad.py", "crawlfw-bench-broad-")
        site = self.root / "site"
        (site / "p").mkdir(parents=True)
        for n in range(pages):
            link = f'<a href="/p/{n + 1}">next</a>' if n + 1 < pages else ""
            body = f"<html><head><title>page {n}</title></head><body>{link}</body></html>"
            (site / ("index.html" if n == 0 else f"p/{n}.html")).write_text(body)
        for path in (self.root, site, site / "p", *site.rglob("*")):
            path.chmod(0o755 if path.is_dir() else 0o644)
        self._launch(_NGINX_CONF)


class Sampler(threading.Thread):
    """Peak threads and open fds of process ``pid``, sampled every 20 ms."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.threads = 0
        self.fds = 0
        self.done = threading.Event()
        self.start()

    def run(self):
        status, fd_dir = f"/proc/{self.pid}/status", f"/proc/{self.pid}/fd"
        while not self.done.wait(0.02):
            try:
                with open(status) as f:
                    text = f.read()
                fds = len(os.listdir(fd_dir))
            except OSError:
                return
            m = re.search(r"^Threads:\s+(\d+)", text, re.M)
            if m:
                self.threads = max(self.threads, int(m.group(1)))
            self.fds = max(self.fds, fds)


def run_one(label, argv, cwd, env, feed, expected, nofile=None):
    """Run one crawler; returns its figures."""
    def limit():
        if nofile:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    err = open(Path(cwd) / f"{label}.log", "wb")
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err,
                            preexec_fn=limit)
    sampler = Sampler(proc.pid)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    sampler.done.set()
    sampler.join()
    err.close()
    urls = []
    if feed.exists():
        urls = [json.loads(line)["url"] for line in feed.read_text().splitlines() if line]
    cpu = usage.ru_utime + usage.ru_stime
    pages = len(urls)
    return {
        "crawler": label, "exit": os.waitstatus_to_exitcode(status), "pages": pages,
        "complete": len(set(urls)) == pages == len(expected) and set(urls) == expected,
        "wall_s": round(wall, 2), "pages_per_s": round(pages / wall, 1) if wall else 0,
        "cpu_s": round(cpu, 2), "cpu_s_per_1k": round(cpu * 1000 / pages, 3) if pages else None,
        "threads": sampler.threads, "fds": sampler.fds,
        "rss_mib": round(usage.ru_maxrss / 1024, 1),
    }


def main(argv=None):
    if "--skewed" in (sys.argv[1:] if argv is None else argv):  # issue 18's skewed mix
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from _skewed import main as skewed_main

        return skewed_main(argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="--skewed: issue 18's skewed mix "
                                            "(--skewed --help lists its options)")
    parser.add_argument("--hosts", type=int, default=2000)
    parser.add_argument("--pages", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--actors", default="1", help="DOWNLOADER_ACTORS values, e.g. 1,2,4")
    parser.add_argument("--scrapy-python", help="a python with Scrapy installed")
    parser.add_argument("--nofile", type=int, help="RLIMIT_NOFILE of the crawler processes")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", help="keep the runs' logs and feeds in this directory")
    parser.add_argument("--etc-hosts", action="store_true",
                        help="names through the system resolver: one /etc/hosts line per "
                             "host, removed at the end (root only)")
    parser.add_argument("--dns", choices=("a-only", "both"),
                        help="names through a local name server answering A at once and "
                             "AAAA never (a-only) or at once (both) (root only)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="one more crawlfw setting (e.g. DNSCACHE_ENABLED=False)")
    args = parser.parse_args(argv)
    domain, added = "localhost", []
    if args.etc_hosts:
        if os.geteuid() != 0:
            raise SystemExit("--etc-hosts needs root: it adds lines to /etc/hosts")
        run = f"r{os.getpid()}x{int(time.time())}"
        domain = f"{run}.bench.test"
        added = hosts_lines((f"site{i}.{domain}" for i in range(args.hosts)), run)
    dns = None
    if args.dns:
        if os.geteuid() != 0:
            raise SystemExit("--dns needs root: the crawlers run in a mount namespace")
        if args.etc_hosts:
            raise SystemExit("--dns and --etc-hosts exclude each other")
        sys.path.insert(0, str(REPO))
        from tests.support.dnsserver import LocalDNS

        domain = "bench.test"
        names = [f"site{i}.{domain}" for i in range(args.hosts)]
        dns = LocalDNS({name: ("127.0.0.1", 0) for name in names},
                       aaaa="drop" if args.dns == "a-only" else dict.fromkeys(names, "::1"))
    server = Nginx(args.pages)
    expected = {f"http://site{i}.{domain}:{server.port}/" + ("" if n == 0 else f"p/{n}")
                for i in range(args.hosts) for n in range(args.pages)}
    rows = []
    try:
        if added:
            # SIGTERM too goes through the finally below that takes the lines out
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
            try:
                add_hosts_lines(HOSTS_FILE, added, backup=HOSTS_FILE + ".bench_broad.bak")
            except ValueError:
                added = []  # refused before writing anything: nothing to take out
                raise
        with tempfile.TemporaryDirectory(prefix="crawlfw-bench-broad-run-") as tmp:
            tmp = Path(args.keep or tmp)
            tmp.mkdir(parents=True, exist_ok=True)
            common = {**BROAD, "CONCURRENT_REQUESTS": str(args.concurrency)}
            wrap = list
            if dns is not None:
                from tests.support.dnsserver import resolver_argv

                # two tries, glibc's default: c-ares gives up on a query after 5 times
                # the server's mean answer time (0.25 s at least), and this server, a
                # Python thread of this process, may lag that much behind a burst on
                # a busy machine
                dns_conf = dns.resolv_conf(tmp, timeout_s=5, attempts=2)

                def wrap(argv_):
                    return resolver_argv(argv_, dns_conf)
            if added:  # lookups past /etc/hosts stay on the loopback (see the docstring)
                resolv_conf = tmp / "resolv.conf"
                resolv_conf.write_text(f"nameserver {NO_DNS}\noptions timeout:1 attempts:1\n")

                def wrap(argv_):
                    return in_resolver_namespace(argv_, resolv_conf)
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
            for actors in args.actors.split(","):
                run_dir = tmp / f"crawlfw-{actors}"
                run_dir.mkdir()
                (run_dir / "spider.py").write_text(CRAWLFW_SPIDER)
                feed = run_dir / "items.jl"
                settings = {**common, "DOWNLOADER_ACTORS": actors, "CONTROL_ENDPOINT": "False",
                            **dict(x.split("=", 1) for x in args.set)}
                argv_ = [sys.executable, "-m", "crawlfw.cmdline", "runspider", "spider.py",
                         "-a", f"hosts={args.hosts}", "-a", f"port={server.port}",
                         "-a", f"domain={domain}", "-o", str(feed),
                         *(x for k, v in settings.items() for x in ("-s", f"{k}={v}"))]
                rows.append(run_one(f"crawlfw (DOWNLOADER_ACTORS={actors})", wrap(argv_),
                                    run_dir, env, feed, expected, args.nofile))
            if args.scrapy_python:
                run_dir = tmp / "scrapy"
                run_dir.mkdir()
                (run_dir / "spider.py").write_text(SCRAPY_SPIDER)
                feed = run_dir / "items.jl"
                settings = {**common, **SCRAPY_ONLY}
                argv_ = [args.scrapy_python, "-m", "scrapy", "runspider", "spider.py",
                         "-a", f"hosts={args.hosts}", "-a", f"port={server.port}",
                         "-a", f"domain={domain}", "-o", str(feed),
                         *(x for k, v in settings.items() for x in ("-s", f"{k}={v}"))]
                scrapy_env = {**os.environ, "PYTHONPATH": str(run_dir)}
                rows.append(run_one("scrapy", wrap(argv_), run_dir, scrapy_env, feed, expected,
                                    args.nofile))
    finally:
        server.stop()
        if dns is not None:
            dns.close()
            print(f"name server: {sum(dns.queries.values())} A and "
                  f"{sum(dns.aaaa_queries.values())} AAAA queries for {args.hosts} names",
                  file=sys.stderr)
        if added:
            removed = remove_hosts_lines(HOSTS_FILE, added)
            print(f"/etc/hosts: {removed} of the {len(added)} lines added removed (a copy of "
                  f"the file as it was: {HOSTS_FILE}.bench_broad.bak)", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{args.hosts} hosts x {args.pages} pages, CONCURRENT_REQUESTS={args.concurrency}"
          + (f", RLIMIT_NOFILE={args.nofile}" if args.nofile else "")
          + (", names in /etc/hosts (system resolver)" if added else "")
          + (f", names from a name server ({args.dns})" if dns is not None else "")
          + "".join(f", {x}" for x in args.set))
    head = ("crawler", "exit", "pages", "complete", "wall_s", "pages_per_s", "cpu_s_per_1k",
            "threads", "fds", "rss_mib")
    print(textwrap.dedent("  ".join(f"{h:>14}" for h in head)))
    for row in rows:
        print("  ".join(f"{str(row[h]):>14}" for h in head))


if __name__ == "__main__":
    sys.exit(main())
