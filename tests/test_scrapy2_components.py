"""Scrapy 2.13+ spider and component conventions (issue 17), through the ``crawlfw``
CLI on the local quotes copy: errback without callback, items and errors from
``start()``, start requests in order, components without the ``spider`` argument,
coroutine and async-generator component methods, results of the wrong type, the
``@cb_kwargs`` contract and ``parse --cbkwargs``."""

import json
import re

import pytest

from tests.commands.conftest import run_crawlfw, write
from tests.support.proc import run_measured


@pytest.fixture(scope="module")
def quotes(site_server):
    return site_server("quotes.toscrape.com")


def _crawl(tmp_path, spider_text, base, *args):
    (tmp_path / "spider.py").write_text(spider_text)
    run = run_measured("runspider", "spider.py", "-a", f"base={base}", "-o", "out.jl",
                       "-s", "LOG_LEVEL=INFO", *args, cwd=tmp_path, timeout_s=90)
    out = tmp_path / "out.jl"
    items = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []
    return run, items


def _stat(stderr, name):
    match = re.search(rf"'{re.escape(name)}': ([^,\n}}]+)", stderr)
    return None if match is None else match.group(1).strip()


ERRBACK_SPIDER = '''
import crawlfw


class S(crawlfw.Spider):
    name = "errback_only"
    custom_settings = {"RETRY_ENABLED": False}

    def start_requests(self):
        for n in range(1, 6):
            yield crawlfw.Request(f"{self.base}/page/{n}/", errback=self.failed)
        yield crawlfw.Request(f"http://127.0.0.1:{self.dead}/", errback=self.failed)

    def parse(self, response):
        yield {"page": response.url, "quotes": len(response.css("div.quote"))}

    def failed(self, failure):
        yield {"failed": failure.request.url, "error": type(failure.value).__name__}
'''


@pytest.mark.slow
def test_errback_without_callback(quotes, tmp_path, unused_port):
    run, items = _crawl(tmp_path, ERRBACK_SPIDER, quotes.url, "-a", f"dead={unused_port}")
    assert run.returncode == 0, run.stderr[-3000:]
    pages = sorted(i["page"] for i in items if "page" in i)
    assert pages == [f"{quotes.url}/page/{n}/" for n in range(1, 6)]
    assert all(i["quotes"] == 10 for i in items if "page" in i)
    failed = [i for i in items if "failed" in i]
    assert [f["failed"] for f in failed] == [f"http://127.0.0.1:{unused_port}/"]


@pytest.fixture
def unused_port():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


START_SPIDER = '''
import crawlfw


class S(crawlfw.Spider):
    name = "start_items"
    custom_settings = {"DOWNLOAD_DELAY": 0.05, "RANDOMIZE_DOWNLOAD_DELAY": False}
    fail = "no"

    async def start(self):
        yield {"from": "start", "n": 1}
        for n in range(1, 6):
            yield crawlfw.Request(f"{self.base}/page/{n}/")
        yield {"from": "start", "n": 2}
        if self.fail == "yes":
            raise KeyError("missing -a argument")

    def parse(self, response):
        yield {"page": int(response.url.rstrip("/").rsplit("/", 1)[1])}
'''


@pytest.mark.slow
def test_start_items_and_order(quotes, tmp_path):
    run, items = _crawl(tmp_path, START_SPIDER, quotes.url)
    assert run.returncode == 0, run.stderr[-3000:]
    assert [i for i in items if "from" in i] == [{"from": "start", "n": 1},
                                                 {"from": "start", "n": 2}]
    # start requests are fetched in the order start() gave them (one slot, a delay)
    assert [i["page"] for i in items if "page" in i] == [1, 2, 3, 4, 5]
    assert _stat(run.stderr, "finish_reason") == "'finished'"


ORDER_SPIDER = '''
import crawlfw


class S(crawlfw.Spider):
    name = "start_order"
    custom_settings = {"DOWNLOAD_DELAY": 0.05, "RANDOMIZE_DOWNLOAD_DELAY": False}

    def start_requests(self):
        for n in range(1, 6):
            yield crawlfw.Request(f"{self.base}/slow/{n}")

    def parse(self, response):
        yield {"url": response.url}
'''


@pytest.mark.slow
@pytest.mark.parametrize("frontier", ["jobdir", "redis"])
def test_start_requests_in_order_with_a_durable_frontier(tmp_path, request, frontier):
    """start_urls u1..u5 with DOWNLOAD_DELAY are fetched u1..u5 with a JOBDIR (SQLite)
    and with a FRONTIER_URL (Redis) frontier too (they are LIFO for other requests)."""
    from tests.support.countserver import CountingServer

    if frontier == "jobdir":
        args = ("-s", f"JOBDIR={tmp_path / 'job'}")
    else:
        redis = request.getfixturevalue("redis_server")
        args = ("-s", f"FRONTIER_URL={redis.url}")
    server = CountingServer(hold_s=0.01)
    try:
        run, items = _crawl(tmp_path, ORDER_SPIDER, server.url, *args)
    finally:
        server.stop()
    assert run.returncode == 0, run.stderr[-3000:]
    assert len(items) == 5
    assert server.paths == [f"/slow/{n}" for n in range(1, 6)]


