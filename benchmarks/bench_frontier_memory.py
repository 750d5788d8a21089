"""Benchmark: peak memory of a crawl whose frontier holds N queued URLs (default 1,000,000).

One page is served on 127.0.0.1; the spider's callback for it yields N requests to
distinct URLs (a realistic link-list or sitemap page), then raises ``CloseSpider``, so the
crawl ends with all N queued. Each variant runs as a subprocess
(``python -m crawlfw.cmdline runspider``) and is measured with ``os.wait4``:

* ``memory``: no ``JOBDIR``, the in-memory frontier (every request object in RAM);
* ``jobdir``: ``JOBDIR`` set, the SQLite frontier (requests and fingerprints on disk; the
  callback's output streamed in batches and paced to the frontier's speed).

Printed per variant: peak RSS (MiB, the process's ``ru_maxrss``), CPU seconds, wall
seconds, and microseconds of CPU per queued request.

Usage::

    python benchmarks/bench_frontier_memory.py [--urls N] [--only memory|jobdir]
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

        def start_requests(self):
            yield crawlfw.Request(self.base + "/", callback=self.parse)

        def parse(self, response):
            for i in range(int(self.urls)):
                yield crawlfw.Request(f"{self.base}/item/{i}?ref=list", callback=self.parse_item)
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


def run(variant: str, urls: int, base: str, workdir: Path) -> dict:
    spider = workdir / "many_links.py"
    spider.write_text(SPIDER)
    cmd = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(spider),
           "-a", f"base={base}", "-a", f"urls={urls}", "-s", "LOG_LEVEL=WARNING"]
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1_000_000, help="URLs queued (1000000)")
    parser.add_argument("--only", choices=["memory", "jobdir"], default=None)
    args = parser.parse_args(argv)
    server, base = serve()
    print(f"{'variant':8} {'status':>6} {'peak RSS MiB':>13} {'CPU s':>8} {'wall s':>8} "
          f"{'CPU us/req':>10}   ({args.urls:,} URLs queued)")
    failed = False
    for variant in [args.only] if args.only else ["memory", "jobdir"]:
        with tempfile.TemporaryDirectory(prefix="crawlfw-frontier-mem-") as tmp:
            r = run(variant, args.urls, base, Path(tmp))
        failed |= r["status"] != 0
        print(f"{r['variant']:8} {r['status']:>6} {r['peak_rss_mib']:>13.0f} {r['cpu_s']:>8.1f} "
              f"{r['wall_s']:>8.1f} {r['cpu_us_per_request']:>10.1f}", flush=True)
    server.shutdown()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
