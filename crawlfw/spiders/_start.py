"""Which of a spider's start hooks gives its first requests (Scrapy 2.13's rules).

``start()`` is the entry point, as in Scrapy 2.13 and later: the crawl iterates what
``spider.start()`` yields. The default ``Spider.start()`` (and ``SitemapSpider.start()``)
iterates ``start_requests()``, Scrapy 1.2's hook, so:

- a spider defining neither gets one ``Request(url, dont_filter=True)`` per start URL;
- a spider defining only ``start_requests()`` (Scrapy 1.2) gets its requests;
- a spider defining ``async def start(self)`` gets what it yields, whether or not it (or
  a base class) also defines ``start_requests()`` (which then serves Scrapy < 2.13, or
  is reached through ``super().start()``).

Scrapy 2.16 and later never call ``start_requests()`` (the default ``start()`` reads
``start_urls``); crawlfw keeps calling it from the default ``start()`` because it is
Scrapy 1.2's interface. The two differ only for a spider whose ``start_requests()`` is
reached that way: docs/coming-from-scrapy2.md, "Start requests".

When the ``start()`` in use is one of the defaults (they are marked with
:func:`iterates_start_requests`), ``start_requests()`` is called directly: the same
requests, without stepping an event loop per request. An instance attribute
``start_requests`` (``crawlfw fetch``, the shell) is more specific than any class's
``start()``, as a subclass would be.

Mistakes get the message Scrapy 2.19 gives, or a warning where Scrapy 1.2 code is
legitimate:

- ``async def start(self)`` without ``yield`` (a coroutine, not an async generator):
  ``TypeError`` ("... .start() must be an asynchronous generator ..."), as Scrapy's;
- a plain ``def start(self)``: Scrapy 1.2 spiders may have a method of their own by
  that name, so it is not a start hook; one WARNING says so and ``start_requests()``
  is used (Scrapy 2.13+ refuses such a spider with the ``TypeError`` above);
- a class defining ``start_requests()`` below a class defining its own ``start()``
  (``class Child(Base)`` where only ``Base`` has ``start()``): one WARNING names both,
  as Scrapy 2.13's deprecation warning did, because ``Child.start_requests()`` is used
  only if ``Base.start()`` iterates ``super().start()``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

logger = logging.getLogger("crawlfw.spiders")

__all__ = ["iterates_start_requests", "start_output", "start_hook"]

_F = TypeVar("_F", bound=Callable[..., Any])


def iterates_start_requests(start: _F) -> _F:
    """Mark an ``async def start(self)`` that only yields what ``self.start_requests()``
    returns (the defaults of ``Spider`` and ``SitemapSpider``), so that the crawl may
    call ``start_requests()`` directly. Returns ``start`` itself."""
    start._crawlfw_iterates_start_requests = True  # type: ignore[attr-defined]
    return start


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _defining_class(spidercls: type, name: str) -> type | None:
    for cls in spidercls.__mro__:
        if name in cls.__dict__:
            return cls
    return None


def start_hook(spider: Any) -> str:
    """Name the hook whose output is the spider's first requests.

    Args:
        spider: a spider instance.

    Returns:
        ``"start"`` (iterate ``spider.start()``), ``"start_requests"`` (call
        ``spider.start_requests()``: the ``start()`` in use is a default that does
        that, or an instance attribute ``start_requests`` overrides it) or
        ``"sync_start"`` (``start`` is a plain method, not a start hook: use
        ``start_requests()`` and warn).

    Raises:
        TypeError: ``start`` is an ``async def`` without ``yield`` (Scrapy 2.19's
            message).
    """
    instance = vars(spider) if hasattr(spider, "__dict__") else {}
    if "start_requests" in instance and "start" not in instance:
        return "start_requests"
    start = spider.start
    func = inspect.unwrap(getattr(start, "__func__", start))
    if getattr(func, "_crawlfw_iterates_start_requests", False):
        return "start_requests"
    if inspect.isasyncgenfunction(func):
        return "start"
    if inspect.iscoroutinefunction(func):
        raise TypeError(
            f"{_qualname(type(spider))}.start() must be an asynchronous generator, i.e. "
            f"an async def method with yield statements, got <class 'coroutine'>")
    return "sync_start"


def _warn_shadowed_start_requests(spider: Any) -> None:
    spidercls = type(spider)
    mro = spidercls.__mro__
    requests_cls = _defining_class(spidercls, "start_requests")
    start_cls = _defining_class(spidercls, "start")
    if requests_cls is None or start_cls is None or requests_cls is start_cls:
        return
    if mro.index(requests_cls) > mro.index(start_cls):
        return
    src = _qualname(requests_cls)
    if requests_cls is not spidercls:
        src += f" (inherited by {_qualname(spidercls)})"
    logger.warning(
        "%(src)s defines start_requests(), but %(start)s.start() is the entry point "
        "(Scrapy 2.13+): start_requests() is used only if that start() iterates "
        "super().start(). Define start() in %(requests)s as well (it may iterate "
        "self.start_requests())",
        {"src": src, "start": _qualname(start_cls), "requests": requests_cls.__name__},
        extra={"spider": spider})


def start_output(spider: Any) -> Iterator[Any]:
    """The spider's first requests and items, as a plain iterator (see the module
    docstring for the rules).

    An ``async def start()`` is stepped one value at a time on the calling thread's
    event loop (:func:`crawlfw.spiders._async.iterate_async_generator`): call this on
    the thread that will iterate the result.

    Args:
        spider: a spider instance.

    Returns:
        An iterator of Requests and items (whatever the hook yields; the caller checks
        types).

    Raises:
        TypeError: ``start`` is an ``async def`` coroutine, not an async generator.
        Whatever ``start_requests()`` raises when called (a generator raises only when
        iterated).
    """
    hook = start_hook(spider)
    if hook == "start":
        _warn_shadowed_start_requests(spider)
        from crawlfw.spiders._async import iterate_async_generator

        return iterate_async_generator(spider.start())
    if hook == "sync_start":
        logger.warning(
            "%(cls)s.start() is not an asynchronous generator (an async def method with "
            "yield statements), so it is not a start hook: the first requests come from "
            "start_requests(), as in Scrapy 1.2 (Scrapy 2.13+ refuses such a spider)",
            {"cls": _qualname(type(spider))}, extra={"spider": spider})
    return iter(spider.start_requests())
