import logging
import threading

import pytest

from crawlfw.spiders import Spider
from crawlfw.statscollectors import DummyStatsCollector, MemoryStatsCollector, StatsCollector
from tests.extensions._crawler import get_crawler


@pytest.fixture
def crawler():
    return get_crawler()


@pytest.fixture
def spider():
    return Spider(name="foo")


def test_exported_names():
    import crawlfw.statscollectors as mod

    assert set(mod.__all__) == {"StatsCollector", "MemoryStatsCollector", "DummyStatsCollector"}


def test_default_class_is_memory(crawler):
    assert type(crawler.stats) is MemoryStatsCollector


def test_collector_operations(crawler, spider):
    stats = StatsCollector(crawler)
    assert stats.get_stats() == {}
    assert stats.get_value("anything") is None
    assert stats.get_value("anything", "default") == "default"
    stats.set_value("test", "value")
    assert stats.get_stats() == {"test": "value"}
    stats.set_value("test2", 23)
    assert stats.get_stats() == {"test": "value", "test2": 23}
    assert stats.get_value("test2") == 23
    stats.inc_value("test2")
    assert stats.get_value("test2") == 24
    stats.inc_value("test2", 6)
    assert stats.get_value("test2") == 30
    stats.max_value("test2", 6)
    assert stats.get_value("test2") == 30
    stats.max_value("test2", 40)
    assert stats.get_value("test2") == 40
    stats.max_value("test3", 1)
    assert stats.get_value("test3") == 1
    stats.min_value("test2", 60)
    assert stats.get_value("test2") == 40
    stats.min_value("test2", 35)
    assert stats.get_value("test2") == 35
    stats.min_value("test4", 7)
    assert stats.get_value("test4") == 7


@pytest.mark.parametrize("count,start,expected", [(1, 0, 1), (5, 0, 5), (1, 10, 11), (2.5, 0, 2.5)])
def test_inc_value_start(crawler, count, start, expected):
    stats = StatsCollector(crawler)
    stats.inc_value("k", count, start)
    assert stats.get_value("k") == expected


def test_get_stats_is_a_snapshot(crawler):
    stats = StatsCollector(crawler)
    stats.set_value("a", 1)
    snap = stats.get_stats()
    stats.set_value("b", 2)
    snap["c"] = 3
    assert snap == {"a": 1, "c": 3}
    assert stats.get_stats() == {"a": 1, "b": 2}


def test_set_stats_and_clear(crawler):
    stats = StatsCollector(crawler)
    stats.set_stats({"x": 1})
    assert stats.get_stats() == {"x": 1}
    stats.clear_stats()
    assert stats.get_stats() == {}


def test_spider_argument_accepted(crawler, spider):
    stats = StatsCollector(crawler)
    stats.set_value("a", 1, spider=spider)
    stats.inc_value("a", spider=spider)
    assert stats.get_value("a", spider=spider) == 2
    assert stats.get_stats(spider) == {"a": 2}


def test_dummy_collector(crawler):
    stats = DummyStatsCollector(crawler)
    assert stats.get_stats() == {}
    assert stats.get_value("anything") is None
    assert stats.get_value("anything", "default") == "default"
    stats.set_value("test", "value")
    stats.inc_value("v1")
    stats.max_value("v2", 100)
    stats.min_value("v3", 100)
    stats.set_stats({"test": 1})
    assert stats.get_stats() == {}


def test_memory_collector_persists_by_spider_name(crawler, spider):
    stats = MemoryStatsCollector(crawler)
    stats.open_spider(spider)
    stats.set_value("x", 1)
    stats.close_spider(spider, "finished")
    assert stats.spider_stats == {"foo": {"x": 1}}


@pytest.mark.parametrize("dump", [True, False])
def test_close_spider_dump(dump, spider, caplog):
    stats = MemoryStatsCollector(get_crawler({"STATS_DUMP": dump}))
    stats.set_value("some_key", 42)
    with caplog.at_level(logging.INFO, logger="crawlfw.statscollectors"):
        stats.close_spider(spider, "finished")
    dumped = [r for r in caplog.records if r.getMessage().startswith("Dumping crawlfw stats:\n")]
    if dump:
        assert len(dumped) == 1
        assert "{'some_key': 42}" in dumped[0].getMessage()
        assert dumped[0].spider is spider
    else:
        assert dumped == []


def test_inc_value_thread_safe(crawler):
    stats = StatsCollector(crawler)
    n_threads, n = 8, 2000
    barrier = threading.Barrier(n_threads)

    def work():
        barrier.wait()
        for _ in range(n):
            stats.inc_value("count")
            stats.max_value("max", 1)

    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert stats.get_value("count") == n_threads * n
