"""Retry requests that failed with a temporary error.

A request is retried when its download raised one of
:attr:`RetryMiddleware.EXCEPTIONS_TO_RETRY` (a timeout, DNS or connection error, a
truncated or malformed response) or when the response status is in
``RETRY_HTTP_CODES``, unless it is one of
:attr:`RetryMiddleware.EXCEPTIONS_NOT_RETRIED` (a failure that would repeat: response
headers over libcurl's limits, a body cancelled at ``DOWNLOAD_MAXSIZE``). Failed pages are rescheduled with a lower priority
(``RETRY_PRIORITY_ADJUST``), so they are re-tried after the other pending requests.

Settings: ``RETRY_ENABLED``, ``RETRY_TIMES`` (retries, not counting the first
attempt), ``RETRY_HTTP_CODES``, ``RETRY_PRIORITY_ADJUST``, ``RETRY_GIVE_UP_LOG_LEVEL``
(the level of "Gave up retrying ...": ``"ERROR"`` by default, as in Scrapy 2.5+; Scrapy
1.2 logged it at DEBUG; a level name or number). Request meta: ``dont_retry`` (never
retry), ``retry_times`` (retries so far, set by this middleware), ``max_retry_times``
(overrides ``RETRY_TIMES`` for one request; a later Scrapy name), ``give_up_log_level``
(overrides ``RETRY_GIVE_UP_LOG_LEVEL`` for one request, Scrapy 2.11).

Log lines are Scrapy 2.19's: "Retrying <request> (failed N times): <reason>" at DEBUG,
"Gave up retrying <request> (failed N times): <reason>" at the give-up level.

Stats (later Scrapy's keys): ``retry/count``, ``retry/reason_count/<reason>`` (reason is
``"<status> <phrase>"`` or the exception's ``module.ClassName``), ``retry/max_reached``.
"""

import logging

from crawlfw.exceptions import (
    ConnectError,
    ConnectionLostError,
    ConnectionRefusedError,
    DNSLookupError,
    DownloadCancelled,
    DownloadTimeoutError,
    NotConfigured,
    ResponseFailed,
    ResponseHeadersTooLarge,
)
from crawlfw.utils.python import global_object_name
from crawlfw.utils.response import response_status_message

__all__ = ["RetryMiddleware"]

logger = logging.getLogger(__name__)


class RetryMiddleware:
    """Reschedule requests that failed with a temporary error, ``RETRY_TIMES`` at most.

    Args:
        settings: the crawler's settings.

    Raises:
        NotConfigured: ``RETRY_ENABLED`` is false.
        ValueError: ``RETRY_GIVE_UP_LOG_LEVEL`` names no logging level.
    """

    #: Download errors worth retrying: Scrapy 1.2's list translated to crawlfw's
    #: exception tree. TLS errors and cancelled downloads are not retried (as in 1.2);
    #: ``IOError`` (``OSError``) covers other socket-level errors.
    EXCEPTIONS_TO_RETRY = (
        DownloadTimeoutError,
        TimeoutError,
        DNSLookupError,
        ConnectionRefusedError,
        ConnectError,
        ConnectionLostError,
        ResponseFailed,
        IOError,
    )

    #: Download errors that would happen again, never retried even when they are
    #: among :attr:`EXCEPTIONS_TO_RETRY`: headers over libcurl's limits, a body
    #: cancelled at ``DOWNLOAD_MAXSIZE`` (the same server sends the same response).
    EXCEPTIONS_NOT_RETRIED = (ResponseHeadersTooLarge, DownloadCancelled)

    def __init__(self, settings):
        if not settings.getbool("RETRY_ENABLED"):
            raise NotConfigured
        self.max_retry_times = settings.getint("RETRY_TIMES")
        self.retry_http_codes = {int(x) for x in settings.getlist("RETRY_HTTP_CODES")}
        self.priority_adjust = settings.getint("RETRY_PRIORITY_ADJUST")
        self.give_up_log_level = _log_level(settings.get("RETRY_GIVE_UP_LOG_LEVEL", "ERROR"),
                                            "RETRY_GIVE_UP_LOG_LEVEL")
        self.stats = None

    @classmethod
    def from_crawler(cls, crawler):
        o = cls(crawler.settings)
        o.stats = crawler.stats
        return o

    def process_response(self, request, response, spider):
        if request.meta.get("dont_retry", False):
            return response
        if response.status in self.retry_http_codes:
            reason = response_status_message(response.status)
            return self._retry(request, reason, spider) or response
        return response

    def process_exception(self, request, exception, spider):
        if isinstance(exception, self.EXCEPTIONS_NOT_RETRIED):
            return None
        if isinstance(exception, self.EXCEPTIONS_TO_RETRY) and not request.meta.get(
            "dont_retry", False
        ):
            return self._retry(request, exception, spider)
        return None

    def _stats(self, spider):
        if self.stats is not None:
            return self.stats
        crawler = getattr(spider, "crawler", None)
        return getattr(crawler, "stats", None)

    def _retry(self, request, reason, spider):
        """Return a retry copy of ``request``, or None when it was retried enough."""
        retries = request.meta.get("retry_times", 0) + 1
        max_retry_times = request.meta.get("max_retry_times", self.max_retry_times)
        stats = self._stats(spider)
        if retries <= max_retry_times:
            logger.debug(
                "Retrying %(request)s (failed %(retries)d times): %(reason)s",
                {"request": request, "retries": retries, "reason": reason},
                extra={"spider": spider},
            )
            retryreq = request.copy()
            retryreq.meta["retry_times"] = retries
            retryreq.dont_filter = True
            retryreq.priority = request.priority + self.priority_adjust
            if isinstance(reason, Exception):
                reason = global_object_name(type(reason))
            if stats is not None:
                stats.inc_value("retry/count", spider=spider)
                stats.inc_value(f"retry/reason_count/{reason}", spider=spider)
            return retryreq
        if stats is not None:
            stats.inc_value("retry/max_reached", spider=spider)
        level = request.meta.get("give_up_log_level")
        level = (self.give_up_log_level if level is None
                 else _log_level(level, "meta['give_up_log_level']"))
        logger.log(
            level,
            "Gave up retrying %(request)s (failed %(retries)d times): %(reason)s",
            {"request": request, "retries": retries, "reason": reason},
            extra={"spider": spider},
        )
        return None


def _log_level(value, name):
    """A logging level number from a level name (``"ERROR"``) or number.

    Raises:
        ValueError: ``value`` is no level; the message names ``name``.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        level = logging.getLevelName(value.strip().upper())
        if isinstance(level, int):
            return level
    raise ValueError(f"Invalid give-up log level in {name}: {value!r} (a logging level "
                     "name such as 'ERROR', or a number)")
