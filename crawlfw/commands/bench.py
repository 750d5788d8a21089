"""``crawlfw bench``: a quick benchmark. A local HTTP server (started in a subprocess on
127.0.0.1, a free port) serves pages of random links; a spider follows every link until
``CLOSESPIDER_TIMEOUT`` (10 seconds; ``-s CLOSESPIDER_TIMEOUT=2`` to change it). The
LogStats lines (every second) and the final stats dump are the result.

``python -m crawlfw.commands.bench`` runs the server alone (Scrapy's
``scrapy.utils.benchserver``); it prints ``Bench server at http://127.0.0.1:PORT`` once
it listens.
"""

import http.server
import logging
import os
import random
import re
import subprocess
import sys
import threading
from urllib.parse import parse_qs, urlencode, urlsplit

from crawlfw.commands import ScrapyCommand, command, fail, start_failure
from crawlfw.commands._command import delegate
from crawlfw.http import Request
from crawlfw.linkextractors import LinkExtractor
from crawlfw.spiders import Spider

logger = logging.getLogger(__name__)

#: Seconds to wait for the bench server to report its address.
SERVER_START_TIMEOUT_S = 30.0


class _BenchHandler(http.server.BaseHTTPRequestHandler):
    """Any path: ``show`` links (default 10) to ``/follow?...&n=<random 1..total>``."""

    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 - http.server's naming
        args = parse_qs(urlsplit(self.path).query)

        def arg(name, default):
            try:
                return int(args[name][0])
            except (KeyError, ValueError):
                return default

        total, show = arg("total", 100), arg("show", 10)
        parts = [b"<html><head></head><body>"]
        for _ in range(show):
            n = random.randint(1, max(total, 1))
            query = dict(args, n=[str(n)])
            parts.append(f"<a href='/follow?{urlencode(query, doseq=True)}'>follow {n}</a><br>"
                         .encode())
        parts.append(b"</body></html>")
        body = b"".join(parts)
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # noqa: A002
        pass


def serve(port: int = 0) -> None:
    """Run the bench server on 127.0.0.1:``port`` (0: a free port) until killed.

    When standard input is a pipe (the ``bench`` command starts it so), the server also
    stops at end of input, i.e. when the process that started it is gone.
    """
    if not sys.stdin.isatty():
        def exit_with_parent():
            sys.stdin.read()
            os._exit(0)

        threading.Thread(target=exit_with_parent, daemon=True).start()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), _BenchHandler)
    httpd.daemon_threads = True
    host, port = httpd.server_address[:2]
    print(f"Bench server at http://{host}:{port}", flush=True)
    httpd.serve_forever()


class _BenchServer:
    """Start ``serve()`` in a subprocess for the duration of a ``with`` block.

    Attributes:
        url: ``http://127.0.0.1:PORT`` once entered.
    """

    def __enter__(self):
        self.proc = subprocess.Popen([sys.executable, "-u", "-m", "crawlfw.commands.bench"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        match = re.search(r"(http://\S+)", line)
        if not match:
            self.__exit__(None, None, None)
            raise RuntimeError(f"the bench server did not start (said {line!r})")
        self.url = match.group(1)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()
        self.proc.stdin.close()


class _BenchSpider(Spider):
    """A spider that follows all links."""

    name = "follow"
    total = 10000
    show = 20
    baseurl = "http://localhost:8998"
    link_extractor = LinkExtractor()

    def start_requests(self):
        qargs = {"total": self.total, "show": self.show}
        url = f"{self.baseurl}?{urlencode(qargs, doseq=True)}"
        return [Request(url, dont_filter=True)]

    def parse(self, response):
        for link in self.link_extractor.extract_links(response):
            yield Request(link.url, callback=self.parse)


@command(default_settings={"LOG_LEVEL": "INFO", "LOGSTATS_INTERVAL": 1,
                           "CLOSESPIDER_TIMEOUT": 10},
         help="Run quick benchmark test")
def bench(*, settings=None):
    """Crawl the local bench server for ``CLOSESPIDER_TIMEOUT`` seconds and log the stats."""
    run_bench(settings)


def run_bench(settings, process=None) -> None:
    """Start the bench server and crawl it with ``process`` (default: a new
    :class:`~crawlfw.crawler.CrawlerProcess` for ``settings``) until the crawl ends."""
    from crawlfw.crawler import CrawlerProcess

    with _BenchServer() as server:
        if process is None:
            process = CrawlerProcess(settings)
        logger.info("Bench server at %(url)s", {"url": server.url})
        try:
            process.crawl(_BenchSpider, total=100000, baseurl=server.url)
        except Exception as e:
            process.shutdown()
            fail(start_failure(e))
        process.start()


class Command(ScrapyCommand):
    """``crawlfw bench`` (Scrapy 1.2's bench command)."""

    default_settings = {"LOG_LEVEL": "INFO", "LOGSTATS_INTERVAL": 1,
                        "CLOSESPIDER_TIMEOUT": 10}

    def short_desc(self):
        return "Run quick benchmark test"

    def run(self, args, opts):
        delegate(self, run_bench, self.settings, process=self.crawler_process)


if __name__ == "__main__":
    serve()
