"""Watches the process's memory; warns and closes the spider past configured limits
(Scrapy's ``scrapy.extensions.memusage``, on by default as in Scrapy 2)."""

import logging
import socket
import sys
from importlib import import_module
from pprint import pformat

from crawlfw import signals
from crawlfw.exceptions import NotConfigured
from crawlfw.extensions._periodic import PeriodicCall

__all__ = ["MemoryUsage"]

logger = logging.getLogger(__name__)


def _load_mail_sender():
    try:
        from crawlfw.mail import MailSender
    except ImportError:
        return None
    return MailSender


class MemoryUsage:
    """Tracks peak memory use (stats ``memusage/startup``, ``memusage/max``) and enforces limits.

    Settings: ``MEMUSAGE_ENABLED`` (on by default, as in Scrapy 2; Scrapy 1.2 had it
    off), ``MEMUSAGE_LIMIT_MB`` (close the spider with reason ``memusage_exceeded``
    above it, logging "Memory usage exceeded <N>MiB. Shutting down crawlfw..." at
    ERROR; below it each check logs "Peak memory usage is <N>MiB" at INFO, as Scrapy
    2.19 does; 0 = no limit), ``MEMUSAGE_WARNING_MB`` (log "Memory usage reached
    <N>MiB" once above it and send ``memusage_warning_reached``; 0 = none),
    ``MEMUSAGE_CHECK_INTERVAL_SECONDS`` and ``MEMUSAGE_NOTIFY_MAIL`` (addresses
    mailed when a limit is reached, if :mod:`crawlfw.mail` is available; if not,
    that is logged and no mail is sent).

    The measure is the peak resident set size from :func:`resource.getrusage`
    (``ru_maxrss``; KiB on Linux, bytes on macOS), as in Scrapy 1.2: it never
    goes down. Checks run on a daemon thread, at once when the engine starts and
    then every interval, until the engine stops (or the limit is exceeded); mail
    is sent from that thread. Unix only (NotConfigured elsewhere).

    Args:
        crawler: the crawler (``settings``, ``signals``, ``stats``, ``engine``).
    """

    def __init__(self, crawler):
        if not crawler.settings.getbool('MEMUSAGE_ENABLED'):
            raise NotConfigured
        try:
            # the stdlib resource module only exists on Unix
            self.resource = import_module('resource')
        except ImportError:
            raise NotConfigured from None

        self.crawler = crawler
        self.warned = False
        self.notify_mails = crawler.settings.getlist('MEMUSAGE_NOTIFY_MAIL')
        self.limit = crawler.settings.getint('MEMUSAGE_LIMIT_MB') * 1024 * 1024
        self.warning = crawler.settings.getint('MEMUSAGE_WARNING_MB') * 1024 * 1024
        self.report = crawler.settings.getbool('MEMUSAGE_REPORT')
        self.check_interval = crawler.settings.getfloat('MEMUSAGE_CHECK_INTERVAL_SECONDS')
        self.mail = None
        if self.notify_mails:
            mail_sender = _load_mail_sender()
            if mail_sender is None:
                logger.warning("MEMUSAGE_NOTIFY_MAIL is set but crawlfw.mail.MailSender is "
                               "not available: no memory usage mail will be sent",
                               extra={'crawler': crawler})
            else:
                self.mail = mail_sender.from_settings(crawler.settings)
        self.task = None
        crawler.signals.connect(self.engine_started, signal=signals.engine_started)
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def get_virtual_size(self):
        """Peak resident set size of this process, in bytes."""
        size = self.resource.getrusage(self.resource.RUSAGE_SELF).ru_maxrss
        if sys.platform != 'darwin':
            # ru_maxrss is in KiB on Linux, in bytes on macOS
            size *= 1024
        return size

    def engine_started(self):
        self.crawler.stats.set_value('memusage/startup', self.get_virtual_size())
        self.update()  # here, as Scrapy's first (synchronous) call: a crawl that ends at
        # once has memusage/max too
        self.task = PeriodicCall(self._check, self.check_interval, name='crawlfw-memusage')
        self.task.start(now=True)

    def engine_stopped(self):
        if self.task is not None:
            self.task.stop()

    def _check(self):
        self.update()
        if self.limit:
            self._check_limit()
        if self.warning:
            self._check_warning()

    def update(self):
        self.crawler.stats.max_value('memusage/max', self.get_virtual_size())

    def _check_limit(self):
        peak = self.get_virtual_size()
        if peak <= self.limit:
            logger.info("Peak memory usage is %(virtualsize)dMiB",
                        {'virtualsize': peak / 1024 / 1024}, extra={'crawler': self.crawler})
        else:
            self.crawler.stats.set_value('memusage/limit_reached', 1)
            mem = self.limit / 1024 / 1024
            logger.error("Memory usage exceeded %(memusage)dMiB. Shutting down crawlfw...",
                         {'memusage': mem}, extra={'crawler': self.crawler})
            if self.notify_mails:
                subj = (f"{self.crawler.settings['BOT_NAME']} terminated: memory usage "
                        f"exceeded {mem}MiB at {socket.gethostname()}")
                if self._send_report(self.notify_mails, subj):
                    self.crawler.stats.set_value('memusage/limit_notified', 1)
            # stop checking: the spider is being closed
            if self.task is not None:
                self.task.stop()
            spider = getattr(self.crawler, 'spider', None)
            if spider is not None:
                self.crawler.engine.close_spider(spider, 'memusage_exceeded')
            elif hasattr(self.crawler, 'stop'):
                self.crawler.stop()

    def _check_warning(self):
        if self.warned:  # warn only once
            return
        if self.get_virtual_size() > self.warning:
            self.crawler.stats.set_value('memusage/warning_reached', 1)
            self.crawler.signals.send_catch_log(signal=signals.memusage_warning_reached)
            mem = self.warning / 1024 / 1024
            logger.warning("Memory usage reached %(memusage)dMiB",
                           {'memusage': mem}, extra={'crawler': self.crawler})
            if self.notify_mails:
                subj = (f"{self.crawler.settings['BOT_NAME']} warning: memory usage "
                        f"reached {mem}MiB at {socket.gethostname()}")
                if self._send_report(self.notify_mails, subj):
                    self.crawler.stats.set_value('memusage/warning_notified', 1)
            self.warned = True

    def _send_report(self, rcpts, subject):
        """Mail a memory report; return False (and log) when mail is unavailable."""
        if self.mail is None:
            logger.info("Not sending memory usage mail %(subject)r: crawlfw.mail is not "
                        "available", {'subject': subject}, extra={'crawler': self.crawler})
            return False
        stats = self.crawler.stats
        mib = 1024 * 1024
        startup = stats.get_value('memusage/startup', 0) // mib
        peak = stats.get_value('memusage/max', 0) // mib
        s = f"Memory usage at engine startup : {startup}M\r\n"
        s += f"Maximum memory usage           : {peak}M\r\n"
        s += f"Current memory usage           : {self.get_virtual_size() // mib}M\r\n"
        s += "ENGINE STATUS ------------------------------------------------------- \r\n"
        s += "\r\n"
        s += pformat(_engine_status(self.crawler.engine))
        s += "\r\n"
        return self.mail.send(rcpts, subject, s) is not False


def _engine_status(engine):
    try:
        from crawlfw.utils.engine import get_engine_status
    except ImportError:
        return []
    try:
        return get_engine_status(engine)
    except Exception as e:
        return [('engine status unavailable', repr(e))]
