"""InitSpider (deprecated): initialization requests run before the start requests, in a
unit test and a real crawl of the quotes copy."""

import pytest

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.http import HtmlResponse, Request
from crawlfw.spiders.init import InitSpider
from tests.support.crawl import run_crawl


class LoginSpider(InitSpider):
    """Two initialization requests (page 1, then page 2), then the start URL."""

    name = "login"

    def __init__(self, base_url="http://a", **kw):
        super().__init__(**kw)
        self.base_url = base_url
        self.start_urls = [base_url + "/page/3/"]
        self.order = []

    def init_request(self):
        return Request(self.base_url + "/page/1/", callback=self.step)

    def step(self, response):
        self.order.append(("step", response.url))
        return Request(self.base_url + "/page/2/", callback=self.after_login)

    def after_login(self, response):
        self.order.append(("after_login", response.url))
        return self.initialized(response)

    def parse(self, response):
        self.order.append(("parse", response.url))
        yield {"url": response.url}


def test_deprecation_warning():
    with pytest.warns(CrawlfwDeprecationWarning, match="InitSpider is deprecated"):
        LoginSpider()


@pytest.mark.filterwarnings("ignore::crawlfw.exceptions.CrawlfwDeprecationWarning")
def test_start_requests_wait_for_initialized():
    spider = LoginSpider()
    (init,) = list(spider.start_requests())
    assert init.url == "http://a/page/1/"
    second = init.callback(HtmlResponse(init.url, body=b"", request=init))
    start = list(second.callback(HtmlResponse(second.url, body=b"", request=second)))
    assert [r.url for r in start] == ["http://a/page/3/"]
    assert start[0].dont_filter
    with pytest.raises(KeyError):  # the start requests are handed out once
        spider.initialized()


@pytest.mark.filterwarnings("ignore::crawlfw.exceptions.CrawlfwDeprecationWarning")
def test_default_init_request_gives_start_requests():
    class Plain(InitSpider):
        name = "plain"
        start_urls = ["http://a/1", "http://a/2"]

    assert [r.url for r in Plain().start_requests()] == ["http://a/1", "http://a/2"]


@pytest.mark.filterwarnings("ignore::crawlfw.exceptions.CrawlfwDeprecationWarning")
def test_crawl_with_initialization(site_server):
    server = site_server("quotes.toscrape.com")
    result = run_crawl(LoginSpider, timeout_s=60, base_url=server.url)
    assert result.finish_reason == "finished"
    assert result.items == [{"url": server.url + "/page/3/"}]
    assert result.crawler.spider.order == [
        ("step", server.url + "/page/1/"),
        ("after_login", server.url + "/page/2/"),
        ("parse", server.url + "/page/3/"),
    ]
