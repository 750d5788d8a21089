"""Politeness for a crawl shared by many workers, for the requests the shared frontier
did not pace: a download slot whose concurrency (``CONCURRENT_REQUESTS_PER_DOMAIN`` /
``_PER_IP``) and delay (``DOWNLOAD_DELAY``) hold for the whole crawl, with permits in
Redis.

A request leased from the shared frontier (:class:`crawlfw.core.frontier.redis_frontier.RedisFrontier`)
was counted in its host's concurrency for the whole crawl and spaced by its delay there,
in the same Lua call that leased it; it arrives marked ``request._paced`` and starts as
soon as the local concurrency allows, without a permit and without a round trip. The
permits are for the others, which do not come from the frontier: robots.txt,
``crawler.engine.download`` (media pipelines), a spider's requests kept in memory
(``transient_ok``). These keep the downloader's full politeness across workers.

:class:`SharedDownloadSlot` is a :class:`crawlfw.core.transport.slot.DownloadSlot` whose
:meth:`~SharedDownloadSlot.pop_ready` takes permits from Redis for unpaced requests:
such a transfer starts only with a permit of its slot, and a slot has at most
``concurrency`` permits out, across every worker. With a delay, at most one transfer of
the slot starts per delay, across every worker (the time of the next allowed start is
kept in Redis; the randomization of ``RANDOMIZE_DOWNLOAD_DELAY`` is drawn by the worker
that starts). A permit is kept for the worker's next request of the slot (without a
delay) and given back when unused for :data:`HOLD_S` seconds; it expires after
``FRONTIER_LEASE_TIMEOUT`` seconds unless renewed, so a worker that dies holds none for
long. Renewals and give-backs are done by :func:`maintain_shared_slots`, which the
downloader calls as it pumps (at least once a second while a slot holds permits), for
the slots holding permits only: a pump never looks at every slot. A downloader's slots
share its thread's one Redis client and script connection
(:meth:`crawlfw.core.frontier.redis_link.RedisLink.for_thread`).

Keys, one pair per slot, each with its own Redis Cluster hash tag (so the slots of a
big crawl spread over the cluster's nodes)::

    {<crawl key>|slot|<slot key>}:permits   sorted set  permit token -> expiry (ms)
    {<crawl key>|slot|<slot key>}:next      string      next allowed start (ms), with a delay
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from crawlfw.core.frontier.frontier import FrontierError
from crawlfw.core.frontier.redis_link import (
    FrontierPermanentError,
    PermitHolder,
    RedisLink,
    Scripts,
    call_with_retry,
    frontier_key,
    redis_link,
    worker_id,
)
from crawlfw.core.transport.slot import DownloadSlot

if TYPE_CHECKING:
    import redis

    from crawlfw.http import Request
    from crawlfw.settings import BaseSettings
    from crawlfw.spiders import Spider
    from crawlfw.statscollectors import StatsCollector

_T = TypeVar("_T")

__all__ = ["SharedDownloadSlot", "maintain_shared_slots"]

logger = logging.getLogger(__name__)

#: Seconds between two asks for a permit while the slot is full in other workers: the
#: first wait, doubled after each refusal up to the second.
POLL_S = 0.05
POLL_MAX_S = 1.0

#: Seconds a worker keeps the permit of an ended transfer for its next request of the
#: slot (no delay only) before it gives it back to the others.
HOLD_S = 0.25

#: Seconds a slot waits before asking Redis again once a call failed for good (the crawl
#: stops, or Redis stayed unreachable for FRONTIER_RETRY_TIMEOUT: the scheduler, which
#: calls Redis too, then fails the crawl); the downloader meanwhile waits on its inbox,
#: where its stop arrives.
FAILED_WAIT_S = 1.0

# KEYS: permits, next. ARGV: want, limit, delay ms, permit ms, number of tokens to
# give back, those tokens, then `want` new tokens. Gives the permits of ended transfers
# back, then takes up to `want`. Returns {granted, wait ms (-1: until a permit is free)}.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nback = tonumber(ARGV[5])
for i = 6, 5 + nback do redis.call('ZREM', KEYS[1], ARGV[i]) end
local want = tonumber(ARGV[1])
if want == 0 then return {0, 0} end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local free = tonumber(ARGV[2]) - redis.call('ZCARD', KEYS[1])
if free <= 0 then return {0, -1} end
if want > free then want = free end
local delay = tonumber(ARGV[3])
if delay > 0 then
  local nxt = tonumber(redis.call('GET', KEYS[2]) or '0')
  if now < nxt then return {0, nxt - now} end
  want = 1
  redis.call('SET', KEYS[2], now + delay, 'PX', delay + 60000)
end
for i = 1, want do
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[5 + nback + i])
end
return {want, 0}
"""

