"""The shared frontier: one crawl across many processes and machines, on Redis.

:class:`RedisFrontier` has the interface of :class:`crawlfw.core.frontier.sqlite_frontier.SqliteFrontier`
(``push``, ``lease``, ``hosts_finished``, ``ack``, ``release``, ``commit``,
``set_meta``, ``meta``) over a Redis server named by ``FRONTIER_URL =
'redis://host:port/db'``. Every process (a "worker") with the same URL and key joins
the same crawl. Its keys (under the prefix ``{crawlfw:<spider name>}``; ``FRONTIER_KEY`` overrides the
part inside the braces, a Redis Cluster hash tag) and its Lua scripts are in
:mod:`crawlfw.core.frontier.redis_scripts`, whose module doc lists every key.

The host key of a request is :func:`crawlfw.core.frontier.api.host_key` (``slot_key``
without the IP cache: ``meta['download_slot']``, else the lower-case host name). A host with nothing queued,
nothing in flight and its next start passed keeps nothing in Redis: memory follows the
active hosts.

Every change is one Lua script, so it is atomic (:mod:`crawlfw.core.frontier.redis_scripts`
says what each does). A worker leases ``prefetch`` requests ahead of
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

A crawl written by crawlfw before per-host queues is migrated by the first worker's
claim (:mod:`crawlfw.core.frontier.redis_scripts`).
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from crawlfw.core.frontier.api import REVISIT_META, FrontierBase, host_key
from crawlfw.core.frontier.frontier import SEEN_CACHE_SIZE, FrontierError, JobMeta, _Lifo
from crawlfw.core.frontier.pqueue import PriorityQueue
from crawlfw.core.frontier.redis_ahead import _Ahead
from crawlfw.core.frontier.redis_control import control_state
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
from crawlfw.core.frontier.redis_scripts import (
    _KEY_NAMES,
    _PRIO_MAX,
    _SCRIPTS,
    LAYOUT,
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

#: Seconds a finished transfer's report may wait for a call this worker makes anyway
#: (a push, a lease that needs Redis); a lease served from the prefetched requests past
#: that sends it (its host may be ready for another worker). A transfer of a host that
#: was at its concurrency at its lease is sent with the next lease, without the wait,
#: unless the worker still has a request of a host with work queued leased ahead.
REPORT_S = 0.05


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
        self.control = self.opened_control = control_state(call_with_retry(  # stops before now
            lambda: self.client.hgetall(self._k("control")), self.url, self.retry_timeout_s,
            spider=spider, stats=self.stats, link=self.link))
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
                     1 if meta and (meta.get("is_start_request") or REVISIT_META in meta)
                     else 0, str(host_key(request)))
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
            dict: ``{'worker': str (this worker's id), 'queued': int, 'leased': int,
            'pages': int, 'items': int, 'workers': [{'worker': str, 'pages': int, 'items': int,
            'last_seen_s': float | None (seconds since its last lease renewal, None if it
            never renewed one)}, ...], 'frontier': '<URL without password> <key>'}``
            (sorted by worker id; ``pages``/``items`` summed over every worker that ever
            published). The commands for every worker it read are in ``self.control``.

        Raises:
            FrontierError: Redis failed.
            FrontierPermanentError: the crawl's keys are gone from Redis (nothing was
                published).
        """
        entry = json.dumps({"pages": int(own.get("pages", 0)), "items": int(own.get("items", 0))})
        # One script: it publishes only while the crawl's mark exists, so a worker never
        # writes back a key of a crawl Redis lost (FLUSHALL, a restart without persistence).
        flat_figures, flat_beats, (sec, usec), flat_control = self._call(
            "figures", [self.worker, entry])
        self.control = control_state(flat_control)  # read by the scheduler: SharedCommands
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
        return {"worker": self.worker, "queued": shared["queued"], "leased": shared["leased"],
                "pages": sum(w["pages"] for w in workers),
                "items": sum(w["items"] for w in workers), "workers": workers,
                "frontier": self.path}

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


