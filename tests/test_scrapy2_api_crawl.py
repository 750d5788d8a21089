"""A spider written for Scrapy 2.19, renamed, crawls the local quotes copy (issue 29):
the reactor installed as a Scrapy project's tests do, ``await
maybe_deferred_to_future(self.crawler.engine.download(...))`` in the ``async def parse``
callback (the callback waits without holding the spider runner's thread) and in an async
item pipeline, ``get_retry_request`` from a callback, a ``BaseSpiderMiddleware`` subclass,
``RETRY_EXCEPTIONS`` and ``TWISTED_REACTOR`` in the settings."""

import pytest

from tests.test_scrapy2_components import _crawl, _stat

SCRAPY2_SPIDER = '''
import crawlfw
from crawlfw.downloadermiddlewares.retry import get_retry_request
from crawlfw.http import JsonResponse
from crawlfw.spidermiddlewares.base import BaseSpiderMiddleware
from crawlfw.utils.defer import maybe_deferred_to_future
from crawlfw.utils.reactor import install_reactor, is_asyncio_reactor_installed

install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")


class TagMiddleware(BaseSpiderMiddleware):
    def get_processed_item(self, item, response):
        item["tagged"] = response.url if response is not None else "start"
        return item


class DownloadingPipeline:
    def __init__(self, crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    async def process_item(self, item, spider):
        other = await maybe_deferred_to_future(
            self.crawler.engine.download(crawlfw.Request(item["page"].replace("/1/", "/2/"))))
        item["other"], item["status"] = other.url, other.status
        return item


class S(crawlfw.Spider):
    name = "scrapy2_api"
    custom_settings = {
        "SPIDER_MIDDLEWARES": {__name__ + ".TagMiddleware": 543},
        "ITEM_PIPELINES": {__name__ + ".DownloadingPipeline": 100},
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        "RETRY_EXCEPTIONS": ["scrapy.exceptions.CannotResolveHostError"],
        "RETRY_TIMES": 1,
    }

    def start_requests(self):
        yield crawlfw.Request(f"{self.base}/page/1/")

    async def parse(self, response):
        third = await maybe_deferred_to_future(self.crawler.engine.download(
            crawlfw.Request(response.urljoin("/page/3/"))))
        yield {"page": response.url, "asyncio": is_asyncio_reactor_installed(),
               "json_class": JsonResponse.__name__, "third": third.url,
               "quotes": len(third.css("div.quote"))}
        if "retried" not in response.meta:
            retry = get_retry_request(response.request, spider=self, reason="empty")
            retry.meta["retried"] = True
            yield retry
'''


@pytest.fixture(scope="module")
def quotes(site_server):
    return site_server("quotes.toscrape.com")


@pytest.mark.slow
def test_a_scrapy_2_spider_crawls(quotes, tmp_path):
    run, items = _crawl(tmp_path, SCRAPY2_SPIDER, quotes.url)
    assert run.returncode == 0, run.stderr[-3000:]
    assert len(items) == 2  # the page and its retry (dont_filter)
    for item in items:
        assert item["page"].endswith("/page/1/") and item["other"].endswith("/page/2/")
        assert item["status"] == 200 and item["asyncio"] is True
        assert item["third"].endswith("/page/3/") and item["quotes"] == 10
        assert item["tagged"] == item["page"]
    assert _stat(run.stderr, "retry/reason_count/empty") == "1"
    assert _stat(run.stderr, "finish_reason") == "'finished'"
    assert "has no effect" not in run.stderr and "is not used" not in run.stderr
