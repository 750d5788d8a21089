"""The ``spider`` argument Scrapy 2.19 made optional in its built-in components.

Scrapy 1.2's hooks (``process_request(request, spider)``, ``open_spider(spider)``, ...)
require the spider, and crawlfw's managers still pass it; Scrapy 2.19's take it as an
optional last argument (deprecated), reading the crawler's spider instead. crawlfw's
built-in components take it both ways: given, it is used; left out (None), the hook acts
for its crawler's spider (:func:`spider_of`). Only a call without it pays for the look-up.
"""

from typing import Any

__all__ = ["spider_of"]


def spider_of(component: Any, spider: Any = None) -> Any:
    """The spider a component's hook acts for.

    Args:
        component: the middleware, pipeline or stats collector; its crawler is read from
            its ``crawler`` attribute (or ``_crawler``).
        spider: the spider the caller passed, or None.

    Returns:
        ``spider`` when it is not None, else the component's crawler's ``spider`` (None
        when the component has no crawler or the crawl has not made its spider yet).
    """
    if spider is not None:
        return spider
    crawler = getattr(component, "crawler", None)
    if crawler is None:
        crawler = getattr(component, "_crawler", None)
    return getattr(crawler, "spider", None)
