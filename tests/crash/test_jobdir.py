"""A JOBDIR is one job: faults around it end cleanly (issue 23).

Real ``crawlfw runspider`` subprocesses on a local site, real SIGKILLs and real file
damage; each test asserts on the exit status, the one-line message and the feed (every
page once).
"""

import os
import random
import signal
import threading
import time
from pathlib import Path

import pytest

from tests.crash.test_crash_resume import SEED, feed_size, finish, read_pages, start_crawl
from tests.support.linksite import LinkSite
from tests.support.wait import wait_for

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def slow_site():
    # ~300 pages at 2 concurrent requests and 20 ms each: a crawl of several seconds.
    s = LinkSite(pages=300, fanout=4, seed=23, delay_s=0.02)
    yield s
    s.stop()


def wait_for_growth(proc, feed: Path, size: int, timeout_s: float = 60) -> None:
    wait_for(lambda: feed_size(feed) >= size, f"the feed to reach {size} bytes",
             timeout_s=timeout_s, alive=proc)


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
            # The same command from a second terminal (it used to cut the first's feed
            # back to its last commit: items lost for good).
            sizes = [feed_size(feed)]
            started = time.monotonic()
            with open(tmp_path / "second.log", "wb") as log:
                second = start_crawl(slow_site, job, feed, log=log)
                # the feed's size, sampled until the second crawl exits
                wait_for(lambda: sizes.append(feed_size(feed)) or second.poll() is not None,
                         "the second crawl to exit", poll_s=0.005)
                code = second.wait(60)
            took = time.monotonic() - started
            text = (tmp_path / "second.log").read_text(errors="replace")
            assert code == 1, text[-3000:]
            assert f"JOBDIR {job} is in use by another crawl (pid {first.pid}" in text, text
            assert "Spider opened" not in text and "Traceback" not in text, text
            assert took < 30, took  # generous: the refusal itself takes no waiting
            assert sizes == sorted(sizes), "the feed was cut back"
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
    """SIGKILL the crawl once its feed has grown past a seeded size (JSON Lines and
    JSON: 2-8 KB of the ~13 KB; CSV: 0.5-2.5 KB of the ~4 KB)."""
    proc = start_crawl(site, job, feed, *extra)
    wait_for_growth(proc, feed, rng.randint(500, 2500) if feed.suffix == ".csv"
                    else rng.randint(2000, 8000))
    proc.send_signal(signal.SIGKILL)
    proc.wait(60)
    assert (job / "job.json").exists()


def snapshot(*paths) -> dict:
    return {str(p): (p.read_bytes() if p.exists() else None) for p in paths}


@pytest.mark.parametrize("lost", [("-wal",), ("-wal", "-shm")], ids=["wal", "wal+shm"])
def test_lost_wal_after_a_kill_is_refused_touching_nothing(slow_site, tmp_path, lost):
    """The common backup mistake: ``frontier.sqlite`` without its ``-wal``. The job's
    last commits are only in the lost log: refused, not started as a new job."""
    rng = random.Random(f"{SEED}-lost-wal-{len(lost)}")
    job, feed = tmp_path / "job", tmp_path / "items.jl"
    kill_mid_crawl(slow_site, job, feed, rng)
    for suffix in lost:
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


