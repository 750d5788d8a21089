"""robots.txt parking in real crawls: a request parked until its host's robots.txt
arrives waits in the Engine with its frontier lease and goes on from there; it reaches
the frontier (and the dupefilter) once. A local server whose robots.txt answers only
once every request of the crawl is parked."""

import threading

import pytest

from crawlfw import Spider
from crawlfw.core.flow.downloadermw import RequestParked
from crawlfw.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from tests.downloadermiddlewares._support import ScriptedServer
from tests.support.crawl import run_crawl

pytestmark = pytest.mark.slow

#: Seconds robots.txt waits for every page request to be parked before answering anyway.
ROBOTS_WAIT_S = 30.0

PAGES = [f"/p{i}" for i in range(5)]
FORBIDDEN = "/private/x"


class CountingRobots(RobotsTxtMiddleware):
    """The robots.txt middleware, setting ``all_parked`` once ``expect`` requests wait."""

    all_parked: threading.Event
    expect = 0

    def process_request(self, request, spider):
        try:
            return super().process_request(request, spider)
        except RequestParked:
            with self._lock:
                waiting = sum(len(requests) for requests in self._parked.values())
            if waiting >= self.expect:
                self.all_parked.set()
            raise


class PagesSpider(Spider):
    name = "robots_parking"

    def __init__(self, base, **kw):
        super().__init__(**kw)
        self.start_urls = [base + path for path in [*PAGES, FORBIDDEN]]

    def parse(self, response):
        yield {"path": response.url.split("/", 3)[3]}


@pytest.fixture
def site():
    all_parked = threading.Event()
    timed_out = []

    def robots(handler):
        if not all_parked.wait(ROBOTS_WAIT_S):
            timed_out.append(True)
        return 200, [("Content-Type", "text/plain")], b"User-agent: *\nDisallow: /private\n"

    page = (200, [("Content-Type", "text/html")], b"<html>page</html>")
    routes = {"/robots.txt": robots, **{path: page for path in PAGES}}
    with ScriptedServer(routes) as server:
        server.all_parked = all_parked
        server.timed_out = timed_out
        yield server


def crawl(site, **settings):
    middleware = type("Robots", (CountingRobots,), {
        "all_parked": site.all_parked, "expect": len(PAGES) + 1})
    return run_crawl(PagesSpider, {
        "ROBOTSTXT_OBEY": True,
        "DOWNLOADER_MIDDLEWARES": {
            "crawlfw.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
            middleware: 100},
        **settings}, base=site.url)


def test_a_parked_request_reaches_the_frontier_once(site):
    result = crawl(site)
    assert result.finish_reason == "finished"
    assert site.timed_out == []  # robots.txt answered once all six were parked
    assert sorted(item["path"] for item in result.items) == sorted(p[1:] for p in PAGES)
    stats = result.stats
    # six start requests and one robots.txt: each pushed once (13 when parked requests
    # went through the frontier again)
    assert stats["scheduler/enqueued"] == len(PAGES) + 2
    assert stats["scheduler/dequeued"] == len(PAGES) + 2
    assert stats["robotstxt/forbidden"] == 1
    assert stats["robotstxt/request_count"] == 1
    paths = [r["path"] for r in site.received]
    assert paths.count("/robots.txt") == 1 and sorted(p for p in paths if p != "/robots.txt") \
        == sorted(PAGES)
    assert FORBIDDEN not in paths


def test_parked_requests_keep_their_durable_leases(site, tmp_path):
    job = tmp_path / "job"
    result = crawl(site, JOBDIR=str(job))
    assert result.finish_reason == "finished" and len(result.items) == len(PAGES)
    assert result.stats["scheduler/enqueued"] == len(PAGES) + 2
    # every lease was acked: a second run of the job has nothing left to download
    again = crawl(site, JOBDIR=str(job))
    assert again.finish_reason == "finished" and again.items == []
    assert again.stats.get("scheduler/dequeued", 0) == 0
