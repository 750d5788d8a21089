"""Settings Scrapy 1.2 reads but crawlfw cannot act on: a user who sets one is told, in
one WARNING line, once; those that map to curl options do act (a disabled scheme)."""

import logging

import pytest

import crawlfw
from crawlfw.settings import Settings, _noeffect
from crawlfw.settings._noeffect import SETTINGS_WITHOUT_EFFECT, warn_settings_without_effect
from tests.support.crawl import run_crawl
from tests.support.servers import StaticSiteServer


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch):
    monkeypatch.setattr(_noeffect, "_warned", set())


def test_defaults_warn_nothing(caplog):
    assert warn_settings_without_effect(Settings()) == []
    assert not caplog.records


@pytest.mark.parametrize("name, value", [
    ("CONCURRENT_ITEMS", 10),
    ("DOWNLOADER", "my.Downloader"), ("MEMDEBUG_NOTIFY", ["a@b.c"]),
    ("DOWNLOADER_IDLE_TIMEOUT", 5),  # crawlfw's own, before the downloader pool
])
def test_user_setting_warns_once_in_one_line(caplog, name, value):
    caplog.set_level(logging.WARNING)
    settings = Settings({name: value})  # project priority
    assert warn_settings_without_effect(settings) == [name]
    assert warn_settings_without_effect(settings) == []  # once per process
    (record,) = caplog.records
    message = record.getMessage()
    assert message == f"Setting {name} has no effect in crawlfw: {SETTINGS_WITHOUT_EFFECT[name]}"
    assert "\n" not in message


PLAYWRIGHT = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
ZYTE = "scrapy_zyte_api.ScrapyZyteAPIDownloadHandler"
H2 = "scrapy.core.downloader.handlers.http2.H2DownloadHandler"
CANNOT = "which crawlfw cannot host (it has no Twisted download handlers): "


@pytest.mark.parametrize("handlers, lines", [
    ({"http": PLAYWRIGHT, "https": PLAYWRIGHT}, [
        f"DOWNLOAD_HANDLERS names {PLAYWRIGHT} for http, https (scrapy-playwright: pages "
        f"rendered in a Playwright browser), {CANNOT}it fetches http://, https:// requests "
        "with libcurl, without a browser: JavaScript is not run and meta['playwright'] is "
        "ignored"]),
    ({"https": ZYTE}, [
        f"DOWNLOAD_HANDLERS names {ZYTE} for https (scrapy-zyte-api: requests sent through "
        f"Zyte API), {CANNOT}it fetches https:// requests with libcurl, directly, not "
        "through Zyte API: meta['zyte_api'] and meta['zyte_api_automap'] are ignored"]),
    ({"https": H2.replace("scrapy.", "crawlfw.", 1)}, [  # as `crawlfw port` renames it
        "DOWNLOAD_HANDLERS names crawlfw.core.downloader.handlers.http2.H2DownloadHandler "
        f"for https (Scrapy's HTTP/2 download handler), {CANNOT}it fetches https:// "
        "requests with libcurl over HTTP/1.1 (crawlfw does not speak HTTP/2; servers "
        "offering it answer HTTP/1.1 too)"]),
    ({"http": "my.HttpHandler", "gopher": "my.HttpHandler", "ftp": None}, [
        f"DOWNLOAD_HANDLERS names my.HttpHandler for http, gopher (a Scrapy download "
        f"handler), {CANNOT}it fetches http:// requests with libcurl, as every scheme; "
        "gopher:// requests are refused (crawlfw has no downloader for that scheme)"]),
    ({"http": PLAYWRIGHT, "https": H2}, [
        f"DOWNLOAD_HANDLERS names {PLAYWRIGHT} for http (scrapy-playwright: pages "
        f"rendered in a Playwright browser), {CANNOT}it fetches http:// requests with "
        "libcurl, without a browser: JavaScript is not run and meta['playwright'] is "
        "ignored",
        f"DOWNLOAD_HANDLERS names {H2} for https (Scrapy's HTTP/2 download handler), "
        f"{CANNOT}it fetches https:// requests with libcurl over HTTP/1.1 (crawlfw does "
        "not speak HTTP/2; servers offering it answer HTTP/1.1 too)"]),
])
def test_each_download_handler_named_gets_one_line(caplog, handlers, lines):
    caplog.set_level(logging.WARNING)
    settings = Settings({"DOWNLOAD_HANDLERS": handlers})
    assert warn_settings_without_effect(settings) == ["DOWNLOAD_HANDLERS"]
    assert warn_settings_without_effect(settings) == []  # once per handler and process
    assert [r.getMessage() for r in caplog.records] == lines
    assert all(r.levelname == "WARNING" for r in caplog.records)


