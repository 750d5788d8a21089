"""Deprecated Scrapy 1.2 module paths and names: crawlfw.log, crawlfw.conf,
crawlfw.spidermanager, XPathItemLoader, and the crawlfw.contrib import hook. (Which
modules exist and warn is pinned by tests/test_scrapy_parity.py.)"""

import importlib
import importlib.util
import logging
import sys
import warnings

import pytest

from crawlfw._moved import MOVED_MODULES
from crawlfw.exceptions import CrawlfwDeprecationWarning


@pytest.fixture
def restore_modules():
    saved = {k: v for k, v in sys.modules.items() if k.startswith("crawlfw")}
    yield
    for name in [k for k in sys.modules if k.startswith("crawlfw") and k not in saved]:
        del sys.modules[name]
    sys.modules.update(saved)


def quiet_import(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CrawlfwDeprecationWarning)
        return importlib.import_module(name)


# --- crawlfw.log -------------------------------------------------------------------------


def test_log_levels():
    log = quiet_import("crawlfw.log")
    assert (log.DEBUG, log.INFO, log.WARNING, log.ERROR, log.CRITICAL) == \
        (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL)
    assert log.SILENT > log.CRITICAL
    assert log.level_names[log.SILENT] == "SILENT"


@pytest.mark.parametrize(
    "args, kwargs, level, text",
    [
        (("plain",), {}, logging.INFO, "plain"),
        (("x",), {"level": logging.WARNING}, logging.WARNING, "x"),
        ((), {"format": "got %(n)d items", "n": 3}, logging.INFO, "got 3 items"),
        (("debug %(a)s",), {"_level": logging.DEBUG, "a": "A"}, logging.DEBUG, "debug A"),
    ],
)
def test_log_msg(caplog, args, kwargs, level, text):
    log = quiet_import("crawlfw.log")
    with caplog.at_level(logging.DEBUG, logger="crawlfw.log"), \
            pytest.warns(CrawlfwDeprecationWarning, match="log.msg"):
        log.msg(*args, **kwargs)
    [record] = caplog.records
    assert (record.levelno, record.getMessage()) == (level, text)


def test_log_err_with_exception_and_current_exception(caplog):
    log = quiet_import("crawlfw.log")
    error = ValueError("bad value")
    with caplog.at_level(logging.DEBUG, logger="crawlfw.log"), \
            pytest.warns(CrawlfwDeprecationWarning, match="log.err"):
        log.err(error)
        log.err(error, "while parsing", level=logging.WARNING)
        try:
            raise KeyError("k")
        except KeyError:
            log.err(_why="handled")
    first, second, third = caplog.records
    assert (first.levelno, first.getMessage(), first.exc_info[1]) == \
        (logging.ERROR, "bad value", error)
    assert (second.levelno, second.getMessage()) == (logging.WARNING, "while parsing")
    assert third.getMessage() == "handled" and isinstance(third.exc_info[1], KeyError)


def test_log_err_with_a_failure(caplog):
    from crawlfw.utils.failure import Failure

    log = quiet_import("crawlfw.log")
    error = RuntimeError("boom")
    with caplog.at_level(logging.DEBUG, logger="crawlfw.log"), \
            pytest.warns(CrawlfwDeprecationWarning):
        log.err(Failure(error))
    assert caplog.records[0].exc_info[1] is error


# --- crawlfw.conf --------------------------------------------------------------------------


def test_conf_settings_outside_the_command(restore_modules, tmp_path, monkeypatch):
    from crawlfw.settings import Settings

    monkeypatch.chdir(tmp_path)  # no project here: default settings
    monkeypatch.delenv("CRAWLFW_SETTINGS_MODULE", raising=False)
    sys.modules.pop("crawlfw.cmdline", None)
    sys.modules.pop("crawlfw.conf", None)
    with pytest.warns(CrawlfwDeprecationWarning, match="crawler.settings"):
        conf = importlib.import_module("crawlfw.conf")
    assert isinstance(conf.settings, Settings)
    assert conf.settings["BOT_NAME"]


# --- deprecated classes ------------------------------------------------------------------


