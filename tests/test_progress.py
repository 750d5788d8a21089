"""The live progress line: drawn and refreshed on a terminal (a pseudo-terminal here),
absent on a pipe and with ``-s PROGRESS=False``."""

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time

import pytest

from crawlfw.progress import REFRESH_S, ProgressLine, format_status
from crawlfw.settings import Settings
from tests.support.countserver import CountingServer
from tests.support.live import SLOW_SPIDER

LINE = re.compile(rb"slow-1 running: (\d+) pages \d+/min, (\d+) items \d+/min, "
                  rb"\d+ pending, \d+ in flight, 0 errors")


@pytest.fixture
def server():
    s = CountingServer(hold_s=0.2)
    yield s
    s.stop()


def _command(tmp_path, server, *args):
    spider = tmp_path / "slowspider.py"
    spider.write_text(SLOW_SPIDER)
    return [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(spider),
            "-a", f"base_url={server.url}", "-a", "pages=24", "-s", "CONCURRENT_REQUESTS=2",
            "-L", "INFO", *args]


def _run_on_a_terminal(command, env, cwd, timeout_s=60.0) -> tuple[int, bytes]:
    import pty

    master, slave = pty.openpty()
    # a terminal 200 columns wide (the line is cut to the width, with an ellipsis)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    proc = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, env=env,
                            cwd=cwd, start_new_session=True)
    os.close(slave)
    output = b""
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the process closed the terminal
                    break
                if not chunk:
                    break
                output += chunk
            elif proc.poll() is not None:
                break
        return proc.wait(timeout=10), output
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_the_line_appears_and_refreshes_on_a_terminal(tmp_path, server, runtime):
    status, output = _run_on_a_terminal(_command(tmp_path, server), runtime.env(), tmp_path)
    assert status == 0, output.decode(errors="replace")
    figures = [(int(p), int(i)) for p, i in LINE.findall(output)]
    assert figures, output.decode(errors="replace")
    assert len(set(figures)) >= 2, figures  # refreshed with new figures
    assert figures == sorted(figures)
    # log lines are written above the line, and it is erased at the end
    assert b"Spider closed (finished)" in output
    assert b"\x1b[2K" in output  # rich erases the line to redraw it below new log lines


@pytest.mark.slow
@pytest.mark.parametrize("on_a_terminal", [False, True])
def test_no_line_on_a_pipe_or_with_progress_false(tmp_path, server, runtime, on_a_terminal):
    if on_a_terminal:
        command = _command(tmp_path, server, "-s", "PROGRESS=False")
        status, output = _run_on_a_terminal(command, runtime.env(), tmp_path)
    else:
        result = subprocess.run(_command(tmp_path, server), env=runtime.env(), cwd=tmp_path,
                                capture_output=True, timeout=60)
        status, output = result.returncode, result.stdout + result.stderr
    assert status == 0, output.decode(errors="replace")
    assert b"Spider closed (finished)" in output
    assert not LINE.search(output)
    assert b"\x1b[" not in output


def test_wanted_only_on_a_terminal_with_progress_on(tmp_path):
    import pty

    master, slave = pty.openpty()
    try:
        with os.fdopen(os.dup(slave), "w") as tty, open(tmp_path / "f", "w") as plain:
            assert ProgressLine.wanted(Settings(), tty)
            assert not ProgressLine.wanted(Settings({"PROGRESS": False}), tty)
            assert not ProgressLine.wanted(Settings(), plain)
            # items written to standard output would break the line
            assert not ProgressLine.wanted(Settings({"FEED_URI": "stdout:"}), tty)
    finally:
        os.close(master)
        os.close(slave)


def test_at_most_two_refreshes_a_second():
    assert REFRESH_S == 0.5
    assert ProgressLine(runner=None, refresh_s=0.1).refresh_s == 0.5


def test_format_status():
    crawl = {"crawl_id": "quotes-1", "state": "paused", "pages": 120, "pages_per_min": 60.4,
             "items": 40, "items_per_min": 19.6, "pending": 5, "in_flight": None,
             "errors": {"DNSLookupError": 2, "HTTP 404": 1}}
    assert format_status(crawl) == ("quotes-1 paused: 120 pages 60/min, 40 items 20/min, "
                                    "5 pending, ? in flight, 3 errors")
