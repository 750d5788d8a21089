"""crawlfw.utils.reactor: Scrapy 2's reactor helpers with the meaning they have without
Twisted (issue 29)."""

import asyncio
import logging
import threading

import pytest

from crawlfw.exceptions import NotSupported
from crawlfw.utils import reactor
from crawlfw.utils.reactor import (
    ASYNCIO_REACTOR,
    CallLaterOnce,
    install_reactor,
    is_asyncio_reactor_installed,
    is_reactor_installed,
    listen_tcp,
    set_asyncio_event_loop,
    verify_installed_asyncio_event_loop,
    verify_installed_reactor,
)


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(reactor, "_warned", set())


def test_asyncio_reactor_is_accepted_silently(caplog):
    with caplog.at_level(logging.DEBUG, logger="crawlfw.utils.reactor"):
        install_reactor(ASYNCIO_REACTOR)
        install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor",
                        "asyncio.SelectorEventLoop")
    assert caplog.records == []
    assert is_asyncio_reactor_installed() is True
    assert is_reactor_installed() is True
    verify_installed_reactor(ASYNCIO_REACTOR)


def test_another_reactor_gets_one_warning(caplog):
    with caplog.at_level(logging.DEBUG, logger="crawlfw.utils.reactor"):
        install_reactor("twisted.internet.epollreactor.EPollReactor")
        install_reactor("twisted.internet.epollreactor.EPollReactor")
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    message = caplog.records[0].getMessage()
    assert "twisted.internet.epollreactor.EPollReactor is not used" in message
    assert "asyncio" in message
    with pytest.raises(RuntimeError, match="does not match the requested one"):
        verify_installed_reactor("twisted.internet.epollreactor.EPollReactor")


def test_a_bad_event_loop_path_fails_as_in_scrapy():
    with pytest.raises((ImportError, NameError)):
        install_reactor(ASYNCIO_REACTOR, "nosuchmodule.Loop")


def test_event_loop_helpers():
    loop = asyncio.new_event_loop()
    loop_class = type(loop)
    loop.close()
    path = f"{loop_class.__module__}.{loop_class.__qualname__}"
    verify_installed_asyncio_event_loop(path)
    with pytest.raises(RuntimeError, match="does not match"):
        verify_installed_asyncio_event_loop("asyncio.ProactorEventLoop"
                                            if hasattr(asyncio, "ProactorEventLoop")
                                            else "crawlfw.utils.reactor.CallLaterOnce")
    result = {}

    def in_thread():
        loop = set_asyncio_event_loop("asyncio.SelectorEventLoop")
        result["loop"] = loop
        result["same"] = asyncio.get_event_loop() is loop
        loop.close()

    thread = threading.Thread(target=in_thread)
    thread.start()
    thread.join(5)
    assert isinstance(result["loop"], asyncio.SelectorEventLoop) and result["same"]


def test_listen_tcp_says_what_to_use():
    with pytest.raises(NotSupported, match="asyncio.start_server"):
        listen_tcp([6023, 6073], "127.0.0.1", object())


def test_call_later_once_calls_once_per_schedule():
    called = []
    done = threading.Event()

    def func(x, y=0):
        called.append((x, y))
        done.set()
        return "r"

    once = CallLaterOnce(func, 1, y=2)
    once.schedule(0.05)
    once.schedule(0.05)  # already pending: no second call
    assert done.wait(5)
    assert called == [(1, 2)]
    done.clear()
    once.schedule(10)
    once.cancel()
    assert not done.wait(0.2)
    assert once() == "r" and called == [(1, 2), (1, 2)]


def test_call_later_once_wait():
    once = CallLaterOnce(lambda: None)

    async def main():
        waiter = asyncio.ensure_future(once.wait())
        await asyncio.sleep(0)
        once.schedule(0.01)
        await asyncio.wait_for(waiter, 5)
        return True

    assert asyncio.run(main())
