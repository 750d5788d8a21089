import logging

import pytest

from crawlfw import signals
from crawlfw.exceptions import NotConfigured
from crawlfw.extensions import memusage
from crawlfw.extensions.memusage import MemoryUsage
from tests.extensions._crawler import get_crawler


def test_not_configured_by_default():
    with pytest.raises(NotConfigured):
        MemoryUsage.from_crawler(get_crawler())


def test_virtual_size_is_positive_bytes():
    ext = MemoryUsage.from_crawler(get_crawler({"MEMUSAGE_ENABLED": True}))
    # any CPython process uses more than 1 MiB; ru_maxrss in KiB would be ~1000x smaller
    assert ext.get_virtual_size() > 1024 * 1024


def test_stats_on_engine_start_and_stop():
    crawler = get_crawler({"MEMUSAGE_ENABLED": True})
    ext = MemoryUsage.from_crawler(crawler)
    crawler.signals.send_catch_log(signals.engine_started)
    try:
        assert crawler.stats.get_value("memusage/startup") > 0
        assert crawler.stats.get_value("memusage/max") >= crawler.stats.get_value(
            "memusage/startup")
        assert ext.task.running
    finally:
        crawler.signals.send_catch_log(signals.engine_stopped)
    assert not ext.task.running
    assert not ext.task._thread.is_alive()
    assert crawler.engine.closed == []


def test_limit_closes_spider(caplog):
    crawler = get_crawler({"MEMUSAGE_ENABLED": True, "MEMUSAGE_LIMIT_MB": 1})
    ext = MemoryUsage.from_crawler(crawler)
    spider = crawler._create_spider(name="mem")
    with caplog.at_level(logging.ERROR, logger="crawlfw.extensions.memusage"):
        crawler.signals.send_catch_log(signals.engine_started)
    crawler.signals.send_catch_log(signals.engine_stopped)
    assert crawler.engine.closed == [(spider, "memusage_exceeded")]
    assert crawler.stats.get_value("memusage/limit_reached") == 1
    assert "Memory usage exceeded 1M. Shutting down crawlfw..." in caplog.messages
    assert not ext.task.running


def test_warning_logged_once(caplog):
    crawler = get_crawler({"MEMUSAGE_ENABLED": True, "MEMUSAGE_WARNING_MB": 1})
    ext = MemoryUsage.from_crawler(crawler)
    with caplog.at_level(logging.WARNING, logger="crawlfw.extensions.memusage"):
        crawler.signals.send_catch_log(signals.engine_started)
        ext._check_warning()
    crawler.signals.send_catch_log(signals.engine_stopped)
    assert caplog.messages.count("Memory usage reached 1M") == 1
    assert crawler.stats.get_value("memusage/warning_reached") == 1
    assert crawler.engine.closed == []


def test_notify_mail_without_mail_module(monkeypatch, caplog):
    monkeypatch.setattr(memusage, "_load_mail_sender", lambda: None)
    crawler = get_crawler({"MEMUSAGE_ENABLED": True, "MEMUSAGE_WARNING_MB": 1,
                           "MEMUSAGE_NOTIFY_MAIL": ["ops@example.com"]})
    with caplog.at_level(logging.INFO, logger="crawlfw.extensions.memusage"):
        ext = MemoryUsage.from_crawler(crawler)
        crawler.signals.send_catch_log(signals.engine_started)
    crawler.signals.send_catch_log(signals.engine_stopped)
    assert ext.mail is None
    assert any("MailSender is not available" in m for m in caplog.messages)
    assert any(m.startswith("Not sending memory usage mail") for m in caplog.messages)
    assert crawler.stats.get_value("memusage/warning_notified") is None