# KEYS: permits. ARGV: permit ms, tokens. Extends the permits still held.
_RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i])
end
return 0
"""

_tokens = itertools.count(1)

_SOURCES = {"acquire": _ACQUIRE, "renew": _RENEW}


class SharedDownloadSlot(DownloadSlot):
    """A download slot whose limits hold across every worker of a shared crawl, for
    requests the shared frontier did not pace (see the module doc).

    Args:
        client: a ``redis.Redis`` (the downloader thread's, shared by its slots).
        url: the Redis URL (for messages).
        key: the slot's key prefix, ``{<crawl key>|slot|<slot>}``.
        worker: this worker's id (in the permit tokens).
        permit_timeout_s: seconds a permit lives without a renewal.
        retry_timeout_s: seconds a lost connection is retried.
        *args, **kw: :class:`~crawlfw.core.transport.slot.DownloadSlot` arguments.
        stats: the crawl's stats collector (counts ``frontier/redis_calls``), or None.
        spider: the spider (for log records and stats).
        link: the crawl's :class:`~crawlfw.core.frontier.redis_link.RedisLink` (default:
            the one of ``spider.crawler``): one retry budget for the crawl; once a
            call failed for good (the crawl stops, or Redis stayed unreachable for the
            budget) :meth:`pop_ready` starts nothing and asks again after
            :data:`FAILED_WAIT_S`; the scheduler's own calls fail the crawl.
        scripts: the thread's :class:`~crawlfw.core.frontier.redis_link.Scripts` (default: one
            of this slot's own, on ``client``).
        holders: the set where a slot holding permits puts itself, for
            :func:`maintain_shared_slots` (default: a set of its own).

    A fault waiting will not mend (authentication, ``NOPERM`` on the slot's keys) is
    noted on the link (``link.failure``): the scheduler, at its next tick, fails the
    crawl with it (``frontier_failed``), in one line.
    """

    def __init__(self, client: redis.Redis, url: str, key: str, worker: str,
                 permit_timeout_s: float, retry_timeout_s: float, *args: Any,
                 stats: StatsCollector | None = None, spider: Spider | None = None,
                 link: RedisLink | None = None, scripts: Scripts | None = None,
                 holders: set[PermitHolder] | None = None, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.link = link if link is not None else redis_link(getattr(spider, "crawler", None))
        self.stats = stats
        self.spider = spider
        self.client = client
        self.url = url
        self.worker = worker
        self.permit_ms = max(1, int(permit_timeout_s * 1000))
        self.retry_timeout_s = retry_timeout_s
        self.keys = [f"{key}:permits", f"{key}:next"]
        self._own_scripts = scripts is None
        self.scripts = scripts if scripts is not None else Scripts(client, _SOURCES)
        self.holders = holders if holders is not None else set()
        self.permits: dict[Request, str] = {}  # unpaced request in flight -> its permit token
        self._given_back: list[str] = []  # tokens of ended transfers, sent with the next call
        self._free: list[tuple[str, float]] = []  # (token, since when, monotonic s): held for the next request
        self._wait_until_s = 0.0  # no permit to be had before this (monotonic s)
        self._poll_s = POLL_S
        self._renewed_s = time.monotonic()

    @classmethod
    def from_settings(
            cls, settings: BaseSettings, spider: Spider | None = None, *, slot: str = "",
            client: redis.Redis | None = None, stats: StatsCollector | None = None,
            link: RedisLink | None = None, holders: set[PermitHolder] | None = None,
            **kw: Any) -> SharedDownloadSlot:
        """A slot configured like :meth:`DownloadSlot.from_settings`, its permits in the
        Redis of ``FRONTIER_URL`` under the crawl's key (``FRONTIER_KEY`` or
        ``crawlfw:<spider name>``), on the calling thread's connection
        (:meth:`~crawlfw.core.frontier.redis_link.RedisLink.for_thread`: one per downloader).

        Args:
            settings: the crawl settings.
            spider: the spider.
            slot: the slot key (host name or IP).
            client: a ``redis.Redis`` (default: the calling thread's for ``FRONTIER_URL``).
            stats: the crawl's stats collector (``frontier/redis_calls``), or None.
            link: the crawl's link (default: ``spider.crawler``'s).
            holders: the set of slots holding permits that the downloader maintains
                (:func:`maintain_shared_slots`; default: the thread's).
        """
        plain = DownloadSlot.from_settings(settings, spider, **kw)
        url = settings["FRONTIER_URL"]
        crawl = frontier_key(settings, getattr(spider, "name", "")).replace("{", "").replace("}", "")
        link = link if link is not None else redis_link(getattr(spider, "crawler", None))
        scripts = None
        if client is None:
            conn = link.for_thread(url)
            client, scripts = conn.client, conn.scripts(_SOURCES)
            if holders is None:
                holders = conn.holders
        return cls(client, url, f"{{{crawl}|slot|{slot}}}", worker_id(settings),
                   settings.getfloat("FRONTIER_LEASE_TIMEOUT", 60.0),
                   settings.getfloat("FRONTIER_RETRY_TIMEOUT", 300.0),
                   plain.concurrency, plain.delay_s, plain.randomize_delay, stats=stats,
                   spider=spider, link=link, scripts=scripts, holders=holders, **kw)

    def _call(self, fn: Callable[[], _T]) -> _T:
        result = call_with_retry(fn, self.url, self.retry_timeout_s, spider=self.spider,
                                 stats=self.stats, link=self.link)
        if self.stats is not None:
            self.stats.inc_value("frontier/redis_calls", spider=self.spider)
        return result

    def pop_ready(self, now_s: float) -> list[Request]:
        """Take the requests that may start now, oldest first, up to the local
        concurrency: a paced request (``request._paced``: the shared frontier counted
        and spaced it) at once; an unpaced one with a permit of the whole crawl: first
        the permits this worker holds from ended transfers (no delay only), then new
        ones from Redis, in one call that also gives back the permits not needed. An
        unpaced request waiting for a permit does not hold back the paced ones behind
        it."""
        queue = self.queue
        want = min(len(queue), self.concurrency - len(self.inprogress))
        started: list[Request] = []
        if want <= 0:
            return started
        waiting: list[Request] | None = None  # unpaced requests passed over (no permit now), in order
        while want > 0 and queue:
            if getattr(queue[0], "_paced", False):
                started.append(self._start(queue.popleft(), None))
                want -= 1
                continue
            unpaced = 0  # how many unpaced requests lead the queue (at most want)
            for request in queue:
                if unpaced >= want or getattr(request, "_paced", False):
                    break
                unpaced += 1
            tokens = self._permits(now_s, unpaced)
            for token in tokens:
                started.append(self._start(queue.popleft(), token))
            want -= len(tokens)
            if len(tokens) < unpaced:  # no permit for the rest: let paced ones pass
                if waiting is None:
                    waiting = []
                for _ in range(unpaced - len(tokens)):
                    waiting.append(queue.popleft())
        if waiting:
            queue.extendleft(reversed(waiting))
        return started

    def _permits(self, now_s: float, want: int) -> list[str]:
        """Up to ``want`` permit tokens: held ones first, then from Redis (unless a
        refusal or the delay says to wait)."""
        free = self._free
        tokens: list[str] = []
        while free and len(tokens) < want:  # reused without a round trip
            tokens.append(free.pop()[0])
        want -= len(tokens)
        if want <= 0 or now_s < self._wait_until_s:
            return tokens
        delay_ms = 0
        if self.delay_s:
            factor = self._rng.uniform(0.5, 1.5) if self.randomize_delay else 1.0
            delay_ms = max(1, int(self.delay_s * factor * 1000))
        new = [f"{self.worker}:{next(_tokens)}" for _ in range(want)]
        back, self._given_back = self._given_back, []
        try:
            granted, wait_ms = self._call(lambda: self.scripts.run(
                "acquire", self.keys, [want, self.concurrency, delay_ms, self.permit_ms,
                                       len(back), *back, *new]))
        except FrontierError as e:
            if isinstance(e, FrontierPermanentError):
                self.link.failure = e  # the scheduler fails the crawl with it
            # Unreachable past the budget, or the crawl stops: nothing more starts (the
            # permits to give back expire in Redis). The scheduler's own calls fail the
            # crawl (frontier_failed); meanwhile the downloader waits on its inbox (its
            # stop), not on Redis.
            logger.debug("Download slot %(slot)s: no permit: %(error)s",
                         {"slot": self.keys[0], "error": e}, extra={"spider": self.spider})
            self._wait_until_s = now_s + FAILED_WAIT_S
            return tokens
        if not granted:
            if wait_ms < 0:  # full: ask again later, less often each time
                wait_s = self._poll_s
                self._poll_s = min(self._poll_s * 2, POLL_MAX_S)
            else:
                wait_s = wait_ms / 1000
            self._wait_until_s = now_s + wait_s
            return tokens
        self._poll_s = POLL_S
        return tokens + new[:granted]

    def _start(self, request: Request, token: str | None) -> Request:
        self.inprogress[request] = None
        if token is not None:
            self.permits[request] = token
            self.holders.add(self)
        return request

    def next_ready_in_s(self, now_s: float) -> float | None:
        """Seconds until :meth:`pop_ready` should ask again: ``0.0`` when it may now,
        the wait Redis named (a delay), or :data:`POLL_S` doubling up to
        :data:`POLL_MAX_S` while the slot is full in other workers (``0.0`` when a paced
        request could start); None when nothing is queued or every local transfer is
        busy."""
        queue = self.queue
        if not queue or len(self.inprogress) >= self.concurrency:
            return None
        wait = self._wait_until_s - now_s
        if wait > 0 and not any(getattr(r, "_paced", False) for r in queue):
            return wait
        return 0.0

    def transfer_done(self, request: Request) -> None:
        """End ``request``'s transfer. Without a delay this worker keeps its permit for
        its next unpaced request of the slot (given back by :meth:`maintain` once
        unused for :data:`HOLD_S` seconds); with one, the permit is given back with the
        next call (each start must pass the delay in Redis).

        Raises:
            KeyError: ``request`` is not in flight in this slot.
        """
        super().transfer_done(request)
        token = self.permits.pop(request, None)
        if token is None:
            return
        self._wait_until_s = 0.0  # a permit is free now
        if self.delay_s:
            self._given_back.append(token)
        else:
            self._free.append((token, time.monotonic()))

    @property
    def holding(self) -> bool:
        """True while permits of ended transfers wait to be reused or given back: the
        downloader keeps pumping (at least once a second) until they are."""
        return bool(self._free or self._given_back)

    def maintain(self, now_s: float) -> bool:
        """Renew the permits held (every third of their lifetime) and give back those
        unused for :data:`HOLD_S` seconds and those of ended transfers, in at most one
        call each.

        Args:
            now_s: ``time.monotonic()`` seconds.

        Returns:
            True while the slot still holds permits (in flight, or kept).
        """
        free = self._free
        try:
            if (self.permits or free) and now_s - self._renewed_s >= self.permit_ms / 3000:
                self._renewed_s = now_s
                tokens = [*self.permits.values(), *(t for t, _ in free)]
                self._call(lambda: self.scripts.run("renew", self.keys[:1],
                                                    [self.permit_ms, *tokens]))
            if free:
                self._given_back += [t for t, since in free if now_s - since >= HOLD_S]
                free[:] = [(t, since) for t, since in free if now_s - since < HOLD_S]
            if self._given_back:
                back, self._given_back = self._given_back, []
                self._call(lambda: self.client.zrem(self.keys[0], *back))
        except FrontierPermanentError as e:
            self.link.failure = e  # the scheduler fails the crawl with it
        except FrontierError:
            pass  # (not renewed or given back: they expire; the crawl stops)
        return bool(self.permits or free or self._given_back)

    def requeue_inprogress(self) -> list[Request]:
        """Put in-flight requests back in the queue and give their permits back."""
        self._given_back += self.permits.values()
        self.permits.clear()
        tokens = [*self._given_back, *(t for t, _ in self._free)]
        self._given_back = []
        self._free.clear()
        if tokens:
            self._call(lambda: self.client.zrem(self.keys[0], *tokens))
        self.holders.discard(self)
        return super().requeue_inprogress()

    def rebind_thread(self, holders: set[PermitHolder]) -> None:
        """Make this slot's Redis calls go through the calling thread's connection and
        put it in ``holders`` (that thread's set for :func:`maintain_shared_slots`): a
        restarted downloader takes over its dead predecessor's slots (whose thread's
        connection is closed). A slot with a connection of its own keeps it."""
        if not self._own_scripts:
            conn = self.link.for_thread(self.url)
            self.client, self.scripts = conn.client, conn.scripts(_SOURCES)
        if self in self.holders:
            self.holders.discard(self)
            holders.add(self)
        self.holders = holders

    def close(self) -> None:
        """Give back the permits of transfers still in flight (the downloader stops);
        close this slot's own connection (a shared one is closed by its thread,
        :meth:`~crawlfw.core.frontier.redis_link.RedisLink.close_thread`)."""
        tokens = [*self._given_back, *(t for t, _ in self._free), *self.permits.values()]
        self.permits.clear()
        self._free.clear()
        self._given_back = []
        self.holders.discard(self)
        try:
            if tokens and self.link.down_since is None:  # (down: they expire anyway)
                self.client.zrem(self.keys[0], *tokens)
        except Exception:  # they expire anyway
            pass
        if self._own_scripts:
            self.scripts.close()
            self.client.close()


def maintain_shared_slots(holders: set[PermitHolder], now_s: float) -> bool:
    """Renew and give back the permits of the shared slots in ``holders`` (a
    downloader's: :attr:`crawlfw.core.frontier.redis_link.ThreadRedis.holders`), dropping those
    that hold none any more. Costs nothing for the slots without permits.

    Args:
        holders: the set of :class:`SharedDownloadSlot` holding permits.
        now_s: ``time.monotonic()`` seconds.

    Returns:
        True while some slot still holds permits (the downloader keeps pumping at
        least once a second).
    """
    for slot in list(holders):
        if not slot.maintain(now_s):
            holders.discard(slot)
    return bool(holders)
