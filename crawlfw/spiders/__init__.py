"""Base class for crawlfw spiders (Scrapy 1.2's ``scrapy.spiders``).

See the generic spiders in this package for common crawling patterns:
``CrawlSpider``/``Rule`` (crawlfw.spiders.crawl), ``XMLFeedSpider``/``CSVFeedSpider``
(crawlfw.spiders.feed) and ``SitemapSpider`` (crawlfw.spiders.sitemap).
"""

import inspect
import logging
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from crawlfw import signals
from crawlfw.http import Request
from crawlfw.spiders._start import iterates_start_requests
from crawlfw.utils._logadapter import SpiderLoggerAdapter
from crawlfw.utils.trackref import object_ref
from crawlfw.utils.url import url_is_from_spider

__all__ = ["Spider", "CrawlSpider", "Rule", "XMLFeedSpider", "CSVFeedSpider", "SitemapSpider"]


class Spider(object_ref):
    """Base class for spiders; every spider must subclass it.

    Class attributes:
        name (str): unique name of the spider in a project (required to run it). As in
            Scrapy 2.19, ``Spider`` declares it without a value: ``hasattr(cls,
            "name")`` is false for a spider class that sets none (Scrapy 1.2's
            ``Spider.name`` was None; read ``getattr(cls, "name", None)`` for that).
        allowed_domains (list[str]): domains the OffsiteMiddleware lets requests go to.
        start_urls (list[str]): URLs the default ``start_requests()`` fetches.
        custom_settings (dict | None): settings applied at ``'spider'`` priority.

    Args:
        name: overrides the class ``name``.
        **kwargs: set as attributes (``-a NAME=VALUE`` on the command line arrives here).

    Raises:
        ValueError: no name given on the class or as an argument.
    """

    name: str
    custom_settings: dict | None = None
    start_urls: list[str]
    allowed_domains: list[str]

    def __init__(self, name=None, **kwargs):
        if name is not None:
            self.name = name
        elif not getattr(self, "name", None):
            raise ValueError(f"{type(self).__name__} must have a name")
        self.__dict__.update(kwargs)
        if not hasattr(self, "start_urls"):
            self.start_urls = []

    @property
    def logger(self) -> logging.LoggerAdapter:
        """A :class:`crawlfw.utils.log.SpiderLoggerAdapter` (Scrapy 2.19's) of the
        logger named after the spider: it adds ``spider`` to each record's ``extra``,
        keeping the ``extra`` the call gives."""
        logger = logging.getLogger(self.name)
        return SpiderLoggerAdapter(logger, {"spider": self})

    def log(self, message, level=logging.DEBUG, **kw):
        """Log ``message`` through the spider's logger (kept for Scrapy compatibility)."""
        self.logger.log(level, message, **kw)

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        """Create the spider bound to ``crawler`` (sets ``spider.crawler`` and ``settings``)."""
        spider = cls(*args, **kwargs)
        spider._set_crawler(crawler)
        return spider

    def set_crawler(self, crawler):
        warnings.warn(
            "set_crawler is deprecated, instantiate and bound the spider to this crawler "
            "with the from_crawler method instead.",
            category=DeprecationWarning,
            stacklevel=2,
        )
        assert not hasattr(self, "_crawler"), "Spider already bounded to a crawler"
        self._set_crawler(crawler)

    def _set_crawler(self, crawler):
        self.crawler = crawler
        self.settings = crawler.settings
        crawler.signals.connect(self.close, signals.spider_closed)

    def start_requests(self) -> Iterator[Request]:
        """Return an iterator of the first requests: one ``Request(url, dont_filter=True)``
        per start URL, made by ``make_requests_from_url`` (Scrapy 1.2's hook).

        The crawl itself iterates :meth:`start` (Scrapy 2.13's entry point), whose
        default iterates this method (see ``crawlfw.spiders._start`` for the rules).
        Called directly on a spider that defines its own ``async def start(self)`` but
        not ``start_requests``, it gives what ``start()`` yields, stepped one at a time
        on the calling thread's event loop (``crawlfw.spiders._async``), so code of
        either era asking either hook gets the spider's first requests. Called while an
        event loop runs on this thread (from ``start()`` itself: ``for request in
        self.start_requests()`` in an ``async def start``, a common Scrapy 2 pattern;
        or from any coroutine), it gives the start URLs' requests, as Scrapy 2.13 to 2.15's
        does (Scrapy 2.16+ has no start_requests).

        Returns:
            An iterator of :class:`Request` (and items, when ``start()`` yields some).
        """
        start = type(self).start
        if (not getattr(start, "_crawlfw_iterates_start_requests", False)
                and inspect.isasyncgenfunction(start) and not _event_loop_running()):
            from crawlfw.spiders._async import iterate_async_generator

            return iterate_async_generator(self.start())
        return self._requests_from_start_urls()

    def _requests_from_start_urls(self):
        for url in self.start_urls:
            yield self.make_requests_from_url(url)

    @iterates_start_requests
    async def start(self) -> AsyncIterator[Request]:
        """Yield the first requests and items asynchronously (Scrapy 2.13's entry point:
        the crawl iterates this).

        The default yields what :meth:`start_requests` yields (Scrapy 2.13 to 2.15's
        rule; Scrapy 1.2's hook keeps working), so a spider may override ``start()``
        and call ``super().start()`` (``async for request in super().start(): yield
        request``). A spider overriding ``start()`` gets its ``start()`` even when it
        also defines ``start_requests()``.

        Yields:
            :class:`Request` objects (and items).
        """
        if type(self).start_requests is Spider.start_requests:
            requests = self._requests_from_start_urls()
        else:
            requests = self.start_requests()
        for request in requests:
            yield request

    def make_requests_from_url(self, url):
        """Return ``Request(url, dont_filter=True)`` (Scrapy 1.2's hook)."""
        return Request(url, dont_filter=True)

    if TYPE_CHECKING:
        #: Seen by type checkers as any callable, so that a spider's typed
        #: ``def parse(self, response: TextResponse)`` is no incompatible override of
        #: Scrapy 2's ``(self, response, **kwargs)``.
        parse: Callable[..., Any]
    else:
        def parse(self, response: Any, **kwargs: Any) -> Any:
            """Default callback; subclasses must override it when they rely on it.
            ``kwargs`` are the request's ``cb_kwargs`` (Scrapy 2's signature).

            Raises:
                NotImplementedError: always, naming the spider class.
            """
            raise NotImplementedError(f"{self.__class__.__name__}.parse callback is not defined")

    @classmethod
    def update_settings(cls, settings):
        """Apply ``custom_settings`` to ``settings`` at ``'spider'`` priority."""
        settings.setdict(cls.custom_settings or {}, priority="spider")

    @classmethod
    def handles_request(cls, request):
        """True when the request URL belongs to this spider's domains: its host is the
        spider's ``name`` or one of its ``allowed_domains``, or a subdomain of one.

        The URL's port is ignored, as the offsite middleware ignores it (an
        ``allowed_domains`` entry is a domain name: ``genspider quotes 127.0.0.1:8400``
        writes ``127.0.0.1``), so ``parse``, ``fetch`` and ``shell`` find that spider
        for ``http://127.0.0.1:8400/``; an entry written with its port
        (``localhost:8400``) still matches that host and port, as in Scrapy.
        """
        url = request.url
        if url_is_from_spider(url, cls):
            return True
        parts = urlparse(url)
        try:
            if parts.port is None or not parts.hostname:
                return False
        except ValueError:  # a port that is not a number
            return False
        return url_is_from_spider(parts._replace(netloc=parts.hostname), cls)

    @staticmethod
    def close(spider, reason):
        """Call ``spider.closed(reason)`` if the spider defines it (on ``spider_closed``)."""
        closed = getattr(spider, "closed", None)
        if callable(closed):
            return closed(reason)

    def __str__(self):
        return f"<{type(self).__name__} {getattr(self, 'name', None)!r} at 0x{id(self):0x}>"

    __repr__ = __str__


#: Scrapy < 1.0 name, kept for ported code.
BaseSpider = Spider


def __getattr__(name):
    # The generic spiders are imported lazily so ``import crawlfw.spiders`` stays light.
    import importlib

    where = {
        "CrawlSpider": "crawlfw.spiders.crawl",
        "Rule": "crawlfw.spiders.crawl",
        "XMLFeedSpider": "crawlfw.spiders.feed",
        "CSVFeedSpider": "crawlfw.spiders.feed",
        "SitemapSpider": "crawlfw.spiders.sitemap",
    }.get(name)
    if where is None:
        raise AttributeError(f"module 'crawlfw.spiders' has no attribute {name!r}")
    return getattr(importlib.import_module(where), name)


def _event_loop_running() -> bool:
    """True when an asyncio event loop runs on this thread (a coroutine is calling)."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
