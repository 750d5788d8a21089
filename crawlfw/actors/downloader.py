"""DownloaderActor: one of a small fixed pool (``DOWNLOADER_ACTORS``), each driving one
pycurl ``CurlMulti`` for many download slots.

The Supervisor starts the pool when the crawl starts (:class:`DownloaderPool`, permanent
children of the crawl's tree) and the Engine sends each request to the downloader that
serves its slot: always the same one for a slot key (a stable hash of the key,
:meth:`DownloaderPool.index_of`), so a host's politeness is kept in one place. A
downloader keeps its slots in a :class:`crawlfw.core.transport.slots.SlotTable`
(``CONCURRENT_REQUESTS_PER_DOMAIN``/``_PER_IP``, ``DOWNLOAD_DELAY``, AutoThrottle's delay,
each slot's queue; idle slots evicted) and starts on its :class:`crawlfw.core.transport.curl.MultiDriver`
what the table says may start; it sends ``response_downloaded`` / ``download_failed`` back
to the Engine.

Its :class:`~crawlfw.core.transport.slots.SlotTable` is the crawl's one per-request
ledger of transfers, kept by the pool (:attr:`DownloaderPool.tables`) for the next
incarnation; what a restart keeps and replays, and the poison requests, are
ARCHITECTURE.md's ("Supervision"). When it stops, it gives what its table still holds
back to the Scheduler (``release_requests``).

Only this actor's thread touches its CurlMulti. While transfers are in flight or requests
wait for a delay the actor tells itself ``pump``: one pump waits in curl (epoll) until a
transfer finishes, a message arrives (while the thread waits there, the inbox writes a
byte to a pipe the wait also watches), curl's timer fires or a slot's delay passes, so it
never busy-polls; with nothing to do no pump is queued and the thread sleeps in the
inbox's ``get()`` (an idle crawler uses ~0 % CPU).
"""

from __future__ import annotations

import logging
import os
import queue
import time
import zlib
from typing import TYPE_CHECKING, Any

import pykka

from crawlfw import signals
from crawlfw.actors import messages
from crawlfw.actors._childref import RestartableActor
from crawlfw.core import _faults
from crawlfw.core._fds import fds_exhausted
from crawlfw.core.transport.curl import MultiDriver
from crawlfw.core.transport.curl_options import DnsCacheBudget, driver_options
from crawlfw.core.transport.slot import DownloadSlot
from crawlfw.core.transport.slots import SlotTable
from crawlfw.exceptions import ConnectError, DownloaderCrashed, StopDownload
from crawlfw.resolver import DnsStats, build_resolver

if TYPE_CHECKING:
    import pycurl

    from crawlfw.actors._types import CrawlerLike
    from crawlfw.core.frontier.redis_link import PermitHolder
    from crawlfw.http import Request

__all__ = ["DownloaderActor", "DownloaderPool"]

logger = logging.getLogger(__name__)

#: Longest single wait in curl, in seconds (curl's own timers are usually shorter).
MAX_WAIT_S = 1.0

#: Seconds between two updates of the ``dns/*`` stats (and at the downloader's end).
DNS_STATS_EVERY_S = 1.0

#: Seconds a request waits before it is tried again when its connection found the
#: process out of file descriptors (``EMFILE``/``ENFILE``).
FD_RETRY_S = 0.5


