import logging

import pytest

from crawlfw.exceptions import NotConfigured
from crawlfw.middleware import MiddlewareManager
from crawlfw.settings import Settings
from crawlfw.spiders import Spider
from tests.extensions._crawler import get_crawler


class M1:
    def open_spider(self, spider):
        return "M1 open"

    def close_spider(self, spider):
        return "M1 close"

    def process(self, response, request, spider):
        pass


class M2:
    def open_spider(self, spider):
        return "M2 open"

    def close_spider(self, spider):
        return "M2 close"


class M3:
    def process(self, response, request, spider):
        pass


class MOff:
    def __init__(self):
        raise NotConfigured("switched off for the test")


class MOffSilent:
    def __init__(self):
        raise NotConfigured


class MFromSettings:
    def __init__(self, value):
        self.value = value

    @classmethod
    def from_settings(cls, settings):
        return cls(settings["TEST_VALUE"])


class MFromCrawler:
    def __init__(self, crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    @classmethod
    def from_settings(cls, settings):  # pragma: no cover - from_crawler wins
        raise AssertionError("from_settings must not be used when a crawler is given")


class MCloseFails:
    def close_spider(self, spider):
        raise RuntimeError("close failed")


class MOpenFails:
    def open_spider(self, spider):
        raise RuntimeError("open failed")


class MyMiddlewareManager(MiddlewareManager):
    component_name = "test middleware"

    @classmethod
    def _get_mwlist_from_settings(cls, settings):
        return settings.getlist("TEST_MWLIST")

    def _add_middleware(self, mw):
        super()._add_middleware(mw)
        if hasattr(mw, "process"):
            self.methods["process"].append(mw.process)


def _path(cls):
    return f"{__name__}.{cls.__name__}"


def test_base_mwlist_is_abstract():
    with pytest.raises(NotImplementedError):
        MiddlewareManager._get_mwlist_from_settings(Settings())


def test_methods_collected_in_order():
    m1, m2, m3 = M1(), M2(), M3()
    mwman = MyMiddlewareManager(m1, m2, m3)
    assert mwman.methods["open_spider"] == [m1.open_spider, m2.open_spider]
    assert mwman.methods["close_spider"] == [m2.close_spider, m1.close_spider]
    assert mwman.methods["process"] == [m1.process, m3.process]
    assert mwman.middlewares == (m1, m2, m3)


def test_open_and_close_spider_call_hooks():
    mwman = MyMiddlewareManager(M1(), M2())
    spider = Spider(name="s")
    assert mwman.open_spider(spider) == ["M1 open", "M2 open"]
    assert mwman.close_spider(spider) == ["M2 close", "M1 close"]


def test_open_spider_exception_propagates():
    mwman = MyMiddlewareManager(MOpenFails(), M1())
    with pytest.raises(RuntimeError, match="open failed"):
        mwman.open_spider(Spider(name="s"))


def test_close_spider_exception_logged_not_propagated(caplog):
    mwman = MyMiddlewareManager(M1(), MCloseFails(), M2())
    with caplog.at_level(logging.ERROR, logger="crawlfw.middleware"):
        results = mwman.close_spider(Spider(name="s"))
    assert results[0] == "M2 close"
    assert isinstance(results[1], RuntimeError)
    assert results[2] == "M1 close"
    [record] = caplog.records
    assert "MCloseFails.close_spider" in record.getMessage()
    assert record.exc_info[0] is RuntimeError


def test_from_settings_builds_enabled_and_logs(caplog):
    settings = Settings({
        "TEST_MWLIST": [_path(M1), _path(MOff), _path(MOffSilent), _path(MFromSettings)],
        "TEST_VALUE": 7,
    })
    with caplog.at_level(logging.INFO, logger="crawlfw.middleware"):
        mwman = MyMiddlewareManager.from_settings(settings)
    classes = [type(m) for m in mwman.middlewares]
    assert classes == [M1, MFromSettings]
    assert mwman.middlewares[1].value == 7
    messages = [r.getMessage() for r in caplog.records]
    assert "Disabled MOff: switched off for the test" in messages
    assert not any("MOffSilent" in m for m in messages)
    enabled = [m for m in messages if m.startswith("Enabled test middlewares:\n")]
    assert len(enabled) == 1
    assert _path(M1) in enabled[0] and _path(MFromSettings) in enabled[0]
    assert _path(MOff) not in enabled[0]
    disabled_record = next(r for r in caplog.records if r.getMessage().startswith("Disabled"))
    assert disabled_record.levelno == logging.WARNING


def test_from_crawler_prefers_from_crawler():
    crawler = get_crawler({"TEST_MWLIST": [_path(MFromCrawler)]})
    mwman = MyMiddlewareManager.from_crawler(crawler)
    assert mwman.middlewares[0].crawler is crawler


def test_bad_path_raises():
    settings = Settings({"TEST_MWLIST": [f"{__name__}.DoesNotExist"]})
    with pytest.raises(NameError, match="DoesNotExist"):
        MyMiddlewareManager.from_settings(settings)


def test_manager_takes_scrapy2_crawler_keyword():
    """Scrapy 2.12: MiddlewareManager(*middlewares, crawler=crawler) (issue 29)."""
    from crawlfw.extension import ExtensionManager
    from crawlfw.middleware import MiddlewareManager
    from crawlfw.utils.test import get_crawler

    crawler = get_crawler()
    component = object()
    for manager_cls in (MiddlewareManager, ExtensionManager):
        manager = manager_cls(component, crawler=crawler)
        assert manager.middlewares == (component,)
        assert manager.crawler is crawler and manager.stats is crawler.stats
    assert MiddlewareManager(component).crawler is None


class MBroken:
    def __init__(self):
        raise RuntimeError("cannot reach the database")


class MBuildsBroken:
    """A component whose from_crawler builds another manager, whose component raises."""

    @classmethod
    def from_crawler(cls, crawler):
        MyMiddlewareManager.from_settings(Settings({"TEST_MWLIST": [_path(MBroken)]}), crawler)


def test_a_component_that_cannot_be_built_is_named():
    """The exception a component's constructor raises goes through as it is (Scrapy's
    managers raise it too), marked with the setting and the class path at fault, which
    component_error words in one line (issue 34)."""
    from crawlfw.middleware import component_error

    settings = Settings({"TEST_MWLIST": [_path(M1), _path(MBroken), _path(M2)]})
    with pytest.raises(RuntimeError, match="cannot reach the database") as info:
        MyMiddlewareManager.from_settings(settings)
    assert component_error(info.value) == (
        f"test middlewares: cannot build {_path(MBroken)!r}: RuntimeError: cannot reach "
        "the database")
    assert component_error(RuntimeError("not from a component")) is None
    # the component nearest the error is named
    with pytest.raises(RuntimeError) as info:
        MyMiddlewareManager.from_crawler(get_crawler({"TEST_MWLIST": [_path(MBuildsBroken)]}))
    assert f"cannot build {_path(MBroken)!r}" in component_error(info.value)
    # a class given as such, and a path that cannot be loaded
    with pytest.raises(RuntimeError) as info:
        MyMiddlewareManager.from_settings(Settings({"TEST_MWLIST": [MBroken]}))
    assert f"cannot build {_path(MBroken)!r}" in component_error(info.value)
    with pytest.raises(NameError) as info:
        MyMiddlewareManager.from_settings(Settings({"TEST_MWLIST": [f"{__name__}.Nope"]}))
    assert component_error(info.value).startswith(f"test middlewares: cannot load "
                                                  f"'{__name__}.Nope': NameError: ")


@pytest.mark.parametrize("manager, setting", [
    ("crawlfw.core.flow.downloadermw.DownloaderMiddlewareManager", "DOWNLOADER_MIDDLEWARES"),
    ("crawlfw.core.flow.spidermw.SpiderMiddlewareManager", "SPIDER_MIDDLEWARES"),
    ("crawlfw.pipelines.ItemPipelineManager", "ITEM_PIPELINES"),
    ("crawlfw.extension.ExtensionManager", "EXTENSIONS"),
])
def test_the_managers_name_their_setting(manager, setting, caplog):
    """The line names the setting a user edits; the traceback is a DEBUG record."""
    from crawlfw.exceptions import CrawlStartError
    from crawlfw.middleware import component_start_error
    from crawlfw.utils.misc import load_object

    crawler = get_crawler({setting: {_path(MBroken): 1}})
    with pytest.raises(RuntimeError) as info:
        load_object(manager).from_crawler(crawler)
    with caplog.at_level(logging.DEBUG, logger="crawlfw.middleware"):
        error = component_start_error(info.value)
    assert isinstance(error, CrawlStartError)
    assert str(error) == (f"{setting}: cannot build {_path(MBroken)!r}: RuntimeError: "
                          "cannot reach the database")
    (record,) = [r for r in caplog.records if r.getMessage() == str(error)]
    assert record.levelno == logging.DEBUG and record.exc_info[1] is info.value
