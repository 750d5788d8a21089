"""What real Scrapy 2 projects do, ported with ``crawlfw port`` (issue 29: kingfisher-collect
and querido-diario, compared by ``tools/port_real_project.py``), each pinned with Scrapy
2.19's behaviour: the private names their code reads, their test helpers' idioms
(``hasattr(cls, "name")``, ``Crawler._apply_settings``, a downloader middleware manager
built by hand), a ``from_crawler`` that changes the settings, ``cmdline.execute`` with
the program name first, and Scrapy-only plugins named in the settings."""

import json
import logging

import pytest

from crawlfw.crawler import Crawler, CrawlerRunner
from crawlfw.exceptions import CrawlStartError
from crawlfw.extensions.closespider import CloseSpider
from crawlfw.http import TextResponse
from crawlfw.http.response.text import _NONE
from crawlfw.spiders import Spider
from crawlfw.statscollectors import MemoryStatsCollector
from crawlfw.utils.test import get_crawler, get_reactor_settings
from tests.test_scrapy2_components import _crawl, _stat


@pytest.fixture(scope="module")
def quotes(site_server):
    return site_server("quotes.toscrape.com")


class OwnJsonResponse(TextResponse):
    """kingfisher-collect's JSONResponse (kingfisher_scrapy/responses.py, which uses
    orjson), renamed; numbers are kept as text to tell its parse from TextResponse's."""

    def json(self):
        if self._cached_decoded_json is _NONE:
            self._cached_decoded_json = json.loads(self.body, parse_int=str)
        return self._cached_decoded_json


def test_a_subclass_parses_json_its_own_way_through_the_private_cache():
    response = OwnJsonResponse("http://example.com", body=b'{"a": [1, 2]}', encoding="utf-8")
    assert response._cached_decoded_json is _NONE
    first = response.json()
    assert first == {"a": ["1", "2"]} and response.json() is first
    # TextResponse.json() shares the cache (Scrapy 2.19's attribute)
    assert TextResponse.json(response) is first
    plain = TextResponse("http://example.com", body=b"[3]", encoding="utf-8")
    assert plain.json() == [3] and plain._cached_decoded_json == [3]


def test_get_reactor_settings_needs_nothing():
    assert get_reactor_settings() == {}
    assert get_reactor_settings() is not get_reactor_settings()


class Named(Spider):
    name = "named"


def test_a_spider_class_without_a_name_has_no_name_attribute():
    # Scrapy 2.19's Spider only annotates `name`: kingfisher-collect's test helper
    # makes a named subclass when `not hasattr(spider_class, "name")`.
    class Nameless(Spider):
        pass

    assert not hasattr(Spider, "name") and not hasattr(Nameless, "name")
    assert Named.name == "named"
    with pytest.raises(ValueError, match="Nameless must have a name"):
        Nameless()
    assert Nameless(name="given").name == "given"


class SampleSpider(Spider):
    """kingfisher-collect's BaseSpider.from_crawler: a spider argument changes a setting."""

    name = "sample"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        if getattr(spider, "sample", None):
            crawler.settings.set("CONCURRENT_REQUESTS", 1, priority="spider")
            crawler.settings.set("CLOSESPIDER_ITEMCOUNT", int(spider.sample),
                                 priority="spider")
        return spider


def test_from_crawler_may_change_the_settings_before_they_are_applied():
    crawler = CrawlerRunner({"CLOSESPIDER_ITEMCOUNT": 50}).create_crawler(SampleSpider)
    assert not crawler.settings.frozen
    crawler.spider = crawler.spidercls.from_crawler(crawler, sample="3")
    assert crawler.settings.getint("CONCURRENT_REQUESTS") == 1
    crawler._apply_settings()
    assert crawler.settings.frozen
    closespider = next(e for e in crawler.extensions.middlewares if isinstance(e, CloseSpider))
    assert closespider.close_on["itemcount"] == 3  # read after from_crawler
    with pytest.raises(TypeError, match="immutable"):
        crawler.settings.set("CONCURRENT_REQUESTS", 2)
    crawler._apply_settings()  # a second call does nothing (Scrapy 2.19)


def test_apply_settings_checks_what_from_crawler_set():
    crawler = Crawler(SampleSpider)
    crawler.settings.set("CONCURRENT_REQUESTS", "many", priority="spider")
    with pytest.raises(CrawlStartError, match="CONCURRENT_REQUESTS"):
        crawler._apply_settings()


def test_the_stats_and_log_formatter_can_be_set_before_the_crawl():
    # kingfisher-collect's spider_with_crawler(): no _apply_settings, its own stats
    crawler = CrawlerRunner(get_reactor_settings()).create_crawler(Named)
    crawler.spider = crawler.spidercls.from_crawler(crawler)
    crawler.stats = MemoryStatsCollector(crawler)
    crawler.stats.set_value("start_time", 1)
    assert crawler.stats.get_value("start_time") == 1
    # Scrapy 1.2's way: read before the crawl, made from the settings as they are
    other = Crawler(Named, {"STATS_CLASS": "crawlfw.statscollectors.DummyStatsCollector"})
    assert type(other.stats).__name__ == "DummyStatsCollector"
    assert get_crawler(Named).settings.frozen


def test_log_records_before_the_stats_exist_are_counted():
    crawler = Crawler(Named)
    logging.getLogger("tests.early").warning("before the stats collector")
    crawler._apply_settings()
    assert crawler.stats.get_value("log_count/WARNING") >= 1


SAMPLE_SPIDER = '''
import crawlfw


class S(crawlfw.Spider):
    name = "sample"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        if spider.sample:
            crawler.settings.set("CLOSESPIDER_ITEMCOUNT", int(spider.sample),
                                 priority="spider")
        return spider

    def start_requests(self):
        for n in range(1, 11):
            yield crawlfw.Request(f"{self.base}/page/{n}/")

    def parse(self, response):
        yield {"page": response.url}
'''


@pytest.mark.slow
def test_a_crawl_honours_what_from_crawler_set(quotes, tmp_path):
    run, items = _crawl(tmp_path, SAMPLE_SPIDER, quotes.url, "-a", "sample=2",
                        "-s", "CONCURRENT_REQUESTS=1")
    assert run.returncode == 0, run.stderr[-3000:]
    assert _stat(run.stderr, "finish_reason") == "'closespider_itemcount'"
    assert 2 <= len(items) < 10, items
