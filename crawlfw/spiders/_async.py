"""Driving spider coroutines and async generators from plain threads.

Scrapy 2 spiders write ``async def parse(self, response)`` (a coroutine or, with
``yield``, an async generator) and ``async def start(self)``. crawlfw runs spider code on
the spider runner actor's thread, which has no event loop; these helpers give each
thread one asyncio event loop of its own (made on first use, closed when the thread ends)
and run the spider's coroutines on it, on the calling thread, to completion: an
``await asyncio.sleep(1)`` in a callback holds that thread for 1 s, as a ``time.sleep``
would. No Twisted and no other loop is involved.
"""

import sys
import threading
import weakref

# asyncio (about 14 ms of imports) is imported by the functions that run a loop: a
# crawl of plain callbacks and middlewares never needs it.

__all__ = ["thread_loop", "run_coroutine", "iterate_async_generator", "async_source",
           "iterate_fed"]

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


def run_coroutine(coroutine):
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
