"""Signal dispatching (Scrapy 1.2's ``scrapy.signalmanager``, without PyDispatcher).

:class:`SignalManager` keeps its own receiver registry, one per manager (a
crawler has one, ``crawler.signals``), with PyDispatcher's semantics where they
matter to Scrapy code:

* a receiver is called with only the keyword arguments it accepts (those named
  in its signature, or all of them when it takes ``**kwargs``), like
  PyDispatcher's ``robustApply``; ``signal`` and ``sender`` are offered too. The
  signature is inspected once, when the receiver is connected;
* ``weak=True`` (the default): a bound method is held through a
  :class:`weakref.WeakMethod`, so connecting ``obj.handler`` does not keep ``obj``
  alive and the receiver disappears with ``obj``. Plain functions, lambdas and
  other callables are held strongly (PyDispatcher held them weakly too, which
  silently dropped connected lambdas). ``weak=False`` holds every receiver
  strongly;
* connecting the same receiver twice to the same signal and sender keeps one
  connection;
* ``sender``: receivers connected with a sender only get signals sent by that
  sender; :data:`Any` as the sender (connect) matches every sender, and
  :data:`Any` as the signal matches every signal.

Threads: connect/disconnect/send may be called from any thread concurrently (the
registry is copy-on-write under a lock; sending takes no lock). **Handlers run on
the thread that sends the signal** — usually the thread of the actor where the
event happened (engine, scheduler, downloader, item pipeline) — so a handler that
touches shared state must lock it, and a slow handler slows that actor.
"""

import inspect
import logging
import threading
import weakref
from collections.abc import Callable

from crawlfw.utils._hooks import count_hook_error

__all__ = ["SignalManager", "Any", "Anonymous"]

logger = logging.getLogger(__name__)


class _Sentinel:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<{self.name}>"


#: Wildcard: as a connect ``sender`` it matches every sender; as a ``signal``, every signal.
Any = _Sentinel("Any")
#: The default sender of a :class:`SignalManager` created without one.
Anonymous = _Sentinel("Anonymous")


def _accepted_kwargs(receiver):
    """Names of the keyword arguments ``receiver`` accepts, or None for "all"."""
    try:
        sig = inspect.signature(receiver)
    except (TypeError, ValueError):  # some builtins have no signature: offer everything
        return None
    names = []
    for param in sig.parameters.values():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            return None
        if param.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          inspect.Parameter.KEYWORD_ONLY):
            names.append(param.name)
    return frozenset(names)


class _Receiver:
    """A connected receiver: its (weak or strong) reference and accepted kwargs."""

    __slots__ = ("sender", "_strong", "_weak", "accepted")

    def __init__(self, receiver, sender, weak, on_dead):
        self.sender = sender
        self._strong = None
        self._weak = None
        if weak and inspect.ismethod(receiver):
            try:
                self._weak = weakref.WeakMethod(receiver, on_dead)
            except TypeError:  # __self__ not weak-referenceable (__slots__ classes)
                self._strong = receiver
        else:
            self._strong = receiver
        self.accepted = _accepted_kwargs(receiver)

    def get(self):
        """The receiver, or None once a weakly held one has been collected."""
        if self._strong is not None:
            return self._strong
        return self._weak()

    def matches(self, receiver, sender):
        return self.sender is sender and self.get() == receiver


