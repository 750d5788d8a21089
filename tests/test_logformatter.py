import logging
import os

import pytest

from crawlfw.exceptions import DropItem
from crawlfw.http import Request, Response
from crawlfw.item import Field, Item
from crawlfw.logformatter import LogFormatter
from crawlfw.spiders import Spider


class CustomItem(Item):
    name = Field()

    def __str__(self):
        return f"name: {self['name']}"


@pytest.fixture
def formatter():
    return LogFormatter()


@pytest.fixture
def spider():
    return Spider(name="default")


def render(d):
    return d["msg"] % d["args"]


@pytest.mark.parametrize("req_kwargs,resp_kwargs,expected", [
    ({}, {}, "Crawled (200) <GET http://www.example.com> (referer: None)"),
    ({"headers": {"Referer": "http://example.com"}}, {},
     "Crawled (200) <GET http://www.example.com> (referer: http://example.com)"),
    ({}, {"flags": ["cached"]},
     "Crawled (200) <GET http://www.example.com> (referer: None) ['cached']"),
    ({"flags": ["test", "flag"]}, {"flags": ["cached"]},
     "Crawled (200) <GET http://www.example.com> ['test', 'flag'] (referer: None) ['cached']"),
    ({"headers": {"Referer": b"http://\xc3\xa9.example/\xff"}}, {},
     "Crawled (200) <GET http://www.example.com> (referer: http://\u00e9.example/\ufffd)"),
])
def test_crawled(formatter, spider, req_kwargs, resp_kwargs, expected):
    req = Request("http://www.example.com", **req_kwargs)
    res = Response("http://www.example.com", **resp_kwargs)
    logkws = formatter.crawled(req, res, spider)
    assert logkws["level"] == logging.DEBUG
    assert render(logkws) == expected


def test_scraped(formatter, spider):
    item = CustomItem(name="\xa3")
    response = Response("http://www.example.com")
    logkws = formatter.scraped(item, response, spider)
    assert logkws["level"] == logging.DEBUG
    assert render(logkws) == "Scraped from <200 http://www.example.com>" + os.linesep + "name: \xa3"


def test_scraped_from_exception(formatter, spider):
    logkws = formatter.scraped({"a": 1}, ValueError("bad thing"), spider)
    assert render(logkws) == "Scraped from bad thing" + os.linesep + "{'a': 1}"


def test_dropped(formatter, spider):
    item = {}
    exception = DropItem("\u2018")
    response = Response("http://www.example.com")
    logkws = formatter.dropped(item, exception, response, spider)
    assert logkws["level"] == logging.WARNING
    assert render(logkws) == "Dropped: \u2018" + os.linesep + "{}"


def test_from_crawler():
    assert isinstance(LogFormatter.from_crawler(object()), LogFormatter)


# -- Scrapy 2's item_error, spider_error, download_error (issue 29); the values are
#    Scrapy 2.19's for the same calls.

def test_message_constants():
    from crawlfw import logformatter

    assert logformatter.ITEMERRORMSG == "Error processing %(item)s"
    assert logformatter.SPIDERERRORMSG == "Spider error processing %(request)s (referer: %(referer)s)"
    assert logformatter.DOWNLOADERRORMSG_SHORT == "Error downloading %(request)s"
    assert logformatter.DOWNLOADERRORMSG_LONG == "Error downloading %(request)s: %(errmsg)s"
    assert set(logformatter.LogFormatterResult.__annotations__) == {"level", "msg", "args"}


def test_item_error(formatter, spider):
    logkws = formatter.item_error({"a": 1}, ValueError("x"), Response("http://e.com"), spider)
    assert logkws["level"] == logging.ERROR
    assert render(logkws) == "Error processing {'a': 1}"


def test_spider_error(formatter, spider):
    from crawlfw.utils.failure import Failure

    request = Request("http://www.example.com", headers={"Referer": "http://r.example/"})
    logkws = formatter.spider_error(Failure(ValueError("x")), request,
                                    Response("http://www.example.com"), spider)
    assert logkws["level"] == logging.ERROR
    assert render(logkws) == (
        "Spider error processing <GET http://www.example.com> (referer: http://r.example/)")


def test_download_error(formatter, spider):
    from crawlfw.utils.failure import Failure

    request = Request("http://www.example.com")
    failure = Failure(ValueError("x"))
    short = formatter.download_error(failure, request, spider)
    long = formatter.download_error(failure, request, spider, "Connection refused")
    assert short["level"] == long["level"] == logging.ERROR
    assert render(short) == "Error downloading <GET http://www.example.com>"
    assert render(long) == "Error downloading <GET http://www.example.com>: Connection refused"


def test_format_event_falls_back_for_a_duck_typed_formatter(spider):
    from crawlfw.logformatter import format_event

    class Old:  # a Scrapy 1.2 formatter that does not subclass LogFormatter
        pass

    logkws = format_event(Old(), "item_error", {"a": 1}, ValueError("x"), None, spider)
    assert render(logkws) == "Error processing {'a': 1}"