def test_shortened_feed_stops_the_resume_unless_told_to_start_it_anew(slow_site, tmp_path):
    rng = random.Random(f"{SEED}-short-feed")
    job, feed = tmp_path / "job", tmp_path / "items.json"
    kill_mid_crawl(slow_site, job, feed, rng)
    data = feed.read_bytes()
    feed.write_bytes(data[: len(data) // 3])
    before = snapshot(feed)
    code, text = run_to_end(slow_site, job, feed, tmp_path / "resume.log")
    assert code == 1, text[-3000:]
    assert f"Feed {feed} is {len(data) // 3} bytes long, but this job committed" in text, text
    assert "set FEED_RESTART_BROKEN = True" in text and "Traceback" not in text
    assert snapshot(feed) == before  # nothing written
    # On purpose: the feed starts anew, a well-formed document; the old one is kept.
    code, text = run_to_end(slow_site, job, feed, tmp_path / "anew.log",
                            "-s", "FEED_RESTART_BROKEN=True")
    assert code == 0, text[-3000:]
    assert "starting the feed anew (FEED_RESTART_BROKEN)" in text
    kept = list(tmp_path.glob("items.json.broken-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == before[str(feed)]
    pages = read_pages(feed, "json")  # parses the document: it is whole
    assert len(pages) == len(set(pages)) and pages


def test_missing_feed_stops_the_resume(slow_site, tmp_path):
    rng = random.Random(f"{SEED}-missing-feed")
    job, feed = tmp_path / "job", tmp_path / "items.csv"
    kill_mid_crawl(slow_site, job, feed, rng)
    feed.unlink()
    code, text = run_to_end(slow_site, job, feed, tmp_path / "resume.log")
    assert code == 1, text[-3000:]
    assert f"Feed {feed} is missing, but this job committed" in text, text[-3000:]
    assert not feed.exists()


@pytest.mark.parametrize("jobdir", [True, False], ids=["jobdir", "no-jobdir"])
def test_feed_deleted_during_the_crawl_fails_it(slow_site, tmp_path, jobdir):
    job, feed = tmp_path / "job", tmp_path / "items.jl"
    extra = () if jobdir else ("-s", "JOBDIR=")
    with open(tmp_path / "run.log", "wb") as log:
        proc = start_crawl(slow_site, job, feed, *extra, log=log)
        wait_for_growth(proc, feed, 3000)
        feed.unlink()
        code = proc.wait(180)
    text = (tmp_path / "run.log").read_text(errors="replace")
    assert code == 1, text[-3000:]
    assert f"the file {feed} was deleted or moved during the crawl" in text, text[-3000:]
    assert "Stored jl feed" not in text
    assert "'finish_reason': 'feed_failed'" in text


def test_a_failed_last_commit_does_not_end_as_finished(slow_site, tmp_path):
    job, feed = tmp_path / "job", tmp_path / "items.jl"
    with open(tmp_path / "run.log", "wb") as log:
        proc = start_crawl(slow_site, job, feed, "-s", "CONCURRENT_REQUESTS=16", log=log,
                           env={"CRAWLFW_FAULTS": "frontier.in_close:1:eio"})
        code = proc.wait(180)
    text = (tmp_path / "run.log").read_text(errors="replace")
    assert "Frontier failed: OSError: [Errno 5] injected I/O error at frontier.in_close" in text
    assert "'finish_reason': 'frontier_failed'" in text, text[-3000:]
    assert "Spider closed (finished)" not in text
    assert code == 1
    # Nothing committed was lost: the same command finishes the job.
    code, text = finish(slow_site, job, feed, tmp_path / "final.log")
    assert code == 0, text[-3000:]
    assert sorted(read_pages(feed, "jl")) == list(range(slow_site.pages))


def test_a_stuck_crawl_waits_without_cpu_and_ends_stalled(slow_site, tmp_path):
    """The frontier stops handing out requests (fault injection ``frontier.lease_none``:
    its requests still counted as pending). The engine no longer re-asks the scheduler
    at once (a ping-pong at full CPU that never ended): it waits, and after
    ``STALL_TIMEOUT`` the crawl logs what is stuck and ends ``stalled``, exit 1."""
    job, feed = tmp_path / "job", tmp_path / "items.jl"
    stall_s = 6
    started = time.monotonic()
    with open(tmp_path / "run.log", "wb") as log:
        proc = start_crawl(slow_site, job, feed, "-s", f"STALL_TIMEOUT={stall_s}", log=log,
                           env={"CRAWLFW_FAULTS": "frontier.lease_none:3:hold"})
        watchdog = threading.Timer(120, proc.kill)  # the old code never ended
        watchdog.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            watchdog.cancel()
    took = time.monotonic() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    text = (tmp_path / "run.log").read_text(errors="replace")
    assert proc.returncode == 1, text[-3000:]
    assert "Crawl stalled: " in text and "(STALL_TIMEOUT)" in text, text[-3000:]
    assert "oldest pending request: <GET " + slow_site.url + "/p/" in text, text[-3000:]
    assert "queued, leased by nobody" in text
    assert "'finish_reason': 'stalled'" in text
    assert stall_s <= took < 90, took
    cpu_s = usage.ru_utime + usage.ru_stime
    # Generous: start-up and the pages crawled before the fault cost about 1-2 s; the
    # stuck stretch (>= 6 s) adds next to nothing (it ran at 70-100 % of a core before).
    assert cpu_s < 4.5, (cpu_s, took)
    print(f"CPU {cpu_s:.2f} s in {took:.1f} s")
    # Nothing committed is lost: without the fault the job finishes, every page once.
    code, text = finish(slow_site, job, feed, tmp_path / "final.log")
    assert code == 0, text[-3000:]
    assert sorted(read_pages(feed, "jl")) == list(range(slow_site.pages))


def test_frontier_copied_alone_after_a_kill_resumes_every_page_once(slow_site, tmp_path):
    """``frontier.sqlite`` alone (no ``-wal``, no ``-shm``, no ``job.json``: a copy of
    the one file) after a ``kill -9``: the main file always holds the job as of a
    checkpoint of its log (the run's first commit, then every
    ``FRONTIER_WAL_CHECKPOINT_INTERVAL``), so the job resumes from there, the feed cut
    back to that commit's length: every page once, not a new job appended."""
    rng = random.Random(f"{SEED}-copied-alone-kill")
    job, feed = tmp_path / "job", tmp_path / "items.jl"
    kill_mid_crawl(slow_site, job, feed, rng)
    for name in ("frontier.sqlite-wal", "frontier.sqlite-shm", "job.json"):
        (job / name).unlink(missing_ok=True)
    code, text = finish(slow_site, job, feed, tmp_path / "final.log")
    assert code == 0, text[-3000:]
    assert "cut back to its committed length" in text
    assert sorted(read_pages(feed, "jl")) == list(range(slow_site.pages))
