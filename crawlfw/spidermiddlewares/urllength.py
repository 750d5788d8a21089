"""Drop requests whose URL is longer than ``URLLENGTH_LIMIT`` characters."""

import logging

from crawlfw.exceptions import NotConfigured
from crawlfw.http import Request

__all__ = ["UrlLengthMiddleware"]

logger = logging.getLogger(__name__)


class UrlLengthMiddleware:
    """Filter out requests with URLs longer than ``maxlength`` characters.

    The default limit, 2083, is the longest URL old Internet Explorer accepted. Dropped
    requests are logged at DEBUG ("Ignoring link (url length > N): URL") and counted
    in ``urllength/request_ignored_count`` (later Scrapy). ``URLLENGTH_LIMIT = 0``
    disables the middleware.

    Args:
        maxlength: the longest URL allowed, in characters.
    """

    def __init__(self, maxlength: int):
        self.maxlength = maxlength
        self.stats = None

    @classmethod
    def from_settings(cls, settings):
        maxlength = settings.getint("URLLENGTH_LIMIT")
        if not maxlength:
            raise NotConfigured
        return cls(maxlength)

    @classmethod
    def from_crawler(cls, crawler):
        o = cls.from_settings(crawler.settings)
        o.stats = crawler.stats
        o.crawler = crawler
        return o

    def process_spider_output(self, response, result, spider):
        """Drop the requests of ``result`` whose URL is longer than ``maxlength``
        characters (logged, counted); other elements pass unchanged.

        Returns:
            A generator over the kept elements, in order.
        """
        return self._output(result or (), spider)

    def get_processed_request(self, request, response):
        """Check one request (Scrapy 2.13's per-request hook): None, logged at DEBUG and
        counted, when its URL is longer than ``maxlength`` characters; else the request.

        Args:
            request: a ``crawlfw.http.Request``.
            response: the Response it came from, or None (a start request).
        """
        if len(request.url) <= self.maxlength:
            return request
        spider = getattr(getattr(self, "crawler", None), "spider", None)
        logger.debug(
            "Ignoring link (url length > %(maxlength)d): %(url)s ",
            {"maxlength": self.maxlength, "url": request.url},
            extra={"spider": spider},
        )
        if self.stats is not None:
            self.stats.inc_value("urllength/request_ignored_count", spider=spider)
        return None

    def _output(self, result, spider):
        maxlength, stats = self.maxlength, self.stats
        for r in result:
            if isinstance(r, Request) and len(r.url) > maxlength:
                logger.debug(
                    "Ignoring link (url length > %(maxlength)d): %(url)s ",
                    {"maxlength": maxlength, "url": r.url},
                    extra={"spider": spider},
                )
                if stats is not None:
                    stats.inc_value("urllength/request_ignored_count", spider=spider)
                continue
            yield r
