"""Ask for compressed responses and decode their ``Content-Encoding``.

Encodings (RFC 9110 §8.4.1): ``gzip`` and ``x-gzip`` (RFC 1952, decoded tolerantly by
:func:`crawlfw.utils.gz.gunzip`), ``deflate`` (RFC 1950 zlib, or the raw RFC 1951
stream some servers send instead), ``br`` (RFC 7932, only when the ``brotli`` or
``brotlicffi`` module 1.2+ is importable: older ones cannot bound their output and are
not used), ``zstd`` (RFC 8878, only when the ``zstandard`` module is importable) and
``identity``. A list such as ``gzip, br`` (codings applied in that order) is decoded
right to left; decoding stops at the first unknown coding, which is kept in
``Content-Encoding``.

After decoding, the response class is picked again with ``responsetypes`` (a gzip
body typed ``application/octet-stream`` may decode to HTML) and the decoded codings
are removed from ``Content-Encoding``. HEAD responses have no body and are left alone.

Decompression-bomb guard: every coding is decoded 64 KiB at a time
(:mod:`crawlfw.utils._decompression`) and stops as soon as the decoded body exceeds
``DOWNLOAD_MAXSIZE`` bytes (``meta['download_maxsize']``; 0 disables), so memory stays
near that limit however explosive the body. Such a response is dropped with
``IgnoreRequest``, logged as a WARNING naming its URL, its compressed size and the
limit, and counted in the stat ``httpcompression/response_dropped/maxsize``. Above
``DOWNLOAD_WARNSIZE`` bytes (``meta['download_warnsize']``) a WARNING is logged and the
response kept.
"""

import logging
import zlib

from crawlfw.exceptions import IgnoreRequest, NotConfigured
from crawlfw.http import Response, TextResponse
from crawlfw.responsetypes import responsetypes
from crawlfw.utils._decompression import (
    ACCEPTED_ENCODINGS,
    brotli,
    brotli_too_old,
    inflate_zlib,
    unbrotli,
    unzstd,
    zstandard,
)
from crawlfw.utils.gz import DecompressionMaxSizeExceeded, gunzip

__all__ = ["HttpCompressionMiddleware", "ACCEPTED_ENCODINGS"]

logger = logging.getLogger(__name__)


#: Stat counting responses dropped because their decoded body exceeds the size limit.
DROPPED_STAT = "httpcompression/response_dropped/maxsize"


def _inflate(body: bytes, max_size: int) -> bytes:
    """Decode ``deflate``: zlib-wrapped (RFC 1950) first, raw deflate (RFC 1951) second."""
    output = bytearray()
    try:
        inflate_zlib(body, zlib.MAX_WBITS, max_size, output)
    except zlib.error:
        output.clear()
        inflate_zlib(body, -zlib.MAX_WBITS, max_size, output)
    return bytes(output)


def _split_codings(values: list[bytes]) -> list[bytes]:
    codings = []
    for value in values:
        codings.extend(c.strip().lower() for c in value.split(b",") if c.strip())
    return codings


