"""Benchmark: CPU of crawlfw's per-page path in one thread, without actors or network.

    python benchmarks/bench_pagepath.py                 # 400 pages, best of 7 passes
    python benchmarks/bench_pagepath.py --pages 100 --repeat 3 --json

Each page of the crawl benchmark's generated site (``_crawlsite.py``) goes through what a
crawl does to it outside the engine, the scheduler, the downloader and the actor
messages: the downloader middlewares' ``process_request``, a ``HtmlResponse`` with the
headers nginx sends, the downloader middlewares' ``process_response`` (meta refresh,
cookies, stats...), the ``Scraper`` with every default spider middleware and the bench
spider's callback (``spiders/bench_spider.py``: ``css()``, ``urljoin``, ``Request()``),
and the JSON Lines exporter for its item. Every default component is on.

The figure is process CPU time (``time.process_time``) per page, the best of
``--repeat`` passes over the pages after one warm-up pass: one thread, no I/O, so it moves
much less with the machine's load than a whole crawl does; run the script once per tree
(``PYTHONPATH=<tree>``), in turn, to compare two trees. Issue 20's steps were measured
with it (benchmarks/README.md, "#20 progress").
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _crawlsite import SiteSpec  # noqa: E402

# what nginx sends with a page of the site (besides Content-Length)
_HEADERS = [
    (b"Server", b"nginx/1.22.1"),
    (b"Date", b"Wed, 25 Nov 2026 19:00:00 GMT"),
    (b"Content-Type", b"text/html"),
    (b"Last-Modified", b"Wed, 25 Nov 2026 18:00:00 GMT"),
    (b"Connection", b"keep-alive"),
    (b"ETag", b'"6565a1b0-2f3a"'),
    (b"Accept-Ranges", b"bytes"),
]


def _load_spider_class():
    path = HERE / "spiders" / "bench_spider.py"
    spec = importlib.util.spec_from_file_location("bench_spider", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.BenchSpider


def measure(pages: int = 400, repeat: int = 7, seed: int = 1) -> dict:
    """Run the per-page path over ``pages`` pages of the site, ``repeat`` times.

    Args:
        pages: how many pages of a ``SiteSpec(max(pages, 2), seed)`` site (>= 1).
        repeat: passes measured after one warm-up pass (>= 1).
        seed: the site's seed.

    Returns:
        ``{"pages", "repeat", "us_per_page" (best pass, CPU microseconds), "passes" (each
        pass's CPU microseconds per page), "requests" and "items" (what one pass
        produced)}``.

    Raises:
        ValueError: ``pages`` or ``repeat`` below 1.
    """
    if pages < 1 or repeat < 1:
        raise ValueError("--pages and --repeat must be at least 1")
    from crawlfw import signals
    from crawlfw.core.flow.downloadermw import DownloaderMiddlewareManager
    from crawlfw.core.flow.scraper import Scraper
    from crawlfw.crawler import Crawler
    from crawlfw.exporters import JsonLinesItemExporter
    from crawlfw.http import Headers, HtmlResponse, Request

    base = "http://127.0.0.1:8000"
    crawler = Crawler(_load_spider_class(), {"LOG_LEVEL": "INFO"})
    spider = crawler._create_spider("bench", base_url=base)
    crawler.spider = spider
    crawler.stats.open_spider(spider)
    downloader_mws = DownloaderMiddlewareManager.from_crawler(crawler)
    crawler.signals.send_catch_log(signals.spider_opened, spider=spider)
    exporter = JsonLinesItemExporter(io.BytesIO())
    counts = {"requests": 0, "items": 0}

    class Sink:
        def requests(self, batch, running):
            counts["requests"] += len(batch)

        def items(self, items, response, spider_error):
            counts["items"] += len(items)
            for item in items:
                exporter.export_item(item)

        def close_spider(self, reason):
            pass

    scraper = Scraper(crawler, Sink())
    site = SiteSpec(max(pages, 2), seed)
    docs = [(base + site.path(i), site.body(i)) for i in range(pages)]

    def one_pass() -> float:
        start = time.process_time()
        for url, body in docs:
            request = Request(url, callback=spider.parse)
            downloader_mws.process_request(request, spider)
            headers = Headers.from_raw_pairs(
                _HEADERS + [(b"Content-Length", str(len(body)).encode())])
            response = HtmlResponse(url, status=200, headers=headers, body=body,
                                    request=request)
            response = downloader_mws.process_response(request, response, spider)
            scraper.scrape_response(request, response)
        return (time.process_time() - start) / len(docs) * 1e6

    one_pass()  # warm-up: caches, compiled queries
    for key in counts:
        counts[key] = 0
    passes = [one_pass() for _ in range(repeat)]
    return {"pages": pages, "repeat": repeat, "us_per_page": min(passes), "passes": passes,
            "requests": counts["requests"] // repeat, "items": counts["items"] // repeat}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="CPU of crawlfw's per-page path (middlewares, callback, exporter), "
                    "one thread, no network.")
    parser.add_argument("--pages", type=int, default=400, help="pages of the site (400)")
    parser.add_argument("--repeat", type=int, default=7, help="measured passes (7)")
    parser.add_argument("--seed", type=int, default=1, help="the site's seed (1)")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args(argv)
    try:
        result = measure(args.pages, args.repeat, args.seed)
    except ValueError as e:
        parser.error(str(e))
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{result['us_per_page']:.1f} CPU us per page (best of {args.repeat} passes over "
              f"{args.pages} pages; {result['requests']} requests, {result['items']} items "
              "per pass)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
