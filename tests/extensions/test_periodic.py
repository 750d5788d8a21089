import logging
import threading

import pytest

from crawlfw.extensions._periodic import PeriodicCall


@pytest.mark.parametrize("interval", [0, -1, None])
def test_bad_interval(interval):
    with pytest.raises(ValueError, match="interval must be > 0"):
        PeriodicCall(lambda: None, interval)


def test_error_logged_and_loop_continues(caplog):
    calls = []
    second = threading.Event()

    def func():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("first call fails")
        second.set()

    task = PeriodicCall(func, 0.01, name="test-periodic")
    with caplog.at_level(logging.ERROR, logger="crawlfw.extensions._periodic"):
        task.start()
        assert second.wait(10)
        task.stop()
    assert not task.running
    assert not task._thread.is_alive()
    [record] = caplog.records
    assert record.getMessage() == "Error in periodic call test-periodic"
    assert record.exc_info[0] is RuntimeError


def test_not_now_waits_one_interval():
    called = threading.Event()
    task = PeriodicCall(called.set, 3600)
    task.start(now=False)
    task.stop()
    assert not called.is_set()


def test_stop_before_start_and_twice():
    task = PeriodicCall(lambda: None, 1)
    task.stop()
    task.stop()
    assert not task.running


def test_stop_from_inside_func():
    holder = {}

    def func():
        holder["task"].stop()

    task = holder["task"] = PeriodicCall(func, 0.01)
    task.start()
    task._thread.join(10)
    assert not task._thread.is_alive()
    assert task.first_call_done.is_set()
