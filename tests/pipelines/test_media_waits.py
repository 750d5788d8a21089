"""A media pipeline's item waits in the Pipeline actor for its downloads (``download`` /
``download_done`` with the Engine) while the actor goes on with other items; the feed
keeps the order the items were scraped in. Real crawls of a local server."""

import http.server
import json
import threading

import pytest

from crawlfw import Spider
from crawlfw.http import Request
from crawlfw.pipelines import AwaitingDownloads, ItemPipelineManager
from crawlfw.pipelines.media import MediaPipeline
from crawlfw.utils.test import get_crawler
from tests.support.crawl import run_crawl
from tests.support.servers import handler_server

#: Seconds the slow media URL waits for its release before answering anyway.
SLOW_WAIT_S = 30.0


class SlowMediaHandler(http.server.BaseHTTPRequestHandler):
    """``/slow.bin`` answers once ``release`` is set (or after :data:`SLOW_WAIT_S`,
    noting that in ``timed_out``); any other path answers at once with its path."""

    release: threading.Event
    timed_out: list

    def do_GET(self):  # noqa: N802 (http.server's name)
        if self.path == "/slow.bin" and not self.release.wait(SLOW_WAIT_S):
            self.timed_out.append(self.path)
        body = self.path.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # noqa: A002
        pass


@pytest.fixture
def slow_server():
    handler = type("Handler", (SlowMediaHandler,),
                   {"release": threading.Event(), "timed_out": []})
    with handler_server(handler) as httpd:
        yield httpd


class ItemsSpider(Spider):
    """One page; its callback yields one item per entry of ``groups`` (a list of media
    paths each, empty for an item that needs no download)."""

    name = "media_waits"

    def __init__(self, base, groups, **kw):
        super().__init__(**kw)
        self.start_urls = [f"{base}/index.html"]
        self.base = base
        self.groups = groups

    def parse(self, response):
        for n, group in enumerate(self.groups):
            yield {"n": n, "urls": [f"{self.base}{path}" for path in group]}


class BodiesPipeline(MediaPipeline):
    """Downloads ``item['urls']``; ``item['bodies']`` gets their bodies (text)."""

    def get_media_requests(self, item, info):
        return [Request(url) for url in item["urls"]]

    def media_downloaded(self, response, request, info):
        return response.text

    def item_completed(self, results, item, info):
        item["bodies"] = [value for ok, value in results if ok]
        return item


class ReleasingPipeline:
    """After the media pipeline: notes in ``seen`` the order items reach it, and sets
    ``release`` (the slow URL's) once ``plain`` items other than item 0 have passed:
    only possible while item 0 waits parked, not blocking the actor."""

    seen: list = []
    release = threading.Event()
    plain = 0

    def process_item(self, item, spider):
        self.seen.append(item["n"])
        if sum(1 for n in self.seen if n != 0) == self.plain:
            self.release.set()
        return item


@pytest.mark.slow
def test_items_without_media_finish_while_one_waits_for_its_download(slow_server, tmp_path):
    seen = []
    releasing = type("Releasing", (ReleasingPipeline,), {
        "seen": seen, "release": slow_server.handler.release, "plain": 3})
    feed = tmp_path / "items.jsonl"
    groups = [["/slow.bin"], [], ["/fast.bin"], []]  # item 0 waits; 1-3 need no slow URL
    result = run_crawl(
        ItemsSpider,
        {"ITEM_PIPELINES": {BodiesPipeline: 10, releasing: 20}, "ROBOTSTXT_OBEY": False,
         "FEEDS": {str(feed): {"format": "jsonlines"}}},
        base=slow_server.url, groups=groups)
    assert result.finish_reason == "finished"
    assert slow_server.handler.timed_out == []  # released by the other items, not by time
    assert seen[-1] == 0 and sorted(seen) == [0, 1, 2, 3]
    assert [item["n"] for item in result.items][-1] == 0  # item_scraped: the waiting one last
    by_n = {item["n"]: item for item in result.items}
    assert by_n[0]["bodies"] == ["/slow.bin"] and by_n[2]["bodies"] == ["/fast.bin"]
    # the feed keeps the order the callback yielded them in
    assert [json.loads(line)["n"] for line in feed.read_text().splitlines()] == [0, 1, 2, 3]


class _Recorder:
    """An item pipeline that records what it gets."""

    def __init__(self):
        self.got = []

    def process_item(self, item, spider):
        self.got.append(item)
        return {**item, "after": True}


def test_the_manager_goes_on_with_later_pipelines_when_a_wait_ends():
    """``ItemPipelineManager.process_item`` passes a wait on, and its resume runs the
    pipelines after the waiting one (unit: no crawl)."""

    class Waits:
        def process_item(self, item, spider):
            return AwaitingDownloads(
                [Request("http://127.0.0.1:1/a")],
                lambda outcomes: {**item, "outcomes": outcomes})

    recorder = _Recorder()
    manager = ItemPipelineManager(Waits(), recorder)
    spider = Spider("waits")
    pending = manager.process_item({"n": 1}, spider)
    assert isinstance(pending, AwaitingDownloads) and recorder.got == []
    assert [r.url for r in pending.requests] == ["http://127.0.0.1:1/a"]
    assert pending.resume(["response"]) == {"n": 1, "outcomes": ["response"], "after": True}
    assert recorder.got == [{"n": 1, "outcomes": ["response"]}]


def test_a_media_pipeline_in_a_crawl_returns_a_wait_not_a_blocked_thread():
    crawler = get_crawler()
    crawler.engine = object()  # a running crawl's engine (never called: nothing blocks)
    pipe = BodiesPipeline.from_crawler(crawler)
    spider = Spider("waits")
    pipe.open_spider(spider)
    pending = pipe.process_item({"urls": ["http://127.0.0.1:1/x"]}, spider)
    assert isinstance(pending, AwaitingDownloads)
    [request] = pending.requests
    assert request.meta["handle_httpstatus_all"] is True
    assert pending.resume([ConnectionError("refused")]) == {
        "urls": ["http://127.0.0.1:1/x"], "bodies": []}
    # an item with nothing to download is finished at once
    assert pipe.process_item({"urls": []}, spider) == {"urls": [], "bodies": []}
