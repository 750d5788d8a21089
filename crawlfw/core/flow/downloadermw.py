"""Downloader middleware manager: runs ``DOWNLOADER_MIDDLEWARES`` around a download.

Synchronous counterpart of Scrapy 1.2's ``scrapy.core.downloader.middleware``. The
transfer itself is asynchronous (the downloader actor), so this manager does not
download: it exposes the three steps of Scrapy 1.2's ``download()`` chain and the
caller (the engine actor) strings them together::

    result = mwm.process_request(request, spider)        # may raise
    if result is None:            # no middleware answered: download it
        send the request to the downloader; when it finishes:
            on a Response r:  result = mwm.process_response(request, r, spider)
            on an error  e:   result = mwm.process_exception(request, e, spider)
    elif isinstance(result, Response):
        result = mwm.process_response(request, result, spider)   # as Scrapy 1.2
    # result is now a Request (schedule it), a Response (hand it to the spider
    # side), or None after process_exception (the error is unhandled: it goes to
    # the request's errback and is logged)

If ``process_request`` raises, the engine calls ``process_exception`` with that
exception (Scrapy 1.2 did: the errback of the chain caught it). If
``process_exception`` returns a Response, that Response then goes through
``process_response``. Exceptions raised by ``process_response`` or
``process_exception`` propagate to the caller, which treats them like a download
error of the request (errback; ``IgnoreRequest`` is logged at DEBUG only).

A middleware may also make a request wait: its ``process_request`` raises
:class:`RequestParked` (the robots.txt middleware does this while a host's robots.txt is
being fetched), as Scrapy 1.2's returned a Deferred. The engine must catch it **before**
the generic exception path: the request waits in the engine (no ``process_exception``,
no errback, no log, no stats; its frontier lease kept) until the middleware calls
``crawler.engine.resume_parked(request, error=None)``; then the chain goes on with the
middleware after the one that parked it (``RequestParked.resume_at``), or with
``error`` the request goes to ``process_exception``::

    try:
        result = mwm.process_request(request, spider, start)
    except RequestParked as parked:
        keep request until resumed; then process_request(request, spider,
        parked.resume_at)
    except Exception as e:
        ... process_exception(request, e, spider) ...

Order (Scrapy 1.2): ``process_request`` runs in ascending order of the
``DOWNLOADER_MIDDLEWARES`` numbers (engine side first); ``process_response`` and
``process_exception`` in descending order (downloader side first).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawlfw.http import Request, Response
from crawlfw.middleware import MiddlewareManager, component_method
from crawlfw.utils.conf import build_component_list

if TYPE_CHECKING:
    from crawlfw.settings import BaseSettings
    from crawlfw.spiders import Spider

__all__ = ["DownloaderMiddlewareManager", "RequestParked"]


class RequestParked(Exception):
    """Raised by a downloader middleware's ``process_request`` that makes the request
    wait: the engine keeps it until the middleware calls
    ``crawler.engine.resume_parked(request, error=None)`` (see the module docstring).
    Not an ``IgnoreRequest``: no errback is called.

    Args:
        message: why the request is parked (for debugging).

    Attributes:
        resume_at (int): set by :meth:`DownloaderMiddlewareManager.process_request`: the
            index of the ``process_request`` hook after the one that raised, where the
            chain goes on.
    """

    resume_at = 0


class _InvalidOutput(TypeError):
    """A middleware method returned a value of a type its contract forbids.

    Raised by the middleware managers (private, like Scrapy's ``_InvalidOutput``); it
    subclasses TypeError, and the spider manager never feeds it to
    ``process_spider_exception``.
    """


def _mw_name(method: Any) -> str:
    """``ClassName`` of a bound middleware method (Scrapy 1.2 names the class only)."""
    owner = getattr(method, "__self__", None)
    if owner is None:
        return getattr(method, "__qualname__", repr(method))
    return type(owner).__name__


def _type_name(obj: Any) -> str:
    return type(obj).__name__


class DownloaderMiddlewareManager(MiddlewareManager):
    """Holds the enabled downloader middlewares and runs their hooks in order.

    Built with ``DownloaderMiddlewareManager.from_crawler(crawler)``, which reads
    ``DOWNLOADER_MIDDLEWARES`` merged over ``DOWNLOADER_MIDDLEWARES_BASE``
    (a middleware mapped to None is disabled). Each method is synchronous and runs on
    the caller's thread (the engine actor's).
    """

    component_name = "downloader middleware"
    components_setting = "DOWNLOADER_MIDDLEWARES"

    @classmethod
    def _get_mwlist_from_settings(cls, settings: BaseSettings) -> list[Any]:
        return build_component_list(settings.getwithbase("DOWNLOADER_MIDDLEWARES"))

    def _add_middleware(self, mw: Any) -> None:
        super()._add_middleware(mw)
        if hasattr(mw, "process_request"):
            self.methods["process_request"].append(component_method(mw, "process_request"))
        if hasattr(mw, "process_response"):
            self.methods["process_response"].insert(0, component_method(mw, "process_response"))
        if hasattr(mw, "process_exception"):
            self.methods["process_exception"].insert(0, component_method(mw, "process_exception"))

    def process_request(self, request: Request, spider: Spider,
                        start: int = 0) -> Response | Request | None:
        """Run every ``process_request`` hook in order until one answers.

        Args:
            request: the ``crawlfw.http.Request`` about to be downloaded.
            spider: the spider the request belongs to.
            start: the index of the first hook to run (0; a resumed parked request:
                its ``RequestParked.resume_at``).

        Returns:
            None when every middleware returned None (download the request); else the
            first non-None result: a ``Response`` (skip the download and pass it to
            :meth:`process_response`) or a ``Request`` (schedule it instead).

        Raises:
            _InvalidOutput: a middleware returned something else.
            RequestParked: a middleware makes the request wait (``resume_at`` set).
            Exception: whatever a middleware raised (``IgnoreRequest`` typically);
                the caller passes it to :meth:`process_exception`.
        """
        methods = self.methods["process_request"]
        for method in methods[start:] if start else methods:
            try:
                result = method(request=request, spider=spider)
            except RequestParked as parked:
                parked.resume_at = methods.index(method, start) + 1
                raise
            if result is None:
                continue
            if not isinstance(result, (Response, Request)):
                self._count_invalid_output(method)
                raise _InvalidOutput(
                    f"Middleware {_mw_name(method)}.process_request must return None, Response or "
                    f"Request, got {_type_name(result)}"
                )
            return result
        return None

    def process_response(self, request: Request, response: Response | Request | None,
                         spider: Spider) -> Response | Request:
        """Run every ``process_response`` hook in reverse order.

        Args:
            request: the request that produced ``response``.
            response: the downloaded (or middleware-made) ``Response``; a ``Request``
                is returned unchanged (Scrapy 1.2 does the same).
            spider: the spider the request belongs to.

        Returns:
            The final ``Response``, or the first ``Request`` a middleware returned
            (a redirect or a retry: schedule it; later middlewares are skipped).

        Raises:
            _InvalidOutput: ``response`` is None or a middleware returned neither a
                Response nor a Request.
            Exception: whatever a middleware raised (``IgnoreRequest`` typically).
        """
        if response is None:
            raise _InvalidOutput("Received None in process_response")
        if isinstance(response, Request):
            return response
        for method in self.methods["process_response"]:
            response = method(request=request, response=response, spider=spider)
            if not isinstance(response, (Response, Request)):
                self._count_invalid_output(method)
                raise _InvalidOutput(
                    f"Middleware {_mw_name(method)}.process_response must return Response or Request, "
                    f"got {_type_name(response)}"
                )
            if isinstance(response, Request):
                return response
        return response

    def process_exception(self, request: Request, exception: BaseException,
                          spider: Spider) -> Response | Request | None:
        """Offer a download (or ``process_request``) error to each middleware.

        Args:
            request: the request whose download failed.
            exception: the exception instance (a ``crawlfw.exceptions.DownloadError``
                subclass, ``IgnoreRequest``, or anything ``process_request`` raised).
            spider: the spider the request belongs to.

        Returns:
            None when no middleware handled the error (the caller sends it to the
            request's errback); else the first non-None result: a ``Response`` (pass
            it to :meth:`process_response`) or a ``Request`` (schedule it; a retry).

        Raises:
            _InvalidOutput: a middleware returned something else.
            Exception: whatever a middleware raised.
        """
        for method in self.methods["process_exception"]:
            result = method(request=request, exception=exception, spider=spider)
            if result is None:
                continue
            if not isinstance(result, (Response, Request)):
                self._count_invalid_output(method)
                raise _InvalidOutput(
                    f"Middleware {_mw_name(method)}.process_exception must return None, Response or "
                    f"Request, got {_type_name(result)}"
                )
            return result
        return None
