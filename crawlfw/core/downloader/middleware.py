"""Scrapy's public path ``scrapy.core.downloader.middleware``: the downloader middleware
manager a project's tests build by hand.

A crawl runs its downloader middlewares in the Engine actor, through
:class:`crawlfw.core.flow.downloadermw.DownloaderMiddlewareManager` (one step at a time,
the transfer in between done by a downloader actor). This subclass adds Scrapy 2.19's
whole-chain API on top of it, for code outside a crawl: ``download_async(download_func,
request)`` runs every ``process_request`` hook, then ``download_func`` when none
answered, then ``process_response`` (or ``process_exception`` on an error), awaiting
hooks that are coroutines::

    manager = DownloaderMiddlewareManager.from_crawler(crawler)
    response = await manager.download_async(fetch, request)   # fetch: async (request)

The hooks run in the crawl's order and with its rules (a ``spider`` argument is passed
only to hooks that take one: ``crawler.spider``).
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any

from crawlfw.core.flow.downloadermw import DownloaderMiddlewareManager as _FlowManager
from crawlfw.core.flow.downloadermw import RequestParked, _InvalidOutput, _mw_name
from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.http import Request, Response
from crawlfw.middleware import _takes_spider
from crawlfw.utils.defer import deferred_from_coro, ensure_awaitable

__all__ = ["DownloaderMiddlewareManager"]


class DownloaderMiddlewareManager(_FlowManager):
    """The enabled downloader middlewares (``DOWNLOADER_MIDDLEWARES`` merged over
    ``DOWNLOADER_MIDDLEWARES_BASE``), with the crawl's step methods
    (``process_request``/``process_response``/``process_exception``, see
    :class:`crawlfw.core.flow.downloadermw.DownloaderMiddlewareManager`) and Scrapy
    2.19's :meth:`download_async` and :meth:`download`.

    Args:
        *middlewares: the middleware instances, in ``process_request`` order.
        crawler: the :class:`~crawlfw.crawler.Crawler` (``from_crawler`` passes it); its
            ``spider`` is what hooks taking a ``spider`` argument get.
    """

    def __init__(self, *middlewares: Any, crawler: Any = None) -> None:
        self._compat_spider: Any = None
        #: hook name -> [(the middleware's own method, whether it takes ``spider``)]
        self._hooks: defaultdict[str, list[tuple[Callable[..., Any], bool]]] = \
            defaultdict(list)
        super().__init__(*middlewares, crawler=crawler)

    def _add_middleware(self, mw: Any) -> None:
        super()._add_middleware(mw)
        for name in ("process_request", "process_response", "process_exception"):
            method = getattr(mw, name, None)
            if method is None:
                continue
            entry = (method, _takes_spider(method, name))
            if name == "process_request":
                self._hooks[name].append(entry)
            else:
                self._hooks[name].insert(0, entry)

    @property
    def _spider(self) -> Any:
        spider = getattr(self.crawler, "spider", None)
        return spider if spider is not None else self._compat_spider

    async def _call(self, method: Callable[..., Any], takes_spider: bool,
                    **kwargs: Any) -> Any:
        if takes_spider:
            kwargs["spider"] = self._spider
        return await ensure_awaitable(method(**kwargs), _warn=_mw_name(method))

    async def download_async(self, download_func: Callable[[Request], Awaitable[Response]],
                             request: Request) -> Response | Request:
        """Run ``request`` through the middlewares and ``download_func`` (Scrapy 2.19).

        Args:
            download_func: ``async def (request) -> Response`` (or a function returning
                a Response): called when no ``process_request`` hook answered.
            request: the :class:`~crawlfw.http.Request`.

        Returns:
            The ``Response`` after every ``process_response`` hook, or the ``Request``
            a hook returned instead (a redirect, a retry: not followed here).

        Raises:
            Exception: the download's or a hook's error that no ``process_exception``
                hook turned into a Response or Request; ``TypeError`` (crawlfw's
                ``_InvalidOutput``) for a hook returning a value of the wrong type.
            RequestParked: a middleware makes the request wait for something only a
                crawl's engine resumes (crawlfw's robots.txt middleware, on a host
                whose robots.txt it has not read).
        """
        try:
            result = await self._process_request_async(request, download_func)
        except RequestParked:
            raise
        except Exception as exc:  # noqa: BLE001 (offered to process_exception, re-raised)
            result = await self._process_exception_async(exc, request)
        return await self._process_response_async(result, request)

    async def _process_request_async(self, request: Request,
                                     download_func: Callable[..., Any]) -> Response | Request:
        for method, takes_spider in self._hooks["process_request"]:
            result = await self._call(method, takes_spider, request=request)
            if result is None:
                continue
            if not isinstance(result, (Response, Request)):
                raise _InvalidOutput(
                    f"Middleware {_mw_name(method)}.process_request must return None, "
                    f"Response or Request, got {type(result).__name__}")
            return result
        downloaded: Response | Request = await ensure_awaitable(download_func(request))
        return downloaded

    async def _process_response_async(self, response: Any,
                                      request: Request) -> Response | Request:
        if response is None:
            raise _InvalidOutput("Received None in process_response")
        if isinstance(response, Request):
            return response
        for method, takes_spider in self._hooks["process_response"]:
            response = await self._call(method, takes_spider, request=request,
                                        response=response)
            if not isinstance(response, (Response, Request)):
                raise _InvalidOutput(
                    f"Middleware {_mw_name(method)}.process_response must return Response "
                    f"or Request, got {type(response).__name__}")
            if isinstance(response, Request):
                return response
        final: Response = response
        return final

    async def _process_exception_async(self, exception: Exception,
                                       request: Request) -> Response | Request:
        for method, takes_spider in self._hooks["process_exception"]:
            result = await self._call(method, takes_spider, request=request,
                                      exception=exception)
            if result is None:
                continue
            if not isinstance(result, (Response, Request)):
                raise _InvalidOutput(
                    f"Middleware {_mw_name(method)}.process_exception must return None, "
                    f"Response or Request, got {type(result).__name__}")
            return result
        raise exception

    def download(self, download_func: Callable[..., Any], request: Request,
                 spider: Any) -> Any:
        """Deprecated (as in Scrapy 2.19): :meth:`download_async` with
        ``download_func(request, spider)``, which may return a Response, a coroutine or
        a future.

        Returns:
            An ``asyncio`` Task when an event loop runs on this thread, else a done
            ``concurrent.futures.Future`` (:func:`crawlfw.utils.defer.deferred_from_coro`:
            what stands for Scrapy's Deferred), giving the Response or Request.

        Raises:
            RuntimeError: ``spider`` is not the spider an earlier call was given.
        """
        warnings.warn(
            "DownloaderMiddlewareManager.download() is deprecated, use download_async() "
            "instead", CrawlfwDeprecationWarning, stacklevel=2)
        if self.crawler is None and spider is not None:
            if self._compat_spider is None:
                self._compat_spider = spider
            elif self._compat_spider is not spider:
                raise RuntimeError(
                    f"Different instances of Spider were passed to {type(self).__name__}: "
                    f"{self._compat_spider} and {spider}")

        async def download_func_wrapped(request: Request) -> Any:
            return await ensure_awaitable(download_func(request, spider))

        return deferred_from_coro(self.download_async(download_func_wrapped, request))
