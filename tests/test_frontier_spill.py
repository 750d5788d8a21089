"""The in-memory frontier's spill directory in real crawls (``crawlfw runspider``
subprocesses, issue 30): gone after ^C, left by ``kill -9`` (its file already unlinked)
and swept by the next crawl, and a disk that cannot take it ends the crawl with one
clear line. The spill itself: tests/core/test_spill.py.

Each crawl has a private ``TMPDIR``; its one page yields 30,000 distinct links to a
server that holds every request for a while, so a 256 KiB ``FRONTIER_MEMORY_LIMIT``
spills during the callback and the crawl is still busy afterwards.
"""

import os
import signal
import subprocess
import sys

import pytest

from tests.support.countserver import CountingServer
from tests.support.proc import crawlfw_env, start_crawlfw, wait_measured
from tests.support.spill import MANY_LINKS_SPIDER, run_on_a_full_disk, write_spider_and_tmpdir
from tests.support.wait import wait_for

pytestmark = pytest.mark.slow

SPIDER = MANY_LINKS_SPIDER

LIMIT = ["-s", "FRONTIER_MEMORY_LIMIT=262144", "-s", "LOG_LEVEL=INFO"]
SPILLED = "The frontier's queued requests exceed FRONTIER_MEMORY_LIMIT"


@pytest.fixture
def site():
    server = CountingServer(hold_s=3.0)
    yield server
    server.stop()


def _setup(tmp_path):
    return write_spider_and_tmpdir(tmp_path)


def _spill_dirs(tmpdir):
    root = tmpdir / f"crawlfw-{os.getuid()}"
    if not root.exists():
        return []
    return sorted(p for p in root.iterdir() if p.name.startswith("frontier-"))


def _start(tmp_path, tmpdir, site):
    proc, out, err = start_crawlfw("runspider", "spider.py", "-a", f"base={site.url}", *LIMIT,
                                   cwd=tmp_path, env={"TMPDIR": str(tmpdir)})
    wait_for(lambda: SPILLED in err.read_text(errors="replace"), "the frontier's first spill",
             alive=proc)
    dirs = _spill_dirs(tmpdir)
    assert len(dirs) == 1 and dirs[0].name.startswith(f"frontier-{proc.pid}-")
    assert os.listdir(dirs[0]) == [".lock"]  # the file is unlinked once open
    return proc, out, err


def test_ctrl_c_removes_the_spill_directory(tmp_path, site):
    tmpdir = _setup(tmp_path)
    proc, out, err = _start(tmp_path, tmpdir, site)
    proc.send_signal(signal.SIGINT)
    done = wait_measured(proc, out, err, 60)
    assert not done.timed_out, done.stderr[-3000:]
    assert _spill_dirs(tmpdir) == [], done.stderr[-3000:]
    assert "Traceback" not in done.stderr


def test_kill_9_leaves_it_to_the_next_crawl(tmp_path, site):
    tmpdir = _setup(tmp_path)
    proc, out, err = _start(tmp_path, tmpdir, site)
    left = _spill_dirs(tmpdir)
    proc.send_signal(signal.SIGKILL)
    wait_measured(proc, out, err, 60)
    assert _spill_dirs(tmpdir) == left  # nothing ran; its file's space went with it
    # the next crawl (of no link at all) sweeps it as its frontier is made
    done = wait_measured(*start_crawlfw("runspider", "spider.py", "-a", "base=http://127.0.0.1:9",
                                        "-a", "links=0", *LIMIT, cwd=tmp_path,
                                        env={"TMPDIR": str(tmpdir)}), 60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _spill_dirs(tmpdir) == []
    assert "Removed 1 scratch directories of crawls that ended without closing" in done.stderr


def test_a_full_disk_ends_the_crawl_with_one_line_naming_the_directory(tmp_path, site):
    """RLIMIT_FSIZE stands for a full disk (no root, no mount needed): SQLite's write past
    it fails (EFBIG: "disk I/O error"; a full disk's ENOSPC says "database or disk is
    full", as tests/core/test_spill.py has it)."""
    tmpdir = _setup(tmp_path)
    proc = run_on_a_full_disk(tmp_path, tmpdir, site.url, 128 * 1024, *LIMIT)
    lines = [line for line in proc.stderr.splitlines() if "Frontier failed" in line]
    assert len(lines) == 1, proc.stderr[-3000:]
    assert "FrontierError: Cannot write the frontier's spill store in " in lines[0]
    assert f"{tmpdir}{os.sep}crawlfw-{os.getuid()}{os.sep}frontier-" in lines[0]
    assert "disk I/O error" in lines[0], lines[0]
    assert "'finish_reason': 'frontier_failed'" in proc.stderr
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert _spill_dirs(tmpdir) == [], proc.stderr[-5000:]  # removed at close all the same


def test_a_crawl_beyond_the_budget_fetches_every_page_once(tmp_path):
    """2,000 links queued with a 16 KiB budget: most wait on disk, every page is fetched
    once and its callback runs (an item each)."""
    server = CountingServer(hold_s=0.0)
    try:
        (tmp_path / "spider.py").write_text(SPIDER.replace(
            "def parse_slow(self, response):\n        pass",
            "def parse_slow(self, response):\n        yield {'url': response.url}"))
        tmpdir = tmp_path / "tmp"
        tmpdir.mkdir()
        proc = subprocess.run(
            [sys.executable, "-m", "crawlfw.cmdline", "runspider", "spider.py",
             "-a", f"base={server.url}", "-a", "links=2000", "-o", "items.jl",
             "-s", "FRONTIER_MEMORY_LIMIT=16384", "-s", "LOG_LEVEL=INFO",
             "-s", "CONCURRENT_REQUESTS=8"],
            cwd=tmp_path, env=crawlfw_env({"TMPDIR": str(tmpdir)}), capture_output=True,
            text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert SPILLED in proc.stderr
        slow = sorted(p for p in server.paths if p.startswith("/slow/"))
        assert slow == sorted(f"/slow/{i}" for i in range(2000))
        items = (tmp_path / "items.jl").read_text().splitlines()
        assert len(items) == 2000
        assert "'frontier/disk_bytes': 0" not in proc.stderr  # the file was used
        assert _spill_dirs(tmpdir) == []
    finally:
        server.stop()
