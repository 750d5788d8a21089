"""The seen set's spill file in real crawls (``crawlfw runspider`` subprocesses): gone
after ^C, left by ``kill -9`` and swept by the next crawl, and a disk that cannot take
it ends the crawl with one clear line (issue 30). The spill itself: tests/utils/test_seen.py.

Each crawl has a private ``TMPDIR``; its one page yields 80,000 distinct links to a
server that holds every request for a while, so a 1 MiB ``DUPEFILTER_MEMORY_LIMIT``
spills during the first ``push_many`` and the crawl is still busy afterwards.
"""

import os
import signal

import pytest

from tests.support.countserver import CountingServer
from tests.support.proc import start_crawlfw, wait_measured
from tests.support.spill import MANY_LINKS_SPIDER, run_on_a_full_disk, write_spider_and_tmpdir
from tests.support.wait import wait_for

pytestmark = pytest.mark.slow

SPIDER = MANY_LINKS_SPIDER.replace('links = "30000"', 'links = "80000"')

LIMIT = ["-s", "DUPEFILTER_MEMORY_LIMIT=1048576", "-s", "LOG_LEVEL=INFO"]


@pytest.fixture
def site():
    server = CountingServer(hold_s=3.0)
    yield server
    server.stop()


def _setup(tmp_path):
    return write_spider_and_tmpdir(tmp_path, SPIDER)


def _scratch(tmpdir):
    root = tmpdir / f"crawlfw-{os.getuid()}"  # the frontier's scratch root too
    if not root.exists():
        return []
    return sorted(p for p in root.iterdir() if p.name.startswith("seen-"))


def _start(tmp_path, tmpdir, site):
    proc, out, err = start_crawlfw("runspider", "spider.py", "-a", f"base={site.url}", *LIMIT,
                                   cwd=tmp_path, env={"TMPDIR": str(tmpdir)})
    wait_for(lambda: "The seen set reached" in err.read_text(errors="replace"),
             "the seen set's first spill", alive=proc)
    assert [(d / "seen.sqlite").exists() for d in _scratch(tmpdir)] == [True]
    return proc, out, err


def test_ctrl_c_removes_the_spill_file(tmp_path, site):
    tmpdir = _setup(tmp_path)
    proc, out, err = _start(tmp_path, tmpdir, site)
    proc.send_signal(signal.SIGINT)
    done = wait_measured(proc, out, err, 60)
    assert not done.timed_out, done.stderr[-3000:]
    assert "The seen set reached DUPEFILTER_MEMORY_LIMIT (1048576 bytes)" in done.stderr
    assert _scratch(tmpdir) == [], done.stderr[-3000:]


def test_kill_9_leaves_it_to_the_next_crawl(tmp_path, site):
    tmpdir = _setup(tmp_path)
    proc, out, err = _start(tmp_path, tmpdir, site)
    left = _scratch(tmpdir)
    proc.send_signal(signal.SIGKILL)
    wait_measured(proc, out, err, 60)
    assert _scratch(tmpdir) == left and (left[0] / ".lock").exists()  # nothing ran
    # the next crawl (of no link at all) sweeps it as its dupefilter opens
    done = wait_measured(*start_crawlfw("runspider", "spider.py", "-a", "base=http://127.0.0.1:9",
                                        "-a", "links=0", *LIMIT, cwd=tmp_path,
                                        env={"TMPDIR": str(tmpdir)}), 60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _scratch(tmpdir) == []


def test_a_full_disk_ends_the_crawl_with_one_line_naming_the_file(tmp_path, site):
    """RLIMIT_FSIZE stands for a full disk (no root, no mount needed): SQLite's write past
    it fails (EFBIG: "disk I/O error"; a full disk's ENOSPC says "database or disk is
    full", as tests/utils/test_seen.py has it)."""
    tmpdir = _setup(tmp_path)
    proc = run_on_a_full_disk(tmp_path, tmpdir, site.url, 256 * 1024, *LIMIT)
    lines = [line for line in proc.stderr.splitlines() if "Frontier failed" in line]
    assert len(lines) == 1, proc.stderr[-3000:]
    assert "SpillError: The seen set cannot spill to " in lines[0]
    assert f"{tmpdir}{os.sep}crawlfw-{os.getuid()}{os.sep}seen-" in lines[0]
    assert "seen.sqlite" in lines[0]
    assert "OperationalError: disk I/O error" in lines[0], lines[0]
    assert "over DUPEFILTER_MEMORY_LIMIT 1048576 bytes; free space there" in lines[0]
    assert "'finish_reason': 'frontier_failed'" in proc.stderr
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert _scratch(tmpdir) == []  # removed at close all the same
