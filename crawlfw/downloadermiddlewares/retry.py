"""Retry requests that failed with a temporary error.

A request is retried when its download raised one of
:attr:`RetryMiddleware.EXCEPTIONS_TO_RETRY` (a timeout, DNS or connection error, a
truncated or malformed response) or when the response status is in
``RETRY_HTTP_CODES``, unless it is one of
:attr:`RetryMiddleware.EXCEPTIONS_NOT_RETRIED` (a failure that would repeat: response
headers over libcurl's limits, a body cancelled at ``DOWNLOAD_MAXSIZE``). Failed pages are rescheduled with a lower priority
(``RETRY_PRIORITY_ADJUST``), so they are re-tried after the other pending requests.

Settings: ``RETRY_ENABLED``, ``RETRY_TIMES`` (retries, not counting the first
attempt), ``RETRY_HTTP_CODES``, ``RETRY_PRIORITY_ADJUST``, and Scrapy 2's
``RETRY_EXCEPTIONS`` (the download errors retried: classes or import paths; Scrapy's
and Twisted's names are read as the crawlfw class standing for the same failure, see
:data:`SCRAPY_EXCEPTION_NAMES`) and ``RETRY_GIVE_UP_LOG_LEVEL`` (the level of "Gave up
retrying", ERROR by default as in Scrapy 2.17+). Request meta: ``dont_retry`` (never
retry), ``retry_times`` (retries so far, set by this middleware), ``max_retry_times``
(overrides ``RETRY_TIMES`` for one request), ``priority_adjust`` and
``give_up_log_level`` (override the settings for one request).

:func:`get_retry_request` is Scrapy 2's function a spider callback uses to retry a
request itself (an empty page, a ban page), with the same limits, stats and log lines.

Stats (later Scrapy's keys): ``retry/count``, ``retry/reason_count/<reason>`` (reason is
``"<status> <phrase>"`` or the exception's ``module.ClassName``), ``retry/max_reached``.
"""

import logging
from logging import Logger

from crawlfw.exceptions import (
    DownloadCancelled,
    NotConfigured,
    ResponseHeadersTooLarge,
)
from crawlfw.utils.misc import load_object
from crawlfw.utils.python import global_object_name
from crawlfw.utils.response import response_status_message

__all__ = ["RetryMiddleware", "get_retry_request", "retry_logger", "SCRAPY_EXCEPTION_NAMES"]

logger = logging.getLogger(__name__)
#: The logger :func:`get_retry_request` logs to unless given another (Scrapy's name).
retry_logger = logger

#: Import paths of Scrapy's and Twisted's exceptions (in a project's ``RETRY_EXCEPTIONS``)
#: -> the crawlfw exception raised for the same failure.
SCRAPY_EXCEPTION_NAMES = {
    "scrapy.exceptions.CannotResolveHostError": "crawlfw.exceptions.DNSLookupError",
    "scrapy.exceptions.DownloadConnectionRefusedError":
        "crawlfw.exceptions.ConnectionRefusedError",
    "scrapy.exceptions.DownloadFailedError": "crawlfw.exceptions.DownloadError",
    "scrapy.exceptions.DownloadTimeoutError": "crawlfw.exceptions.DownloadTimeoutError",
    "scrapy.exceptions.ResponseDataLossError": "crawlfw.exceptions.ResponseFailed",
    "scrapy.core.downloader.handlers.http11.TunnelError": "crawlfw.exceptions.ConnectError",
    "twisted.internet.defer.TimeoutError": "crawlfw.exceptions.DownloadTimeoutError",
    "twisted.internet.error.TimeoutError": "crawlfw.exceptions.DownloadTimeoutError",
    "twisted.internet.error.TCPTimedOutError": "crawlfw.exceptions.DownloadTimeoutError",
    "twisted.internet.error.DNSLookupError": "crawlfw.exceptions.DNSLookupError",
    "twisted.internet.error.ConnectionRefusedError": "crawlfw.exceptions.ConnectionRefusedError",
    "twisted.internet.error.ConnectError": "crawlfw.exceptions.ConnectError",
    "twisted.internet.error.ConnectionDone": "crawlfw.exceptions.ConnectionLostError",
    "twisted.internet.error.ConnectionLost": "crawlfw.exceptions.ConnectionLostError",
    "twisted.web.client.ResponseFailed": "crawlfw.exceptions.ResponseFailed",
}


