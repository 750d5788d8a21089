"""``crawler.engine``: the :class:`EngineFacade` through which code outside the actors
(extensions, middlewares, pipelines, the shell, the control endpoint) reaches a crawl's
EngineActor, by message.

It lives below :mod:`crawlfw.crawler` (which re-exports it, its public place) because the
Supervisor builds one for each crawl it starts: the imports point one way,
``crawlfw.crawler -> crawlfw.actors -> crawlfw.core``.
"""

import concurrent.futures
import itertools
import logging
import random
import time
from collections.abc import Mapping
from typing import Any

import pykka

from crawlfw.actors._base import current_actor
from crawlfw.actors._validation import validate_message, validation_mode
from crawlfw.exceptions import DownloadCancelled
from crawlfw.http import Response
from crawlfw.spiders._async import NotSuspendable

logger = logging.getLogger(__name__)

__all__ = ["EngineFacade", "SlotState", "SlotsView"]

#: Seconds between checks that the engine still runs while ``download()`` waits.
_DOWNLOAD_POLL_S = 1.0

#: Roles of the actors that carry a download (the engine and the downloaders move it; a
#: robots.txt it waits for goes through the scheduler and the spider runner): a blocking
#: ``download()`` on one of their threads would wait for itself, so it is refused.
_DOWNLOAD_CARRIERS = frozenset(("engine", "scheduler", "downloader", "spider_runner"))


