"""The Redis side of the shared frontier
(:class:`crawlfw.core.frontier.redis_frontier.RedisFrontier`): its key layout
(:data:`LAYOUT`) and the Lua scripts (``_SCRIPTS``) that make every change atomic; split
from :mod:`crawlfw.core.frontier.redis_frontier` (issue 19).

Keys, under the prefix ``{crawlfw:<spider name>}`` (``FRONTIER_KEY``
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
    <prefix>:control     hash        pause, resume, stop for every worker (the dashboard's
                                     whole view: crawlfw/core/frontier/redis_control.py)
    <prefix>:worker:<id> hash        that worker's committed feeds and spider.state (JSON)
    <prefix>:revisit:due sorted set  REVISIT_ENABLED: the revisit schedule by due time, its
    <prefix>:revisit:rec hash        records, and their claims (revisit:claim, revisit:out;
                                     crawlfw/core/frontier/redis_revisit.py)

Every change is one Lua script, so it is atomic: a push goes through the dupefilter and
into its host's queue together (the host joins ``ready`` when it may start); a lease
takes the head of the best ready host (the highest priority of its head, then the host
whose requests have waited longest), one request at a time, so a host keeps its place
while it stays ready (up to its free concurrency) and a host with a backlog comes first
again when a transfer of its ends; it marks each request in flight for its host, sets
the host's next start when it has a delay (randomized 0.5-1.5x with
``RANDOMIZE_DOWNLOAD_DELAY``) and moves the request to the leases with a deadline;
finished transfers reported by the engine
(:meth:`~crawlfw.core.frontier.redis_frontier.RedisFrontier.hosts_finished`) travel with
the next push or lease, so they cost no round trip of their own.
:meth:`~crawlfw.core.frontier.redis_frontier.RedisFrontier.commit` acks leases and
writes the worker's feed states in the same call (the commit protocol of
ARCHITECTURE.md, "Lose nothing"). A worker renews its open leases
(:meth:`~crawlfw.core.frontier.redis_frontier.RedisFrontier.renew`, the heartbeat); a
lease whose deadline passed (``FRONTIER_LEASE_TIMEOUT`` seconds without a renewal: the
worker died or hung) goes back to its host's queue at the next call of any worker,
giving its host's in-flight count back when it still held one; a worker started again
under the same id queues its earlier process's leases again at once.

A crawl written by crawlfw before per-host queues (one ``<prefix>:queue`` sorted set) is
migrated by the first worker's claim, in one script: each queued request goes to its
host's queue (the host read from its stored URL or ``download_slot``). Stop every worker
of the old version first.
"""

from __future__ import annotations

__all__ = ["LAYOUT", "EXPIRE_BATCH", "PREFETCH_SCAN"]

#: The version of the Redis layout written here (1: one queue for every host).
LAYOUT = 2

#: Most expired leases moved back to the queue by one call.
EXPIRE_BATCH = 1000

#: Most ready hosts a lease looks past (hosts with a delay are never prefetched) before
#: it stops prefetching.
PREFETCH_SCAN = 64

# The queue order of a request: -priority * 2**40, then its id (FIFO) or -id (LIFO);
# ZRANGE takes the lowest first. A start request (meta['is_start_request']; or a revisit,
# api.in_start_lane) is
# -priority * 2**40 + 2**38 + id: first in first out, after the other requests of its
# priority, before those of lower priorities (Scrapy 2.13's start queues: a priority's
# regular requests go first); ids stay below 2**38. Priorities beyond +-4095 share the
# extreme order (the sum stays below 2**53, exact in Lua's doubles).
_PRIO_UNIT = 1 << 40
_PRIO_MAX = 4095

# Every script gets the same keys (KEYS[1..19]); per-host queues are named from the
# prefix inside the script (same hash tag, so the same Cluster slot).
_KEY_NAMES = ("meta", "requests", "scores", "seen", "leases", "owners", "flying",
              "inflight", "ready", "next", "delay", "start", "queue", "worker:%s",
              "workers", "figures", "since", "active", "control")

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
local ACTIVE, CONTROL = KEYS[18], KEYS[19]
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
# HGETALL list), heartbeats by worker (idem), TIME, the commands for every worker
# (HGETALL control)}; a crawl Redis lost gets no key back.
_FIGURES = _PRELUDE + _GUARD + """
redis.call('HSET', FIGURES, ARGV[1], ARGV[2])
return {redis.call('HGETALL', FIGURES), redis.call('HGETALL', WORKERS), redis.call('TIME'),
        redis.call('HGETALL', CONTROL)}
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
