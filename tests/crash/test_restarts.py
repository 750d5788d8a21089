"""The Pipeline and the Exporters are restarted when they die, and nothing they held is
lost or written twice.

Real subprocess runs of ``crawlfw runspider`` against a local site; the actors are made
to die by fault points armed with the ``raise`` mode (``CRAWLFW_FAULTS``, see
crawlfw/core/_faults.py): ``pipeline.items`` raises half-way through a batch,
``exporter.items`` before writing a batch, ``feed.mid_batch`` after writing half a batch
and half an item's line. Which batch is drawn from a seeded ``random.Random``.
"""

import csv
import io
import json
import os
import random
import re
from pathlib import Path

import pytest

from crawlfw.core.frontier.frontier import read_job_meta
from tests.crash.batchspider import ITEMS_PER_PAGE
from tests.support.linksite import LinkSite
from tests.support.proc import run_measured

pytestmark = pytest.mark.slow

SPIDER = Path(__file__).with_name("batchspider.py")
SEED = int(os.environ.get("CRAWLFW_CRASH_SEED", "20261123"))


@pytest.fixture(scope="module")
def site():
    s = LinkSite(pages=300, fanout=4, seed=5, delay_s=0.001)
    yield s
    s.stop()


def crawl(site, tmp_path, *args, faults, timeout_s=120):
    """Run the batch spider with ``faults`` armed; return ``(exit status, log text)``."""
    done = run_measured(
        "runspider", SPIDER, "-a", f"base={site.url}", "-s", "LOG_LEVEL=INFO",
        "-s", "SUPERVISOR_BACKOFF=0.05", "-s", "CONCURRENT_REQUESTS=8", *args,
        cwd=tmp_path, env={"CRAWLFW_FAULTS": faults}, timeout_s=timeout_s)
    assert not done.timed_out, done.stderr[-3000:]
    return done.returncode, done.stderr, done.stdout


def read_items(path: Path, fmt: str) -> list:
    """``[(n, k), ...]`` of a feed, checking that it is one well-formed document."""
    raw = path.read_bytes()
    if fmt == "jl":
        lines = raw.split(b"\n")
        assert lines[-1] == b"", "the feed ends with a partial line"
        rows = [json.loads(line) for line in lines[:-1]]
    elif fmt == "json":
        rows = json.loads(raw)
    else:
        table = list(csv.reader(io.StringIO(raw.decode(), newline="")))
        assert table[0] == ["n", "k"] and ["n", "k"] not in table[1:], "header once"
        rows = [{"n": n, "k": k} for n, k in table[1:]]
    return [(int(r["n"]), int(r["k"])) for r in rows]


def assert_every_item_once(site, items, context):
    expected = {(n, k) for n in range(site.pages) for k in range(ITEMS_PER_PAGE)}
    missing = expected - set(items)
    twice = len(items) - len(set(items))
    assert not missing and not twice, f"{context}: {len(missing)} missing, {twice} twice"


def stat(log: str, name: str):
    found = re.search(rf"'{re.escape(name)}': (\d+)", log)
    return int(found.group(1)) if found else None


def test_pipeline_dies_mid_batch_and_is_restarted_with_every_item_once(site, tmp_path):
    n = random.Random(f"{SEED}-pipeline").randint(5, 60)
    feeds = {"items.jl": {"format": "jsonlines"}, "items.json": {"format": "json"}}
    code, log, _ = crawl(site, tmp_path, "-s", f"FEEDS={json.dumps(feeds)}",
                         faults=f"pipeline.items:{n}:raise")
    context = f"seed {SEED}, pipeline dies on batch {n}"
    assert code == 0, f"{context}\n{log[-3000:]}"
    assert "Actor pipeline of crawl batches-1 failed: InjectedFault: injected fault at " \
           "pipeline.items" in log, context
    assert "Restarting pipeline of crawl batches-1" in log, context
    assert stat(log, "supervisor/restarts/pipeline") == 1, context
    assert "'finish_reason': 'finished'" in log, context
    for name, fmt in (("items.jl", "jl"), ("items.json", "json")):
        assert_every_item_once(site, read_items(tmp_path / name, fmt), f"{context}, {name}")
    # The replay started at the item the actor died on: no item went through the item
    # pipelines (item_scraped) twice.
    assert stat(log, "item_scraped_count") == site.pages * ITEMS_PER_PAGE, context
    assert "message(s) to the dead" not in log and "dropped" not in log, context