class EngineFacade:
    """``crawler.engine``: thread-safe calls into a crawl's EngineActor (by message).

    Scrapy code calls ``crawler.engine.crawl(request, spider)`` and
    ``crawler.engine.close_spider(spider, reason)``; both work here from any thread.
    ``crawl`` tells the engine directly: code running inside the crawl (a middleware's
    callback on the SpiderRunner's thread, a ``spider_idle`` handler) relies on the engine
    seeing the request before that thread's next message, or the engine could find the
    crawl idle and close it with the request in transit. ``close_spider`` goes to the
    Supervisor (``stop_crawl``) when there is one. Processes outside the tree send the
    Supervisor ``crawl`` messages, which it forwards.

    ``crawl`` is where user code hands the engine a request, so the message is checked
    against its schema first (unless ``MESSAGE_VALIDATION = 'off'``): a bad argument
    raises in the caller, naming it, instead of reaching the engine.

    Args:
        crawler: the Crawler.
        ref: the crawl's EngineActor ref.
        supervisor: the Supervisor ref, or None to message the engine directly.
        downloaders: the crawl's ``DownloaderPool`` (``crawler.engine.downloader``), or
            None.
    """

    def __init__(self, crawler, ref, supervisor=None, downloaders=None):
        self.crawler = crawler
        self.ref = ref
        self.supervisor = supervisor
        self.downloader = _DownloaderView(downloaders)
        self._check = validation_mode(crawler.settings) != "off"
        self._keys = itertools.count()  # download() keys (itertools.count is thread-safe)

    @property
    def running(self) -> bool:
        return self.ref.is_alive()

    def crawl(self, request, spider=None) -> None:
        """Schedule ``request`` (the dupefilter applies unless ``dont_filter``).

        Args:
            request: a ``crawlfw.http.Request``.
            spider: ignored (Scrapy passes the spider); the crawl's spider is used.

        Raises:
            crawlfw.exceptions.InvalidMessage: ``request`` is no ``Request`` (the text
                names the class given), checked before anything is sent.
        """
        message = {"type": "crawl", "crawl_id": self.crawler._crawl_id or "", "request": request}
        if self._check:
            validate_message(message)
        try:
            self.ref.tell(message)
        except pykka.ActorDeadError:
            logger.debug("engine already stopped; %s ignored", request)

    schedule = crawl

    def download(self, request, spider=None, timeout_s: float = 180.0):
        """Download ``request`` through the crawl: in an ``async def`` spider callback,
        an awaitable of its response; anywhere else, block until it arrives.

        Scrapy's ``engine.download(request)`` returns a Deferred (``download_async``, a
        coroutine). Here:

        - **In an ``async def`` spider callback or errback** (on the SpiderRunner's
          thread) it returns an ``asyncio.Future`` at once (the download is sent
          then): ``response = await self.crawler.engine.download(request)``, or
          Scrapy's ``await maybe_deferred_to_future(...)`` of it. The callback waits
          without holding the thread: the SpiderRunner goes on with other responses and
          goes on with the callback when the Engine answers (several downloads at once
          with ``asyncio.gather``). The response the callback waits for keeps the crawl
          open. ``timeout_s`` does not apply (the request's ``download_timeout`` does).
        - **Elsewhere** the caller's thread waits for the engine's answer to a
          ``download`` message (see :class:`crawlfw.actors.messages.Download`): code
          outside the actors (an extension's thread, a user's) and an item pipeline's
          ``process_item`` (the Pipeline actor's thread: the engine never waits for it,
          but the actor's other items do meanwhile). The media pipelines
          (``FilesPipeline``, ``ImagesPipeline``) do not block: their items wait in the
          Pipeline actor while it goes on with other items; an item pipeline of one's
          own does the same by returning a :class:`crawlfw.pipelines.AwaitingDownloads`
          from ``process_item``.

        As in Scrapy, the request does not go through the scheduler (no dupefilter, no
        frontier) nor the spider middlewares: it passes the downloader middlewares
        (redirects and retries are downloaded the same way, robots.txt, cookies...) and
        a download slot, and is counted, logged ("Crawled (200) ...") and signalled
        (``response_received``) like any response. Any HTTP status is returned: media
        pipelines judge the status themselves. The request's callback and errback are
        not called. The crawl stays open while the caller waits (an item in the
        pipeline is outstanding until the pipeline returns); if the spider closes first,
        :class:`~crawlfw.exceptions.DownloadCancelled` is raised.

        Args:
            request: the ``Request`` to download.
            spider: ignored (Scrapy passes the spider); the crawl's spider is used.
            timeout_s: seconds a blocking call waits for the response before giving up.

        Returns:
            The ``Response`` (any HTTP status), after the downloader middlewares'
            ``process_response``; in an ``async def`` spider callback, an
            ``asyncio.Future`` of it (awaiting it raises what is listed below).

        Raises:
            crawlfw.exceptions.DownloadError: the transfer failed (DNS, connection,
                timeout...), the exception the downloader reported.
            crawlfw.exceptions.IgnoreRequest: a middleware dropped the request
                (robots.txt, offsite...).
            crawlfw.exceptions.DownloadCancelled: the spider closed (or the engine
                stopped) before the response arrived.
            TimeoutError: no response within ``timeout_s`` seconds (the message names
                the URL); the request may still be downloaded later, unused.
            RuntimeError: called on the thread of an actor that carries downloads and
                cannot wait there: the engine, scheduler, downloaders (it would wait for
                itself), or the spider runner outside an ``async def`` callback (a
                plain ``def`` callback, ``start()``, a spider middleware); the message
                says what to do instead.
            crawlfw.exceptions.InvalidMessage: ``request`` is no ``Request``.
        """
        actor = current_actor()
        if actor is not None and actor.role in _DOWNLOAD_CARRIERS:
            if actor.role == "spider_runner":
                return self._download_in_callback(actor, request)
            raise RuntimeError(
                f"engine.download({request.url}) called on the {type(actor).__name__} "
                "thread, which carries downloads itself and would wait forever; call it "
                "from an item pipeline or another thread"
            )
        if not self.running:
            raise DownloadCancelled(f"Download of {request.url} cancelled: the engine has stopped")
        answer: concurrent.futures.Future = concurrent.futures.Future()
        message = {"type": "download", "request": request, "key": next(self._keys),
                   "future": answer}
        if self._check:
            validate_message(message)
        try:
            self.ref.tell(message)
        except pykka.ActorDeadError:
            raise DownloadCancelled(
                f"Download of {request.url} cancelled: the engine has stopped") from None
        deadline = time.monotonic() + timeout_s
        gone_seen = False
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"No response for {request.url} within {timeout_s:g} s")
            try:
                return answer.result(timeout=min(remaining, _DOWNLOAD_POLL_S))
            except concurrent.futures.TimeoutError:
                pass
            if not self.running:  # the engine died without answering
                if gone_seen:
                    raise DownloadCancelled(
                        f"Download of {request.url} cancelled: the engine has stopped")
                gone_seen = True  # one more wait: an answer already set still counts

    async def download_async(self, request):
        """Scrapy 2.14's ``await engine.download_async(request)``: the ``Response`` of
        :meth:`download` (awaited in an ``async def`` spider callback without holding
        the thread; elsewhere the call blocks, as :meth:`download` does).

        Raises:
            As :meth:`download`.
        """
        result = self.download(request)
        if isinstance(result, Response):
            return result
        return await result

    def _download_in_callback(self, actor, request):
        """:meth:`download` on the SpiderRunner's thread: an ``asyncio.Future`` when an
        ``async def`` callback or errback calls it, else the one clear error."""
        if self._check:
            validate_message({"type": "download", "request": request, "key": 0,
                              "reply_to": actor.actor_ref})
        try:
            return actor.callback_download(request)
        except NotSuspendable:
            raise RuntimeError(
                f"engine.download({request.url}) called on the {type(actor).__name__} "
                "thread outside an async def spider callback or errback (in a plain def "
                "callback, start() or a spider middleware), where it cannot wait without "
                "stopping the crawl: make the callback async def and await it, "
                "'response = await maybe_deferred_to_future("
                "self.crawler.engine.download(request))' or "
                "'response = await self.crawler.engine.download_async(request)'"
                " (or download from an item pipeline)") from None

    def resume_parked(self, request, error=None) -> None:
        """Give the engine back a request a downloader middleware parked (its
        ``process_request`` raised ``RequestParked``): the request goes on through the
        middlewares after that one and is downloaded, or, with ``error``, goes to
        ``process_exception`` and its errback. Thread-safe (a ``resume_parked``
        message); nothing happens if the spider has closed meanwhile (the request went
        back to the scheduler then).

        Args:
            request: the parked ``Request`` (the same object).
            error: None, or the exception the request fails with (an
                ``IgnoreRequest``: "Forbidden by robots.txt").
        """
        message = {"type": "resume_parked", "request": request}
        if error is not None:
            message["error"] = error
        self._tell_engine(message)

    def pause(self) -> None:
        """Pause the crawl (Scrapy's ``engine.pause()``): no new download starts,
        transfers in flight finish, and the spider does not close as idle."""
        self._tell_engine({"type": "pause_crawl", "crawl_id": self.crawler._crawl_id or "-"})

    def unpause(self) -> None:
        """Undo :meth:`pause` (Scrapy's ``engine.unpause()``)."""
        self._tell_engine({"type": "resume_crawl", "crawl_id": self.crawler._crawl_id or "-"})

    def _tell_engine(self, message):
        try:
            self.ref.tell(message)
        except pykka.ActorDeadError:
            logger.debug("engine already stopped; %s ignored", message["type"])

    def close_spider(self, spider=None, reason: str = "cancelled") -> None:
        """Close the spider with ``reason`` as ``finish_reason``."""
        if self.supervisor is not None:
            self._tell({"type": "stop_crawl", "crawl_id": self.crawler._crawl_id,
                        "reason": reason})
        else:
            self._tell({"type": "close_spider", "reason": reason})

    def _tell(self, message):
        try:
            (self.supervisor or self.ref).tell(message)
        except pykka.ActorDeadError:
            logger.debug("engine already stopped; %s ignored", message["type"])


