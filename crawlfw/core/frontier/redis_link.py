"""The Redis plumbing of a shared crawl (``FRONTIER_URL``), used by the shared frontier
(:mod:`crawlfw.core.frontier.redis_frontier`), the shared download slots
(:mod:`crawlfw.core.frontier.redis_slot`), the scheduler, the feeds (``%(worker)s``), the
crawler's start check and the ``--workers`` parent:

- :func:`worker_id` (this process's worker id) and :func:`frontier_key` (a crawl's key
  prefix, a Redis Cluster hash tag);
- :class:`Scripts`, Lua scripts run on one dedicated connection (EVALSHA, else EVAL);
- :class:`RedisLink`, one crawl's link health (one retry budget, its stop request) and
  :func:`call_with_retry`, which retries a lost connection with exponential backoff;
- the error classes :class:`FrontierPermanentError` (not retried) and
  :class:`FrontierStopping` (not retried: the crawl stops), both
  :class:`~crawlfw.core.frontier.frontier.FrontierError`;
- :func:`check_server`, the check of a Redis before a crawl starts.

Nothing here knows the frontier's layout. The frontier module re-exports these names,
so ``from crawlfw.core.frontier.redis_frontier import RedisLink`` keeps working.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from crawlfw.core.frontier.frontier import FrontierError

if TYPE_CHECKING:
    import redis
    import redis.connection

    from crawlfw.settings import BaseSettings
    from crawlfw.spiders import Spider
    from crawlfw.statscollectors import StatsCollector

_T = TypeVar("_T")

logger = logging.getLogger("crawlfw.core.frontier.redis_frontier")  # (the name users filter on)

__all__ = ["Scripts", "ThreadRedis", "worker_id", "frontier_key", "call_with_retry", "check_server",
           "RedisLink", "redis_link", "FrontierPermanentError", "FrontierStopping",
           "RETRY_FIRST_S", "RETRY_MAX_S", "PROBE_TIMEOUT_S"]

#: Seconds between two tries of a failed Redis call: the first, and the most.
RETRY_FIRST_S = 0.1
RETRY_MAX_S = 5.0

_worker_id: str | None = None


def worker_id(settings: BaseSettings | None = None) -> str:
    """This process's worker id: ``FRONTIER_WORKER``, else ``<hostname>-<pid>`` (the same
    for the whole process). It names the worker's leases and committed feed state in a
    shared frontier and fills the ``%(worker)s`` placeholder of ``FEED_URI``.

    Args:
        settings: the crawl settings (or None).

    Returns:
        str: the id.
    """
    global _worker_id
    if settings is not None and settings.get("FRONTIER_WORKER"):
        return str(settings.get("FRONTIER_WORKER"))
    if _worker_id is None:
        _worker_id = f"{socket.gethostname()}-{os.getpid()}"
    return _worker_id


def frontier_key(settings: BaseSettings, spider_name: str | None) -> str:
    """The key prefix of a shared crawl: ``{<FRONTIER_KEY>}`` or ``{crawlfw:<spider>}``
    (braces: a Redis Cluster hash tag, all keys of the crawl in one slot; a
    ``FRONTIER_KEY`` with its own braces is used as it is)."""
    key = settings.get("FRONTIER_KEY") or f"crawlfw:{spider_name}"
    key = str(key)
    return key if "{" in key else "{" + key + "}"




class Scripts:
    """Lua scripts run on one dedicated connection (EVALSHA, and EVAL when the server
    does not know the script: after a restart), for the one thread that owns this
    object. A command costs about half the client CPU of ``redis.Redis``'s own path
    (no pool, no retry wrapper, RESP2), which matters at a few calls per page.

    Args:
        client: a ``redis.Redis`` (its connection settings are used).
        sources: ``{name: Lua source}``.

    Raises:
        redis.RedisError: from :meth:`run` (a lost connection is closed first, so the
            next call reconnects).
    """

    def __init__(self, client: redis.Redis, sources: Mapping[str, str]) -> None:
        self.client = client
        self.sources: dict[str, str] = {}
        self.shas: dict[str, str] = {}
        self.conn: redis.connection.ConnectionInterface | None = None
        self.add(sources)

    def add(self, sources: Mapping[str, str]) -> None:
        """Know the scripts of ``sources`` (``{name: Lua source}``) too."""
        import hashlib

        for name, src in sources.items():
            if name not in self.sources:
                self.sources[name] = src
                self.shas[name] = hashlib.sha1(src.encode()).hexdigest()

    def run(self, name: str, keys: list[str], args: list[Any]) -> Any:
        """Run script ``name`` with ``keys`` and ``args``; returns its reply (any RESP
        value: what the script returns)."""
        import redis

        conn = self.conn
        if conn is None:
            conn = self.conn = self.client.connection_pool.make_connection()
        try:
            try:
                conn.send_command("EVALSHA", self.shas[name], len(keys), *keys, *args)
                return conn.read_response()
            except redis.exceptions.NoScriptError:
                conn.send_command("EVAL", self.sources[name], len(keys), *keys, *args)
                return conn.read_response()
        except (redis.ConnectionError, redis.TimeoutError):
            conn.disconnect()
            raise

    def close(self) -> None:
        """Close the script connection (the next :meth:`run` opens another)."""
        if self.conn is not None:
            self.conn.disconnect()
            self.conn = None


class PermitHolder(Protocol):
    """What a thread's :attr:`ThreadRedis.holders` hold: the shared download slots
    (``core/frontier/redis_slot.py``) that keep permits in Redis."""

    def maintain(self, now_s: float) -> bool:
        """Renew and give back permits; True while some are still held."""


class ThreadRedis:
    """One thread's Redis for one URL: a ``redis.Redis`` client (``client``, for plain
    commands and pipelines) and one dedicated connection for Lua scripts
    (:meth:`scripts`), shared by every caller on that thread. Get it with
    :meth:`RedisLink.for_thread`; not for use from two threads.

    Args:
        url: the Redis URL.

    Attributes:
        client: the ``redis.Redis``.
        holders: a set the callers may use for their own bookkeeping on this thread
            (the shared download slots that hold permits).
    """

    def __init__(self, url: str) -> None:
        import redis

        self.client = redis.Redis.from_url(url, socket_timeout=30, socket_connect_timeout=5,
                                           protocol=2)
        self._scripts: Scripts | None = None
        self.holders: set[PermitHolder] = set()

    def scripts(self, sources: Mapping[str, str]) -> Scripts:
        """The thread's :class:`Scripts` (one connection), knowing ``sources`` too."""
        scripts = self._scripts
        if scripts is None:
            scripts = self._scripts = Scripts(self.client, {})
        scripts.add(sources)
        return scripts

    def close(self) -> None:
        """Close the script connection and the client."""
        if self._scripts is not None:
            self._scripts.close()
            self._scripts = None
        self.client.close()


