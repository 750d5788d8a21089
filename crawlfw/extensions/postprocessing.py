"""Feed post-processing plug-ins (Scrapy 2.6+ ``scrapy.extensions.postprocessing``).

A feed's ``postprocessing`` option lists plug-in classes (or their import paths); the
exporter then writes into the first plug-in, each plug-in into the next, the last one
into the feed's file::

    FEEDS = {"items.jl.gz": {"format": "jsonlines",
                             "postprocessing": ["crawlfw.extensions.postprocessing.GzipPlugin"],
                             "gzip_compresslevel": 5}}

A plug-in class is built as ``Plugin(file, feed_options)``: ``file`` is the binary
file-like object it writes to (the next plug-in or the feed's file), ``feed_options`` the
feed's options dict, where it reads its own options. It has ``write(data: bytes) -> int``
and ``close()``, which flushes what it holds into ``file`` and must not close ``file``.

A post-processed feed cannot be resumed or cut back (its file is a compressed stream):
it is refused with ``JOBDIR`` or a shared frontier, and an exporter that dies while
writing to it ends the crawl (see :mod:`crawlfw.core.feeds.feeds`).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
from typing import Any, BinaryIO

from crawlfw.core.feeds.plugins import PostProcessingManager

__all__ = ["Bz2Plugin", "GzipPlugin", "LZMAPlugin", "PostProcessingManager"]


class GzipPlugin:
    """Compress with gzip (RFC 1952), through :class:`gzip.GzipFile`.

    Feed options: ``gzip_compresslevel`` (0-9, default 9), ``gzip_mtime`` (the
    header's modification time, seconds since the epoch; default: now),
    ``gzip_filename`` (the header's original file name; default none).
    """

    def __init__(self, file: BinaryIO, feed_options: dict[str, Any]) -> None:
        self.file = file
        self.feed_options = feed_options
        self._gzip = gzip.GzipFile(
            filename=feed_options.get("gzip_filename") or "",
            mode="wb",
            compresslevel=feed_options.get("gzip_compresslevel", 9),
            fileobj=file,
            mtime=feed_options.get("gzip_mtime"),
        )

    def write(self, data: bytes) -> int:
        """Compress ``data``; returns its length in bytes."""
        return self._gzip.write(data)

    def close(self) -> None:
        """Write the rest of the stream and its trailer to ``file`` (left open)."""
        self._gzip.close()


class Bz2Plugin:
    """Compress with bzip2, through :class:`bz2.BZ2File`.

    Feed options: ``bz2_compresslevel`` (1-9, default 9).
    """

    def __init__(self, file: BinaryIO, feed_options: dict[str, Any]) -> None:
        self.file = file
        self.feed_options = feed_options
        self._bz2 = bz2.BZ2File(file, mode="wb",
                                compresslevel=feed_options.get("bz2_compresslevel", 9))

    def write(self, data: bytes) -> int:
        """Compress ``data``; returns its length in bytes."""
        return self._bz2.write(data)

    def close(self) -> None:
        """Write the rest of the stream to ``file`` (left open)."""
        self._bz2.close()


class LZMAPlugin:
    """Compress with LZMA (``.xz`` by default), through :class:`lzma.LZMAFile`.

    Feed options: ``lzma_format`` (``lzma.FORMAT_XZ`` default, ``FORMAT_ALONE``,
    ``FORMAT_RAW``), ``lzma_check`` (integrity check, default -1: the format's
    default), ``lzma_preset`` (0-9, may be or-ed with ``lzma.PRESET_EXTREME``),
    ``lzma_filters`` (a filter chain, required for ``FORMAT_RAW``).
    """

    def __init__(self, file: BinaryIO, feed_options: dict[str, Any]) -> None:
        self.file = file
        self.feed_options = feed_options
        self._lzma = lzma.LZMAFile(
            file, mode="wb",
            format=feed_options.get("lzma_format"),
            check=feed_options.get("lzma_check", -1),
            preset=feed_options.get("lzma_preset"),
            filters=feed_options.get("lzma_filters"),
        )

    def write(self, data: bytes) -> int:
        """Compress ``data``; returns its length in bytes."""
        return self._lzma.write(data)

    def close(self) -> None:
        """Write the rest of the stream to ``file`` (left open)."""
        self._lzma.close()
