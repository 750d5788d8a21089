"""RefererMiddleware and UrlLengthMiddleware."""

import logging

import pytest

from crawlfw.exceptions import NotConfigured
from crawlfw.http import Request, Response
from crawlfw.spidermiddlewares.referer import RefererMiddleware
from crawlfw.spidermiddlewares.urllength import UrlLengthMiddleware
from tests.downloadermiddlewares._support import close_crawler, get_crawler, open_spider

RESPONSE = Response("https://example.com/page?x=1", request=Request("https://example.com/page?x=1"))


def test_referer_set_from_response_url():
    crawler = get_crawler()
    try:
        mw = RefererMiddleware.from_crawler(crawler)
        plain = Request("http://other.com/")  # 1.2: no policy, sent even https -> http
        own = Request("http://example.com/", headers={"Referer": "mine"})
        item = {"a": 1}
        out = list(mw.process_spider_output(RESPONSE, [plain, own, item], None))
        assert out == [plain, own, item]
        assert plain.headers[b"Referer"] == b"https://example.com/page?x=1"
        assert own.headers[b"Referer"] == b"mine"
        assert list(mw.process_spider_output(RESPONSE, None, None)) == []
    finally:
        close_crawler(crawler)


def test_referer_disabled():
    crawler = get_crawler({"REFERER_ENABLED": False})
    try:
        with pytest.raises(NotConfigured):
            RefererMiddleware.from_crawler(crawler)
    finally:
        close_crawler(crawler)


@pytest.mark.parametrize(
    "limit, url, kept",
    [
        (25, "http://example.com/short", True),
        (25, "http://example.com/" + "a" * 6, True),  # exactly 25
        (25, "http://example.com/" + "a" * 7, False),
        (2083, "http://example.com/" + "a" * 2000, True),
    ],
)
def test_url_length(caplog, limit, url, kept):
    crawler = get_crawler({"URLLENGTH_LIMIT": limit})
    spider = open_spider(crawler)
    try:
        mw = UrlLengthMiddleware.from_crawler(crawler)
        caplog.set_level(logging.DEBUG, logger="crawlfw.spidermiddlewares.urllength")
        request = Request(url)
        out = list(mw.process_spider_output(RESPONSE, [request, {"item": 1}], spider))
        assert out == ([request] if kept else []) + [{"item": 1}]
        if not kept:
            assert caplog.records[-1].getMessage().strip() == (
                f"Ignoring link (url length > {limit}): {url}"
            )
            assert crawler.stats.get_value("urllength/request_ignored_count") == 1
    finally:
        close_crawler(crawler, spider)


def test_url_length_disabled():
    crawler = get_crawler({"URLLENGTH_LIMIT": 0})
    try:
        with pytest.raises(NotConfigured):
            UrlLengthMiddleware.from_crawler(crawler)
    finally:
        close_crawler(crawler)
