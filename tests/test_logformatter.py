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
