"""crawlfw.utils.defer, asyncio and asyncgen: Scrapy 2's helpers on what crawlfw's
components return (results, coroutines, futures), and one clear error for a Twisted
Deferred (issue 29)."""

import asyncio
import concurrent.futures
import sys
import threading
import time
import types

import pytest

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.utils import defer
from crawlfw.utils.asyncgen import as_async_generator, collect_asyncgen
from crawlfw.utils.asyncio import (
    AsyncioLoopingCall,
    call_later,
    create_looping_call,
    is_asyncio_available,
    run_in_thread,
    sleep,
)
from crawlfw.utils.failure import Failure


@pytest.fixture
def twisted_deferred():
    """An object of a class named like Twisted's Deferred (Twisted is not installed)."""
    module = types.ModuleType("twisted.internet.defer")
    cls = type("Deferred", (), {"__module__": "twisted.internet.defer"})
    module.Deferred = cls
    return cls()


async def _value(x):
    await asyncio.sleep(0)
    return x


def test_deferred_to_future_on_results_coroutines_and_futures():
    async def main():
        plain = await defer.maybe_deferred_to_future("response")
        coro = await defer.deferred_to_future(_value(2))
        cf = concurrent.futures.Future()
        threading.Timer(0.01, cf.set_result, (3,)).start()
        threaded = await defer.maybe_deferred_to_future(cf)
        task = defer.deferred_from_coro(_value(4))
        assert isinstance(task, asyncio.Future)
        return plain, coro, threaded, await task

    assert asyncio.run(main()) == ("response", 2, 3, 4)


def test_what_engine_download_returns_in_a_callback_is_taken_as_it_is():
    """In an ``async def`` callback ``engine.download()`` returns an asyncio future of the
    running loop (answered later): both helpers give that very future back."""
    async def main():
        future = asyncio.get_running_loop().create_future()
        assert defer.maybe_deferred_to_future(future) is future
        assert defer.deferred_to_future(future) is future
        asyncio.get_running_loop().call_soon(future.set_result, "response")
        return await defer.maybe_deferred_to_future(future)

    assert asyncio.run(main()) == "response"


def test_deferred_to_future_needs_a_running_loop():
    with pytest.raises(RuntimeError, match="running asyncio event loop"):
        defer.deferred_to_future("x")


def test_a_twisted_deferred_is_refused_with_the_crawlfw_way(twisted_deferred):
    for call in (lambda: defer.maybe_deferred_to_future(twisted_deferred),
                 lambda: defer.deferred_from_coro(twisted_deferred),
                 lambda: defer.ensure_awaitable(twisted_deferred, "my_func")):
        with pytest.raises(TypeError, match=r"crawlfw\.utils\.defer\..*Twisted Deferred.*"
                                            r"coroutine"):
            call()


def test_deferred_from_coro_without_a_loop_runs_it_now():
    assert defer.deferred_from_coro("plain") == "plain"
    future = defer.deferred_from_coro(_value(5))
    assert isinstance(future, concurrent.futures.Future) and future.result(0) == 5

    async def boom():
        raise ValueError("x")

    assert isinstance(defer.deferred_from_coro(boom()).exception(0), ValueError)
    wrapped = defer.deferred_f_from_coro_f(_value)
    assert wrapped.__name__ == "_value" and wrapped(6).result(0) == 6


def test_ensure_awaitable():
    async def main():
        cf = concurrent.futures.Future()
        cf.set_result("cf")
        return [await defer.ensure_awaitable(x) for x in (1, _value(2), cf)]

    assert asyncio.run(main()) == [1, 2, "cf"]


def test_fired_deferred_helpers_give_done_futures():
    with pytest.warns(CrawlfwDeprecationWarning):
        assert defer.process_chain([lambda x, k: x + k, lambda x, k: x * k], 1, 10).result(0) == 110
    with pytest.warns(CrawlfwDeprecationWarning):
        assert defer.process_parallel([str, lambda x: x * 2], 3).result(0) == ["3", 6]
    with pytest.warns(CrawlfwDeprecationWarning):
        failed = defer.process_chain([lambda x: 1 / x], 0)
    assert isinstance(failed.exception(0), ZeroDivisionError)
    with pytest.warns(CrawlfwDeprecationWarning):
        assert defer.defer_succeed("v").result(0) == "v"
    with pytest.warns(CrawlfwDeprecationWarning):
        assert isinstance(defer.defer_fail(Failure(KeyError("k"))).exception(0), KeyError)
    with pytest.warns(CrawlfwDeprecationWarning):
        assert isinstance(defer.defer_result(Failure(KeyError())).exception(0), KeyError)
    with pytest.warns(CrawlfwDeprecationWarning):
        assert isinstance(defer.mustbe_deferred(lambda: 1 / 0).exception(0), ZeroDivisionError)
    with pytest.warns(CrawlfwDeprecationWarning):
        assert defer.maybeDeferred_coro(_value, 7).result(0) == 7


