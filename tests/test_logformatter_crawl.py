"""A project's LogFormatter decides the messages of item errors, spider errors and
download errors, as in Scrapy 2.19 (issue 29): a real crawl of a local server with a
callback that raises, a pipeline that raises and a request no server answers."""

import logging
import socket

import pytest

import crawlfw
from crawlfw.logformatter import LogFormatter
from tests.downloadermiddlewares._support import ScriptedServer
from tests.support.crawl import run_crawl

pytestmark = pytest.mark.slow

PAGE = (200, [("Content-Type", "text/html")], b"<html><body>page</body></html>")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ErrorsSpider(crawlfw.Spider):
    name = "errors"
    base = ""
    dead = ""

    def start_requests(self):
        yield crawlfw.Request(f"{self.base}/item")
        yield crawlfw.Request(f"{self.base}/raise", callback=self.parse_raise)
        yield crawlfw.Request(self.dead)

    def parse(self, response):
        yield {"url": response.url}

    def parse_raise(self, response):
        raise KeyError("callback broke")


class RaisingPipeline:
    def process_item(self, item, spider):
        raise RuntimeError("pipeline broke")


class ProjectFormatter(LogFormatter):
    def item_error(self, item, exception, response, spider):
        return {"level": logging.WARNING, "msg": "ITEM %(exc)s at %(url)s",
                "args": {"exc": exception, "url": response.url}}

    def spider_error(self, failure, request, response, spider):
        return {"level": logging.CRITICAL, "msg": "SPIDER %(type)s on %(status)s",
                "args": {"type": failure.value.__class__.__name__, "status": response.status}}

    def download_error(self, failure, request, spider, errmsg=None):
        return {"level": logging.INFO, "msg": "DOWNLOAD %(url)s: %(errmsg)s",
                "args": {"url": request.url, "errmsg": errmsg}}


def _crawl(caplog, formatter):
    caplog.set_level(logging.DEBUG)
    with ScriptedServer({"/item": PAGE, "/raise": PAGE}) as server:
        settings = {"ITEM_PIPELINES": {f"{__name__}.RaisingPipeline": 100},
                    "RETRY_ENABLED": False}
        if formatter:
            settings["LOG_FORMATTER"] = f"{__name__}.{formatter}"
        dead = f"http://127.0.0.1:{_closed_port()}/dead"
        result = run_crawl(ErrorsSpider, settings, base=server.url, dead=dead)
    assert result.finish_reason == "finished"
    return server.url, dead, [(r.levelno, r.getMessage(), r.exc_info is not None)
                              for r in caplog.records]


def test_project_formatter_decides_the_error_messages(caplog):
    base, dead, records = _crawl(caplog, "ProjectFormatter")
    assert (logging.WARNING, f"ITEM pipeline broke at {base}/item", True) in records
    assert (logging.CRITICAL, "SPIDER KeyError on 200", True) in records
    download = [r for r in records if r[1].startswith("DOWNLOAD ")]
    assert len(download) == 1 and download[0][0] == logging.INFO
    assert download[0][1].startswith(f"DOWNLOAD {dead}: ") and "refused" in download[0][1].lower()
    assert not [r for r in records if r[1].startswith(("Error processing", "Spider error",
                                                       "Error downloading"))]


def test_default_formatter_messages(caplog):
    base, dead, records = _crawl(caplog, None)
    errors = {m.split(" <")[0].split(" {")[0] for lvl, m, _ in records if lvl == logging.ERROR}
    assert {"Error processing", "Spider error processing", "Error downloading"} <= errors
    spider_error = next(r for r in records if r[1].startswith("Spider error processing"))
    assert spider_error[1] == f"Spider error processing <GET {base}/raise> (referer: None)"
    assert spider_error[2]  # with the traceback
    download = next(r for r in records if r[1].startswith("Error downloading"))
    assert download[1].startswith(f"Error downloading <GET {dead}>: ") and not download[2]
