import email
import logging
import socketserver
import threading

import pytest

from crawlfw import signals
from crawlfw.exceptions import NotConfigured
from crawlfw.extensions import memusage
from crawlfw.extensions.memusage import MemoryUsage
from tests.extensions._crawler import get_crawler

WAIT_S = 10


def test_on_by_default_as_in_scrapy_2():
    assert MemoryUsage.from_crawler(get_crawler()).check_interval == 60.0
    with pytest.raises(NotConfigured):
        MemoryUsage.from_crawler(get_crawler({"MEMUSAGE_ENABLED": False}))


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
        assert ext.task.first_call_done.wait(WAIT_S)
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
        assert crawler.engine.close_called.wait(WAIT_S)
        ext.task.stop()
    crawler.signals.send_catch_log(signals.engine_stopped)
    assert crawler.engine.closed == [(spider, "memusage_exceeded")]
    assert crawler.stats.get_value("memusage/limit_reached") == 1
    # Scrapy 2.19: "Memory usage exceeded 1MiB. Shutting down Scrapy..."
    assert "Memory usage exceeded 1MiB. Shutting down crawlfw..." in caplog.messages
    assert not ext.task.running


def test_warning_logged_once(caplog):
    crawler = get_crawler({"MEMUSAGE_ENABLED": True, "MEMUSAGE_WARNING_MB": 1})
    crawler.warning_signals = 0

    def on_warning():
        crawler.warning_signals += 1

    crawler.signals.connect(on_warning, signals.memusage_warning_reached, weak=False)
    ext = MemoryUsage.from_crawler(crawler)
    with caplog.at_level(logging.WARNING, logger="crawlfw.extensions.memusage"):
        crawler.signals.send_catch_log(signals.engine_started)
        assert ext.task.first_call_done.wait(WAIT_S)
        crawler.signals.send_catch_log(signals.engine_stopped)
        ext._check_warning()
    assert caplog.messages.count("Memory usage reached 1MiB") == 1  # Scrapy 2.19's
    assert crawler.stats.get_value("memusage/warning_reached") == 1
    assert crawler.warning_signals == 1  # memusage_warning_reached (Scrapy 2.12), once
    assert crawler.engine.closed == []


def test_notify_mail_without_mail_module(monkeypatch, caplog):
    monkeypatch.setattr(memusage, "_load_mail_sender", lambda: None)
    crawler = get_crawler({"MEMUSAGE_ENABLED": True, "MEMUSAGE_WARNING_MB": 1,
                           "MEMUSAGE_NOTIFY_MAIL": ["ops@example.com"]})
    with caplog.at_level(logging.INFO, logger="crawlfw.extensions.memusage"):
        ext = MemoryUsage.from_crawler(crawler)
        crawler.signals.send_catch_log(signals.engine_started)
        assert ext.task.first_call_done.wait(WAIT_S)
    crawler.signals.send_catch_log(signals.engine_stopped)
    assert ext.mail is None
    assert any("MailSender is not available" in m for m in caplog.messages)
    assert any(m.startswith("Not sending memory usage mail") for m in caplog.messages)
    assert crawler.stats.get_value("memusage/warning_notified") is None


class _SMTPHandler(socketserver.StreamRequestHandler):
    """Just enough SMTP (RFC 5321) for smtplib: greets, accepts one message, quits."""

    def _reply(self, line):
        self.wfile.write(line.encode("ascii") + b"\r\n")

    def handle(self):
        self._reply("220 localhost test SMTP")
        while True:
            line = self.rfile.readline()
            if not line:
                return
            verb = line.split(b" ", 1)[0].strip().upper()
            if verb in (b"EHLO", b"HELO", b"MAIL", b"RCPT", b"RSET", b"NOOP"):
                self._reply("250 OK")
            elif verb == b"DATA":
                self._reply("354 go ahead")
                data = []
                for data_line in self.rfile:
                    if data_line == b".\r\n":
                        break
                    data.append(data_line)
                self.server.messages.append(b"".join(data))
                self._reply("250 queued")
                self.server.received.set()
            elif verb == b"QUIT":
                self._reply("221 bye")
                return
            else:
                self._reply("502 not implemented")


