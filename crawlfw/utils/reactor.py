"""Scrapy 2's ``scrapy.utils.reactor``, with the meaning it can have without Twisted.

crawlfw has no Twisted reactor: its actors are threads, and the coroutines of spiders and
components run on an asyncio event loop of their thread's own (``crawlfw/spiders/_async.py``).
That is what Scrapy calls running with the asyncio reactor, so:

- :func:`install_reactor` with the asyncio reactor's path
  (``twisted.internet.asyncioreactor.AsyncioSelectorReactor``, Scrapy's default
  ``TWISTED_REACTOR``) is accepted silently; any other reactor gets one WARNING saying it
  is not used (crawlfw goes on as with the asyncio reactor).
- :func:`is_asyncio_reactor_installed` and :func:`is_reactor_installed` answer True.
- :func:`verify_installed_reactor` accepts the asyncio reactor's path and raises
  ``RuntimeError`` for another, as Scrapy does when the installed reactor differs.
- :func:`listen_tcp` needs a Twisted protocol factory: it raises ``NotSupported``
  saying so.

Nothing here imports Twisted.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import warnings
from typing import Any

from crawlfw.exceptions import NotSupported
from crawlfw.utils.misc import load_object

__all__ = [
    "ASYNCIO_REACTOR",
    "CallLaterOnce",
    "install_reactor",
    "is_asyncio_reactor_installed",
    "is_reactor_installed",
    "listen_tcp",
    "set_asyncio_event_loop",
    "set_asyncio_event_loop_policy",
    "verify_installed_asyncio_event_loop",
    "verify_installed_reactor",
    "warn_unused_reactor",
]

logger = logging.getLogger(__name__)

#: The import path of Twisted's asyncio reactor: Scrapy's default ``TWISTED_REACTOR``,
#: the one crawlfw behaves as.
ASYNCIO_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"

_warned: set[str] = set()  # reactor paths warned about in this process


def _is_asyncio_reactor(reactor_path: str | None) -> bool:
    return reactor_path in (None, "", ASYNCIO_REACTOR)


def warn_unused_reactor(reactor_path: str | None, source: str = "install_reactor()") -> bool:
    """Log one WARNING (once per path and process) when ``reactor_path`` is not the
    asyncio reactor's.

    Args:
        reactor_path: a Twisted reactor's import path (a ``TWISTED_REACTOR`` value),
            or None.
        source: what asked for it, named in the message (``"TWISTED_REACTOR"``...).

    Returns:
        bool: True if a warning was logged by this call.
    """
    if _is_asyncio_reactor(reactor_path) or reactor_path in _warned:
        return False
    _warned.add(str(reactor_path))
    logger.warning(
        "%s: the Twisted reactor %s is not used: crawlfw has no Twisted reactor; it runs "
        "coroutines on asyncio event loops, as Scrapy does with %s", source, reactor_path,
        ASYNCIO_REACTOR)
    return True


def install_reactor(reactor_path: str, event_loop_path: str | None = None) -> None:
    """Accept Scrapy's request to install a Twisted reactor.

    The asyncio reactor's path is accepted silently (crawlfw already behaves as with it);
    another reactor gets one WARNING and is not installed. ``event_loop_path``, when
    given, must name an asyncio event loop class (it is loaded, so a typo fails here);
    crawlfw's actor threads make their loops themselves, with asyncio's default class.

    Args:
        reactor_path: import path of a Twisted reactor class.
        event_loop_path: import path of an asyncio event loop class, or None.

    Raises:
        ImportError, NameError, ValueError: ``event_loop_path`` cannot be loaded
            (:func:`crawlfw.utils.misc.load_object`'s errors).
    """
    if event_loop_path is not None:
        load_object(event_loop_path)
    warn_unused_reactor(reactor_path)


def is_reactor_installed() -> bool:
    """True: crawlfw's event machinery (actor threads, their asyncio loops) is always
    ready, as if a reactor were installed."""
    return True


def is_asyncio_reactor_installed() -> bool:
    """True: crawlfw runs coroutines on asyncio event loops, so code written for
    Scrapy's asyncio reactor (``asyncio`` futures, ``await`` anywhere) works."""
    return True


def verify_installed_reactor(reactor_path: str) -> None:
    """Check that the reactor in use is ``reactor_path``, as Scrapy does.

    Args:
        reactor_path: import path of a Twisted reactor class.

    Raises:
        RuntimeError: ``reactor_path`` is not the asyncio reactor's, the only one
            crawlfw behaves as.
    """
    if not _is_asyncio_reactor(reactor_path):
        raise RuntimeError(
            f"The installed reactor ({ASYNCIO_REACTOR}: crawlfw runs on asyncio event "
            f"loops, without Twisted) does not match the requested one ({reactor_path})")


def _default_loop_class() -> type:
    loop = asyncio.new_event_loop()
    try:
        return type(loop)
    finally:
        loop.close()


def verify_installed_asyncio_event_loop(loop_path: str) -> None:
    """Check that crawlfw's event loops are of the class ``loop_path`` names.

    Args:
        loop_path: import path of an asyncio event loop class.

    Raises:
        RuntimeError: crawlfw's loops (asyncio's default class, or the class the calling
            thread's current loop has) are of another class.
    """
    wanted = load_object(loop_path)
    try:
        current = type(asyncio.get_running_loop())
    except RuntimeError:
        current = _default_loop_class()
    if not issubclass(current, wanted):
        raise RuntimeError(
            f"Scrapy found an asyncio Twisted reactor already installed, and its event "
            f"loop class ({current.__module__}.{current.__qualname__}) does not match the "
            f"one specified in the ASYNCIO_EVENT_LOOP setting ({loop_path})")


def set_asyncio_event_loop_policy() -> None:
    """On Windows, use the selector event loop policy (as Scrapy does, for Twisted);
    elsewhere nothing changes."""
    if sys.platform != "win32":
        return
    policy = asyncio.get_event_loop_policy()
    selector_policy = getattr(asyncio, "WindowsSelectorEventLoopPolicy", None)
    if selector_policy is not None and not isinstance(policy, selector_policy):
        asyncio.set_event_loop_policy(selector_policy())


def set_asyncio_event_loop(event_loop_path: str | None) -> asyncio.AbstractEventLoop:
    """Make and set the calling thread's current event loop, as Scrapy does.

    Args:
        event_loop_path: import path of an asyncio event loop class, or None for the
            thread's current loop (a new default one when it has none).

    Returns:
        asyncio.AbstractEventLoop: the loop set as current on this thread.
    """
    if event_loop_path is not None:
        loop = load_object(event_loop_path)()
        asyncio.set_event_loop(loop)
        return loop
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        pass
    try:
        with warnings.catch_warnings():  # 3.12+: "There is no current event loop"
            warnings.simplefilter("ignore", DeprecationWarning)
            loop = asyncio.get_event_loop_policy().get_event_loop()
    except RuntimeError:
        loop = None
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
    return loop


def listen_tcp(portrange: list[int], host: str, factory: Any):
    """Scrapy's ``reactor.listenTCP`` over a port range: it needs a Twisted protocol
    factory and reactor, which crawlfw has not.

    Raises:
        NotSupported: always, naming what to use instead.
    """
    raise NotSupported(
        "crawlfw.utils.reactor.listen_tcp() serves a Twisted protocol factory and "
        "crawlfw has no Twisted reactor; listen with asyncio.start_server() or "
        "socketserver in a thread of your own instead")


class CallLaterOnce:
    """Call a function later, once, however often it is scheduled before it runs.

    Scrapy runs it in a later turn of the reactor; crawlfw runs it on a timer thread
    (``threading.Timer``) after ``delay`` seconds.

    Args:
        func: the callable; ``*a`` and ``**kw`` are passed to it.
    """

    def __init__(self, func, *a, **kw):
        self._func = func
        self._a = a
        self._kw = kw
        self._lock = threading.Lock()
        self._call: threading.Timer | None = None
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = []

    def schedule(self, delay: float = 0) -> None:
        """Call the function in ``delay`` seconds, unless a call is already pending."""
        with self._lock:
            if self._call is None:
                self._call = threading.Timer(delay, self)
                self._call.daemon = True
                self._call.start()

    def cancel(self) -> None:
        """Cancel the pending call, if any."""
        with self._lock:
            call, self._call = self._call, None
        if call is not None:
            call.cancel()

    def __call__(self):
        """Run the function now (the pending call is forgotten) and wake up the
        :meth:`wait` callers. Returns what the function returns."""
        with self._lock:
            self._call = None
        try:
            return self._func(*self._a, **self._kw)
        finally:
            with self._lock:
                waiters, self._waiters = self._waiters, []
            for loop, future in waiters:
                loop.call_soon_threadsafe(_resolve, future)

    async def wait(self) -> None:
        """Wait until the function has run next (from a coroutine)."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        with self._lock:
            self._waiters.append((loop, future))
        await future


def _resolve(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)
