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


def kill_mid_crawl(site, job, feed, rng, *extra):
    proc = start_crawl(site, job, feed, *extra)
    wait_for_growth(proc, feed, rng.randint(2000, 8000))
    proc.send_signal(signal.SIGKILL)
    proc.wait(60)
    assert (job / "job.json").exists()


def snapshot(*paths) -> dict:
    return {str(p): (p.read_bytes() if p.exists() else None) for p in paths}


def test_lost_wal_after_a_kill_is_refused_touching_nothing(slow_site, tmp_path):
    """The common backup mistake: ``frontier.sqlite`` without its ``-wal``. The job's
    last commits are only in the lost log: refused, not started as a new job."""
    rng = random.Random(f"{SEED}-lost-wal")
    job, feed = tmp_path / "job", tmp_path / "items.jl"
    kill_mid_crawl(slow_site, job, feed, rng)
    for suffix in ("-wal", "-shm"):
        (job / f"frontier.sqlite{suffix}").unlink(missing_ok=True)
    before = snapshot(feed, job / "frontier.sqlite", job / "job.json")
    code, text = run_to_end(slow_site, job, feed, tmp_path / "resume.log")
    assert code == 1, text[-3000:]
    assert (f"JOBDIR {job}: frontier.sqlite is older than what this job committed" in text
            ), text[-3000:]
    assert "to start over on purpose, remove the JOBDIR" in text
    assert "Spider opened" not in text and "Traceback" not in text, text[-3000:]
    assert snapshot(feed, job / "frontier.sqlite", job / "job.json") == before


def test_deleted_frontier_is_refused_touching_nothing(slow_site, tmp_path):
    rng = random.Random(f"{SEED}-deleted-frontier")
    job, feed = tmp_path / "job", tmp_path / "items.jl"
    kill_mid_crawl(slow_site, job, feed, rng)
    for suffix in ("", "-wal", "-shm"):
        (job / f"frontier.sqlite{suffix}").unlink(missing_ok=True)
    before = snapshot(feed, job / "job.json")
    code, text = run_to_end(slow_site, job, feed, tmp_path / "resume.log")
    assert code == 1, text[-3000:]
    assert f"JOBDIR {job}: frontier.sqlite is missing, but this job has committed" in text
    assert "Traceback" not in text, text[-3000:]
    assert not (job / "frontier.sqlite").exists()
    assert snapshot(feed, job / "job.json") == before


def test_frontier_copied_alone_after_a_clean_stop_resumes_every_page_once(slow_site, tmp_path):
    """A clean stop checkpoints the write-ahead log into ``frontier.sqlite``: the file
    alone (no ``-wal``, no ``-shm``) is the whole job."""
    rng = random.Random(f"{SEED}-copied-alone")
    job, feed = tmp_path / "job", tmp_path / "items.jl"
    proc = start_crawl(slow_site, job, feed)
    wait_for_growth(proc, feed, rng.randint(2000, 8000))
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 0
    for suffix in ("-wal", "-shm"):
        (job / f"frontier.sqlite{suffix}").unlink(missing_ok=True)
    code, text = finish(slow_site, job, feed, tmp_path / "final.log")
    assert code == 0, text[-3000:]
    assert "Resuming crawl" in text
    assert sorted(read_pages(feed, "jl")) == list(range(slow_site.pages))
