"""The shared frontier: one crawl across many processes and machines, on Redis.

:class:`RedisFrontier` has the interface of :class:`crawlfw.core.frontier.sqlite_frontier.SqliteFrontier`
(``push``, ``lease``, ``hosts_finished``, ``ack``, ``release``, ``commit``,
``set_meta``, ``meta``) over a Redis server named by ``FRONTIER_URL =
'redis://host:port/db'``. Every process (a "worker") with the same URL and key joins
the same crawl. Keys, under the prefix ``{crawlfw:<spider name>}`` (``FRONTIER_KEY``
overrides the part inside the braces; the braces are a Redis Cluster hash tag, so every
key of one crawl lives in one slot)::

    <prefix>:q:<host>    sorted set  one per host key with queued requests:
                                     request id -> order (priority, then LIFO/FIFO)
    <prefix>:ready       sorted set  host -> rank: the hosts that may start a request now
                                     (queued, below their concurrency, past their delay),
                                     by the priority of their head, then how long they
                                     have had requests queued
    <prefix>:since       hash        host -> when (a counter) its queue got its first
                                     request, while it has some
    <prefix>:next        sorted set  host -> its next allowed start (ms, Redis TIME), while
                                     that is in the future (DOWNLOAD_DELAY, AutoThrottle)
    <prefix>:inflight    hash        host -> requests leased and not reported finished
    <prefix>:flying      hash        leased request id -> worker, while counted in inflight
    <prefix>:delay       hash        host -> its delay (ms) set by AutoThrottle
    <prefix>:requests    hash        request id -> request as JSON (request_to_dict)
    <prefix>:scores      hash        request id -> "<order> <host>" (for requeues)
    <prefix>:seen        set         fingerprints of the dupefilter (20 bytes each)
    <prefix>:leases      sorted set  leased request id -> lease deadline (ms, Redis TIME)
    <prefix>:owners      hash        leased request id -> worker id
    <prefix>:meta        hash        seq (ids), queued (count), rseq, start_consumed,
                                     start_exhausted, layout (2), created (a Redis that
                                     lost the crawl lacks it)
    <prefix>:start       string      the worker scheduling the start requests (expires)
    <prefix>:workers     hash        worker id -> last heartbeat (ms)
    <prefix>:active      sorted set  worker id -> its last claim, lease, status or renewal
                                     (ms); members older than a lease timeout dropped, the
                                     key expires with them (how many workers share a host)
    <prefix>:figures     hash        worker id -> its pages and items (JSON; for status)
    <prefix>:worker:<id> hash        that worker's committed feeds and spider.state (JSON)

The host key of a request is :func:`crawlfw.core.frontier.api.host_key` (``slot_key``
without the IP cache: ``meta['download_slot']``, else the lower-case host name). A host with nothing queued,
nothing in flight and its next start passed keeps nothing in Redis: memory follows the
active hosts.

Every change is one Lua script, so it is atomic: a push goes through the dupefilter and
into its host's queue together (the host joins ``ready`` when it may start); a lease
takes the head of the best ready host (the highest priority of its head, then the host
whose requests have waited longest), one request at a time, so a host keeps its place
while it stays ready (up to its free concurrency) and a host with a backlog comes first
again when a transfer of its ends; it marks each request in flight for its host, sets the host's next start when it has a delay (randomized 0.5-1.5x with
``RANDOMIZE_DOWNLOAD_DELAY``) and moves the request to the leases with a deadline;
finished transfers reported by the engine (:meth:`RedisFrontier.hosts_finished`) travel
with the next push or lease, so they cost no round trip of their own.
:meth:`RedisFrontier.commit` acks leases and writes the worker's feed states in the same
call (the commit protocol of ARCHITECTURE.md, "Lose nothing"). A worker renews its open
leases (:meth:`RedisFrontier.renew`, the heartbeat); a lease whose deadline passed
(``FRONTIER_LEASE_TIMEOUT`` seconds without a renewal: the worker died or hung) goes back
to its host's queue at the next call of any worker, giving its host's in-flight count
back when it still held one; a worker started again under the same id queues its
earlier process's leases again at once. A worker leases ``prefetch`` requests ahead of
need, so most leases cost no round trip; only of hosts without a delay (the delay keeps
spacing starts) and, when other workers are active, while the host keeps half of its
concurrency free or in the places of this worker's transfers of the host reported
finished in the same call, up to its share of the host (a request leased ahead counts
in its host's concurrency while it waits for credit: it must not keep other workers
from the host). Requests leased ahead are served by host readiness: those of a host
that still had requests queued first (their place holds that work back), and a
finished transfer of a host that was at its limit is reported with the next lease at
once, so its place is leased again without waiting for :data:`REPORT_S`.

Requests are stored as JSON (callbacks by spider method name), never pickled: a shared
store must not let one worker run code in another. A request that cannot be stored
(its ``meta``, ``cookies`` or ``cb_kwargs`` are not JSON-able, or its callback is no
spider method) is refused with an ERROR naming it, unless it belongs to the crawl's own
machinery (``transient_ok``: robots.txt, ``crawler.engine.download``), which stays in
this worker's memory.

Retries, the crawl's retry budget, worker ids and the start check live in
:mod:`crawlfw.core.frontier.redis_link` (re-exported here). A script whose reply was lost is
safe to run again: pushes go through the dupefilter, acks and releases check the owner,
finished reports check the worker, and leases taken by a lost call are not renewed, so
they expire and go back to the queue.

A crawl written by crawlfw before per-host queues (one ``<prefix>:queue`` sorted set) is
migrated by the first worker's claim, in one script: each queued request goes to its
host's queue (the host read from its stored URL or ``download_slot``). Stop every worker
of the old version first.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from crawlfw.core.frontier.api import FrontierBase, host_key
from crawlfw.core.frontier.frontier import SEEN_CACHE_SIZE, FrontierError, JobMeta, _Lifo
from crawlfw.core.frontier.pqueue import PriorityQueue
from crawlfw.core.frontier.redis_link import (
    PROBE_TIMEOUT_S,
    RETRY_FIRST_S,
    RETRY_MAX_S,
    FrontierPermanentError,
    FrontierStopping,
    RedisLink,
    Scripts,
    _lost_message,
    _redact,
    call_with_retry,
    check_server,
    frontier_key,
    redis_link,
    worker_id,
)
from crawlfw.dupefilters import RFPDupeFilter
from crawlfw.utils.reqser import request_from_dict, request_to_dict

if TYPE_CHECKING:
    import redis

    from crawlfw.core.frontier.api import DupeFilter
    from crawlfw.http import Request
    from crawlfw.spiders import Spider
    from crawlfw.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

__all__ = ["RedisFrontier", "Scripts", "worker_id", "frontier_key", "call_with_retry",
           "check_server", "RedisLink", "redis_link", "FrontierPermanentError",
           "FrontierStopping", "FrontierError", "host_key", "LAYOUT", "RETRY_FIRST_S", "RETRY_MAX_S",
           "PROBE_TIMEOUT_S"]

#: The version of the Redis layout written here (1: one queue for every host).
LAYOUT = 2

#: Most expired leases moved back to the queue by one call.
EXPIRE_BATCH = 1000

#: Seconds a finished transfer's report may wait for a call this worker makes anyway
#: (a push, a lease that needs Redis); a lease served from the prefetched requests past
#: that sends it (its host may be ready for another worker). A transfer of a host that
#: was at its concurrency at its lease is sent with the next lease, without the wait,
#: unless the worker still has a request of a host with work queued leased ahead.
REPORT_S = 0.05

#: Most ready hosts a lease looks past (hosts with a delay are never prefetched) before
#: it stops prefetching.
PREFETCH_SCAN = 64

# The queue order of a request: -priority * 2**40, then its id (FIFO) or -id (LIFO);
# ZRANGE takes the lowest first. A start request (meta['is_start_request']) is
# -priority * 2**40 + 2**38 + id: first in first out, after the other requests of its
# priority, before those of lower priorities (Scrapy 2.13's start queues: a priority's
# regular requests go first); ids stay below 2**38. Priorities beyond +-4095 share the
# extreme order (the sum stays below 2**53, exact in Lua's doubles).
_PRIO_UNIT = 1 << 40
_PRIO_MAX = 4095

# Every script gets the same keys (KEYS[1..16]); per-host queues are named from the
# prefix inside the script (same hash tag, so the same Cluster slot).
_KEY_NAMES = ("meta", "requests", "scores", "seen", "leases", "owners", "flying",
              "inflight", "ready", "next", "delay", "start", "queue", "worker:%s",
              "workers", "figures", "since", "active")

# The prelude of every script: names, clock, and the per-host bookkeeping.
# `touched` collects hosts whose readiness may have changed; settle() decides each once.
# A host's rank in `ready`: the class of its head (-priority * U, + U/4 for a start
# request) plus its `since`, a counter (below U/4) taken when its queue got its first
# request and kept while it has requests queued (ready or not), so among hosts of one
# class the one whose requests have waited longest goes first: a host with a backlog
# keeps its concurrency busy, as HostQueues does.
_PRELUDE = """
local META, REQS, SCORES, SEEN, LEASES, OWNERS = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local FLYING, INFLIGHT, READY, NEXT, DELAY, START = KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
local OLDQ, WORKER, WORKERS, FIGURES, SINCE = KEYS[13], KEYS[14], KEYS[15], KEYS[16], KEYS[17]
local ACTIVE = KEYS[18]
local P = string.sub(META, 1, -6)
local U = PRIO_UNIT
local QUARTER = U / 4
local now = 0
local CONC = 1
local touched, touched_order = {}, {}
local function touch(host)
  if not touched[host] then
    touched[host] = true
    touched_order[#touched_order + 1] = host
  end
end
local function qkey(host) return P .. ':q:' .. host end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function fmt(x) return string.format('%.17g', x) end
local function parse(v)
  local i = string.find(v, ' ', 1, true)
  if not i then return tonumber(v), nil end
  return tonumber(string.sub(v, 1, i - 1)), string.sub(v, i + 1)
end
local function lost(what) error({err = 'CRAWLFW_LOST ' .. what}) end
local function class_of(s)
  local c = math.floor((s + U / 2) / U) * U
  if s - c > QUARTER then c = c + QUARTER end
  return c
end
local function land(host)
  if redis.call('HINCRBY', INFLIGHT, host, -1) <= 0 then redis.call('HDEL', INFLIGHT, host) end
  touch(host)
end
local function refresh(host)
  local head = redis.call('ZRANGE', qkey(host), 0, 0, 'WITHSCORES')
  local nxt = redis.call('ZSCORE', NEXT, host)
  if nxt and tonumber(nxt) <= now then
    redis.call('ZREM', NEXT, host)
    nxt = nil
  end
  local flying = redis.call('HGET', INFLIGHT, host)
  if #head == 0 then
    redis.call('ZREM', READY, host)
    redis.call('HDEL', SINCE, host)
    if not flying and not nxt then redis.call('HDEL', DELAY, host) end
    return
  end
  local since = redis.call('HGET', SINCE, host)
  if not since then
    since = redis.call('HINCRBY', META, 'rseq', 1)
    redis.call('HSET', SINCE, host, since)
  end
  if (flying and tonumber(flying) >= CONC) or nxt then
    redis.call('ZREM', READY, host)
    return
  end
  redis.call('ZADD', READY, class_of(tonumber(head[2])) + tonumber(since), host)
end
local function settle()
  for _, host in ipairs(touched_order) do refresh(host) end
  touched, touched_order = {}, {}
end
local function requeue(id)
  local v = redis.call('HGET', SCORES, id)
  if not v then lost('leased request ' .. id .. ' has no queue order in ' .. SCORES) end
  local order, host = parse(v)
  if not host then lost('leased request ' .. id .. ' has no host in ' .. SCORES) end
  redis.call('ZREM', LEASES, id)
  redis.call('HDEL', OWNERS, id)
  if redis.call('HDEL', FLYING, id) == 1 then land(host) end
  redis.call('ZADD', qkey(host), order, id)
  redis.call('HINCRBY', META, 'queued', 1)
  touch(host)
end
local function expire()
  local ids = redis.call('ZRANGEBYSCORE', LEASES, '-inf', now, 'LIMIT', 0, EXPIRE_BATCH)
  for _, id in ipairs(ids) do requeue(id) end
  return #ids
end
local function promote()
  local hosts = redis.call('ZRANGEBYSCORE', NEXT, '-inf', now)
  if #hosts > 0 then redis.call('ZREMRANGEBYSCORE', NEXT, '-inf', now) end
  for _, host in ipairs(hosts) do touch(host) end
end
-- Transfers of these leases (ids joined by ',') ended: their hosts' counts go down.
local function finished(worker, ids)
  local per_host = {}
  for id in string.gmatch(ids, '[^,]+') do
    if redis.call('HGET', FLYING, id) == worker then
      redis.call('HDEL', FLYING, id)
      local _, host = parse(redis.call('HGET', SCORES, id) or '0')
      if host then
        land(host)
        per_host[host] = (per_host[host] or 0) + 1
      end
    end
  end
  return per_host
end
-- This worker called Redis now; returns how many workers did within `window` ms.
local function present(worker, window)
  redis.call('ZADD', ACTIVE, now, worker)
  redis.call('ZREMRANGEBYSCORE', ACTIVE, '-inf', now - window)
  redis.call('PEXPIRE', ACTIVE, window)
  return redis.call('ZCARD', ACTIVE)
end
"""

# The head of the scripts that change a running crawl: its `created` mark must still be
# in `meta`; a Redis that lost the crawl (flushed, restarted without persistence, keys
# evicted) answers an error the client words (call_with_retry), instead of the script
# recreating part of a crawl.
_GUARD = """
if redis.call('HEXISTS', META, 'created') == 0 then
  return redis.error_reply('CRAWLFW_LOST its mark (' .. META .. ' created) is gone')
end
"""

# ARGV: worker, lifo (0/1), start consumed (-1: not start requests), start exhausted
# (0/1), claim ms, concurrency per host, finished lease ids ('a,b,...'), then
# (fingerprint or '', priority, json, start request 0/1, host) per request.
# Returns 1/0 per request (0: seen before), or {-1} when another worker holds the
# start requests' claim.
_PUSH = _PRELUDE + _GUARD + """
local worker = ARGV[1]
local lifo = ARGV[2] == '1'
local consumed = tonumber(ARGV[3])
if consumed >= 0 then
  local owner = redis.call('GET', START)
  if owner and owner ~= worker then return {-1} end
end
now = now_ms()
CONC = tonumber(ARGV[6])
finished(worker, ARGV[7])
local out = {}
local pushed = 0
for i = 8, #ARGV, 5 do
  local ok = 1
  if ARGV[i] ~= '' then ok = redis.call('SADD', SEEN, ARGV[i]) end
  if ok == 1 then
    local id = redis.call('HINCRBY', META, 'seq', 1)
    local score = -tonumber(ARGV[i + 1]) * U
    if ARGV[i + 3] == '1' then
      score = score + QUARTER + id
    else
      score = score + (lifo and -id or id)
    end
    local host = ARGV[i + 4]
    redis.call('ZADD', qkey(host), score, id)
    redis.call('HSET', REQS, id, ARGV[i + 2])
    redis.call('HSET', SCORES, id, fmt(score) .. ' ' .. host)
    touch(host)
    pushed = pushed + 1
  end
  out[#out + 1] = ok
end
if pushed > 0 then redis.call('HINCRBY', META, 'queued', pushed) end
settle()
if consumed >= 0 then
  redis.call('HINCRBY', META, 'start_consumed', consumed)
  if ARGV[4] == '1' then
    redis.call('HSET', META, 'start_exhausted', '1')
    redis.call('DEL', START)
  else
    redis.call('SET', START, worker, 'PX', ARGV[5])
  end
end
return out
"""

# ARGV: worker, n (wanted), prefetch (more, of hosts without a delay), lease ms,
# concurrency per host, default delay ms, randomize (0/1), seed (1..2**31-2), finished
# lease ids ('a,b,...'), m, then m (host, this worker's requests of it still leased)
# pairs for the hosts of the finished ids, then (host, delay ms or -1 to forget) pairs
# set by AutoThrottle.
# A worker may lease ahead (beyond `n`) from a host while it keeps half of the host's
# concurrency free, or, past that, as many as the finished transfers of that host it
# reports in this call while it holds less than its share of the host (the host's
# concurrency / the workers active within a lease timeout, rounded up; what it leases
# for `n` counts in what it holds); a worker alone (in `active`) up to the host's limit.
# Returns {expired, ms until the earliest delayed host may start (-1: none),
# id1, host1, json1, flag1, id2, ...}; a flag is 2 when the request's host is at its
# concurrency after it, 1 when the host still has requests queued, else 0.
_LEASE = _PRELUDE + _GUARD + """
local worker = ARGV[1]
local want, extra = tonumber(ARGV[2]), tonumber(ARGV[3])
local deadline_ms = tonumber(ARGV[4])  -- (also the window of `active`)
CONC = tonumber(ARGV[5])
local default_delay = tonumber(ARGV[6])
local randomize = ARGV[7] == '1'
local seed = tonumber(ARGV[8])
now = now_ms()
local out = {expire(), -1}
local refill = finished(worker, ARGV[9])
local active = present(worker, deadline_ms)
local alone = active == 1
local cap = math.ceil(CONC / active)
local held = {}  -- host -> this worker's requests of it leased (for the reported hosts)
local nshare = tonumber(ARGV[10])
for i = 11, 10 + 2 * nshare, 2 do held[ARGV[i]] = tonumber(ARGV[i + 1]) end
for i = 11 + 2 * nshare, #ARGV, 2 do
  local ms = tonumber(ARGV[i + 1])
  if ms < 0 then redis.call('HDEL', DELAY, ARGV[i]) else redis.call('HSET', DELAY, ARGV[i], ms) end
  touch(ARGV[i])
end
promote()
settle()
local deadline = now + deadline_ms
local got, skip, scanned = 0, 0, 0
while got < want + extra do
  local top = redis.call('ZRANGE', READY, skip, skip)
  if #top == 0 then break end
  local host = top[1]
  local delay = tonumber(redis.call('HGET', DELAY, host) or default_delay)
  local own = refill[host] or 0
  if own > 0 and (held[host] or cap) >= cap then own = 0 end
  if got >= want and (delay > 0 or (not alone and own < 1 and
      tonumber(redis.call('HGET', INFLIGHT, host) or '0') + 1 > CONC / 2)) then
    -- (not prefetched: the delay must space the starts; a request waiting here for
    -- credit must not take more than half of its host's concurrency from other
    -- workers, unless it replaces a transfer of this worker that just ended)
    skip = skip + 1
    scanned = scanned + 1
    if scanned > PREFETCH_SCAN then break end
  else
    local q = qkey(host)
    local ids = redis.call('ZRANGE', q, 0, 0)
    if #ids == 0 then lost('ready host ' .. host .. ' has no queue ' .. q) end
    local id = ids[1]
    redis.call('ZREM', q, id)
    local data = redis.call('HGET', REQS, id)
    if not data then lost('queued request ' .. id .. ' has no data in ' .. REQS) end
    redis.call('ZADD', LEASES, deadline, id)
    redis.call('HSET', OWNERS, id, worker)
    redis.call('HSET', FLYING, id, worker)
    if got >= want and own > 0 then refill[host] = own - 1 end
    if held[host] then held[host] = held[host] + 1 end
    local flag = 0
    if redis.call('HINCRBY', INFLIGHT, host, 1) >= CONC then
      flag = 2
    elseif redis.call('ZCARD', q) > 0 then
      flag = 1
    end
    if delay > 0 then
      if randomize then
        seed = (seed * 16807) % 2147483647
        delay = delay * (0.5 + seed / 2147483647)
      end
      redis.call('ZADD', NEXT, now + math.floor(delay), host)
    end
    refresh(host)  -- (still ready: it keeps its place)
    out[#out + 1] = id
    out[#out + 1] = host
    out[#out + 1] = data
    out[#out + 1] = flag
    got = got + 1
  end
end
if got > 0 then redis.call('HINCRBY', META, 'queued', -got) end
local first = redis.call('ZRANGE', NEXT, 0, 0, 'WITHSCORES')
if #first > 0 then out[2] = tonumber(first[2]) - now end
return out
"""

# ARGV: worker, concurrency per host, number of meta fields, (field, json) pairs, then
# lease ids. A lease of this worker is forgotten (its host's in-flight count given back
# if no finished report did); one that expired and waits in the queue again is taken out
# of it (its work is done); one another worker leased since is left to it.
# Returns {acked, lost}.
_COMMIT = _PRELUDE + _GUARD + """
local worker = ARGV[1]
CONC = tonumber(ARGV[2])
now = now_ms()
local nmeta = tonumber(ARGV[3])
for i = 4, 3 + 2 * nmeta, 2 do
  redis.call('HSET', WORKER, ARGV[i], ARGV[i + 1])
end
local acked, gone = 0, 0
for i = 4 + 2 * nmeta, #ARGV do
  local id = ARGV[i]
  local owner = redis.call('HGET', OWNERS, id)
  local ok = false
  if owner == worker then
    redis.call('ZREM', LEASES, id)
    redis.call('HDEL', OWNERS, id)
    if redis.call('HDEL', FLYING, id) == 1 then
      local _, host = parse(redis.call('HGET', SCORES, id) or '0')
      if host then land(host) end
    end
    ok = true
  elseif not owner then
    local v = redis.call('HGET', SCORES, id)
    if v then
      local _, host = parse(v)
      if host and redis.call('ZREM', qkey(host), id) == 1 then
        redis.call('HINCRBY', META, 'queued', -1)
        touch(host)
        ok = true
      end
    end
  end
  if ok then
    redis.call('HDEL', REQS, id)
    redis.call('HDEL', SCORES, id)
    acked = acked + 1
  else
    gone = gone + 1
  end
end
settle()
return {acked, gone}
"""

# ARGV: worker, concurrency per host, lease ids. Queues this worker's leases among them
# again. Returns how many.
_RELEASE = _PRELUDE + """
now = now_ms()
CONC = tonumber(ARGV[2])
local n = 0
for i = 3, #ARGV do
  if redis.call('HGET', OWNERS, ARGV[i]) == ARGV[1] then
    requeue(ARGV[i])
    n = n + 1
  end
end
settle()
return n
"""

# ARGV: worker, lease ms, lease ids. Returns the ids this worker no longer holds
# (expired and taken over).
_RENEW = _PRELUDE + """
now = now_ms()
local deadline = now + tonumber(ARGV[2])
if redis.call('HEXISTS', META, 'created') == 1 then  -- (a crawl Redis lost: no key recreated)
  redis.call('HSET', WORKERS, ARGV[1], now)
  present(ARGV[1], tonumber(ARGV[2]))
end
if redis.call('GET', START) == ARGV[1] then
  redis.call('PEXPIRE', START, ARGV[2])
end
local gone = {}
for i = 3, #ARGV do
  if redis.call('HGET', OWNERS, ARGV[i]) == ARGV[1] then
    redis.call('ZADD', LEASES, deadline, ARGV[i])
  else
    gone[#gone + 1] = ARGV[i]
  end
end
return gone
"""

# ARGV: worker, its figures (JSON). Publishes them and returns {figures by worker (a flat
# HGETALL list), heartbeats by worker (idem), TIME}; a crawl Redis lost gets no key back.
_FIGURES = _PRELUDE + _GUARD + """
redis.call('HSET', FIGURES, ARGV[1], ARGV[2])
return {redis.call('HGETALL', FIGURES), redis.call('HGETALL', WORKERS), redis.call('TIME')}
"""

# ARGV: concurrency per host, worker, finished lease ids ('a,b,...'). Returns {queued,
# leased, start_exhausted (0/1), start owner or '', expired, the crawl's data exists
# (0/1: its `created` mark), ready hosts, hosts within their delay, hosts with requests
# in flight}.
_STATUS = _PRELUDE + """
now = now_ms()
CONC = tonumber(ARGV[1])
local expired = expire()
finished(ARGV[2], ARGV[3])
if ARGV[4] and redis.call('HEXISTS', META, 'created') == 1 then
  present(ARGV[2], tonumber(ARGV[4]))  -- (not for a crawl Redis lost: no key recreated)
end
promote()
settle()
return {tonumber(redis.call('HGET', META, 'queued') or '0'), redis.call('ZCARD', LEASES),
        redis.call('HEXISTS', META, 'start_exhausted'),
        redis.call('GET', START) or '', expired,
        redis.call('HEXISTS', META, 'created'), redis.call('ZCARD', READY),
        redis.call('ZCARD', NEXT), redis.call('HLEN', INFLIGHT)}
"""

# The host key of a stored request, as crawlfw.core.transport.slot.slot_key says (for a
# migration): meta download_slot, else the URL's host name in lower case.
_HOST_OF_JSON = """
local function host_of_json(data)
  local ok, r = pcall(cjson.decode, data or '')
  if not ok or type(r) ~= 'table' then return '' end
  if type(r.meta) == 'table' and r.meta.download_slot ~= nil then
    return tostring(r.meta.download_slot)
  end
  local netloc = string.match(tostring(r.url or ''), '^[%a][%w+.-]*://([^/?#]*)') or ''
  netloc = string.gsub(netloc, '^.*@', '')
  local host = string.match(netloc, '^%[([^%]]*)%]') or string.match(netloc, '^([^:]*)') or ''
  return string.lower(host)
end
"""

# ARGV: worker, claim ms, join only (0/1), concurrency per host.
# Marks the crawl as created (the mark tells a Redis that lost its data from a finished
# crawl), unless it has no mark and must not get one: {-1, 0, 0} with join only (the
# caller knows the crawl has a history), {-2, 0, 0, key} when another of its keys
# exists (a crawl partly lost: evicted, or flushed while workers ran). A crawl of
# layout 1 (one queue for every host) is migrated to per-host queues first.
# Returns {start_exhausted (0/1), start_consumed, claimed (0/1), requests migrated}.
_CLAIM_START = _PRELUDE + _HOST_OF_JSON + """
local t = redis.call('TIME')
now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
CONC = tonumber(ARGV[4])
local migrated = 0
if redis.call('HEXISTS', META, 'created') == 0 then
  if ARGV[3] == '1' then return {-1, 0, 0, 0} end
  for i = 1, #KEYS do
    if i ~= 12 and redis.call('EXISTS', KEYS[i]) == 1 then return {-2, 0, 0, KEYS[i]} end
  end
  redis.call('HSET', META, 'created', t[1], 'layout', 'LAYOUT')
elseif redis.call('HGET', META, 'layout') ~= 'LAYOUT' then
  local queued = redis.call('ZRANGE', OLDQ, 0, -1, 'WITHSCORES')
  for i = 1, #queued, 2 do
    local id = queued[i]
    local host = host_of_json(redis.call('HGET', REQS, id))
    redis.call('ZADD', qkey(host), queued[i + 1], id)
    redis.call('HSET', SCORES, id, queued[i + 1] .. ' ' .. host)
    touch(host)
  end
  migrated = #queued / 2
  redis.call('DEL', OLDQ)
  for _, id in ipairs(redis.call('ZRANGE', LEASES, 0, -1)) do
    local v = redis.call('HGET', SCORES, id)
    if v and not string.find(v, ' ', 1, true) then
      redis.call('HSET', SCORES, id, v .. ' ' .. host_of_json(redis.call('HGET', REQS, id)))
    end
  end
  redis.call('HSET', META, 'queued', migrated, 'layout', 'LAYOUT')
  settle()
end
present(ARGV[1], tonumber(ARGV[2]))
local consumed = tonumber(redis.call('HGET', META, 'start_consumed') or '0')
if redis.call('HEXISTS', META, 'start_exhausted') == 1 then return {1, consumed, 0, migrated} end
local owner = redis.call('GET', START)
if owner and owner ~= ARGV[1] then return {0, consumed, 0, migrated} end
redis.call('SET', START, ARGV[1], 'PX', ARGV[2])
return {0, consumed, 1, migrated}
"""

# ARGV: worker, concurrency per host. Queues again the leases held under this worker's
# id (by an earlier process of it that died). Returns how many.
_RECOVER = _PRELUDE + """
now = now_ms()
CONC = tonumber(ARGV[2])
local owners = redis.call('HGETALL', OWNERS)
local n = 0
for i = 1, #owners, 2 do
  if owners[i + 1] == ARGV[1] then
    requeue(owners[i])
    n = n + 1
  end
end
settle()
return n
"""

# ARGV: worker. Gives the start requests' claim up if held.
_UNCLAIM_START = _PRELUDE + """
if redis.call('GET', START) == ARGV[1] then redis.call('DEL', START) end
redis.call('ZREM', ACTIVE, ARGV[1])
return 0
"""

_SCRIPTS = {
    name: src.replace("PRIO_UNIT", str(_PRIO_UNIT)).replace("EXPIRE_BATCH", str(EXPIRE_BATCH))
    .replace("PREFETCH_SCAN", str(PREFETCH_SCAN)).replace("'LAYOUT'", f"'{LAYOUT}'")
    for name, src in {"push": _PUSH, "lease": _LEASE, "commit": _COMMIT, "release": _RELEASE,
                      "renew": _RENEW, "status": _STATUS, "recover": _RECOVER,
                      "claim": _CLAIM_START, "unclaim": _UNCLAIM_START,
                      "figures": _FIGURES}.items()
}


class _Ahead:
    """The requests a worker leased ahead of need, served by host readiness rather
    than first in first out: those whose host still had requests queued in Redis when
    they were leased (``hot``: each holds a place of a host other work waits for) go
    before the others, first in first out within each kind. O(1) per request."""

    __slots__ = ("hot", "cold")

    def __init__(self) -> None:
        self.hot: deque[Request] = deque()
        self.cold: deque[Request] = deque()

    def append(self, request: Request, hot: bool) -> None:
        (self.hot if hot else self.cold).append(request)

    def popleft(self) -> Request:
        """The next request to start (raises IndexError when empty)."""
        return self.hot.popleft() if self.hot else self.cold.popleft()

    def clear(self) -> None:
        self.hot.clear()
        self.cold.clear()

    def __len__(self) -> int:
        return len(self.hot) + len(self.cold)

    def __iter__(self) -> Iterator[Request]:
        yield from self.hot
        yield from self.cold


class RedisFrontier(FrontierBase):
    """The frontier shared by every worker of one crawl, in Redis (see the module doc);
    a :class:`~crawlfw.core.frontier.api.Frontier` (the stats and the requests kept in
    memory as :class:`~crawlfw.core.frontier.api.FrontierBase` counts them).

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
            ``CONCURRENT_REQUESTS``); only of ready hosts without a delay: up to half
            of a host's concurrency, or past it in the places of this worker's
            finished transfers of that host up to its share (the host's concurrency /
            the active workers, rounded up); a worker alone, up to the host's limit.
            Served by host readiness (those of a host with requests still queued
            first). They are this worker's open leases and count in their hosts'
            concurrency, renewed and given back at :meth:`close` like the others.
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
        host_limits: ``() -> (concurrency: int, delay_s: float, randomize: bool)``, the
            per-host rule the downloader's slots use
            (:func:`crawlfw.core.transport.hostpolicy.politeness_settings`), kept from the first
            :meth:`lease` on (``spider_opened`` handlers may set the spider's
            ``download_delay``). Default: ``(8, 0.0, True)``, Scrapy's defaults.
        rng: the random generator that seeds the delay's randomization (tests pass a
            seeded one).
        logunser: log the first request kept in memory because it cannot be stored
            (``LOG_UNSERIALIZABLE_REQUESTS``).

    Raises:
        FrontierPermanentError: the URL is not a Redis URL, authentication failed, or
            the crawl's keys are gone from Redis while it has history (see :meth:`open`).
        FrontierError: the server cannot be reached within ``retry_timeout_s``.
    """

    durable = True
    shared = True

    def __init__(self, url: str, key: str, dupefilter: DupeFilter, *, worker: str,
                 lifo: bool = True, lease_timeout_s: float = 60.0,
                 retry_timeout_s: float = 300.0, prefetch: int = 0, max_open: int = 0,
                 stats: StatsCollector | None = None, client: redis.Redis | None = None,
                 link: RedisLink | None = None, join_only: bool = False,
                 host_limits: Callable[[], tuple[int, float, bool]] | None = None,
                 rng: random.Random | None = None, logunser: bool = False) -> None:
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
        self.logunser = bool(logunser)
        self.link = link if link is not None else RedisLink()
        self.join_only = bool(join_only)
        self._fingerprint = (
            dupefilter.request_fingerprint if isinstance(dupefilter, RFPDupeFilter) else None
        )
        self._transient = PriorityQueue(lambda priority: _Lifo())
        self._seen_cache: set[str] = set()
        self._pending_acks: list[int] = []
        self.leased: set[int] = set()  # ids of this worker's open leases
        self.prefetch = max(0, int(prefetch))
        self.max_open = max(0, int(max_open))
        self._prefetched = _Ahead()  # leased ahead, not handed out yet (in `leased`)
        self._limited: set[str] = set()  # hosts at their concurrency at their last lease here
        self._urgent = False  # a finished transfer of such a host waits to be reported
        self._finished_hosts: set[str] = set()  # the hosts of `_finished`
        self.queued = 0  # the shared queue's length at the last lease or status call
        self._host_limits = host_limits or (lambda: (8, 0.0, True))
        self._limits: tuple[int, int, bool] | None = None  # (concurrency, delay ms, randomize), read when first needed
        self._rng = rng or random.Random()
        self._flying: dict[str, deque[int]] = {}  # host -> deque of this worker's lease ids counted in flight
        self._finished: list[int] = []  # lease ids whose transfers ended, sent with the next call
        self._finished_s = 0.0  # since when (monotonic s) _finished is not empty
        self._delays: dict[str, int] = {}  # host -> delay ms (AutoThrottle), sent with the next lease
        self._next_ready_at: float | None = None  # monotonic s when a host waiting for its delay may start
        try:
            self.client = client or redis.Redis.from_url(
                url, socket_timeout=30, socket_connect_timeout=5, protocol=2)
        except ValueError as e:
            raise FrontierPermanentError(
                f"FRONTIER_URL {_redact(url)!r} is not a Redis URL: {e}") from e
        self._keys = [self._k(name % worker if "%s" in name else name) for name in _KEY_NAMES]
        self.scripts = Scripts(self.client, _SCRIPTS)
        self.meta = self._read_meta()

    def _k(self, name: str) -> str:
        return f"{self.key}:{name}"

    @property
    def limits(self) -> tuple[int, int, bool]:
        """``(concurrency per host, delay ms, randomize)``, from ``host_limits``; kept
        from the first :meth:`lease` on (``spider_opened`` handlers, which run before
        it, may set the spider's ``download_delay``, as AutoThrottle does)."""
        if self._limits is not None:
            return self._limits
        concurrency, delay_s, randomize = self._host_limits()
        return (max(1, int(concurrency)), max(0, int(round(delay_s * 1000))),
                bool(randomize))

    # --- Redis calls --------------------------------------------------------------------

    def _call(self, name: str, args: list[Any]) -> Any:
        """Run script ``name``; retry a lost connection with backoff
        (:func:`call_with_retry`).

        Raises:
            FrontierError: Redis stayed unreachable for ``retry_timeout_s``, or answered
                with an error (out of memory, a read-only replica...).
        """
        run, keys = self.scripts.run, self._keys
        result = call_with_retry(lambda: run(name, keys, args), self.url,
                                 self.retry_timeout_s, spider=self.spider, stats=self.stats,
                                 link=self.link)
        self._inc("frontier/redis_calls")
        return result

    def _read_meta(self) -> JobMeta:
        reply = self._call("claim", [self.worker, self.lease_ms, 1 if self.join_only else 0,
                                     self.limits[0]])
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
        if int(reply[3]):
            logger.info("Crawl %(key)s on %(url)s migrated to per-host queues (layout "
                        "%(layout)d): %(n)d queued requests", {
                            "key": self.key, "url": _redact(self.url), "layout": LAYOUT,
                            "n": int(reply[3])})
        self.start_owner = bool(claimed)
        meta = JobMeta(start_requests=int(consumed), start_exhausted=not claimed)
        stored = call_with_retry(lambda: self.client.hgetall(self._k(f"worker:{self.worker}")),
                                 self.url, self.retry_timeout_s, spider=self.spider,
                                 stats=self.stats, link=self.link)
        for field, value in stored.items():  # bytes (a client made here decodes nothing)
            meta[field.decode() if isinstance(field, bytes) else field] = json.loads(value)
        meta["resumed"] = bool(stored)
        return meta

    # --- the queue ----------------------------------------------------------------------

    def open(self, spider: Spider) -> None:
        """Bind the spider whose methods are the requests' callbacks; log what the shared
        crawl holds."""
        self.spider = spider
        recovered = self._call("recover", [self.worker, self.limits[0]])
        if recovered:
            logger.info("%(n)d leases of an earlier process of worker %(worker)s queued "
                        "again", {"n": recovered, "worker": self.worker},
                        extra={"spider": spider})
        queued, leased, exhausted, owner = self._call("status", [self.limits[0], self.worker,
                                                                 ""])[:4]
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

    def push(self, request: Request, *, transient_ok: bool = False) -> bool:
        """Queue one request (see :meth:`push_many`)."""
        return self.push_many([request], transient_ok=transient_ok)[0]

    def push_many(self, requests: Sequence[Request], *, transient_ok: bool = False,
                  start: Mapping[str, Any] | None = None) -> list[bool]:
        """Queue ``requests`` through the shared dupefilter, each in its host's queue,
        in one Redis call (which also carries the finished transfers noted by
        :meth:`hosts_finished`).

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
        args: list[Any] = [self.worker, "1" if self.lifo else "0",
                -1 if start is None else start["consumed"],
                1 if start is not None and start["exhausted"] else 0, self.lease_ms,
                self.limits[0], ""]
        sent: list[int] = []  # indexes of requests sent
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
                data = json.dumps(request_to_dict(request, self.spider, compact=True),
                                  separators=(",", ":"), allow_nan=False)
            except (ValueError, TypeError) as e:
                if transient_ok:
                    self._transient.push(request, -request.priority)
                    self._kept_in_memory(request)
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
                fp = bytes.fromhex(fp)  # type: ignore[assignment]  # the hex str's bytes, for Redis
            meta = request._meta
            args += (fp, max(-_PRIO_MAX, min(_PRIO_MAX, request.priority)), data,
                     1 if meta and meta.get("is_start_request") else 0, str(host_key(request)))
            sent.append(i)
        if not sent and start is None:
            return results
        args[6] = self._take_finished()
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

    def lease(self, n: int, now_s: float | None = None) -> list[Request]:
        """Take up to ``n`` requests of hosts that may start one now (below their
        concurrency across every worker, past their delay), leased for
        ``lease_timeout_s``: the head of the ready host whose head has the highest
        priority, among equals the host whose requests have waited longest (as
        :class:`crawlfw.core.frontier.hostqueues.HostQueues`), one request at a time (so a host
        gives up to its free concurrency before the next). Each gets ``request._lease`` (its id), ``request._host`` (its
        host key: report its end with :meth:`hosts_finished`) and ``request._paced``
        (True: the downloader's slot applies only its concurrency, not the delay nor a
        shared permit); a transient request gets none of them (it was never counted:
        the downloader's slot applies all of its politeness). With ``max_open``, fewer when this worker holds that many open
        leases. The finished transfers noted since the last call travel in the same
        call. Requests leased ahead (``prefetch``) are served first, those of a host
        that still had requests queued before the others (first in first out within
        each kind); Redis is called when they do not cover ``n``, when a finished
        transfer of a host that was at its limit waits and none of the first kind is
        left in hand, or when a report waited
        :data:`REPORT_S`, and each call leases ahead again up to ``prefetch``.

        Args:
            n: the most requests wanted (the Engine's credit).
            now_s: ``time.monotonic()`` seconds (None: now); Redis's clock decides the
                delays.

        Returns:
            list[Request]: at most ``n``.

        Raises:
            FrontierError: Redis failed.
        """
        out: list[Request] = []
        pop = self._transient.pop
        while len(out) < n:
            request = pop()
            if request is None:
                break
            out.append(request)
        prefetched = self._prefetched
        hot = prefetched.hot
        while hot and len(out) < n:
            out.append(hot.popleft())
        need = n - len(out)
        ahead = len(prefetched)
        if need > ahead or (self._finished and (
                (self._urgent and not hot)  # (else this worker has such work in hand)
                or time.monotonic() - self._finished_s >= REPORT_S)):
            want = max(0, need - ahead)
            extra = max(0, self.prefetch - max(0, ahead - need))
            if self.max_open and want + extra:
                room = max(0, self.max_open - len(self.leased))
                want = min(want, room)
                extra = min(extra, room - want)
            if self._limits is None:
                self._limits = self.limits
            concurrency, delay_ms, randomize = self._limits
            shares = self._finished_hosts
            args = [self.worker, want, extra, self.lease_ms, concurrency, delay_ms,
                    1 if randomize else 0, self._rng.randint(1, 2147483646),
                    self._take_finished(), len(shares)]
            if shares:
                flying = self._flying
                for host in shares:
                    ids = flying.get(host)
                    args += (host, len(ids) if ids else 0)
            if self._delays:
                for host, ms in self._delays.items():
                    args += (host, ms)
                self._delays = {}
            reply = self._call("lease", args)
            self._note_expired(reply[0])
            wait_ms = int(reply[1])
            self._next_ready_at = (time.monotonic() + wait_ms / 1000) if wait_ms >= 0 else None
            spider = self.spider
            flying = self._flying
            limited = self._limited
            got = 0
            for j in range(2, len(reply), 4):
                lease_id = int(reply[j])
                host = reply[j + 1].decode("utf-8", "surrogateescape")
                flag = int(reply[j + 3])
                if flag == 2:
                    limited.add(host)
                elif limited:
                    limited.discard(host)
                got += 1
                self.leased.add(lease_id)
                ids = flying.get(host)
                if ids is None:
                    ids = flying[host] = deque()
                ids.append(lease_id)
                try:
                    request = request_from_dict(json.loads(reply[j + 2]), spider)
                except (ValueError, KeyError, TypeError) as e:
                    logger.error("Request %(id)s in the shared frontier cannot be read "
                                 "(dropped): %(error)s", {"id": lease_id, "error": e},
                                 extra={"spider": spider})
                    self._pending_acks.append(lease_id)
                    self._finished.append(ids.pop())  # (never downloaded)
                    if not ids:
                        del flying[host]
                    continue
                request._lease = lease_id
                request._host = host
                request._paced = True  # counted and spaced here: the downloader need not
                if len(out) < n:  # (in the order Redis chose)
                    out.append(request)
                else:
                    prefetched.append(request, flag > 0)
            self.queued = max(0, self.queued - got)
            if got:
                self._inc("scheduler/dequeued/redis", got)
        while prefetched and len(out) < n:
            out.append(prefetched.popleft())
        if out:
            self._inc("scheduler/dequeued", len(out))
        return out

    def hosts_finished(self, counts: Mapping[str, int], now_s: float | None = None) -> None:
        """Transfers of requests this frontier leased ended (downloaded, failed, dropped
        or answered by a middleware, released): ``{host key: count}``. Noted here and
        sent with the next call to Redis (a push, a lease that needs Redis, a status:
        no round trip of its own; a worker pushes the links of each page it scrapes, and
        an idle one asks the status ten times a second), or by a lease served from the
        prefetched requests once it waited :data:`REPORT_S` (at once for a host that was
        at its concurrency at its last lease here); there each host's in-flight
        count goes down and the host may become ready again, for every worker. A count
        beyond what this worker has in flight for the host is ignored.

        Args:
            counts: ``{host key: transfers ended}``.
            now_s: ``time.monotonic()`` seconds (unused: Redis keeps the time).
        """
        flying = self._flying
        finished = self._finished
        limited = self._limited
        if not finished:
            self._finished_s = time.monotonic()
        for host, count in counts.items():
            ids = flying.get(host)
            if ids is None:
                continue
            if host in limited:
                self._urgent = True
            self._finished_hosts.add(host)
            while count > 0 and ids:
                finished.append(ids.popleft())
                count -= 1
            if not ids:
                del flying[host]
                limited.discard(host)

    def _take_finished(self) -> str:
        self._urgent = False
        self._finished_hosts = set()
        if not self._finished:
            return ""
        ids, self._finished = self._finished, []
        return ",".join(map(str, ids))

    def next_ready_in_s(self, now_s: float | None = None) -> float | None:
        """Seconds until a host waiting for its delay may start a request (as Redis said
        at the last lease), ``0.0`` when that has passed; None when no host waits for a
        delay. Requests other workers push are found by the scheduler's polling."""
        if self._next_ready_at is None:
            return None
        wait = self._next_ready_at - (time.monotonic() if now_s is None else now_s)
        return wait if wait > 0 else 0.0

    def set_host_delay(self, host: str, delay_s: float | None) -> None:
        """Set ``host``'s delay between starts (AutoThrottle's), for every worker: sent
        with the next lease that needs Redis; None forgets it (the default delay again). The host forgets
        it too once it has nothing queued or in flight and its delay has passed."""
        self._delays[host] = -1 if delay_s is None else max(0, int(round(delay_s * 1000)))

    def release(self, requests: Iterable[Request]) -> None:
        """Queue leased requests again (transient ones in memory); their hosts' in-flight
        counts go down with them."""
        ids: list[int] = []
        for request in requests:
            if request._lease is None:
                self._transient.push(request, -request.priority)
            else:
                ids.append(request._lease)
                host = request._host
                host_ids = self._flying.get(host) if host is not None else None
                if host is not None and host_ids is not None and request._lease in host_ids:
                    host_ids.remove(request._lease)
                    if not host_ids:
                        del self._flying[host]
        if ids:
            self._call("release", [self.worker, self.limits[0], *ids])
            self.leased.difference_update(ids)
            self.queued += len(ids)

    def ack(self, lease_ids: Sequence[int]) -> None:
        """Note leases whose work is durable: forgotten in Redis at the next
        :meth:`commit`, with the worker's metadata."""
        self._pending_acks.extend(lease_ids)

    def commit(self, meta: Mapping[str, Any] | None = None) -> None:
        """Ack the leases noted since the last commit and write ``meta`` (JSON-able
        values by key: this worker's feed states, ``spider.state``) in one atomic call.

        Raises:
            FrontierError: Redis failed; nothing of this commit happened (the leases
                stay open and are acked at the next commit).
        """
        acks = self._pending_acks
        if not acks and not meta:
            return
        fields: list[str] = []
        for key, value in (meta or {}).items():
            fields += (key, json.dumps(value))
        acked, lost = self._call("commit", [self.worker, self.limits[0], len(fields) // 2,
                                            *fields, *acks])
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

    def set_meta(self, meta: Mapping[str, Any]) -> None:
        """Write ``meta`` with the next commit (``start_requests``/``start_exhausted``
        are kept by :meth:`push_many` and ignored here)."""
        meta = {k: v for k, v in meta.items() if k not in ("start_requests", "start_exhausted")}
        if meta:
            self.commit(meta)

    def renew(self) -> list[int]:
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

    def status(self) -> dict[str, Any]:
        """The shared crawl's state, after moving expired leases back to the queue.

        Returns:
            dict: ``{'queued': int, 'leased': int (by every worker), 'own_leases': int,
            'start_exhausted': bool, 'start_owner': str, 'ready_hosts': int (may start a
            request now), 'delayed_hosts': int (waiting for their delay),
            'busy_hosts': int (with requests in flight)}``.

        Raises:
            FrontierError: Redis failed.
            FrontierPermanentError: the crawl's data is gone from it (flushed, evicted,
                a Redis restarted without persistence): finishing would lose requests.
        """
        (queued, leased, exhausted, owner, expired, exists, ready, delayed,
         busy) = self._call("status", [self.limits[0], self.worker, self._take_finished(),
                                      self.lease_ms])
        if not exists:
            raise FrontierPermanentError(_lost_message(
                self.url, f"its mark ({self.key}:meta created) is gone"))
        self._note_expired(expired)
        self.queued = int(queued)
        return {"queued": int(queued), "leased": int(leased), "own_leases": len(self.leased),
                "start_exhausted": bool(exhausted),
                "start_owner": owner.decode() if isinstance(owner, bytes) else owner,
                "ready_hosts": int(ready), "delayed_hosts": int(delayed),
                "busy_hosts": int(busy)}

    def describe_pending(self) -> dict[str, Any]:
        """What the shared frontier holds, for the stall report: ``{'queued': int,
        'leased': int, 'ready hosts': int, 'hosts in their delay': int, 'hosts with
        requests in flight': int, 'this worker's open leases': int}``.

        Raises:
            FrontierError: Redis failed.
        """
        status = self.status()
        return {"queued": status["queued"], "leased": status["leased"],
                "ready hosts": status["ready_hosts"],
                "hosts in their delay": status["delayed_hosts"],
                "hosts with requests in flight": status["busy_hosts"],
                "this worker's open leases": status["own_leases"]}

    def crawl_figures(self, own: Mapping[str, int]) -> dict[str, Any]:
        """Publish this worker's figures and read the whole shared crawl's.

        Two Redis round trips (a script, then :meth:`status`); the scheduler calls it
        every few seconds, never per request. Nothing is published once the crawl's
        keys are gone from Redis (no key of a lost crawl is written back).

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
            FrontierPermanentError: the crawl's keys are gone from Redis (nothing was
                published).
        """
        entry = json.dumps({"pages": int(own.get("pages", 0)), "items": int(own.get("items", 0))})
        # One script: it publishes only while the crawl's mark exists, so a worker never
        # writes back a key of a crawl Redis lost (FLUSHALL, a restart without persistence).
        flat_figures, flat_beats, (sec, usec) = self._call("figures", [self.worker, entry])
        figures = dict(zip(flat_figures[::2], flat_figures[1::2], strict=True))
        beats = dict(zip(flat_beats[::2], flat_beats[1::2], strict=True))
        now_ms = int(sec) * 1000 + int(usec) / 1000
        shared = self.status()
        workers: list[dict[str, Any]] = []
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

    def close(self, reason: str) -> list[Request]:
        """Commit pending acks, give back this worker's open leases and its claim on
        the start requests (other workers need not wait for them to expire).

        Returns:
            list: transient requests still queued (lost: they are not stored).
        """
        left: list[Request] = []
        while True:
            request = self._transient.pop()
            if request is None:
                break
            left.append(request)
        self._prefetched.clear()
        self._flying.clear()
        self._limited.clear()
        try:
            self.commit()
            if self.leased:
                self._call("release", [self.worker, self.limits[0], *self.leased])
                self.leased.clear()
            self._call("unclaim", [self.worker])
        finally:
            self.scripts.close()
            self.client.close()
        return left

    def __len__(self) -> int:
        return self.queued + len(self._transient) + len(self._prefetched)

    def pending_local(self) -> int:
        """Requests this worker keeps in memory only (transient: not storable in
        Redis), counted as pending by the shared idle check (:mod:`crawlfw.core.frontier.shared_idle`)."""
        return len(self._transient)

    def has_unacked(self) -> bool:
        """Whether this worker holds open leases or acks not yet committed (what a
        checkpoint would settle for the workers waiting on them)."""
        return bool(self.leased or self._pending_acks)

    def _note_expired(self, n: int | str | bytes) -> None:
        n = int(n)
        if n:
            self._inc("frontier/leases_expired", n)
            logger.warning("%(n)d leases expired (a worker died or stalled for "
                           "FRONTIER_LEASE_TIMEOUT): their requests are queued again",
                           {"n": n}, extra={"spider": self.spider})


