"""Track how deep each request is in the crawl; limit depth, adjust priority, count.

The depth of a start request's response is 0; a request produced by a callback of a
response at depth N gets ``meta['depth'] = N + 1``.

Settings: ``DEPTH_LIMIT`` (0: no limit; deeper requests are dropped with a DEBUG log
"Ignoring link (depth > N): URL"), ``DEPTH_PRIORITY`` (``priority -= depth *
DEPTH_PRIORITY``: a positive value crawls breadth-first-ish), ``DEPTH_STATS`` (stat
``request_depth_max``), ``DEPTH_STATS_VERBOSE`` (stats ``request_depth_count/<depth>``).
"""

import logging

from crawlfw.http import Request

__all__ = ["DepthMiddleware"]

logger = logging.getLogger(__name__)


class DepthMiddleware:
    """Set ``meta['depth']`` on requests; drop those beyond ``DEPTH_LIMIT``.

    Args:
        maxdepth: the largest depth allowed (0: unlimited).
        stats: the stats collector, or None for no stats.
        verbose_stats: also count requests per depth.
        prio: priority decrease per depth level.
    """

    def __init__(self, maxdepth: int, stats=None, verbose_stats: bool = False, prio: int = 1):
        self.maxdepth = maxdepth
        self.stats = stats
        self.verbose_stats = verbose_stats
        self.prio = prio

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        stats = crawler.stats if settings.getbool("DEPTH_STATS", True) else None
        mw = cls(
            settings.getint("DEPTH_LIMIT"),
            stats,
            settings.getbool("DEPTH_STATS_VERBOSE"),
            settings.getint("DEPTH_PRIORITY"),
        )
        mw.crawler = crawler
        return mw

    def process_spider_output(self, response, result, spider=None):
        """Set the depth of each request of ``result`` (one more than ``response``'s),
        lower its priority by ``depth * DEPTH_PRIORITY``, drop it beyond
        ``DEPTH_LIMIT`` and count it; other elements pass unchanged.

        Returns:
            A generator over the kept elements, in order.
        """
        # base case: a start request's response is at depth 0
        if "depth" not in response.meta:
            response.meta["depth"] = 0
            if self.stats is not None and self.verbose_stats:
                self.stats.inc_value("request_depth_count/0", spider=spider)
        return self._output(iter(result or ()), response, spider)

    async def process_spider_output_async(self, response, result, spider=None):
        """:meth:`process_spider_output` for an async iterable ``result`` (Scrapy 2.7+):
        an async generator over the kept elements, in order."""
        if response is not None and "depth" not in response.meta:
            response.meta["depth"] = 0
            if self.stats is not None and self.verbose_stats:
                self.stats.inc_value("request_depth_count/0", spider=spider)
        async for r in result:
            if isinstance(r, Request) and response is not None:
                r = self.get_processed_request(r, response)
                if r is None:
                    continue
            yield r

    def get_processed_request(self, request, response):
        """Give one request made from ``response`` its depth (Scrapy 2.13's per-request
        hook): ``meta['depth']`` one more than ``response``'s, priority lowered by
        ``depth * DEPTH_PRIORITY``, counted; beyond ``DEPTH_LIMIT`` it is dropped
        (logged at DEBUG). A start request (``response`` None) is returned as it is.

        Args:
            request: a ``crawlfw.http.Request``.
            response: the Response it came from, or None.

        Returns:
            The request, or None when it is too deep.
        """
        if response is None:
            return request
        depth = response.meta.get("depth", 0) + 1
        request.meta["depth"] = depth
        if self.prio:
            request.priority -= depth * self.prio
        spider = getattr(getattr(self, "crawler", None), "spider", None)
        if self.maxdepth and depth > self.maxdepth:
            logger.debug(
                "Ignoring link (depth > %(maxdepth)d): %(requrl)s ",
                {"maxdepth": self.maxdepth, "requrl": request.url},
                extra={"spider": spider},
            )
            return None
        if self.stats is not None:
            if self.verbose_stats:
                self.stats.inc_value(f"request_depth_count/{depth}", spider=spider)
            self.stats.max_value("request_depth_max", depth, spider=spider)
        return request

    def _output(self, result, response, spider):
        # The requests of one response share a depth: request_depth_max is raised once
        # per depth, not once per request.
        maxdepth, prio, stats, verbose = self.maxdepth, self.prio, self.stats, self.verbose_stats
        depth = response.meta["depth"] + 1
        last_max = None
        for r in result:
            if isinstance(r, Request):
                r.meta["depth"] = depth
                if prio:
                    r.priority -= depth * prio
                if maxdepth and depth > maxdepth:
                    logger.debug(
                        "Ignoring link (depth > %(maxdepth)d): %(requrl)s ",
                        {"maxdepth": maxdepth, "requrl": r.url},
                        extra={"spider": spider},
                    )
                    continue
                if stats is not None:
                    if verbose:
                        stats.inc_value(f"request_depth_count/{depth}", spider=spider)
                    if depth != last_max:
                        stats.max_value("request_depth_max", depth, spider=spider)
                        last_max = depth
            yield r