class FrontierPermanentError(FrontierError):
    """A fault of the shared frontier that waiting will not mend, so it is not retried:
    a wrong or missing password (``WRONGPASS``, ``NOAUTH``), a server that does not
    speak Redis, a malformed ``FRONTIER_URL``, a Redis that evicts keys
    (``maxmemory-policy`` other than ``noeviction``), or the crawl's keys gone from
    Redis. The message names the URL (password hidden) and the cause, in one line."""


class FrontierStopping(FrontierError):
    """A Redis call failed while the crawl is stopping (^C, ``stop_crawl``): not
    retried, so the stop is not held up by an unreachable Redis."""


class RedisLink:
    """The health of one crawl's link to its Redis, shared by every thread that calls it
    (the frontier's scheduler thread, each downloader's shared slot), so that the retry
    budget, ``FRONTIER_RETRY_TIMEOUT``, is one for the whole crawl: a call made after
    another one gave up (the close path, a slot) is tried once, not for a new period,
    and a stop request (``stopping`` set) ends every retry wait at once.

    Args:
        stopping: a ``threading.Event`` set when the crawl is asked to stop (the
            Crawler's), or None for one of its own.

    Attributes:
        stopping (threading.Event): set: failed calls are no longer retried.
        down_since (float | None): ``time.monotonic()`` when a call first failed to
            reach Redis since the last call that did, else None.
        failure (FrontierPermanentError | None): a permanent fault met by a thread that
            cannot end the crawl itself (a download slot); the scheduler fails the
            crawl with it at its next tick.
    """

    def __init__(self, stopping: threading.Event | None = None) -> None:
        self.stopping = stopping if stopping is not None else threading.Event()
        self.down_since: float | None = None
        self.failure: FrontierPermanentError | None = None
        self._lock = threading.Lock()
        self._local = threading.local()  # this thread's ThreadRedis per URL

    def for_thread(self, url: str) -> ThreadRedis:
        """The calling thread's :class:`ThreadRedis` for ``url`` (made on first use):
        one client and one script connection shared by everything this thread calls
        (each downloader's shared slots), not one per slot.

        Raises:
            ValueError: ``url`` is not a Redis URL.
        """
        per_url = getattr(self._local, "per_url", None)
        if per_url is None:
            per_url = self._local.per_url = {}
        conn = per_url.get(url)
        if conn is None:
            conn = per_url[url] = ThreadRedis(url)
        return conn

    def close_thread(self) -> None:
        """Close the calling thread's connections (its downloader stops)."""
        per_url = getattr(self._local, "per_url", None)
        if per_url:
            for conn in per_url.values():
                conn.close()
            per_url.clear()

    def down(self, now: float) -> tuple[float, bool]:
        """Note a failed call at ``now``; returns ``(down_since, first)``: ``first``
        True when this call is the one that found the link down (it logs it)."""
        with self._lock:
            if self.down_since is None:
                self.down_since = now
                return now, True
            return self.down_since, False

    def up(self) -> float | None:
        """Note a call that reached Redis; returns since when it was down (monotonic
        s), or None if it was not."""
        if self.down_since is None:  # (the common case: no lock)
            return None
        with self._lock:
            since, self.down_since = self.down_since, None
            return since


