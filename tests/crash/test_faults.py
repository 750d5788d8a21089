"""Fault injection: the crawl process ends (``os._exit``) at each risky point of the
commit protocol; the same command run again finishes with every page exactly once.

The points (crawlfw/core/_faults.py): after a lease and before its ack, in the middle
of writing a feed batch (half a line on disk), between the feed's flush and the
frontier's commit, inside the commit (before ``COMMIT``), just after a commit. Which pass
through the point ends the process is drawn from a seeded ``random.Random``.
"""

import random

import pytest

from tests.crash.test_crash_resume import SEED, finish, read_pages, start_crawl
from tests.support.linksite import LinkSite

pytestmark = pytest.mark.slow

POINTS = ["frontier.after_lease", "feed.mid_batch", "feed.before_commit",
          "frontier.in_commit", "frontier.after_commit"]


@pytest.fixture(scope="module")
def site():
    s = LinkSite(pages=600, fanout=5, seed=11, delay_s=0.001)
    yield s
    s.stop()


@pytest.mark.parametrize("point", POINTS)
def test_process_dies_at_fault_point_and_resume_loses_nothing(site, tmp_path, point):
    rng = random.Random(f"{SEED}-{point}")
    job, feed = tmp_path / "job", tmp_path / "items.jl"
    codes = []
    for _ in range(2):  # two deaths at the point, at different passes
        n = rng.randint(2, 6)
        with open(tmp_path / "faulted.log", "ab") as log:
            proc = start_crawl(site, job, feed, env={"CRAWLFW_FAULTS": f"{point}:{n}"}, log=log)
            codes.append((n, proc.wait(120)))
    context = f"seed {SEED}, point {point}, passes and exit statuses {codes}"
    assert any(code == 75 for _, code in codes), context  # the fault really ended it
    code, text = finish(site, job, feed, tmp_path / "final.log")
    assert code == 0, f"{context}\n{text[-3000:]}"
    assert "'finish_reason': 'finished'" in text, f"{context}\n{text[-3000:]}"
    pages = read_pages(feed, "jl")
    missing = set(range(site.pages)) - set(pages)
    assert not missing and len(pages) == len(set(pages)), (
        f"{context}: {len(missing)} missing, {len(pages) - len(set(pages))} twice")


def test_spider_state_survives_a_crash(site, tmp_path):
    """``spider.state`` is committed with the frontier: after a kill, the state counts
    exactly the callbacks whose work was committed, and at the end every page once."""
    job, feed = tmp_path / "job", tmp_path / "items.jl"
    proc = start_crawl(site, job, feed, env={"CRAWLFW_FAULTS": "frontier.after_commit:4"})
    assert proc.wait(120) == 75
    code, text = finish(site, job, feed, tmp_path / "final.log")
    assert code == 0, text[-3000:]
    import base64
    import pickle

    from crawlfw.core.frontier.frontier import read_job_meta

    state = pickle.loads(base64.b64decode(read_job_meta(str(job))["spider_state"]))
    assert state["parsed"] == site.pages


def test_frontier_disk_error_ends_crawl_with_clear_line_and_failure_status(site, tmp_path):
    job, feed = tmp_path / "job", tmp_path / "items.jl"
    with open(tmp_path / "run.log", "wb") as log:
        proc = start_crawl(site, job, feed, env={"CRAWLFW_FAULTS": "frontier.in_commit:3:eio"},
                           log=log)
        code = proc.wait(120)
    text = (tmp_path / "run.log").read_text(errors="replace")
    assert "Frontier failed: OSError: [Errno 5] injected I/O error at frontier.in_commit" in text
    assert "'finish_reason': 'frontier_failed'" in text
    assert code != 0, text[-2000:]
    # Nothing was lost: the same command, healthy again, finishes the crawl.
    code, text = finish(site, job, feed, tmp_path / "final.log")
    assert code == 0, text[-3000:]
    pages = read_pages(feed, "jl")
    assert sorted(pages) == list(range(site.pages))


def test_damaged_frontier_file_refuses_to_start_naming_it(site, tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    (job / "frontier.sqlite").write_bytes(b"this is not a database" * 100)
    with open(tmp_path / "run.log", "wb") as log:
        proc = start_crawl(site, job, tmp_path / "items.jl", log=log)
        code = proc.wait(60)
    text = (tmp_path / "run.log").read_text(errors="replace")
    assert f"Cannot open the frontier {job / 'frontier.sqlite'}" in text
    assert code != 0


def test_overwrite_output_empties_the_feed_once_per_job_not_per_resume(site, tmp_path):
    """``-O`` empties the file when the job begins; a resumed run appends after the
    committed items instead of throwing them away."""
    job, feed = tmp_path / "job", tmp_path / "items.jl"
    feed.write_text('{"n": -1, "title": "left over from another crawl"}\n')
    proc = start_crawl(site, job, feed, env={"CRAWLFW_FAULTS": "frontier.after_commit:5"},
                       output="-O")
    assert proc.wait(120) == 75
    code, text = finish(site, job, feed, tmp_path / "final.log", output="-O")
    assert code == 0, text[-3000:]
    assert sorted(read_pages(feed, "jl")) == list(range(site.pages))
