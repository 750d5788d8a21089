"""StatsMailer extension: e-mail the crawl stats when the spider closes (Scrapy 1.2's
``scrapy.extensions.statsmailer``).

Enable it in ``EXTENSIONS`` (``{'crawlfw.extensions.statsmailer.StatsMailer': 500}``) and
list the recipients in ``STATSMAILER_RCPTS``; the mail goes through
:class:`crawlfw.mail.MailSender` built from the ``MAIL_*`` settings.
"""

from crawlfw import signals
from crawlfw.exceptions import NotConfigured
from crawlfw.mail import MailSender

__all__ = ["StatsMailer"]


class StatsMailer:
    """Send the global and the spider's stats to ``recipients`` on ``spider_closed``.

    Args:
        stats: the crawl's stats collector.
        recipients: e-mail addresses (``list[str]``).
        mail: a :class:`~crawlfw.mail.MailSender`.
    """

    def __init__(self, stats, recipients, mail):
        self.stats = stats
        self.recipients = recipients
        self.mail = mail

    @classmethod
    def from_crawler(cls, crawler):
        """Build from ``STATSMAILER_RCPTS`` and the ``MAIL_*`` settings.

        Raises:
            NotConfigured: ``STATSMAILER_RCPTS`` is empty.
        """
        recipients = crawler.settings.getlist("STATSMAILER_RCPTS")
        if not recipients:
            raise NotConfigured
        mail = MailSender.from_settings(crawler.settings)
        o = cls(crawler.stats, recipients, mail)
        crawler.signals.connect(o.spider_closed, signal=signals.spider_closed)
        return o

    def spider_closed(self, spider):
        """Send the mail (subject ``crawlfw stats for: <spider name>``), one
        ``name : value`` line per stat.

        Returns:
            bool: what ``MailSender.send`` returned (False when sending failed; logged).
        """
        body = "Global stats\n\n"
        body += "\n".join(f"{k:<50} : {v}" for k, v in self.stats.get_stats().items())
        body += f"\n\n{spider.name} stats\n\n"
        body += "\n".join(f"{k:<50} : {v}" for k, v in self.stats.get_stats(spider).items())
        return self.mail.send(self.recipients, f"crawlfw stats for: {spider.name}", body)