def redis_link(crawler: object) -> RedisLink:
    """The :class:`RedisLink` of ``crawler``'s crawl (made on first use, kept on the
    crawler; its ``stopping`` is the crawler's stop request), or a new one when
    ``crawler`` is None."""
    if crawler is None:
        return RedisLink()
    link: RedisLink | None = getattr(crawler, "_redis_link", None)
    if link is None:
        link = RedisLink(getattr(crawler, "_stop_requested", None))
        # kept on the crawler, whose class does not declare it
        crawler._redis_link = link  # type: ignore[attr-defined]
    return link


#: Where a failing Redis call's reply says the crawl's keys are gone (see _LOST).
_LOST_MARK = "CRAWLFW_LOST"


def call_with_retry(fn: Callable[[], _T], url: str, retry_timeout_s: float, *,
                    spider: Spider | None = None, stats: StatsCollector | None = None,
                    link: RedisLink | None = None) -> _T:
    """``fn()`` (one Redis call), retrying a lost connection with exponential backoff
    (:data:`RETRY_FIRST_S` to :data:`RETRY_MAX_S`) until Redis has been unreachable for
    ``retry_timeout_s`` seconds, counted from the first failed call of ``link`` (the
    whole crawl), not of this call; logs a WARNING when the connection is lost ("Redis
    frontier <url> unreachable") and when it is back ("reachable again"), and counts
    ``frontier/redis_retries``.

    Transient, retried: connection refused or reset, timeouts, ``LOADING`` (a Redis
    loading its data after a restart), too many clients. Permanent, raised at once as
    :class:`FrontierPermanentError`: authentication (``WRONGPASS``, ``NOAUTH``), an
    answer that is not RESP (not a Redis server), ``NOPERM``, the crawl's keys gone.

    Args:
        fn: the call, without arguments.
        url: the Redis URL (for messages; its password is hidden).
        retry_timeout_s: seconds Redis may stay unreachable.
        spider: for the log records.
        stats: the stats collector, or None.
        link: the crawl's :class:`RedisLink` (None: this call alone).

    Returns:
        What ``fn`` returned.

    Raises:
        FrontierPermanentError: a fault that waiting will not mend (see above).
        FrontierStopping: Redis cannot be reached and the crawl is stopping.
        FrontierError: unreachable for ``retry_timeout_s``, or another error answer
            (``redis.ResponseError``: out of memory, a read-only replica...).
    """
    import redis

    if link is None:
        link = RedisLink()
    delay = RETRY_FIRST_S
    while True:
        try:
            result = fn()
        except _permanent_errors() as e:
            raise FrontierPermanentError(_permanent_message(url, e)) from e
        except (redis.ConnectionError, redis.TimeoutError) as e:
            now = time.monotonic()
            since, first = link.down(now)
            if first:
                logger.warning(
                    "Redis frontier %(url)s unreachable (%(error)s): retrying with backoff "
                    "for up to %(timeout).0f s",
                    {"url": _redact(url), "error": f"{type(e).__name__}: {e}",
                     "timeout": retry_timeout_s}, extra={"spider": spider})
                if stats is not None:
                    stats.inc_value("frontier/redis_retries", spider=spider)
            if link.stopping.is_set():
                raise FrontierStopping(f"Redis at {_redact(url)} unreachable while the crawl "
                                       f"stops: {type(e).__name__}: {e}") from e
            if now - since >= retry_timeout_s:
                raise FrontierError(f"Redis at {_redact(url)} unreachable for "
                                    f"{now - since:.0f} s (FRONTIER_RETRY_TIMEOUT): "
                                    f"{type(e).__name__}: {e}") from e
            if link.stopping.wait(min(delay, since + retry_timeout_s - now)):
                raise FrontierStopping(f"Redis at {_redact(url)} unreachable while the crawl "
                                       f"stops: {type(e).__name__}: {e}") from e
            delay = min(delay * 2, RETRY_MAX_S)
            continue
        except redis.RedisError as e:
            if _LOST_MARK in str(e):
                raise FrontierPermanentError(_lost_message(url, str(e))) from e
            if "unauthenticated" in str(e):  # a long command sent before AUTH
                raise FrontierPermanentError(_permanent_message(
                    url, redis.AuthenticationError(f"Authentication required ({e})"))) from e
            raise FrontierError(f"Redis at {_redact(url)}: {type(e).__name__}: {e}") from e
        down_since = link.up()
        if down_since is not None:
            logger.warning("Redis frontier %(url)s reachable again after %(s).1f s",
                           {"url": _redact(url), "s": time.monotonic() - down_since},
                           extra={"spider": spider})
        return result


