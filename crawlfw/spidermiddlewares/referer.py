"""Set the ``Referer`` header of requests a callback produces to the response's URL."""

from crawlfw.exceptions import NotConfigured
from crawlfw.http import Request

__all__ = ["RefererMiddleware"]


class RefererMiddleware:
    """Scrapy 1.2's referer rule: ``Referer: <response.url>`` on every produced request.

    A request that already has a ``Referer`` header keeps it. Scrapy 1.2 applied no
    referrer policy (W3C Referrer Policy came in Scrapy 1.4): the full URL is sent,
    also from https pages to http ones. Disabled by ``REFERER_ENABLED = False``.
    """

    @classmethod
    def from_crawler(cls, crawler):
        if not crawler.settings.getbool("REFERER_ENABLED"):
            raise NotConfigured
        return cls()

    def process_spider_output(self, response, result, spider):
        def _set_referer(r):
            if isinstance(r, Request):
                r.headers.setdefault(b"Referer", response.url)
            return r

        return (_set_referer(r) for r in result or ())
