"""Helpers for spider classes and callback output (Scrapy 1.2's ``scrapy.utils.spider``)."""

import inspect
import logging
from collections.abc import Iterable
from typing import Any

from crawlfw.spiders import Spider
from crawlfw.spiders._async import iterate_async_generator, run_coroutine
from crawlfw.utils.misc import arg_to_iter

logger = logging.getLogger(__name__)

__all__ = ["iterate_spider_output", "iter_spider_classes", "spidercls_for_request", "DefaultSpider"]


def iterate_spider_output(result: Any) -> Iterable[Any]:
    """Return an iterable over a callback's result.

    Args:
        result: what a callback or errback returned: None, a single object, an
            iterable, a coroutine (an ``async def`` callback without ``yield``, Scrapy
            2), or an async generator (an ``async def`` callback with ``yield``).

    Returns:
        An iterable: ``[]`` for None, ``[obj]`` for one object, the iterable itself; a
        coroutine is run to completion now, on the calling thread's own event loop
        (``crawlfw.spiders._async``), and its result treated the same way; an async
        generator becomes a plain generator stepping it on that loop as it is iterated.

    Raises:
        Whatever a coroutine raises (an async generator raises when iterated).
    """
    if inspect.iscoroutine(result):
        result = run_coroutine(result)
    if inspect.isasyncgen(result):
        return iterate_async_generator(result)
    return arg_to_iter(result)


def iter_spider_classes(module):
    """Yield the Spider subclasses defined in ``module`` that have a ``name``."""
    for obj in vars(module).values():
        if (
            inspect.isclass(obj)
            and issubclass(obj, Spider)
            and obj.__module__ == module.__name__
            and getattr(obj, "name", None)
        ):
            yield obj


def spidercls_for_request(spider_loader, request, default_spidercls=None, log_none=False,
                          log_multiple=False):
    """Return the one spider class whose domains handle ``request``, else the default."""
    snames = spider_loader.find_by_request(request)
    if len(snames) == 1:
        return spider_loader.load(snames[0])
    if len(snames) > 1 and log_multiple:
        logger.error("More than one spider can handle: %(request)s - %(snames)s",
                     {"request": request, "snames": ", ".join(snames)})
    if len(snames) == 0 and log_none:
        logger.error("Unable to find spider that handles: %(request)s", {"request": request})
    return default_spidercls


class DefaultSpider(Spider):
    """The spider used when no project spider handles a URL (``fetch``, ``shell``)."""

    name = "default"