def _permanent_errors() -> tuple[type[Exception], ...]:
    import redis.exceptions as e

    return (e.AuthenticationError, e.AuthenticationWrongNumberOfArgsError,
            e.NoPermissionError, e.InvalidResponse)


def _permanent_message(url: str, error: Exception) -> str:
    import redis.exceptions as e

    if isinstance(error, (e.AuthenticationError, e.AuthenticationWrongNumberOfArgsError)):
        return (f"Redis at {_redact(url)} refused the connection: {error} (authentication: "
                f"check the password in FRONTIER_URL, redis://:PASSWORD@host:port/db)")
    if isinstance(error, e.NoPermissionError):
        return (f"Redis at {_redact(url)} refused a command: {error} (the ACL user of "
                f"FRONTIER_URL needs the crawl's keys and EVAL/EVALSHA)")
    return f"the server at {_redact(url)} does not speak Redis: {error}"


def _lost_message(url: str, error: str) -> str:
    detail = error.split(_LOST_MARK, 1)[-1].strip(" :")
    return (f"the crawl's keys are gone from Redis at {_redact(url)} ({detail}): evicted "
            f"(maxmemory-policy other than noeviction), flushed, deleted, or Redis "
            f"restarted without persistence (appendonly yes); the crawl cannot tell what "
            f"is left to do")


#: Seconds the start-time check waits for a server's first answer.
PROBE_TIMEOUT_S = 5.0


