"""HTTP Basic authentication from the spider's ``http_user``/``http_pass`` attributes."""

import logging

from w3lib.http import basic_auth_header

from crawlfw import signals
from crawlfw.utils._spiderarg import spider_of
from crawlfw.utils.httpobj import urlparse_cached

__all__ = ["HttpAuthMiddleware"]

logger = logging.getLogger(__name__)

_UNSET = object()


class HttpAuthMiddleware:
    """Add an ``Authorization: Basic ...`` header (RFC 7617) to requests.

    Enabled for a spider that sets ``http_user`` and/or ``http_pass``. The header only
    goes to ``spider.http_auth_domain`` and its subdomains (Scrapy 2.5's rule). A spider
    that does not set ``http_auth_domain`` gets the host of its first request as the
    domain, with one WARNING saying so (Scrapy 1.2 sent the credentials everywhere,
    Scrapy 2.19 logs an error and still does); ``http_auth_domain = None`` sends them to
    every host, explicitly. A request that already has an ``Authorization`` header keeps
    it.
    """

    auth = None
    domain = None
    _opened_spider = None
    crawler = None  # set by from_crawler

    @classmethod
    def from_crawler(cls, crawler):
        o = cls()
        crawler.signals.connect(o.spider_opened, signal=signals.spider_opened)
        o.crawler = crawler
        return o

    def spider_opened(self, spider):
        """Signal handler: build the header from the spider's credentials.

        Also called by the first ``process_request`` for a spider, in case the signal
        was never sent to it (a middleware used outside a crawl; in the runtime the
        managers are built before ``spider_opened`` is sent).
        """
        self._opened_spider = spider
        usr = getattr(spider, "http_user", "")
        pwd = getattr(spider, "http_pass", "")
        if usr or pwd:
            self.auth = basic_auth_header(usr, pwd)
            self.domain = getattr(spider, "http_auth_domain", _UNSET)

    def process_request(self, request, spider=None):
        if self._opened_spider is not spider or spider is None:
            spider = spider_of(self, spider)  # (None: the crawler's spider, Scrapy 2.19)
            if spider is not None and spider is not self._opened_spider:
                self.spider_opened(spider)
        if not self.auth or b"Authorization" in request.headers:
            return
        if self.domain is _UNSET:
            host = urlparse_cached(request).hostname
            if not host:  # file:// and the like: no host to bind the credentials to
                return
            self.domain = host
            logger.warning(
                "http_user/http_pass are set but http_auth_domain is not: sending them only "
                "to %(domain)r, the host of the first request (set http_auth_domain to the "
                "domain that should receive them, or to None for every domain)",
                {"domain": self.domain},
                extra={"spider": spider},
            )
        if self.domain:
            # the host, whatever the port (url_is_from_any_domain compares the netloc)
            host = (urlparse_cached(request).hostname or "").lower()
            domain = self.domain.lower()
            if host != domain and not host.endswith("." + domain):
                return
        request.headers[b"Authorization"] = self.auth
