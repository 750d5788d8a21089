"""Scrapy 2's ``LogCount`` (log_count/<LEVEL>, counted once) and ``PeriodicLog``
(PERIODIC_LOG_STATS / _DELTA / _TIMING_ENABLED) extensions (issue 29)."""

import json
import logging
import threading

import pytest

import crawlfw
from crawlfw import signals
from crawlfw.crawler import Crawler, CrawlerRunner
from crawlfw.exceptions import NotConfigured
from crawlfw.extensions.logcount import LogCount
from crawlfw.extensions.periodic_log import PeriodicLog
from crawlfw.settings import default_settings
from crawlfw.settings._noeffect import SETTINGS_WITHOUT_EFFECT
from crawlfw.utils.log import LogCounterHandler
from tests.extensions._crawler import get_crawler


class Quiet(crawlfw.Spider):
    name = "quiet"
    start_urls = []


def _counting_handlers(crawler):
    return [h for h in logging.root.handlers
            if isinstance(h, LogCounterHandler) and h.crawler is crawler]


def _crawl(crawler):
    runner = CrawlerRunner(crawler.settings)
    try:
        runner.crawl(crawler)
        assert crawler.wait(30)
    finally:
        runner.shutdown()


def test_log_count_is_on_by_default_and_counts_each_record_once():
    assert default_settings.EXTENSIONS_BASE["crawlfw.extensions.logcount.LogCount"] == 0
    crawler = Crawler(Quiet, {"LOG_LEVEL": "INFO"})
    crawler._apply_settings()  # the extensions are made (Scrapy 2.19: when crawl() starts)
    ext = crawler.get_extension(LogCount)
    assert isinstance(ext, LogCount)
    assert _counting_handlers(crawler) == [ext.handler]  # took the crawler's over
    before = crawler.stats.get_value("log_count/WARNING", 0)
    logging.getLogger("anything").warning("one warning")
    assert crawler.stats.get_value("log_count/WARNING") == before + 1
    crawler.signals.connect(lambda: logging.getLogger("x").error("late"),
                            signals.spider_closed, weak=False)
    _crawl(crawler)
    assert crawler.stats.get_value("log_count/ERROR") == 1
    assert _counting_handlers(crawler) == [] and ext.handler is None  # removed at the end


def test_log_count_can_be_disabled():
    crawler = Crawler(Quiet, {"EXTENSIONS": {"crawlfw.extensions.logcount.LogCount": None}})
    crawler._apply_settings()
    assert crawler.get_extension(LogCount) is None
    assert len(_counting_handlers(crawler)) == 1  # the crawler's own: counted once
    crawler.signals.send_catch_log(signals.engine_stopped)
    assert _counting_handlers(crawler) == []


def test_periodic_log_settings_have_effect():
    for name in ("PERIODIC_LOG_STATS", "PERIODIC_LOG_DELTA", "PERIODIC_LOG_TIMING_ENABLED"):
        assert name not in SETTINGS_WITHOUT_EFFECT
    assert "crawlfw.extensions.periodic_log.PeriodicLog" not in default_settings.EXTENSIONS_BASE


@pytest.mark.parametrize("settings", [
    {},  # nothing to log
    {"PERIODIC_LOG_DELTA": True, "LOGSTATS_INTERVAL": 0},
    {"PERIODIC_LOG_STATS": False},
])
def test_periodic_log_not_configured(settings):
    with pytest.raises(NotConfigured):
        PeriodicLog.from_crawler(get_crawler(settings))