#: Seconds ``crawler.engine.downloader.slots`` waits for a downloader's answer.
SLOTS_TIMEOUT_S = 5.0


class SlotState:
    """One download slot as its downloader reported it: ``crawler.engine.downloader.
    slots[key]``, Scrapy's ``scrapy.core.downloader.Slot`` read-only, but for ``delay``.

    A snapshot taken when it was looked up (its figures do not change afterwards);
    setting :attr:`delay` sends ``set_slot_delay`` to the downloader serving the slot
    (applied there from its next start, as Scrapy's AutoThrottle's change is) and
    updates this snapshot.

    Attributes:
        key: the slot key (the host name, its IP address with
            ``CONCURRENT_REQUESTS_PER_IP``, or ``meta['download_slot']``).
        delay: seconds between two request starts (settable).
        concurrency: the most transfers at once.
        randomize_delay: whether each gap is drawn from 0.5 to 1.5 times the delay.
        queue: the requests waiting, oldest first (a tuple of ``Request``; Scrapy's is a
            deque of ``(request, deferred)`` pairs).
        transferring: the requests in flight (a frozenset).
        active: the requests queued or in flight (a frozenset).
    """

    __slots__ = ("key", "concurrency", "randomize_delay", "queue", "transferring", "active",
                 "_delay", "_owner")
    key: str
    concurrency: int
    randomize_delay: bool
    queue: tuple
    transferring: frozenset
    active: frozenset
    _delay: float
    _owner: Any

    def __init__(self, owner, key: str, state: dict):
        set_ = object.__setattr__
        set_(self, "_owner", owner)
        set_(self, "key", key)
        set_(self, "_delay", float(state["delay_s"]))
        set_(self, "concurrency", state["concurrency"])
        set_(self, "randomize_delay", state["randomize_delay"])
        set_(self, "queue", tuple(state["queue"]))
        set_(self, "transferring", frozenset(state["transferring"]))
        set_(self, "active", frozenset(self.queue) | self.transferring)

    @property
    def delay(self) -> float:
        """Seconds between two request starts in this slot."""
        return self._delay

    @delay.setter
    def delay(self, value) -> None:
        try:
            delay_s = float(value)
        except (TypeError, ValueError):
            delay_s = float("nan")
        if not delay_s >= 0:
            raise ValueError(f"download slot {self.key!r}: delay must be a number of "
                             f"seconds >= 0, got {value!r}")
        self._owner.set_slot_delay(self.key, delay_s)
        object.__setattr__(self, "_delay", delay_s)

    def __setattr__(self, name, value):
        if name == "delay":
            return object.__setattr__(self, name, value)  # the property's setter
        raise AttributeError(
            f"download slot {self.key!r}: {name!r} cannot be set: "
            f"crawler.engine.downloader.slots holds snapshots; only .delay is sent to the "
            f"downloader serving the slot")

    def free_transfer_slots(self) -> int:
        """``concurrency`` minus the transfers in flight (Scrapy's method)."""
        return self.concurrency - len(self.transferring)

    def download_delay(self) -> float:
        """The delay drawn as the next gap would be (0.5 to 1.5 times :attr:`delay`
        with ``randomize_delay``), Scrapy's method."""
        if self.randomize_delay:
            return random.uniform(0.5 * self._delay, 1.5 * self._delay)  # noqa: S311
        return self._delay

    def __repr__(self) -> str:
        return (f"<SlotState {self.key!r} concurrency={self.concurrency} "
                f"delay={self._delay:.2f} active={len(self.active)} "
                f"transferring={len(self.transferring)} queue={len(self.queue)}>")


