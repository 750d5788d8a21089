"""Download statistics: request/response counts and bytes, exceptions by type."""

from urllib.parse import urlunparse

from crawlfw.exceptions import NotConfigured
from crawlfw.http.headers import Headers
from crawlfw.utils.httpobj import urlparse_cached
from crawlfw.utils.request import request_httprepr
from crawlfw.utils.response import _reason_phrase, response_httprepr

__all__ = ["DownloaderStats"]

# status -> len(b"HTTP/1.1 <status> <reason phrase>\r\n"), as response_httprepr writes it
_STATUS_LINE_LEN: dict = {}


def _headers_length(headers) -> int:
    """``len(headers.to_string())`` (w3lib's ``headers_dict_to_raw``: ``Name: value``
    lines joined by CRLF) without building the bytes; a value that is not bytes takes
    ``to_string()`` itself (which then raises as it does)."""
    size = lines = 0
    for key, value in headers.items():
        if value.__class__ is bytes:
            value = (value,)
        elif not isinstance(value, (list, tuple)):
            continue
        klen = len(key) + 2  # "Name: "
        for v in value:
            if v.__class__ is not bytes:
                return len(headers.to_string())
            size += klen + len(v)
            lines += 1
    return size + 2 * (lines - 1) if lines else 0


def _request_httprepr_length(request) -> int:
    """``len(request_httprepr(request))`` (crawlfw.utils.request), computed without
    building the representation: the request line, ``Host``, the stored headers, a
    blank line and the body, in bytes."""
    headers = request.headers
    if headers.__class__ is not Headers or request.method.__class__ is not str:
        return len(request_httprepr(request))
    parsed = urlparse_cached(request)
    path = urlunparse(("", "", parsed.path or "/", parsed.params, parsed.query, ""))
    host = parsed.hostname or ""
    size = (len(request.method.encode()) + len(path.encode()) + len(host.encode())
            + 20)  # " ", " HTTP/1.1\r\n", "Host: ", "\r\n"
    if headers:
        size += _headers_length(headers) + 2
    return size + 2 + len(request.body)


def _response_httprepr_length(response) -> int:
    """``len(response_httprepr(response))`` (crawlfw.utils.response), computed without
    building the representation (the whole body copied twice): status line, headers,
    blank line, body, in bytes."""
    status = response.status
    headers = response.headers
    if status.__class__ is not int or headers.__class__ is not Headers:
        return len(response_httprepr(response))
    line = _STATUS_LINE_LEN.get(status)
    if line is None:
        phrase = _reason_phrase(status) or ""
        line = len(str(status).encode()) + len(phrase.encode("ascii")) + 12
        if len(_STATUS_LINE_LEN) < 1000:
            _STATUS_LINE_LEN[status] = line
    if headers:
        line += _headers_length(headers) + 2
    return line + 2 + len(response.body)


class DownloaderStats:
    """Count what goes through the downloader, in the crawler's stats.

    Keys (Scrapy 1.2's): ``downloader/request_count``,
    ``downloader/request_method_count/<METHOD>``, ``downloader/request_bytes`` (length
    of the request's HTTP/1.1 representation), ``downloader/response_count``,
    ``downloader/response_status_count/<status>``, ``downloader/response_bytes``
    (length of the response's HTTP/1.1 representation, as decoded by the
    middlewares below this one), ``downloader/exception_count`` and
    ``downloader/exception_type_count/<module.ClassName>``.

    Disabled (``NotConfigured``) when ``DOWNLOADER_STATS`` is false.

    Args:
        stats: the crawler's stats collector.
    """

    def __init__(self, stats):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler):
        if not crawler.settings.getbool("DOWNLOADER_STATS"):
            raise NotConfigured
        return cls(crawler.stats)

    def process_request(self, request, spider):
        self.stats.inc_value("downloader/request_count", spider=spider)
        self.stats.inc_value(f"downloader/request_method_count/{request.method}", spider=spider)
        reqlen = _request_httprepr_length(request)
        self.stats.inc_value("downloader/request_bytes", reqlen, spider=spider)

    def process_response(self, request, response, spider):
        self.stats.inc_value("downloader/response_count", spider=spider)
        self.stats.inc_value(f"downloader/response_status_count/{response.status}", spider=spider)
        reslen = _response_httprepr_length(response)
        self.stats.inc_value("downloader/response_bytes", reslen, spider=spider)
        return response

    def process_exception(self, request, exception, spider):
        ex_class = f"{type(exception).__module__}.{type(exception).__name__}"
        self.stats.inc_value("downloader/exception_count", spider=spider)
        self.stats.inc_value(f"downloader/exception_type_count/{ex_class}", spider=spider)
