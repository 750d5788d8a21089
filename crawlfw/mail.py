"""Sending e-mail (Scrapy 1.2 ``scrapy.mail``), synchronously with :mod:`smtplib`.

Scrapy's ``MailSender.send`` returned a Twisted Deferred; here :meth:`MailSender.send`
blocks until the SMTP server has accepted (or refused) the message and returns whether
it was sent. Failures are logged, not raised, as Scrapy's errback did. Call it from a
thread that may block (an extension's actor, a script), not from a latency-critical loop.
"""

from __future__ import annotations

import logging
import smtplib
from email import encoders
from email.header import Header
from email.mime.base import MIMEBase
from email.mime.multipart import MIMEMultipart
from email.mime.nonmultipart import MIMENonMultipart
from email.mime.text import MIMEText
from email.utils import COMMASPACE, formatdate

from crawlfw.utils.misc import arg_to_iter

__all__ = ["MailSender"]

logger = logging.getLogger(__name__)


class MailSender:
    """Send e-mail through an SMTP server (RFC 5321), building MIME messages (RFC 2045).

    Args:
        smtphost (str): SMTP server host name.
        mailfrom (str): the sender address, used in ``From:`` and ``MAIL FROM``.
        smtpuser (str | None): user name for SMTP AUTH (RFC 4954); None: no login.
        smtppass (str | None): password for SMTP AUTH.
        smtpport (int): SMTP server port.
        smtptls (bool): upgrade the connection with STARTTLS (RFC 3207).
        smtpssl (bool): connect over implicit TLS (SMTPS, RFC 8314), usually port 465.
        debug (bool): do not send anything; log the message at DEBUG level instead.
        timeout_s (float): keyword only; socket timeout for the SMTP session, seconds.
    """

    def __init__(self, smtphost="localhost", mailfrom="crawlfw@localhost", smtpuser=None,
                 smtppass=None, smtpport=25, smtptls=False, smtpssl=False, debug=False,
                 *, timeout_s=60.0):
        self.smtphost = smtphost
        self.smtpport = smtpport
        self.smtpuser = smtpuser
        self.smtppass = smtppass
        self.smtptls = smtptls
        self.smtpssl = smtpssl
        self.mailfrom = mailfrom
        self.debug = debug
        self.timeout_s = timeout_s

    @classmethod
    def from_crawler(cls, crawler):
        """Build from the crawler's settings (Scrapy 2.4+; see :meth:`from_settings`).

        Args:
            crawler: the Crawler.

        Returns:
            MailSender
        """
        return cls.from_settings(crawler.settings)

    @classmethod
    def from_settings(cls, settings):
        """Build from ``MAIL_HOST``, ``MAIL_FROM``, ``MAIL_USER``, ``MAIL_PASS``,
        ``MAIL_PORT``, ``MAIL_TLS`` and ``MAIL_SSL``.

        Args:
            settings: a :class:`~crawlfw.settings.Settings`.

        Returns:
            MailSender
        """
        return cls(
            settings.get("MAIL_HOST", "localhost"),
            settings.get("MAIL_FROM", "crawlfw@localhost"),
            settings.get("MAIL_USER"),
            settings.get("MAIL_PASS"),
            settings.getint("MAIL_PORT", 25),
            settings.getbool("MAIL_TLS"),
            settings.getbool("MAIL_SSL"),
        )

    def send(self, to, subject, body, cc=None, attachs=(), mimetype="text/plain",
             charset=None, _callback=None):
        """Build a message and send it.

        Args:
            to (str | list[str]): recipient address(es).
            subject (str): the ``Subject:``.
            body (str): the message text.
            cc (str | list[str] | None): carbon-copy address(es), also recipients.
            attachs (Iterable[tuple[str, str, file]]): attachments as
                ``(file name, MIME type, binary file object)``; each is read and
                base64-encoded. With attachments the message is ``multipart/mixed`` and
                the body its first, ``text/plain`` part.
            mimetype (str): the body's MIME type when there are no attachments.
            charset (str | None): the body's charset (e.g. ``'utf-8'``); None means
                ``us-ascii`` for an ASCII body and ``utf-8`` otherwise.
            _callback: called with ``to, subject, body, cc, attach, msg`` (keyword
                arguments) before sending, as in Scrapy (used by tests).

        Returns:
            bool: True when the server accepted the message (or ``debug`` is set), False
            when sending failed (the error is logged: "Unable to send mail: ...").

        Raises:
            ValueError: ``mimetype`` or an attachment's type is not ``type/subtype``.
        """
        if attachs:
            msg = MIMEMultipart()
        else:
            msg = MIMENonMultipart(*_split_mimetype(mimetype))

        to = list(arg_to_iter(to))
        cc = list(arg_to_iter(cc))

        msg["From"] = self.mailfrom
        msg["To"] = COMMASPACE.join(to)
        msg["Date"] = formatdate(localtime=True)
        msg["Subject"] = subject if subject.isascii() else Header(subject, charset or "utf-8")
        rcpts = to[:]
        if cc:
            rcpts.extend(cc)
            msg["Cc"] = COMMASPACE.join(cc)

        if not charset and not body.isascii():
            charset = "utf-8"  # us-ascii cannot carry it
        if attachs:
            msg.attach(MIMEText(body, "plain", charset or "us-ascii"))
            for attach_name, attach_type, f in attachs:
                part = MIMEBase(*_split_mimetype(attach_type))
                part.set_payload(f.read())
                encoders.encode_base64(part)
                part.add_header("Content-Disposition", "attachment", filename=attach_name)
                msg.attach(part)
        else:
            # The charset goes on the text part only (RFC 2045 section 6.4: a multipart
            # entity has no charset and no encoding of its own).
            msg.set_payload(body, charset)

        if _callback:
            _callback(to=to, subject=subject, body=body, cc=cc, attach=attachs, msg=msg)

        log_args = {"mailto": to, "mailcc": cc, "mailsubject": subject,
                    "mailattachs": len(attachs)}
        if self.debug:
            logger.debug('Debug mail sent OK: To=%(mailto)s Cc=%(mailcc)s '
                         'Subject="%(mailsubject)s" Attachs=%(mailattachs)d', log_args)
            return True

        try:
            # SMTP DATA lines end in CRLF (RFC 5321 section 2.3.8).
            self._sendmail(rcpts, msg.as_bytes(policy=msg.policy.clone(linesep="\r\n")))
        except (smtplib.SMTPException, OSError) as e:
            log_args["mailerr"] = f"{type(e).__name__}: {e}"
            logger.error('Unable to send mail: To=%(mailto)s Cc=%(mailcc)s '
                         'Subject="%(mailsubject)s" Attachs=%(mailattachs)d'
                         '- %(mailerr)s', log_args)
            return False
        logger.info('Mail sent OK: To=%(mailto)s Cc=%(mailcc)s '
                    'Subject="%(mailsubject)s" Attachs=%(mailattachs)d', log_args)
        return True

    def _sendmail(self, to_addrs, msg_bytes):
        """Open an SMTP session, authenticate if configured, send, quit.

        Raises:
            smtplib.SMTPException: the server refused (login, sender, all recipients).
            OSError: connection failure or timeout.
        """
        smtp_cls = smtplib.SMTP_SSL if self.smtpssl else smtplib.SMTP
        with smtp_cls(self.smtphost, self.smtpport, timeout=self.timeout_s) as smtp:
            if self.smtptls and not self.smtpssl:
                smtp.starttls()
            if self.smtpuser:
                smtp.login(self.smtpuser, self.smtppass or "")
            smtp.sendmail(self.mailfrom, to_addrs, msg_bytes)


def _split_mimetype(mimetype):
    maintype, sep, subtype = mimetype.partition("/")
    if not sep or not maintype or not subtype:
        raise ValueError(f"MIME type {mimetype!r} is not of the form 'type/subtype'")
    return maintype, subtype