@pytest.mark.parametrize("point, fmt", [
    ("feed.mid_batch", "json"), ("feed.mid_batch", "jl"), ("feed.mid_batch", "csv"),
    ("exporter.items", "json"),
])
def test_exporter_dies_mid_batch_and_its_feed_is_cut_back(site, tmp_path, point, fmt):
    n = random.Random(f"{SEED}-{point}-{fmt}").randint(5, 60)
    feed = tmp_path / f"items.{fmt}"
    code, log, _ = crawl(site, tmp_path, "-o", feed.name, faults=f"{point}:{n}:raise")
    context = f"seed {SEED}, exporter dies at {point} on batch {n}"
    assert code == 0, f"{context}\n{log[-3000:]}"
    assert f"Actor exporter ({feed.name}) of crawl batches-1 failed: InjectedFault" in log
    assert stat(log, "supervisor/restarts/exporter") == 1, context
    if point == "feed.mid_batch":
        assert f"Feed {feed.name} cut back to " in log, context
    assert "'finish_reason': 'finished'" in log, context
    assert_every_item_once(site, read_items(feed, fmt), context)


def test_restarts_with_jobdir_keep_checkpoints_whole(site, tmp_path):
    rng = random.Random(f"{SEED}-jobdir")
    p, e = rng.randint(5, 60), rng.randint(5, 60)
    job, feed = tmp_path / "job", tmp_path / "items.jl"
    code, log, _ = crawl(site, tmp_path, "-o", feed.name, "-s", f"JOBDIR={job}",
                         "-s", "FRONTIER_CHECKPOINT_INTERVAL=0.05",
                         faults=f"pipeline.items:{p}:raise,feed.mid_batch:{e}:raise")
    context = f"seed {SEED}, pipeline dies on batch {p}, exporter on batch {e}"
    assert code == 0, f"{context}\n{log[-3000:]}"
    assert stat(log, "supervisor/restarts/pipeline") == 1, context
    assert stat(log, "supervisor/restarts/exporter") == 1, context
    assert "'finish_reason': 'finished'" in log, context
    items = read_items(feed, "jl")
    assert_every_item_once(site, items, context)
    # The last checkpoint passed the restarted pipeline and exporter: the committed
    # state of the feed is all of it.
    state = read_job_meta(str(job))["feeds"][feed.name]
    assert state["offset"] == feed.stat().st_size and state["items"] == len(items), context
    # Run again: the job is done, nothing is crawled or written again.
    code, log, _ = crawl(site, tmp_path, "-o", feed.name, "-s", f"JOBDIR={job}", faults="")
    assert code == 0, log[-3000:]
    assert read_items(feed, "jl") == items


@pytest.mark.parametrize("role, point, key", [
    ("pipeline", "pipeline.items", ""), ("exporter", "exporter.items", " (items.jl)"),
])
def test_deaths_past_the_restart_intensity_fail_the_crawl(site, tmp_path, role, point, key):
    code, log, _ = crawl(site, tmp_path, "-o", "items.jl", "-s", "SUPERVISOR_MAX_RESTARTS=2",
                         faults=f"{point}:3:raise:100")
    assert code == 1, log[-3000:]
    assert (f"Restart intensity of crawl batches-1 exhausted (2 restarts within 60 s, "
            f"SUPERVISOR_MAX_RESTARTS): {role}{key} failed again; closing the crawl "
            f"({role}_failed)") in log, log[-3000:]
    assert stat(log, f"supervisor/restarts/{role}") == 2
    assert f"'finish_reason': '{role}_failed'" in log


def test_stdout_feed_exporter_death_is_fatal_with_a_clear_line(site, tmp_path):
    code, log, out = crawl(site, tmp_path, "-o", "-", "-t", "jsonlines",
                           faults="exporter.items:3:raise")
    assert code == 1, log[-3000:]
    assert ("Exporter of feed stdout: cannot be restarted: it died while writing a batch, "
            "and a stdout feed cannot be cut back to where the batch began (only a local "
            "file's can); closing the crawl (exporter_failed)") in log, log[-3000:]
    assert "'finish_reason': 'exporter_failed'" in log
    assert "Restarting exporter" not in log
    assert out.count("\n") >= 2 * ITEMS_PER_PAGE  # the two batches before it were written


@pytest.mark.parametrize("option", ['"batch_item_count": 7', '"postprocessing": '
                                    '["crawlfw.extensions.postprocessing.GzipPlugin"]'])
def test_batched_or_postprocessed_feed_exporter_death_is_fatal(site, tmp_path, option):
    """A feed of batches or post-processed cannot be cut back: its exporter dying
    mid-batch ends the crawl, said in one line (issue 17)."""
    feeds = '{"out-%(batch_id)d.jl": {"format": "jsonlines", ' + option + '}}'
    code, log, out = crawl(site, tmp_path, "-s", f"FEEDS={feeds}",
                           faults="exporter.items:3:raise")
    assert code == 1, log[-3000:]
    name = option.split('"')[1]
    assert ("Exporter of feed out-%(batch_id)d.jl cannot be restarted: it died while "
            f"writing a batch, and a feed with {name} cannot be cut back to where the "
            "batch began (only a local file's can, without batch_item_count or "
            "postprocessing); closing the crawl (exporter_failed)") in log, log[-3000:]
    assert "'finish_reason': 'exporter_failed'" in log
