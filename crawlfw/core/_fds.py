"""File descriptors as a resource the crawl manages (POSIX ``RLIMIT_NOFILE``).

A crawl holds a socket per transfer in flight (two while a host name with an IPv6 and
an IPv4 address is being connected, RFC 8305 "Happy Eyeballs"), the idle keep-alive
connections of its downloaders' caches, and a fixed set of its own (logs, feeds, the
frontier, the control socket, each downloader's epoll, wakeup pipe and curl's own). At
start the soft limit is raised to the hard one (:func:`raise_nofile_limit`); if the
concurrency asked for still does not fit, :func:`fit_concurrency` lowers it, with one
WARNING. A transfer that meets ``EMFILE``/``ENFILE`` anyway (something else took the
descriptors) is put back in its slot and tried again (:func:`fds_exhausted` tells it
apart from a real connection failure), never an actor's death. So is a feed file opened
or a control connection accepted then (:func:`retry_when_out_of_fds`, :func:`out_of_fds`):
tried again after a short backoff, with a WARNING naming the file or socket.
"""

from __future__ import annotations

import errno
import logging
import math
import socket
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from crawlfw.settings import BaseSettings

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

__all__ = ["raise_nofile_limit", "fds_needed", "fit_concurrency", "fds_exhausted",
           "out_of_fds", "retry_when_out_of_fds", "FD_RETRY_DELAYS_S", "RESERVED_FDS"]

#: Descriptors kept for the crawl's own files besides its transfers and connection caches.
RESERVED_FDS = 64

#: Descriptors each downloader actor holds (epoll, wakeup pipe, curl's own wakeup pair).
FDS_PER_DOWNLOADER = 6

_raised: list[tuple[float, float]] = []  # the (soft, hard) limits after the first call, once per process


def raise_nofile_limit() -> tuple[float, float]:
    """Raise the soft ``RLIMIT_NOFILE`` to the hard limit (once per process; logged at
    DEBUG with both figures).

    Returns:
        ``(soft, hard)`` after the call; ``math.inf`` for an unlimited value, and
        ``(inf, inf)`` where the platform has no ``resource`` module.
    """
    if _raised:
        return _raised[0]
    try:
        import resource
    except ImportError:  # not POSIX
        _raised.append((math.inf, math.inf))
        return _raised[0]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard and (hard == resource.RLIM_INFINITY or soft < hard):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            logger.debug("Raised the open file limit (RLIMIT_NOFILE) from %(soft)s to %(hard)s",
                         {"soft": soft, "hard": hard})
            soft = hard
        except (ValueError, OSError) as e:  # e.g. macOS caps it below an infinite hard limit
            logger.debug("Could not raise the open file limit (RLIMIT_NOFILE) from %(soft)s "
                         "to %(hard)s: %(error)s", {"soft": soft, "hard": hard, "error": e})
    else:
        logger.debug("Open file limit (RLIMIT_NOFILE): %(soft)s", {"soft": soft})
    inf = resource.RLIM_INFINITY
    _raised.append((math.inf if soft == inf else soft, math.inf if hard == inf else hard))
    return _raised[0]


def fds_needed(concurrency: int, maxconnects: int, downloaders: int) -> int:
    """Descriptors a crawl may hold at once: 2 per transfer in flight, the connection
    caches' ``maxconnects`` (all downloaders together), :data:`FDS_PER_DOWNLOADER` per
    downloader and :data:`RESERVED_FDS`."""
    return RESERVED_FDS + FDS_PER_DOWNLOADER * downloaders + 2 * concurrency + maxconnects


