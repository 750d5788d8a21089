"""Exceptions raised by crawlfw and the ones a user raises to steer it.

The tree (Scrapy 1.2's public exceptions first, then crawlfw's download errors)::

    Exception
    ├── NotConfigured        a component switches itself off (raised from __init__/from_crawler)
    ├── IgnoreRequest        a downloader middleware or the scheduler drops a request
    │   └── HttpError        (crawlfw.spidermiddlewares.httperror) non-2xx response filtered
    ├── DontCloseSpider      raised by a ``spider_idle`` handler to keep the spider open
    ├── CloseSpider(reason)  raised by a spider callback to close the spider with ``reason``
    ├── DropItem             raised by an item pipeline to discard an item
    ├── NotSupported         a feature or scheme is not supported
    │   └── UnsupportedURLSchemeError  a URL scheme without (or with a disabled) handler
    ├── UsageError           wrong command-line usage (exit status 2)
    ├── CrawlStartError      a crawl cannot start: a bad setting value, a feed that cannot
    │                        be opened (one line for the user; exit status 1)
    ├── ContractFail         a spider contract check failed (AssertionError subclass)
    ├── InvalidMessage       an actor message does not match its JSON Schema
    └── DownloadError        a transfer failed below HTTP (mapped from curl error codes)
        ├── DownloadTimeoutError     (also builtins.TimeoutError)  curl 28
        ├── DNSLookupError           (also builtins.OSError)       curl 5, 6
        ├── ConnectError             (also builtins.ConnectionError) curl 7 (not refused),
        │                            15, 45 (bind address), 96, 97 (proxy handshake)
        │   └── ConnectionRefusedError (also builtins.ConnectionRefusedError)
        ├── ConnectionLostError      (also builtins.ConnectionError) curl 52, 55, 56 (but
        │                            "Too large response headers")
        ├── TLSError                 curl 35, 53, 54, 58, 59, 60, 64, 66, 77, 80, 82, 83, 90,
        │                            91, 98, 101
        ├── ResponseFailed           curl 8, 16, 18, 61, 92, 95 (malformed or truncated
        │   │                        response)
        │   └── ResponseHeadersTooLarge curl 100 and 56 "Too large response headers"
        │                            ("Response headers too large"; never retried)
        └── DownloadCancelled        the transfer was aborted (max size, shutdown) curl 23, 42, 63

Scrapy 2.19's names are aliases of these classes: ``CannotResolveHostError`` is
``DNSLookupError``, ``DownloadConnectionRefusedError`` ``ConnectionRefusedError``,
``DownloadCancelledError`` ``DownloadCancelled``, ``DownloadFailedError`` ``DownloadError``,
``ResponseDataLossError`` ``ResponseFailed``.

Other curl codes give a plain ``DownloadError``; the one table is
``crawlfw.core.transport._curl_errors.CURL_CODE_TABLE``.

``crawlfw.exceptions.ConnectionRefusedError`` deliberately shadows the builtin of the
same name inside this module; it subclasses it, so ``except ConnectionRefusedError``
with the builtin still catches it.
"""

import builtins
from typing import Any

__all__ = [
    "NotConfigured",
    "IgnoreRequest",
    "DownloaderCrashed",
    "DontCloseSpider",
    "CloseSpider",
    "DropItem",
    "NotSupported",
    "UsageError",
    "CrawlStartError",
    "ContractFail",
    "InvalidMessage",
    "ScrapyDeprecationWarning",
    "CrawlfwDeprecationWarning",
    "DownloadError",
    "DownloadTimeoutError",
    "DNSLookupError",
    "ConnectError",
    "ConnectionRefusedError",
    "ConnectionLostError",
    "TLSError",
    "ResponseFailed",
    "ResponseHeadersTooLarge",
    "DownloadCancelled",
    "StopDownload",
    "UnsupportedURLSchemeError",
    "CannotResolveHostError",
    "DownloadConnectionRefusedError",
    "DownloadCancelledError",
    "DownloadFailedError",
    "ResponseDataLossError",
]


# Internal


class NotConfigured(Exception):
    """Indicates a missing configuration situation: the component disables itself."""


# HTTP and crawling


class IgnoreRequest(Exception):
    """Indicates a decision was made not to process a request."""


class DownloaderCrashed(Exception):
    """A request whose download slot's Downloader actor died twice while the request was
    in flight (a "poison" request): it is not sent again but fails with this error (its
    errback runs, else "Error downloading" is logged)."""


class DontCloseSpider(Exception):
    """Request the spider not to be closed yet (raise it in a ``spider_idle`` handler)."""


class CloseSpider(Exception):
    """Raise this from a callback to request the spider to be closed.

    Args:
        reason: the ``finish_reason`` recorded in stats (default ``'cancelled'``).
    """

    def __init__(self, reason: str = "cancelled"):
        super().__init__(reason)
        self.reason = reason


class StopDownload(Exception):
    """Raise from a ``headers_received`` or ``bytes_received`` signal handler to stop
    downloading a response (Scrapy 2.2+).

    Args:
        fail: True (default): the request's errback is called with a failure whose
            value is this exception, its ``response`` attribute set to the response
            received so far; False: the callback is called with that response, flagged
            ``"download_stopped"``.

    Attributes:
        fail (bool): as given.
        response: the partial response, set by the downloader (None before).
    """

    def __init__(self, *, fail: bool = True):
        super().__init__()
        self.fail = fail
        # a crawlfw.http.Response once set (not named: crawlfw.http imports this module)
        self.response: Any = None


