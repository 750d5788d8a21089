"""The frontier's per-host queues seen from real crawls: the settings that name the
layout, the one path every request takes into the frontier, and politeness kept when
the frontier spaces a host's requests (the downloader then applies only concurrency)."""

import logging
import subprocess
import sys

import pytest

import crawlfw
from tests.support.countserver import CountingServer
from tests.support.crawl import run_crawl


class MachinerySpider(crawlfw.Spider):
    """Its first callback asks the engine (as an extension or the shell would) for two
    requests whose callbacks are no spider methods: with a JOBDIR they cannot be stored
    and stay in memory."""

    name = "machinery"
    start = None

    def start_requests(self):
        yield crawlfw.Request(f"{self.start}/page/0", callback=self.first)

    def first(self, response):
        yield {"n": 0}
        for n in (1, 2):
            self.crawler.engine.crawl(crawlfw.Request(
                f"{self.start}/page/{10 + n}", callback=lambda r, n=n: [{"n": n}]))


def test_unserializable_requests_are_counted_and_logged_in_a_real_crawl(tmp_path, caplog):
    """``crawler.engine.crawl`` reaches the frontier through the SchedulerActor's
    ``push_many``, the same path as the Scheduler's ``enqueue_request``: requests kept
    in memory count in ``scheduler/unserializable`` and ``LOG_UNSERIALIZABLE_REQUESTS``
    logs the first (before, only a test calling the Scheduler directly saw them)."""
    caplog.set_level(logging.WARNING)
    server = CountingServer(hold_s=0.0)
    try:
        result = run_crawl(MachinerySpider, {"JOBDIR": str(tmp_path / "job"),
                                             "LOG_UNSERIALIZABLE_REQUESTS": True},
                           start=server.url)
    finally:
        server.stop()
    assert result.finish_reason == "finished"
    assert sorted(item["n"] for item in result.items) == [0, 1, 2]
    assert result.stats["scheduler/unserializable"] == 2
    lines = [r.getMessage() for r in caplog.records if "Unable to serialize" in r.getMessage()]
    assert len(lines) == 1 and "/page/1" in lines[0]


class OnePageSpider(crawlfw.Spider):
    name = "onepage"
    start = None

    def start_requests(self):
        yield crawlfw.Request(f"{self.start}/page/0", callback=self.parse)

    def parse(self, response):
        yield {"url": response.url}


def test_downloader_aware_priority_queue_is_accepted(caplog):
    """Scrapy 2's broad-crawl advice names ``DownloaderAwarePriorityQueue``: accepted, it
    is what crawlfw does (no "has no effect" warning)."""
    caplog.set_level(logging.WARNING)
    server = CountingServer(hold_s=0.0)
    try:
        for value in ("scrapy.pqueues.DownloaderAwarePriorityQueue",
                      "crawlfw.pqueues.DownloaderAwarePriorityQueue"):
            result = run_crawl(OnePageSpider, {"SCHEDULER_PRIORITY_QUEUE": value},
                               start=server.url)
            assert result.finish_reason == "finished" and len(result.items) == 1
    finally:
        server.stop()
    assert "SCHEDULER_PRIORITY_QUEUE" not in caplog.text


SPIDER = '''
import crawlfw

class S(crawlfw.Spider):
    name = "s"
    start_urls = ["http://127.0.0.1:9/"]
'''


