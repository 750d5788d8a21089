"""The plug-in points of a feed that :mod:`crawlfw.core.feeds.feeds` drives: the default
``item_filter`` (:class:`ItemFilter`) and the ``postprocessing`` chain
(:class:`PostProcessingManager`), both Scrapy 2.6's.

Their public paths are Scrapy's, :mod:`crawlfw.extensions.feedexport` and
:mod:`crawlfw.extensions.postprocessing`, which import them from here; they live in
``core/`` so that ``core/`` imports nothing from ``extensions/`` (``tests/test_layers.py``).
The post-processing plug-ins themselves (gzip, bz2, LZMA) stay in
:mod:`crawlfw.extensions.postprocessing`: a feed names them by import path.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import IO, Any

from crawlfw.utils.misc import load_object

__all__ = ["ItemFilter", "PostProcessingManager"]


class ItemFilter:
    """Decides which items a feed exports (Scrapy 2.6's ``ItemFilter``, the default of
    the ``item_filter`` feed option).

    A feed's ``item_filter`` option names a class (or its import path) built once per
    feed as ``cls(feed_options)``; its ``accepts(item)`` is asked for every item, and
    an item it refuses is not written to that feed (nor counted in its items). This
    default accepts the items that are instances of a class of the feed's
    ``item_classes`` option (classes or import paths), and every item when the option
    is not given.

    Args:
        feed_options: the feed's options dict (None: no options).

    Raises:
        ImportError, NameError, ValueError: an ``item_classes`` path cannot be loaded.
    """

    def __init__(self, feed_options: Mapping[str, Any] | None) -> None:
        self.feed_options = feed_options
        classes = (feed_options or {}).get("item_classes") or ()
        self.item_classes = tuple(load_object(c) if isinstance(c, str) else c
                                  for c in classes)

    def accepts(self, item: Any) -> bool:
        """True if ``item`` goes to the feed."""
        if self.item_classes:
            return isinstance(item, self.item_classes)
        return True


class PostProcessingManager(io.IOBase):
    """The file an exporter writes to when a feed has ``postprocessing``: data goes
    through each plug-in in the listed order, then into ``file``.

    An :class:`io.IOBase`, so that exporters that wrap their file (CSV's text layer)
    can use it.

    Args:
        plugins: plug-in classes or import paths, in the order data goes through them.
        file: the feed's binary file (from its storage); never closed here.
        feed_options: the feed's options, handed to every plug-in.

    Raises:
        ImportError, NameError, ValueError: a plug-in path cannot be loaded.
        Exception: whatever a plug-in's constructor raises for its options.
    """

    def __init__(self, plugins: Iterable[Any], file: IO[bytes],
                 feed_options: dict[str, Any]) -> None:
        super().__init__()
        self.file = file
        self.feed_options = feed_options
        classes = [load_object(p) if isinstance(p, str) else p for p in plugins]
        self._chain: list[Any] = []  # the plug-ins, the one the exporter writes to first
        target = file
        for cls in reversed(classes):
            target = cls(target, feed_options)
            self._chain.insert(0, target)
        self._head = target

    def write(self, data: bytes) -> int:
        """Pass ``data`` through the plug-ins; returns what the first one returns."""
        return self._head.write(data)

    def writable(self) -> bool:
        return True

    def tell(self) -> int:
        """The position in the feed's file (bytes written after processing)."""
        return self.file.tell()

    def close(self) -> None:
        """Close every plug-in, the first first (each flushes into the next); ``file``
        stays open for the storage to store."""
        if self.closed:
            return
        try:
            for plugin in self._chain:
                plugin.close()
        finally:
            super().close()
