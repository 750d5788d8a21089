"""The shared frontier: one crawl across many processes and machines, on Redis.

:class:`RedisFrontier` has the interface of :class:`crawlfw.core.frontier.SqliteFrontier`
(``push``, ``lease``, ``ack``, ``release``, ``commit``, ``set_meta``, ``meta``) over a
Redis server named by ``FRONTIER_URL = 'redis://host:port/db'``. Every process (a
"worker") with the same URL and key joins the same crawl. Keys, under the prefix
``{crawlfw:<spider name>}`` (``FRONTIER_KEY`` overrides the part inside the braces; the
braces are a Redis Cluster hash tag, so every key of one crawl lives in one slot)::

    <prefix>:queue       sorted set  request id -> order (priority, then LIFO/FIFO)
    <prefix>:requests    hash        request id -> request as JSON (request_to_dict)
    <prefix>:scores      hash        request id -> its order in the queue (for requeues)
    <prefix>:seen        set         fingerprints of the dupefilter (20 bytes each)
    <prefix>:leases      sorted set  leased request id -> lease deadline (ms, Redis TIME)
    <prefix>:owners      hash        leased request id -> worker id
    <prefix>:meta        hash        seq (ids), start_consumed, start_exhausted,
                                     created (a Redis that lost the crawl lacks it)
    <prefix>:start       string      the worker scheduling the start requests (expires)
    <prefix>:workers     hash        worker id -> last heartbeat (ms)
    <prefix>:figures     hash        worker id -> its pages and items (JSON; for status)
    <prefix>:worker:<id> hash        that worker's committed feeds and spider.state (JSON)

Every change is one Lua script, so it is atomic: a push goes through the dupefilter and
into the queue together; a lease moves requests from the queue to the leases with a
deadline; :meth:`RedisFrontier.commit` acks leases and writes the worker's feed states
in the same call (the commit protocol of ARCHITECTURE.md, "Lose nothing"). A worker
renews its open leases (:meth:`RedisFrontier.renew`, the heartbeat); a lease whose
deadline passed (``FRONTIER_LEASE_TIMEOUT`` seconds without a renewal: the worker died or
hung) goes back to the queue at the next lease or status call of any worker; a worker
started again under the same id queues its earlier process's leases again at once. A
worker leases ``prefetch`` requests ahead of need, so most leases cost no round trip.

Requests are stored as JSON (callbacks by spider method name), never pickled: a shared
store must not let one worker run code in another. A request that cannot be stored
(its ``meta``, ``cookies`` or ``cb_kwargs`` are not JSON-able, or its callback is no
spider method) is refused with an ERROR naming it, unless it belongs to the crawl's own
machinery (``transient_ok``: robots.txt, ``crawler.engine.download``), which stays in
this worker's memory.

A lost connection (Redis restarting, ``LOADING``) is retried with exponential backoff
until Redis has been unreachable for ``FRONTIER_RETRY_TIMEOUT`` seconds, counted once
for the whole crawl (:class:`RedisLink`), saying so in the log; only then does the
frontier fail; a stop request ends the retrying at once. Faults that waiting will not
mend (authentication, a server that does not speak Redis, the crawl's keys gone) fail at
once (:class:`FrontierPermanentError`), and :func:`check_server` refuses, before a crawl
starts, a malformed URL and a Redis that evicts keys (``maxmemory-policy``). A script
whose reply was lost is safe to run again: pushes go through the dupefilter, acks and
releases check the owner, and leases taken by a lost call are not renewed, so they
expire and go back to the queue.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections import deque

from crawlfw.core.frontier import SEEN_CACHE_SIZE, FrontierError, JobMeta, _Lifo
from crawlfw.core.pqueue import PriorityQueue
from crawlfw.dupefilters import RFPDupeFilter
from crawlfw.utils.reqser import request_from_dict, request_to_dict

logger = logging.getLogger(__name__)

__all__ = ["RedisFrontier", "Scripts", "worker_id", "frontier_key", "call_with_retry",
           "check_server", "RedisLink", "redis_link", "FrontierPermanentError",
           "FrontierStopping"]

#: Seconds between two tries of a failed Redis call: the first, and the most.
RETRY_FIRST_S = 0.1
RETRY_MAX_S = 5.0

#: Most expired leases moved back to the queue by one call.
EXPIRE_BATCH = 1000

# The queue order of a request: -priority * 2**40, then its id (FIFO) or -id (LIFO);
# ZRANGE takes the lowest first. A start request (meta['is_start_request']) is
# -priority * 2**40 + 2**38 + id: first in first out, after the other requests of its
# priority, before those of lower priorities (Scrapy 2.13's start queues: a priority's
# regular requests go first); ids stay below 2**38. Priorities beyond +-4095 share the extreme order (the sum stays below 2**53,
# exact in Lua's doubles). Orders written by crawlfw < 0.3 (no start requests apart)
# are orders of the same kind: such a crawl is read as it is.
_PRIO_UNIT = 1 << 40
_PRIO_MAX = 4095

_worker_id = None

# Moves leases past their deadline back to the queue. KEYS[1] queue, KEYS[3] scores,
# KEYS[4] leases, KEYS[5] owners. expire(now ms) returns how many.
_EXPIRE = """
local function expire(now)
  local ids = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, EXPIRE_BATCH)
  for _, id in ipairs(ids) do
    redis.call('ZREM', KEYS[4], id)
    redis.call('HDEL', KEYS[5], id)
    local score = redis.call('HGET', KEYS[3], id)
    if score then redis.call('ZADD', KEYS[1], score, id) end
  end
  return #ids