class SlotsView(Mapping):
    """``crawler.engine.downloader.slots``: the crawl's download slots, a read-only
    ``Mapping`` of slot key -> :class:`SlotState`, asked of the downloader actors that
    hold them (a ``get_slots`` message; each answers from its ``SlotTable``).

    ``view[key]`` and ``view.get(key)`` ask the one downloader serving ``key`` and
    always find the slot (crawlfw evicts an idle slot once its delay has passed, where
    Scrapy keeps it 60 s: the downloader then reports the slot it would make now, with
    the delay last set for it), so an AutoThrottle-like ``response_downloaded`` handler
    works as in Scrapy. ``len(view)``, ``iter(view)``, ``key in view``, ``items()`` ask
    every downloader and see the slots held now. Each lookup is a round trip to a
    downloader (microseconds to a few milliseconds): read it from signal handlers and
    extensions, not per request in a hot loop.

    Not on a downloader's own thread (a ``request_reached_downloader``,
    ``headers_received`` or ``bytes_received`` handler): it would wait for itself, so
    that raises ``RuntimeError``. A downloader that is dead or does not answer within
    :data:`SLOTS_TIMEOUT_S` counts as holding no slot.

    Args:
        owner: the :class:`_DownloaderView` (its pool, its ``set_slot_delay``).
    """

    def __init__(self, owner):
        self._owner = owner

    def _ask(self, ref, message) -> dict:
        actor = current_actor()
        if actor is not None and actor.role == "downloader":
            raise RuntimeError(
                "crawler.engine.downloader.slots cannot be read on a downloader's thread "
                "(a request_reached_downloader, headers_received or bytes_received "
                "handler): read it from a response_downloaded or response_received one")
        try:
            return ref.ask(message, timeout=SLOTS_TIMEOUT_S)["slots"]
        except (pykka.ActorDeadError, pykka.Timeout, KeyError, TypeError):
            return {}

    def _everything(self) -> dict:
        pool = self._owner.pool
        states = {}
        if pool is not None:
            for ref in list(pool.refs):
                if ref is not None:
                    states.update(self._ask(ref, {"type": "get_slots"}))
        return states

    def __getitem__(self, key: str) -> SlotState:
        pool = self._owner.pool
        ref = pool.ref_for(key) if pool is not None and isinstance(key, str) else None
        if ref is None:
            raise KeyError(key)
        state = self._ask(ref, {"type": "get_slots", "keys": [key]}).get(key)
        if state is None:
            raise KeyError(key)
        return SlotState(self._owner, key, state)

    def __contains__(self, key) -> bool:
        return key in self._everything()

    def __iter__(self):
        return iter(list(self._everything()))

    def __len__(self) -> int:
        return len(self._everything())

    def items(self):
        """``[(key, SlotState)]`` of every slot held now, from one round of asks."""
        return [(key, SlotState(self._owner, key, state))
                for key, state in self._everything().items()]

    def values(self):
        """``[SlotState]`` of every slot held now."""
        return [state for _, state in self.items()]

    def __repr__(self) -> str:
        return f"<SlotsView of {len(self._owner.pool or ())} downloader(s)>"


