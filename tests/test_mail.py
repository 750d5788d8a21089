"""MailSender against a real SMTP server (aiosmtpd) on 127.0.0.1."""

import email
import io
import logging
import queue
import socket

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from crawlfw.mail import MailSender
from crawlfw.settings import Settings

# aiosmtpd warns when AUTH is allowed without TLS: fine on loopback.
pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")


class _Inbox:
    """aiosmtpd handler keeping every accepted message as (envelope from, rcpts, bytes)."""

    def __init__(self):
        self.messages = queue.Queue()

    async def handle_DATA(self, server, session, envelope):
        self.messages.put((envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content))
        return "250 OK"

    def get(self):
        return self.messages.get(timeout=10)


class _Controller(Controller):
    """An aiosmtpd Controller that binds a free port (port 0) and learns which."""

    def _trigger_server(self):
        self.port = self.server.sockets[0].getsockname()[1]
        super()._trigger_server()


def _authenticator(server, session, envelope, mechanism, auth_data):
    ok = auth_data.login == b"mailer" and auth_data.password == b"s3cret"
    return AuthResult(success=ok, handled=False)  # handled=False: server answers 535


@pytest.fixture
def smtp_server():
    inbox = _Inbox()
    controller = _Controller(inbox, hostname="127.0.0.1", port=0)
    controller.start()
    inbox.port = controller.port
    yield inbox
    controller.stop()


@pytest.fixture
def smtp_auth_server():
    inbox = _Inbox()
    controller = _make_auth_controller(inbox)
    controller.start()
    inbox.port = controller.port
    yield inbox
    controller.stop()


def _make_auth_controller(inbox):
    return _Controller(
        inbox,
        hostname="127.0.0.1",
        port=0,
        authenticator=_authenticator,
        auth_required=True,
        auth_require_tls=False,
        auth_exclude_mechanism=["LOGIN"],  # PLAIN is enough to test SMTP AUTH
    )


def _sender(port, **kw):
    return MailSender(smtphost="127.0.0.1", smtpport=port, mailfrom="bot@example.com",
                      timeout_s=10, **kw)


def test_send_plain_message(smtp_server, caplog):
    caplog.set_level(logging.INFO, logger="crawlfw.mail")
    ok = _sender(smtp_server.port).send(
        to=["a@example.com", "b@example.com"], subject="Report", body="All good.\n",
        cc="c@example.com",
    )
    assert ok is True
    mail_from, rcpts, raw = smtp_server.get()
    assert mail_from == "bot@example.com"
    assert rcpts == ["a@example.com", "b@example.com", "c@example.com"]
    assert b"\r\n" in raw  # CRLF line ends on the wire
    msg = email.message_from_bytes(raw)
    assert msg["From"] == "bot@example.com"
    assert msg["To"] == "a@example.com, b@example.com"
    assert msg["Cc"] == "c@example.com"
    assert msg["Subject"] == "Report"
    assert msg["Date"]
    assert msg.get_content_type() == "text/plain"
    assert msg.get_payload(decode=True) == b"All good.\r\n"
    assert ("Mail sent OK: To=['a@example.com', 'b@example.com'] Cc=['c@example.com'] "
            'Subject="Report" Attachs=0') in caplog.messages


def test_send_unicode_body_and_subject(smtp_server):
    assert _sender(smtp_server.port).send("a@example.com", "Résumé ☃", "Café ☃", charset="utf-8")
    _, _, raw = smtp_server.get()
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert msg["Subject"] == "Résumé ☃"
    assert msg.get_content_charset() == "utf-8"
    assert msg.get_content() == "Café ☃"


def test_non_ascii_body_without_charset_uses_utf8(smtp_server):
    assert _sender(smtp_server.port).send("a@example.com", "s", "naïve")
    _, _, raw = smtp_server.get()
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert msg.get_content() == "naïve"


def test_send_html_mimetype(smtp_server):
    _sender(smtp_server.port).send("a@example.com", "s", "<b>hi</b>", mimetype="text/html")
    _, _, raw = smtp_server.get()
    assert email.message_from_bytes(raw).get_content_type() == "text/html"