class _WakeupInbox(queue.SimpleQueue):
    """The actor's inbox: a ``queue.SimpleQueue`` (one C lock, no ``Condition``) whose
    ``put`` also makes ``wake_fd`` readable, but only while the actor's thread waits
    in curl (:attr:`waiting`), so a message ends that wait.

    The consumer (the actor's thread, :meth:`DownloaderActor.handle_pump`) sets
    ``waiting`` True, drains the pipe (:meth:`drain`), then checks ``empty()`` and only
    then waits in curl on ``wake_fd``; it sets ``waiting`` False when the wait is over.
    A producer puts the message first, then reads ``waiting``. Under the GIL the two
    threads' steps interleave but are not reordered, so either the producer read
    ``waiting`` False, which came before the consumer set it, hence its message came
    before the consumer's ``empty()`` check (which sees it, and does not wait); or it
    read True and writes the byte, which ends (or cuts short) the wait. A message put
    while the thread does anything else (handles a message, sleeps in ``get()``) costs
    no system call: the thread takes it from the queue when it looks next.

    ``_written`` is set by a producer after its byte went in, so a byte in the pipe
    always has ``_written`` True or a producer about to set it: :meth:`drain` reads
    only then (an unread byte at worst cuts one later wait short, once).
    """

    def __init__(self):
        self.closed = False
        #: True while the consumer checks its inbox and waits in curl (set and cleared
        #: on the actor's thread only).
        self.waiting = False
        self._written = False
        self.wake_fd, self._write_fd = os.pipe()
        os.set_blocking(self.wake_fd, False)
        os.set_blocking(self._write_fd, False)

    def put(self, item, block=True, timeout=None):
        """Queue ``item`` (never blocks: the queue is unbounded); write the wake-up byte
        if the consumer waits (see the class's docstring)."""
        _simple_put(self, item)
        if not self.waiting or self.closed:
            return
        try:
            os.write(self._write_fd, b"\0")
        except BlockingIOError:  # the pipe is full, so it is readable anyway
            pass
        except OSError:  # closed by the actor's thread meanwhile
            if not self.closed:
                raise
        self._written = True

    def drain(self) -> None:
        """Consume the wake-up bytes, if any were written since the last drain (call
        after setting :attr:`waiting`, before checking ``empty()`` and waiting)."""
        if not self._written:
            return
        self._written = False
        try:
            while len(os.read(self.wake_fd, 4096)) == 4096:
                pass
        except BlockingIOError:
            pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self.wake_fd)
            os.close(self._write_fd)


_simple_put = queue.SimpleQueue.put


class _StreamSignals:
    """The ``headers_received`` and ``bytes_received`` signals for the curl driver
    (``MultiDriver.stream_signals``), sent on the downloader's thread; a handler raising
    :class:`~crawlfw.exceptions.StopDownload` stops the transfer (not logged, as in
    Scrapy)."""

    __slots__ = ("_signals", "_send", "_spider")

    def __init__(self, signal_manager, spider):
        self._signals = signal_manager
        self._send = signal_manager.send_catch_log
        self._spider = spider

    def wanted(self) -> bool:
        return self._signals.has_receivers(signals.headers_received, signals.bytes_received)

    def _stop(self, results):
        for _, result in results:
            if isinstance(result, StopDownload):
                return result
        return None

    def headers_received(self, headers, body_length, request):
        return self._stop(self._send(signals.headers_received, headers=headers,
                                     body_length=body_length, request=request,
                                     spider=self._spider, dont_log=StopDownload))

    def bytes_received(self, data, request):
        return self._stop(self._send(signals.bytes_received, data=data, request=request,
                                     spider=self._spider, dont_log=StopDownload))