@pytest.mark.slow
def test_exception_in_start_ends_with_start_error(quotes, tmp_path):
    run, items = _crawl(tmp_path, START_SPIDER, quotes.url, "-a", "fail=yes")
    assert "Error while reading start items and requests: 'missing -a argument'." in run.stderr
    assert "KeyError: 'missing -a argument'" in run.stderr
    assert _stat(run.stderr, "finish_reason") == "'start_error'"
    # what start() gave before raising is not lost
    assert sorted(i["page"] for i in items if "page" in i) == [1, 2, 3, 4, 5]
    assert len([i for i in items if "from" in i]) == 2


COMPONENTS_SPIDER = '''
import asyncio

import crawlfw


class NoSpiderDownloaderMw:
    def process_request(self, request):
        request.meta["seen_by_dmw"] = True

    def process_response(self, request, response):
        return response


class AsyncDownloaderMw:
    async def process_request(self, request, spider):
        await asyncio.sleep(0)
        request.meta["async_dmw"] = True
        return None


class AsyncGenSpiderMw:
    async def process_spider_output(self, response, result):
        async for obj in result:
            if isinstance(obj, dict):
                obj["spider_mw"] = "async-gen"
            yield obj


class NoSpiderPipeline:
    def open_spider(self):
        self.count = 0

    def process_item(self, item):
        self.count += 1
        item["n_pipeline"] = self.count
        return item


class AsyncPipeline:
    async def process_item(self, item, spider):
        await asyncio.sleep(0)
        item["async_pipeline"] = True
        if item["page"] == 2:
            return "not an item"
        return item


class S(crawlfw.Spider):
    name = "components"
    custom_settings = {
        "DOWNLOADER_MIDDLEWARES": {__name__ + ".NoSpiderDownloaderMw": 543,
                                   __name__ + ".AsyncDownloaderMw": 544},
        "SPIDER_MIDDLEWARES": {__name__ + ".AsyncGenSpiderMw": 543},
        "ITEM_PIPELINES": {__name__ + ".NoSpiderPipeline": 100,
                           __name__ + ".AsyncPipeline": 200},
    }

    def start_requests(self):
        for n in (1, 2, 3):
            yield crawlfw.Request(f"{self.base}/page/{n}/", cb_kwargs={"n": n})

    def parse(self, response, n):
        yield {"page": n, "dmw": response.meta.get("seen_by_dmw"),
               "async_dmw": response.meta.get("async_dmw")}
'''


@pytest.mark.slow
def test_components_without_spider_and_async_methods(quotes, tmp_path):
    run, items = _crawl(tmp_path, COMPONENTS_SPIDER, quotes.url)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "unexpected keyword argument" not in run.stderr
    items.sort(key=lambda i: i["page"])
    assert [i["page"] for i in items] == [1, 3]  # page 2's pipeline result was wrong
    for item in items:
        assert item["dmw"] is True and item["async_dmw"] is True
        assert item["spider_mw"] == "async-gen" and item["async_pipeline"] is True
    assert sorted(i["n_pipeline"] for i in items) != []
    # the wrong result is an ERROR naming the component, counted
    assert ("Item pipeline AsyncPipeline.process_item must return an item, None or raise "
            "DropItem, got 'str'") in run.stderr
    assert _stat(run.stderr, "invalid_output/AsyncPipeline.process_item") == "1"
    assert "coroutine" not in run.stderr


CHECK_SPIDER = """
import crawlfw


class CbSpider(crawlfw.Spider):
    name = "cb"

    def parse_page(self, response, author, limit):
        '''A page's quotes by one author.

        @url {url}/page/1/
        @cb_kwargs {{"author": "Albert Einstein", "limit": 10}}
        @returns items 1 10
        @scrapes text author
        '''
        for q in response.css("div.quote")[:limit]:
            if q.css("small.author::text").get() == author:
                yield {{"text": q.css("span.text::text").get(), "author": author}}
"""