class HttpCompressionMiddleware:
    """Send ``Accept-Encoding`` and decode compressed response bodies.

    Disabled (``NotConfigured``) when ``COMPRESSION_ENABLED`` is false.

    Args:
        stats: the crawl's stats collector, for ``httpcompression/response_dropped/
            maxsize`` (None: not counted).
        crawler: the Crawler (Scrapy 2's keyword): its stats, ``DOWNLOAD_MAXSIZE`` and
            ``DOWNLOAD_WARNSIZE``, and the spider's ``download_maxsize`` /
            ``download_warnsize`` attributes at ``spider_opened`` (deprecated, as in
            Scrapy 2.19).
        max_size: default largest decoded body in bytes (0: no limit); overrides the
            crawler's setting.
        warn_size: default decoded size in bytes above which a warning is logged;
            overrides the crawler's setting.
    """

    def __init__(self, stats=None, *, crawler=None, max_size: int | None = None,
                 warn_size: int | None = None):
        if crawler is not None:
            from crawlfw import signals

            stats = crawler.stats if stats is None else stats
            if max_size is None:
                max_size = crawler.settings.getint("DOWNLOAD_MAXSIZE")
            if warn_size is None:
                warn_size = crawler.settings.getint("DOWNLOAD_WARNSIZE")
            crawler.signals.connect(self.open_spider, signals.spider_opened)
        self._max_size = max_size or 0
        self._warn_size = warn_size or 0
        self._stats = stats

    def open_spider(self, spider):
        """Take the spider's ``download_maxsize`` / ``download_warnsize`` attributes as
        the defaults (each warns: Scrapy 2.19 deprecated them for the settings)."""
        from crawlfw.utils.deprecate import warn_on_deprecated_spider_attribute

        if hasattr(spider, "download_maxsize"):
            warn_on_deprecated_spider_attribute("download_maxsize", "DOWNLOAD_MAXSIZE")
            self._max_size = spider.download_maxsize
        if hasattr(spider, "download_warnsize"):
            warn_on_deprecated_spider_attribute("download_warnsize", "DOWNLOAD_WARNSIZE")
            self._warn_size = spider.download_warnsize

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        if not settings.getbool("COMPRESSION_ENABLED"):
            raise NotConfigured
        if brotli_too_old is not None:
            logger.warning(
                "brotli %(version)s cannot bound the size of what it decodes: br responses "
                "are neither requested nor decoded (install brotli >= 1.2 for them)",
                {"version": brotli_too_old},
            )
        return cls(crawler=crawler)

    def process_request(self, request, spider=None):
        request.headers.setdefault(b"Accept-Encoding", b",".join(ACCEPTED_ENCODINGS))

    def process_response(self, request, response, spider=None):
        if request.method == "HEAD" or not isinstance(response, Response):
            return response
        codings = _split_codings(response.headers.getlist(b"Content-Encoding"))
        if not codings:
            return response
        max_size = request.meta.get("download_maxsize", self._max_size)
        warn_size = request.meta.get("download_warnsize", self._warn_size)
        body = response.body
        decoded_any = False
        while codings:
            coding = codings[-1]
            try:
                decoded = self._decode(body, coding, max_size)
            except DecompressionMaxSizeExceeded:
                message = (
                    f"Ignored response {response} because its body ({len(response.body)} "
                    f"bytes compressed) is larger than the download max size ({max_size} "
                    "bytes) once decompressed"
                )
                logger.warning("%s", message, extra={"spider": spider})
                if self._stats is not None:
                    self._stats.inc_value(DROPPED_STAT, spider=spider)
                raise IgnoreRequest(message) from None
            if decoded is None:
                break  # unknown coding: keep it and the ones before it
            body = decoded
            codings.pop()
            decoded_any = True
        if not decoded_any:
            return response
        if warn_size and len(body) > warn_size:
            logger.warning(
                "%(response)s body size after decompression (%(size)d bytes) is larger "
                "than the download warning size (%(warnsize)d bytes)",
                {"response": response, "size": len(body), "warnsize": warn_size},
                extra={"spider": spider},
            )
        headers = response.headers.copy()
        if codings:
            headers[b"Content-Encoding"] = b", ".join(codings)
        else:
            headers.pop(b"Content-Encoding", None)
        respcls = responsetypes.from_args(headers=headers, url=response.url, body=body)
        kwargs = {"cls": respcls, "body": body, "headers": headers}
        if issubclass(respcls, TextResponse):
            # let the new response detect its encoding from the decoded body
            kwargs["encoding"] = None
        return response.replace(**kwargs)

    def _decode(self, body: bytes, coding: bytes, max_size: int) -> bytes | None:
        """Decode one coding; None when it is not supported."""
        if coding in (b"gzip", b"x-gzip"):
            return gunzip(body, max_size=max_size)
        if coding == b"deflate":
            return _inflate(body, max_size)
        if coding == b"br" and brotli is not None:
            return unbrotli(body, max_size)
        if coding == b"zstd" and zstandard is not None:
            return unzstd(body, max_size)
        if coding == b"identity":
            return body
        return None
