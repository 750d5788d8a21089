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


def test_not_configured_by_default():
    with pytest.raises(NotConfigured):
        MemoryUsage.from_crawler(get_crawler())


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
    assert "Memory usage exceeded 1M. Shutting down crawlfw..." in caplog.messages
    assert not ext.task.running


def test_warning_logged_once(caplog):
    crawler = get_crawler({"MEMUSAGE_ENABLED": True, "MEMUSAGE_WARNING_MB": 1})
    ext = MemoryUsage.from_crawler(crawler)
    with caplog.at_level(logging.WARNING, logger="crawlfw.extensions.memusage"):
        crawler.signals.send_catch_log(signals.engine_started)
        assert ext.task.first_call_done.wait(WAIT_S)
        crawler.signals.send_catch_log(signals.engine_stopped)
        ext._check_warning()
    assert caplog.messages.count("Memory usage reached 1M") == 1
    assert crawler.stats.get_value("memusage/warning_reached") == 1
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
    assert msg["Subject"].startswith("membot warning: memory usage reached 1M at ")
    body = msg.get_payload()
    assert "Memory usage at engine startup" in body
    assert "Maximum memory usage" in body
    assert crawler.stats.get_value("memusage/warning_notified") == 1
