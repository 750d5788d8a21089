"""The revisit schedule of a shared crawl (``FRONTIER_URL`` with ``REVISIT_ENABLED``,
issue 32): the records in Redis beside the shared frontier, so every worker of the crawl
shares one schedule and it outlives any of them.

Keys, under the frontier's prefix (``{crawlfw:<spider name>}``, one Redis Cluster slot)::

    <prefix>:revisit:due    sorted set  fingerprint (hex) -> due time (seconds, the Redis
                                        server's clock); while claimed: the claim's expiry
    <prefix>:revisit:rec    hash        fingerprint (hex) -> the record as JSON: ``r`` the
                                        stored request (compact ``request_to_dict``),
                                        ``i`` interval (s), ``e`` ETag, ``m``
                                        Last-Modified, ``d`` digest, ``g`` 404/410 count,
                                        ``f`` fixed, ``u`` its version (one more at each
                                        write), ``a`` the last claim whose outcome it holds
    <prefix>:revisit:claim  hash        fingerprint (hex) -> its last claim number
    <prefix>:revisit:out    hash        fingerprint (hex) -> "<claim> <expiry>" while a
                                        revisit of it is out (claimed, queued, leased)

**Claims.** Taking due records is one Lua script (``revisit_take``): each due record not
out already is *claimed* (its claim number one up, marked out until ``now`` plus
``FRONTIER_LEASE_TIMEOUT``), and one that is out is skipped (``revisit/still_queued``)
until its claim ends. Once the worker has pushed the revisits into the shared frontier it
*confirms* their claims (``revisit_confirm``): the frontier holds them now (its own
leases bring a request back if the worker leasing it dies), so the claim holds until
the visit's outcome, or at most ``max(interval, REVISIT_INTERVAL_MAX)`` (then a revisit
is taken as lost, as Nutch's ``crawl.gen.delay``). A worker killed between its claim and
its push leaves claims that expire after the lease: the pages are claimed again, nothing
is lost. So a page whose revisit waits in a backlog longer than its interval is never
claimed a second time by another worker.

**Outcomes merge.** A visit's outcome is applied by reading the records it touches,
computing the new ones (the same rule as the other stores:
:meth:`~crawlfw.core.frontier.revisit_schedule._ScheduleBase.visited`) and writing them
with one script (``revisit_merge``) that first checks each record read is still at the
version read (else it is read again and recomputed: optimistic concurrency, as
``WATCH``/``MULTI``), and that no outcome of this claim or a later one was applied
already: an older visit's outcome never overwrites a newer one (it is *stale*, ignored).
It releases the claim (only its own: a later claim stays out).

**One clock.** Due times are the Redis server's clock: each worker measures its offset to
the server's ``TIME`` at every look at the earliest due time (:meth:`next_due`, every
second) and reads its own clock corrected by it (:meth:`RedisRevisitSchedule.clock`,
within a round trip), so workers whose clocks disagree still agree on what is due.

Requests are JSON, as the shared frontier's own, never pickles.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from crawlfw.core.frontier.redis_link import call_with_retry
from crawlfw.core.frontier.revisit import RevisitConfig, RevisitRecord
from crawlfw.core.frontier.revisit_schedule import _ScheduleBase

if TYPE_CHECKING:
    from crawlfw.core.frontier.redis_frontier import RedisFrontier
    from crawlfw.spiders import Spider

__all__ = ["MERGE_TRIES", "RedisRevisitSchedule"]

#: Times a visit's outcome is computed again when another worker changed its record
#: meanwhile, before the conflict is given up (logged; the record keeps the other's).
MERGE_TRIES = 8

# KEYS: due, rec, claim, out (every script).
_SCRIPTS = {
    # ARGV: now, limit, lease (s). Returns {still out, fp1, rec1, claim1, fp2, ...}.
    "revisit_take": """
