"""Download statistics: request/response counts and bytes, exceptions by type."""

import re
from urllib.parse import urlunparse

from crawlfw.exceptions import NotConfigured
from crawlfw.http.headers import Headers
from crawlfw.statscollectors import StatsCollector
from crawlfw.utils.httpobj import urlparse_cached
from crawlfw.utils.request import request_httprepr
from crawlfw.utils.response import _reason_phrase, response_httprepr

__all__ = ["DownloaderStats", "get_header_size", "get_status_size"]

_BASE_INC = StatsCollector.inc_value
_BASE_INC_VALUES = StatsCollector._inc_values

# status -> len(b"HTTP/1.1 <status> <reason phrase>\r\n"), as response_httprepr writes it
_STATUS_LINE_LEN: dict = {}


def get_header_size(headers) -> int:
    """The size in bytes of ``headers`` as header lines (Scrapy 2.7's helper): each
    value is ``len(b": ") + len(name) + len(value)``, plus 2 (CRLF) between the names.

    Args:
        headers: a mapping of names to lists or tuples of values (str or bytes; a name
            whose value is no list or tuple counts only in the separators).

    Returns:
        int
    """
    size = 0
    for key, value in headers.items():
        if isinstance(value, (list, tuple)):
            for v in value:
                size += len(b": ") + len(key) + len(v)
    return size + len(b"\r\n") * (len(headers.keys()) - 1)


def get_status_size(response_status: int) -> int:
    """The size in bytes of the status line ``HTTP/1.1 <status> <reason>\r\n``
    (Scrapy 2.7's helper; the reason phrase is :class:`http.HTTPStatus`'s, none for an
    unknown status).

    Args:
        response_status: the HTTP status code.

    Returns:
        int
    """
    return len((_reason_phrase(response_status) or "").encode("ascii")) + 15


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


# An ASCII http(s) URL urllib reads plainly: a host without userinfo or IPv6 brackets,
# an optional port, then the path and query without ";" (path parameters) and no
# control character or space anywhere (urlsplit strips or drops those).
_PLAIN_URL = re.compile(
    r"https?://([^\x00-\x20\x7f/?#@\[\]:;\\]*)(?::[0-9]*)?"
    r"([/?][^\x00-\x20\x7f#;]*)?(?:#[^\x00-\x20\x7f]*)?")


def _target_and_host_lengths(url) -> tuple[int, int] | None:
    """``(len(path), len(host))`` in bytes of what ``request_httprepr`` writes for
    ``url``: the request target (``urlunparse`` of the path, ``/`` when empty, the path
    parameters and the query) and the ``Host`` value (``urlparse(url).hostname``), read
    without ``urlparse`` from a plain ASCII http(s) URL (RFC 3986 section 3: scheme,
    authority, path, query, fragment); None for any other URL (the caller then parses
    it). ``tests/downloadermiddlewares/test_simple.py`` compares both on a table."""
    if url.__class__ is not str or not url.isascii():
        return None
    match = _PLAIN_URL.fullmatch(url)
    if match is None:
        return None
    rest = match.group(2)
    if not rest:
        return 1, len(match.group(1))
    q = rest.find("?")
    if q < 0:
        return len(rest), len(match.group(1))
    # urlunparse writes "?" only before a non-empty query, and "/" for an empty path
    return (q or 1) + (len(rest) - q if q + 1 < len(rest) else 0), len(match.group(1))


def _request_httprepr_length(request) -> int:
    """``len(request_httprepr(request))`` (crawlfw.utils.request), computed without
    building the representation: the request line, ``Host``, the stored headers, a
    blank line and the body, in bytes. A plain http(s) URL is read without
    ``urlparse`` (:func:`_target_and_host_lengths`)."""
    headers = request.headers
    if headers.__class__ is not Headers or request.method.__class__ is not str:
        return len(request_httprepr(request))
    lengths = _target_and_host_lengths(request.url)
    if lengths is None:
        parsed = urlparse_cached(request)
        path = urlunparse(("", "", parsed.path or "/", parsed.params, parsed.query, ""))
        lengths = len(path.encode()), len((parsed.hostname or "").encode())
    size = (len(request.method.encode()) + lengths[0] + lengths[1]
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


_REQUEST_KEYS = ("downloader/request_count", "downloader/request_method_count/",
                 "downloader/request_bytes")
_RESPONSE_KEYS = ("downloader/response_count", "downloader/response_status_count/",
                  "downloader/response_bytes")


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
        # The built-in collectors' inc_value: the three counts of a request or response
        # under one lock (StatsCollector._inc_values); any other collector gets its
        # inc_value called for each, as before.
        self._inc_values = (stats._inc_values
                            if getattr(type(stats), "inc_value", None) is _BASE_INC
                            and getattr(type(stats), "_inc_values", None) is _BASE_INC_VALUES
                            else None)

    @classmethod
    def from_crawler(cls, crawler):
        if not crawler.settings.getbool("DOWNLOADER_STATS"):
            raise NotConfigured
        from crawlfw.core.control.history import latency_of

        mw = cls(crawler.stats)
        mw._latency = latency_of(crawler)
        return mw

    #: The crawl's download latency histogram (:func:`crawlfw.core.control.history.latency_of`),
    #: fed with ``request.meta['download_latency']``; None when built without a crawler.
    _latency = None

    def process_request(self, request, spider=None):
        self._count(_REQUEST_KEYS, request, "method", _request_httprepr_length, spider)

    def process_response(self, request, response, spider=None):
        self._count(_RESPONSE_KEYS, response, "status", _response_httprepr_length, spider)
        latency = self._latency
        if latency is not None:
            seconds = request.meta.get("download_latency")
            if seconds is not None:
                latency.observe(seconds)
        return response

    def _count(self, keys, obj, attr, size_of, spider) -> None:
        """Count one request or response: ``keys`` is ``(count key, prefix of the key
        per value of its attribute attr, bytes key)``, ``size_of(obj)`` its length. With
        a built-in collector the three go in under one lock; when a key or the length
        cannot be computed, or with another collector, each is counted by ``inc_value``
        in turn, so a failure raises after the counts before it, as it always did."""
        count_key, kind_prefix, bytes_key = keys
        inc = self._inc_values
        if inc is not None:
            try:
                kind_key = f"{kind_prefix}{getattr(obj, attr)}"
                size = size_of(obj)
            except Exception:  # noqa: S110 - the general path below counts and raises
                pass
            else:
                inc(((count_key, 1), (kind_key, 1), (bytes_key, size)))
                return
        stats = self.stats
        stats.inc_value(count_key, spider=spider)
        stats.inc_value(f"{kind_prefix}{getattr(obj, attr)}", spider=spider)
        stats.inc_value(bytes_key, size_of(obj), spider=spider)

    def process_exception(self, request, exception, spider=None):
        ex_class = f"{type(exception).__module__}.{type(exception).__name__}"
        self.stats.inc_value("downloader/exception_count", spider=spider)
        self.stats.inc_value(f"downloader/exception_type_count/{ex_class}", spider=spider)