def test_a_plugin_download_handler_does_not_stop_the_crawl(tmp_path, caplog):
    (tmp_path / "index.html").write_text("<html></html>")
    server = StaticSiteServer(tmp_path).start()
    try:
        class S(crawlfw.Spider):
            name = "s"
            start_urls = [f"{server.url}/index.html"]
            custom_settings = {"DOWNLOAD_HANDLERS": {"http": PLAYWRIGHT, "https": PLAYWRIGHT}}

            def parse(self, response):
                yield {"url": response.url}

        with caplog.at_level(logging.WARNING):
            result = run_crawl(S)
        assert result.items == [{"url": f"{server.url}/index.html"}]
        assert result.finish_reason == "finished"
        assert sum(f"DOWNLOAD_HANDLERS names {PLAYWRIGHT}" in m for m in caplog.messages) == 1
        assert "Traceback" not in caplog.text
    finally:
        server.stop()


def test_disabling_a_scheme_is_not_a_warning():
    assert warn_settings_without_effect(Settings({"DOWNLOAD_HANDLERS": {"ftp": None}})) == []


def test_custom_settings_count(caplog):
    class S(crawlfw.Spider):
        name = "s"
        custom_settings = {"CONCURRENT_ITEMS": 1}

    from crawlfw.crawler import Crawler

    Crawler(S, Settings())
    assert "Setting CONCURRENT_ITEMS has no effect in crawlfw" in caplog.text


def test_a_scheme_disabled_in_download_handlers_is_refused(tmp_path, caplog):
    (tmp_path / "index.html").write_text("<html></html>")
    server = StaticSiteServer(tmp_path).start()
    try:
        class S(crawlfw.Spider):
            name = "s"
            start_urls = [f"{server.url}/index.html"]

            def parse(self, response):
                yield {"url": response.url}

        result = run_crawl(S, {"DOWNLOAD_HANDLERS": {"http": None}})
        assert result.items == []
        assert "Unsupported URL scheme 'http' (disabled in DOWNLOAD_HANDLERS)" in caplog.text
        result = run_crawl(S, {"DOWNLOAD_HANDLERS": {"ftp": None}})
        assert result.items == [{"url": f"{server.url}/index.html"}]
    finally:
        server.stop()


@pytest.mark.slow
def test_command_line_warns_in_one_line(tmp_path):
    from tests.commands.conftest import run_crawlfw, write

    write(tmp_path / "sp.py", """
        import crawlfw

        class S(crawlfw.Spider):
            name = "s"
    """)
    result = run_crawlfw("runspider", "sp.py", "-s", "CONCURRENT_ITEMS=5",
                         "-s", "MEMDEBUG_NOTIFY=a@b.c", "-s", "DNS_TIMEOUT=5",
                         "-s", "DNSCACHE_SIZE=1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "has no effect" in line]
    assert len(lines) == 2  # DNS_TIMEOUT and DNSCACHE_SIZE act (curl options)
    assert "MEMDEBUG_NOTIFY" in lines[1]
    assert lines[0].endswith("WARNING: Setting CONCURRENT_ITEMS has no effect in crawlfw: "
                             + SETTINGS_WITHOUT_EFFECT["CONCURRENT_ITEMS"])


@pytest.mark.parametrize("name, value, warned", [
    # Scrapy 2.19's settings (issue 29): asking for what crawlfw does is no warning
    ("TWISTED_REACTOR", "twisted.internet.asyncioreactor.AsyncioSelectorReactor", False),
    ("TWISTED_REACTOR", "twisted.internet.epollreactor.EPollReactor", True),
    ("TWISTED_REACTOR_ENABLED", False, False),
    ("ADDONS", {}, False),
    ("ADDONS", {"my.Addon": 100}, True),
    ("ROBOTSTXT_PARSER", "scrapy.robotstxt.ProtegoRobotParser", False),
    ("TELNETCONSOLE_PORT", [6023, 6073], False),
    ("TELNETCONSOLE_PORT", [7000], True),
    ("REACTOR_THREADPOOL_MAXSIZE", 20, True),
])
def test_scrapy2_settings(caplog, name, value, warned):
    caplog.set_level(logging.WARNING)
    assert warn_settings_without_effect(Settings({name: value})) == ([name] if warned else [])
    if warned:
        assert caplog.records[0].getMessage() == (
            f"Setting {name} has no effect in crawlfw: {SETTINGS_WITHOUT_EFFECT[name]}")


def test_every_setting_without_effect_has_a_default():
    from crawlfw.settings import default_settings

    missing = [name for name in SETTINGS_WITHOUT_EFFECT if not hasattr(default_settings, name)]
    assert missing == ["DOWNLOADER_IDLE_TIMEOUT"]  # crawlfw's own, gone with the pool