local now = tonumber(ARGV[1])
local fps = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local until_s = string.format('%.17g', now + tonumber(ARGV[3]))
local out = {0}
for _, fp in ipairs(fps) do
  local rec = redis.call('HGET', KEYS[2], fp)
  if not rec then
    redis.call('ZREM', KEYS[1], fp)
    redis.call('HDEL', KEYS[3], fp)
    redis.call('HDEL', KEYS[4], fp)
  else
    local o = redis.call('HGET', KEYS[4], fp)
    local expiry = o and tonumber(string.match(o, ' (%S+)$'))
    if expiry and expiry > now then
      redis.call('ZADD', KEYS[1], expiry, fp)
      out[1] = out[1] + 1
    else
      local claim = redis.call('HINCRBY', KEYS[3], fp, 1)
      redis.call('HSET', KEYS[4], fp, claim .. ' ' .. until_s)
      redis.call('ZADD', KEYS[1], until_s, fp)
      out[#out + 1] = fp
      out[#out + 1] = rec
      out[#out + 1] = claim
    end
  end
end
return out
""",
    # ARGV: (fp, claim, hold until) per pushed revisit. Returns the claims confirmed.
    "revisit_confirm": """
local n = 0
for i = 1, #ARGV, 3 do
  local o = redis.call('HGET', KEYS[4], ARGV[i])
  if o and string.match(o, '^(%d+) ') == ARGV[i + 1] then
    redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1] .. ' ' .. ARGV[i + 2])
    redis.call('ZADD', KEYS[1], ARGV[i + 2], ARGV[i])
    n = n + 1
  end
end
return n
""",
    # ARGV: claimed fp, claim (0: none), n reads, n x (fp, version read; -1: absent),
    # then ops x ('p', fp, due, json) or ('d', fp, '', ''). Returns 1 (applied),
    # 0 (a record read changed meanwhile: read again) or -1 (stale: ignored).
    "revisit_merge": """
local claim = tonumber(ARGV[2])
local i = 4
local read = {}
for _ = 1, tonumber(ARGV[3]) do
  local cur = redis.call('HGET', KEYS[2], ARGV[i])
  local version = -1
  if cur then
    read[ARGV[i]] = cjson.decode(cur)
    version = read[ARGV[i]]['u'] or 0
  end
  if version ~= tonumber(ARGV[i + 1]) then return 0 end
  i = i + 2
end
if claim > 0 then
  local rec = read[ARGV[1]]
  if not rec then
    local cur = redis.call('HGET', KEYS[2], ARGV[1])
    rec = cur and cjson.decode(cur)
  end
  if not rec or (rec['a'] or 0) >= claim then return -1 end
  local o = redis.call('HGET', KEYS[4], ARGV[1])
  if o and tonumber(string.match(o, '^(%d+) ')) == claim then
    redis.call('HDEL', KEYS[4], ARGV[1])
  end
end
while i <= #ARGV do
  local fp = ARGV[i + 1]
  if ARGV[i] == 'p' then
    redis.call('HSET', KEYS[2], fp, ARGV[i + 3])
    redis.call('ZADD', KEYS[1], ARGV[i + 2], fp)
  else
    redis.call('HDEL', KEYS[2], fp)
    redis.call('ZREM', KEYS[1], fp)
    redis.call('HDEL', KEYS[3], fp)
    redis.call('HDEL', KEYS[4], fp)
  end
  i = i + 4
end
return 1
""",
    # Returns {server seconds, microseconds, the earliest due time as a string or false}.
    "revisit_next": """
local t = redis.call('TIME')
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {t[1], t[2], first[2] or false}
""",
    # ARGV: fp. Returns {the record's JSON or false, its score or false}.
    "revisit_get": """
return {redis.call('HGET', KEYS[2], ARGV[1]), redis.call('ZSCORE', KEYS[1], ARGV[1])}
""",
    # ARGV: fp. Removes the record (not through a visit).
    "revisit_remove": """
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
return redis.call('ZREM', KEYS[1], ARGV[1])
""",
}


def _json_dumps(d: dict[str, Any]) -> bytes:
    return json.dumps(d, separators=(",", ":"), allow_nan=False).encode()


def _json_loads(data: bytes) -> Any:
    return json.loads(data)


class _Merge:
    """What one visit's outcome read and wants written (see ``revisit_merge``)."""

    __slots__ = ("reads", "ops", "claim", "claimed")

    def __init__(self, claim: int, claimed: str) -> None:
        self.claim = claim
        self.claimed = claimed  # the fingerprint (hex) the claim is of
        self.reads: dict[str, tuple[int, int]] = {}  # fp hex -> (version, applied claim)
        self.ops: list[Any] = []


class RedisRevisitSchedule(_ScheduleBase):
    """The revisit schedule in the shared frontier's Redis (see the module docstring).

    Args:
        frontier: the :class:`~crawlfw.core.frontier.redis_frontier.RedisFrontier` (its
            client, key prefix, retry settings, ``lease_timeout_s``: how long a claim
            not confirmed lives).
        config: the :class:`~crawlfw.core.frontier.revisit.RevisitConfig`.
        spider: the spider.

    Raises:
        crawlfw.core.frontier.frontier.FrontierError: from any call, when Redis stays
            unreachable for ``FRONTIER_RETRY_TIMEOUT`` or answers an error.
    """

    durable = True
    dumps = staticmethod(_json_dumps)
    loads = staticmethod(_json_loads)

    def __init__(self, frontier: RedisFrontier, config: RevisitConfig,
                 spider: Spider | None = None) -> None:
        self.frontier = frontier
        self.config = config
        self.spider = spider
        self.keys = [frontier._k("revisit:due"), frontier._k("revisit:rec"),
                     frontier._k("revisit:claim"), frontier._k("revisit:out")]
        self.lease_s = float(getattr(frontier, "lease_timeout_s", 60.0))
        frontier.scripts.add(_SCRIPTS)
        #: seconds to add to ``time.time()`` for the Redis server's clock
        self.offset_s = 0.0
        #: records found due at the last :meth:`take_due` whose revisit was still out
        self.still_queued = 0
        self._merge: _Merge | None = None

    def _retry(self, fn: Any) -> Any:
        f = self.frontier
        return call_with_retry(fn, f.url, f.retry_timeout_s, spider=self.spider,
                               stats=f.stats, link=f.link)

    def _run(self, name: str, args: list[Any]) -> Any:
        run, keys = self.frontier.scripts.run, self.keys
        return self._retry(lambda: run(name, keys, args))

    def clock(self) -> float:
        """Now on the Redis server's clock (seconds), as last measured by
        :meth:`next_due`: the time every due time of the shared schedule is in."""
        return time.time() + self.offset_s

    @staticmethod
    def _encode(record: RevisitRecord, version: int = 0, applied: int = 0) -> bytes:
        return _json_dumps({"r": json.loads(record.request), "i": record.interval,
                            "e": record.etag, "m": record.last_modified,
                            "d": record.digest, "g": record.gone, "f": record.fixed,
                            "u": version, "a": applied})

    @staticmethod
    def _decode(fp_hex: bytes | str, data: bytes | dict[str, Any],
                due: float) -> RevisitRecord:
        d = json.loads(data) if not isinstance(data, dict) else data
        fp = bytes.fromhex(fp_hex.decode() if isinstance(fp_hex, bytes) else fp_hex)
        return RevisitRecord(fp, _json_dumps(d["r"]), due, float(d["i"]), d["e"], d["m"],
                             d["d"], int(d["g"]), bool(d["f"]))

    def get(self, fp: bytes) -> RevisitRecord | None:
        """The record of fingerprint ``fp``, or None (within :meth:`visited`: the
        version read is noted, for the merge)."""
        key = fp.hex()
        data, due = self._run("revisit_get", [key])  # one call on the scripts' connection
        merge = self._merge
        d = json.loads(data) if data is not None else None
        if merge is not None and key not in merge.reads:
            merge.reads[key] = ((int(d.get("u", 0)), int(d.get("a", 0)))
                                if d is not None else (-1, 0))
        if d is None:
            return None
        return self._decode(key, d, float(due) if due is not None else 0.0)

    def put(self, record: RevisitRecord) -> None:
        """Write ``record`` (hash and sorted set in one script; within :meth:`visited`,
        with the merge)."""
        key = record.fp.hex()
        merge = self._merge
        if merge is not None:
            version, applied = merge.reads.get(key, (-1, 0))
            if key == merge.claimed:  # (a record a redirect moved starts its own count)
                applied = max(applied, merge.claim)
            merge.ops += ("p", key, repr(float(record.due)),
                          self._encode(record, version + 1, applied))
            return
        self._run("revisit_merge", [key, 0, 0, "p", key, repr(float(record.due)),
                                    self._encode(record)])

    def remove(self, fp: bytes) -> None:
        """Remove the record of ``fp`` (within :meth:`visited`: with the merge)."""
        if self._merge is not None:
            self._merge.ops += ("d", fp.hex(), "", "")
            return
        self._run("revisit_remove", [fp.hex()])

    def visited(self, visit: dict[str, Any], now: float) -> str:
        """Apply one visit's outcome atomically (see the module docstring): as
        :meth:`_ScheduleBase.visited`, or ``'stale'`` when an outcome of the same claim
        or a later one was applied already (nothing changes), or ``'conflict'`` when
        other workers changed the record :data:`MERGE_TRIES` times in a row."""
        claim = int(visit.get("claim") or 0)
        claimed = visit.get("moved_from") or visit["fp"]
        for _ in range(MERGE_TRIES):
            merge = self._merge = _Merge(claim, claimed)
            try:
                if visit["outcome"] == "failed":
                    # no answer: due again an interval after the try (the claim ends)
                    record = self.get(bytes.fromhex(claimed))
                    result = "ignored"
                    if record is not None:
                        record.due = now + record.interval
                        self.put(record)
                else:
                    result = super().visited(visit, now)
            finally:
                self._merge = None
            if not merge.ops and not claim:
                return result
            args = [claimed, claim, len(merge.reads)]
            for key, (version, _) in merge.reads.items():
                args += (key, version)
            reply = self._run("revisit_merge", args + merge.ops)
            if reply == 1:
                return result
            if reply == -1:
                return "stale"
        return "conflict"

    def next_due(self) -> float | None:
        """The earliest due time of the whole crawl's schedule (the server's clock), or
        None when empty; measures the offset of this worker's clock to the server's."""
        before = time.time()
        sec, usec, first = self._run("revisit_next", [])
        after = time.time()
        self.offset_s = int(sec) + int(usec) / 1e6 - (before + after) / 2
        return float(first) if first else None

    def take_due(self, now: float, limit: int) -> list[RevisitRecord]:
        """Up to ``limit`` records due at ``now`` (the server's clock) and not out
        already, claimed for this worker atomically (each one out until ``now`` plus
        the lease, unless :meth:`pushed` confirms it); :attr:`still_queued` says how
        many due records were skipped because their revisit is still out."""
        reply = self._run("revisit_take", [repr(float(now)), int(limit), self.lease_s])
        self.still_queued = int(reply[0])
        out = []
        for i in range(1, len(reply), 3):
            record = self._decode(reply[i], reply[i + 1], now)
            record.due = now + self.lease_s
            record.claim = int(reply[i + 2])
            out.append(record)
        return out

    def pushed(self, records: list[RevisitRecord]) -> None:
        """Confirm the claims of ``records``, whose revisits are in the shared frontier
        now: each stays out until its visit's outcome, or at most
        ``max(interval, REVISIT_INTERVAL_MAX)`` from now (a claim already ended - the
        visit came back first - is left alone)."""
        if not records:
            return
        now = self.clock()
        args: list[Any] = []
        for record in records:
            args += (record.fp.hex(), record.claim,
                     repr(now + max(record.interval, self.config.max_s)))
        self._run("revisit_confirm", args)

    def in_flight(self) -> int:
        """Revisits of the crawl out now (claimed, not answered yet), every worker's."""
        client = self.frontier.client
        return int(self._retry(lambda: client.hlen(self.keys[3])))

    def count_due(self, now: float) -> int:
        """Records of the crawl due at ``now`` not yet taken."""
        client = self.frontier.client
        return int(self._retry(lambda: client.zcount(self.keys[0], "-inf", now)))

    def memory_bytes(self) -> int:
        """0: the records are in Redis."""
        return 0

    def commit(self) -> None:
        """Nothing to do: every write is applied at once."""

    def __len__(self) -> int:
        client = self.frontier.client
        return int(self._retry(lambda: client.hlen(self.keys[1])))

    def __iter__(self) -> Any:
        client = self.frontier.client
        pairs = self._retry(lambda: client.zrange(self.keys[0], 0, -1, withscores=True))
        out = []
        for fp_hex, due in pairs:
            data = self._retry(lambda fp_hex=fp_hex: client.hget(self.keys[1], fp_hex))
            if data is not None:
                out.append(self._decode(fp_hex, data, float(due)))
        return iter(out)
