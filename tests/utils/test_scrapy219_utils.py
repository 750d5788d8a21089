"""Scrapy 2.19's helpers in crawlfw.utils (issue 29): boto, conf, decorators,
deprecate, ftp, gz, log, project, test, versions; and BaseSettings' Scrapy 2 methods.
Expected values are what Scrapy 2.19 gives for the same calls."""

import asyncio
import concurrent.futures
import io
import logging
import threading
import warnings

import pytest

from crawlfw.downloadermiddlewares.retry import RetryMiddleware
from crawlfw.exceptions import CrawlfwDeprecationWarning, UsageError
from crawlfw.http import Response
from crawlfw.settings import BaseSettings, Settings
from crawlfw.utils import log as log_utils
from crawlfw.utils.boto import is_botocore_available
from crawlfw.utils.conf import (
    feed_complete_default_values_from_settings,
    feed_process_params_from_cli,
)
from crawlfw.utils.decorators import defers, inthread
from crawlfw.utils.deprecate import argument_is_required, warn_on_deprecated_spider_attribute
from crawlfw.utils.ftp import ftp_store_file
from crawlfw.utils.gz import gzip_magic_number
from crawlfw.utils.project import find_projects
from crawlfw.utils.test import get_crawler, get_from_asyncio_queue
from crawlfw.utils.versions import get_versions
from tests.support import ftp as ftp_support

ftp_server = ftp_support.ftp_server


def test_is_botocore_available(monkeypatch):
    import importlib.util

    expected = importlib.util.find_spec("botocore") is not None
    assert is_botocore_available() is expected
    monkeypatch.setattr("crawlfw.utils.boto.find_spec", lambda name: None)
    assert is_botocore_available() is False  # never raises, unlike is_botocore()


def test_gzip_magic_number():
    assert gzip_magic_number(Response("http://x/", body=b"\x1f\x8b\x08rest"))
    assert not gzip_magic_number(Response("http://x/", body=b"\x1f\x8b\x07rest"))
    assert not gzip_magic_number(Response("http://x/", body=b""))


@pytest.mark.parametrize("output, overwrite, expected", [
    (["a.json"], None, {"a.json": {"format": "json"}}),
    (["-:jl", "x.csv:xml", "c:/t/a.jl"], None,
     {"stdout:": {"format": "jl"}, "x.csv": {"format": "xml"}, "c:/t/a.jl": {"format": "jl"}}),
    ([], ["a.jl", "b.xml"],
     {"a.jl": {"format": "jl", "overwrite": True}, "b.xml": {"format": "xml", "overwrite": True}}),
])
def test_feed_process_params_from_cli(output, overwrite, expected):
    assert feed_process_params_from_cli(Settings(), output, overwrite_output=overwrite) == expected


@pytest.mark.parametrize("output, overwrite, message", [
    (["a.json"], ["b.json"], "Please use only one of -o/--output and -O/--overwrite-output"),
    (["a.foo"], None, "Unrecognized output format 'foo'. Set a supported one ("),
    (["-"], None, "Unrecognized output format ''."),
    (["a.txt:foo"], None, "Unrecognized output format 'txt:foo'."),
])
def test_feed_process_params_from_cli_refuses(output, overwrite, message):
    with pytest.raises(UsageError) as info:
        feed_process_params_from_cli(Settings(), output, overwrite_output=overwrite)
    assert str(info.value).startswith(message)


def test_feed_process_params_from_cli_feeds_win():
    settings = Settings({"FEEDS": {"a.json": {"format": "jsonlines"}}})
    assert feed_process_params_from_cli(settings, ["a.json", "b.json"]) == {
        "a.json": {"format": "jsonlines"}, "b.json": {"format": "json"}}


def test_feed_complete_default_values_from_settings():
    settings = Settings({"FEED_EXPORT_FIELDS": "a,b", "FEED_EXPORT_INDENT": "2"})
    feed = {"format": "csv"}
    assert feed_complete_default_values_from_settings(feed, settings, "x.json") == {
        "format": "csv", "batch_item_count": 0, "encoding": None, "fields": ["a", "b"],
        "store_empty": True, "uri_params": None, "item_export_kwargs": {}, "indent": 2}
    assert feed == {"format": "csv"}
    assert feed_complete_default_values_from_settings({}, Settings(), "x.json")["format"] == "json"


def test_defers_warns_and_gives_futures():
    with pytest.warns(CrawlfwDeprecationWarning, match="@defers is deprecated"):
        @defers
        def f(x):
            if x < 0:
                raise ValueError(x)
            return x * 2
    assert f(2).result() == 4
    assert isinstance(f(-1).exception(), ValueError)