def fit_concurrency(settings: BaseSettings, limit: float | None = None) -> int:
    """The ``CONCURRENT_REQUESTS`` the crawl can hold within the open file limit.

    When the concurrency asked for does not fit, one WARNING says so with the figures
    and the lower concurrency used instead (with ``CURL_MAXCONNECTS`` 0, the connection
    caches shrink with it).

    Args:
        settings: the crawl settings (``CONCURRENT_REQUESTS``, ``CURL_MAXCONNECTS``,
            ``DOWNLOADER_ACTORS``).
        limit: the soft ``RLIMIT_NOFILE`` (default: :func:`raise_nofile_limit`'s).

    Returns:
        The effective concurrency (>= 1).
    """
    if limit is None:
        limit = raise_nofile_limit()[0]
    concurrency = max(1, settings.getint("CONCURRENT_REQUESTS", 16))
    downloaders = max(1, settings.getint("DOWNLOADER_ACTORS", 1))
    fixed_cache = max(0, settings.getint("CURL_MAXCONNECTS", 0)) * downloaders
    cache = fixed_cache or concurrency
    needed = fds_needed(concurrency, cache, downloaders)
    if needed <= limit:
        return concurrency
    room = limit - RESERVED_FDS - FDS_PER_DOWNLOADER * downloaders - fixed_cache
    fits = int(room // (2 if fixed_cache else 3))  # a transfer + its cached connection
    fits = max(1, min(concurrency, fits))
    logger.warning(
        "CONCURRENT_REQUESTS = %(asked)d needs about %(needed)d open files, but the limit "
        "(RLIMIT_NOFILE, ulimit -n) is %(limit)d: crawling with %(fits)d concurrent "
        "requests instead (raise the hard limit to go faster)",
        {"asked": concurrency, "needed": needed, "limit": limit, "fits": fits})
    return fits


def fds_exhausted() -> bool:
    """True when this process cannot open a socket now for want of file descriptors
    (``EMFILE``: its limit; ``ENFILE``: the system's). Called after a connection failed
    without a cause curl names (libcurl reports a failed ``socket()`` as a plain
    "Could not connect"), never on the per-request path."""
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
    except OSError as e:
        return e.errno in (errno.EMFILE, errno.ENFILE)
    return False


#: Waits (s) between the tries of :func:`retry_when_out_of_fds`: doubling from 50 ms to
#: 2 s, about 30 s in all, then the error is the caller's.
FD_RETRY_DELAYS_S = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6) + (2.0,) * 13


def out_of_fds(error: BaseException) -> bool:
    """True when ``error`` is an ``OSError`` for want of file descriptors: ``EMFILE``
    (this process's ``RLIMIT_NOFILE``) or ``ENFILE`` (the system's table), POSIX."""
    return isinstance(error, OSError) and error.errno in (errno.EMFILE, errno.ENFILE)


def retry_when_out_of_fds(call: Callable[[], _T], what: str,
                          on_retry: Callable[[], object] | None = None,
                          delays_s: Sequence[float] = FD_RETRY_DELAYS_S,
                          sleep: Callable[[float], object] = time.sleep) -> _T:
    """Return ``call()``, trying it again while it fails for want of file descriptors
    (:func:`out_of_fds`): a transient condition (something else in the process holds
    them for now), not a reason to fail a feed or a control connection.

    The first retry logs one WARNING naming ``what`` and the errno; a success after
    retries logs INFO with their number. Any other exception, and the last out-of-fds
    error once ``delays_s`` are used up, propagate unchanged.

    Args:
        call: a function of no argument (opens the file...).
        what: what is opened, for the log lines, e.g. ``"feed file /tmp/items.jl"``.
        on_retry: called with no argument before each retry (counts a stat), or None.
        delays_s: the waits in seconds between tries (:data:`FD_RETRY_DELAYS_S`).
        sleep: the function that waits (``time.sleep``; tests pass their own).

    Returns:
        what ``call()`` returned.
    """
    retries = 0
    while True:
        try:
            result = call()
        except OSError as e:
            if not out_of_fds(e) or retries >= len(delays_s):
                raise
            if retries == 0:
                logger.warning(
                    "Out of file descriptors (%(errno)s) opening %(what)s: trying again "
                    "(for up to %(total).0f s)",
                    {"errno": errno.errorcode.get(e.errno or 0, e.errno), "what": what,
                     "total": sum(delays_s)})
            if on_retry is not None:
                on_retry()
            sleep(delays_s[retries])
            retries += 1
            continue
        if retries:
            logger.info("Opened %(what)s after %(retries)d retries (out of file descriptors "
                        "meanwhile)", {"what": what, "retries": retries})
        return result
