"""Misspelled setting names (issue 29): one WARNING naming the likely setting for a near
miss of a known name; nothing for a project's or a plugin's own settings."""

import logging
import os
import subprocess

import pytest

from crawlfw.settings import Settings
from crawlfw.settings import _spelling as spelling
from crawlfw.settings._spelling import known_settings, likely_setting, warn_misspelled_settings


@pytest.mark.parametrize("name, likely", [
    ("CONCURENT_REQUESTS", "CONCURRENT_REQUESTS"),  # a letter dropped
    ("CONCURRENT_REQEUSTS", "CONCURRENT_REQUESTS"),  # two letters swapped
    ("DOWNLOAD_DEALY", "DOWNLOAD_DELAY"),
    ("CONCURRENT_REQUEST_PER_DOMIAN", "CONCURRENT_REQUESTS_PER_DOMAIN"),  # two words
    ("ITEM_PIPELINE", "ITEM_PIPELINES"),
    ("ITEMS_PIPELINES", "ITEM_PIPELINES"),
    ("DOWNLOADER_MIDDLEWARE", "DOWNLOADER_MIDDLEWARES"),
    ("LOG_LEVLE", "LOG_LEVEL"),
    ("RETRY_TIME", "RETRY_TIMES"),
    ("DEPTH_LIMT", "DEPTH_LIMIT"),
    ("JOB_DIR", "JOBDIR"),  # underscores only
    ("ROBOTS_TXT_OBEY", "ROBOTSTXT_OBEY"),
    ("download_delay", "DOWNLOAD_DELAY"),  # case only (-s)
    ("FRONTIER_CHECKPOINT_INTERVALL", "FRONTIER_CHECKPOINT_INTERVAL"),  # crawlfw's own
    ("SPIDER_LOADER_WARNONLY", "SPIDER_LOADER_WARN_ONLY"),  # Scrapy 2's
])
def test_near_misses(name, likely):
    assert likely_setting(name) == likely


@pytest.mark.parametrize("name", [
    # known: crawlfw's, Scrapy 2.19's, Scrapy 1.2's, read without a default
    "CONCURRENT_REQUESTS", "FRONTIER_URL", "TWISTED_REACTOR", "ADDONS",
    "DOWNLOADER_HTTPCLIENTFACTORY", "IMAGES_THUMBS", "JOBDIR", "SPIDER_LOADER_WARN_ONLY",
    # a project's own settings, far from any known one
    "MY_SETTING", "MONGO_URI", "MONGO_DB", "DATABASE_URL", "DB_NAME", "SENTRY_DSN",
    "BASE_DIR", "API_KEY", "DEBUG",
    # plugins' settings
    "SPLASH_URL", "ZYTE_API_KEY", "ZYTE_SMARTPROXY_APIKEY", "PLAYWRIGHT_BROWSER_TYPE",
    "SPIDERMON_ENABLED", "SCRAPEOPS_API_KEY", "ROTATING_PROXY_LIST", "REDIS_URL",
    "SCHEDULER_PERSIST", "SCHEDULER_QUEUE_KEY", "SCHEDULER_SERIALIZER", "DUPEFILTER_KEY",
    "SPLASH_COOKIES_DEBUG", "DELTAFETCH_ENABLED", "FAKEUSERAGENT_PROVIDERS",
    # a short word of a known name changed: another word, not a typo
    "HTTPCACHE_DB", "FEED_URL", "MAIL_TO", "FTP_HOST", "FTP_PORT", "FRONTIER_KEYS",
    # a known name plus S: a list of them
    "USER_AGENTS", "LOG_FILES", "CLOSESPIDER_PAGECOUNTS",
    # a known prefix with words of one's own
    "USER_AGENT_LIST", "MEMUSAGE_LIMIT", "DEFAULT_HEADERS", "HTTP_PROXY",
    # not setting names
    "_PRIVATE", "MyThing", "concurent_requests",
])
def test_no_false_positives(name):
    assert likely_setting(name) is None


