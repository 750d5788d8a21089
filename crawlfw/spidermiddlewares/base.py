"""``BaseSpiderMiddleware``: Scrapy 2.13+'s optional base class for spider middlewares.

A subclass overrides :meth:`~BaseSpiderMiddleware.get_processed_request` and/or
:meth:`~BaseSpiderMiddleware.get_processed_item`, called once per request or item a
callback or ``start()`` yields; returning None drops it. The base class supplies
``process_spider_output`` (and its ``_async`` twin) and ``process_start`` that call them,
so the same middleware handles plain and ``async`` callbacks and start requests.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any

from crawlfw.http import Request

__all__ = ["BaseSpiderMiddleware"]


class BaseSpiderMiddleware:
    """Optional base class for spider middlewares (Scrapy 2.13+).

    Args:
        crawler: the :class:`~crawlfw.crawler.Crawler` (kept as ``self.crawler``).
    """

    def __init__(self, crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler):
        """Build the middleware for ``crawler``: ``cls(crawler)``."""
        return cls(crawler)

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """Pass each start request or item through :meth:`get_processed_request` /
        :meth:`get_processed_item` (with ``response`` None)."""
        async for o in start:
            if (o := self._get_processed(o, None)) is not None:
                yield o

    def process_spider_output(self, response, result: Iterable[Any], spider=None
                              ) -> Iterable[Any]:
        """Pass each request or item of a callback's ``result`` through
        :meth:`get_processed_request` / :meth:`get_processed_item`."""
        for o in result:
            if (o := self._get_processed(o, response)) is not None:
                yield o

    async def process_spider_output_async(self, response, result: AsyncIterator[Any],
                                          spider=None) -> AsyncIterator[Any]:
        """:meth:`process_spider_output` for an async iterable ``result``."""
        async for o in result:
            if (o := self._get_processed(o, response)) is not None:
                yield o

    def _get_processed(self, o: Any, response) -> Any:
        if isinstance(o, Request):
            return self.get_processed_request(o, response)
        return self.get_processed_item(o, response)

    def get_processed_request(self, request: Request, response) -> Request | None:
        """Return the request to pass on (this one or another), or None to drop it.

        Args:
            request: a request from the spider's output or ``start()``.
            response: the response whose callback made it; None for start requests.
        """
        return request

    def get_processed_item(self, item: Any, response) -> Any:
        """Return the item to pass on (this one or another), or None to drop it.

        Args:
            item: an item from the spider's output or ``start()``.
            response: the response whose callback made it; None for start items.
        """
        return item