@pytest.fixture
def smtp_server():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _SMTPHandler)
    server.daemon_threads = True
    server.messages = []
    server.received = threading.Event()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(WAIT_S)


def test_warning_mail_sent(smtp_server):
    crawler = get_crawler({
        "MEMUSAGE_ENABLED": True, "MEMUSAGE_WARNING_MB": 1, "BOT_NAME": "membot",
        "MEMUSAGE_NOTIFY_MAIL": ["ops@example.com"],
        "MAIL_HOST": "127.0.0.1", "MAIL_PORT": smtp_server.server_address[1],
    })
    ext = MemoryUsage.from_crawler(crawler)
    assert ext.mail is not None
    crawler.signals.send_catch_log(signals.engine_started)
    try:
        assert smtp_server.received.wait(WAIT_S)
        assert ext.task.first_call_done.wait(WAIT_S)
    finally:
        crawler.signals.send_catch_log(signals.engine_stopped)
    [raw] = smtp_server.messages
    msg = email.message_from_bytes(raw)
    assert msg["To"] == "ops@example.com"
    assert msg["Subject"].startswith("membot warning: memory usage reached 1.0MiB at ")
    body = msg.get_payload()
    assert "Memory usage at engine startup" in body
    assert "Maximum memory usage" in body
    assert crawler.stats.get_value("memusage/warning_notified") == 1


def test_below_the_limit_each_check_logs_the_peak(caplog):
    # Scrapy 2.19: "Peak memory usage is <N>MiB" (INFO) when a limit is set, not reached
    crawler = get_crawler({"MEMUSAGE_LIMIT_MB": 1024 * 1024})
    ext = MemoryUsage.from_crawler(crawler)
    with caplog.at_level(logging.INFO, logger="crawlfw.extensions.memusage"):
        crawler.signals.send_catch_log(signals.engine_started)
        assert ext.task.first_call_done.wait(WAIT_S)
        crawler.signals.send_catch_log(signals.engine_stopped)
    [message] = [m for m in caplog.messages if m.startswith("Peak memory usage is ")]
    assert message.endswith("MiB")
    assert int(message[len("Peak memory usage is "):-3]) == (
        crawler.stats.get_value("memusage/max") // (1024 * 1024))
    assert crawler.engine.closed == []


@pytest.fixture
def one_page(tmp_path):
    from tests.support.servers import StaticSiteServer

    (tmp_path / "index.html").write_text("<html><body>hi</body></html>")
    server = StaticSiteServer(tmp_path).start()
    yield server
    server.stop()


def _one_page_spider(url):
    import crawlfw

    class OnePage(crawlfw.Spider):
        name = "onepage"
        start_urls = [url + "/"]

        def parse(self, response):
            yield {"url": response.url}

    return OnePage


@pytest.mark.slow
def test_a_default_crawl_has_scrapy_2s_memusage_stats(one_page):
    from tests.support.crawl import run_crawl

    result = run_crawl(_one_page_spider(one_page.url), {"LOG_LEVEL": "INFO"})
    assert result.finish_reason == "finished"
    assert result.stats["memusage/startup"] > 1024 * 1024
    assert result.stats["memusage/max"] >= result.stats["memusage/startup"]


@pytest.mark.slow
def test_a_crawl_past_the_limit_closes_with_memusage_exceeded(one_page, caplog):
    from tests.support.crawl import run_crawl

    with caplog.at_level(logging.INFO):
        result = run_crawl(_one_page_spider(one_page.url), {"MEMUSAGE_LIMIT_MB": 1})
    assert result.finish_reason == "memusage_exceeded"
    assert result.stats["memusage/limit_reached"] == 1
    assert "Memory usage exceeded 1MiB. Shutting down crawlfw..." in caplog.messages
