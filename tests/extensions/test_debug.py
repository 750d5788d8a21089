import logging
import os
import signal
import threading

import pytest

from crawlfw.extensions.debug import StackTraceDump
from tests.extensions._crawler import get_crawler

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGUSR2"), reason="needs SIGUSR2")


@pytest.fixture
def restore_signals():
    saved = {s: signal.getsignal(s) for s in (signal.SIGUSR2, signal.SIGQUIT)}
    yield
    for s, handler in saved.items():
        signal.signal(s, handler)


def _parked_thread():
    release = threading.Event()
    thread = threading.Thread(target=release.wait, args=(30,), name="parked-worker",
                              daemon=True)
    thread.start()
    return thread, release


def test_thread_stacks_lists_every_thread(restore_signals):
    ext = StackTraceDump.from_crawler(get_crawler())
    thread, release = _parked_thread()
    try:
        dump = ext._thread_stacks()
    finally:
        release.set()
        thread.join(10)
    assert f"# Thread: parked-worker({thread.ident})" in dump
    assert f"# Thread: MainThread({threading.main_thread().ident})" in dump
    assert "test_thread_stacks_lists_every_thread" in dump


def test_sigusr2_dumps_stacks(restore_signals, caplog):
    StackTraceDump.from_crawler(get_crawler())
    assert signal.getsignal(signal.SIGUSR2) is not signal.SIG_DFL
    thread, release = _parked_thread()
    try:
        with caplog.at_level(logging.INFO, logger="crawlfw.extensions.debug"):
            # Python runs the handler on the main thread as soon as os.kill returns
            os.kill(os.getpid(), signal.SIGUSR2)
    finally:
        release.set()
        thread.join(10)
    [record] = [r for r in caplog.records if r.name == "crawlfw.extensions.debug"]
    message = record.getMessage()
    assert message.startswith("Dumping stack trace and engine status\n")
    assert "# Thread: parked-worker" in message


def test_outside_main_thread_does_not_install(restore_signals):
    before = signal.getsignal(signal.SIGUSR2)
    built = []
    t = threading.Thread(target=lambda: built.append(StackTraceDump(get_crawler())))
    t.start()
    t.join(10)
    assert built and signal.getsignal(signal.SIGUSR2) is before
