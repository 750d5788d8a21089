"""``Spider.logger`` is Scrapy 2.19's ``SpiderLoggerAdapter`` (issue 29): the record gets
``spider`` and keeps the ``extra`` the call gives."""

import logging

import crawlfw
from crawlfw.utils.log import SpiderLoggerAdapter


class Named(crawlfw.Spider):
    name = "named"


def test_logger_is_a_spider_logger_adapter(caplog):
    spider = Named()
    assert isinstance(spider.logger, SpiderLoggerAdapter)
    assert spider.logger.logger is logging.getLogger("named")
    with caplog.at_level(logging.INFO, logger="named"):
        spider.logger.info("page %s", 2, extra={"url": "http://a.test/"})
        spider.log("via log()", logging.WARNING)
    first, second = caplog.records
    assert (first.getMessage(), first.spider, first.url) == ("page 2", spider,
                                                             "http://a.test/")
    assert (second.getMessage(), second.spider, second.levelno) == (
        "via log()", spider, logging.WARNING)
