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
    before = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
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
    after = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)

    stats = crawler.stats.get_stats()
    assert set(stats) == {
        "start_time", "finish_time", "finish_reason", "item_scraped_count",
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
        assert value.tzinfo is None  # naive UTC, as datetime.utcnow() in Scrapy 1.2
        assert before <= value <= after
    assert stats["start_time"] <= stats["finish_time"]
