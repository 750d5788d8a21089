"""The base class of crawlfw's actors: dispatch by message ``type``, schema checks, and
reporting unhandled failures to the Supervisor."""

import functools
import logging
import queue
import sys
import threading
from collections.abc import Mapping
from typing import Any

import pykka

from crawlfw.actors import messages
from crawlfw.actors._pykka import Envelope
from crawlfw.actors._validation import validate_message, validation_mode
from crawlfw.core.control.placement import AUTO, OFF, parse_cpu_affinity, placement
from crawlfw.exceptions import InvalidMessage

logger = logging.getLogger(__name__)

__all__ = ["CrawlActor", "PeekableInbox", "current_actor"]

_this_thread = threading.local()
_ActorRef = pykka.ActorRef


def current_actor() -> "CrawlActor | None":
    """The :class:`CrawlActor` whose thread calls this, or None on any other thread.

    Set once per actor thread as its ``on_start`` begins (nothing per message), so code
    that must not wait on an actor's thread (``crawler.engine.download``) can tell where
    it runs by the actor's ``role``, not by thread names.
    """
    return getattr(_this_thread, "actor", None)

#: Messages that only update the receiver's counters: losing them at shutdown loses nothing.
_COUNTING_MESSAGES = frozenset(
    {"items_processed", "response_scraped", "start_requests_pulled", "idle_checked"}
)


def _cpu_mode(settings) -> "str | frozenset[int]":
    """``CPU_AFFINITY`` read from ``settings`` (None: the default, ``'auto'``); a bad
    value, already refused when the crawler was made (``check_settings``), is ``'off'``."""
    if settings is None:
        return AUTO
    try:
        return parse_cpu_affinity(settings.get("CPU_AFFINITY", AUTO))
    except ValueError:
        return OFF


_NOTHING = object()  # PeekableInbox: no envelope taken by peek()
_simple_get = queue.SimpleQueue.get
_simple_empty = queue.SimpleQueue.empty
_simple_qsize = queue.SimpleQueue.qsize


class PeekableInbox(queue.SimpleQueue):
    """An actor's inbox (a ``queue.SimpleQueue``: one C lock, no ``Condition``) whose
    consumer may look at the next envelope without taking it (:meth:`peek`).

    ``peek`` takes the next envelope out of the queue and keeps it aside; ``get``,
    ``get_nowait``, ``empty`` and ``qsize`` give or count it first, so the order is the
    queue's. Senders only ``put`` (the C method, untouched); ``peek``/``get`` are the
    actor's own thread's (pykka's loop, :class:`~crawlfw.actors._childref.ChildRef`'s
    hand-over on the dying actor's thread), so the envelope kept aside needs no lock.
    """

    def __init__(self):
        self._head: Any = _NOTHING

    def peek(self) -> Any:
        """The next envelope, left for ``get``.

        Raises:
            queue.Empty: nothing waits.
        """
        head = self._head
        if head is _NOTHING:
            head = self._head = _simple_get(self, False)
        return head

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        """As ``queue.SimpleQueue.get``, the envelope :meth:`peek` looked at first."""
        head = self._head
        if head is _NOTHING:
            return _simple_get(self, block, timeout)
        self._head = _NOTHING
        return head

    def get_nowait(self) -> Any:
        return self.get(False)

    def empty(self) -> bool:
        return self._head is _NOTHING and _simple_empty(self)

    def qsize(self) -> int:
        return (self._head is not _NOTHING) + _simple_qsize(self)