def test_inthread_runs_on_another_thread():
    @inthread
    def where(value):
        return threading.current_thread().name, value

    future = where(7)
    assert isinstance(future, concurrent.futures.Future)
    name, value = future.result(timeout=5)
    assert name.startswith("crawlfw-inthread") and value == 7


def test_argument_is_required():
    def func(a, b=1, c=None):
        pass
    assert [argument_is_required(func, n) for n in "abcd"] == [True, False, False, False]


def test_warn_on_deprecated_spider_attribute():
    with pytest.warns(CrawlfwDeprecationWarning) as record:
        warn_on_deprecated_spider_attribute("download_maxsize", "DOWNLOAD_MAXSIZE")
    assert str(record[0].message) == (
        "The 'download_maxsize' spider attribute is deprecated. Use Spider.custom_settings "
        "or Spider.update_settings() instead. The corresponding setting name is "
        "'DOWNLOAD_MAXSIZE'.")


@pytest.mark.slow
@pytest.mark.parametrize("overwrite", [True, False])
def test_ftp_store_file(ftp_server, overwrite):
    target = ftp_server.root / "deep" / "dir" / "file.txt"
    ftp_store_file(path="/deep/dir/file.txt", file=io.BytesIO(b"one"), host="127.0.0.1",
                   port=ftp_server.port, username=ftp_server.user, password=ftp_server.password)
    data = io.BytesIO(b"two")
    ftp_store_file(path="/deep/dir/file.txt", file=data, host="127.0.0.1",
                   port=ftp_server.port, username=ftp_server.user,
                   password=ftp_server.password, overwrite=overwrite, use_active_mode=True)
    assert target.read_bytes() == (b"two" if overwrite else b"onetwo")
    assert data.closed


def test_spider_logger_adapter_merges_extra(caplog):
    adapter = log_utils.SpiderLoggerAdapter(logging.getLogger("api29c"), {"spider": "s"})
    with caplog.at_level(logging.INFO, logger="api29c"):
        adapter.info("one", extra={"url": "u"})
        adapter.info("two")
    first, second = caplog.records
    assert (first.url, first.spider) == ("u", "s")
    assert second.spider == "s"


def test_install_and_get_scrapy_root_handler():
    before = log_utils.get_scrapy_root_handler()
    try:
        log_utils.install_scrapy_root_handler(Settings({"LOG_LEVEL": "WARNING"}))
        first = log_utils.get_scrapy_root_handler()
        assert first in logging.root.handlers and first.level == logging.WARNING
        log_utils.install_scrapy_root_handler({"LOG_LEVEL": "ERROR"})
        second = log_utils.get_scrapy_root_handler()
        assert first not in logging.root.handlers and second in logging.root.handlers
        with pytest.raises(ValueError, match="Invalid LOG_LEVEL"):
            log_utils.install_scrapy_root_handler({"LOG_LEVEL": "LOUD"})
        assert log_utils.get_scrapy_root_handler() is second  # kept on a bad setting
    finally:
        handler = log_utils.get_scrapy_root_handler()
        logging.root.removeHandler(handler)
        log_utils._root_handler = before
        if before is not None and before not in logging.root.handlers:
            logging.root.addHandler(before)


def test_log_reactor_info(caplog):
    with caplog.at_level(logging.DEBUG, logger="crawlfw.utils.log"):
        log_utils.log_reactor_info()
    messages = [r.getMessage() for r in caplog.records if r.name == "crawlfw.utils.log"]
    assert messages[0].startswith("Using reactor: none")
    assert messages[1].startswith("Using asyncio event loop: asyncio.")


def test_find_projects(tmp_path):
    for rel in ("a", "b/inner", "b/inner/nested", ".hidden", "venv", "skip", "c/d/e"):
        (tmp_path / rel).mkdir(parents=True, exist_ok=True)
    for rel in ("a", "b/inner", "b/inner/nested", ".hidden", "venv/sub", "skip", "c/d/e"):
        (tmp_path / rel).mkdir(parents=True, exist_ok=True)
        (tmp_path / rel / "crawlfw.cfg").write_text("[settings]\n")
    (tmp_path / "venv" / "pyvenv.cfg").write_text("")
    (tmp_path / "c" / "d" / "e" / "crawlfw.cfg").rename(tmp_path / "c" / "d" / "e" / "scrapy.cfg")
    found = [p.relative_to(tmp_path).as_posix() for p in find_projects(tmp_path, ignored_dirs=["skip"])]
    assert found == ["a", "b/inner", "c/d/e"]
    assert [p.relative_to(tmp_path).as_posix()
            for p in find_projects(tmp_path, max_depth=2)] == ["a", "b/inner", "skip"]
    assert list(find_projects(tmp_path / "a", max_depth=0)) == [tmp_path / "a"]


def test_get_crawler_takes_prevent_warnings():
    crawler = get_crawler(None, {"X": 1}, False)
    assert crawler.settings["X"] == 1


