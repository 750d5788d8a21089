"""OffsiteMiddleware: allowed_domains matching, dont_filter, logging once per host,
stats, entries with ports or schemes."""

import logging

import pytest

from crawlfw.http import Request, Response
from crawlfw.spidermiddlewares.offsite import OffsiteMiddleware, PortWarning, URLWarning
from crawlfw.spiders import Spider
from tests.downloadermiddlewares._support import close_crawler, get_crawler, open_spider


@pytest.fixture
def setup():
    made = []

    def start(**spider_attrs):
        crawler = get_crawler()
        mw = OffsiteMiddleware.from_crawler(crawler)
        spider = open_spider(crawler, **spider_attrs)
        made.append((crawler, spider))
        return crawler, spider, mw

    yield start
    for crawler, spider in made:
        close_crawler(crawler, spider)


RESPONSE = Response("http://scrapytest.org/", request=Request("http://scrapytest.org/"))


@pytest.mark.parametrize(
    "allowed_domains, url, kept",
    [
        (["scrapytest.org"], "http://scrapytest.org/1", True),
        (["scrapytest.org"], "http://sub.scrapytest.org/1", True),
        (["scrapytest.org"], "https://a.b.scrapytest.org:8080/1", True),
        (["scrapytest.org"], "http://notscrapytest.org/1", False),
        (["scrapytest.org"], "http://scrapytest.org.evil.com/1", False),
        (["scrapytest.org"], "http://scrapy2.org/1", False),
        (["scrapytest.org", "scrapy.org"], "http://scrapy.org/1", True),
        (["sub.scrapytest.org"], "http://scrapytest.org/1", False),
        (["ScrapyTest.org"], "http://SCRAPYTEST.ORG/x", True),
        (["127.0.0.1"], "http://127.0.0.1:8000/", True),
        ([], "http://anything.com/", True),
        (None, "http://anything.com/", True),
        ([None, "scrapytest.org"], "http://scrapytest.org/", True),
    ],
)
def test_matching(setup, allowed_domains, url, kept):
    crawler, spider, mw = setup(allowed_domains=allowed_domains)
    request = Request(url)
    assert list(mw.process_spider_output(RESPONSE, [request], spider)) == (
        [request] if kept else []
    )


def test_dont_filter_and_items_pass(setup):
    crawler, spider, mw = setup(allowed_domains=["scrapytest.org"])
    forced = Request("http://elsewhere.com/", dont_filter=True)
    item = {"a": 1}
    assert list(mw.process_spider_output(RESPONSE, [forced, item], spider)) == [forced, item]


def test_logged_once_per_domain_and_counted(setup, caplog):
    crawler, spider, mw = setup(allowed_domains=["scrapytest.org"])
    caplog.set_level(logging.DEBUG, logger="crawlfw.spidermiddlewares.offsite")
    requests = [
        Request("http://a.com/1"),
        Request("http://a.com/2"),
        Request("http://b.com/1"),
        Request("data:text/plain,x"),  # no host: filtered, not logged
    ]
    assert list(mw.process_spider_output(RESPONSE, requests, spider)) == []
    messages = [r.getMessage() for r in caplog.records if r.name.endswith(".offsite")]
    assert messages == [
        "Filtered offsite request to 'a.com': <GET http://a.com/1>",
        "Filtered offsite request to 'b.com': <GET http://b.com/1>",
    ]
    assert crawler.stats.get_value("offsite/domains") == 2
    assert crawler.stats.get_value("offsite/filtered") == 4


@pytest.mark.parametrize(
    "entry, warning",
    [("scrapytest.org:8000", PortWarning), ("http://scrapytest.org/", URLWarning)],
)
def test_bad_entries_are_warned_and_ignored(entry, warning):
    crawler = get_crawler()
    mw = OffsiteMiddleware.from_crawler(crawler)
    try:
        with pytest.warns(warning, match=entry.replace(".", r"\.").replace("/", "/")):
            spider = open_spider(crawler, allowed_domains=[entry, "other.org"])
        assert mw.should_follow(Request("http://other.org/"), spider)
        assert not mw.should_follow(Request("http://scrapytest.org/"), spider)
    finally:
        close_crawler(crawler, crawler.spider)


def test_regex_compiled_once_per_spider(setup):
    crawler, spider, mw = setup(allowed_domains=["scrapytest.org"])
    regex = mw.host_regex
    list(mw.process_spider_output(RESPONSE, [Request("http://scrapytest.org/")], spider))
    assert mw.host_regex is regex
    # used without the signal (a different spider): compiled for that spider
    other = Spider("other", allowed_domains=["example.com"])
    out = list(mw.process_spider_output(RESPONSE, [Request("http://example.com/")], other))
    assert len(out) == 1 and mw.host_regex is not regex