def check_server(url: str, retry_timeout_s: float, *, link: RedisLink | None = None,
                 spider: Spider | None = None) -> dict[str, str | None]:
    """Check, before a crawl starts, that ``url`` names a Redis the shared frontier can
    use; wait for it (up to ``retry_timeout_s``) while it cannot be reached.

    In order: the URL parses (``redis://``, ``rediss://``, ``unix://``); the server
    answers ``PING`` in RESP (a raw probe for ``redis://``/``unix://``: an HTTP server
    on the port is told apart from a Redis that is down); authentication passes; the
    ``maxmemory-policy`` (``CONFIG GET``, else ``INFO memory``) is ``noeviction``: an
    evicting Redis would silently drop the crawl's queue, leases or fingerprints when
    full. When neither command is allowed, a WARNING says the policy could not be
    checked and the crawl goes on.

    Args:
        url: ``FRONTIER_URL``.
        retry_timeout_s: ``FRONTIER_RETRY_TIMEOUT``.
        link: the crawl's :class:`RedisLink` (``stopping`` ends the wait), or None.
        spider: for the log records.

    Returns:
        dict: ``{'maxmemory_policy': str | None}`` (None: could not be checked).

    Raises:
        FrontierPermanentError: a malformed URL, not a Redis server, authentication
            failed, or an evicting ``maxmemory-policy``.
        FrontierStopping: the crawl was asked to stop while Redis could not be reached.
        FrontierError: Redis stayed unreachable for ``retry_timeout_s``.
    """
    import redis

    shown = _redact(url)
    try:
        options = redis.connection.parse_url(url)
        client = redis.Redis.from_url(url, socket_timeout=PROBE_TIMEOUT_S,
                                      socket_connect_timeout=PROBE_TIMEOUT_S, protocol=2)
    except (ValueError, TypeError) as e:
        raise FrontierPermanentError(
            f"FRONTIER_URL {shown!r} is not a Redis URL: {e} (expected "
            f"redis://[:password@]host[:port][/db], rediss://... or unix:///path)") from e
    link = link if link is not None else RedisLink()
    try:
        if not url.startswith("rediss:"):
            target = options.get("path") or (options.get("host", "localhost"),
                                             int(options.get("port", 6379)))
            call_with_retry(lambda: _probe(target), url, retry_timeout_s, spider=spider,
                            link=link)
        call_with_retry(client.ping, url, retry_timeout_s, spider=spider, link=link)
        policy = _eviction_policy(client)
    finally:
        client.close()
    if policy is None:
        logger.warning(
            "Could not check the maxmemory-policy of Redis at %(url)s (CONFIG and INFO "
            "are not allowed): the crawl goes on, but a Redis that evicts keys when full "
            "loses the crawl's queue; it must run with maxmemory-policy noeviction",
            {"url": shown}, extra={"spider": spider})
    elif policy != "noeviction":
        raise FrontierPermanentError(
            f"Redis at {shown} has maxmemory-policy {policy}: when full it evicts keys, "
            f"which would silently drop the crawl's queued requests, leases and seen "
            f"fingerprints; the shared frontier needs maxmemory-policy noeviction (CONFIG "
            f"SET maxmemory-policy noeviction, or in redis.conf)")
    return {"maxmemory_policy": policy}


def _probe(target: str | tuple[str, int]) -> None:
    """Send a RESP ``PING`` to ``target`` (``(host, port)`` or a Unix socket path) and
    read the first bytes of the answer.

    Raises:
        redis.ConnectionError: refused, reset or timed out (transient).
        redis.InvalidResponse: the answer is not RESP (not a Redis server).
    """
    import redis

    try:
        if not isinstance(target, str):
            sock = socket.create_connection(target, timeout=PROBE_TIMEOUT_S)
        else:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(PROBE_TIMEOUT_S)
            sock.connect(target)
    except OSError as e:
        raise redis.ConnectionError(f"cannot connect to {target}: {e}") from e
    try:
        sock.sendall(b"*1\r\n$4\r\nPING\r\n")
        answer = sock.recv(128)
    except TimeoutError as e:
        raise redis.TimeoutError(f"no answer to PING within {PROBE_TIMEOUT_S:.0f} s") from e
    except OSError as e:
        raise redis.ConnectionError(f"connection to {target} lost: {e}") from e
    finally:
        sock.close()
    if not answer:
        raise redis.InvalidResponse("it closed the connection without answering PING")
    if answer[:1] not in b"+-:$*%_,#!=(|>~":
        first = answer.split(b"\n", 1)[0][:60].decode("latin-1").strip()
        raise redis.InvalidResponse(f"it answered PING with {first!r}")


def _eviction_policy(client: redis.Redis) -> str | None:
    """The server's ``maxmemory-policy`` from ``CONFIG GET``, else from ``INFO
    memory``; None when neither is allowed (renamed away, ACL)."""
    import redis

    try:
        value = client.config_get("maxmemory-policy").get("maxmemory-policy")
        if value:
            return value.decode() if isinstance(value, bytes) else value
    except redis.ResponseError:
        pass
    try:
        value = client.info("memory").get("maxmemory_policy")
        if value:
            return value.decode() if isinstance(value, bytes) else str(value)
    except redis.ResponseError:
        pass
    return None


def _redact(url: str) -> str:
    """``url`` with its password replaced by ``***``."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[-1]}"))

