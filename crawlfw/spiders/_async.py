"""Driving spider coroutines and async generators from plain threads.

Scrapy 2 spiders write ``async def parse(self, response)`` (a coroutine or, with
``yield``, an async generator) and ``async def start(self)``. crawlfw runs spider code on
the spider runner actor's thread, which has no event loop; these helpers give each
thread one asyncio event loop of its own (made on first use, closed when the thread ends)
and run the spider's coroutines on it, on the calling thread, to completion: an
``await asyncio.sleep(1)`` in a callback holds that thread for 1 s, as a ``time.sleep``
would. No Twisted and no other loop is involved.

A spider callback may also wait for an answer that comes by message rather than from
the loop (``await crawler.engine.download(request)``, whose response the Engine sends
the spider runner): :class:`SuspendableRun` runs the callback as a task that gives the
thread back while it waits for such an answer (:func:`external_future`), so the actor
goes on with other messages, and goes on with the callback when the answer has been set
(ARCHITECTURE.md, "One request's path", step 7).
"""

import contextvars
import sys
import threading
import weakref
from typing import Any

# asyncio (about 14 ms of imports) is imported by the functions that run a loop: a
# crawl of plain callbacks and middlewares never needs it.

__all__ = ["thread_loop", "run_coroutine", "iterate_async_generator", "async_source",
           "iterate_fed", "SuspendableRun", "NotSuspendable", "external_future", "anext_step",
           "SETTLE_PASSES"]

_local = threading.local()


class _ThreadLoop:
    """Holds a thread's event loop; closes it when the thread ends (its thread-local
    data is dropped), so no selector or socket pair outlives the thread. A daemon
    thread's loop dropped while the interpreter finalizes is left to the OS: asyncio's
    modules may be torn down by then (closing raised AttributeError on ``None``)."""

    __slots__ = ("loop",)
    _is_finalizing = staticmethod(sys.is_finalizing)  # ``sys`` may be gone by then

    def __init__(self):
        import asyncio

        self.loop = asyncio.new_event_loop()

    def __del__(self):
        if self._is_finalizing():
            return
        loop = self.loop
        if not loop.is_closed() and not loop.is_running():
            loop.close()


def thread_loop():
    """Return the calling thread's own asyncio event loop, made on first use.

    Returns:
        An ``asyncio.AbstractEventLoop`` not running, used only on this thread.

    Raises:
        RuntimeError: an event loop is already running on this thread (spider code
            called from inside a coroutine cannot be driven synchronously).
    """
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "cannot run an async spider callback synchronously from a thread whose "
            "event loop is running"
        )
    holder = getattr(_local, "holder", None)
    if holder is None or holder.loop.is_closed():
        holder = _local.holder = _ThreadLoop()
    return holder.loop


def run_coroutine(coroutine: Any) -> Any:
    """Run ``coroutine`` to completion on the calling thread's loop.

    Args:
        coroutine: an awaitable (``async def`` function called).

    Returns:
        What the coroutine returns.

    Raises:
        Whatever the coroutine raises.
    """
    return thread_loop().run_until_complete(coroutine)


#: plain generators made by :func:`iterate_async_generator` -> their async generator
_SOURCES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def iterate_async_generator(agen):
    """Iterate an async generator synchronously, one ``__anext__`` at a time.

    Each value is produced when the caller asks for it (``next()``), so a lazy consumer
    (the spider runner pulling start requests) stays lazy. Leaving the loop early closes
    the async generator (its ``finally`` blocks run). The generator returned is
    remembered with ``agen`` (weakly): :func:`async_source` gives ``agen`` back, so
    async code handed this generator can iterate ``agen`` itself instead of stepping
    the running loop from inside it.

    Args:
        agen: an async generator (or any async iterator).

    Returns:
        A generator of the values ``agen`` yields; it raises whatever ``agen`` raises,
        when the step that raises is asked for.
    """
    gen = _iterate(agen)
    _SOURCES[gen] = agen
    return gen


def async_source(iterable):
    """The async iterator a generator made by :func:`iterate_async_generator` steps, or
    None for any other iterable (lists, plain generators...)."""
    try:
        return _SOURCES.get(iterable)
    except TypeError:  # not weak-referenceable (a list, a tuple)
        return None


