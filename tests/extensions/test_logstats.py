import logging
import threading

import pytest

from crawlfw import signals
from crawlfw.exceptions import NotConfigured
from crawlfw.extensions.logstats import LogStats
from tests.extensions._crawler import get_crawler


@pytest.mark.parametrize("interval", [0, "0", 0.0])
def test_disabled_with_zero_interval(interval):
    with pytest.raises(NotConfigured):
        LogStats.from_crawler(get_crawler({"LOGSTATS_INTERVAL": interval}))


def test_log_line_and_rates(caplog):
    crawler = get_crawler()
    ext = LogStats(crawler.stats, interval=30.0)  # rates are per minute: x2
    spider = crawler._create_spider(name="ls")
    crawler.stats.set_value("response_received_count", 10)
    crawler.stats.set_value("item_scraped_count", 4)
    with caplog.at_level(logging.INFO, logger="crawlfw.extensions.logstats"):
        ext.log(spider)
        crawler.stats.inc_value("response_received_count", 5)
        ext.log(spider)
    assert [r.getMessage() for r in caplog.records] == [
        "Crawled 10 pages (at 20 pages/min), scraped 4 items (at 8 items/min)",
        "Crawled 15 pages (at 10 pages/min), scraped 4 items (at 0 items/min)",
    ]
    assert caplog.records[0].spider is spider


def test_logs_on_open_repeats_and_stops_on_close(caplog):
    crawler = get_crawler({"LOGSTATS_INTERVAL": 0.01})
    calls = []
    third_call = threading.Event()

    class CountingLogStats(LogStats):
        def log(self, spider):
            calls.append(threading.current_thread().name)
            super().log(spider)
            if len(calls) >= 3:
                third_call.set()

    ext = CountingLogStats.from_crawler(crawler)
    spider = crawler._create_spider(name="ls")
    with caplog.at_level(logging.INFO, logger="crawlfw.extensions.logstats"):
        crawler.signals.send_catch_log(signals.spider_opened, spider=spider)
        assert third_call.wait(10), "the periodic log did not repeat"
        crawler.signals.send_catch_log(signals.spider_closed, spider=spider, reason="finished")
    # every line is logged on the timer thread, never on the thread opening the spider
    assert set(calls) == {"crawlfw-logstats"}
    assert not ext.task.running
    assert not ext.task._thread.is_alive()
    ours = [r for r in caplog.records if getattr(r, "spider", None) is spider]
    assert ours[0].getMessage().startswith("Crawled 0 pages (at 0 pages/min)")


def test_close_before_open_is_harmless():
    crawler = get_crawler()
    ext = LogStats.from_crawler(crawler)
    spider = crawler._create_spider(name="ls")
    # send_catch_log catches a handler's exception and returns it: look at the results,
    # or a raising spider_closed would pass unnoticed
    results = crawler.signals.send_catch_log(signals.spider_closed, spider=spider, reason="x")
    [result] = [value for receiver, value in results if getattr(receiver, "__self__", None) is ext]
    assert not isinstance(result, BaseException), result
    ext.spider_closed(spider, "x")  # called directly too: an exception fails the test
    assert ext.task is None


@pytest.mark.slow
def test_first_line_shows_real_figures_within_10_s(caplog):
    """With Scrapy's 60 s interval the first line comes FIRST_LINE_S after the spider
    opens, with the pages crawled meanwhile (not "Crawled 0 pages" at open)."""
    crawler = get_crawler({"LOGSTATS_INTERVAL": 60.0})
    ext = LogStats.from_crawler(crawler)
    spider = crawler._create_spider(name="ls")
    logged = threading.Event()
    handler = logging.Handler()
    # only this test's spider: another test's LogStats timer left running in this
    # process (a crawler never closed) logs "Crawled 0 pages" through the same logger
    handler.emit = lambda record: getattr(record, "spider", None) is spider and logged.set()
    stats_logger = logging.getLogger("crawlfw.extensions.logstats")
    stats_logger.addHandler(handler)
    try:
        with caplog.at_level(logging.INFO, logger="crawlfw.extensions.logstats"):
            crawler.signals.send_catch_log(signals.spider_opened, spider=spider)
            crawler.stats.set_value("response_received_count", 10)
            crawler.stats.set_value("item_scraped_count", 5)
            assert logged.wait(10), "no LogStats line within 10 s"
            crawler.signals.send_catch_log(signals.spider_closed, spider=spider,
                                           reason="finished")
    finally:
        stats_logger.removeHandler(handler)
    assert not ext.task.running
    # rates over the FIRST_LINE_S (5 s) since the spider opened: x12 per minute
    ours = [r for r in caplog.records if getattr(r, "spider", None) is spider]
    assert ours[0].getMessage() == (
        "Crawled 10 pages (at 120 pages/min), scraped 5 items (at 60 items/min)")


# -- Scrapy 2.11's calculate_stats / calculate_final_stats (issue 29) ------------------

def test_calculate_stats_and_final_stats():
    import datetime

    crawler = get_crawler()
    ext = LogStats(crawler.stats, interval=30.0)
    spider = crawler._create_spider(name="ls")
    crawler.stats.set_value("response_received_count", 10)
    crawler.stats.set_value("item_scraped_count", 4)
    ext.calculate_stats()
    assert (ext.pages, ext.items, ext.prate, ext.irate) == (10, 4, 20.0, 8.0)
    assert ext.calculate_final_stats(spider) == (None, None)  # no times
    start = datetime.datetime(2026, 1, 1, 12, 0, 0)
    crawler.stats.set_value("start_time", start)
    crawler.stats.set_value("finish_time", start + datetime.timedelta(seconds=0.5))
    assert ext.calculate_final_stats(spider) == (None, None)  # Scrapy: whole seconds
    ext.spider_closed(spider, "finished")  # set to None, as Scrapy 2.19 dumps them
    stats = crawler.stats.get_stats()
    assert stats["responses_per_minute"] is None and stats["items_per_minute"] is None
    crawler.stats.set_value("finish_time", start + datetime.timedelta(seconds=120))
    assert ext.calculate_final_stats(spider) == (5.0, 2.0)
    ext.spider_closed(spider, "finished")
    assert crawler.stats.get_value("responses_per_minute") == 5.0
    assert crawler.stats.get_value("items_per_minute") == 2.0
