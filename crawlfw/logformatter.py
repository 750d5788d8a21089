"""Log messages for crawl events (Scrapy 1.2's ``scrapy.logformatter``).

The class is chosen by the ``LOG_FORMATTER`` setting and reached as
``crawler.logformatter``. Each method returns a dict ``{'level': int, 'msg': str,
'args': dict}`` that the caller logs with
``logger.log(*logformatter_adapter(d), extra={'spider': spider})`` (see
:func:`crawlfw.utils.log.logformatter_adapter`). Override a method in a subclass
to change a message or its level.

Where each is used, as in Scrapy 2.19: ``crawled`` by the Engine for each response,
``scraped``/``dropped``/``item_error`` by the Pipeline for each item that passed the
item pipelines, was dropped, or made one raise, ``spider_error`` for a callback or
errback that raised and ``download_error`` for a download error no errback handled
(the SpiderRunner, ``crawlfw/core/flow/scraper.py``). A formatter that lacks one of
the Scrapy 2 methods (a duck-typed Scrapy 1.2 one) gets the default message there
(:func:`format_event`).
"""

import logging
import os
from typing import Any, TypedDict

__all__ = [
    "LogFormatter",
    "LogFormatterResult",
    "format_event",
    "SCRAPEDMSG",
    "DROPPEDMSG",
    "CRAWLEDMSG",
    "ITEMERRORMSG",
    "SPIDERERRORMSG",
    "DOWNLOADERRORMSG_SHORT",
    "DOWNLOADERRORMSG_LONG",
]

SCRAPEDMSG = "Scraped from %(src)s" + os.linesep + "%(item)s"
DROPPEDMSG = "Dropped: %(exception)s" + os.linesep + "%(item)s"
CRAWLEDMSG = ("Crawled (%(status)s) %(request)s%(request_flags)s "
              "(referer: %(referer)s)%(response_flags)s")
ITEMERRORMSG = "Error processing %(item)s"
SPIDERERRORMSG = "Spider error processing %(request)s (referer: %(referer)s)"
DOWNLOADERRORMSG_SHORT = "Error downloading %(request)s"
DOWNLOADERRORMSG_LONG = "Error downloading %(request)s: %(errmsg)s"


class LogFormatterResult(TypedDict):
    """What every :class:`LogFormatter` method returns (Scrapy 2's type)."""

    #: the logging level (``logging.DEBUG``...).
    level: int
    #: a %-format string.
    msg: str
    #: the format's arguments: a dict for ``%(name)s`` placeholders, or a tuple.
    args: dict[str, Any] | tuple[Any, ...]


def _referer_str(request):
    """The request's Referer header as text (undecodable bytes replaced), or None."""
    headers = getattr(request, 'headers', None)
    if headers is None:
        return None
    referrer = headers.get('Referer')
    if referrer is None:
        return None
    if isinstance(referrer, bytes):
        return referrer.decode('utf-8', errors='replace')
    return str(referrer)


def _flags_str(obj):
    flags = getattr(obj, 'flags', None)
    return f' {flags}' if flags else ''