@pytest.mark.slow
def test_cb_kwargs_contract_and_parse_cbkwargs(quotes, tmp_path):
    project = tmp_path / "proj"
    result = run_crawlfw("startproject", "proj", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    write(project / "proj" / "spiders" / "cb.py",
          CHECK_SPIDER.format(url=quotes.url))
    check = run_crawlfw("check", "cb", cwd=project)
    assert check.returncode == 0, check.stderr[-3000:]
    assert "Unknown contract" not in check.stderr
    assert "Ran 2 contracts in" in check.stderr, check.stderr[-2000:]  # @returns, @scrapes
    parse = run_crawlfw("parse", "--spider", "cb", "-c", "parse_page", "--cbkwargs",
                        '{"author": "Albert Einstein", "limit": 10}', f"{quotes.url}/page/1/",
                        cwd=project)
    assert parse.returncode == 0, parse.stderr[-3000:]
    assert parse.stdout.count("'author': 'Albert Einstein'") == 3, parse.stdout
    bad = run_crawlfw("parse", "--spider", "cb", "--cbkwargs", "[1]", f"{quotes.url}/",
                      cwd=project)
    assert bad.returncode == 2 and "--cbkwargs" in bad.stderr


THROTTLE_SPIDER = '''
import crawlfw


class S(crawlfw.Spider):
    name = "throttle"
    custom_settings = {"AUTOTHROTTLE_ENABLED": True, "AUTOTHROTTLE_START_DELAY": 0.5,
                       "RANDOMIZE_DOWNLOAD_DELAY": False, "CONCURRENT_REQUESTS_PER_DOMAIN": 4}

    def start_requests(self):
        for n in range(4):
            yield crawlfw.Request(f"{self.base}/slow/{n}")

    def parse(self, response):
        yield {"url": response.url}
'''


@pytest.mark.slow
def test_autothrottle_start_delay_applies_from_the_first_request(tmp_path):
    from tests.support.countserver import CountingServer

    server = CountingServer(hold_s=0.05)
    try:
        run, items = _crawl(tmp_path, THROTTLE_SPIDER, server.url)
    finally:
        server.stop()
    assert run.returncode == 0, run.stderr[-3000:]
    assert len(items) == 4
    assert server.max_active == 1  # one at a time, not a first burst of 4
    gaps = [b - a for a, b in zip(server.times, server.times[1:], strict=False)]
    # the start delay, adjusted by the first response to (0.5 + latency) / 2, then
    # decreasing towards the latency: never the burst of 4 at once of before
    assert gaps[0] >= 0.2 and min(gaps) >= 0.04, gaps  # delays never go below the latency


IDLE_SPIDER = '''
import json
import time

import crawlfw
from crawlfw import signals
from crawlfw.exceptions import DontCloseSpider


class S(crawlfw.Spider):
    name = "idle"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.fires = []
        crawler.signals.connect(spider.on_idle, signals.spider_idle)
        crawler.signals.connect(spider.on_closed, signals.spider_closed)
        return spider

    def start_requests(self):
        yield crawlfw.Request(f"{self.base}/page/1/")

    def on_idle(self, spider):
        self.fires.append(time.monotonic())
        if len(self.fires) == 1:  # more work, once
            self.crawler.engine.crawl(crawlfw.Request(f"{self.base}/page/2/"), self)
            raise DontCloseSpider

    def on_closed(self, spider, reason):
        with open("idle.json", "w") as f:
            json.dump({"fires": len(self.fires), "close_after_s": time.monotonic() - self.fires[0],
                       "reason": reason}, f)

    def parse(self, response):
        yield {"url": response.url}
'''


@pytest.mark.slow
def test_spider_idle_once_per_idle_turn_and_no_close_delay(quotes, tmp_path):
    run, items = _crawl(tmp_path, IDLE_SPIDER, quotes.url)
    assert run.returncode == 0, run.stderr[-3000:]
    assert sorted(i["url"] for i in items) == [f"{quotes.url}/page/1/", f"{quotes.url}/page/2/"]
    idle = json.loads((tmp_path / "idle.json").read_text())
    assert idle["fires"] == 2 and idle["reason"] == "finished"
    assert idle["close_after_s"] < 4.0  # not the 5 s recheck of a DontCloseSpider


WRONG_ONLY_SPIDER = '''
import crawlfw


class ListPipeline:
    def process_item(self, item, spider):
        return [item]  # a mistake: not an item


class S(crawlfw.Spider):
    name = "wrong_only"
    custom_settings = {"ITEM_PIPELINES": {__name__ + ".ListPipeline": 100}}

    def start_requests(self):
        yield crawlfw.Request(f"{self.base}/page/1/")

    def parse(self, response):
        for q in response.css("div.quote")[:3]:
            yield {"text": q.css("span.text::text").get()}
'''


@pytest.mark.slow
def test_a_crawl_of_only_wrong_results_says_so_when_closing(quotes, tmp_path):
    run, items = _crawl(tmp_path, WRONG_ONLY_SPIDER, quotes.url)
    assert items == []
    assert run.stderr.count("Item pipeline ListPipeline.process_item must return an item") == 3
    assert ("Spider closed (finished): no item scraped; results of the wrong type from "
            "ListPipeline.process_item (3)") in run.stderr


ASYNC_CHAIN_SPIDER = '''
import asyncio

import crawlfw


class TagStart:
    """Scrapy 2.13's async start hook."""

    async def process_start(self, start):
        async for request in start:
            request.meta["tagged"] = True
            yield request


class AsyncOutput:
    async def process_spider_output(self, response, result, spider):
        async for obj in result:
            if isinstance(obj, dict):
                obj["async_mw"] = True
            yield obj


class S(crawlfw.Spider):
    name = "async_chain"
    custom_settings = {"SPIDER_MIDDLEWARES": {__name__ + ".TagStart": 100,
                                              __name__ + ".AsyncOutput": 543}}

    async def start(self):
        for n in (1, 2, 3):
            await asyncio.sleep(0)
            yield crawlfw.Request(f"{self.base}/page/{n}/")

    async def parse(self, response):
        for q in response.css("div.quote")[:2]:
            await asyncio.sleep(0)
            yield {"page": response.url, "tagged": response.meta.get("tagged", False)}
'''


@pytest.mark.slow
def test_async_start_and_callback_through_async_middlewares(quotes, tmp_path):
    run, items = _crawl(tmp_path, ASYNC_CHAIN_SPIDER, quotes.url)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "ERROR" not in run.stderr, run.stderr[-3000:]
    assert len(items) == 6
    assert all(i["tagged"] and i["async_mw"] for i in items)
    assert sorted({i["page"] for i in items}) == [f"{quotes.url}/page/{n}/" for n in (1, 2, 3)]


STREAM_SPIDER = '''
import crawlfw


class Plain:
    def process_spider_output(self, response, result, spider):
        for obj in result:
            yield obj


class AsyncAfterPlain:
    async def process_spider_output(self, response, result, spider):
        async for obj in result:
            obj["produced_then"] = response.meta["produced"]
            yield obj


class S(crawlfw.Spider):
    name = "stream"
    custom_settings = {"SPIDER_MIDDLEWARES": {__name__ + ".Plain": 600,
                                              __name__ + ".AsyncAfterPlain": 500}}

    def start_requests(self):
        yield crawlfw.Request(f"{self.base}/page/1/")

    def parse(self, response):
        for i, q in enumerate(response.css("div.quote")[:3]):
            response.meta["produced"] = i + 1
            yield {"i": i}
'''


@pytest.mark.slow
def test_async_generator_output_after_a_plain_middleware_streams(quotes, tmp_path):
    """Scrapy 2.13: an async generator ``process_spider_output`` placed after a plain one
    gets each result as it is produced (not once the callback has produced them all)."""
    run, items = _crawl(tmp_path, STREAM_SPIDER, quotes.url)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "ERROR" not in run.stderr, run.stderr[-3000:]
    assert items == [{"i": 0, "produced_then": 1}, {"i": 1, "produced_then": 2},
                     {"i": 2, "produced_then": 3}]


def test_component_signatures_are_read_once_and_old_names_kept():
    """A Scrapy 1.2 pipeline calling ``spider`` by another name keeps getting it; a method
    without it is called without it; async methods are awaited; a plain method is not
    wrapped at all (nothing more per call)."""
    from crawlfw.middleware import component_method

    class P:
        def process_item(self, item, sp):
            return (item, sp)

        def open_spider(self):
            return "no spider"

        async def close_spider(self, spider):
            return f"awaited {spider}"

        def process_request(self, request, spider):
            return request

    p = P()
    assert component_method(p, "process_item")("i", "S") == ("i", "S")
    assert component_method(p, "open_spider")("S") == "no spider"
    assert component_method(p, "close_spider")("S") == "awaited S"
    assert component_method(p, "process_request") == p.process_request  # not wrapped


def test_memory_frontier_start_queue_order():
    """Start requests: first in, first out, after other requests of the same priority
    (Scrapy 2.13: a priority's regular queue is popped before its start queue); a higher
    priority still goes first; released ones go back there."""
    from crawlfw.core.frontier.frontier import MemoryFrontier
    from crawlfw.dupefilters import RFPDupeFilter
    from crawlfw.http import Request
    from crawlfw.squeues import LifoMemoryQueue

    f = MemoryFrontier(RFPDupeFilter(), LifoMemoryQueue)
    starts = [Request(f"http://s.example/{n}", meta={"is_start_request": True})
              for n in range(1, 4)]
    other = Request("http://o.example/1")
    urgent = Request("http://o.example/urgent", priority=5)
    for r in [other, *starts, urgent]:
        assert f.push(r)
    assert len(f) == 5
    got = f.lease(3)
    assert [r.url for r in got] == ["http://o.example/urgent", "http://o.example/1",
                                    "http://s.example/1"]
    f.release(got[2:])
    assert [r.url for r in f.lease(10)] == ["http://s.example/2", "http://s.example/3",
                                            "http://s.example/1"]
    assert len(f) == 0
