"""Gzip helpers: a tolerant ``gunzip`` and ``is_gzipped`` (Scrapy 1.2's ``scrapy.utils.gz``).

Servers often send gzip bodies that are truncated (a connection closed early, a
``Content-Length`` limit) or followed by junk; browsers show what could be decoded, and
so does :func:`gunzip`.
"""

import re
import zlib

from crawlfw.utils._decompression import DecompressionMaxSizeExceeded, inflate_zlib

__all__ = ["gunzip", "gzip_magic_number", "is_gzipped", "DecompressionMaxSizeExceeded"]

_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_WBITS = 16 + zlib.MAX_WBITS


def gunzip(data: bytes, max_size: int = 0) -> bytes:
    """Decompress gzip data (RFC 1952), tolerating truncation and trailing junk.

    Concatenated gzip members are all decoded. Decoding stops, keeping what was decoded,
    at the first thing that is not a gzip member after a complete one, or at a
    corrupt or truncated member once some output exists (as Scrapy 1.2 did).

    The data is inflated 64 KiB at a time with the size checked after each step
    (:func:`crawlfw.utils._decompression.inflate_zlib`), so a gzip bomb costs at most
    about ``max_size`` bytes of memory.

    Args:
        data: the compressed bytes.
        max_size: when > 0, the largest decompressed size allowed, in bytes.

    Returns:
        The decompressed bytes.

    Raises:
        OSError: ``data`` is not gzip, or is corrupt/truncated before any output
            (``gzip.BadGzipFile`` is an OSError too, so ``except IOError`` works).
        DecompressionMaxSizeExceeded: the output would exceed ``max_size`` bytes.
    """
    output = bytearray()
    size = len(data)
    pos = 0
    while pos < size:
        if pos and data[pos:pos + 2] != _GZIP_MAGIC:
            break  # trailing junk after a complete member
        try:
            complete, pos = inflate_zlib(data, _GZIP_WBITS, max_size, output, pos, "gzip")
        except zlib.error as exc:
            if output:
                break
            raise OSError(f"Not a gzipped file or corrupt gzip data: {exc}") from exc
        if not complete:
            if output:
                break  # truncated member: keep what we have
            raise OSError("Truncated gzip data: no complete block")
    return bytes(output)


_is_gzipped = re.compile(rb"^application/(x-)?gzip\b", re.I).search
_is_octetstream = re.compile(rb"^(application|binary)/octet-stream\b", re.I).search


def is_gzipped(response) -> bool:
    """Whether a response body is a gzip file (not a gzip Content-Encoding).

    True for ``Content-Type: application/gzip`` or ``application/x-gzip``, and for
    ``application/octet-stream`` / ``binary/octet-stream`` with ``Content-Encoding:
    gzip`` (S3 serves sitemaps like that).

    Args:
        response: a ``crawlfw.http.Response``.
    """
    ctype = response.headers.get(b"Content-Type", b"") or b""
    cenc = (response.headers.get(b"Content-Encoding", b"") or b"").lower()
    return bool(_is_gzipped(ctype) or (_is_octetstream(ctype) and cenc in (b"gzip", b"x-gzip")))


def gzip_magic_number(response) -> bool:
    """Whether a response body starts as a gzip file compressed with deflate does
    (RFC 1952: the ``1f 8b`` magic and compression method ``08``), whatever its headers
    say (Scrapy 2's sitemap spider uses it for bodies served as plain octet streams).

    Args:
        response: a ``crawlfw.http.Response``.
    """
    return response.body[:3] == b"\x1f\x8b\x08"
