"""Benchmark: peak memory of a crawl whose frontier holds N queued URLs (default 1,000,000).

One page is served on 127.0.0.1; the spider's callback for it yields N requests to
distinct URLs (a realistic link-list or sitemap page), then raises ``CloseSpider``, so the
crawl ends with all N queued. Each variant runs as a subprocess
(``python -m crawlfw.cmdline runspider``) and is measured with ``os.wait4``:

* ``memory``: no ``JOBDIR``, the in-memory frontier (every request object in RAM);
* ``jobdir``: ``JOBDIR`` set, the SQLite frontier (requests and fingerprints on disk; the
  callback's output streamed in batches and paced to the frontier's speed).

The URLs end in ``?ref=list`` (``--no-query``: they do not). ``--many-hosts``: the N
URLs are spread over N/20 hosts (``h<k>.localhost``, which
resolve to the loopback address), in turn, as a broad crawl's links are; without it they
are all of one host. ``-s NAME=VALUE`` passes a setting to both variants (e.g.
``FRONTIER_MEMORY_LIMIT=0``: no budget). ``--codec``: only the CPU of encoding and
decoding one compact record (:mod:`crawlfw.core.frontier.compact`), in µs.

Printed per variant: peak RSS (MiB, the process's ``ru_maxrss``), CPU seconds, wall
seconds, and microseconds of CPU per queued request.

Usage::

    python benchmarks/bench_frontier_memory.py [--urls N] [--only memory|jobdir]
        [--many-hosts] [--no-query] [-s NAME=VALUE ...]
    python benchmarks/bench_frontier_memory.py --codec
"""

import argparse
import http.server
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SPIDER = textwrap.dedent('''
    import crawlfw
    from crawlfw.exceptions import CloseSpider


    class ManyLinksSpider(crawlfw.Spider):
        name = "many_links"
        base = ""
        urls = "1000000"
        hosts = "0"
        query = "?ref=list"

        def start_requests(self):
            yield crawlfw.Request(self.base + "/", callback=self.parse)

        def parse(self, response):
            hosts = int(self.hosts)
            if hosts:  # http://h<k>.localhost:<port>: loopback, one host per k
                port = self.base.rsplit(":", 1)[1]
                for i in range(int(self.urls)):
                    yield crawlfw.Request(f"http://h{i % hosts}.localhost:{port}/item/{i}"
                                          f"{self.query}", callback=self.parse_item)
            else:
                for i in range(int(self.urls)):
                    yield crawlfw.Request(f"{self.base}/item/{i}{self.query}",
                                          callback=self.parse_item)
            raise CloseSpider("queued")

        def parse_item(self, response):
            yield {"url": response.url}
''')


def serve():
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):  # noqa: N802
            body = b"<html><body>list</body></html>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def run(variant: str, urls: int, base: str, workdir: Path, hosts: int = 0,
        settings: tuple = (), query: bool = True) -> dict:
    spider = workdir / "many_links.py"
    spider.write_text(SPIDER)
    cmd = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(spider),
           "-a", f"base={base}", "-a", f"urls={urls}", "-a", f"hosts={hosts}",
           "-s", "LOG_LEVEL=WARNING"]
    if not query:
        cmd += ["-a", "query="]
    for setting in settings:
        cmd += ["-s", setting]
    if variant == "jobdir":
        cmd += ["-s", f"JOBDIR={workdir / 'job'}"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=subprocess.DEVNULL,
                            stderr=open(workdir / f"{variant}.log", "wb"))
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    cpu = usage.ru_utime + usage.ru_stime
    return {"variant": variant, "status": os.waitstatus_to_exitcode(status),
            "peak_rss_mib": usage.ru_maxrss / 1024, "cpu_s": cpu, "wall_s": wall,
            "cpu_us_per_request": cpu / urls * 1e6}


def codec(n: int = 200_000) -> int:
    """Print the CPU of encoding and decoding one compact record (µs, best of 5)."""
    import timeit

    sys.path.insert(0, str(REPO))
    import crawlfw
    from crawlfw.core.frontier.compact import RequestCodec

    class Spider(crawlfw.Spider):
        name = "codec"

        def parse_item(self, response):
            pass

    spider = Spider()
    codec = RequestCodec(spider)
    url = "http://h12345.localhost:8080/item/123456?ref=list"
    for label, meta, headers in [
            ("plain", None, None), ("depth+Referer", {"depth": 2}, {"Referer": url}),
            ("meta other", {"depth": 2, "download_slot": "s"}, None)]:
        request = crawlfw.Request(url, callback=spider.parse_item, meta=meta,
                                  headers=headers)
        record = codec.encode(request)
        enc = min(timeit.repeat(lambda r=request: codec.encode(r), number=n, repeat=5)) / n
        # (as many decodes as encodes above: the Referer table entry stays held)
        dec = min(timeit.repeat(lambda r=record: codec.decode(r, 0), number=n, repeat=5)) / n
        new = min(timeit.repeat(
            lambda m=meta: crawlfw.Request(url, callback=spider.parse_item, meta=m),
            number=n, repeat=5)) / n
        print(f"{label:12} record {len(record):3} B (URL {len(url)} B)  encode "
              f"{enc * 1e6:.2f} us  decode {dec * 1e6:.2f} us  (Request() {new * 1e6:.2f} us)")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1_000_000, help="URLs queued (1000000)")
    parser.add_argument("--only", choices=["memory", "jobdir"], default=None)
    parser.add_argument("--many-hosts", action="store_true",
                        help="spread the URLs over N/20 hosts")
    parser.add_argument("-s", dest="settings", action="append", default=[],
                        metavar="NAME=VALUE", help="a setting for the crawls")
    parser.add_argument("--no-query", action="store_true",
                        help="URLs without the query (?ref=list)")
    parser.add_argument("--codec", action="store_true",
                        help="only time encoding and decoding a compact record")
    args = parser.parse_args(argv)
    if args.codec:
        return codec()
    hosts = args.urls // 20 if args.many_hosts else 0
    server, base = serve()
    print(f"{'variant':8} {'status':>6} {'peak RSS MiB':>13} {'CPU s':>8} {'wall s':>8} "
          f"{'CPU us/req':>10}   ({args.urls:,} URLs queued, "
          f"{hosts or 1:,} host{'s' if hosts else ''})")
    failed = False
    for variant in [args.only] if args.only else ["memory", "jobdir"]:
        with tempfile.TemporaryDirectory(prefix="crawlfw-frontier-mem-") as tmp:
            r = run(variant, args.urls, base, Path(tmp), hosts, tuple(args.settings),
                    not args.no_query)
        failed |= r["status"] != 0
        print(f"{r['variant']:8} {r['status']:>6} {r['peak_rss_mib']:>13.0f} {r['cpu_s']:>8.1f} "
              f"{r['wall_s']:>8.1f} {r['cpu_us_per_request']:>10.1f}", flush=True)
    server.shutdown()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
