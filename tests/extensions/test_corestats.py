import datetime

from crawlfw import signals
from crawlfw.exceptions import DropItem
from crawlfw.extensions.corestats import CoreStats
from crawlfw.http import Request, Response
from tests.extensions._crawler import get_crawler


class MyDrop(DropItem):
    pass


def test_core_stats_keys():
    crawler = get_crawler()
    ext = CoreStats.from_crawler(crawler)  # noqa: F841 - receivers are held weakly
    spider = crawler._create_spider(name="core")
    send = crawler.signals.send_catch_log
    before = datetime.datetime.now(datetime.timezone.utc)
    send(signals.spider_opened, spider=spider)
    response = Response("http://example.com/")
    request = Request("http://example.com/")
    for _ in range(3):
        send(signals.response_received, response=response, request=request, spider=spider)
    for _ in range(2):
        send(signals.item_scraped, item={}, response=response, spider=spider)
    send(signals.item_dropped, item={}, response=response, exception=DropItem("x"), spider=spider)
    send(signals.item_dropped, item={}, response=response, exception=MyDrop("y"), spider=spider)
    send(signals.spider_closed, spider=spider, reason="finished")
    after = datetime.datetime.now(datetime.timezone.utc)

    stats = crawler.stats.get_stats()
    assert set(stats) == {
        "start_time", "finish_time", "elapsed_time_seconds", "finish_reason",
        "item_scraped_count",
        "item_dropped_count", "item_dropped_reasons_count/DropItem",
        "item_dropped_reasons_count/MyDrop", "response_received_count",
    }
    assert stats["response_received_count"] == 3
    assert stats["item_scraped_count"] == 2
    assert stats["item_dropped_count"] == 2
    assert stats["item_dropped_reasons_count/DropItem"] == 1
    assert stats["item_dropped_reasons_count/MyDrop"] == 1
    assert stats["finish_reason"] == "finished"
    for key in ("start_time", "finish_time"):
        value = stats[key]
        assert isinstance(value, datetime.datetime)
        # timezone-aware UTC, as Scrapy 2.19's (its stats dump shows
        # datetime.datetime(..., tzinfo=datetime.timezone.utc)); Scrapy 1.2's were naive
        assert value.tzinfo is datetime.timezone.utc
        assert before <= value <= after
    assert stats["start_time"] <= stats["finish_time"]
    # Scrapy 2's CoreStats: seconds between the two, on the monotonic clock (a float)
    elapsed = stats["elapsed_time_seconds"]
    assert isinstance(elapsed, float)
    assert 0 <= elapsed <= (after - before).total_seconds()


class _PrivateDrop(MyDrop):
    """A private helper class: counted under its nearest public base (issue 34)."""


def test_dropped_items_are_counted_under_their_nearest_public_class():
    crawler = get_crawler()
    ext = CoreStats.from_crawler(crawler)  # noqa: F841 - receivers are held weakly
    spider = crawler._create_spider(name="core")
    response = Response("http://example.com/")
    crawler.signals.send_catch_log(signals.item_dropped, item={}, response=response,
                                   exception=_PrivateDrop("z"), spider=spider)
    assert crawler.stats.get_value("item_dropped_reasons_count/MyDrop") == 1
    assert not [k for k in crawler.stats.get_stats() if "_PrivateDrop" in k]
