"""HttpErrorMiddleware: which statuses reach the callback, HttpError, log and stats."""

import logging

import pytest

from crawlfw.exceptions import IgnoreRequest
from crawlfw.http import Request, Response
from crawlfw.spidermiddlewares.httperror import HttpError, HttpErrorMiddleware
from crawlfw.spiders import Spider
from tests.downloadermiddlewares._support import close_crawler, get_crawler, open_spider


class HandlingSpider(Spider):
    name = "handling"
    handle_httpstatus_list = [404]


def response(status, meta=None):
    request = Request("http://example.com/", meta=meta or {})
    return Response("http://example.com/", status=status, request=request)


@pytest.mark.parametrize(
    "settings, spidercls, meta, status, passes",
    [
        ({}, Spider, {}, 200, True),
        ({}, Spider, {}, 204, True),
        ({}, Spider, {}, 299, True),
        ({}, Spider, {}, 301, False),
        ({}, Spider, {}, 404, False),
        ({}, Spider, {}, 500, False),
        ({}, HandlingSpider, {}, 404, True),
        ({}, HandlingSpider, {}, 402, False),
        ({"HTTPERROR_ALLOWED_CODES": [402]}, Spider, {}, 402, True),
        # the spider's list replaces the setting
        ({"HTTPERROR_ALLOWED_CODES": [402]}, HandlingSpider, {}, 402, False),
        ({"HTTPERROR_ALLOW_ALL": True}, Spider, {}, 500, True),
        ({}, Spider, {"handle_httpstatus_all": True}, 500, True),
        ({}, Spider, {"handle_httpstatus_all": False}, 500, False),
        ({}, Spider, {"handle_httpstatus_list": [500]}, 500, True),
        # the meta list replaces the others, even HTTPERROR_ALLOW_ALL
        ({"HTTPERROR_ALLOW_ALL": True}, Spider, {"handle_httpstatus_list": [500]}, 404, False),
        ({}, HandlingSpider, {"handle_httpstatus_list": [500]}, 404, False),
    ],
)
def test_filter(settings, spidercls, meta, status, passes):
    crawler = get_crawler(settings, spidercls)
    spider = open_spider(crawler, getattr(spidercls, "name", None) or "test")
    try:
        mw = HttpErrorMiddleware.from_crawler(crawler)
        resp = response(status, meta)
        if passes:
            assert mw.process_spider_input(resp, spider) is None
        else:
            with pytest.raises(HttpError) as excinfo:
                mw.process_spider_input(resp, spider)
            assert excinfo.value.response is resp
            assert isinstance(excinfo.value, IgnoreRequest)
    finally:
        close_crawler(crawler, spider)


def test_exception_is_swallowed_logged_and_counted(caplog):
    crawler = get_crawler()
    spider = open_spider(crawler)
    try:
        mw = HttpErrorMiddleware.from_crawler(crawler)
        resp = response(503)
        caplog.set_level(logging.INFO, logger="crawlfw.spidermiddlewares.httperror")
        assert mw.process_spider_exception(resp, HttpError(resp, "x"), spider) == []
        assert mw.process_spider_exception(resp, ValueError(), spider) is None
        assert caplog.records[-1].levelno == logging.INFO
        assert caplog.records[-1].getMessage() == (
            "Ignoring response <503 http://example.com/>: HTTP status code is not handled or not allowed"
        )
        assert crawler.stats.get_value("httperror/response_ignored_count") == 1
        assert crawler.stats.get_value("httperror/response_ignored_status_count/503") == 1
    finally:
        close_crawler(crawler, spider)
