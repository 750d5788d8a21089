"""SIGINT/SIGTERM sent to a real ``crawlfw runspider`` subprocess crawling a real local
server: a stop asked for during start-up stops the crawl as soon as it runs, and a second
signal ends the process within a bounded time whatever the graceful stop is doing (also
when the two signals race, 10-30 ms apart, at random moments of the crawl)."""

import os
import random
import signal
import threading
import time

import pytest

from tests.downloadermiddlewares._support import ScriptedServer
from tests.support.proc import start_crawlfw, wait_measured
from tests.support.wait import wait_for

pytestmark = pytest.mark.slow

PAGES = 2000

SPIDER = '''
import os
import time

import crawlfw


class SlowSpider(crawlfw.Spider):
    """PAGES requests, one at a time, 50 ms apart (100 s in all: never finished here)."""

    name = "slow"
    custom_settings = {"DOWNLOAD_DELAY": 0.05, "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
                       "RANDOMIZE_DOWNLOAD_DELAY": False, "LOG_LEVEL": "INFO"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if getattr(self, "marker", None):  # start-up: the signal handlers are installed
            open(self.marker, "w").close()
            go = self.marker + ".go"  # start-up goes on once the test has sent its signal
            deadline = time.monotonic() + 60
            while not os.path.exists(go) and time.monotonic() < deadline:
                time.sleep(0.01)

    def start_requests(self):
        for i in range(int(self.pages)):
            yield crawlfw.Request(f"{self.base}/page?{i}")

    def parse(self, response):
        yield {"url": response.url}


class StuckPipeline:
    """Never finishes closing: the graceful stop hangs in it. Says so in the working
    directory: ``first_item`` once an item passed, ``stuck`` once closing hangs."""

    def process_item(self, item, spider):
        if not os.path.exists("first_item"):
            open("first_item", "w").close()
        return item

    def close_spider(self, spider):
        open("stuck", "w").close()
        time.sleep(3600)
'''

PAGE = (200, [("Content-Type", "text/html")], b"<html><body>page</body></html>")


@pytest.fixture(scope="module")
def server():
    with ScriptedServer({"/page": PAGE}) as server:
        yield server


# Signals go with os.kill, not Popen.send_signal: that one polls first and may reap a child
# that just exited, which os.wait4 (wait_measured) then no longer finds.


def _start(tmp_path, server, *args):
    spider = tmp_path / "slow_spider.py"
    spider.write_text(SPIDER)
    return start_crawlfw("runspider", spider, "-a", f"base={server.url}", "-a",
                         f"pages={PAGES}", "-o", "items.jl", *args, cwd=tmp_path)


def _wait_for(predicate, timeout_s=60.0):
    wait_for(predicate, "the crawl", timeout_s=timeout_s)


def _log_has(err_path, text):
    return lambda: text in err_path.read_text(errors="replace")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_startup_stops_the_crawl(tmp_path, server, signum):
    marker = tmp_path / "starting"
    process, out, err = _start(tmp_path, server, "-a", f"marker={marker}")
    _wait_for(marker.exists)
    os.kill(process.pid, signum)  # the spider is still being built: no crawl exists yet
    (tmp_path / "starting.go").touch()
    result = wait_measured(process, out, err, timeout_s=30)
    assert not result.timed_out, "the crawl ran on after the signal"
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"Received {signal.Signals(signum).name}, shutting down gracefully" in result.stderr
    assert "'finish_reason': 'shutdown'" in result.stderr
    crawled = (tmp_path / "items.jl").read_text().count("\n") if (
        tmp_path / "items.jl").exists() else 0
    assert crawled < PAGES // 10


def test_second_signal_ends_a_stuck_graceful_stop(tmp_path, server):
    process, out, err = _start(tmp_path, server,
                               "-s", "ITEM_PIPELINES={\"slow_spider.StuckPipeline\": 100}")
    _wait_for((tmp_path / "first_item").exists)  # the crawl runs: an item went through
    os.kill(process.pid, signal.SIGINT)
    _wait_for(_log_has(err, "Closing spider (shutdown)"))
    _wait_for((tmp_path / "stuck").exists)  # the pipeline will never close
    os.kill(process.pid, signal.SIGINT)
    result = wait_measured(process, out, err, timeout_s=20)
    assert not result.timed_out, "the forced shutdown did not end the process"
    assert "Received SIGINT twice, forcing unclean shutdown" in result.stderr
    assert result.returncode == 130  # 128 + SIGINT, as for a process killed by ^C


TRIALS = 16
PARALLEL = 4


def test_double_signal_race_always_ends(tmp_path, server):
    rng = random.Random(20261123)
    plans = [(rng.uniform(0.0, 1.5), rng.uniform(0.010, 0.030)) for _ in range(TRIALS)]
    outcomes = [None] * TRIALS

    def trial(i):
        first_after_s, gap_s = plans[i]
        folder = tmp_path / f"trial{i}"
        folder.mkdir()
        process, out, err = _start(folder, server)
        _wait_for(_log_has(err, "Spider opened"))
        # The moments are the test (seeded): not waits for anything, hence plain sleeps.
        time.sleep(first_after_s)
        os.kill(process.pid, signal.SIGINT)
        time.sleep(gap_s)
        os.kill(process.pid, signal.SIGINT)
        outcomes[i] = wait_measured(process, out, err, timeout_s=20)

    for start in range(0, TRIALS, PARALLEL):
        threads = [threading.Thread(target=trial, args=(i,))
                   for i in range(start, min(start + PARALLEL, TRIALS))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    hung = [i for i, r in enumerate(outcomes) if r is None or r.timed_out]
    assert not hung, f"trials {hung} did not end within 20 s: {[plans[i] for i in hung]}"
    # 0: the graceful stop finished first; 130: forced; -2: the second SIGINT came while
    # the interpreter was already exiting (Python then restores the default handler)
    assert {r.returncode for r in outcomes} <= {0, 130, -signal.SIGINT}
