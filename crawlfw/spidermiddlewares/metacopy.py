"""Warn when a spider yields a request carrying meta keys copied from ``response.meta``
that belong to one download only (Scrapy 2.19's ``MetaCopyDetectionMiddleware``).

``Request(url, meta=response.meta)`` copies keys the downloader middlewares set for
that one response: redirect and retry counters (``redirect_times``, ``redirect_ttl``,
``redirect_urls``, ``redirect_reasons``, ``retry_times``), proxy credentials
(``_auth_proxy``, ``_scheme_proxy``), ``download_latency``, the cache's
``cache_timestamp`` and ``_dont_cache``. Carried on, they make the new request give up
redirects or retries early, or reuse another host's proxy credentials. One WARNING per
crawl names the keys, the response and the request; the request goes on unchanged.
``META_COPY_WARN_SKIP_KEYS`` (a list) names keys not to warn about.

Scrapy 2.19 enables it by default (``SPIDER_MIDDLEWARES_BASE``, order 1000); crawlfw
does not, so the default spider middlewares keep their one-generator path
(``_default_chain``): enable it with ``SPIDER_MIDDLEWARES =
{"crawlfw.spidermiddlewares.metacopy.MetaCopyDetectionMiddleware": 1000}``.
"""

from __future__ import annotations

import logging

from crawlfw.spidermiddlewares.base import BaseSpiderMiddleware

__all__ = ["MetaCopyDetectionMiddleware"]

logger = logging.getLogger(__name__)


class MetaCopyDetectionMiddleware(BaseSpiderMiddleware):
    """Warn once per crawl about a request with per-download meta keys.

    Args:
        crawler: the Crawler (its ``META_COPY_WARN_SKIP_KEYS`` setting and spider).
    """

    _INTERNAL_KEYS: frozenset[str] = frozenset({
        "_auth_proxy",
        "_dont_cache",
        "_scheme_proxy",
        "cache_timestamp",
        "download_latency",
        "redirect_reasons",
        "redirect_times",
        "redirect_ttl",
        "redirect_urls",
        "retry_times",
    })

    def __init__(self, crawler) -> None:
        super().__init__(crawler)
        skip = frozenset(crawler.settings.getlist("META_COPY_WARN_SKIP_KEYS", []))
        self._keys: frozenset[str] = self._INTERNAL_KEYS - skip
        self._warned = False

    def get_processed_request(self, request, response):
        """Warn (once per crawl) when ``request`` made from ``response`` carries one of
        the per-download meta keys; return it unchanged."""
        if response is None or self._warned:
            return request
        found = self._keys & request.meta.keys()
        if found:
            spider = self.crawler.spider
            logger.warning(
                "%(spider)s yielded a request containing internal meta keys that were "
                "likely copied from response.meta and should not be forwarded to new "
                "requests: %(keys)s. See the MetaCopyDetectionMiddleware documentation "
                "for more information. Source response: %(response)s, target request: "
                "%(request)s",
                {"spider": type(spider).__name__, "keys": sorted(found),
                 "response": response, "request": request},
                extra={"spider": spider},
            )
            self._warned = True
        return request