def _load_exceptions(paths) -> tuple:
    """``RETRY_EXCEPTIONS`` as a tuple of exception classes (see :data:`SCRAPY_EXCEPTION_NAMES`).

    Raises:
        ValueError: an entry is neither an exception class nor the import path of one.
    """
    classes = []
    for entry in paths:
        path = entry
        if isinstance(path, str):
            path = SCRAPY_EXCEPTION_NAMES.get(path, path)
            if path.startswith("scrapy."):
                path = "crawlfw." + path[len("scrapy."):]
            try:
                path = load_object(path)
            except (ImportError, NameError, ValueError, AttributeError) as exc:
                raise ValueError(f"RETRY_EXCEPTIONS: cannot load {entry!r}: {exc}") from None
        if not (isinstance(path, type) and issubclass(path, BaseException)):
            raise ValueError(f"RETRY_EXCEPTIONS: {entry!r} is not an exception class")
        classes.append(path)
    return tuple(classes)


def _log_level(value, name: str = "give_up_log_level") -> int:
    """A logging level number from a level name (``"ERROR"``, any case) or number.

    Raises:
        ValueError: ``value`` is no level; the message names ``name``, where it was set.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        level = logging.getLevelName(value.strip().upper())
        if isinstance(level, int):
            return level
    raise ValueError(f"Invalid give-up log level, {name}: {value!r} (a logging level "
                     "name such as 'ERROR', or a number)")


def get_retry_request(
    request,
    *,
    spider,
    reason="unspecified",
    max_retry_times: int | None = None,
    priority_adjust: int | None = None,
    logger: Logger = retry_logger,
    give_up_log_level: int | str | None = None,
    stats_base_key: str = "retry",
):
    """A copy of ``request`` to retry it, or None when it was retried enough (Scrapy 2).

    For a spider callback::

        def parse(self, response):
            if not response.text:
                return get_retry_request(response.request, spider=self, reason="empty")

    Args:
        request: the ``Request`` to retry.
        spider: the spider asking; its ``crawler`` gives the settings and stats.
        reason: why (a string, an exception or an exception class); names the stats.
        max_retry_times: most retries; None: the request's ``max_retry_times`` meta,
            else ``RETRY_TIMES``.
        priority_adjust: added to the request's priority; None: ``RETRY_PRIORITY_ADJUST``.
        logger: where "Retrying ..." (DEBUG) and "Gave up retrying ..." go.
        give_up_log_level: the level of "Gave up retrying ...", a number or name;
            None: ``RETRY_GIVE_UP_LOG_LEVEL``.
        stats_base_key: the stats' prefix: ``<key>/count``,
            ``<key>/reason_count/<reason>``, ``<key>/max_reached``.

    Returns:
        Request | None: the copy, with ``meta['retry_times']`` one more,
        ``dont_filter`` set and the priority adjusted; None once retries are exhausted.

    Raises:
        ValueError: ``give_up_log_level`` is no logging level.
    """
    crawler = spider.crawler
    settings, stats = crawler.settings, crawler.stats
    retry_times = request.meta.get("retry_times", 0) + 1
    if max_retry_times is None:
        max_retry_times = request.meta.get("max_retry_times")
        if max_retry_times is None:
            max_retry_times = settings.getint("RETRY_TIMES")
    if retry_times <= max_retry_times:
        logger.debug(
            "Retrying %(request)s (failed %(retry_times)d times): %(reason)s",
            {"request": request, "retry_times": retry_times, "reason": reason},
            extra={"spider": spider},
        )
        new_request = request.copy()
        new_request.meta["retry_times"] = retry_times
        new_request.dont_filter = True
        if priority_adjust is None:
            priority_adjust = settings.getint("RETRY_PRIORITY_ADJUST")
        new_request.priority = request.priority + priority_adjust
        if callable(reason):
            reason = reason()
        if isinstance(reason, BaseException):
            reason = global_object_name(reason.__class__)
        stats.inc_value(f"{stats_base_key}/count", spider=spider)
        stats.inc_value(f"{stats_base_key}/reason_count/{reason}", spider=spider)
        return new_request
    if give_up_log_level is None:
        give_up_log_level = settings.get("RETRY_GIVE_UP_LOG_LEVEL", "ERROR")
    level = _log_level(give_up_log_level)
    stats.inc_value(f"{stats_base_key}/max_reached", spider=spider)
    logger.log(
        level,
        "Gave up retrying %(request)s (failed %(retry_times)d times): %(reason)s",
        {"request": request, "retry_times": retry_times, "reason": reason},
        extra={"spider": spider},
    )
    return None


class RetryMiddleware:
    """Reschedule requests that failed with a temporary error, ``RETRY_TIMES`` at most.

    Args:
        settings: the crawler's settings.

    Raises:
        NotConfigured: ``RETRY_ENABLED`` is false.
        ValueError: an entry of ``RETRY_EXCEPTIONS`` cannot be loaded, or
            ``RETRY_GIVE_UP_LOG_LEVEL`` names no logging level.
    """

    #: Download errors that would happen again, never retried even when they are
    #: among ``RETRY_EXCEPTIONS``: headers over libcurl's limits, a body cancelled at
    #: ``DOWNLOAD_MAXSIZE`` (the same server sends the same response).
    EXCEPTIONS_NOT_RETRIED = (ResponseHeadersTooLarge, DownloadCancelled)

    def __init__(self, settings):
        if not settings.getbool("RETRY_ENABLED"):
            raise NotConfigured
        self.max_retry_times = settings.getint("RETRY_TIMES")
        self.retry_http_codes = {int(x) for x in settings.getlist("RETRY_HTTP_CODES")}
        self.priority_adjust = settings.getint("RETRY_PRIORITY_ADJUST")
        self.give_up_log_level = _log_level(settings.get("RETRY_GIVE_UP_LOG_LEVEL", "ERROR"),
                                            "RETRY_GIVE_UP_LOG_LEVEL")
        #: The download errors retried (``RETRY_EXCEPTIONS``; Scrapy 1.2's
        #: ``EXCEPTIONS_TO_RETRY``).
        self.exceptions_to_retry = _load_exceptions(settings.getlist("RETRY_EXCEPTIONS"))
        self.EXCEPTIONS_TO_RETRY = self.exceptions_to_retry
        self.crawler = None
        self.stats = None

    @classmethod
    def from_crawler(cls, crawler):
        o = cls(crawler.settings)
        o.crawler = crawler
        o.stats = crawler.stats
        return o

    def process_response(self, request, response, spider=None):
        if request.meta.get("dont_retry", False):
            return response
        if response.status in self.retry_http_codes:
            reason = response_status_message(response.status)
            return self._retry(request, reason, spider) or response
        return response

    def process_exception(self, request, exception, spider=None):
        if isinstance(exception, self.EXCEPTIONS_NOT_RETRIED):
            return None
        if isinstance(exception, self.exceptions_to_retry) and not request.meta.get(
            "dont_retry", False
        ):
            return self._retry(request, exception, spider)
        return None

    def _retry(self, request, reason, spider=None):
        """Return a retry copy of ``request``, or None when it was retried enough."""
        if spider is None and self.crawler is not None:
            spider = self.crawler.spider
        return get_retry_request(
            request,
            reason=reason,
            spider=spider,
            max_retry_times=request.meta.get("max_retry_times", self.max_retry_times),
            priority_adjust=request.meta.get("priority_adjust", self.priority_adjust),
            logger=logger,
            give_up_log_level=request.meta.get("give_up_log_level", self.give_up_log_level),
        )
