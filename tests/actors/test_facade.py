"""``crawler.engine`` (EngineFacade): ``crawl`` checks its message against the schema in
the caller's thread before the engine sees it; the crawl goes on."""

import pytest

import crawlfw
from crawlfw.exceptions import InvalidMessage
from tests.support.countserver import CountingServer
from tests.support.crawl import run_crawl


@pytest.fixture
def server():
    s = CountingServer(hold_s=0.2)
    yield s
    s.stop()


class MistakenSpider(crawlfw.Spider):
    """Gives ``crawler.engine.crawl`` a URL string (a common mistake), records what it
    raised, then a real Request."""

    name = "mistaken"
    start = ""
    errors = ()

    def start_requests(self):
        self.errors = []
        yield crawlfw.Request(f"{self.start}/page/1")

    def parse(self, response):
        if response.url.endswith("/page/1"):
            try:
                self.crawler.engine.crawl(f"{self.start}/page/3", self)
            except InvalidMessage as e:
                self.errors.append(str(e))
            self.crawler.engine.crawl(crawlfw.Request(f"{self.start}/page/2"), self)
        yield {"url": response.url}


@pytest.mark.parametrize("mode", ["boundary", "all"])
def test_engine_crawl_rejects_what_is_no_request_in_the_caller(server, monkeypatch, mode):
    monkeypatch.setenv("CRAWLFW_VALIDATE_MESSAGES", mode)
    result = run_crawl(MistakenSpider, start=server.url)
    assert result.crawler.spider.errors == [
        "invalid 'crawl' message at request: builtins.str object is not an instance of "
        "crawlfw.http.Request"
    ]
    assert sorted(i["url"] for i in result.items) == [f"{server.url}/page/1",
                                                      f"{server.url}/page/2"]
    assert result.finish_reason == "finished"
    assert "/page/3" not in server.paths
