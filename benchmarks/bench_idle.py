"""Benchmark: the CPU an idle crawl burns (no busy polling in the actors or the pycurl loop).

A crawl in this process fetches one page from a local HTTP server (a thread on
127.0.0.1), then stays open: a ``spider_idle`` handler raises ``DontCloseSpider`` until
the measurement ends, so the engine re-checks idleness every ``IDLE_RECHECK_S`` (5 s)
and nothing else should run. The user + system CPU seconds of this process
(``getrusage(RUSAGE_SELF)``) over ``--seconds`` seconds of idleness are reported, per
idle second; a loop that polls without blocking would show about 1 CPU s/s.

Usage::

    python benchmarks/bench_idle.py [--seconds S] [--budget CPU_S_PER_S] [--json]

The exit status is 1 when the crawl did not become idle or the figure is over
``--budget`` (0.2 CPU s per idle second by default, so a loaded 2-core machine passes:
an idle crawl measures under 0.01), and 0 otherwise. The test suite runs it once at a
short ``--seconds`` with no budget (tests/benchmarks/test_bench_smoke.py); it asserts no
timing itself.
"""

import argparse
import http.server
import json
import resource
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import crawlfw  # noqa: E402
from crawlfw import signals  # noqa: E402
from crawlfw.crawler import CrawlerRunner  # noqa: E402
from crawlfw.exceptions import DontCloseSpider  # noqa: E402


class _Page(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802
        body = b"<html><title>idle</title></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class IdleSpider(crawlfw.Spider):
    """Fetches ``url``, then stays open until ``release`` is set."""

    name = "idle"
    url = "http://127.0.0.1:1/"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.idle = threading.Event()
        spider.release = threading.Event()
        crawler.signals.connect(spider.on_idle, signals.spider_idle)
        return spider

    def start_requests(self):
        yield crawlfw.Request(self.url)

    def parse(self, response):
        yield {"url": response.url}

    def on_idle(self):
        self.idle.set()
        if not self.release.is_set():
            raise DontCloseSpider


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(seconds: float) -> dict:
    """Crawl until idle, then measure ``seconds`` of idleness.

    Returns:
        ``{"idle_s", "cpu_s", "cpu_s_per_idle_s", "finish_reason"}`` (seconds, CPU
        seconds, their ratio, the crawl's finish reason after release).

    Raises:
        RuntimeError: the crawl did not become idle within 60 s or did not close.
    """
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    runner = CrawlerRunner({"LOG_LEVEL": "WARNING"})
    crawler = runner.create_crawler(IdleSpider)
    try:
        runner.crawl(crawler, url=f"http://127.0.0.1:{server.server_address[1]}/")
        if not crawler.spider.idle.wait(60):
            raise RuntimeError("the crawl did not become idle within 60 s")
        before, started = _cpu_s(), time.monotonic()
        crawler.wait(seconds)  # returns early only if the crawl closed (a failure)
        idle_s, cpu_s = time.monotonic() - started, _cpu_s() - before
        if not crawler.crawling:
            raise RuntimeError("the crawl closed while it should have stayed idle")
        crawler.spider.release.set()
        crawler.engine.crawl(crawlfw.Request(crawler.spider.url + "again"))  # wakes it
        if not crawler.wait(60):
            raise RuntimeError("the crawl did not close after release")
    finally:
        runner.shutdown()
        server.shutdown()
        server.server_close()
    return {"idle_s": round(idle_s, 3), "cpu_s": round(cpu_s, 4),
            "cpu_s_per_idle_s": round(cpu_s / idle_s, 4),
            "finish_reason": crawler.finish_reason}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0,
                        help="seconds of idleness measured (default 5)")
    parser.add_argument("--budget", type=float, default=0.2,
                        help="CPU s per idle second above which the exit status is 1 "
                             "(default 0.2; negative: no budget)")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    result = measure(args.seconds)
    over = args.budget >= 0 and result["cpu_s_per_idle_s"] > args.budget
    result["budget"] = args.budget
    result["ok"] = not over
    if args.json:
        print(json.dumps(result))
    else:
        print(f"idle {result['idle_s']:.2f} s: {result['cpu_s']:.3f} CPU s, "
              f"{result['cpu_s_per_idle_s']:.3f} CPU s per idle second "
              f"(budget {args.budget:g}: {'ok' if not over else 'OVER'})")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
