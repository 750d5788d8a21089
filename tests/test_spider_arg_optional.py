"""Scrapy 2.19 made the ``spider`` argument of its built-in components' hooks optional
(issue 29): called without it, each hook acts for its crawler's spider, as Scrapy 2.19's
do; called with it (Scrapy 1.2, crawlfw's managers), nothing changes."""

import inspect

import pytest

from crawlfw.downloadermiddlewares.cookies import CookiesMiddleware
from crawlfw.downloadermiddlewares.defaultheaders import DefaultHeadersMiddleware
from crawlfw.downloadermiddlewares.downloadtimeout import DownloadTimeoutMiddleware
from crawlfw.downloadermiddlewares.httpauth import HttpAuthMiddleware
from crawlfw.downloadermiddlewares.httpcache import HttpCacheMiddleware
from crawlfw.downloadermiddlewares.httpcompression import HttpCompressionMiddleware
from crawlfw.downloadermiddlewares.httpproxy import HttpProxyMiddleware
from crawlfw.downloadermiddlewares.redirect import MetaRefreshMiddleware, RedirectMiddleware
from crawlfw.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from crawlfw.downloadermiddlewares.stats import DownloaderStats
from crawlfw.downloadermiddlewares.useragent import UserAgentMiddleware
from crawlfw.http import HtmlResponse, Request, Response
from crawlfw.pipelines.files import FilesPipeline
from crawlfw.pipelines.media import MediaPipeline
from crawlfw.spidermiddlewares.depth import DepthMiddleware
from crawlfw.spidermiddlewares.httperror import HttpError, HttpErrorMiddleware
from crawlfw.spiders import Spider
from crawlfw.statscollectors import MemoryStatsCollector, StatsCollector
from crawlfw.utils.test import get_crawler


class OwnSpider(Spider):
    name = "own"
    user_agent = "own-agent/1.0"
    download_timeout = 7
    http_user = "user"
    http_pass = "secret"
    http_auth_domain = "example.com"
    handle_httpstatus_list = [404]


@pytest.fixture
def crawler(tmp_path):
    crawler = get_crawler(OwnSpider, {"HTTPCACHE_ENABLED": True,
                                      "HTTPCACHE_DIR": str(tmp_path / "cache"),
                                      "FILES_STORE": str(tmp_path / "files")})
    crawler.spider = OwnSpider.from_crawler(crawler)
    return crawler


#: (class, hook) of every built-in hook whose ``spider`` Scrapy 2.19 made optional.
HOOKS = [
    (CookiesMiddleware, "process_request"), (CookiesMiddleware, "process_response"),
    (DefaultHeadersMiddleware, "process_request"),
    (DownloadTimeoutMiddleware, "process_request"), (HttpAuthMiddleware, "process_request"),
    (HttpCacheMiddleware, "process_request"), (HttpCacheMiddleware, "process_response"),
    (HttpCacheMiddleware, "process_exception"),
    (HttpCompressionMiddleware, "process_request"),
    (HttpCompressionMiddleware, "process_response"),
    (HttpProxyMiddleware, "process_request"),
    (RedirectMiddleware, "process_response"), (MetaRefreshMiddleware, "process_response"),
    (RobotsTxtMiddleware, "process_request"),
    (DownloaderStats, "process_request"), (DownloaderStats, "process_response"),
    (DownloaderStats, "process_exception"), (UserAgentMiddleware, "process_request"),
    (DepthMiddleware, "process_spider_output"),
    (HttpErrorMiddleware, "process_spider_input"),
    (HttpErrorMiddleware, "process_spider_exception"),
    (StatsCollector, "open_spider"), (StatsCollector, "close_spider"),
    (MediaPipeline, "open_spider"), (MediaPipeline, "process_item"),
]


@pytest.mark.parametrize(("cls", "hook"), HOOKS, ids=lambda x: getattr(x, "__name__", x))
def test_spider_is_optional_and_last(cls, hook):
    params = list(inspect.signature(getattr(cls, hook)).parameters.values())
    spider = next(p for p in params if p.name == "spider")
    assert spider.default is None
    # still where Scrapy 1.2 had it: a positional call keeps working
    assert spider.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD


def test_header_middlewares_use_the_crawlers_spider(crawler):
    request = Request("http://www.example.com/page")
    UserAgentMiddleware.from_crawler(crawler).process_request(request)
    DownloadTimeoutMiddleware.from_crawler(crawler).process_request(request)
    HttpAuthMiddleware.from_crawler(crawler).process_request(request)
    assert request.headers[b"User-Agent"] == b"own-agent/1.0"
    assert request.meta["download_timeout"] == 7
    assert request.headers[b"Authorization"].startswith(b"Basic ")
    # with the spider given, as crawlfw's managers call them: the same
    given = Request("http://www.example.com/page")
    UserAgentMiddleware.from_crawler(crawler).process_request(given, crawler.spider)
    assert given.headers[b"User-Agent"] == b"own-agent/1.0"


def test_redirects_honour_the_crawlers_spider(crawler):
    mw = RedirectMiddleware.from_crawler(crawler)
    request = Request("http://www.example.com/a")
    not_found = Response(request.url, status=404)
    assert mw.process_response(request, not_found) is not_found  # not a redirect
    moved = Response(request.url, status=301, headers={"Location": "/b"})
    handled = Request("http://www.example.com/a", meta={"handle_httpstatus_list": [301]})
    assert mw.process_response(handled, moved) is moved
    redirected = mw.process_response(request, moved)
    assert redirected.url == "http://www.example.com/b"

    class Handles301(OwnSpider):
        handle_httpstatus_list = [301]

    crawler.spider = Handles301.from_crawler(crawler)
    assert mw.process_response(request, moved) is moved  # the spider handles 301s
    refresh = HtmlResponse(request.url, body=b'<meta http-equiv="refresh" content="0;url=/c">')
    assert MetaRefreshMiddleware.from_crawler(crawler).process_response(
        request, refresh).url == "http://www.example.com/c"


def test_httperror_reads_the_crawlers_spider(crawler):
    mw = HttpErrorMiddleware.from_crawler(crawler)
    request = Request("http://x.test/")
    assert mw.process_spider_input(Response(request.url, status=404, request=request)) is None
    error_response = Response(request.url, status=500, request=request)
    with pytest.raises(HttpError) as raised:
        mw.process_spider_input(error_response)
    assert mw.process_spider_exception(error_response, raised.value) == []
    assert crawler.stats.get_value("httperror/response_ignored_status_count/500") == 1


def test_httpcache_stores_and_answers_for_the_crawlers_spider(crawler):
    mw = HttpCacheMiddleware.from_crawler(crawler)
    request = Request("http://www.example.com/cached")
    assert mw.process_request(request) is None
    response = Response(request.url, body=b"body", headers={"Date": "now"})
    assert mw.process_response(request, response) is response
    cached = mw.process_request(Request("http://www.example.com/cached"))
    assert cached is not None and cached.body == b"body" and "cached" in cached.flags
    assert crawler.stats.get_value("httpcache/hit") == 1
    mw.spider_closed(crawler.spider)


def test_stats_collectors_close_for_the_crawlers_spider(crawler):
    stats = MemoryStatsCollector(crawler)
    stats.open_spider()
    stats.set_value("x", 1)
    stats.close_spider(reason="finished")
    assert stats.spider_stats == {"own": {"x": 1}}


def test_media_pipelines_take_the_crawlers_spider(crawler):
    pipe = MediaPipeline.from_crawler(crawler)
    pipe.open_spider()
    assert pipe.spiderinfo.spider is crawler.spider
    assert pipe.process_item({"no": "media"}) == {"no": "media"}
    files = FilesPipeline.from_crawler(crawler)
    files.inc_stats("downloaded")  # Scrapy 2.19
    files.inc_stats(crawler.spider, "uptodate")  # Scrapy 1.2, as crawlfw calls it
    files.inc_stats(status="cached", spider=crawler.spider)
    assert crawler.stats.get_value("file_count") == 3
    assert crawler.stats.get_value("file_status_count/downloaded") == 1
    assert crawler.stats.get_value("file_status_count/uptodate") == 1
    assert crawler.stats.get_value("file_status_count/cached") == 1
