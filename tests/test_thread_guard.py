"""tests/support/threadguard.py fails a test that leaves a crawlfw thread (or a
non-daemon one) running after it ended, tested on a small test file in a pytest
subprocess; threads that end in time, daemon threads of other names and the process-wide
``crawlfw-inthread_`` pool pass."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

GUARDED = '''
import threading
import time

import pytest

forever = threading.Event()


def test_leaves_a_crawlfw_timer():
    threading.Thread(target=forever.wait, name="crawlfw-logstats", daemon=True).start()


def test_leaves_a_non_daemon_thread():
    threading.Thread(target=time.sleep, args=(8,), name="pool_0").start()


@pytest.fixture
def stopped_in_teardown():
    stop = threading.Event()
    threading.Thread(target=stop.wait, name="crawlfw-periodic", daemon=True).start()
    yield
    stop.set()


def test_its_fixture_stops_the_thread(stopped_in_teardown):
    pass


def test_a_thread_ending_just_after_the_test():
    threading.Thread(target=time.sleep, args=(0.3,), name="crawlfw-closing").start()


def test_a_cancelled_timer():
    timer = threading.Timer(60, print)
    timer.name = "crawlfw-closespider-timeout"
    timer.start()
    timer.cancel()


def test_a_daemon_server_thread_of_another_name():
    threading.Thread(target=forever.wait, name="Thread-9 (serve_forever)", daemon=True).start()


def test_the_shared_inthread_pool():
    threading.Thread(target=forever.wait, name="crawlfw-inthread_0", daemon=True).start()
'''


@pytest.mark.slow
def test_the_guard_fails_a_test_that_leaves_a_crawlfw_or_non_daemon_thread(tmp_path):
    (tmp_path / "test_guarded.py").write_text(textwrap.dedent(GUARDED))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.support.threadguard", "-p",
         "no:randomly", "-p", "no:xdist", "-p", "no:cacheprovider", "test_guarded.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**env, "PYTHONPATH": str(REPO)})
    out = result.stdout
    assert result.returncode == 1, out
    assert "7 passed, 2 errors" in out, out
    assert ("test_guarded.py::test_leaves_a_crawlfw_timer left 1 thread(s) running after it "
            "ended: crawlfw-logstats (daemon, Event.wait); close what the test opened") in out
    assert ("test_guarded.py::test_leaves_a_non_daemon_thread left 1 thread(s) running after "
            "it ended: pool_0 (non-daemon, sleep)") in out, out