def test_get_from_asyncio_queue():
    async def main():
        return await get_from_asyncio_queue("v")
    assert asyncio.run(main()) == "v"


@pytest.mark.slow  # platform.platform() runs uname
def test_get_versions():
    versions = dict(get_versions())
    assert list(versions)[:2] == ["crawlfw", "lxml"] and "Platform" in versions
    assert "not used" in versions["Twisted"]
    assert get_versions(["w3lib"])[0][0] == "w3lib"
    from importlib.metadata import PackageNotFoundError
    with pytest.raises(PackageNotFoundError):
        get_versions(["no-such-distribution-api29c"])


# -- BaseSettings: Scrapy 2's list and component-priority helpers ----------------------

def test_add_and_remove_from_list_keep_priority():
    settings = BaseSettings({"L": ["a"]}, priority="cmdline")
    settings.add_to_list("L", "b")
    settings.add_to_list("L", "a")
    assert settings["L"] == ["a", "b"] and settings.getpriority("L") == 40
    settings.remove_from_list("L", "a")
    assert settings["L"] == ["b"] and settings.getpriority("L") == 40
    with pytest.raises(ValueError, match=r"'z' not found in the L setting \(\['b'\]\)"):
        settings.remove_from_list("L", "z")
    settings.add_to_list("NEW", "x")
    assert settings["NEW"] == ["x"] and settings.getpriority("NEW") == 0


@pytest.mark.parametrize("value, expected", [
    (None, {}), ('{"a": "b"}', {"a": "b"}), ('["a", "b"]', ["a", "b"]), ("a,b", ["a", "b"]),
    ("5", ["5"]), (("a",), ["a"]), ({"k": 1}, {"k": 1}), (["x"], ["x"]),
])
def test_getdictorlist(value, expected):
    assert BaseSettings({"S": value}).getdictorlist("S") == expected


def test_getdictorlist_refuses_other_types():
    with pytest.raises(ValueError, match="Setting 'S' must be a dict, list, tuple, or string"):
        BaseSettings({"S": 5}).getdictorlist("S")


def test_pop_and_setdefault_take_scrapy_names():
    settings = BaseSettings({"A": 1})
    assert settings.pop(name="A") == 1 and "A" not in settings
    assert settings.pop("A", default=None) is None
    with pytest.raises(KeyError):
        settings.pop("A")
    assert settings.setdefault(name="B", default=2, priority="cmdline") == 2
    assert settings.getpriority("B") == 40 and settings.setdefault("B", 3) == 2


class MyRetry(RetryMiddleware):
    pass


RETRY = "crawlfw.downloadermiddlewares.retry.RetryMiddleware"


def test_component_priority_dict_helpers():
    settings = BaseSettings({"MW": {RETRY: 550, "other.Path": 1}}, priority="spider")
    settings.replace_in_component_priority_dict("MW", RetryMiddleware, MyRetry)
    assert settings["MW"] == {"other.Path": 1, MyRetry: 550}
    assert settings.getpriority("MW") == 30
    with pytest.raises(KeyError, match="not found in the MW setting"):
        settings.replace_in_component_priority_dict("MW", RetryMiddleware, MyRetry)
    settings.set_in_component_priority_dict("MW", RetryMiddleware, 10)
    settings.setdefault_in_component_priority_dict("MW", RetryMiddleware, 99)
    assert settings["MW"][RetryMiddleware] == 10
    settings = BaseSettings({"MW": {RETRY: 550}})
    settings.set_in_component_priority_dict("MW", RetryMiddleware, 5)
    assert settings["MW"] == {RetryMiddleware: 5}  # the path key replaced by the class


def test_get_component_priority_dict_with_base(caplog):
    settings = Settings({"DOWNLOADER_MIDDLEWARES": {
        RetryMiddleware: 1, "crawlfw.downloadermiddlewares.httpcache.HttpCacheMiddleware": None}})
    merged = dict(settings.get_component_priority_dict_with_base("DOWNLOADER_MIDDLEWARES"))
    assert merged[RetryMiddleware] == 1 and RETRY not in merged
    assert "crawlfw.downloadermiddlewares.httpcache.HttpCacheMiddleware" not in merged
    assert merged["crawlfw.downloadermiddlewares.cookies.CookiesMiddleware"] == 700
    settings = BaseSettings({"X": {RETRY: 1, RetryMiddleware: 2}})
    with caplog.at_level(logging.WARNING):
        assert dict(settings.get_component_priority_dict_with_base("X")) == {RetryMiddleware: 2}
    assert "Setting X contains multiple keys that refer to the same object" in caplog.text
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="Base setting key must be a string"):
            settings.get_component_priority_dict_with_base(5)
