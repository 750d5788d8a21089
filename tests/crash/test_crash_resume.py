"""Lose nothing: a JOBDIR crawl killed at random moments (SIGKILL, SIGINT between) and
resumed with the same command ends with every page exactly once in the feed (JSON Lines,
CSV, JSON and XML feeds, each a single well-formed document at the end).

Real subprocesses (``python -m crawlfw.cmdline runspider``), a real local site, real
signals. Every random choice comes from ``random.Random(SEED)``: a failure names its seed
and replays with it (``CRAWLFW_CRASH_SEED``).
"""

import csv
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.linksite import LinkSite
from tests.support.wait import wait_for

pytestmark = pytest.mark.slow

SPIDER = Path(__file__).with_name("linkspider.py")
ROOT = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("CRAWLFW_CRASH_SEED", "20261123"))


@pytest.fixture(scope="module")
def site():
    s = LinkSite(pages=2000, fanout=6, seed=7, delay_s=0.002)
    yield s
    s.stop()


def start_crawl(site, job: Path, feed, *extra, env=None, log=None, output="-o"):
    """``feed``: a Path (one ``output`` feed) or a list of Paths (one ``output`` each)."""
    feeds = feed if isinstance(feed, list) else [feed]
    cmd = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(SPIDER),
           "-a", f"base={site.url}", "-s", f"JOBDIR={job}",
           *(arg for path in feeds for arg in (output, str(path))),
           "-s", "LOG_LEVEL=INFO", "-s", "CONCURRENT_REQUESTS=8",
           "-s", "FRONTIER_CHECKPOINT_INTERVAL=0.2", *extra]
    full_env = {k: v for k, v in os.environ.items() if k != "CRAWLFW_FAULTS"}
    full_env.update(env or {})
    return subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=subprocess.DEVNULL,
                            stderr=log if log is not None else subprocess.DEVNULL)


def feed_size(feed: Path) -> int:
    try:
        return feed.stat().st_size
    except FileNotFoundError:
        return 0


def interrupt_at_random(site, job, feed, rng, kills, total_bytes, log, output="-o"):
    """Start the crawl ``kills`` times and interrupt each run once the feed (the first,
    when ``feed`` is a list) has grown past a seeded random size (so each interruption
    falls inside the crawl): SIGKILL mostly, SIGINT (a graceful stop) every third time.
    Returns what was done, for messages."""
    done = []
    first = feed[0] if isinstance(feed, list) else feed
    thresholds = sorted(rng.uniform(0.05, 0.9) * total_bytes for _ in range(kills))
    for i, threshold in enumerate(thresholds):
        sig = signal.SIGINT if i % 3 == 2 else signal.SIGKILL
        proc = start_crawl(site, job, feed, log=log, output=output)
        wait_for(lambda proc=proc, threshold=threshold: (
                     proc.poll() is not None or feed_size(first) >= threshold),
                 "the feed to pass the threshold")
        # A seeded moment after it, not aligned with the feed's writes: the moment is
        # the test, not a wait for something.
        time.sleep(rng.uniform(0, 0.05))
        if proc.poll() is None:
            proc.send_signal(sig)
        code = proc.wait(60)
        done.append((sig.name, round(threshold), code))
    return done


def finish(site, job, feed, log_path, output="-o"):
    with open(log_path, "wb") as log:
        proc = start_crawl(site, job, feed, log=log, output=output)
        code = proc.wait(120)
    text = Path(log_path).read_text(errors="replace")
    return code, text


@pytest.mark.parametrize("fmt, kills, size_per_item", [
    ("jl", 9, 30), ("csv", 3, 18), ("json", 3, 32), ("xml", 2, 60),
])
def test_killed_and_resumed_crawl_has_every_page_exactly_once(site, tmp_path, fmt, kills,
                                                             size_per_item):
    rng = random.Random(f"{SEED}-{fmt}")
    job, feed = tmp_path / "job", tmp_path / f"items.{fmt}"
    with open(tmp_path / "interrupted.log", "wb") as log:
        done = interrupt_at_random(site, job, feed, rng, kills, site.pages * size_per_item, log)
    code, text = finish(site, job, feed, tmp_path / "final.log")
    context = f"seed {SEED}, interruptions {done}"
    assert code == 0, f"{context}\n{text[-3000:]}"
    assert "'finish_reason': 'finished'" in text, f"{context}\n{text[-3000:]}"
    pages = read_pages(feed, fmt)
    missing = set(range(site.pages)) - set(pages)
    twice = len(pages) - len(set(pages))
    assert not missing and not twice, f"{context}: {len(missing)} missing, {twice} twice"
    # Most runs were interrupted in the middle of the crawl.
    assert sum(1 for _, _, c in done if c != 0) >= kills // 2, context


@pytest.mark.parametrize("output, names, kills", [
    ("-o", ["a.jl", "a.csv"], 3),
    ("-O", ["b.jl", "b.csv"], 3),
])
def test_every_feed_of_a_killed_and_resumed_crawl_has_every_page_exactly_once(
        site, tmp_path, output, names, kills):
    """Issue 34: every -o (or -O) is a feed of its own, and JOBDIR's exactly-once holds
    for each: killed (kill -9 mostly) and resumed with the same command, each feed ends
    with every page once. A -O feed is emptied when the job begins, not at each resume
    (an -O feed's earlier content is gone, the job's is kept)."""
    rng = random.Random(f"{SEED}-two-{output}")
    job, feeds = tmp_path / "job", [tmp_path / name for name in names]
    if output == "-O":
        for feed in feeds:
            feed.write_bytes(b"content of an earlier job, replaced by -O\n")
    with open(tmp_path / "interrupted.log", "wb") as log:
        done = interrupt_at_random(site, job, feeds, rng, kills, site.pages * 30, log,
                                   output=output)
    code, text = finish(site, job, feeds, tmp_path / "final.log", output=output)
    context = f"seed {SEED}, interruptions {done}"
    assert code == 0, f"{context}\n{text[-3000:]}"
    assert "'finish_reason': 'finished'" in text, f"{context}\n{text[-3000:]}"
    for feed in feeds:
        pages = read_pages(feed, feed.suffix.lstrip("."))
        missing = set(range(site.pages)) - set(pages)
        twice = len(pages) - len(set(pages))
        assert not missing and not twice, \
            f"{context}: {feed.name}: {len(missing)} missing, {twice} twice"
    assert sum(1 for _, _, c in done if c != 0) >= kills // 2, context


def read_pages(feed: Path, fmt: str) -> list:
    raw = feed.read_bytes()
    if fmt == "jl":
        lines = raw.split(b"\n")
        assert lines[-1] == b"", "the feed ends with a partial line"
        return [json.loads(line)["n"] for line in lines[:-1]]
    if fmt == "json":
        return [item["n"] for item in json.loads(raw)]
    if fmt == "xml":
        from lxml import etree

        root = etree.fromstring(raw)  # one well-formed document
        return [int(n) for n in root.xpath("/items/item/n/text()")]
    rows = list(csv.reader(raw.decode().splitlines()))
    assert rows[0] == ["n", "title"]
    assert all(len(r) == 2 for r in rows), "a broken CSV row"
    assert ["n", "title"] not in rows[1:], "the CSV header was written twice"
    return [int(r[0]) for r in rows[1:]]
