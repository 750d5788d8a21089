"""Drop requests to hosts outside the spider's ``allowed_domains`` before they are
downloaded (Scrapy 2.11.2's downloader-side ``OffsiteMiddleware``).

Not in ``DOWNLOADER_MIDDLEWARES_BASE``: crawlfw keeps Scrapy 1.2's spider middleware
(:class:`crawlfw.spidermiddlewares.offsite.OffsiteMiddleware`, in
``SPIDER_MIDDLEWARES_BASE``), which drops a callback's offsite requests before they are
scheduled and lets start requests through, as Scrapy 1.2 did. Scrapy 2.19 has only this
one, at 50, which drops offsite start requests too (those without ``dont_filter``: the
requests of ``start_urls`` have it). To get that, enable it::

    DOWNLOADER_MIDDLEWARES = {"crawlfw.downloadermiddlewares.offsite.OffsiteMiddleware": 50}

With both on, a callback's offsite request is dropped (and logged) by the spider
middleware and never reaches this one; what this one drops is what the spider middleware
does not see: start requests and requests components schedule
(``crawler.engine.crawl``, the shell's ``schedule``, user actors). The two share the
record of domains already logged, so each domain's "Filtered offsite request" line is
logged once. Disabling either (``None`` in the settings) leaves the other working.
Unlike Scrapy's, it does not listen to ``request_scheduled`` (crawlfw's scheduler would
then fire that signal for every request; the spider middleware already keeps a
callback's offsite requests out of the scheduler).
"""

from crawlfw.exceptions import IgnoreRequest
from crawlfw.spidermiddlewares.offsite import _OffsiteFilter
from crawlfw.utils.httpobj import urlparse_cached

__all__ = ["OffsiteMiddleware"]


class OffsiteMiddleware(_OffsiteFilter):
    """Raise :class:`~crawlfw.exceptions.IgnoreRequest` for a request whose host is not
    ``spider.allowed_domains`` or a subdomain of one, unless its ``dont_filter`` or
    ``meta['allow_offsite']`` is true; a spider without ``allowed_domains`` lets every
    request through. The first request filtered per domain is logged at DEBUG
    ("Filtered offsite request to 'host': <GET url>") and counted in
    ``offsite/domains``; each in ``offsite/filtered``. Override :meth:`should_follow`
    for another policy.

    Args:
        stats: the stats collector.
    """

    def request_scheduled(self, request, spider=None) -> None:
        """Scrapy's ``request_scheduled`` handler: :meth:`process_request` (raises
        :class:`~crawlfw.exceptions.IgnoreRequest` for an offsite request). Not
        connected to the signal here (see the module docstring); a subclass may connect
        it."""
        self.process_request(request, spider)

    def process_request(self, request, spider=None):
        """Returns: None (the request goes on).

        Raises:
            IgnoreRequest: the request is offsite.
        """
        if self._regex_spider is not spider or spider is None:
            if spider is None:  # (the crawler's spider, Scrapy 2.19's call)
                spider = getattr(getattr(self, "crawler", None), "spider", None)
            if self._regex_spider is not spider:
                self.spider_opened(spider)
        if self._allows_all or request.dont_filter or request.meta.get("allow_offsite") \
                or self.should_follow(request, spider):
            return None
        self.report_filtered(request, spider)
        domain = urlparse_cached(request).hostname
        raise IgnoreRequest(f"Filtered offsite request to {domain!r}")
