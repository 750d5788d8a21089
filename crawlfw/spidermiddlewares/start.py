"""Scrapy 2.13's ``StartSpiderMiddleware``: ``meta['is_start_request'] = True`` on start
requests.

crawlfw's spider runner already marks every start request so (``Scraper``, in
``crawlfw.core.flow.scraper``: the frontiers read the key to keep start requests in
their own first-in-first-out order), so this middleware is not in
``SPIDER_MIDDLEWARES_BASE`` (Scrapy 2.19 has it at 25) and disabling it with None
changes nothing. It is here for code that names, subclasses or runs it.
"""

from crawlfw.spidermiddlewares.base import BaseSpiderMiddleware

__all__ = ["StartSpiderMiddleware"]


class StartSpiderMiddleware(BaseSpiderMiddleware):
    """Set ``meta['is_start_request']`` to True on each start request (a request
    processed without a response) that has not set the key itself."""

    def get_processed_request(self, request, response):
        """Returns: ``request``, marked when ``response`` is None (a start request)."""
        if response is None:
            request.meta.setdefault("is_start_request", True)
        return request
