"""The revisit schedule of a shared crawl (``FRONTIER_URL`` with ``REVISIT_ENABLED``,
issue 32): the records in Redis beside the shared frontier, so every worker of the crawl
shares one schedule and it outlives any of them.

Keys, under the frontier's prefix (``{crawlfw:<spider name>}``, one Redis Cluster slot)::

    <prefix>:revisit:due   sorted set  fingerprint (hex) -> due time (wall-clock seconds)
    <prefix>:revisit:rec   hash        fingerprint (hex) -> the record as JSON: ``r`` the
                                       stored request (compact ``request_to_dict``), ``i``
                                       interval (s), ``e`` ETag, ``m`` Last-Modified,
                                       ``d`` digest, ``g`` 404/410 count, ``f`` fixed

Taking due records is one Lua script (``revisit_take``): the due members, each one's score
moved an interval on (read from its record with ``cjson``) in the same call, so two
workers never take the same record; writing and removing a record are one script each
(the hash and the sorted set together). Requests are JSON, as the shared frontier's own,
never pickles. Workers' clocks are assumed to agree to well under an interval (NTP).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from crawlfw.core.frontier.redis_link import call_with_retry
from crawlfw.core.frontier.revisit import RevisitConfig, RevisitRecord
from crawlfw.core.frontier.revisit_schedule import _ScheduleBase

if TYPE_CHECKING:
    from crawlfw.core.frontier.redis_frontier import RedisFrontier
    from crawlfw.spiders import Spider

__all__ = ["RedisRevisitSchedule"]

_SCRIPTS = {
    "revisit_take": """
local now = tonumber(ARGV[1])
local fps = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, fp in ipairs(fps) do
  local rec = redis.call('HGET', KEYS[2], fp)
  if rec then
    redis.call('ZADD', KEYS[1], now + tonumber(cjson.decode(rec)['i']), fp)
    out[#out + 1] = fp
    out[#out + 1] = rec
  else
    redis.call('ZREM', KEYS[1], fp)
  end
end
return out
""",
    "revisit_put": """
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
""",
    "revisit_remove": """
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('ZREM', KEYS[1], ARGV[1])
""",
}


def _json_dumps(d: dict[str, Any]) -> bytes:
    return json.dumps(d, separators=(",", ":"), allow_nan=False).encode()


def _json_loads(data: bytes) -> Any:
    return json.loads(data)


class RedisRevisitSchedule(_ScheduleBase):
    """The revisit schedule in the shared frontier's Redis (see the module docstring).

    Args:
        frontier: the :class:`~crawlfw.core.frontier.redis_frontier.RedisFrontier` (its
            client, key prefix, retry settings).
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
        self.keys = [frontier._k("revisit:due"), frontier._k("revisit:rec")]
        frontier.scripts.add(_SCRIPTS)

    def _retry(self, fn: Any) -> Any:
        f = self.frontier
        return call_with_retry(fn, f.url, f.retry_timeout_s, spider=self.spider,
                               stats=f.stats, link=f.link)

    def _run(self, name: str, args: list[Any]) -> Any:
        run, keys = self.frontier.scripts.run, self.keys
        return self._retry(lambda: run(name, keys, args))

    @staticmethod
    def _encode(record: RevisitRecord) -> bytes:
        return _json_dumps({"r": json.loads(record.request), "i": record.interval,
                            "e": record.etag, "m": record.last_modified,
                            "d": record.digest, "g": record.gone, "f": record.fixed})

    @staticmethod
    def _decode(fp_hex: bytes | str, data: bytes, due: float) -> RevisitRecord:
        d = json.loads(data)
        fp = bytes.fromhex(fp_hex.decode() if isinstance(fp_hex, bytes) else fp_hex)
        return RevisitRecord(fp, _json_dumps(d["r"]), due, float(d["i"]), d["e"], d["m"],
                             d["d"], int(d["g"]), bool(d["f"]))

    def get(self, fp: bytes) -> RevisitRecord | None:
        """The record of fingerprint ``fp``, or None."""
        client, key = self.frontier.client, fp.hex()
        reply = self._retry(lambda: (client.hget(self.keys[1], key),
                                     client.zscore(self.keys[0], key)))
        data, due = reply
        if data is None:
            return None
        return self._decode(key, data, float(due) if due is not None else 0.0)

    def put(self, record: RevisitRecord) -> None:
        """Write ``record`` (hash and sorted set in one script)."""
        self._run("revisit_put", [record.fp.hex(), repr(float(record.due)),
                                  self._encode(record)])

    def remove(self, fp: bytes) -> None:
        """Remove the record of ``fp``."""
        self._run("revisit_remove", [fp.hex()])

    def next_due(self) -> float | None:
        """The earliest due time of the whole crawl's schedule, or None when empty."""
        client = self.frontier.client
        reply = self._retry(lambda: client.zrange(self.keys[0], 0, 0, withscores=True))
        return float(reply[0][1]) if reply else None

    def take_due(self, now: float, limit: int) -> list[RevisitRecord]:
        """Up to ``limit`` records due at ``now``, claimed for this worker atomically
        (each one's due time moves an interval on in the same script)."""
        reply = self._run("revisit_take", [repr(float(now)), int(limit)])
        out = []
        for i in range(0, len(reply), 2):
            record = self._decode(reply[i], reply[i + 1], now)
            record.due = now + record.interval
            out.append(record)
        return out

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
        return int(self._retry(lambda: client.zcard(self.keys[0])))

    def __iter__(self) -> Any:
        client = self.frontier.client
        pairs = self._retry(lambda: client.zrange(self.keys[0], 0, -1, withscores=True))
        out = []
        for fp_hex, due in pairs:
            data = self._retry(lambda fp_hex=fp_hex: client.hget(self.keys[1], fp_hex))
            if data is not None:
                out.append(self._decode(fp_hex, data, float(due)))
        return iter(out)
