import pytest

from crawlfw import signals
from crawlfw.exceptions import NotConfigured
from crawlfw.extensions.closespider import CloseSpider
from crawlfw.http import Request, Response
from tests.extensions._crawler import get_crawler


def test_not_configured_by_default():
    with pytest.raises(NotConfigured):
        CloseSpider.from_crawler(get_crawler())


def _send_n(crawler, spider, signal, n):
    response = Response("http://example.com/")
    request = Request("http://example.com/")
    for _ in range(n):
        crawler.signals.send_catch_log(signal, item={}, response=response, request=request,
                                       failure=ValueError("x"), spider=spider)


@pytest.mark.parametrize("setting,signal,reason", [
    ("CLOSESPIDER_ITEMCOUNT", signals.item_scraped, "closespider_itemcount"),
    ("CLOSESPIDER_PAGECOUNT", signals.response_received, "closespider_pagecount"),
    ("CLOSESPIDER_ERRORCOUNT", signals.spider_error, "closespider_errorcount"),
])
def test_count_limits_close_once(setting, signal, reason):
    crawler = get_crawler({setting: 3})
    ext = CloseSpider.from_crawler(crawler)  # noqa: F841 - receivers are held weakly
    spider = crawler._create_spider(name="cs")
    _send_n(crawler, spider, signal, 2)
    assert crawler.engine.closed == []
    _send_n(crawler, spider, signal, 1)
    assert crawler.engine.closed == [(spider, reason)]
    _send_n(crawler, spider, signal, 5)  # more events after the limit: no second close
    assert crawler.engine.closed == [(spider, reason)]


def test_other_signals_do_not_count():
    crawler = get_crawler({"CLOSESPIDER_ITEMCOUNT": 1})
    ext = CloseSpider.from_crawler(crawler)  # noqa: F841 - receivers are held weakly
    spider = crawler._create_spider(name="cs")
    _send_n(crawler, spider, signals.response_received, 5)
    assert crawler.engine.closed == []


def test_timeout_closes_spider():
    crawler = get_crawler({"CLOSESPIDER_TIMEOUT": 0.05})
    ext = CloseSpider.from_crawler(crawler)
    spider = crawler._create_spider(name="cs")
    crawler.signals.send_catch_log(signals.spider_opened, spider=spider)
    assert crawler.engine.close_called.wait(10)
    assert crawler.engine.closed == [(spider, "closespider_timeout")]
    assert ext.task.daemon


def test_timeout_cancelled_on_close():
    crawler = get_crawler({"CLOSESPIDER_TIMEOUT": 3600})
    ext = CloseSpider.from_crawler(crawler)
    spider = crawler._create_spider(name="cs")
    crawler.signals.send_catch_log(signals.spider_opened, spider=spider)
    assert ext.task.is_alive()
    crawler.signals.send_catch_log(signals.spider_closed, spider=spider, reason="finished")
    ext.task.join(10)
    assert not ext.task.is_alive()
    assert crawler.engine.closed == []


# -- Scrapy 2.10+'s CLOSESPIDER_PAGECOUNT_NO_ITEM and CLOSESPIDER_TIMEOUT_NO_ITEM
#    (issue 29) ---------------------------------------------------------------------------

def test_pagecount_no_item():
    crawler = get_crawler({"CLOSESPIDER_PAGECOUNT_NO_ITEM": 3})
    ext = CloseSpider.from_crawler(crawler)  # noqa: F841 - receivers are held weakly
    spider = crawler._create_spider(name="cs")
    _send_n(crawler, spider, signals.response_received, 2)
    _send_n(crawler, spider, signals.item_scraped, 1)  # an item: the count starts again
    _send_n(crawler, spider, signals.response_received, 2)
    assert crawler.engine.closed == []
    _send_n(crawler, spider, signals.response_received, 1)
    assert crawler.engine.closed == [(spider, "closespider_pagecount_no_item")]


def test_timeout_no_item(caplog):
    import logging

    crawler = get_crawler({"CLOSESPIDER_TIMEOUT_NO_ITEM": 60})
    ext = CloseSpider.from_crawler(crawler)
    spider = crawler._create_spider(name="cs")
    with caplog.at_level(logging.INFO, logger="crawlfw.extensions.closespider"):
        crawler.signals.send_catch_log(signals.spider_opened, spider=spider)
        try:
            assert ext.task_no_item.running
            assert "Spider will stop when no items are produced after 60 seconds." in caplog.text
            _send_n(crawler, spider, signals.item_scraped, 2)
            ext._count_items_produced(spider)  # the timer's check: items came, go on
            assert crawler.engine.closed == []
            ext._count_items_produced(spider)  # a period without items: close
            assert crawler.engine.closed == [(spider, "closespider_timeout_no_item")]
            assert ("Closing spider since no items were produced in the last 60 seconds."
                    in caplog.text)
        finally:
            crawler.signals.send_catch_log(signals.spider_closed, spider=spider,
                                           reason="x")
    assert ext.task_no_item is None
