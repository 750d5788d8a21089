"""Set the ``User-Agent`` header from ``USER_AGENT`` or the spider's ``user_agent``."""

from crawlfw import signals
from crawlfw.utils._spiderarg import spider_of

__all__ = ["UserAgentMiddleware"]


class UserAgentMiddleware:
    """Set a default ``User-Agent`` header on requests that have none.

    The value is the spider's ``user_agent`` attribute when it has one, else the
    ``USER_AGENT`` setting. An empty value sends no header.

    Args:
        user_agent: the default User-Agent string.
    """

    _opened_spider = None
    crawler = None  # set by from_crawler

    def __init__(self, user_agent: str = "crawlfw"):
        self.user_agent = user_agent

    @classmethod
    def from_crawler(cls, crawler):
        o = cls(crawler.settings["USER_AGENT"])
        crawler.signals.connect(o.spider_opened, signal=signals.spider_opened)
        o.crawler = crawler
        return o

    def spider_opened(self, spider):
        """Signal handler: adopt ``spider.user_agent`` when the spider sets one.

        Also called by the first ``process_request`` for a spider, in case the signal
        was never sent to it (a middleware used outside a crawl; in the runtime the
        managers are built before ``spider_opened`` is sent).
        """
        self._opened_spider = spider
        self.user_agent = getattr(spider, "user_agent", self.user_agent)

    def process_request(self, request, spider=None):
        if self._opened_spider is not spider or spider is None:
            spider = spider_of(self, spider)  # (None: the crawler's spider, Scrapy 2.19)
            if spider is not None and spider is not self._opened_spider:
                self.spider_opened(spider)
        if self.user_agent:
            request.headers.setdefault(b"User-Agent", self.user_agent)
