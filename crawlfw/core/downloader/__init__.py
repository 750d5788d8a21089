"""Scrapy's public path ``scrapy.core.downloader``, for its
:class:`~crawlfw.core.downloader.middleware.DownloaderMiddlewareManager`.

crawlfw's downloads are not made here: the downloader actors
(:mod:`crawlfw.actors.downloader`) drive libcurl, per download slot
(:mod:`crawlfw.core.transport`). Scrapy's ``Downloader``, ``Slot`` and download
handlers have no counterpart (docs/coming-from-scrapy2.md).
"""

from crawlfw.core.downloader.middleware import DownloaderMiddlewareManager

__all__ = ["DownloaderMiddlewareManager"]
