"""Run the ``crawlfw`` command line in a real subprocess and measure it: exit status,
output, and the child's own peak resident memory (``os.wait4``'s rusage)."""

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import NamedTuple

REPO_ROOT = Path(__file__).resolve().parents[2]


class Finished(NamedTuple):
    """A finished subprocess: ``returncode`` (negative: killed by that signal),
    ``stdout``/``stderr`` (text), ``maxrss_bytes`` (its peak RSS) and ``timed_out``."""

    returncode: int
    stdout: str
    stderr: str
    maxrss_bytes: int
    timed_out: bool


#: Not passed on: a project chosen outside the test, and the terminal size pytest-xdist
#: workers set (COLUMNS=80, LINES=24), which would override a pseudo-terminal's own.
_NOT_PASSED = frozenset({"CRAWLFW_SETTINGS_MODULE", "CRAWLFW_PROJECT",
                         "CRAWLFW_PYTHON_SHELL", "COLUMNS", "LINES",
                         "SCRAPY_SETTINGS_MODULE"})  # read when CRAWLFW_'s is not set


def crawlfw_env(extra=None) -> dict:
    """This source tree first on ``PYTHONPATH``, no project from outside, ``extra`` on top."""
    env = {k: v for k, v in os.environ.items()
           if k not in _NOT_PASSED}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    env.update(extra or {})
    return env


def start_crawlfw(*args, cwd, env=None) -> tuple[subprocess.Popen, Path, Path]:
    """Start ``python -m crawlfw.cmdline <args>`` in ``cwd``, output to files there.

    Returns:
        ``(process, stdout_path, stderr_path)``; finish it with :func:`wait_measured`.
    """
    cwd = Path(cwd)
    out_path, err_path = cwd / "_stdout.txt", cwd / "_stderr.txt"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "crawlfw.cmdline", *map(str, args)],
            cwd=str(cwd), env=crawlfw_env(env), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
        )
    return process, out_path, err_path


def wait_measured(process, out_path, err_path, timeout_s: float) -> Finished:
    """Reap ``process`` with ``os.wait4`` (its own rusage); SIGKILL it after ``timeout_s``."""
    fired = threading.Event()

    def kill():
        fired.set()
        os.kill(process.pid, signal.SIGKILL)  # not process.kill(): it may reap the child

    timer = threading.Timer(timeout_s, kill)
    timer.start()
    try:
        _, status, rusage = os.wait4(process.pid, 0)
    finally:
        timer.cancel()
    timed_out = fired.is_set()
    process.returncode = os.waitstatus_to_exitcode(status)
    return Finished(
        process.returncode,
        out_path.read_text(errors="replace"),
        err_path.read_text(errors="replace"),
        rusage.ru_maxrss * 1024,  # KiB on Linux
        timed_out,
    )


def run_measured(*args, cwd, env=None, timeout_s: float = 90.0) -> Finished:
    """Run ``crawlfw <args>`` to its end (killed after ``timeout_s`` seconds)."""
    process, out_path, err_path = start_crawlfw(*args, cwd=cwd, env=env)
    return wait_measured(process, out_path, err_path, timeout_s)


def is_stopped(pid: int) -> bool:
    """True while process ``pid`` is stopped (``SIGSTOP``: state ``T`` in
    ``/proc/<pid>/stat``), as a fault point armed with ``stop`` leaves it
    (crawlfw/core/_faults.py); False when it runs or is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].startswith("T")
