"""Decorators (Scrapy's ``scrapy.utils.decorators``).

Where Scrapy's ``defers`` and ``inthread`` return a Twisted Deferred, crawlfw's return a
``concurrent.futures.Future``: ``future.result()`` blocks for the value, and
``await crawlfw.utils.defer.maybe_deferred_to_future(future)`` waits for it in
``async def`` code, as Scrapy's ``maybe_deferred_to_future(deferred)`` does.
"""

import concurrent.futures
import functools
import threading
import warnings

from crawlfw.exceptions import CrawlfwDeprecationWarning

__all__ = ["deprecated", "defers", "inthread"]


def deprecated(use_instead=None):
    """Mark a function deprecated: each call warns with ``CrawlfwDeprecationWarning``.

    Use as ``@deprecated``, ``@deprecated()`` or ``@deprecated("new_function")``.

    Args:
        use_instead: the name of the replacement, named in the warning (or the function
            itself when used as ``@deprecated`` without parentheses).

    Returns:
        The decorator, or the wrapped function for the bare ``@deprecated`` form.
    """

    def deco(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            message = f"Call to deprecated function {func.__name__}."
            if use_instead:
                message += f" Use {use_instead} instead."
            warnings.warn(message, category=CrawlfwDeprecationWarning, stacklevel=2)
            return func(*args, **kwargs)

        return wrapped

    if callable(use_instead):
        func, use_instead = use_instead, None
        return deco(func)
    return deco


def defers(func):
    """Make ``func`` always return a future (deprecated, as in Scrapy 2.19).

    Calling the wrapped function calls ``func`` at once: its result, or the exception
    it raised, is given as a done ``concurrent.futures.Future``; a future or other
    awaitable it returns is returned as is (Scrapy's ``maybeDeferred``).

    Args:
        func: any callable.

    Returns:
        The wrapped function. Decorating warns with ``CrawlfwDeprecationWarning``.
    """
    warnings.warn("@defers is deprecated, call the function directly instead",
                  category=CrawlfwDeprecationWarning, stacklevel=2)
    from crawlfw.utils.defer import _as_future, _done

    @functools.wraps(func)
    def wrapped(*a, **kw):
        try:
            result = func(*a, **kw)
        except Exception as exc:
            return _done(error=exc)
        return _as_future(result)

    return wrapped


_INTHREAD_POOL = None
_INTHREAD_LOCK = threading.Lock()
#: Threads :func:`inthread` runs functions on at most (Scrapy: the reactor's thread pool,
#: ``REACTOR_THREADPOOL_MAXSIZE``, 10 by default).
INTHREAD_MAX_WORKERS = 10


def _inthread_pool() -> concurrent.futures.ThreadPoolExecutor:
    global _INTHREAD_POOL
    with _INTHREAD_LOCK:
        if _INTHREAD_POOL is None:
            _INTHREAD_POOL = concurrent.futures.ThreadPoolExecutor(
                max_workers=INTHREAD_MAX_WORKERS, thread_name_prefix="crawlfw-inthread")
        return _INTHREAD_POOL


def inthread(func):
    """Make ``func`` run on a worker thread: calling the wrapped function returns at
    once a ``concurrent.futures.Future`` of its result (Scrapy: a Deferred).

    The threads (at most :data:`INTHREAD_MAX_WORKERS`, named ``crawlfw-inthread_N``)
    are shared by every ``@inthread`` function of the process. The exception ``func``
    raises is the future's ``exception()``.

    Args:
        func: a callable that may block (a file store, a database call).

    Returns:
        The wrapped function.
    """

    @functools.wraps(func)
    def wrapped(*a, **kw):
        return _inthread_pool().submit(func, *a, **kw)

    return wrapped