end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
""".replace("EXPIRE_BATCH", str(EXPIRE_BATCH))

# The head of the scripts that change a running crawl: its `created` mark must still be
# in `meta` (KEYS[META]); a Redis that lost the crawl (flushed, restarted without
# persistence, keys evicted) answers an error the client words (call_with_retry),
# instead of the script recreating part of a crawl.
_GUARD = """
if redis.call('HEXISTS', KEYS[META], 'created') == 0 then
  return redis.error_reply('CRAWLFW_LOST its mark (' .. KEYS[META] .. ' created) is gone')
end
"""

# KEYS: queue, requests, scores, seen, meta, start. ARGV: worker, lifo (0/1),
# start consumed (-1: not start requests), start exhausted (0/1), claim ms,
# then (fingerprint or '', priority, json, start request 0/1) per request.
# Returns 1/0 per request (0: seen before), or {-1} when another worker holds the
# start requests' claim.
_PUSH = _GUARD.replace("META", "5") + """
local worker = ARGV[1]
local lifo = ARGV[2] == '1'
local consumed = tonumber(ARGV[3])
if consumed >= 0 then
  local owner = redis.call('GET', KEYS[6])
  if owner and owner ~= worker then return {-1} end
end
local out = {}
for i = 6, #ARGV, 4 do
  local ok = 1
  if ARGV[i] ~= '' then ok = redis.call('SADD', KEYS[4], ARGV[i]) end
  if ok == 1 then
    local id = redis.call('HINCRBY', KEYS[5], 'seq', 1)
    local score = -tonumber(ARGV[i + 1]) * PRIO_UNIT
    if ARGV[i + 3] == '1' then
      score = score + START_UNIT + id
    else
      score = score + (lifo and -id or id)
    end
    redis.call('ZADD', KEYS[1], score, id)
    redis.call('HSET', KEYS[2], id, ARGV[i + 2])
    redis.call('HSET', KEYS[3], id, score)
  end
  out[#out + 1] = ok
end
if consumed >= 0 then
  redis.call('HINCRBY', KEYS[5], 'start_consumed', consumed)
  if ARGV[4] == '1' then
    redis.call('HSET', KEYS[5], 'start_exhausted', '1')
    redis.call('DEL', KEYS[6])
  else
    redis.call('SET', KEYS[6], worker, 'PX', ARGV[5])
  end
end
return out
""".replace("PRIO_UNIT", str(_PRIO_UNIT)).replace("START_UNIT", str(_PRIO_UNIT // 4))

# KEYS: queue, requests, scores, leases, owners, meta. ARGV: worker, n, lease ms.
# Returns {expired, id1, json1, id2, json2, ...}.
_LEASE = _EXPIRE + _GUARD.replace("META", "6") + """
local now = now_ms()
local out = {expire(now)}
local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
local deadline = now + tonumber(ARGV[3])
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  local data = redis.call('HGET', KEYS[2], id)
  if not data then
    return redis.error_reply('CRAWLFW_LOST queued request ' .. id .. ' has no data in ' .. KEYS[2])
  end
  redis.call('ZADD', KEYS[4], deadline, id)
  redis.call('HSET', KEYS[5], id, ARGV[1])
  out[#out + 1] = id
  out[#out + 1] = data
end
return out
"""

# KEYS: queue, requests, scores, leases, owners, worker meta, meta. ARGV: worker, number of
# meta fields, (field, json) pairs, then lease ids. A lease of this worker is forgotten;
# one that expired and waits in the queue again is taken out of it (its work is done);
# one another worker leased since is left to it. Returns {acked, lost}.
_COMMIT = _GUARD.replace("META", "7") + """
local worker = ARGV[1]
local nmeta = tonumber(ARGV[2])
for i = 3, 2 + 2 * nmeta, 2 do
  redis.call('HSET', KEYS[6], ARGV[i], ARGV[i + 1])
end
local acked, lost = 0, 0
for i = 3 + 2 * nmeta, #ARGV do
  local id = ARGV[i]
  local owner = redis.call('HGET', KEYS[5], id)
  if owner == worker or (not owner and redis.call('ZREM', KEYS[1], id) == 1) then
    redis.call('ZREM', KEYS[4], id)
    redis.call('HDEL', KEYS[5], id)
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
    acked = acked + 1
  else
    lost = lost + 1
  end
end
return {acked, lost}
"""

# KEYS: queue, scores, leases, owners. ARGV: worker, lease ids. Returns how many.
_RELEASE = """
local n = 0
for i = 2, #ARGV do
  local id = ARGV[i]
  if redis.call('HGET', KEYS[4], id) == ARGV[1] then
    local score = redis.call('HGET', KEYS[2], id)
    if not score then
      return redis.error_reply('CRAWLFW_LOST leased request ' .. id ..
                               ' has no queue order in ' .. KEYS[2])
    end
    redis.call('ZREM', KEYS[3], id)
    redis.call('HDEL', KEYS[4], id)
    redis.call('ZADD', KEYS[1], score, id)
    n = n + 1
  end
end
return n
"""

# KEYS: leases, owners, workers, start. ARGV: worker, lease ms, lease ids.
# Returns the ids this worker no longer holds (expired and taken over).
_RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local deadline = now + tonumber(ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], now)
if redis.call('GET', KEYS[4]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[4], ARGV[2])
end
local lost = {}
for i = 3, #ARGV do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[1] then
    redis.call('ZADD', KEYS[1], deadline, ARGV[i])
  else
    lost[#lost + 1] = ARGV[i]
  end
end
return lost
"""

# KEYS: queue, requests, scores, leases, owners, meta, start.
# Returns {queued, leased, start_exhausted (0/1), start owner or '', expired,
# the crawl's data exists (0/1: its `created` mark, set when the first worker joined)}.
_STATUS = _EXPIRE + """
local expired = expire(now_ms())
return {redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[4]),
        redis.call('HEXISTS', KEYS[6], 'start_exhausted'),
        redis.call('GET', KEYS[7]) or '', expired,
        redis.call('HEXISTS', KEYS[6], 'created')}
"""

# KEYS: meta, start, then the crawl's other keys (queue, requests, seen, leases,
# workers, figures, this worker's record). ARGV: worker, claim ms, join only (0/1).
# Marks the crawl as created (the mark tells a Redis that lost its data from a finished
# crawl), unless it has no mark and must not get one: {-1, 0, 0} with join only (the
# caller knows the crawl has a history), {-2, 0, 0, key} when another of its keys
# exists (a crawl partly lost: evicted, or flushed while workers ran).
# Returns {start_exhausted (0/1), start_consumed, claimed (0/1)}.
_CLAIM_START = """
local t = redis.call('TIME')
if redis.call('HEXISTS', KEYS[1], 'created') == 0 then
  if ARGV[3] == '1' then return {-1, 0, 0} end
  for i = 1, #KEYS do
    if i ~= 2 and redis.call('EXISTS', KEYS[i]) == 1 then return {-2, 0, 0, KEYS[i]} end
  end
  redis.call('HSET', KEYS[1], 'created', t[1])
end
local consumed = tonumber(redis.call('HGET', KEYS[1], 'start_consumed') or '0')
if redis.call('HEXISTS', KEYS[1], 'start_exhausted') == 1 then return {1, consumed, 0} end
local owner = redis.call('GET', KEYS[2])
if owner and owner ~= ARGV[1] then return {0, consumed, 0} end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return {0, consumed, 1}
"""

# KEYS: queue, scores, leases, owners. ARGV: worker. Queues again the leases held under
# this worker's id (by an earlier process of it that died). Returns how many.
_RECOVER = """
local owners = redis.call('HGETALL', KEYS[4])
local n = 0
for i = 1, #owners, 2 do
  if owners[i + 1] == ARGV[1] then
    local id = owners[i]
    local score = redis.call('HGET', KEYS[2], id)
    if not score then
      return redis.error_reply('CRAWLFW_LOST leased request ' .. id ..
                               ' has no queue order in ' .. KEYS[2])
    end
    redis.call('ZREM', KEYS[3], id)
    redis.call('HDEL', KEYS[4], id)
    redis.call('ZADD', KEYS[1], score, id)
    n = n + 1
  end
end
return n
"""

# KEYS: start. ARGV: worker. Gives the start requests' claim up if held.
_UNCLAIM_START = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
"""


def worker_id(settings=None) -> str:
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


def frontier_key(settings, spider_name: str) -> str:
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

    def __init__(self, client, sources: dict):
        import hashlib

        self.client = client
        self.sources = sources
        self.shas = {name: hashlib.sha1(src.encode()).hexdigest() for name, src in sources.items()}
        self.conn = None

    def run(self, name: str, keys: list, args: list):
        """Run script ``name`` with ``keys`` and ``args``; returns its reply."""
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
        if self.conn is not None:
            self.conn.disconnect()
            self.conn = None


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

    def __init__(self, stopping=None):
        self.stopping = stopping if stopping is not None else threading.Event()
        self.down_since = None
        self.failure = None
        self._lock = threading.Lock()

    def down(self, now: float) -> tuple:
        """Note a failed call at ``now``; returns ``(down_since, first)``: ``first``
        True when this call is the one that found the link down (it logs it)."""
        with self._lock:
            if self.down_since is None:
                self.down_since = now
                return now, True
            return self.down_since, False

    def up(self):
        """Note a call that reached Redis; returns since when it was down (monotonic
        s), or None if it was not."""
        if self.down_since is None:  # (the common case: no lock)
            return None
        with self._lock:
            since, self.down_since = self.down_since, None
            return since


def redis_link(crawler) -> RedisLink:
    """The :class:`RedisLink` of ``crawler``'s crawl (made on first use, kept on the
    crawler; its ``stopping`` is the crawler's stop request), or a new one when
    ``crawler`` is None."""
    if crawler is None:
        return RedisLink()
    link = getattr(crawler, "_redis_link", None)
    if link is None:
        link = crawler._redis_link = RedisLink(getattr(crawler, "_stop_requested", None))
    return link


#: Where a failing Redis call's reply says the crawl's keys are gone (see _LOST).
_LOST_MARK = "CRAWLFW_LOST"


def call_with_retry(fn, url: str, retry_timeout_s: float, *, spider=None, stats=None,
                    link=None):
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
        since = link.up()
        if since is not None:
            logger.warning("Redis frontier %(url)s reachable again after %(s).1f s",
                           {"url": _redact(url), "s": time.monotonic() - since},
                           extra={"spider": spider})
        return result


def _permanent_errors() -> tuple:
    import redis.exceptions as e

    return (e.AuthenticationError, e.AuthenticationWrongNumberOfArgsError,
            e.NoPermissionError, e.InvalidResponse)


def _permanent_message(url: str, error) -> str:
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


def check_server(url: str, retry_timeout_s: float, *, link=None, spider=None) -> dict:
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


def _probe(target) -> None:
    """Send a RESP ``PING`` to ``target`` (``(host, port)`` or a Unix socket path) and
    read the first bytes of the answer.

    Raises:
        redis.ConnectionError: refused, reset or timed out (transient).
        redis.InvalidResponse: the answer is not RESP (not a Redis server).
    """
    import redis

    family = socket.AF_UNIX if isinstance(target, str) else None
    try:
        if family is None:
            sock = socket.create_connection(target, timeout=PROBE_TIMEOUT_S)
        else:
            sock = socket.socket(family, socket.SOCK_STREAM)
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


def _eviction_policy(client):
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


class RedisFrontier:
    """The frontier shared by every worker of one crawl, in Redis (see the module doc).

    Args:
        url: ``redis://[:password@]host:port/db`` (``rediss://`` for TLS, ``unix://``).
        key: the key prefix (:func:`frontier_key`).
        dupefilter: the crawl's dupefilter. An :class:`~crawlfw.dupefilters.RFPDupeFilter`
            (or subclass) has its fingerprints in Redis, shared; any other keeps its own
            state in this worker.
        worker: this worker's id (:func:`worker_id`).
        lifo: True for depth-first order within a priority, False for breadth-first.
        lease_timeout_s: seconds a lease lives without a renewal
            (``FRONTIER_LEASE_TIMEOUT``); renew at least three times as often.
        retry_timeout_s: seconds a lost connection is retried before the frontier
            fails (``FRONTIER_RETRY_TIMEOUT``).
        prefetch: requests leased ahead of need and kept here, so that most
            :meth:`lease` calls need no round trip (the Scheduler uses
            ``CONCURRENT_REQUESTS``); they are this worker's open leases, renewed and
            given back at :meth:`close` like the others.
        max_open: most open leases (leased, not yet acked: in flight, prefetched and
            finished but not committed) this worker holds; :meth:`lease` takes no more
            past it. 0: no limit. A worker killed holds at most this many, so at most
            this many pages are crawled twice (``FRONTIER_MAX_OPEN_LEASES``).
        stats: the crawl's stats collector, or None.
        client: a ``redis.Redis`` to use instead of one made from ``url`` (tests).
        link: the crawl's :class:`RedisLink` (one retry budget for the crawl, and its
            stop request), or None for one of its own.
        join_only: only join a crawl Redis holds; never create one
            (``FRONTIER_JOIN_ONLY``).

    Raises:
        FrontierPermanentError: the URL is not a Redis URL, authentication failed, or
            the crawl's keys are gone from Redis while it has history (see :meth:`open`).
        FrontierError: the server cannot be reached within ``retry_timeout_s``.
    """

    durable = True
    shared = True

    def __init__(self, url, key, dupefilter, *, worker, lifo=True, lease_timeout_s=60.0,
                 retry_timeout_s=300.0, prefetch=0, max_open=0, stats=None, client=None,
                 link=None, join_only=False):
        import redis

        self.url = url
        self.path = f"{_redact(url)} {key}"  # for the scheduler's failure message
        self.key = key
        self.df = dupefilter
        self.worker = worker
        self.lifo = lifo
        self.lease_ms = max(1, int(lease_timeout_s * 1000))
        self.lease_timeout_s = lease_timeout_s
        self.retry_timeout_s = retry_timeout_s
        self.stats = stats
        self.spider = None
        self.link = link if link is not None else RedisLink()
        self.join_only = bool(join_only)
        self._fingerprint = (
            dupefilter.request_fingerprint if isinstance(dupefilter, RFPDupeFilter) else None
        )
        self._transient = PriorityQueue(lambda priority: _Lifo())
        self._seen_cache = set()
        self._pending_acks = []
        self.leased = set()  # ids of this worker's open leases
        self.prefetch = max(0, int(prefetch))
        self.max_open = max(0, int(max_open))
        self._prefetched = deque()  # leased ahead, not handed out yet (in `leased`)
        self.queued = 0  # the shared queue's length at the last lease or status call
        self._redis_error = redis.RedisError
        try:
            self.client = client or redis.Redis.from_url(
                url, socket_timeout=30, socket_connect_timeout=5, protocol=2)
        except ValueError as e:
            raise FrontierPermanentError(
                f"FRONTIER_URL {_redact(url)!r} is not a Redis URL: {e}") from e
        k = self._k
        self.keys = {
            "push": [k("queue"), k("requests"), k("scores"), k("seen"), k("meta"), k("start")],
            "lease": [k("queue"), k("requests"), k("scores"), k("leases"), k("owners"),
                      k("meta")],
            "commit": [k("queue"), k("requests"), k("scores"), k("leases"), k("owners"),
                       k(f"worker:{worker}"), k("meta")],
            "release": [k("queue"), k("scores"), k("leases"), k("owners")],
            "recover": [k("queue"), k("scores"), k("leases"), k("owners")],
            "renew": [k("leases"), k("owners"), k("workers"), k("start")],
            "status": [k("queue"), k("requests"), k("scores"), k("leases"), k("owners"),
                       k("meta"), k("start")],
            "claim": [k("meta"), k("start"), k("queue"), k("requests"), k("seen"),
                      k("leases"), k("workers"), k("figures"), k(f"worker:{worker}")],
            "unclaim": [k("start")],
        }
        self.scripts = Scripts(self.client, {
            "push": _PUSH, "lease": _LEASE, "commit": _COMMIT, "release": _RELEASE,
            "renew": _RENEW, "status": _STATUS, "recover": _RECOVER,
            "claim": _CLAIM_START, "unclaim": _UNCLAIM_START,
        })
        self.meta = self._read_meta()

    def _k(self, name: str) -> str:
        return f"{self.key}:{name}"

    # --- Redis calls --------------------------------------------------------------------

    def _call(self, name, args):
        """Run script ``name``; retry a lost connection with backoff
        (:func:`call_with_retry`).

        Raises:
            FrontierError: Redis stayed unreachable for ``retry_timeout_s``, or answered
                with an error (out of memory, a read-only replica...).
        """
        run, keys = self.scripts.run, self.keys[name]
        result = call_with_retry(lambda: run(name, keys, args), self.url,
                                 self.retry_timeout_s, spider=self.spider, stats=self.stats,
                                 link=self.link)
        self._inc("frontier/redis_calls")
        return result

    def _read_meta(self) -> JobMeta:
        reply = self._call("claim", [self.worker, self.lease_ms, 1 if self.join_only else 0])
        exhausted, consumed, claimed = reply[:3]
        if exhausted == -1:
            raise FrontierPermanentError(
                f"Redis at {_redact(self.url)} holds no crawl under key {self.key}, but "
                f"this worker only joins one (FRONTIER_JOIN_ONLY: it ran before, or the "
                f"--workers parts show items): was Redis restarted without persistence or "
                f"flushed? Refusing to crawl again from the start; to start over on "
                f"purpose, remove the parts (or the feeds) of the earlier run")
        if exhausted == -2:
            key = reply[3].decode() if isinstance(reply[3], bytes) else reply[3]
            raise FrontierPermanentError(
                f"the crawl {self.key} in Redis at {_redact(self.url)} is incomplete: its "
                f"created mark is gone but {key} remains (keys evicted by a "
                f"maxmemory-policy, or flushed while workers ran); refusing to start a new "
                f"crawl over it; to start over on purpose, delete the crawl's keys "
                f"(redis-cli --scan --pattern '{self.key}*' | xargs redis-cli del)")
        self.start_owner = bool(claimed)
        meta = JobMeta(start_requests=int(consumed), start_exhausted=not claimed)
        stored = call_with_retry(lambda: self.client.hgetall(self._k(f"worker:{self.worker}")),
                                 self.url, self.retry_timeout_s, spider=self.spider,
                                 stats=self.stats, link=self.link)
        for field, value in stored.items():
            meta[field.decode()] = json.loads(value)
        meta["resumed"] = bool(stored)
        return meta

    # --- the queue ----------------------------------------------------------------------

    def open(self, spider) -> None:
        """Bind the spider whose methods are the requests' callbacks; log what the shared
        crawl holds."""
        self.spider = spider
        recovered = self._call("recover", [self.worker])
        if recovered:
            logger.info("%(n)d leases of an earlier process of worker %(worker)s queued "
                        "again", {"n": recovered, "worker": self.worker},
                        extra={"spider": spider})
        queued, leased, exhausted, owner, _, _ = self._call("status", [])
        self.queued = int(queued)
        logger.info(
            "Worker %(worker)s joins crawl %(key)s on %(url)s (%(queued)d requests queued, "
            "%(leased)d leased; start requests %(start)s)",
            {"worker": self.worker, "key": self.key, "url": _redact(self.url),
             "queued": queued, "leased": leased,
             "start": ("all scheduled" if exhausted else
                       "scheduled by this worker" if self.start_owner else
                       f"scheduled by {owner.decode() if owner else 'another worker'}")},
            extra={"spider": spider},
        )

    def push(self, request, *, transient_ok: bool = False) -> bool:
        """Queue one request (see :meth:`push_many`)."""
        return self.push_many([request], transient_ok=transient_ok)[0]

    def push_many(self, requests, *, transient_ok: bool = False, start=None) -> list:
        """Queue ``requests`` through the shared dupefilter, in one Redis call.

        Args:
            requests: the requests.
            transient_ok: keep a request that cannot be stored in this worker's memory
                instead of refusing it (the crawl's own machinery).
            start: ``{'consumed': int, 'exhausted': bool}`` when these are start
                requests: the crawl's count of start requests consumed is raised in the
                same call.

        Returns:
            list[bool]: per request, False when it was a duplicate or was refused.

        Raises:
            FrontierError: Redis failed.
        """
        results = [False] * len(requests)
        if start is not None and not self.start_owner:
            start = None  # (another worker schedules the start requests: none came here)
        args = [self.worker, "1" if self.lifo else "0",
                -1 if start is None else start["consumed"],
                1 if start is not None and start["exhausted"] else 0, self.lease_ms]
        sent = []  # indexes of requests sent
        fingerprint = self._fingerprint
        cache = self._seen_cache
        for i, request in enumerate(requests):
            fp = ""
            if not request.dont_filter:
                if fingerprint is None:
                    if self.df.request_seen(request):
                        self.df.log(request, self.spider)
                        continue
                else:
                    fp = fingerprint(request)
                    if fp in cache:  # most links were seen before: answered here
                        self.df.log(request, self.spider)
                        continue
            try:
                data = json.dumps(request_to_dict(request, self.spider, compact=True), separators=(",", ":"),
                                  allow_nan=False)
            except (ValueError, TypeError) as e:
                if transient_ok:
                    self._transient.push(request, -request.priority)
                    self._inc("scheduler/enqueued/memory")
                    self._inc("scheduler/enqueued")
                    results[i] = True
                    continue
                logger.error(
                    "Request %(request)s refused: a shared frontier (FRONTIER_URL) stores "
                    "requests as JSON with callbacks by spider method name, and this one "
                    "cannot be stored: %(reason)s",
                    {"request": request, "reason": e}, extra={"spider": self.spider})
                self._inc("frontier/refused")
                continue
            if fp:
                if len(cache) >= SEEN_CACHE_SIZE:
                    cache.clear()
                cache.add(fp)
                fp = bytes.fromhex(fp)
            meta = request._meta
            args += (fp, max(-_PRIO_MAX, min(_PRIO_MAX, request.priority)), data,
                     1 if meta and meta.get("is_start_request") else 0)
            sent.append(i)
        if not sent and start is None:
            return results
        out = self._call("push", args)
        if out and out[0] == -1:
            logger.warning(
                "%(n)d start requests not scheduled: another worker took over the start "
                "requests (this one did not renew its claim within FRONTIER_LEASE_TIMEOUT)",
                {"n": len(sent)}, extra={"spider": self.spider})
            return results
        pushed = 0
        for i, ok in zip(sent, out, strict=True):
            if ok:
                results[i] = True
                pushed += 1
            else:
                self.df.log(requests[i], self.spider)
        if pushed:
            self.queued += pushed
            self._inc("scheduler/enqueued/redis", pushed)
            self._inc("scheduler/enqueued", pushed)
        if start is not None and start["exhausted"]:
            self.meta["start_exhausted"] = True
        return results

    def lease(self, n: int) -> list:
        """Take up to ``n`` requests, next first, leased for ``lease_timeout_s``; each
        gets ``request._lease`` (its id; None for a transient request). With
        ``max_open``, fewer when this worker holds that many open leases.

        Raises:
            FrontierError: Redis failed.
        """
        out = []
        pop = self._transient.pop
        while len(out) < n:
            request = pop()
            if request is None:
                break
            out.append(request)
        prefetched = self._prefetched
        while prefetched and len(out) < n:
            out.append(prefetched.popleft())
        want = n - len(out)
        ask = want + self.prefetch if want > 0 else 0
        if self.max_open and ask:
            ask = min(ask, self.max_open - len(self.leased))
        if ask > 0:
            reply = self._call("lease", [self.worker, ask, self.lease_ms])
            self._note_expired(reply[0])
            spider = self.spider
            got = 0
            for j in range(1, len(reply), 2):
                lease_id = int(reply[j])
                try:
                    request = request_from_dict(json.loads(reply[j + 1]), spider)
                except (ValueError, KeyError, TypeError) as e:
                    logger.error("Request %(id)s in the shared frontier cannot be read "
                                 "(dropped): %(error)s", {"id": lease_id, "error": e},
                                 extra={"spider": spider})
                    self._pending_acks.append(lease_id)
                    self.leased.add(lease_id)
                    continue
                request._lease = lease_id
                self.leased.add(lease_id)
                if len(out) < n:
                    out.append(request)
                else:
                    prefetched.append(request)
                got += 1
            self.queued = max(0, self.queued - got)
            if got:
                self._inc("scheduler/dequeued/redis", got)
        if out:
            self._inc("scheduler/dequeued", len(out))
        return out

    def release(self, requests) -> None:
        """Queue leased requests again (transient ones in memory)."""
        ids = []
        for request in requests:
            if request._lease is None:
                self._transient.push(request, -request.priority)
            else:
                ids.append(request._lease)
        if ids:
            self._call("release", [self.worker, *ids])
            self.leased.difference_update(ids)
            self.queued += len(ids)

    def ack(self, lease_ids) -> None:
        """Note leases whose work is durable: forgotten in Redis at the next
        :meth:`commit`, with the worker's metadata."""
        self._pending_acks.extend(lease_ids)

    def commit(self, meta: dict | None = None) -> None:
        """Ack the leases noted since the last commit and write ``meta`` (JSON-able
        values by key: this worker's feed states, ``spider.state``) in one atomic call.

        Raises:
            FrontierError: Redis failed; nothing of this commit happened (the leases
                stay open and are acked at the next commit).
        """
        acks = self._pending_acks
        if not acks and not meta:
            return
        fields = []
        for key, value in (meta or {}).items():
            fields += (key, json.dumps(value))
        acked, lost = self._call("commit", [self.worker, len(fields) // 2, *fields, *acks])
        self._pending_acks = []
        self.leased.difference_update(acks)
        if meta:
            self.meta.update(meta)
        if lost:
            self._inc("frontier/leases_lost", lost)
            logger.warning(
                "%(n)d leases of this worker expired before their work was committed and "
                "were taken over by another worker: their pages are crawled twice (renew "
                "more often: raise FRONTIER_LEASE_TIMEOUT)", {"n": lost},
                extra={"spider": self.spider})

    def set_meta(self, meta: dict) -> None:
        """Write ``meta`` with the next commit (``start_requests``/``start_exhausted``
        are kept by :meth:`push_many` and ignored here)."""
        meta = {k: v for k, v in meta.items() if k not in ("start_requests", "start_exhausted")}
        if meta:
            self.commit(meta)

    def renew(self) -> list:
        """The heartbeat: extend this worker's open leases (and its claim on the start
        requests) by ``lease_timeout_s``.

        Returns:
            list[int]: ids of leases this worker lost (expired and taken over).

        Raises:
            FrontierError: Redis failed.
        """
        lost = self._call("renew", [self.worker, self.lease_ms, *self.leased])
        lost = [int(i) for i in lost]
        if lost:  # not renewed again; their acks are skipped at the commit
            self.leased.difference_update(lost)
            self._inc("frontier/leases_lost", len(lost))
        return lost

    def status(self) -> dict:
        """The shared crawl's state, after moving expired leases back to the queue.

        Returns:
            dict: ``{'queued': int, 'leased': int (by every worker), 'own_leases': int,
            'start_exhausted': bool, 'start_owner': str}``.

        Raises:
            FrontierError: Redis failed.
            FrontierPermanentError: the crawl's data is gone from it (flushed, evicted,
                a Redis restarted without persistence): finishing would lose requests.
        """
        queued, leased, exhausted, owner, expired, exists = self._call("status", [])
        if not exists:
            raise FrontierPermanentError(_lost_message(
                self.url, f"its mark ({self.key}:meta created) is gone"))
        self._note_expired(expired)
        self.queued = int(queued)
        return {"queued": int(queued), "leased": int(leased), "own_leases": len(self.leased),
                "start_exhausted": bool(exhausted),
                "start_owner": owner.decode() if isinstance(owner, bytes) else owner}

    def crawl_figures(self, own: dict) -> dict:
        """Publish this worker's figures and read the whole shared crawl's.

        Two Redis round trips (a pipeline, then :meth:`status`); the scheduler calls it
        every few seconds, never per request.

        Args:
            own: this worker's ``{'pages': int, 'items': int}``.

        Returns:
            dict: ``{'queued': int, 'leased': int, 'pages': int, 'items': int,
            'workers': [{'worker': str, 'pages': int, 'items': int,
            'last_seen_s': float | None (seconds since its last lease renewal, None if it
            never renewed one)}, ...]}`` (sorted by worker id; ``pages``/``items`` summed
            over every worker that ever published).

        Raises:
            FrontierError: Redis failed.
        """
        figures_key, workers_key = self._k("figures"), self._k("workers")
        entry = json.dumps({"pages": int(own.get("pages", 0)), "items": int(own.get("items", 0))})

        def publish_and_read():
            pipe = self.client.pipeline(transaction=False)
            pipe.hset(figures_key, self.worker, entry)
            pipe.hgetall(figures_key)
            pipe.hgetall(workers_key)
            pipe.time()
            return pipe.execute()

        _, figures, beats, (sec, usec) = call_with_retry(
            publish_and_read, self.url, self.retry_timeout_s, spider=self.spider,
            stats=self.stats, link=self.link)
        self._inc("frontier/redis_calls")
        now_ms = sec * 1000 + usec / 1000
        shared = self.status()
        workers = []
        for wid, raw in sorted(figures.items()):
            wid = wid.decode() if isinstance(wid, bytes) else wid
            f = json.loads(raw)
            beat = beats.get(wid.encode()) or beats.get(wid)
            workers.append({"worker": wid, "pages": f["pages"], "items": f["items"],
                            "last_seen_s": (round((now_ms - float(beat)) / 1000, 1)
                                            if beat is not None else None)})
        return {"queued": shared["queued"], "leased": shared["leased"],
                "pages": sum(w["pages"] for w in workers),
                "items": sum(w["items"] for w in workers), "workers": workers}

    def close(self, reason: str) -> list:
        """Commit pending acks, give back this worker's open leases and its claim on
        the start requests (other workers need not wait for them to expire).

        Returns:
            list: transient requests still queued (lost: they are not stored).
        """
        left = []
        while True:
            request = self._transient.pop()
            if request is None:
                break
            left.append(request)
        self._prefetched.clear()
        try:
            self.commit()
            if self.leased:
                self._call("release", [self.worker, *self.leased])
                self.leased.clear()
            self._call("unclaim", [self.worker])
        finally:
            self.scripts.close()
            self.client.close()
        return left

    def __len__(self) -> int:
        return self.queued + len(self._transient) + len(self._prefetched)

    def _note_expired(self, n):
        n = int(n)
        if n:
            self._inc("frontier/leases_expired", n)
            logger.warning("%(n)d leases expired (a worker died or stalled for "
                           "FRONTIER_LEASE_TIMEOUT): their requests are queued again",
                           {"n": n}, extra={"spider": self.spider})

    def _inc(self, key, count=1):
        if self.stats is not None:
            self.stats.inc_value(key, count, spider=self.spider)


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
