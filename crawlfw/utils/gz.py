"""Gzip helpers: a tolerant ``gunzip`` and ``is_gzipped`` (Scrapy 1.2's ``scrapy.utils.gz``).

Servers often send gzip bodies that are truncated (a connection closed early, a
``Content-Length`` limit) or followed by junk; browsers show what could be decoded, and
so does :func:`gunzip`.
"""

import re
import zlib

__all__ = ["gunzip", "is_gzipped", "DecompressionMaxSizeExceeded"]

_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK_BYTES = 64 * 1024


class DecompressionMaxSizeExceeded(ValueError):
    """The decompressed data would exceed the ``max_size`` given to the decoder."""


def gunzip(data: bytes, max_size: int = 0) -> bytes:
    """Decompress gzip data (RFC 1952), tolerating truncation and trailing junk.

    Concatenated gzip members are all decoded. Decoding stops, keeping what was decoded,
    at the first thing that is not a gzip member after a complete one, or at a
    corrupt or truncated member once some output exists (as Scrapy 1.2 did).

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
    rest = data
    first = True
    while rest:
        if not first and not rest.startswith(_GZIP_MAGIC):
            break  # trailing junk after a complete member
        first = False
        decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            while rest:
                chunk = decompressor.decompress(rest, _CHUNK_BYTES)
                rest = decompressor.unconsumed_tail
                output += chunk
                if max_size and len(output) > max_size:
                    raise DecompressionMaxSizeExceeded(
                        f"gzip data decompresses to more than {max_size} bytes"
                    )
                if not rest or decompressor.eof:
                    break
            if not decompressor.eof:
                # input exhausted mid-member: collect the output zlib still buffers
                # (flush() after eof would duplicate unused_data, so only here)
                output += decompressor.flush()
        except zlib.error as exc:
            if output:
                break
            raise OSError(f"Not a gzipped file or corrupt gzip data: {exc}") from exc
        if not decompressor.eof:
            if output:
                break  # truncated member: keep what we have
            raise OSError("Truncated gzip data: no complete block")
        rest = decompressor.unused_data
    if max_size and len(output) > max_size:
        raise DecompressionMaxSizeExceeded(f"gzip data decompresses to more than {max_size} bytes")
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