def test_periodic_log_lines_are_scrapys(caplog):
    crawler = get_crawler({"PERIODIC_LOG_STATS": {"include": ["downloader/", "item"],
                                                  "exclude": ["scraped"]},
                           "PERIODIC_LOG_DELTA": True, "LOGSTATS_INTERVAL": 10.0})
    ext = PeriodicLog.from_crawler(crawler)
    stats = crawler.stats
    stats.set_value("downloader/request_count", 3)
    stats.set_value("item_scraped_count", 2)
    stats.set_value("finish_reason", "x")
    with caplog.at_level(logging.INFO, logger="crawlfw.extensions.periodic_log"):
        ext.log()
        stats.inc_value("downloader/request_count", 4)
        ext.log()
    # what Scrapy 2.19's PeriodicLog logs for the same stats and settings
    assert [r.getMessage() for r in caplog.records] == [
        '{\n    "delta": {\n        "downloader/request_count": 3,\n'
        '        "item_scraped_count": 2\n    },\n    "stats": {\n'
        '        "downloader/request_count": 3\n    }\n}',
        '{\n    "delta": {\n        "downloader/request_count": 4,\n'
        '        "item_scraped_count": 0\n    },\n    "stats": {\n'
        '        "downloader/request_count": 7\n    }\n}',
    ]


@pytest.mark.parametrize("name, include, exclude, allowed", [
    ("a", [], [], True), ("a", ["x"], [], False), ("ab", [], ["b"], False),
    ("ab", ["a"], ["b"], False), ("ac", ["a"], ["b"], True), ("c", [], ["b"], True),
])
def test_param_allowed(name, include, exclude, allowed):
    assert PeriodicLog(None).param_allowed(name, include, exclude) is allowed


def test_periodic_log_in_a_crawl_with_timing(caplog):
    lines = []
    logged_twice = threading.Event()

    class Stays(Quiet):
        name = "stays"

        @classmethod
        def from_crawler(cls, crawler, *args, **kwargs):
            spider = super().from_crawler(crawler, *args, **kwargs)
            crawler.signals.connect(spider.idle, signals.spider_idle)
            return spider

        def idle(self):
            if not logged_twice.is_set():
                from crawlfw.exceptions import DontCloseSpider

                raise DontCloseSpider

    class Recorder(logging.Handler):
        def emit(self, record):
            if record.name == "crawlfw.extensions.periodic_log":
                lines.append(json.loads(record.getMessage()))
                if len(lines) >= 2:
                    logged_twice.set()

    recorder = Recorder(level=logging.INFO)
    ext_logger = logging.getLogger("crawlfw.extensions.periodic_log")
    ext_logger.addHandler(recorder)
    level = ext_logger.level
    ext_logger.setLevel(logging.INFO)
    try:
        crawler = Crawler(Stays, {
            "LOG_LEVEL": "INFO", "LOGSTATS_INTERVAL": 0.05,
            "EXTENSIONS": {"crawlfw.extensions.periodic_log.PeriodicLog": 0},
            "PERIODIC_LOG_TIMING_ENABLED": True,
            "PERIODIC_LOG_DELTA": {"include": ["log_count/"]}})
        runner = CrawlerRunner(crawler.settings)
        try:
            runner.crawl(crawler)
            assert logged_twice.wait(10)
            runner.stop()
            assert crawler.wait(30)
        finally:
            runner.shutdown()
    finally:
        ext_logger.removeHandler(recorder)
        ext_logger.setLevel(level)
    assert len(lines) >= 3  # every interval, and once more at close
    first, last = lines[0], lines[-1]
    assert set(first) == {"time", "delta"}
    assert set(first["time"]) == {"log_interval", "start_time", "utcnow",
                                  "log_interval_real", "elapsed"}
    assert first["time"]["log_interval"] == 0.05
    assert 0 < first["time"]["log_interval_real"] < 5
    assert last["time"]["elapsed"] >= first["time"]["elapsed"]
    assert all(k.startswith("log_count/") for line in lines for k in line["delta"])


def test_multiplier_is_deprecated():
    from crawlfw.exceptions import CrawlfwDeprecationWarning

    with pytest.warns(CrawlfwDeprecationWarning, match="multiplier"):
        assert PeriodicLog(None, interval=30.0).multiplier == 2.0
