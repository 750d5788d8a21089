"""asyncio helpers of Scrapy 2 (``scrapy.utils.asyncio``), for crawlfw's threads.

crawlfw always runs coroutines on asyncio event loops (each actor thread has its own,
``crawlfw/spiders/_async.py``), so :func:`is_asyncio_available` is True. But a thread's
loop runs only while one of its coroutines does: a call scheduled with
:func:`call_later` or an :class:`AsyncioLoopingCall` started from plain (not ``async``)
code, an extension's ``spider_opened`` handler for one, runs on a timer thread instead,
so it still happens on time.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

__all__ = [
    "AsyncioLoopingCall",
    "CallLaterResult",
    "call_later",
    "create_looping_call",
    "is_asyncio_available",
    "run_in_thread",
    "sleep",
]

logger = logging.getLogger(__name__)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def is_asyncio_available() -> bool:
    """True: asyncio code (``asyncio.sleep``, awaiting ``asyncio`` futures) works in
    spiders and components: crawlfw runs their coroutines on asyncio event loops."""
    return True


class CallLaterResult:
    """What :func:`call_later` returns: ``cancel()`` the pending call (nothing happens
    when it already ran or was cancelled).

    Made with :meth:`from_asyncio` (an ``asyncio.TimerHandle``) or
    :meth:`from_twisted` (any object with ``cancel()`` and, optionally, ``active()``:
    a ``threading.Timer`` here, a Twisted ``DelayedCall`` in Scrapy).
    """

    _timer_handle: asyncio.TimerHandle | None = None
    _delayed_call: Any = None

    @classmethod
    def from_asyncio(cls, timer_handle: asyncio.TimerHandle) -> CallLaterResult:
        o = cls()
        o._timer_handle = timer_handle
        return o

    @classmethod
    def from_twisted(cls, delayed_call: Any) -> CallLaterResult:
        o = cls()
        o._delayed_call = delayed_call
        return o

    def cancel(self) -> None:
        """Cancel the call if it is still pending."""
        if self._timer_handle is not None:
            self._timer_handle.cancel()
            self._timer_handle = None
        elif self._delayed_call is not None:
            active = getattr(self._delayed_call, "active", None)
            if active is None or active():
                self._delayed_call.cancel()
            self._delayed_call = None


def call_later(delay: float, func: Callable[..., object], *args: Any) -> CallLaterResult:
    """Call ``func(*args)`` in ``delay`` seconds: on the running event loop when called
    from a coroutine, else on a timer thread.

    Returns:
        CallLaterResult: to cancel the call.
    """
    loop = _running_loop()
    if loop is not None:
        return CallLaterResult.from_asyncio(loop.call_later(delay, func, *args))
    timer = threading.Timer(delay, func, args)
    timer.daemon = True
    timer.start()
    return CallLaterResult.from_twisted(timer)


class AsyncioLoopingCall:
    """Call a function every ``interval`` seconds (Twisted's ``LoopingCall``
    interface: ``start(interval, now=True)``, ``stop()``, ``running``).

    Calls keep to the schedule (every ``interval`` seconds from ``start``), whatever
    each call takes; a call still running when the next is due makes that one skipped.
    Started from a coroutine the calls run on that event loop, else on a thread of
    their own. An exception raised by the function is logged and stops the calls; the
    function must not return a coroutine (``TypeError``).

    Args:
        func: the function; ``*args`` and ``**kwargs`` are passed to it.
    """

    def __init__(self, func: Callable[..., Any], *args: Any, **kwargs: Any):
        self._func = func
        self._args = args
        self._kwargs = kwargs
        self._task: asyncio.Task | None = None
        self._thread_stop: threading.Event | None = None
        self.interval: float | None = None
        self._start_time: float | None = None

    @property
    def running(self) -> bool:
        return self._start_time is not None

    def start(self, interval: float, now: bool = True) -> None:
        """Start calling the function every ``interval`` seconds (and at once if ``now``).

        Raises:
            RuntimeError: already running.
            ValueError: ``interval`` is not > 0.
        """
        if self.running:
            raise RuntimeError("AsyncioLoopingCall already running")
        if interval <= 0:
            raise ValueError("Interval must be greater than 0")
        self.interval = interval
        self._start_time = time.monotonic()
        if now:
            self._call()
            if not self.running:
                return
        loop = _running_loop()
        if loop is not None:
            self._task = loop.create_task(self._loop())
        else:
            stop = self._thread_stop = threading.Event()
            thread = threading.Thread(target=self._thread_loop, args=(stop,), daemon=True,
                                      name="crawlfw-looping-call")
            thread.start()

    def _to_sleep(self) -> float:
        assert self.interval is not None and self._start_time is not None
        running_for = time.monotonic() - self._start_time
        return self.interval - (running_for % self.interval)

    async def _loop(self) -> None:
        while self.running:
            await asyncio.sleep(self._to_sleep())
            if self.running:
                self._call()

    def _thread_loop(self, stop: threading.Event) -> None:
        while self.running and not stop.wait(self._to_sleep()):
            if self.running:
                self._call()

    def stop(self) -> None:
        """Stop the calls."""
        self.interval = self._start_time = None
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self._thread_stop is not None:
            self._thread_stop.set()
            self._thread_stop = None

    def _call(self) -> None:
        try:
            result = self._func(*self._args, **self._kwargs)
        except Exception:
            logger.exception("Error calling the AsyncioLoopingCall function")
            self.stop()
            return
        if isinstance(result, Coroutine):
            result.close()
            self.stop()
            raise TypeError("The AsyncioLoopingCall function must not return a coroutine "
                            "or a Deferred")


def create_looping_call(func: Callable[..., Any], *args: Any, **kwargs: Any
                        ) -> AsyncioLoopingCall:
    """An :class:`AsyncioLoopingCall` of ``func`` (Scrapy gives Twisted's
    ``LoopingCall`` without asyncio; crawlfw always has asyncio)."""
    return AsyncioLoopingCall(func, *args, **kwargs)


async def sleep(seconds: float) -> None:
    """``await asyncio.sleep(seconds)``."""
    await asyncio.sleep(seconds)


async def run_in_thread(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``func(*args, **kwargs)`` in another thread and return its result
    (``asyncio.to_thread``)."""
    return await asyncio.to_thread(func, *args, **kwargs)
