"""StatsMailer: mails the stats to STATSMAILER_RCPTS when a real crawl closes (aiosmtpd on
127.0.0.1)."""

import email
import queue

import pytest
from aiosmtpd.controller import Controller

from crawlfw import Spider
from crawlfw.exceptions import NotConfigured
from crawlfw.extensions.statsmailer import StatsMailer
from crawlfw.utils.test import get_crawler
from tests.support.crawl import run_crawl
from tests.support.servers import StaticSiteServer


class Inbox:
    def __init__(self):
        self.messages = queue.Queue()

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's name)
        self.messages.put((list(envelope.rcpt_tos), envelope.original_content))
        return "250 OK"


class FreePortController(Controller):
    def _trigger_server(self):
        self.port = self.server.sockets[0].getsockname()[1]
        super()._trigger_server()


@pytest.fixture
def smtp():
    inbox = Inbox()
    controller = FreePortController(inbox, hostname="127.0.0.1", port=0)
    controller.start()
    inbox.port = controller.port
    yield inbox
    controller.stop()


@pytest.fixture
def server(tmp_path):
    (tmp_path / "index.html").write_bytes(b"<html>hi</html>")
    srv = StaticSiteServer(tmp_path).start()
    yield srv
    srv.stop()


class OnePage(Spider):
    name = "onepage"

    def __init__(self, url, **kw):
        super().__init__(**kw)
        self.start_urls = [url]

    def parse(self, response):
        yield {"ok": True}


def test_not_configured_without_recipients():
    with pytest.raises(NotConfigured):
        StatsMailer.from_crawler(get_crawler())


def test_mails_stats_when_the_spider_closes(smtp, server):
    settings = {
        "EXTENSIONS": {"crawlfw.extensions.statsmailer.StatsMailer": 500},
        "STATSMAILER_RCPTS": ["ops@example.com", "dev@example.com"],
        "MAIL_HOST": "127.0.0.1",
        "MAIL_PORT": smtp.port,
        "MAIL_FROM": "bot@example.com",
    }
    result = run_crawl(OnePage, settings, url=f"{server.url}/index.html")
    assert result.finish_reason == "finished"
    rcpts, raw = smtp.messages.get(timeout=10)
    assert rcpts == ["ops@example.com", "dev@example.com"]
    message = email.message_from_bytes(raw)
    assert message["Subject"] == "crawlfw stats for: onepage"
    body = message.get_payload(decode=True).decode().replace("\r\n", "\n")
    assert body.startswith("Global stats\n\n")
    assert "\n\nonepage stats\n\n" in body
    item_lines = [line for line in body.splitlines() if line.startswith("item_scraped_count ")]
    assert item_lines and all(line.endswith(" : 1") for line in item_lines)
    assert smtp.messages.empty()