@pytest.mark.slow
def test_other_priority_queue_is_refused_at_start_in_one_line(tmp_path):
    spider = tmp_path / "s.py"
    spider.write_text(SPIDER)
    proc = subprocess.run(
        [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(spider),
         "-s", "CONTROL_ENDPOINT=0", "-s", "SCHEDULER_PRIORITY_QUEUE=scrapy.pqueues.ScrapyPriorityQueue"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr[-3000:]
    (line,) = [x for x in proc.stderr.splitlines() if "Crawl could not start" in x]
    assert ("SCHEDULER_PRIORITY_QUEUE = 'scrapy.pqueues.ScrapyPriorityQueue' cannot be "
            "honoured") in line
    assert "DownloaderAwarePriorityQueue" in line
    assert "Traceback" not in proc.stderr


class TwoHostsSpider(crawlfw.Spider):
    """Four pages of a.localhost, four of b.localhost, all at once."""

    name = "twohosts"
    port = None

    def start_requests(self):
        for host in ("a.localhost", "b.localhost"):
            for n in range(4):
                yield crawlfw.Request(f"http://{host}:{self.port}/page/{n}", callback=self.parse)

    def parse(self, response):
        yield {"url": response.url}


def test_download_delay_is_kept_by_the_frontier_per_host():
    """DOWNLOAD_DELAY with per-host queues: the frontier spaces each host's starts (one
    per delay) and the downloader does not wait a second time, so the hosts' pages
    arrive a delay apart, the two hosts side by side."""
    server = CountingServer(hold_s=0.0)
    try:
        port = server.url.rsplit(":", 1)[1]
        result = run_crawl(TwoHostsSpider, {"DOWNLOAD_DELAY": 0.4,
                                            "RANDOMIZE_DOWNLOAD_DELAY": False,
                                            "CONCURRENT_REQUESTS": 16}, port=port)
    finally:
        server.stop()
    assert len(result.items) == 8
    # The server sees the paths without the host: the arrivals of both hosts together.
    times = sorted(server.times)
    gaps = [b - a for a, b in zip(times[::2], times[2::2], strict=False)]
    assert all(g >= 0.3 for g in gaps), gaps  # two arrivals (a, b) per delay
    assert times[-1] - times[0] < 0.4 * 3 + 1.0  # 4 starts per host: 3 delays, not 6


class PathsMiddleware:
    """A downloader middleware taking each way out of the download stage by path:
    ``/ignore/`` raises IgnoreRequest, ``/answer/`` is answered with a Response,
    ``/replace/`` is replaced by a new request (as a redirect or retry is)."""

    def process_request(self, request, spider):
        from crawlfw.exceptions import IgnoreRequest
        from crawlfw.http import HtmlResponse

        path = request.url.split("/", 3)[3]
        if path.startswith("ignore/"):
            raise IgnoreRequest("ignored by the test")
        if path.startswith("answer/"):
            return HtmlResponse(request.url, body=b"<html>answered</html>", request=request)
        if path.startswith("replace/"):
            return request.replace(url=request.url.replace("/replace/", "/slow/r"))
        return None


class EveryPathSpider(crawlfw.Spider):
    """Requests of one host that leave the download stage every way there is."""

    name = "everypath"
    start = None
    PATHS = ([f"slow/{n}" for n in range(3)] + [f"ignore/{n}" for n in range(3)]
             + [f"answer/{n}" for n in range(3)] + [f"replace/{n}" for n in range(3)]
             + [f"status/503?{n}" for n in range(2)])

    def start_requests(self):
        for path in self.PATHS:
            yield crawlfw.Request(f"{self.start}/{path}", callback=self.parse,
                                  errback=self.failed)
        for n in range(3):  # another host, refusing connections
            yield crawlfw.Request(f"http://localhost:9/{n}", callback=self.parse,
                                  errback=self.failed)

    def parse(self, response):
        yield {"url": response.url, "ok": True}

    def failed(self, failure):
        yield {"url": failure.request.url, "ok": False}


def test_every_way_out_of_the_download_stage_frees_its_host():
    """With one transfer per host (``CONCURRENT_REQUESTS_PER_DOMAIN=1``) a request whose
    end is not reported to the frontier would hold its host forever: the crawl ends
    only if every way reports once (a response, a failure, IgnoreRequest, a
    middleware's response, a replacement, a retry, robots.txt parking)."""
    server = CountingServer(hold_s=0.0)
    try:
        result = run_crawl(EveryPathSpider, {
            "CONCURRENT_REQUESTS_PER_DOMAIN": 1, "ROBOTSTXT_OBEY": True, "RETRY_TIMES": 1,
            "DOWNLOADER_MIDDLEWARES": {__name__ + ".PathsMiddleware": 50}},
            timeout_s=40, start=server.url)
    finally:
        server.stop()
    assert result.finish_reason == "finished"
    assert len(result.items) == len(EveryPathSpider.PATHS) + 3
    assert sum(1 for i in result.items if i["ok"]) == 9  # slow, answer, replace
    assert result.stats["retry/count"] >= 2 + 3  # the 503s, the refused connections
    assert server.max_active == 1


class CountingScheduler:
    """A Scheduler subclass with Scrapy's interface overridden (``enqueue_request``), as
    a user's may be: the actor calls its ``next_request`` instead of leasing."""

    @staticmethod
    def cls():
        from crawlfw.core.frontier.scheduler import Scheduler

        class Sub(Scheduler):
            enqueued = 0

            def enqueue_request(self, request):
                type(self).enqueued += 1
                return super().enqueue_request(request)

        return Sub


SUB = CountingScheduler.cls()


class ThreePagesSpider(crawlfw.Spider):
    name = "threepages"
    start = None

    def start_requests(self):
        for n in range(3):
            yield crawlfw.Request(f"{self.start}/page/{n}", callback=self.parse)

    def parse(self, response):
        yield {"url": response.url}


def test_a_scrapy_style_scheduler_subclass_with_a_delay_does_not_stall():
    """``next_request`` frees its host at once but the frontier still spaces the host's
    starts: the actor wakes itself when the delay has passed (through the subclass's own
    frontier), rather than waiting for the stall timeout."""
    server = CountingServer(hold_s=0.0)
    try:
        result = run_crawl(ThreePagesSpider, {"SCHEDULER": __name__ + ".SUB",
                                              "DOWNLOAD_DELAY": 0.3,
                                              "RANDOMIZE_DOWNLOAD_DELAY": False},
                           timeout_s=20, start=server.url)
    finally:
        server.stop()
    assert result.finish_reason == "finished" and len(result.items) == 3
    assert SUB.enqueued == 3
    times = server.times
    assert times[-1] - times[0] < 3.0  # about 2 delays, not a stall
    assert all(b - a >= 0.25 for a, b in zip(times, times[1:], strict=False))


def test_a_delay_longer_than_the_stall_timeout_is_not_a_stall():
    """A host's next request waits in the frontier for its delay, nothing in flight: the
    crawl looks stuck to the Engine, but the Scheduler knows a host becomes ready by its
    delay and does not end the crawl ``stalled``."""
    server = CountingServer(hold_s=0.0)
    try:
        result = run_crawl(ThreePagesSpider, {"DOWNLOAD_DELAY": 1.6, "STALL_TIMEOUT": 0.3,
                                              "RANDOMIZE_DOWNLOAD_DELAY": False},
                           timeout_s=30, start=server.url)
    finally:
        server.stop()
    assert result.finish_reason == "finished" and len(result.items) == 3