class CrawlActor(pykka.ThreadingActor):
    """A Pykka threading actor handling flat message dicts.

    A message ``{"type": "fetch", ...}`` is handled by the method ``handle_fetch(message)``;
    its return value is the reply to an ``ask``. Subclasses set ``role`` and implement
    ``handle_<type>`` methods. Runs on its own (daemon) thread; every ``handle_*`` method
    runs on that thread only.

    Args:
        crawl_id: the crawl this actor belongs to ("" for none).
        supervisor: the Supervisor's ``ActorRef``, told ``actor_failed`` if this actor dies.
        key: distinguishes siblings of one role (a downloader's slot), else "".
        settings: the crawl settings, for ``MESSAGE_VALIDATION``.

    Validation: with mode ``'all'`` every message sent with :meth:`send` and every one
    received is checked; with ``'boundary'`` only actors whose ``boundary`` is True
    (the Supervisor) check what they receive. A message that fails the check is logged
    and dropped (an ``ask`` gets ``{"type": "message_rejected", "error": ...}``); the actor
    lives on.
    """

    role = "custom"
    boundary = False
    use_daemon_thread = True

    #: Message types whose handlers' messages are held while more messages wait in the
    #: inbox, then told in one burst (see :meth:`on_receive`).
    hold_types: frozenset = frozenset()

    #: Most messages held back before they are told anyway.
    max_held = 24

    @staticmethod
    def _create_actor_inbox() -> Any:  # pykka hook, called from Actor.__init__
        """The actor's inbox: a ``queue.SimpleQueue`` of pykka envelopes.

        pykka's default, ``queue.Queue``, is written in Python over a ``Condition``:
        every ``put`` and ``get`` takes its mutex and notifies a waiter, about 3 µs of
        CPU per message between two threads here. ``SimpleQueue`` is one C lock, about
        0.25 µs, with the same ``put``/``get``/``get_nowait``/``empty``/``qsize`` that
        pykka, :meth:`on_receive` and :class:`~crawlfw.actors._childref.ChildRef` use.
        An actor that must look at its inbox's head takes a :class:`PeekableInbox`
        (the Scheduler with a shared frontier); the Downloader's inbox also wakes its
        curl wait.
        """
        return queue.SimpleQueue()

    def __init__(self, *, crawl_id: str = "", supervisor=None, key: str = "", settings=None):
        super().__init__()
        self.crawl_id = crawl_id
        self.supervisor = supervisor
        self.key = key
        mode = validation_mode(settings)
        self._check_sent = mode == "all"
        self._check_received = mode == "all" or (mode == "boundary" and self.boundary)
        self._cpu_mode = _cpu_mode(settings)
        self._cpu_interval = (None if settings is None
                              else settings.getfloat("CPU_AFFINITY_INTERVAL", 5.0))
        self._held: list[tuple[Any, Mapping[str, Any]]] = []  # (ref, message) sent while holding, not yet told
        self._holding = False
        #: message type -> its bound ``handle_<type>`` method (:meth:`_find_handler`)
        self._handlers: dict[str, Any] = {}

    def _actor_loop(self) -> None:  # pykka hook: the body of the actor's thread
        """Run pykka's loop on a thread placed by ``CPU_AFFINITY``
        (:mod:`crawlfw.core.control.placement`): by default every actor thread of the
        process on one CPU, so that hand-offs between them wake no other processor."""
        self._native_id = threading.get_native_id()  # its CPU time, for the dashboard
        if self._cpu_mode == OFF:
            super()._actor_loop()
            return
        where = placement(self._cpu_interval)
        placed = where.enter(self._cpu_mode)
        try:
            super()._actor_loop()
        finally:
            if placed:
                where.leave()

    def send(self, ref: pykka.ActorRef, message: Mapping[str, Any]) -> None:
        """``tell`` ``message`` to ``ref``, checking it first when validation is ``'all'``.

        A message to an actor that has already stopped is logged and dropped.

        Raises:
            InvalidMessage: the message breaks its schema (a bug in the sender).
        """
        if self._check_sent:
            validate_message(message)
        if self._holding:
            self._held.append((ref, message))
        else:
            self._tell(ref, message)

    def _tell(self, ref: pykka.ActorRef, message: Mapping[str, Any]) -> None:
        """``ref.tell(message)``; a message to a stopped actor goes to :meth:`on_undelivered`.

        For pykka's own ``ActorRef`` its ``tell`` is done here (the stopped check, an
        ``Envelope`` into the inbox: what :mod:`crawlfw.actors._pykka` checks it does),
        two Python calls fewer per message; any other ref (a ``ChildRef``) is told."""
        if ref.__class__ is _ActorRef:
            if not ref.actor_stopped.is_set():
                ref.actor_inbox.put(Envelope(message))
                return
            self.on_undelivered(ref, message)
            return
        try:
            ref.tell(message)
        except pykka.ActorDeadError:
            self.on_undelivered(ref, message)

    def on_undelivered(self, ref: pykka.ActorRef, message: Mapping[str, Any]) -> None:
        """Called (on this actor's thread) for a message whose receiver has stopped.

        This only happens during shutdown, when the Supervisor stops the tree in order.
        Counting messages are dropped quietly; others are logged. Actors that send
        work (the Scheduler) override this to keep it.
        """
        if message["type"] in _COUNTING_MESSAGES:
            logger.debug("%s: %r message dropped, its receiver has stopped", self, message["type"])
        else:
            logger.warning("%s: %r message dropped, its receiver has stopped", self, message["type"])

    def on_receive(self, message: messages.Message) -> Any:
        """Dispatch ``message`` to its ``handle_<type>`` method; return the reply.

        While a message of a type in :attr:`hold_types` is handled, what the handler
        sends is held; it is told, in order, once the inbox is empty or
        :attr:`max_held` messages are held. Any other message first has the held ones
        told. So each receiver gets the same messages in the same order, but an idle
        receiver is woken once per burst instead of once per message, which saves
        thread switches. Subclasses with ``hold_types`` call :meth:`flush_held` in
        ``on_stop``.
        """
        if self.hold_types and message.__class__ is dict and message.get("type") in self.hold_types:
            self._holding = True
            try:
                return self._handle_message(message)
            finally:
                self._holding = False
                if self._held and (
                    len(self._held) >= self.max_held
                    or self.actor_inbox.qsize() == 0  # type: ignore[attr-defined]  # a (Simple)Queue
                ):
                    self.flush_held()
        if self._held:
            self.flush_held()
        return self._handle_message(message)

    def flush_held(self) -> None:
        """Tell the messages held while handling :attr:`hold_types`, in order."""
        held, self._held = self._held, []
        for ref, message in held:
            self._tell(ref, message)

    def _handle_message(self, message: messages.Message) -> Any:
        if self._check_received:
            try:
                validate_message(message)
            except InvalidMessage as e:
                logger.error("%s rejected a message: %s", self, e)
                return {"type": "message_rejected", "error": str(e)}
        try:
            handler = self._handlers[message["type"]]
        except (TypeError, KeyError):
            handler = self._find_handler(message)
            if handler is None:
                error = f"{type(self).__name__} does not handle message {message!r:.200}"
                logger.error(error)
                return {"type": "message_rejected", "error": error}
        return handler(message)

    def _find_handler(self, message: Any) -> Any:
        """``self.handle_<type>`` for ``message`` (None: not a dict with a ``type`` this
        actor handles), noted in ``_handlers`` so the next message of its type finds it
        with one dict lookup (the same bound method ``getattr`` gives: an actor's class
        is not changed while it runs)."""
        try:
            kind = message["type"]
            handler = getattr(self, "handle_" + kind)
        except (TypeError, KeyError, AttributeError):
            return None
        if kind.__class__ is str:
            self._handlers[kind] = handler
        return handler

    def _handle_receive(self, message: Any) -> Any:  # pykka hook: every message
        """pykka's ``_handle_receive`` without its four ``isinstance`` tests (stop,
        proxy calls) for a message dict, which is none of those: straight to
        :meth:`on_receive`."""
        if message.__class__ is dict:
            return self.on_receive(message)
        return super()._handle_receive(message)

    def __init_subclass__(cls, **kwargs):
        """Make an exception in a subclass's ``on_start`` reach :meth:`on_failure`.

        Pykka 4 logs such an exception and stops the actor without calling
        ``on_failure``: the Supervisor would never learn of it and the crawl would run on
        without the actor (e.g. an item pipeline whose ``open_spider`` raises: every item
        lost). The ``on_start`` a subclass defines is wrapped to report the failure first.
        """
        super().__init_subclass__(**kwargs)
        on_start = cls.__dict__.get("on_start")
        if on_start is None or getattr(on_start, "_reports_failure", False):
            return

        @functools.wraps(on_start)
        def reporting_on_start(self):
            _this_thread.actor = self
            try:
                on_start(self)
            except Exception:
                if not self._start_failure_reported:
                    self._start_failure_reported = True
                    self.on_failure(*sys.exc_info())
                raise

        reporting_on_start._reports_failure = True
        cls.on_start = reporting_on_start

    _start_failure_reported = False

    def on_start(self) -> None:
        """Note this actor as its thread's (:func:`current_actor`); subclasses' own
        ``on_start`` do it too (wrapped in :meth:`__init_subclass__`)."""
        _this_thread.actor = self

    def on_failure(self, exception_type, exception_value, traceback):
        self.flush_held()
        if self.supervisor is not None:
            try:
                self.supervisor.tell(
                    {
                        "type": "actor_failed",
                        "crawl_id": self.crawl_id,
                        "role": self.role,
                        "key": self.key,
                        "error": f"{exception_type.__name__}: {exception_value}",
                    }
                )
            except pykka.ActorDeadError:
                logger.error("%s died and its supervisor is gone", self)

    def __str__(self):
        key = f" {self.key}" if self.key else ""
        return f"{type(self).__name__}({self.crawl_id}{key})"