class DownloaderPool:
    """The downloader actors of one crawl: ``DOWNLOADER_ACTORS`` of them, started by the
    Supervisor at start-up and kept here (``CrawlTree.downloaders``): the one record of
    them. The Engine reads it to send each request to the downloader of its slot.
    Each downloader is behind a stable :class:`~crawlfw.actors._childref.ChildRef`
    (the Supervisor makes them), so a restart changes nothing here: the replacement
    attaches itself to the same ref and takes over the same slot table.

    Args:
        size: the number of downloaders (>= 1).
        share_dns: ``DNSCACHE_ENABLED``: with more than one downloader, give them one
            DNS cache (a ``pycurl.CurlShare`` with ``LOCK_DATA_DNS``; pycurl locks it
            across threads), so a host name is resolved once per crawl, not once per
            downloader.
        dns_cache_size: ``DNSCACHE_SIZE``, the most host names that cache holds (a
            :class:`~crawlfw.core.transport.curl_options.DnsCacheBudget` shared by the downloaders).

    Attributes:
        refs: ``[ActorRef]``, downloader ``i`` at index ``i`` (its child key ``str(i)``):
            a ``ChildRef`` in a crawl's tree.
        tables: ``[SlotTable]``, downloader ``i``'s slot table at index ``i``: kept here,
            across the incarnations of downloader ``i``.
        share: the shared ``pycurl.CurlShare``, or None (one downloader: its multi
            handle's own DNS cache serves every transfer already).
        dns_budget: the :class:`~crawlfw.core.transport.curl_options.DnsCacheBudget` of ``DNSCACHE_SIZE``,
            or None (``DNSCACHE_ENABLED`` off).

    Raises:
        ValueError: ``size`` < 1, or ``dns_cache_size`` < 1 (the message names the
            setting).
    """

    def __init__(self, size: int, share_dns: bool = True, dns_cache_size: int = 10000):
        if not isinstance(size, int) or size < 1:
            raise ValueError(f"DOWNLOADER_ACTORS must be an int >= 1, got {size!r}")
        self.dns_budget = DnsCacheBudget(dns_cache_size) if share_dns else None
        # each filled by the Supervisor as it starts that downloader, before the Engine runs
        self.refs: list[pykka.ActorRef[Any]] = [None] * size  # type: ignore[list-item]
        self.tables = [SlotTable() for _ in range(size)]
        self._one = size == 1
        self.concurrency = None  # the crawl's effective CONCURRENT_REQUESTS (Supervisor)
        self.share = None
        if size > 1 and share_dns:
            import pycurl

            self.share = pycurl.CurlShare()
            self.share.setopt(pycurl.SH_SHARE, pycurl.LOCK_DATA_DNS)

    def index_of(self, slot: str) -> int:
        """The number of the downloader serving ``slot`` (a slot key): CRC-32 of its
        UTF-8 bytes modulo the pool size, stable across runs and processes."""
        if self._one:
            return 0
        return zlib.crc32(slot.encode("utf-8", "surrogatepass")) % len(self.refs)

    def ref_for(self, slot: str) -> pykka.ActorRef[Any]:
        """The ``ActorRef`` of the downloader serving ``slot``."""
        if self._one:
            return self.refs[0]
        return self.refs[zlib.crc32(slot.encode("utf-8", "surrogatepass")) % len(self.refs)]

    def all_refs(self) -> list[pykka.ActorRef[Any]]:
        """Every downloader ref (to stop)."""
        return [r for r in self.refs if r is not None]

    def __len__(self) -> int:
        return len(self.refs)


