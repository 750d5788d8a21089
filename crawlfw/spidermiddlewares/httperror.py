"""Filter out unsuccessful (non-2xx) responses before they reach the spider.

A response is passed to the callback when its status is 2xx, or is allowed by (first
match wins): ``meta['handle_httpstatus_all']`` true; ``meta['handle_httpstatus_list']``
(a list of statuses, which then *replaces* the other lists); ``HTTPERROR_ALLOW_ALL``;
``spider.handle_httpstatus_list``; ``HTTPERROR_ALLOWED_CODES``.

Any other response raises :class:`HttpError` in ``process_spider_input``: the
request's errback receives it (``failure.value.response`` is the response); when
there is no errback (or it re-raises), ``process_spider_exception`` swallows it,
logs "Ignoring response <...>: HTTP status code is not handled or not allowed" at
INFO and counts ``httperror/response_ignored_count`` and
``httperror/response_ignored_status_count/<status>``.
"""

import logging

from crawlfw.exceptions import IgnoreRequest
from crawlfw.utils._spiderarg import spider_of

__all__ = ["HttpError", "HttpErrorMiddleware"]

logger = logging.getLogger(__name__)


class HttpError(IgnoreRequest):
    """A response was filtered because of its HTTP status.

    Args:
        response: the filtered ``Response`` (``.response``).
        *args: the exception message.
    """

    def __init__(self, response, *args, **kwargs):
        self.response = response
        super().__init__(*args, **kwargs)


class HttpErrorMiddleware:
    """Raise :class:`HttpError` for responses whose status the spider does not handle.

    Args:
        settings: the crawler's settings (``HTTPERROR_ALLOW_ALL``,
            ``HTTPERROR_ALLOWED_CODES``).
    """

    def __init__(self, settings):
        self.handle_httpstatus_all = settings.getbool("HTTPERROR_ALLOW_ALL")
        self.handle_httpstatus_list = [int(x) for x in settings.getlist("HTTPERROR_ALLOWED_CODES")]
        self.stats = None
        self.crawler = None  # set by from_crawler

    @classmethod
    def from_crawler(cls, crawler):
        o = cls(crawler.settings)
        o.stats = crawler.stats
        o.crawler = crawler
        return o

    def process_spider_input(self, response, spider=None):
        if 200 <= response.status < 300:  # common case
            return
        if spider is None:  # (the crawler's spider, Scrapy 2.19)
            spider = spider_of(self)
        meta = response.meta
        if meta.get("handle_httpstatus_all", False):
            return
        if "handle_httpstatus_list" in meta:
            allowed_statuses = meta["handle_httpstatus_list"]
        elif self.handle_httpstatus_all:
            return
        else:
            allowed_statuses = getattr(
                spider, "handle_httpstatus_list", self.handle_httpstatus_list
            )
        if response.status in allowed_statuses:
            return
        raise HttpError(response, "Ignoring non-200 response")

    def process_spider_exception(self, response, exception, spider=None):
        if isinstance(exception, HttpError):
            if spider is None:  # (the crawler's spider, Scrapy 2.19)
                spider = spider_of(self)
            stats = self.stats
            if stats is None:
                stats = getattr(getattr(spider, "crawler", None), "stats", None)
            if stats is not None:
                stats.inc_value("httperror/response_ignored_count", spider=spider)
                stats.inc_value(
                    f"httperror/response_ignored_status_count/{response.status}",
                    spider=spider,
                )
            logger.info(
                "Ignoring response %(response)r: HTTP status code is not handled or not allowed",
                {"response": response},
                extra={"spider": spider},
            )
            return []
        return None
