"""Scrapy 2's ``scrapy.utils.defer`` helpers, working on what crawlfw's components return.

Scrapy's components return Twisted ``Deferred`` objects; crawlfw's return their results
directly (``crawler.engine.download(request)`` returns the ``Response`` in an item
pipeline), or coroutines, ``asyncio`` futures (``crawler.engine.download(request)`` in an
``async def`` spider callback), ``concurrent.futures.Future`` objects. These helpers
accept all of them, so code written for Scrapy's asyncio reactor runs unchanged::

    response = await maybe_deferred_to_future(self.crawler.engine.download(request))

Where Scrapy returns a Deferred that has already fired (``process_chain``,
``defer_succeed``...), crawlfw returns a ``concurrent.futures.Future`` holding the same
result (its ``result()`` gives it, ``await ensure_awaitable(f)`` too). A Twisted
``Deferred`` itself cannot be waited for here (no reactor fires it): passing one raises
``TypeError`` naming the helper and what to do instead.

Nothing here imports Twisted (:func:`deferred_from_coro` only uses one already
running: a project's tests under pytest-twisted).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import sys
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from typing import Any

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.utils.failure import Failure

__all__ = [
    "aiter_errback",
    "defer_fail",
    "defer_result",
    "defer_succeed",
    "deferred_f_from_coro_f",
    "deferred_from_coro",
    "deferred_to_future",
    "ensure_awaitable",
    "iter_errback",
    "maybeDeferred_coro",
    "maybe_deferred_to_future",
    "mustbe_deferred",
    "parallel",
    "parallel_async",
    "process_chain",
    "process_chain_both",
    "process_parallel",
]


def _is_twisted_deferred(obj: Any) -> bool:
    cls = type(obj)
    return cls.__name__ == "Deferred" and cls.__module__.startswith("twisted.")


def _refuse_deferred(api: str, obj: Any) -> None:
    if _is_twisted_deferred(obj):
        raise TypeError(
            f"crawlfw.utils.defer.{api}() was given a Twisted Deferred, which nothing "
            f"fires in crawlfw (it has no Twisted reactor). Return a coroutine (async "
            f"def), an asyncio future or the result itself instead: crawlfw's components "
            f"return results directly (engine.download() returns the Response)")


def _done(result: Any = None, error: BaseException | None = None) -> concurrent.futures.Future:
    future: concurrent.futures.Future = concurrent.futures.Future()
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
    return future


def _exception_of(failure: Any) -> BaseException:
    if isinstance(failure, BaseException):
        return failure
    value = getattr(failure, "value", None)
    if isinstance(value, BaseException):
        return value
    raise TypeError(f"expected a Failure or an exception, got {type(failure).__name__}")


def _deprecated(name: str, instead: str) -> None:
    warnings.warn(f"crawlfw.utils.defer.{name}() is deprecated (as in Scrapy 2.19), {instead}",
                  CrawlfwDeprecationWarning, stacklevel=3)


def defer_fail(_failure: Any) -> concurrent.futures.Future:
    """A future failed with ``_failure``'s exception (Scrapy: a Deferred that errbacks).

    Args:
        _failure: a :class:`~crawlfw.utils.failure.Failure` or an exception.

    Returns:
        concurrent.futures.Future: done, its ``exception()`` the failure's value.
    """
    _deprecated("defer_fail", "raise the exception instead")
    return _done(error=_exception_of(_failure))


def defer_succeed(result: Any) -> concurrent.futures.Future:
    """A future done with ``result`` (Scrapy: a Deferred that fires with it)."""
    _deprecated("defer_succeed", "return the result instead")
    return _done(result)


def defer_result(result: Any) -> Any:
    """``result`` as a future: a future or awaitable is returned as is, a
    :class:`~crawlfw.utils.failure.Failure` becomes a failed future, anything else a
    future done with it."""
    _deprecated("defer_result", "return the result instead")
    return _as_future(result)


def _as_future(result: Any) -> Any:
    _refuse_deferred("defer_result", result)
    if isinstance(result, (concurrent.futures.Future, asyncio.Future)) or inspect.isawaitable(
            result):
        return result
    if isinstance(result, Failure):
        return _done(error=result.value)
    return _done(result)


def mustbe_deferred(f: Callable, *args: Any, **kw: Any) -> Any:
    """Call ``f(*args, **kw)`` and give its result, or the exception it raised, as a
    future (a future or awaitable it returns is returned as is)."""
    _deprecated("mustbe_deferred", "call the function instead")
    try:
        result = f(*args, **kw)
    except Exception as exc:
        return _done(error=exc)
    return _as_future(result)


def _run_to_end(awaitable: Awaitable) -> Any:
    """Run an awaitable to completion on the calling thread (no loop running there)."""
    from crawlfw.spiders._async import run_coroutine

    async def wrapper():
        return await awaitable

    return run_coroutine(wrapper())


def parallel(iterable: Iterable, count: int, callable: Callable, *args: Any,  # noqa: A002
             **named: Any) -> concurrent.futures.Future:
    """Call ``callable(elem, *args, **named)`` for each element of ``iterable``, at most
    ``count`` calls at a time (in a pool of ``count`` threads; a coroutine a call
    returns is run to completion on its thread).

    Args:
        iterable: the elements.
        count: most calls running at once (>= 1).
        callable: the function to call.

    Returns:
        concurrent.futures.Future: done when every call is; its result is the list of
        ``(True, result)`` of the calls, in the order of ``iterable`` (Scrapy's
        ``DeferredList`` gives one ``(True, ...)`` per worker instead). The first
        exception a call raises fails it.
    """
    if count < 1:
        raise ValueError(f"parallel(): count must be >= 1, got {count!r}")

    def call(elem):
        result = callable(elem, *args, **named)
        _refuse_deferred("parallel", result)
        if inspect.isawaitable(result):
            result = _run_to_end(result)
        return (True, result)

    outcome: concurrent.futures.Future = concurrent.futures.Future()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=count,
                                                 thread_name_prefix="crawlfw-parallel")
    futures = [pool.submit(call, elem) for elem in iterable]

    def gather():
        try:
            outcome.set_result([f.result() for f in futures])
        except BaseException as exc:  # the first failing call fails the whole
            outcome.set_exception(exc)

    if futures:
        pool.submit(gather)  # queued after every call: it waits for none still queued
    else:
        outcome.set_result([])
    pool.shutdown(wait=False)
    return outcome


async def _parallel_async(async_iterable, count, callable, args, named):  # noqa: A002
    iterator = aiter(async_iterable)
    lock = asyncio.Lock()  # an async generator cannot be stepped by two tasks at once

    async def worker():
        while True:
            async with lock:
                try:
                    elem = await anext(iterator)
                except StopAsyncIteration:
                    return (True, None)
            result = callable(elem, *args, **named)
            _refuse_deferred("parallel_async", result)
            if inspect.isawaitable(result):
                await result

    return list(await asyncio.gather(*(worker() for _ in range(count))))


def parallel_async(async_iterable: AsyncIterator, count: int, callable: Callable,  # noqa: A002
                   *args: Any, **named: Any) -> Awaitable[list]:
    """Like :func:`parallel`, for an async iterable: ``count`` workers on the running
    event loop each take the next element and await ``callable(elem, *args, **named)``
    when it returns an awaitable.

    Returns:
        An awaitable (a coroutine) whose result is ``count`` times ``(True, None)``, one
        per worker, as Scrapy's ``DeferredList`` gives.
    """
    if count < 1:
        raise ValueError(f"parallel_async(): count must be >= 1, got {count!r}")
    return _parallel_async(async_iterable, count, callable, args, named)


def process_chain(callbacks: Iterable[Callable], input: Any, *a: Any,  # noqa: A002
                  **kw: Any) -> concurrent.futures.Future:
    """Pass ``input`` through ``callbacks`` in turn (each gets the previous one's result,
    then ``*a, **kw``).

    Returns:
        concurrent.futures.Future: done with the last result, or failed with the first
        exception raised.
    """
    _deprecated("process_chain", "call the functions instead")
    result = input
    try:
        for callback in callbacks:
            result = callback(result, *a, **kw)
    except Exception as exc:
        return _done(error=exc)
    return _done(result)


def process_chain_both(callbacks: Iterable[Callable], errbacks: Iterable[Callable],
                       input: Any, *a: Any, **kw: Any) -> concurrent.futures.Future:  # noqa: A002
    """Scrapy 1.2's callback/errback chain: for each ``(callback, errback)`` pair, a
    result goes to the callback, a failure (an exception raised before, or ``input``
    being a :class:`~crawlfw.utils.failure.Failure`) to the errback as a ``Failure``;
    what either returns goes on (an exception raised becomes the failure).

    Returns:
        concurrent.futures.Future: done with the last result, or failed with the
        failure left at the end.
    """
    result: Any = input
    failed = isinstance(input, Failure)
    for callback, errback in zip(callbacks, errbacks, strict=False):
        try:
            result = errback(result, *a, **kw) if failed else callback(result, *a, **kw)
            failed = isinstance(result, Failure)
        except Exception as exc:
            result, failed = Failure(exc), True
    return _done(error=result.value) if failed else _done(result)


def process_parallel(callbacks: Iterable[Callable], input: Any, *a: Any,  # noqa: A002
                     **kw: Any) -> concurrent.futures.Future:
    """Call every callback with ``input`` (then ``*a, **kw``).

    Returns:
        concurrent.futures.Future: done with the list of their results, or failed with
        the first exception raised.
    """
    _deprecated("process_parallel", "call the functions instead")
    try:
        return _done([callback(input, *a, **kw) for callback in callbacks])
    except Exception as exc:
        return _done(error=exc)


def iter_errback(iterable: Iterable, errback: Callable, *a: Any, **kw: Any) -> Iterator:
    """Iterate ``iterable``; an exception raised while doing so is passed to
    ``errback(failure, *a, **kw)`` (a :class:`~crawlfw.utils.failure.Failure`) and
    the iteration goes on, as in Scrapy (a generator that raised has ended)."""
    it = iter(iterable)
    while True:
        try:
            yield next(it)
        except StopIteration:
            break
        except Exception as exc:
            errback(Failure(exc), *a, **kw)


async def aiter_errback(aiterable: AsyncIterator, errback: Callable, *a: Any,
                        **kw: Any) -> AsyncIterator:
    """:func:`iter_errback` for an async iterable."""
    it = aiter(aiterable)
    while True:
        try:
            yield await anext(it)
        except StopAsyncIteration:
            break
        except Exception as exc:
            errback(Failure(exc), *a, **kw)


def deferred_from_coro(o: Any) -> Any:
    """Start a coroutine (or other awaitable) and return what stands for its result;
    anything else is returned as is.

    With an event loop running on the calling thread (in ``async def`` code), the
    awaitable is scheduled on it and an ``asyncio`` future (a Task) is returned; when
    that loop is the one of a Twisted asyncio reactor running in the process (a
    project's tests under pytest-twisted ``--reactor=asyncio``, whose ``async def``
    tests Twisted drives), the Task is returned wrapped in a Twisted ``Deferred``, as
    Scrapy's is, so that those tests can ``await`` it (Twisted is not imported here: it
    is only used when the process has it running). Without a running loop, the
    awaitable is run to completion now on the thread's own loop and a done
    ``concurrent.futures.Future`` is returned (Scrapy's reactor would run it later).

    Raises:
        TypeError: ``o`` is a Twisted Deferred.
    """
    _refuse_deferred("deferred_from_coro", o)
    if isinstance(o, (asyncio.Future, concurrent.futures.Future)):
        return o
    if not inspect.isawaitable(o):
        return o
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        try:
            return _done(_run_to_end(o))
        except Exception as exc:
            return _done(error=exc)
    task = asyncio.ensure_future(o)
    return _in_running_twisted_reactor(task, loop) or task


def _in_running_twisted_reactor(future: asyncio.Future, loop: Any) -> Any:
    """``Deferred.fromFuture(future)`` when a Twisted asyncio reactor that runs ``loop``
    is running in this process (its modules already imported), else None."""
    reactor = sys.modules.get("twisted.internet.reactor")
    defer = sys.modules.get("twisted.internet.defer")
    if (reactor is None or defer is None or not getattr(reactor, "running", False)
            or getattr(reactor, "_asyncioEventloop", None) is not loop):
        return None
    return defer.Deferred.fromFuture(future)


def deferred_f_from_coro_f(coro_f: Callable) -> Callable:
    """Wrap a coroutine function so that calling it gives :func:`deferred_from_coro` of
    its coroutine."""

    @functools.wraps(coro_f)
    def f(*coro_args: Any, **coro_kwargs: Any) -> Any:
        return deferred_from_coro(coro_f(*coro_args, **coro_kwargs))

    return f


def maybeDeferred_coro(f: Callable, *args: Any, **kw: Any) -> Any:  # noqa: N802
    """Call ``f`` and give its result as a future: a coroutine through
    :func:`deferred_from_coro`, an exception raised as a failed future."""
    _deprecated("maybeDeferred_coro", "await the function's coroutine instead")
    try:
        result = f(*args, **kw)
    except Exception as exc:
        return _done(error=exc)
    if inspect.isawaitable(result):
        return deferred_from_coro(result)
    return _as_future(result)


def deferred_to_future(d: Any) -> asyncio.Future:
    """An ``asyncio`` future of the calling thread's running loop for ``d``, to
    ``await`` from a coroutine.

    Args:
        d: a coroutine or other awaitable, an ``asyncio`` or ``concurrent.futures``
            future, or a plain result (what crawlfw's components return where Scrapy's
            return a Deferred: the future is then done with it).

    Returns:
        asyncio.Future: resolves to ``d``'s result.

    Raises:
        RuntimeError: no event loop runs on the calling thread (call it from ``async
            def`` code, as Scrapy requires).
        TypeError: ``d`` is a Twisted Deferred.
    """
    _refuse_deferred("deferred_to_future", d)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(
            "deferred_to_future() requires a running asyncio event loop: call it from "
            "an async def callback or component method") from None
    if isinstance(d, concurrent.futures.Future):
        return asyncio.wrap_future(d, loop=loop)
    if inspect.isawaitable(d):
        return asyncio.ensure_future(d, loop=loop)
    future = loop.create_future()
    future.set_result(d)
    return future


def maybe_deferred_to_future(d: Any) -> asyncio.Future:
    """:func:`deferred_to_future`: crawlfw always runs coroutines on asyncio loops
    (Scrapy's asyncio reactor case), so ``d`` is always made an ``asyncio`` future."""
    _refuse_deferred("maybe_deferred_to_future", d)
    return deferred_to_future(d)


def ensure_awaitable(o: Any, _warn: str | None = None) -> Awaitable:
    """Make ``o`` awaitable: an awaitable is returned as is, a
    ``concurrent.futures.Future`` is wrapped for the running loop, anything else
    becomes a coroutine that returns it.

    Args:
        o: any value.
        _warn: when given, the name of the function ``o`` came from: a Twisted
            Deferred is then refused naming it.

    Raises:
        TypeError: ``o`` is a Twisted Deferred.
    """
    if _is_twisted_deferred(o):
        api = f"ensure_awaitable (for {_warn})" if _warn else "ensure_awaitable"
        _refuse_deferred(api, o)
    if inspect.isawaitable(o):
        return o
    if isinstance(o, concurrent.futures.Future):
        return asyncio.wrap_future(o)

    async def coro():
        return o

    return coro()
