"""A JOBDIR is one job: faults around it end cleanly (issue 23).

Real ``crawlfw runspider`` subprocesses on a local site, real SIGKILLs and real file
damage; each test asserts on the exit status, the one-line message and the feed (every
page once).
"""

import os
import random
import signal
import time
from pathlib import Path

import pytest

from tests.crash.test_crash_resume import SEED, feed_size, finish, read_pages, start_crawl
from tests.support.linksite import LinkSite


@pytest.fixture(scope="module")
def slow_site():
    # ~300 pages at 2 concurrent requests and 20 ms each: a crawl of several seconds.
    s = LinkSite(pages=300, fanout=4, seed=23, delay_s=0.02)
    yield s
    s.stop()


def wait_for_growth(proc, feed: Path, size: int, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while feed_size(feed) < size:
        assert proc.poll() is None, f"the crawl ended early ({proc.returncode})"
        assert time.monotonic() < deadline, "the crawl made no progress"
        time.sleep(0.02)


def run_to_end(site, job, feed, log_path, *extra, timeout_s=120):
    with open(log_path, "wb") as log:
        proc = start_crawl(site, job, feed, *extra, log=log)
        code = proc.wait(timeout_s)
    return code, Path(log_path).read_text(errors="replace")


def test_second_crawl_on_a_running_jobdir_is_refused_and_touches_nothing(slow_site, tmp_path):
    job, feed = tmp_path / "job", tmp_path / "items.jl"
    with open(tmp_path / "first.log", "wb") as first_log:
        first = start_crawl(slow_site, job, feed, "-s", "CONCURRENT_REQUESTS=2", log=first_log)
        try:
            wait_for_growth(first, feed, 2000)  # the first holds the lock and commits
            other_feed = tmp_path / "other.jl"
            started = time.monotonic()
            with open(tmp_path / "second.log", "wb") as log:
                second = start_crawl(slow_site, job, other_feed, log=log)
                code = second.wait(60)
            took = time.monotonic() - started
            text = (tmp_path / "second.log").read_text(errors="replace")
            assert code == 1, text[-3000:]
            assert f"JOBDIR {job} is in use by another crawl (pid {first.pid}" in text, text
            assert "Spider opened" not in text and "Traceback" not in text, text
            assert took < 30, took  # generous: the refusal itself takes no waiting
            assert not other_feed.exists()
            assert first.poll() is None  # the first crawl is unaffected and goes on
        finally:
            code = first.wait(180)
    text = (tmp_path / "first.log").read_text(errors="replace")
    assert code == 0, text[-3000:]
    assert "'finish_reason': 'finished'" in text
    pages = read_pages(feed, "jl")
    assert sorted(pages) == list(range(slow_site.pages))


def test_kill_9_leaves_no_stale_lock(slow_site, tmp_path):
    rng = random.Random(f"{SEED}-stale-lock")
    job, feed = tmp_path / "job", tmp_path / "items.jl"
    proc = start_crawl(slow_site, job, feed)
    wait_for_growth(proc, feed, rng.randint(1000, 6000))
    proc.send_signal(signal.SIGKILL)
    proc.wait(60)
    assert (job / "crawl.lock").exists()
    code, text = finish(slow_site, job, feed, tmp_path / "final.log")
    assert code == 0, text[-3000:]
    assert sorted(read_pages(feed, "jl")) == list(range(slow_site.pages))