def test_parallel_limits_concurrency():
    running, peak, lock = [0], [0], threading.Lock()

    def work(x, add):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.02)
        with lock:
            running[0] -= 1
        return x + add

    result = defer.parallel(range(6), 2, work, 100).result(5)
    assert result == [(True, x + 100) for x in range(6)]
    assert peak[0] == 2
    assert defer.parallel([], 3, work, 0).result(1) == []


def test_parallel_async():
    seen = []

    async def gen():
        for x in range(5):
            yield x

    async def work(x):
        await asyncio.sleep(0)
        seen.append(x)

    result = asyncio.run(defer.parallel_async(gen(), 2, work))
    assert sorted(seen) == [0, 1, 2, 3, 4] and result == [(True, None)] * 2


def test_iter_errback_and_aiter_errback():
    errors = []

    def gen():
        yield 1
        raise ValueError("boom")

    assert list(defer.iter_errback(gen(), lambda f, tag: errors.append((f.value, tag)), "t")) == [1]
    assert isinstance(errors[0][0], ValueError) and errors[0][1] == "t"
    assert isinstance(errors[0], tuple)

    async def agen():
        yield 1
        raise KeyError("k")

    async def main():
        return [x async for x in defer.aiter_errback(agen(), lambda f: errors.append(f))]

    assert asyncio.run(main()) == [1] and isinstance(errors[-1], Failure)


def test_asyncgen_helpers():
    async def main():
        return (await collect_asyncgen(as_async_generator([1, 2])),
                await collect_asyncgen(as_async_generator(as_async_generator((3,)))))

    assert asyncio.run(main()) == ([1, 2], [3])


def test_asyncio_helpers_inside_and_outside_a_loop():
    assert is_asyncio_available() is True
    fired = threading.Event()
    call_later(0.01, fired.set)  # no loop running here: a timer thread
    assert fired.wait(5)
    cancelled = threading.Event()
    call_later(0.05, cancelled.set).cancel()
    assert not cancelled.wait(0.15)

    async def main():
        got = []
        call_later(0, got.append, "soon")
        await sleep(0.01)
        got.append(await run_in_thread(threading.current_thread))
        return got

    got = asyncio.run(main())
    assert got[0] == "soon" and got[1] is not threading.current_thread()


def test_looping_call_from_plain_code_runs_on_a_thread():
    calls = []
    three = threading.Event()

    def tick(tag):
        calls.append(tag)
        if len(calls) == 3:
            three.set()

    looping = create_looping_call(tick, "t")
    assert isinstance(looping, AsyncioLoopingCall)
    looping.start(0.02)
    assert looping.running and calls == ["t"]  # now=True: the first call at once
    assert three.wait(5)
    looping.stop()
    assert not looping.running
    with pytest.raises(ValueError):
        looping.start(0)


def test_looping_call_in_a_loop_and_its_errors(caplog):
    async def main():
        loop = asyncio.get_running_loop()
        calls = []
        looping = AsyncioLoopingCall(calls.append, 1)
        looping.start(0.01, now=False)
        first = list(calls)  # now=False: the first call waits for the interval
        deadline = loop.time() + 30  # bounded; no timing asserted (a loaded machine)
        while len(calls) < 3 and loop.time() < deadline:
            await asyncio.sleep(0.005)
        looping.stop()
        stopped_at = len(calls)
        await asyncio.sleep(0.05)
        return first, stopped_at, list(calls), looping.running

    first, stopped_at, calls, running = asyncio.run(main())
    assert first == [] and stopped_at >= 3 and calls == [1] * stopped_at and not running
    failing = AsyncioLoopingCall(lambda: 1 / 0)
    failing.start(1)
    assert not failing.running and "Error calling the AsyncioLoopingCall" in caplog.text
    with pytest.raises(TypeError, match="must not return a coroutine"):
        AsyncioLoopingCall(lambda: _value(1)).start(1)


def test_no_twisted_is_imported():
    assert "twisted" not in sys.modules
