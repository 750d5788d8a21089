"""Scrapy 2's members of ``Crawler`` and the runners (issue 29): ``get_downloader_middleware``
and its siblings (Scrapy 2.12), ``request_fingerprinter`` (2.7), ``crawl_async`` /
``stop_async`` (2.14), the ``init_reactor`` argument, ``CrawlerRunnerBase``; and
``FORCE_CRAWLER_PROCESS`` choosing a class-based command's process."""

import asyncio
import inspect

import pytest

import crawlfw
from crawlfw import signals
from crawlfw.commands._custom import crawler_process_class
from crawlfw.crawler import (
    AsyncCrawlerProcess,
    Crawler,
    CrawlerProcess,
    CrawlerRunner,
    CrawlerRunnerBase,
)
from crawlfw.downloadermiddlewares.useragent import UserAgentMiddleware
from crawlfw.exceptions import DontCloseSpider
from crawlfw.extensions.corestats import CoreStats
from crawlfw.settings import Settings
from crawlfw.spidermiddlewares.depth import DepthMiddleware
from crawlfw.utils.request import RequestFingerprinter


class OwnDownloaderMiddleware:
    pass


class OwnSpiderMiddleware:
    pass


class OwnPipeline:
    def process_item(self, item, spider):
        return item


class SubPipeline(OwnPipeline):
    pass


class Quiet(crawlfw.Spider):
    """No requests: the crawl opens, finds itself idle and finishes."""

    name = "quiet"
    start_urls = []


SETTINGS = {
    "LOG_LEVEL": "WARNING",
    "DOWNLOADER_MIDDLEWARES": {f"{__name__}.OwnDownloaderMiddleware": 543},
    "SPIDER_MIDDLEWARES": {f"{__name__}.OwnSpiderMiddleware": 543},
    "ITEM_PIPELINES": {f"{__name__}.SubPipeline": 300},
}


def _run(crawler):
    runner = CrawlerRunner(crawler.settings)
    try:
        runner.crawl(crawler)
        assert crawler.wait(30)
    finally:
        runner.shutdown()


def test_get_components_of_the_running_crawl():
    crawler = Crawler(Quiet, SETTINGS)
    for method in ("get_downloader_middleware", "get_spider_middleware",
                   "get_item_pipeline"):
        with pytest.raises(RuntimeError, match=rf"Crawler.{method}\(\) can only be called "
                                               "after the crawl engine has been created"):
            getattr(crawler, method)(object)
    with pytest.raises(RuntimeError, match="after the extension manager has been created"):
        crawler.get_extension(CoreStats)  # made when the crawl starts (Scrapy 2.19)
    crawler._apply_settings()
    assert isinstance(crawler.get_extension(CoreStats), CoreStats)
    seen = {}

    def opened(spider):
        seen["dmw"] = crawler.get_downloader_middleware(OwnDownloaderMiddleware)
        seen["ua"] = crawler.get_downloader_middleware(UserAgentMiddleware)
        seen["smw"] = crawler.get_spider_middleware(OwnSpiderMiddleware)
        seen["depth"] = crawler.get_spider_middleware(DepthMiddleware)
        seen["pipeline"] = crawler.get_item_pipeline(OwnPipeline)  # a subclass's instance
        seen["any"] = crawler.get_item_pipeline(object)  # the first one
        seen["missing"] = crawler.get_spider_middleware(OwnDownloaderMiddleware)
        seen["addon"] = crawler.get_addon(object)

    crawler.signals.connect(opened, signals.spider_opened, weak=False)
    _run(crawler)
    assert crawler.finish_reason == "finished"
    assert type(seen["dmw"]) is OwnDownloaderMiddleware
    assert type(seen["ua"]) is UserAgentMiddleware
    assert type(seen["smw"]) is OwnSpiderMiddleware
    assert type(seen["depth"]) is DepthMiddleware
    assert type(seen["pipeline"]) is SubPipeline
    assert type(seen["any"]) is SubPipeline
    assert seen["missing"] is None
    assert seen["addon"] is None  # crawlfw loads no add-ons
    # the very instances that ran: the same objects after the crawl
    assert crawler.get_item_pipeline(SubPipeline) is seen["pipeline"]