def test_spider_manager_is_a_deprecated_spider_loader():
    from crawlfw.settings import Settings
    from crawlfw.spiderloader import SpiderLoader

    spidermanager = quiet_import("crawlfw.spidermanager")
    with pytest.warns(CrawlfwDeprecationWarning, match="SpiderLoader"):
        manager = spidermanager.SpiderManager(Settings({"SPIDER_MODULES": []}))
    assert isinstance(manager, SpiderLoader)
    assert manager.list() == []


def test_xpath_item_loader():
    from crawlfw.http import HtmlResponse
    from crawlfw.loader import ItemLoader, XPathItemLoader

    response = HtmlResponse("http://a/", body=b"<html><h1>Title</h1></html>")
    with pytest.warns(CrawlfwDeprecationWarning, match="ItemLoader"):
        loader = XPathItemLoader(item={}, response=response)
    assert isinstance(loader, ItemLoader)
    loader.add_xpath("title", "//h1/text()")
    assert loader.load_item() == {"title": ["Title"]}


# --- the crawlfw.contrib import hook -----------------------------------------------------


def test_from_import_and_identity(restore_modules):
    from crawlfw.spiders import CrawlSpider, Rule

    with pytest.warns(CrawlfwDeprecationWarning):
        from crawlfw.contrib.spiders import CrawlSpider as OldCrawlSpider
        from crawlfw.contrib.spiders import Rule as OldRule
    assert (OldCrawlSpider, OldRule) == (CrawlSpider, Rule)


def test_old_component_paths_load(restore_modules):
    from crawlfw.downloadermiddlewares.retry import RetryMiddleware
    from crawlfw.pipelines.images import ImagesPipeline
    from crawlfw.utils.misc import load_object

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CrawlfwDeprecationWarning)
        assert load_object("crawlfw.contrib.downloadermiddleware.retry.RetryMiddleware") \
            is RetryMiddleware
        assert load_object("crawlfw.contrib.pipeline.images.ImagesPipeline") is ImagesPipeline


def test_unknown_contrib_module_is_not_found(restore_modules):
    with pytest.raises(ModuleNotFoundError):
        quiet_import("crawlfw.contrib.nothing_here")
    with pytest.raises(ModuleNotFoundError):
        quiet_import("crawlfw.contrib.downloadermiddleware.nothing_here")


def test_import_hook_is_installed_once(restore_modules):
    from crawlfw._moved import MovedModulesFinder

    quiet_import("crawlfw.contrib")
    quiet_import("crawlfw.contrib_exp")
    for name in ("crawlfw.contrib", "crawlfw.contrib_exp", "crawlfw._moved"):
        sys.modules.pop(name, None)
    quiet_import("crawlfw.contrib")
    finders = [f for f in sys.meta_path if getattr(f, "marker", None) == MovedModulesFinder.marker]
    assert len(finders) == 1
    assert "crawlfw.contrib.spiders" in finders[0].moved
    assert "crawlfw.contrib_exp.iterators" in finders[0].moved


def test_alias_module_attributes(restore_modules):
    module = quiet_import("crawlfw.contrib.exporter")
    assert module.__all__[0] == "BaseItemExporter"
    assert "PythonItemExporter" in module.__all__
    assert "Deprecated" in module.__doc__
    package = quiet_import("crawlfw.contrib.downloadermiddleware")
    assert package.__path__ == []


# --- one-line aliases: no files, served by the import hook ------------------------------


@pytest.mark.parametrize("name", sorted(MOVED_MODULES))
def test_alias_modules_come_from_the_moved_table(name, restore_modules):
    from pathlib import Path

    import crawlfw
    from crawlfw._moved import MovedModulesFinder

    package_dir = Path(crawlfw.__file__).parent
    assert not (package_dir.parent / (name.replace(".", "/") + ".py")).exists()
    sys.modules.pop(name, None)
    spec = importlib.util.find_spec(name)
    assert isinstance(spec.loader, MovedModulesFinder)
    with pytest.warns(CrawlfwDeprecationWarning, match=f"`{name}` is deprecated"):
        importlib.import_module(name)