# Items


class DropItem(Exception):
    """Drop an item from the item pipeline.

    Args:
        message: why (logged as "Dropped: <message>").
        log_level: the level of that log line, a name (``"INFO"``) or number; None
            (default): the ``DEFAULT_DROPITEM_LOG_LEVEL`` setting (Scrapy 2.13+).
    """

    def __init__(self, message: str = "", log_level: str | int | None = None):
        super().__init__(message)
        self.log_level = log_level


class NotSupported(Exception):
    """Indicates a feature or method is not supported."""


class UnsupportedURLSchemeError(NotSupported):
    """A request's URL scheme has no download handler (Scrapy 2.19's name), or its
    scheme is disabled in ``DOWNLOAD_HANDLERS``. A :class:`NotSupported`, which crawlfw
    raised before."""


# Commands


class UsageError(Exception):
    """To indicate a command-line usage error.

    Args:
        print_help: whether the command's help is printed before the message.
    """

    def __init__(self, *a: Any, **kw: Any) -> None:
        self.print_help = kw.pop("print_help", True)
        super().__init__(*a, **kw)


class CrawlStartError(Exception):
    """A crawl cannot start because of how it is configured: a setting whose value has
    the wrong type, a feed whose storage cannot be opened, a component (middleware,
    pipeline, extension) that cannot be loaded or built.

    The message is one line naming the thing at fault and what was expected; the
    ``crawl`` and ``runspider`` commands print it without a traceback and exit with
    status 1.
    """


class CrawlfwDeprecationWarning(Warning):
    """Warning category for deprecated features (shown by default, unlike DeprecationWarning)."""


#: Scrapy's name for :class:`CrawlfwDeprecationWarning`, kept so ported code keeps working.
ScrapyDeprecationWarning = CrawlfwDeprecationWarning


class ContractFail(AssertionError):
    """Error raised in case of a failing contract."""


class InvalidMessage(ValueError):
    """An actor message does not match the JSON Schema of its ``type``.

    The message text names the message type, the offending key path and the rule broken.
    """


# Downloads (below HTTP). Each carries the curl error code in ``curl_code`` (None when
# not raised from curl) and the URL in ``url``.


class DownloadError(Exception):
    """A transfer failed below the HTTP layer (DNS, TCP, TLS, timeout, truncated body).

    Args:
        message: human-readable description (curl's error buffer when available).
        url: the URL being fetched.
        curl_code: the libcurl ``CURLE_*`` code, or None.
    """

    def __init__(self, message: str = "", url: str | None = None, curl_code: int | None = None):
        super().__init__(message)
        self.url = url
        self.curl_code = curl_code

    def __reduce__(self):
        return (self.__class__, (self.args[0] if self.args else "", self.url, self.curl_code))


class DownloadTimeoutError(DownloadError, builtins.TimeoutError):
    """The transfer took longer than ``DOWNLOAD_TIMEOUT`` seconds (curl 28)."""


class DNSLookupError(DownloadError, builtins.OSError):
    """The host name (or proxy name) could not be resolved (curl 5, 6)."""


class ConnectError(DownloadError, builtins.ConnectionError):
    """The TCP connection could not be established (curl 7)."""


class ConnectionRefusedError(ConnectError, builtins.ConnectionRefusedError):
    """The peer refused the TCP connection (curl 7 with ECONNREFUSED)."""


class ConnectionLostError(DownloadError, builtins.ConnectionError):
    """The connection closed before a complete response arrived (curl 52, 55, 56)."""


class TLSError(DownloadError):
    """TLS handshake or certificate verification failed."""


class ResponseFailed(DownloadError):
    """The server sent a malformed or truncated response (curl 8, 18, 61, 92)."""


class ResponseHeadersTooLarge(ResponseFailed):
    """The response's headers are over libcurl's limits (curl 100: one header over
    100 KiB or more than 5,000 headers; curl 56 "Too large response headers": over
    300 KiB in all). The server would send the same headers again, so the
    ``RetryMiddleware`` does not retry it."""


class DownloadCancelled(DownloadError):
    """The transfer was aborted on purpose (``DOWNLOAD_MAXSIZE`` exceeded, shutdown)."""


# Scrapy 2.19's names of download errors, each the crawlfw class that stands for the same
# failure (an ``except``/``failure.check()`` with either name catches it):

#: The host name could not be resolved (Scrapy 2.19): :class:`DNSLookupError`.
CannotResolveHostError = DNSLookupError
#: The server refused the connection (Scrapy 2.19): :class:`ConnectionRefusedError`.
DownloadConnectionRefusedError = ConnectionRefusedError
#: The download was cancelled (Scrapy 2.19): :class:`DownloadCancelled`.
DownloadCancelledError = DownloadCancelled
#: The download failed (Scrapy 2.19's catch-all): :class:`DownloadError`, the base of
#: every crawlfw download error.
DownloadFailedError = DownloadError
#: The response is incomplete (Scrapy 2.19): :class:`ResponseFailed`, a truncated or
#: malformed response.
ResponseDataLossError = ResponseFailed