def _iterate(agen):
    """The generator behind :func:`iterate_async_generator`.

    Each value is produced when the caller asks for it (``next()``), so a lazy consumer
    (the spider runner pulling start requests) stays lazy. Leaving the loop early closes
    the async generator (its ``finally`` blocks run).

    Args:
        agen: an async generator (or any async iterator).

    Yields:
        The values ``agen`` yields.

    Raises:
        Whatever ``agen`` raises, when the step that raises is asked for.
    """
    anext_ = agen.__anext__
    try:
        while True:
            try:
                value = run_coroutine(anext_())
            except StopAsyncIteration:
                return
            yield value
    finally:
        aclose = getattr(agen, "aclose", None)
        if aclose is not None and getattr(agen, "ag_frame", True) is not None:  # not finished
            run_coroutine(aclose())


_END = object()  # the plain iterable of a fed async generator is exhausted


class _Fed:
    """The async iterator an async generator is handed when its input is a plain iterable
    (see :func:`iterate_fed`): each ``__anext__`` asks the synchronous driver, which
    steps the plain iterable outside the event loop and answers."""

    __slots__ = ("need", "answer")

    def __init__(self):
        self.need = None  # set by the driver before it runs the loop: "I want a value"
        self.answer = None  # the future the driver resolves with that value

    def __aiter__(self):
        return self

    async def __anext__(self):
        import asyncio

        if self.need is None or self.need.done():
            raise RuntimeError("an async iterable made from a plain one is read by one "
                               "consumer at a time, inside the async generator it was given to")
        self.answer = answer = asyncio.get_running_loop().create_future()
        self.need.set_result(None)
        value = await answer
        if value is _END:
            raise StopAsyncIteration
        return value


async def _anext(agen):
    return await agen.__anext__()


def iterate_fed(make_agen, iterable):
    """Iterate synchronously an async generator that consumes a plain ``iterable`` as an
    async iterable, streaming: each value it yields is produced as soon as it is, and
    each value it asks for is taken from ``iterable`` only then.

    ``iterable`` is stepped here, outside the event loop (between two runs of the loop),
    never from inside it: it may itself step async code on this thread's loop (an
    ``async def`` callback under a plain middleware, made by
    :func:`iterate_async_generator`). Scrapy 2.13 streams the same way (an async
    generator ``process_spider_output`` after a plain one gets results as they come).

    Args:
        make_agen: ``make_agen(async_iterable) -> async generator``; called when the
            first value is asked for.
        iterable: the plain iterable the async generator consumes.

    Returns:
        A generator of the values the async generator yields. It raises what the async
        generator raises (an exception of ``iterable`` is raised inside the async
        generator, at its ``async for``). Closing it early closes the async generator.
        (It is not an :func:`async_source`: the async generator needs this driver.)
    """
    import asyncio

    fed = _Fed()
    items = iter(iterable)
    loop = thread_loop()
    agen = make_agen(fed)
    step = None
    try:
        while True:
            step = loop.create_task(_anext(agen))
            while True:
                fed.need = loop.create_future()
                loop.run_until_complete(
                    asyncio.wait((step, fed.need), return_when=asyncio.FIRST_COMPLETED))
                if step.done():
                    break
                try:  # it asks for its next input: taken here, the loop not running
                    value = next(items, _END)
                except Exception as exc:
                    fed.answer.set_exception(exc)
                else:
                    fed.answer.set_result(value)
            try:
                value = step.result()
            except StopAsyncIteration:
                return
            yield value
    finally:
        if step is not None and not step.done():  # left while it waited for input
            step.cancel()
            loop.run_until_complete(asyncio.wait((step,)))
        aclose = getattr(agen, "aclose", None)
        if aclose is not None and getattr(agen, "ag_frame", True) is not None:
            run_coroutine(aclose())


# --- runs that wait for answers from outside the loop ----------------------------------

#: Most passes of the event loop a run that waits for an outside answer is given, once it
#: waits, to let what is ready run (the other branches of an ``asyncio.gather`` start
#: their downloads too) before it gives the thread back; it gives it back sooner when a
#: pass starts nothing new.
SETTLE_PASSES = 16

#: The :class:`SuspendableRun` a task belongs to: set while its root task is made, so
#: the task and every task it starts (``asyncio.gather``...) carry it in their context.
_current_run: contextvars.ContextVar = contextvars.ContextVar("crawlfw_suspendable_run",
                                                              default=None)


class NotSuspendable(RuntimeError):
    """:func:`external_future` was called outside a :class:`SuspendableRun` (a plain
    ``def`` callback, ``start()``, a middleware's coroutine): nothing there can give the
    thread back while the answer is awaited."""


async def anext_step(agen: Any) -> Any:
    """One step of the async generator ``agen`` as a coroutine (what
    ``SuspendableRun`` runs for each value of an ``async def`` callback that yields)."""
    return await agen.__anext__()


async def _one_pass():
    import asyncio

    await asyncio.sleep(0)


