"""Scrapy 2.19's downloader-side OffsiteMiddleware (issue 29): allowed_domains,
dont_filter and meta['allow_offsite'], one log line per domain shared with the spider
middleware, and a crawl where both are on (a start request filtered once) or either is
disabled with None."""

import logging

import pytest

import crawlfw
from crawlfw.downloadermiddlewares.offsite import OffsiteMiddleware
from crawlfw.exceptions import IgnoreRequest
from crawlfw.http import Request, Response
from crawlfw.settings import default_settings
from crawlfw.spidermiddlewares.offsite import OffsiteMiddleware as SpiderOffsiteMiddleware
from tests.downloadermiddlewares._support import close_crawler, get_crawler, open_spider
from tests.support.crawl import run_crawl
from tests.support.servers import StaticSiteServer

DMW = "crawlfw.downloadermiddlewares.offsite.OffsiteMiddleware"
SMW = "crawlfw.spidermiddlewares.offsite.OffsiteMiddleware"


@pytest.fixture
def crawler():
    crawler = get_crawler()
    yield crawler
    close_crawler(crawler, crawler.spider)


@pytest.mark.parametrize("url, kept", [
    ("http://scrapytest.org/1", True),
    ("http://sub.scrapytest.org/1", True),
    ("http://notscrapytest.org/1", False),
    ("http://scrapytest.org.evil.com/1", False),
])
def test_process_request(crawler, url, kept):
    mw = OffsiteMiddleware.from_crawler(crawler)
    spider = open_spider(crawler, allowed_domains=["scrapytest.org"])
    if kept:
        assert mw.process_request(Request(url), spider) is None
        assert mw.process_request(Request(url)) is None  # Scrapy 2.19: no spider
    else:
        with pytest.raises(IgnoreRequest, match="Filtered offsite request to"):
            mw.process_request(Request(url))
        assert mw.process_request(Request(url, dont_filter=True)) is None
        assert mw.process_request(Request(url, meta={"allow_offsite": True})) is None


def test_not_on_by_default():
    # Scrapy 1.2's spider middleware filters; Scrapy 2.19's is there to enable
    assert DMW not in default_settings.DOWNLOADER_MIDDLEWARES_BASE
    assert SMW in default_settings.SPIDER_MIDDLEWARES_BASE


def test_one_line_per_domain_for_both(crawler, caplog):
    caplog.set_level(logging.DEBUG)
    dmw = OffsiteMiddleware.from_crawler(crawler)
    smw = SpiderOffsiteMiddleware.from_crawler(crawler)
    spider = open_spider(crawler, allowed_domains=["scrapytest.org"])
    response = Response("http://scrapytest.org/", request=Request("http://scrapytest.org/"))
    out = list(smw.process_spider_output(response, [Request("http://a.com/1"),
                                                    Request("http://a.com/2", meta={
                                                        "allow_offsite": True})], spider))
    assert [r.url for r in out] == ["http://a.com/2"]
    for url in ("http://a.com/3", "http://b.com/1"):
        with pytest.raises(IgnoreRequest):
            dmw.process_request(Request(url), spider)
    lines = [r.getMessage() for r in caplog.records if "Filtered offsite" in r.getMessage()]
    assert lines == ["Filtered offsite request to 'a.com': <GET http://a.com/1>",
                     "Filtered offsite request to 'b.com': <GET http://b.com/1>"]
    assert crawler.stats.get_value("offsite/domains") == 2
    assert crawler.stats.get_value("offsite/filtered") == 3


@pytest.fixture
def site(tmp_path):
    (tmp_path / "index.html").write_text(
        '<a href="http://offsite.invalid/a">out</a>')
    server = StaticSiteServer(tmp_path).start()
    yield server
    server.stop()


def _spider(url):
    class Both(crawlfw.Spider):
        name = "both"
        allowed_domains = ["127.0.0.1"]
        start_urls = [f"{url}/index.html"]  # (start_urls' requests have dont_filter)

        def start_requests(self):
            yield from super().start_requests()
            yield crawlfw.Request("http://start.offsite.invalid/")

        def parse(self, response):
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href)
            yield {"url": response.url}

    return Both


@pytest.mark.slow
@pytest.mark.parametrize("settings, start_filtered, downloaded", [
    ({"DOWNLOADER_MIDDLEWARES": {DMW: 50}}, True, 1),  # both on (Scrapy 2.19's filtering)
    ({"DOWNLOADER_MIDDLEWARES": {DMW: 50}, "SPIDER_MIDDLEWARES": {SMW: None}}, True, 1),
    ({}, False, 2),  # Scrapy 1.2's: the offsite start request is tried (DNS fails)
])
def test_in_a_crawl(site, settings, start_filtered, downloaded, caplog):
    caplog.set_level(logging.DEBUG)
    crawl = run_crawl(_spider(site.url), {"RETRY_ENABLED": False, **settings})
    assert crawl.finish_reason == "finished"
    assert [i["url"] for i in crawl.items] == [f"{site.url}/index.html"]
    lines = [r.getMessage() for r in caplog.records if "Filtered offsite" in r.getMessage()]
    expected = ["Filtered offsite request to 'offsite.invalid': <GET http://offsite.invalid/a>"]
    if start_filtered:
        expected.append("Filtered offsite request to 'start.offsite.invalid': "
                        "<GET http://start.offsite.invalid/>")
    assert sorted(lines) == sorted(expected)  # each once
    assert crawl.stats["offsite/filtered"] == len(expected)
    assert crawl.stats.get("downloader/request_count") == downloaded


def test_request_scheduled_is_process_request(crawler):
    mw = OffsiteMiddleware.from_crawler(crawler)
    open_spider(crawler, allowed_domains=["scrapytest.org"])
    mw.request_scheduled(Request("http://scrapytest.org/"), crawler.spider)
    with pytest.raises(IgnoreRequest):
        mw.request_scheduled(Request("http://elsewhere.org/"), crawler.spider)
