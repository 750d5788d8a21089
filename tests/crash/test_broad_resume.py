"""Lose nothing on the per-host layout: a 500-host ``JOBDIR`` crawl killed (SIGKILL) at
seeded random moments and resumed with the same command ends with every page exactly
once in the feed. The frontier's rows carry their host; the ready-set is rebuilt at
each open from them, and leases of the killed run are queued again.

Real subprocesses, one local server answering for ``site<i>.localhost`` (curl resolves
``*.localhost`` itself). Random choices come from ``random.Random(SEED)``
(``CRAWLFW_CRASH_SEED`` replays one).
"""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.broadsite import BroadSite
from tests.support.proc import crawlfw_env

SPIDER = Path(__file__).with_name("broadspider.py")
SEED = int(os.environ.get("CRAWLFW_CRASH_SEED", "20261125"))
HOSTS = 500


def feed_size(feed: Path) -> int:
    try:
        return feed.stat().st_size
    except FileNotFoundError:
        return 0


@pytest.mark.slow
def test_500_host_jobdir_crawl_killed_and_resumed_has_every_page_once(tmp_path):
    site = BroadSite(pages=2, latency_s=0.01)
    feed = tmp_path / "items.jl"
    cmd = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(SPIDER),
           "-a", f"hosts={HOSTS}", "-a", f"port={site.port}", "-o", str(feed),
           "-s", f"JOBDIR={tmp_path / 'job'}", "-s", "LOG_LEVEL=INFO",
           "-s", "COOKIES_ENABLED=0", "-s", "RETRY_ENABLED=0",
           "-s", "CONCURRENT_REQUESTS=32", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1",
           "-s", "FRONTIER_CHECKPOINT_INTERVAL=0.2"]
    line = len(json.dumps({"url": f"http://site100.localhost:{site.port}/p/1"})) + 1
    total = 2 * HOSTS * line
    rng = random.Random(SEED)
    thresholds = sorted(rng.uniform(0.1, 0.85) * total for _ in range(3))
    log = open(tmp_path / "stderr.txt", "wb")
    try:
        for threshold in thresholds:
            process = subprocess.Popen(cmd, cwd=tmp_path, env=crawlfw_env(),
                                       stdout=subprocess.DEVNULL, stderr=log)
            deadline = time.monotonic() + 120
            while process.poll() is None and feed_size(feed) < threshold:
                assert time.monotonic() < deadline, f"no progress past {threshold} bytes"
                time.sleep(0.01)  # polling the feed's size: the condition waited on
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
            process.wait(30)
        final = subprocess.run(cmd, cwd=tmp_path, env=crawlfw_env(),
                               stdout=subprocess.DEVNULL, stderr=log, timeout=180)
    finally:
        log.close()
        site.stop()
    stderr = (tmp_path / "stderr.txt").read_text(errors="replace")
    assert final.returncode == 0, f"seed {SEED}: " + stderr[-3000:]
    urls = [json.loads(x)["url"] for x in feed.read_text().splitlines()]
    expected = sorted(url for i in range(HOSTS) for url in (site.url(i), site.url(i) + "p/1"))
    assert len(urls) == len(set(urls)), f"seed {SEED}: a page is in the feed twice"
    assert sorted(urls) == expected, f"seed {SEED}: pages missing"
    # A kill before the first checkpoint leaves nothing committed to resume from; the
    # later ones fall mid-crawl, with requests queued and leased in the frontier.
    assert stderr.count("Resuming crawl") >= len(thresholds) - 1