class LogFormatter:
    """Builds the log record for each crawl event.

    Every method returns ``{'level': logging level (int), 'msg': %-format string,
    'args': dict of the format's placeholders}``.
    """

    def crawled(self, request, response, spider):
        """A response was downloaded (DEBUG).

        "Crawled (200) <GET http://x/> ['flag'] (referer: None) ['cached']"
        """
        return {
            'level': logging.DEBUG,
            'msg': CRAWLEDMSG,
            'args': {
                'status': response.status,
                'request': request,
                'request_flags': _flags_str(request),
                'referer': _referer_str(request),
                'response_flags': _flags_str(response),
                # Scrapy 1.2's name for response_flags, kept for custom messages
                'flags': _flags_str(response),
            },
        }

    def scraped(self, item, response, spider):
        """An item went through every pipeline (DEBUG).

        Args:
            item: the item.
            response: the Response it came from, or the exception when the item
                came from an errback.
            spider: the spider.
        """
        src = str(response) if isinstance(response, BaseException) else response
        return {
            'level': logging.DEBUG,
            'msg': SCRAPEDMSG,
            'args': {
                'src': src,
                'item': item,
            },
        }

    def dropped(self, item, exception, response, spider):
        """A pipeline raised ``DropItem``: "Dropped: <reason>" then the item, at the
        exception's ``log_level``, else ``DEFAULT_DROPITEM_LOG_LEVEL`` (WARNING)."""
        level = getattr(exception, "log_level", None)
        if level is None:
            settings = getattr(getattr(spider, "crawler", None), "settings", None)
            level = settings.get("DEFAULT_DROPITEM_LOG_LEVEL") if settings is not None else None
        if isinstance(level, str):
            level = logging.getLevelName(level.upper())
        if not isinstance(level, int):
            level = logging.WARNING
        return {
            'level': level,
            'msg': DROPPEDMSG,
            'args': {
                'exception': exception,
                'item': item,
            },
        }

    def item_error(self, item, exception, response, spider):
        """An item pipeline raised something other than ``DropItem`` (ERROR):
        "Error processing <item>", logged with the exception's traceback.

        Args:
            item: the item.
            exception: the exception raised.
            response: the Response the item came from, a failure when it came from an
                errback, or None.
            spider: the spider.
        """
        return {
            'level': logging.ERROR,
            'msg': ITEMERRORMSG,
            'args': {
                'item': item,
            },
        }

    def spider_error(self, failure, request, response, spider):
        """A callback or errback raised (ERROR): "Spider error processing <request>
        (referer: <referer>)", logged with the traceback.

        Args:
            failure: a :class:`~crawlfw.utils.failure.Failure` of the exception.
            request: the request whose callback or errback raised.
            response: the Response (for a callback), or the download failure (for an
                errback; None when unknown).
            spider: the spider.
        """
        return {
            'level': logging.ERROR,
            'msg': SPIDERERRORMSG,
            'args': {
                'request': request,
                'referer': _referer_str(request),
            },
        }

    def download_error(self, failure, request, spider, errmsg=None):
        """A download failed and no errback handled it (ERROR): "Error downloading
        <request>", or with ``errmsg`` "Error downloading <request>: <errmsg>".

        crawlfw passes ``errmsg`` for a transfer error (a ``DownloadError``: DNS,
        connection, timeout, logged without a traceback) and none for another exception
        (logged with its traceback).

        Args:
            failure: a :class:`~crawlfw.utils.failure.Failure` of the error.
            request: the request.
            spider: the spider.
            errmsg (str | None): the error's description.
        """
        args = {'request': request}
        if errmsg:
            msg = DOWNLOADERRORMSG_LONG
            args['errmsg'] = errmsg
        else:
            msg = DOWNLOADERRORMSG_SHORT
        return {
            'level': logging.ERROR,
            'msg': msg,
            'args': args,
        }

    @classmethod
    def from_crawler(cls, crawler):
        """Build the formatter for a crawler (no configuration)."""
        return cls()


_DEFAULT = LogFormatter()


def format_event(formatter: Any, event: str, *args: Any) -> Any:
    """``formatter.<event>(*args)``, or the default :class:`LogFormatter`'s when
    ``formatter`` has no such method (a formatter written for Scrapy 1.2 that does not
    subclass :class:`LogFormatter` has no ``item_error``, ``spider_error`` or
    ``download_error``).

    Args:
        formatter: the crawler's ``logformatter`` (None: the default).
        event (str): the method name, e.g. ``'item_error'``.
        *args: its arguments.

    Returns:
        LogFormatterResult
    """
    method = getattr(formatter, event, None)
    if method is None:
        method = getattr(_DEFAULT, event)
    return method(*args)