class SuspendableRun:
    """A coroutine run as a task on the calling thread's event loop, which may wait for
    answers that are set from outside the loop, between two runs of it
    (:func:`external_future`: a download the Engine answers by message).

    :meth:`drive` runs the loop until the task is done or waits for such an answer with
    nothing else ready; it then returns False and the thread is free (the actor handles
    other messages, other callbacks run on the same loop). Once the answer has been set
    on its future (``future.set_result``, on this thread, the loop not running),
    :meth:`drive` goes on with the task. While the task is given back, only what runs the
    loop makes its other awaits progress: a timer it also waits for fires when the loop
    runs next (another callback, an answer), not on time.

    One run may run several coroutines in turn (:meth:`start`: the steps of one async
    generator callback), each once the one before is done.

    Args:
        coroutine: the coroutine to run (``callback(response)``, :func:`anext_step`), or
            None to :meth:`start` one later.
        owner: anything the caller keeps with the run (:attr:`owner`).

    Attributes:
        task: the ``asyncio.Task``; its result (or exception) is the coroutine's once
            :meth:`drive` returned True.
        waiting: the futures from :func:`external_future` not answered yet.
        owner: what the caller gave (its record of the suspended work).

    Raises:
        RuntimeError: an event loop is already running on this thread.
    """

    __slots__ = ("loop", "task", "waiting", "owner", "_driving", "_stopped", "_made",
                 "_context")

    def __init__(self, coroutine: Any = None, owner: Any = None) -> None:
        self.loop = thread_loop()
        self.owner = owner
        self._driving = False
        self._stopped = False
        self._made = 0  # external futures made: a settling pass that makes none ends
        self._context = context = contextvars.copy_context()
        context.run(_current_run.set, self)
        if coroutine is not None:
            self.start(coroutine)

    def start(self, coroutine: Any) -> None:
        """Make ``coroutine`` the run's :attr:`task` (the one before is done). Futures
        the one before left unanswered are no longer waited for."""
        self.waiting: set = set()
        # made in the run's context: the task and the tasks it starts see this run
        self.task = self._context.run(self.loop.create_task, coroutine)

    def drive(self) -> bool:
        """Run the task on this thread's loop until it is done (True) or waits for an
        outside answer with nothing else ready (False: call again once an answer was
        set). Never called with the loop running (between two messages of the actor).

        Raises:
            BaseException: only what stops the loop itself (``KeyboardInterrupt``); the
                task's own exception is in :attr:`task`.
        """
        loop, task = self.loop, self.task
        while True:
            if not self.waiting:
                self._driving, self._stopped = True, False
                try:
                    loop.run_until_complete(task)
                    return True  # the usual way: it never waited for an outside answer
                except BaseException:
                    # Its exception is the task's (read from it); or the loop was
                    # stopped because it now waits for an outside answer.
                    if task.done():
                        return True
                    if not self._stopped:
                        raise
                finally:
                    self._driving = False
            # It waits for outside answers: let what is ready run, then give back.
            for _ in range(SETTLE_PASSES):
                before = (self._made, len(self.waiting))
                loop.run_until_complete(_one_pass())
                if task.done() or (self._made, len(self.waiting)) == before:
                    break
            if task.done():
                return True
            if self.waiting:
                return False

    def cancel(self) -> None:
        """Cancel the task and let it unwind (its ``finally`` blocks run), the loop not
        running; an exception it ends with is dropped."""
        task = self.task
        if task.done():
            return
        task.cancel()
        self.waiting.clear()
        try:
            self.loop.run_until_complete(task)
        except BaseException:  # noqa: S110  # cancelled, or whatever its unwinding raised
            pass

    def _made_future(self, future) -> None:
        self._made += 1
        self.waiting.add(future)
        future.add_done_callback(self.waiting.discard)
        if self._driving and not self._stopped:
            self._stopped = True
            self.loop.stop()  # at the end of this pass: run_until_complete returns


def external_future():
    """A future of the running loop that is answered from outside it (by a message the
    thread's actor handles later), for code inside a :class:`SuspendableRun`: awaiting
    it gives the thread back until the answer is set.

    Returns:
        ``(future, run)``: an ``asyncio.Future`` of the running loop, and the
        :class:`SuspendableRun` it belongs to (to :meth:`~SuspendableRun.drive` once
        the answer is set).

    Raises:
        NotSuspendable: the calling code does not run inside a :class:`SuspendableRun`.
    """
    run = _current_run.get()
    if run is None:
        raise NotSuspendable("not inside a suspendable run")
    future = run.loop.create_future()
    run._made_future(future)
    return future, run