def test_request_fingerprinter_is_scrapys():
    crawler = Crawler(Quiet)
    fingerprinter = crawler.request_fingerprinter
    assert isinstance(fingerprinter, RequestFingerprinter)
    assert crawler.request_fingerprinter is fingerprinter  # built once
    # Scrapy 2.19's RequestFingerprinter gives these
    assert fingerprinter.fingerprint(crawlfw.Request(
        "http://www.example.com/query?b=2&a=1#frag")).hex() == \
        "dd5766db6164f51435b3d83042ef821ce2c10a5b"
    assert fingerprinter.fingerprint(crawlfw.Request(
        "http://www.example.com/", method="POST", body=b"x")).hex() == \
        "80ab91d7bac1a01fba7820deacd54303f11f0d73"


class UrlFingerprinter:
    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings["BOT_NAME"])

    def __init__(self, bot):
        self.bot = bot

    def fingerprint(self, request):
        return f"{self.bot}:{request.url}".encode()


@pytest.mark.parametrize("path", [f"{__name__}.UrlFingerprinter", UrlFingerprinter])
def test_request_fingerprinter_class_setting(path):
    crawler = Crawler(Quiet, {"REQUEST_FINGERPRINTER_CLASS": path, "BOT_NAME": "bot"})
    assert crawler.request_fingerprinter.fingerprint(crawlfw.Request("http://a.test/")) \
        == b"bot:http://a.test/"
    crawler = Crawler(Quiet, {"REQUEST_FINGERPRINTER_CLASS":
                              "scrapy.utils.request.RequestFingerprinter"})
    assert isinstance(crawler.request_fingerprinter, RequestFingerprinter)


def test_init_reactor_is_accepted():
    assert list(inspect.signature(Crawler).parameters) == ["spidercls", "settings",
                                                           "init_reactor"]
    crawler = Crawler(Quiet, {}, True)
    assert crawler._init_reactor is True


def test_crawl_async_and_stop_async():
    crawler = Crawler(Quiet, {"LOG_LEVEL": "WARNING"})

    async def main():
        await crawler.crawl_async()
        with pytest.raises(RuntimeError, match="more than once"):
            await crawler.crawl_async()

    asyncio.run(main())
    assert crawler.finish_reason == "finished" and not crawler.crawling

    class Stays(Quiet):
        name = "stays"

        def _idle(self):
            raise DontCloseSpider

        @classmethod
        def from_crawler(cls, crawler, *args, **kwargs):
            spider = super().from_crawler(crawler, *args, **kwargs)
            crawler.signals.connect(spider._idle, signals.spider_idle)
            return spider

    staying = Crawler(Stays, {"LOG_LEVEL": "WARNING"})

    async def stop_it():
        task = asyncio.get_running_loop().create_task(staying.crawl_async())
        while not staying.crawling:
            await asyncio.sleep(0.01)
        with pytest.raises(RuntimeError, match="already taking place"):
            await staying.crawl_async()
        await staying.stop_async()
        assert staying.finish_reason == "shutdown"
        await asyncio.wait_for(task, 30)
        await staying.stop_async()  # not crawling: returns at once

    asyncio.run(stop_it())


def test_crawler_runner_base():
    assert issubclass(CrawlerRunner, CrawlerRunnerBase)
    assert inspect.isabstract(CrawlerRunnerBase)
    with pytest.raises(TypeError):
        CrawlerRunnerBase()

    class Own(CrawlerRunnerBase):
        def crawl(self, crawler_or_spidercls, *args, **kwargs):
            crawler = self.create_crawler(crawler_or_spidercls)
            self.crawlers.add(crawler)
            return crawler

    runner = Own({"BOT_NAME": "own"})
    crawler = runner.crawl(Quiet)
    assert crawler.spidercls is Quiet and runner.crawlers == {crawler}
    assert crawler.settings["BOT_NAME"] == "own" and runner.bootstrap_failed is False
    assert runner.create_crawler(crawler) is crawler
    with pytest.raises(ValueError, match="cannot be a spider object"):
        runner.create_crawler(Quiet())


@pytest.mark.parametrize(("settings", "scrapy2", "expected"), [
    ({}, True, AsyncCrawlerProcess),  # Scrapy 2.19's default
    ({"FORCE_CRAWLER_PROCESS": True}, True, CrawlerProcess),
    ({"TWISTED_REACTOR": "twisted.internet.epollreactor.EPollReactor"}, True, CrawlerProcess),
    ({"TWISTED_REACTOR": None}, True, AsyncCrawlerProcess),
    ({}, False, CrawlerProcess),  # a Scrapy 1.2 (optparse) command
])
def test_force_crawler_process(settings, scrapy2, expected):
    assert crawler_process_class(Settings(settings), scrapy2=scrapy2) is expected
