"""Spider middleware manager: runs ``SPIDER_MIDDLEWARES`` around a spider callback.

Synchronous counterpart of Scrapy 1.2's ``scrapy.core.spidermw``, with the same order
and semantics but no Deferreds: :meth:`SpiderMiddlewareManager.scrape_response` returns
the (lazy) iterable of callback output, and the caller iterates it.

Order (Scrapy 1.2): ``process_spider_input`` runs in ascending order of the
``SPIDER_MIDDLEWARES`` numbers (engine side first); ``process_spider_output``,
``process_spider_exception`` and ``process_start_requests`` in descending order
(spider side first).

The caller's contract (:class:`crawlfw.core.scraper.Scraper`)
-------------------------------------------------------------
``scrape_func(result, request, spider)`` is the caller's "call the spider" function
(Scrapy 1.2's ``Scraper.call_spider``). ``result`` is either the ``Response`` or an
exception instance:

* given a Response, it calls ``request.callback or spider.parse`` with it and
  returns what the callback returned;
* given an exception, it calls ``request.errback`` with it (wrapped in whatever failure
  object errbacks receive) and returns what the errback returned; when the request
  has no errback it **re-raises the exception** (this is how ``HttpError`` reaches
  ``HttpErrorMiddleware.process_spider_exception``, which swallows it).

The manager normalises what ``scrape_func`` returns like Scrapy's
``iterate_spider_output``: None becomes ``[]``; a single Request, item (any
``Mapping``, so ``dict`` and ``crawlfw.item.Item``), ``str`` or ``bytes`` becomes a
one-element list (also any ``crawlfw.item.BaseItem``); any other iterable (list,
generator) is used as is.

What the caller sees, case by case:

1. **Callback returns** (a list, a generator, one object, None): ``scrape_response``
   returns an iterable that has been through every ``process_spider_output``. The
   caller iterates it and handles each element (Request -> engine, item -> pipeline).

2. **Callback raises** (a plain function raising on call; a generator does not raise
   on call, see 3): the exception is offered to each ``process_spider_exception``.
   The first one returning an iterable recovers: that iterable goes through the whole
   ``process_spider_output`` chain (as in Scrapy 1.2) and is returned. When all
   return None, ``scrape_response`` **re-raises the original exception**; the caller
   then handles it as Scrapy 1.2's ``Scraper.handle_spider_error``: ``CloseSpider``
   closes the spider with its reason; anything else is logged at ERROR as
   ``"Spider error processing %(request)s (referer: %(referer)s)"`` with the
   traceback, sends the ``spider_error`` signal and increments
   ``spider_exceptions/<ExceptionClassName>``.

3. **Generator raises midway** (the callback's generator, or a middleware's
   ``process_spider_output`` generator): the exception comes out of ``next()`` on the
   returned iterable, after the elements already produced. As in Scrapy 1.2
   (``iter_errback``), ``process_spider_exception`` is *not* called for it: the
   caller keeps what was produced before, stops iterating (the generators are
   finished) and handles the exception exactly as in case 2.

4. **An input middleware raises** (``process_spider_input``, e.g. ``HttpError``): the
   remaining input hooks are skipped and ``scrape_func(exception, request, spider)``
   is called instead of the callback, so the request's errback runs. If the errback
   returns output, it goes through ``process_spider_output`` as in case 1; if there
   is no errback (``scrape_func`` re-raises) or the errback raises, case 2 applies.

A middleware returning a value of the wrong type raises ``_InvalidOutput`` (a
``TypeError``) out of ``scrape_response``; it is never offered to
``process_spider_exception``. The caller handles it as in case 2 (it is a bug in a
middleware).

Download errors (the request never produced a Response) do not go through the
spider middlewares in Scrapy 1.2: the caller calls the errback directly.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from crawlfw.core.flow.downloadermw import _InvalidOutput, _mw_name, _type_name
from crawlfw.item import AnyItem, BaseItem
from crawlfw.middleware import MiddlewareManager, component_method
from crawlfw.utils.conf import build_component_list

if TYPE_CHECKING:
    from crawlfw.http import Request, Response
    from crawlfw.settings import BaseSettings
    from crawlfw.spiders import Spider

__all__ = ["SpiderMiddlewareManager"]


def _isiterable(obj: Any) -> bool:
    return isinstance(obj, Iterable)


def _iterate_spider_output(result: Any) -> Iterable[Any]:
    """None -> []; a single object -> [object]; an iterable -> itself (Scrapy's
    ``iterate_spider_output``/``arg_to_iter``). Mappings (dicts, items), items of any
    type (:class:`~crawlfw.item.AnyItem`: a pydantic model is iterable), ``str`` and
    ``bytes`` count as single objects."""
    if result is None:
        return []
    if isinstance(result, (Mapping, BaseItem, str, bytes, AnyItem)) or not _isiterable(result):
        return [result]
    iterable: Iterable[Any] = result
    return iterable


def _process_start_hook(mw: Any) -> Callable[..., Any]:
    """``process_start_requests(start_requests, spider)`` running Scrapy 2.13's
    ``async def process_start(self, start)`` of ``mw`` (an async generator taking the
    start requests as an async iterable)."""
    process_start = component_method(mw, "process_start", iterable_arg="start")

    def process_start_requests(start_requests: Iterable[Any], spider: Spider | None = None) -> Any:
        return process_start(start=start_requests)

    # a plain function standing for the middleware's method (messages name its class)
    process_start_requests.__self__ = mw  # type: ignore[attr-defined]
    process_start_requests.__name__ = "process_start"
    return process_start_requests


class SpiderMiddlewareManager(MiddlewareManager):
    """Holds the enabled spider middlewares and runs their hooks around a callback.

    Built with ``SpiderMiddlewareManager.from_crawler(crawler)``, which reads
    ``SPIDER_MIDDLEWARES`` merged over ``SPIDER_MIDDLEWARES_BASE`` (a middleware
    mapped to None is disabled). Methods are synchronous and run on the caller's
    thread (the SpiderRunner actor's). See the module docstring for the caller's
    contract.
    """

    component_name = "spider middleware"
    components_setting = "SPIDER_MIDDLEWARES"

    @classmethod
    def _get_mwlist_from_settings(cls, settings: BaseSettings) -> list[Any]:
        return build_component_list(settings.getwithbase("SPIDER_MIDDLEWARES"))

    def _add_middleware(self, mw: Any) -> None:
        super()._add_middleware(mw)
        if hasattr(mw, "process_spider_input"):
            self.methods["process_spider_input"].append(component_method(mw, "process_spider_input"))
        if hasattr(mw, "process_spider_output"):
            self.methods["process_spider_output"].insert(
                0, component_method(mw, "process_spider_output", iterable_arg="result"))
        if hasattr(mw, "process_spider_exception"):
            self.methods["process_spider_exception"].insert(
                0, component_method(mw, "process_spider_exception"))
        if inspect.isasyncgenfunction(getattr(mw, "process_start", None)):
            # Scrapy 2.13's hook, preferred as Scrapy does when a middleware has both
            self.methods["process_start_requests"].insert(0, _process_start_hook(mw))
        elif hasattr(mw, "process_start_requests"):
            self.methods["process_start_requests"].insert(
                0, component_method(mw, "process_start_requests", iterable_arg="start_requests"))

    def scrape_response(
        self,
        scrape_func: Callable[[Any, Any, Any], Any],
        response: Response,
        request: Request,
        spider: Spider,
    ) -> Iterable[Any]:
        """Run the input hooks, the callback (via ``scrape_func``), then the output hooks.

        Args:
            scrape_func: ``scrape_func(response_or_exception, request, spider)``; see
                the module docstring for what it must do with each.
            response: the downloaded ``Response``.
            request: the request that produced it (``response.request``).
            spider: the spider.

        Returns:
            An iterable of Requests and items (lazy when the callback or a middleware
            is a generator); exceptions raised while iterating it reach the caller
            (module docstring, case 3).

        Raises:
            Exception: the callback's or errback's exception when no
                ``process_spider_exception`` recovered it (case 2), or an exception
                raised by an output or exception hook itself.
            _InvalidOutput: a middleware returned a value of the wrong type.
        """
        input_error = self._process_spider_input(response, spider)
        try:
            if input_error is None:
                result = scrape_func(response, request, spider)
            else:
                result = scrape_func(input_error, request, spider)
            result = _iterate_spider_output(result)
        except _InvalidOutput:
            raise
        except Exception as exc:
            result = self._process_spider_exception(response, exc, spider)
            if result is None:
                raise
        return self._process_spider_output(response, result, spider)

    def scrape_result(self, result_of: Callable[[], Any], response: Response,
                      spider: Spider) -> Iterable[Any]:
        """The second half of :meth:`scrape_response`, for a callback that ended later
        (an ``async def`` one that waited for a download: ``Scraper``): ``result_of()``
        gives what ``scrape_func`` would have returned, or raises what it would have
        raised; that result goes through the output hooks, the exception to
        ``process_spider_exception`` first, as in :meth:`scrape_response`.

        Returns:
            The iterable of Requests and items, as :meth:`scrape_response`.

        Raises:
            As :meth:`scrape_response`.
        """
        # scrape_response's own lines, not shared with it: the hot path keeps its cost
        result: Iterable[Any] | None
        try:
            result = _iterate_spider_output(result_of())
        except _InvalidOutput:
            raise
        except Exception as exc:
            result = self._process_spider_exception(response, exc, spider)
            if result is None:
                raise
        return self._process_spider_output(response, result, spider)

    def process_spider_output(self, response: Response, result: Iterable[Any],
                              spider: Spider) -> Iterable[Any]:
        """Pass ``result`` (more output of ``response``'s callback: the rest of an async
        generator callback that waited) through every ``process_spider_output``.

        Raises:
            _InvalidOutput: a middleware returned a non-iterable.
        """
        return self._process_spider_output(response, result, spider)

    def _process_spider_input(self, response: Response, spider: Spider) -> Exception | None:
        """Run the input hooks; return the first exception one raised, else None."""
        for method in self.methods["process_spider_input"]:
            try:
                result = method(response=response, spider=spider)
            except Exception as exc:
                return exc
            if result is not None:
                self._count_invalid_output(method)
                raise _InvalidOutput(
                    f"Middleware {_mw_name(method)}.process_spider_input must return None or raise an "
                    f"exception, got {_type_name(result)}"
                )
        return None

    def _process_spider_exception(self, response: Response, exception: Exception,
                                  spider: Spider) -> Iterable[Any] | None:
        """Offer ``exception`` to the exception hooks; the first iterable wins."""
        for method in self.methods["process_spider_exception"]:
            result = method(response=response, exception=exception, spider=spider)
            if result is None:
                continue
            if not _isiterable(result):
                self._count_invalid_output(method)
                raise _InvalidOutput(
                    f"Middleware {_mw_name(method)}.process_spider_exception must return None or an "
                    f"iterable, got {_type_name(result)}"
                )
            iterable: Iterable[Any] = result
            return iterable
        return None

    #: ``(plan, run)`` shortcuts for known chains of ``process_spider_output`` hooks,
    #: registered by the components package that ships those middlewares (core imports
    #: nothing above it: ``crawlfw.spidermiddlewares`` registers its default chain's,
    #: ``_default_chain.py``). ``plan(hooks)`` returns a plan or None (not that chain);
    #: ``run(plan, response, result, spider)`` does what the chain would, or returns None
    #: to take the general path.
    output_shortcuts: ClassVar[list[tuple[Callable[..., Any], Callable[..., Any]]]] = []

    #: ``(hooks, plan, run)``: a copy of the ``process_spider_output`` hooks last seen,
    #: the plan a shortcut made of them (or None) and that shortcut's ``run``.
    _output_plan: tuple[list[Callable[..., Any]], Any, Callable[..., Any] | None] = (
        [], None, None)

    @classmethod
    def register_output_shortcut(cls, plan: Callable[..., Any], run: Callable[..., Any]) -> None:
        """Offer a one-pass ``(plan, run)`` for a known chain of output hooks (see
        :attr:`output_shortcuts`); registering the same pair twice is a no-op."""
        if (plan, run) not in cls.output_shortcuts:
            cls.output_shortcuts.append((plan, run))

    def _process_spider_output(self, response: Response, result: Iterable[Any],
                               spider: Spider) -> Iterable[Any]:
        methods = self.methods["process_spider_output"]
        # A known chain (e.g. only the default middlewares, any of them disabled): one
        # generator does what their chain of generators does.
        hooks, plan, run = self._output_plan
        if hooks != methods:
            plan = run = None
            if methods:
                for plan_of, run_of in self.output_shortcuts:
                    plan = plan_of(methods)
                    if plan is not None:
                        run = run_of
                        break
            self._output_plan = (list(methods), plan, run)
        if run is not None:
            output: Iterable[Any] | None = run(plan, response, result, spider)
            if output is not None:
                return output
        for method in methods:
            result = method(response=response, result=result, spider=spider)
            if not _isiterable(result):
                self._count_invalid_output(method)
                raise _InvalidOutput(
                    f"Middleware {_mw_name(method)}.process_spider_output must return an iterable, got {_type_name(result)}"
                )
        return result

    def process_start_requests(self, start_requests: Iterable[Any],
                               spider: Spider) -> Iterable[Any]:
        """Pass the spider's start requests through each ``process_start_requests``.

        Args:
            start_requests: the iterable ``spider.start_requests()`` returned (often a
                lazy generator; the caller consumes it as the scheduler has room).
            spider: the spider.

        Returns:
            The iterable of start Requests after every middleware (descending order).

        Raises:
            _InvalidOutput: a middleware returned a non-iterable.
        """
        result = start_requests
        for method in self.methods["process_start_requests"]:
            result = method(start_requests=result, spider=spider)
            if not _isiterable(result):
                self._count_invalid_output(method)
                raise _InvalidOutput(
                    f"Middleware {_mw_name(method)}.process_start_requests must return an iterable, got {_type_name(result)}"
                )
        return result
