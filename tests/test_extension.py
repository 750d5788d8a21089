import logging

from crawlfw.exceptions import NotConfigured
from crawlfw.extension import ExtensionManager
from crawlfw.settings import Settings
from tests.extensions._crawler import get_crawler


class ExtA:
    opened = []

    def __init__(self, crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def open_spider(self, spider):
        return "A"


class ExtB:
    def __init__(self):
        raise NotConfigured("B is off")


class ExtC:
    pass


def _path(cls):
    return f"{__name__}.{cls.__name__}"


def test_extension_list_merges_base_and_orders():
    settings = Settings({
        "EXTENSIONS_BASE": {_path(ExtC): 10, _path(ExtA): 5},
        "EXTENSIONS": {_path(ExtB): 1, _path(ExtC): None},
    })
    assert ExtensionManager._get_mwlist_from_settings(settings) == [_path(ExtB), _path(ExtA)]


def test_from_crawler_builds_extensions(caplog):
    crawler = get_crawler({
        "EXTENSIONS_BASE": {},
        "EXTENSIONS": {_path(ExtA): 0, _path(ExtB): 0, _path(ExtC): 1},
    })
    with caplog.at_level(logging.INFO):
        manager = ExtensionManager.from_crawler(crawler)
    assert [type(e) for e in manager.middlewares] == [ExtA, ExtC]
    assert manager.middlewares[0].crawler is crawler
    assert manager.open_spider(None) == ["A"]
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("Enabled extensions:\n") for m in messages)
    assert "Disabled ExtB: B is off" in messages


def test_default_extensions_that_exist_build():
    """The core extensions shipped here build with default settings (the ones
    switched off by default raise NotConfigured and are skipped)."""
    crawler = get_crawler({"EXTENSIONS_BASE": {
        "crawlfw.extensions.corestats.CoreStats": 0,
        "crawlfw.extensions.memusage.MemoryUsage": 0,
        "crawlfw.extensions.closespider.CloseSpider": 0,
        "crawlfw.extensions.logstats.LogStats": 0,
        "crawlfw.extensions.spiderstate.SpiderState": 0,
    }})
    manager = ExtensionManager.from_crawler(crawler)
    # MemoryUsage is on by default, as in Scrapy 2
    assert [type(e).__name__ for e in manager.middlewares] == [
        "CoreStats", "MemoryUsage", "LogStats"]


def test_default_extensions_with_real_crawler():
    """Every path in the default EXTENSIONS_BASE loads; with default settings only
    CoreStats, LogCount, MemoryUsage and LogStats stay enabled (the others raise
    NotConfigured)."""
    from crawlfw import signals
    from crawlfw.crawler import Crawler
    from crawlfw.spiders import Spider

    class S(Spider):
        name = "s"

    crawler = Crawler(S, {"CLOSESPIDER_ITEMCOUNT": 5})
    try:
        names = [type(e).__name__ for e in crawler.extensions.middlewares]
    finally:
        # the Crawler removes its log-counting root handler on engine_stopped
        crawler.signals.send_catch_log(signals.engine_stopped)
    assert names == ["CoreStats", "LogCount", "MemoryUsage", "CloseSpider", "LogStats"]