class SignalManager:
    """Connects receivers to signals and sends signals to them.

    Args:
        sender: the default sender of this manager's signals (a crawler passes
            itself); :data:`Anonymous` when omitted.
    """

    def __init__(self, sender=Anonymous):
        self.sender = sender
        self._lock = threading.Lock()
        # signal -> tuple of _Receiver (replaced, never mutated: readers take no lock)
        self._receivers = {}
        # set by WeakMethod callbacks (which may run on any thread, even one that
        # holds the lock), consumed by the next connect/disconnect
        self._dead = [False]

    def _on_dead(self):
        dead = self._dead

        def mark(_ref):
            dead[0] = True

        return mark

    def _prune_locked(self):
        if not self._dead[0]:
            return
        self._dead[0] = False
        for signal, entries in list(self._receivers.items()):
            alive = tuple(e for e in entries if e.get() is not None)
            if alive:
                self._receivers[signal] = alive
            else:
                del self._receivers[signal]

    def connect(self, receiver, signal, **kwargs):
        """Connect a receiver to a signal.

        Args:
            receiver (callable): called as ``receiver(**accepted_kwargs)`` on each send.
            signal: a signal object (see :mod:`crawlfw.signals`; any hashable
                object works) or :data:`Any`.
            **kwargs: ``sender`` (default: this manager's sender; :data:`Any` for
                every sender) and ``weak`` (default True: hold bound methods weakly).

        Raises:
            TypeError: ``receiver`` is not callable, or an unknown keyword is given.
        """
        sender = kwargs.pop('sender', self.sender)
        weak = kwargs.pop('weak', True)
        if kwargs:
            raise TypeError(f"connect() got unexpected keyword arguments: {sorted(kwargs)}")
        if not callable(receiver):
            raise TypeError(f"Signal receiver must be callable, got {receiver!r}")
        entry = _Receiver(receiver, sender, weak, self._on_dead())
        with self._lock:
            self._prune_locked()
            entries = self._receivers.get(signal, ())
            if any(e.matches(receiver, sender) for e in entries):
                return
            self._receivers[signal] = entries + (entry,)

    def disconnect(self, receiver, signal, **kwargs):
        """Disconnect a receiver from a signal (a no-op when it is not connected).

        Args:
            receiver (callable): the receiver given to :meth:`connect`.
            signal: the signal it was connected to.
            **kwargs: ``sender`` as given to :meth:`connect`; ``weak`` is ignored.
        """
        sender = kwargs.pop('sender', self.sender)
        kwargs.pop('weak', None)
        if kwargs:
            raise TypeError(f"disconnect() got unexpected keyword arguments: {sorted(kwargs)}")
        with self._lock:
            self._prune_locked()
            entries = self._receivers.get(signal, ())
            kept = tuple(e for e in entries if not e.matches(receiver, sender))
            if kept:
                self._receivers[signal] = kept
            else:
                self._receivers.pop(signal, None)

    def disconnect_all(self, signal, **kwargs):
        """Disconnect every receiver of a signal connected with the given sender.

        Args:
            signal: the signal.
            **kwargs: ``sender`` (default: this manager's sender; :data:`Any`
                disconnects the receivers of every sender).
        """
        sender = kwargs.pop('sender', self.sender)
        with self._lock:
            entries = self._receivers.get(signal, ())
            kept = tuple(e for e in entries
                         if sender is not Any and e.sender is not sender
                         and e.get() is not None)
            if kept:
                self._receivers[signal] = kept
            else:
                self._receivers.pop(signal, None)

    def _live_receivers(self, signal, sender):
        """Yield ``(receiver, accepted)`` for the live receivers matching a send."""
        for key in (signal, Any) if signal is not Any else (Any,):
            for entry in self._receivers.get(key, ()):
                if entry.sender is not Any and entry.sender is not sender:
                    continue
                receiver = entry.get()
                if receiver is not None:
                    yield receiver, entry.accepted

    def has_receivers(self, *signals) -> bool:
        """Return True when any of ``signals`` has a receiver connected (or a receiver
        of every signal is): an O(1) test for senders that would do work to send.

        Args:
            *signals: the signals.
        """
        receivers = self._receivers
        if Any in receivers:
            return True
        for signal in signals:
            if signal in receivers:
                return True
        return False

    def send_catch_log(self, signal: object,
                       **kwargs: object) -> list[tuple[Callable[..., object], object]]:
        """Send a signal to every connected receiver, catching and logging their errors.

        Each receiver is called, in connection order, with the keyword arguments
        it accepts among ``kwargs`` plus ``signal`` and ``sender``. An exception
        raised by a receiver is logged at ERROR ("Error caught on signal handler:
        <receiver>") with its traceback, and does not stop the other receivers;
        exceptions of the ``dont_log`` class(es) (e.g. ``DontCloseSpider`` for
        ``spider_idle``) are not logged. A logged error is counted in the stat
        ``hook_errors/signal_handler`` of the sender (the crawler) when it has stats.
        Receivers run on the calling thread.

        Args:
            signal: the signal to send.
            **kwargs: the signal's arguments; reserved keys: ``sender`` (default:
                this manager's sender) and ``dont_log`` (exception class or tuple
                of classes).

        Returns:
            list[tuple[callable, object]]: ``(receiver, result)`` for each
            receiver, where ``result`` is its return value or the exception
            instance it raised (Scrapy returned a Twisted ``Failure`` there).
        """
        receivers = self._receivers
        if signal not in receivers and Any not in receivers:
            return []  # nobody connected: the common case on the per-request hot path
        sender = kwargs.pop('sender', self.sender)
        dont_log = kwargs.pop('dont_log', None)
        spider = kwargs.get('spider')
        named = kwargs
        named['signal'] = signal
        named['sender'] = sender
        responses = []
        for receiver, accepted in self._live_receivers(signal, sender):
            if accepted is None:
                call_kwargs = named
            else:
                call_kwargs = {k: v for k, v in named.items() if k in accepted}
            try:
                result = receiver(**call_kwargs)
            except Exception as exc:
                if dont_log is None or not isinstance(exc, dont_log):
                    logger.error("Error caught on signal handler: %(receiver)s",
                                 {'receiver': receiver},
                                 exc_info=True, extra={'spider': spider})
                    count_hook_error(sender, "signal_handler")
                result = exc
            responses.append((receiver, result))
        return responses

    def send_catch_log_deferred(self, signal, **kwargs):
        """Like :meth:`send_catch_log` (kept for Scrapy API compatibility).

        Scrapy let handlers return Deferreds and returned a Deferred; here every
        handler is synchronous, so this returns the same list as
        :meth:`send_catch_log` once every handler has returned.

        Returns:
            list[tuple[callable, object]]: ``(receiver, result_or_exception)``.
        """
        return self.send_catch_log(signal, **kwargs)

    async def send_catch_log_async(self, signal, **kwargs):
        """Like :meth:`send_catch_log`, and wait for the handlers that return an
        awaitable (``async def`` handlers, Scrapy 2.14's asynchronous signal handlers).

        Every handler is called first, in connection order, on the calling thread; the
        awaitables they return (coroutines, ``asyncio`` or ``concurrent.futures``
        futures) are then awaited together on the running loop. An exception they end
        with is logged as :meth:`send_catch_log` logs one ("Error caught on signal
        handler: <receiver>", not for the ``dont_log`` classes) and becomes the result.

        Args:
            signal: the signal to send.
            **kwargs: the signal's arguments (``sender`` and ``dont_log`` as in
                :meth:`send_catch_log`).

        Returns:
            list[tuple[callable, object]]: ``(receiver, result or exception)``, the
            result of an awaitable handler being what it finished with.
        """
        import asyncio  # (loaded on first use: a plain crawl needs no asyncio)
        import concurrent.futures

        dont_log = kwargs.get('dont_log')
        spider = kwargs.get('spider')
        sender = kwargs.get('sender', self.sender)
        responses = self.send_catch_log(signal, **kwargs)
        pending = [(i, result) for i, (_, result) in enumerate(responses)
                   if inspect.isawaitable(result) or isinstance(result, concurrent.futures.Future)]
        if not pending:
            return responses
        awaited = await asyncio.gather(
            *(asyncio.wrap_future(r) if isinstance(r, concurrent.futures.Future) else r
              for _, r in pending),
            return_exceptions=True)
        for (index, _), result in zip(pending, awaited, strict=True):
            receiver = responses[index][0]
            if isinstance(result, Exception):
                if dont_log is None or not isinstance(result, dont_log):
                    logger.error("Error caught on signal handler: %(receiver)s",
                                 {'receiver': receiver},
                                 exc_info=(type(result), result, result.__traceback__),
                                 extra={'spider': spider})
                    count_hook_error(sender, "signal_handler")
            responses[index] = (receiver, result)
        return responses

    async def wait_for(self, signal):
        """Wait until ``signal`` is next sent (Scrapy 2.14), from whichever thread
        sends it.

        Call it from a coroutine; its loop is woken thread-safely, and the temporary
        receiver is disconnected when the wait ends (or is cancelled).

        Args:
            signal: the signal to wait for.

        Returns:
            None
        """
        import asyncio

        loop = asyncio.get_running_loop()
        future = loop.create_future()

        def wake():
            if not future.done():
                future.set_result(None)

        def handler():
            try:
                loop.call_soon_threadsafe(wake)
            except RuntimeError:  # the loop closed meanwhile
                pass

        self.connect(handler, signal=signal, weak=False)
        try:
            await future
        finally:
            self.disconnect(handler, signal=signal)