class _DownloaderView:
    """``crawler.engine.downloader``: what extensions may do to the download slots.

    The slots live in the downloader actors' threads (each in a
    :class:`crawlfw.core.transport.slots.SlotTable`), so they are changed by message to the
    downloader serving the slot, never written from another thread: AutoThrottle calls
    :meth:`set_slot_delay` where Scrapy's writes ``slots[key].delay``; a user's
    extension written for Scrapy reads :attr:`slots` (snapshots asked of the
    downloaders) and may set ``slots[key].delay``, which sends the same message.

    Args:
        pool: the crawl's ``DownloaderPool``, or None (no downloaders: calls do nothing).
    """

    def __init__(self, pool):
        self.pool = pool
        #: the engine's ``IpCache`` with ``CONCURRENT_REQUESTS_PER_IP``, else None
        self.ip_cache = None
        #: ``{slot key: delay}`` set since the engine's last ``pull_requests`` (its
        #: ``FlowControl.host_delays``): the frontier spaces its hosts by them too
        self.host_delays = None

    @property
    def slots(self) -> SlotsView:
        """Scrapy's ``downloader.slots``: a read-only :class:`SlotsView` of the crawl's
        download slots, ``{slot key: SlotState}`` (snapshots; ``.delay`` settable)."""
        return SlotsView(self)

    def slot_key(self, request) -> str:
        """The key of ``request``'s download slot as the engine computes it (by IP with
        ``CONCURRENT_REQUESTS_PER_IP`` once the host's address is known); call it on the
        engine's thread (``response_downloaded`` handlers run there)."""
        from crawlfw.core.transport.slot import slot_key

        return slot_key(request, self.ip_cache)

    def in_flight_of(self, slot: str) -> int:
        """Transfers in flight in ``slot`` (a slot key), asked of the downloader serving
        it (its slot table is the one record of them): a round trip, for logs
        (AutoThrottle's debug line), not per request. 0 for a slot not held, or a
        downloader that does not answer (see :class:`SlotsView`)."""
        state = self.slots.get(slot)
        return len(state.transferring) if state is not None else 0

    def in_flight_per_slot(self) -> dict:
        """``{slot key: requests at the downloader}`` (queued in the slot or
        transferring; slots holding none left out), from one round of ``get_slots``
        asks: what ``crawlfw status`` shows per slot."""
        counts = {}
        for key, state in self.slots.items():
            n = len(state.transferring) + len(state.queue)
            if n:
                counts[key] = n
        return counts

    def set_slot_delay(self, slot: str, delay_s: float) -> None:
        """Tell the downloader serving ``slot`` (a slot key) to space the starts of that
        slot's requests by ``delay_s`` seconds from now on (randomized as
        ``RANDOMIZE_DOWNLOAD_DELAY`` says). A dead downloader misses it (its
        replacement starts from ``DOWNLOAD_DELAY``). The frontier learns it with the
        engine's next ``pull_requests``."""
        if self.host_delays is not None:
            self.host_delays[slot] = float(delay_s)
        if self.pool is None:
            return
        ref = self.pool.ref_for(slot)
        if ref is None:
            return
        try:
            ref.tell({"type": "set_slot_delay", "slot": slot, "delay_s": float(delay_s)})
        except pykka.ActorDeadError:
            pass

