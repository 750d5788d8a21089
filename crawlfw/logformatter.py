"""Log messages for crawl events (Scrapy 1.2's ``scrapy.logformatter``).

The class is chosen by the ``LOG_FORMATTER`` setting and reached as
``crawler.logformatter``. Each method returns a dict ``{'level': int, 'msg': str,
'args': dict}`` that the caller logs with
``logger.log(*logformatter_adapter(d), extra={'spider': spider})`` (see
:func:`crawlfw.utils.log.logformatter_adapter`). Override a method in a subclass
to change a message or its level.
"""

import logging
import os

__all__ = ["LogFormatter", "SCRAPEDMSG", "DROPPEDMSG", "CRAWLEDMSG"]

SCRAPEDMSG = "Scraped from %(src)s" + os.linesep + "%(item)s"
DROPPEDMSG = "Dropped: %(exception)s" + os.linesep + "%(item)s"
CRAWLEDMSG = ("Crawled (%(status)s) %(request)s%(request_flags)s "
              "(referer: %(referer)s)%(response_flags)s")


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

    @classmethod
    def from_crawler(cls, crawler):
        """Build the formatter for a crawler (no configuration)."""
        return cls()