class DownloaderActor(RestartableActor):
    """Args:
    crawler: the Crawler (``settings``, ``spider``, ``stats``).
    index: this downloader's number in the pool (its child key is ``str(index)``).
    engine: the Engine's ActorRef (default ``reply_to``).
    share: a ``pycurl.CurlShare`` for its transfers (the pool's DNS cache), or None.
    dns_budget: the pool's :class:`~crawlfw.core.transport.curl_options.DnsCacheBudget` (``DNSCACHE_SIZE``),
        or None.
    concurrency: the crawl's effective ``CONCURRENT_REQUESTS`` (lowered to fit the open
        file limit), or None for the setting; sizes the connection cache.
    table: the :class:`~crawlfw.core.transport.slots.SlotTable` to fill (``DownloaderPool.tables``,
        a dead predecessor's: what it held in flight is started again, its poison
        requests failed), or None for a new one.
    scheduler: the SchedulerActor's ref, to give back what the table holds when this
        actor stops (``release_requests``), or None.
    child_ref: the :class:`~crawlfw.actors._childref.ChildRef` senders use, or None.
    **kw: ``CrawlActor`` arguments.
    """

    role = "downloader"

    def __init__(self, crawler: CrawlerLike, index: int, engine: pykka.ActorRef[Any],
                 share: pycurl.CurlShare | None = None, concurrency: int | None = None,
                 dns_budget: DnsCacheBudget | None = None, table: SlotTable | None = None,
                 scheduler: pykka.ActorRef[Any] | None = None, child_ref: Any = None,
                 **kw: Any) -> None:
        super().__init__(settings=crawler.settings, key=str(index), child_ref=child_ref,
                         **kw)
        self.index = index
        self.scheduler = scheduler
        settings = crawler.settings
        spider = crawler.spider
        self.spider = spider
        self._signal_manager = crawler.signals
        self._send_signal = crawler.signals.send_catch_log  # a no-op without receivers
        self.stats = crawler.stats
        self.engine = engine
        self._deferred: list[tuple[float, str, Request]] = []  # (due, slot key, request): out of fds, tried again at due
        self._warned_fds = False
        self._shared_slot = bool(settings.get("FRONTIER_URL"))
        # shared slots holding permits (FRONTIER_URL; an empty tuple without)
        self._holders: set[PermitHolder] = ()  # type: ignore[assignment]
        if self._shared_slot:  # limits held across the workers of the crawl
            from crawlfw.core.frontier.redis_link import redis_link
            from crawlfw.core.frontier.redis_slot import SharedDownloadSlot, maintain_shared_slots

            self._maintain = maintain_shared_slots
            self._link = redis_link(crawler)
            holders = self._holders = set()  # this thread's (the slots add themselves)

            def new_slot(key):  # (on this actor's thread: its one Redis connection)
                return SharedDownloadSlot.from_settings(settings, spider, slot=key,
                                                        stats=crawler.stats, link=self._link,
                                                        holders=holders)
        else:
            template: list[Any] = []  # read when the first slot is made: after spider_opened,
            # whose handlers may set spider.download_delay (AutoThrottle does, as Scrapy's)

            def new_slot(key):
                if not template:
                    first = DownloadSlot.from_settings(settings, spider)
                    template[:] = first.concurrency, first.delay_s, first.randomize_delay
                    return first
                return DownloadSlot(*template)
        self.table = table if table is not None else SlotTable()
        self.table.new_slot = new_slot  # this incarnation's (its thread's Redis link)
        self._keys: dict[Request, str] = {}  # request in flight -> its slot key
        # CONCURRENT_REQUESTS_PER_IP: tell the engine the address each response came from
        self._send_ip = bool(settings.getint("CONCURRENT_REQUESTS_PER_IP"))
        self.timeout_s = settings.getfloat("DOWNLOAD_TIMEOUT")
        self.maxsize = getattr(spider, "download_maxsize", settings.getint("DOWNLOAD_MAXSIZE"))
        self.warnsize = getattr(spider, "download_warnsize", settings.getint("DOWNLOAD_WARNSIZE"))
        # CURL_MAXCONNECTS, DNSCACHE_ENABLED...
        self.driver_options = driver_options(settings, concurrency)
        # DNS_RESOLVER: crawlfw's resolver, driven by the driver's loop (None: libcurl's)
        self.resolver = build_resolver(crawler)
        self._dns_stats = DnsStats(self.resolver, crawler.stats, spider) \
            if self.resolver is not None else None
        self._dns_publish_s = 0.0  # time.monotonic() of the next dns/* stats update
        if self.resolver is not None:
            self.driver_options["resolver"] = self.resolver
        else:
            if share is not None:
                self.driver_options["share"] = share
            if dns_budget is not None:
                self.driver_options["dns_cache_budget"] = dns_budget
        # made in on_start, on the actor's thread, before any message is handled
        self.driver: MultiDriver = None  # type: ignore[assignment]
        self._pump_queued = False

    def _create_actor_inbox(self):  # pykka hook, called from Actor.__init__
        self._inbox = _WakeupInbox()
        return self._inbox

    def on_start(self):
        self.driver = MultiDriver(**self.driver_options)
        self.driver.stream_signals = _StreamSignals(self._signal_manager, self.spider)
        if self.table.slots or self.table.crashes:  # a dead predecessor's table: take
            # its transfers over
            self._take_over(time.monotonic())

    def _take_over(self, now_s: float) -> None:
        """Start again what the dead predecessor had in flight; fail its poison
        requests (``DownloaderCrashed``, counted in ``supervisor/poison_requests``)."""
        table = self.table
        if self._shared_slot:  # the slots' Redis calls go through this thread's link
            for slot in table.slots.values():  # SharedDownloadSlots (redis_slot.py)
                slot.rebind_thread(self._holders)  # type: ignore[attr-defined]
        requeued, poisoned = table.requeue_after_crash(now_s)
        if requeued or poisoned:
            logger.warning("Downloader %(index)d failed; re-sending its %(n)d requests",
                           {"index": self.index, "n": len(requeued) + len(poisoned)},
                           extra={"spider": self.spider})
        for key, request, n in poisoned:
            error = DownloaderCrashed(
                f"{request} was being downloaded when the downloader of {key} died, "
                f"{n} times: not sent again")
            logger.error("Poison request: %(error)s", {"error": error},
                         extra={"spider": self.spider})
            self.stats.inc_value("supervisor/poison_requests", spider=self.spider)
            self._send_signal(signals.request_left_downloader, request=request,
                              spider=self.spider)
            self.send(self.engine, {"type": "download_failed", "request": request,
                                    "error": error, "slot": key})
        self._start_ready(now_s)
        self._queue_pump()

    def on_stop(self):
        # What the table still holds (aborted transfers, queued requests, requests
        # waiting for a file descriptor) goes back to the Scheduler.
        self._undefer(time.monotonic())
        released = self.table.release_all()
        if released and self.scheduler is not None:
            self.send(self.scheduler, {"type": "release_requests",
                                       "requests": [r for _, r in released]})
        self._close(closing_slots=True)

    def on_failure(self, exception_type, exception_value, traceback):
        # The table stays for the replacement (RestartableActor.on_failure hands the
        # inbox over): the transfers are lost, what waited for a descriptor is queued.
        self._undefer(time.monotonic())
        self._close(closing_slots=False)
        super().on_failure(exception_type, exception_value, traceback)

    def replay_of(self, message) -> list:
        """What the replacement gets in place of the message this actor died on: a
        ``fetch`` counts as in flight in this death (it may be what killed the
        downloader: the poison rule counts it, ``SlotTable.died_on_fetch``) and is
        replayed unless the table holds its request already or it is now a poison
        request; a ``pump`` is not needed (the replacement pumps); anything else is
        replayed."""
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "fetch":
            if self.table.died_on_fetch(message["slot"], message["request"]):
                return [message]
            return []
        if kind == "pump":
            return []
        return [message]

    def _undefer(self, now_s: float) -> None:
        """Queue again the requests waiting for a file descriptor (``_deferred``)."""
        for _, key, request in self._deferred:
            self.table.enqueue(key, request, now_s)
        self._deferred.clear()

    def _close(self, closing_slots: bool = True):
        if self.driver is not None and self._dns_stats is not None:
            self._dns_stats.publish(self.driver.curl_lookups)
        if self.driver is not None:
            self.driver.abort_all()
            self.driver.close()
            self.driver = None  # type: ignore[assignment]  # no message is handled after
        if self._shared_slot:
            if closing_slots:  # shared slots give their permits back
                for slot in self.table.slots.values():  # SharedDownloadSlots (redis_slot.py)
                    slot.close()  # type: ignore[attr-defined]
            self._link.close_thread()
        self._inbox.close()

    def handle_fetch(self, message: messages.Fetch) -> None:
        _faults.hit("downloader.fetch")
        now = time.monotonic()
        request = message["request"]
        key = request.meta["download_slot"] = message["slot"]  # as Scrapy's downloader does
        self.table.enqueue(key, request, now)
        self._send_signal(signals.request_reached_downloader, request=request,
                          spider=self.spider)
        self.engine = message["reply_to"]
        self._start_ready(now)
        self._queue_pump()

    def handle_resolve_ahead(self, message: messages.ResolveAhead) -> None:
        """Hosts just queued in the frontier: their names are resolved now, within the
        resolver's bounds (:meth:`~crawlfw.core.transport.resolver.Resolver.prefetch`),
        so their first transfers find the answers in the cache."""
        resolver = self.resolver
        if resolver is None or self.driver is None:
            return
        now = time.monotonic()
        prefetch = resolver.prefetch
        for host in message["hosts"]:
            prefetch(host, now)
        self._queue_pump()

    def handle_set_slot_delay(self, message: messages.SetSlotDelay) -> None:
        self.table.set_delay(message["slot"], message["delay_s"], time.monotonic())
        self._queue_pump()

    def handle_get_slots(self, message: messages.GetSlots) -> messages.SlotsReport:
        """Answer an ``ask`` of ``get_slots`` (``crawler.engine.downloader.slots``) with
        a :class:`~crawlfw.actors.messages.SlotsReport`: every slot held, or the keys
        asked (a key not held is reported as the slot it would get now, except for the
        shared slots of a ``FRONTIER_URL`` crawl, whose limits live in Redis)."""
        table = self.table
        keys = message.get("keys")
        chosen: list[tuple[str, DownloadSlot | None]]
        if keys is None:
            chosen = list(table.slots.items())
        else:
            chosen = [(key, table.peek(key, make=not self._shared_slot)) for key in keys]
        return {"slots": {key: {"delay_s": slot.delay_s, "concurrency": slot.concurrency,
                                "randomize_delay": slot.randomize_delay,
                                "queue": list(slot.queue),
                                "transferring": list(slot.inprogress)}
                          for key, slot in chosen if slot is not None}}

    def handle_pump(self, message: messages.Pump) -> None:
        self._pump_queued = False
        if self.driver.active:  # transfers in flight: a death loses them (tests)
            _faults.hit("downloader.transfers")
        inbox = self._inbox
        table = self.table
        inbox.waiting = True  # first (see _WakeupInbox): a message put from now on wakes curl
        inbox.drain()
        if inbox.empty():
            wait_s = MAX_WAIT_S
            if table.queued:
                ready_in = table.next_ready_in_s(time.monotonic())
                if ready_in is not None and ready_in < wait_s:
                    wait_s = ready_in
        else:
            inbox.waiting = False
            wait_s = 0.0  # messages are waiting: only collect what is already done
        if self._deferred:
            wait_s = min(wait_s, max(0.0, self._deferred[0][0] - time.monotonic()))
        try:
            results = self.driver.perform(wait_s, inbox.wake_fd)
        finally:
            inbox.waiting = False
        engine = self.engine
        now = time.monotonic()
        keys = self._keys
        send = self.send
        send_ip = self._send_ip
        for result in results:
            request = result.request
            key = keys.pop(request)
            table.done(key, request, now)
            self._send_signal(signals.request_left_downloader, request=request,
                              spider=self.spider)
            if result.error is None:
                answer = {"type": "response_downloaded", "request": request,
                          "response": result.response, "slot": key}
                if send_ip:  # the address of the host's answer (curl's without a resolver)
                    ip = result.resolved_ip or result.remote_ip
                    if ip:
                        answer["ip"] = ip
                send(engine, answer)
            elif type(result.error) is ConnectError and fds_exhausted():
                self._out_of_fds(key, request, result.error, now)
            else:
                send(engine, {"type": "download_failed", "request": request,
                              "error": result.error, "slot": key})
        if self._deferred and self._deferred[0][0] <= now:
            self._retry_deferred(now)
        self._start_ready(now)
        if self._holders:  # renew and give back permits (only the slots holding some)
            self._maintain(self._holders, now)
        table.evict_idle(now)
        if self._dns_stats is not None and now >= self._dns_publish_s:
            self._dns_publish_s = now + DNS_STATS_EVERY_S
            self._dns_stats.publish(self.driver.curl_lookups)
        self._queue_pump()

    def _out_of_fds(self, key, request, error, now_s):
        """The connection of ``request`` failed for want of file descriptors: a
        transient condition, the request waits :data:`FD_RETRY_S` and is tried again
        (counted in ``downloader/exception_type_count/builtins.OSError``)."""
        self.stats.inc_value("downloader/exception_type_count/builtins.OSError",
                             spider=self.spider)
        if not self._warned_fds:
            self._warned_fds = True
            logger.warning("Out of file descriptors (EMFILE/ENFILE) while connecting for "
                           "%(request)s: it and any other such request are tried again "
                           "after %(delay).1f s (%(error)s)",
                           {"request": request, "delay": FD_RETRY_S, "error": error},
                           extra={"spider": self.spider})
        self._deferred.append((now_s + FD_RETRY_S, key, request))

    def _retry_deferred(self, now_s):
        deferred = self._deferred
        i = 0
        while i < len(deferred) and deferred[i][0] <= now_s:
            _, key, request = deferred[i]
            self.table.enqueue(key, request, now_s)
            i += 1
        del deferred[:i]

    def _start_ready(self, now_s: float) -> None:
        keys = self._keys
        for key, request in self.table.pop_ready(now_s):
            try:
                meta = request.meta
                self.driver.add(
                    request,
                    timeout_s=float(meta.get("download_timeout", self.timeout_s)),
                    maxsize_bytes=int(meta.get("download_maxsize", self.maxsize)),
                    warnsize_bytes=int(meta.get("download_warnsize", self.warnsize)),
                    proxy=meta.get("proxy"),
                    bindaddress=meta.get("bindaddress"),
                )
            except Exception as e:  # unsupported scheme, bad meta value: the request fails
                self.table.done(key, request, now_s)
                self._send_signal(signals.request_left_downloader, request=request,
                                  spider=self.spider)
                self.send(self.engine, {"type": "download_failed", "request": request,
                                        "error": e, "slot": key})
            else:
                keys[request] = key

    def _queue_pump(self) -> None:
        if not self._pump_queued and (
                self.driver.active or self.table.queued or self._deferred or self._holders
                or (self.resolver is not None and self.resolver.pending)):
            self._pump_queued = True
            self.actor_ref.tell({"type": "pump"})