def test_send_with_attachments(smtp_server):
    attachs = [
        ("data.csv", "text/csv", io.BytesIO(b"a,b\r\n1,2\r\n")),
        ("blob.bin", "application/octet-stream", io.BytesIO(bytes(range(256)))),
    ]
    assert _sender(smtp_server.port).send("a@example.com", "files", "see attached", attachs=attachs)
    _, _, raw = smtp_server.get()
    msg = email.message_from_bytes(raw)
    assert msg.get_content_type() == "multipart/mixed"
    body, csv_part, bin_part = msg.get_payload()
    assert body.get_payload(decode=True) == b"see attached"
    assert csv_part.get_filename() == "data.csv"
    assert csv_part.get_content_type() == "text/csv"
    assert csv_part.get_payload(decode=True) == b"a,b\r\n1,2\r\n"
    assert bin_part.get_filename() == "blob.bin"
    assert bin_part.get_payload(decode=True) == bytes(range(256))


def test_login(smtp_auth_server):
    sender = _sender(smtp_auth_server.port, smtpuser="mailer", smtppass="s3cret")
    assert sender.send("a@example.com", "s", "authenticated") is True
    assert smtp_auth_server.get()[1] == ["a@example.com"]


def test_bad_login_is_logged_not_raised(smtp_auth_server, caplog):
    sender = _sender(smtp_auth_server.port, smtpuser="mailer", smtppass="wrong")
    assert sender.send("a@example.com", "Subj", "x") is False
    (record,) = [r for r in caplog.records if r.name == "crawlfw.mail"]
    assert record.levelno == logging.ERROR
    assert record.getMessage().startswith(
        "Unable to send mail: To=['a@example.com'] Cc=[] Subject=\"Subj\" Attachs=0"
        "- SMTPAuthenticationError: (535"
    )
    assert smtp_auth_server.messages.empty()


def test_connection_refused_is_logged(caplog):
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert _sender(port).send("a@example.com", "s", "x") is False
    assert any("Unable to send mail" in m and "ConnectionRefusedError" in m
               for m in caplog.messages)


def test_debug_mode_sends_nothing(smtp_server, caplog):
    caplog.set_level(logging.DEBUG, logger="crawlfw.mail")
    seen = {}
    ok = _sender(smtp_server.port, debug=True).send(
        "a@example.com", "dbg", "x", _callback=lambda **kw: seen.update(kw)
    )
    assert ok is True
    assert seen["to"] == ["a@example.com"] and seen["subject"] == "dbg"
    assert seen["msg"]["Subject"] == "dbg"
    assert smtp_server.messages.empty()
    assert ('Debug mail sent OK: To=[\'a@example.com\'] Cc=[] Subject="dbg" Attachs=0'
            in caplog.messages)


def test_from_settings(smtp_server):
    settings = Settings({
        "MAIL_HOST": "127.0.0.1", "MAIL_PORT": str(smtp_server.port),
        "MAIL_FROM": "settings@example.com", "MAIL_USER": None,
    })
    sender = MailSender.from_settings(settings)
    assert (sender.smtphost, sender.smtpport, sender.mailfrom) == (
        "127.0.0.1", smtp_server.port, "settings@example.com")
    assert (sender.smtptls, sender.smtpssl, sender.debug) == (False, False, False)
    assert sender.send("a@example.com", "s", "x")
    assert smtp_server.get()[0] == "settings@example.com"


@pytest.mark.parametrize("bad", ["text", "text/", "/plain"])
def test_bad_mimetype(bad):
    with pytest.raises(ValueError, match="is not of the form 'type/subtype'"):
        MailSender(debug=True).send("a@example.com", "s", "x", mimetype=bad)


def test_from_crawler_reads_the_crawlers_settings():
    from crawlfw.crawler import Crawler
    from crawlfw.mail import MailSender
    from crawlfw.spiders import Spider

    crawler = Crawler(Spider, {"MAIL_HOST": "mail.example", "MAIL_PORT": 2525,
                               "MAIL_FROM": "bot@example.com"})
    sender = MailSender.from_crawler(crawler)
    assert (sender.smtphost, sender.smtpport, sender.mailfrom) == (
        "mail.example", 2525, "bot@example.com")
