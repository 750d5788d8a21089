"""DownloaderActor: one per download slot (domain), driving one pycurl ``CurlMulti``.

Receives ``fetch`` from the Engine; queues the request in its
:class:`crawlfw.core.slot.DownloadSlot` (``CONCURRENT_REQUESTS_PER_DOMAIN``,
``DOWNLOAD_DELAY``) and starts transfers on its :class:`crawlfw.core.curl.MultiDriver`;
sends ``response_downloaded`` / ``download_failed`` back to the Engine.

Only this actor's thread touches the CurlMulti. While transfers are in flight the actor
tells itself ``pump``: one pump waits in curl (epoll) until a transfer finishes, a message
arrives (the inbox writes a byte to a pipe the wait also watches) or curl's timer fires,
so it never busy-polls; with nothing in flight no pump is queued and the thread sleeps in
``queue.get()`` (an idle crawler uses ~0 % CPU).
"""

import os
import queue
import time

from crawlfw import signals
from crawlfw.actors._base import CrawlActor
from crawlfw.core.curl import MultiDriver, driver_options
from crawlfw.core.slot import DownloadSlot
from crawlfw.exceptions import StopDownload

__all__ = ["DownloaderActor"]

#: Longest single wait in curl, in seconds (curl's own timers are usually shorter).
MAX_WAIT_S = 1.0


class _WakeupInbox(queue.Queue):
    """The actor's inbox; every ``put`` also makes ``wake_fd`` readable."""

    def __init__(self):
        super().__init__()
        self.closed = False
        self.wake_fd, self._write_fd = os.pipe()
        os.set_blocking(self.wake_fd, False)
        os.set_blocking(self._write_fd, False)

    def put(self, item, block=True, timeout=None):
        super().put(item, block, timeout)
        if self.closed:
            return
        try:
            os.write(self._write_fd, b"\0")
        except BlockingIOError:  # the pipe is full, so it is readable anyway
            pass
        except OSError:  # closed by the actor's thread meanwhile
            if not self.closed:
                raise

    def drain(self) -> None:
        """Consume the wakeup bytes (call before checking ``empty()`` and waiting)."""
        try:
            while os.read(self.wake_fd, 4096):
                pass
        except BlockingIOError:
            pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self.wake_fd)
            os.close(self._write_fd)


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


class DownloaderActor(CrawlActor):
    """Args:
    crawler: the Crawler (``settings``, ``spider``).
    slot: the download slot key this actor serves (usually the host name).
    engine: the Engine's ActorRef (default ``reply_to``).
    **kw: ``CrawlActor`` arguments.
    """

    role = "downloader"

    def __init__(self, crawler, slot: str, engine, **kw):
        super().__init__(settings=crawler.settings, key=slot, **kw)
        settings = crawler.settings
        spider = crawler.spider
        self.spider = spider
        self._signal_manager = crawler.signals
        self._send_signal = crawler.signals.send_catch_log  # a no-op without receivers
        self.slot_key = slot
        self.engine = engine
        self._shared_slot = bool(settings.get("FRONTIER_URL"))
        if self._shared_slot:  # limits held across the workers of the crawl
            from crawlfw.core.redis_slot import SharedDownloadSlot

            self.slot = SharedDownloadSlot.from_settings(settings, spider, slot=slot,
                                                         stats=crawler.stats)
        else:
            self.slot = DownloadSlot.from_settings(settings, spider)
        # Shared with extensions (AutoThrottle) as crawler.engine.downloader.slots[key].
        crawler.download_slots[slot] = self.slot
        self.timeout_s = settings.getfloat("DOWNLOAD_TIMEOUT")
        self.maxsize = getattr(spider, "download_maxsize", settings.getint("DOWNLOAD_MAXSIZE"))
        self.warnsize = getattr(spider, "download_warnsize", settings.getint("DOWNLOAD_WARNSIZE"))
        self.driver_options = driver_options(settings)  # CURL_MAXCONNECTS, DNSCACHE_ENABLED...
        self.driver = None
        self._pump_queued = False

    def _create_actor_inbox(self):  # pykka hook, called from Actor.__init__
        self._inbox = _WakeupInbox()
        return self._inbox

    def on_start(self):
        self.driver = MultiDriver(**self.driver_options)
        self.driver.stream_signals = _StreamSignals(self._signal_manager, self.spider)

    def on_stop(self):
        self._close()

    def on_failure(self, exception_type, exception_value, traceback):
        self._close()
        super().on_failure(exception_type, exception_value, traceback)

    def _close(self):
        if self.driver is not None:
            self.driver.abort_all()
            self.driver.close()
            self.driver = None
        close = getattr(self.slot, "close", None)  # a shared slot gives its permits back
        if close is not None:
            close()
        self._inbox.close()

    def handle_fetch(self, message):
        request = message["request"]
        self.slot.enqueue(request)
        self._send_signal(signals.request_reached_downloader, request=request,
                          spider=self.spider)
        self.engine = message["reply_to"]
        self._start_ready(time.monotonic())
        self._queue_pump()

    def handle_pump(self, message):
        self._pump_queued = False
        inbox = self._inbox
        inbox.drain()
        slot = self.slot
        if inbox.empty():
            wait_s = MAX_WAIT_S
            if slot.queued:
                ready_in = slot.next_ready_in_s(time.monotonic())
                if ready_in is not None:
                    wait_s = min(wait_s, ready_in)
        else:
            wait_s = 0.0  # messages are waiting: only collect what is already done
        results = self.driver.perform(wait_s, inbox.wake_fd)
        engine = self.engine
        for result in results:
            request = result.request
            slot.transfer_done(request)
            self._send_signal(signals.request_left_downloader, request=request,
                              spider=self.spider)
            if result.error is None:
                self.send(engine, {"type": "response_downloaded", "request": request,
                                   "response": result.response, "slot": self.slot_key})
            else:
                self.send(engine, {"type": "download_failed", "request": request,
                                   "error": result.error, "slot": self.slot_key})
        self._start_ready(time.monotonic())
        self._queue_pump()

    def _start_ready(self, now_s: float) -> None:
        for request in self.slot.pop_ready(now_s):
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
                self.slot.transfer_done(request)
                self._send_signal(signals.request_left_downloader, request=request,
                                  spider=self.spider)
                self.send(self.engine, {"type": "download_failed", "request": request,
                                        "error": e, "slot": self.slot_key})

    def _queue_pump(self) -> None:
        if not self._pump_queued and (self.driver.active or self.slot.queued or (
                self._shared_slot and self.slot.holding)):  # permits to give back
            self._pump_queued = True
            self.actor_ref.tell({"type": "pump"})