def test_scrapy_projects_of_the_mirror_are_not_reported():
    """Every setting name of two real Scrapy 2 projects' settings modules (querido-diario,
    kingfisher-collect), written in here."""
    names = [
        "FILES_STORE_SECONDARY", "QUERIDODIARIO_API_KEY", "QUERIDODIARIO_DATABASE_URL",
        "QUERIDODIARIO_MAX_REQUESTS_ITEMS_RATIO", "REQUEST_FINGERPRINTER_IMPLEMENTATION",
        "SPIDERMON_DISCORD_FAKE", "SPIDERMON_MAX_ERRORS", "SPIDERMON_SPIDER_CLOSE_MONITORS",
        "SPIDERMON_VALIDATION_SCHEMAS", "CURL_IMPERSONATE", "KINGFISHER_API2_URL",
        "KINGFISHER_PLUCK_MAX_BYTES", "RABBIT_EXCHANGE_NAME", "RABBIT_ROUTING_KEY",
        "RABBIT_URL", "SLACK_WEBHOOK_URL",
    ]
    assert [n for n in names if likely_setting(n)] == []


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(spelling, "_warned", set())


def test_one_warning_per_name_with_where_it_was_set(fresh, caplog):
    settings = Settings({"CONCURENT_REQUESTS": 4, "MY_SETTING": 1})  # 'project'
    settings.set("DOWNLOAD_DEALY", 1, priority="cmdline")
    settings.set("ITEM_PIPELINE", {}, priority="spider")
    with caplog.at_level(logging.WARNING, logger="crawlfw.settings"):
        assert warn_misspelled_settings(settings) == [
            ("CONCURENT_REQUESTS", "CONCURRENT_REQUESTS"),
            ("DOWNLOAD_DEALY", "DOWNLOAD_DELAY"),
            ("ITEM_PIPELINE", "ITEM_PIPELINES"),
        ]
        assert warn_misspelled_settings(settings) == []  # once per process
    assert [r.getMessage() for r in caplog.records] == [
        "Setting 'CONCURENT_REQUESTS' (set in the project's settings) is not a known "
        "setting: did you mean 'CONCURRENT_REQUESTS'? (it is ignored)",
        "Setting 'DOWNLOAD_DEALY' (set with -s on the command line) is not a known "
        "setting: did you mean 'DOWNLOAD_DELAY'? (it is ignored)",
        "Setting 'ITEM_PIPELINE' (set in the spider's custom_settings) is not a known "
        "setting: did you mean 'ITEM_PIPELINES'? (it is ignored)",
    ]
    assert all(r.levelno == logging.WARNING for r in caplog.records)


def test_settings_of_commands_and_defaults_are_not_checked(fresh):
    settings = Settings()
    settings.set("CONCURENT_REQUESTS", 1, priority="command")
    assert warn_misspelled_settings(settings) == []


def test_a_crawler_warns(fresh, caplog):
    from crawlfw.crawler import Crawler
    from crawlfw.spiders import Spider

    class Custom(Spider):
        name = "custom"
        custom_settings = {"CLOSESPIDER_TIMOUT": 5}

    with caplog.at_level(logging.WARNING, logger="crawlfw.settings"):
        Crawler(Custom, Settings({"MY_SETTING": 1}))
    assert [r.getMessage() for r in caplog.records] == [
        "Setting 'CLOSESPIDER_TIMOUT' (set in the spider's custom_settings) is not a known "
        "setting: did you mean 'CLOSESPIDER_TIMEOUT'? (it is ignored)"]


SCRAPY_PYTHON = "/work/venv-scrapy/bin/python"


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(SCRAPY_PYTHON), reason="no Scrapy 2.19 venv here")
def test_every_scrapy_default_setting_is_known():
    out = subprocess.run(
        [SCRAPY_PYTHON, "-c", "import scrapy.settings.default_settings as d; "
                              "print(' '.join(n for n in dir(d) if n.isupper()))"],
        capture_output=True, text=True, check=True, timeout=60).stdout.split()
    assert len(out) > 150
    assert sorted(set(out) - known_settings()) == []
