"""One crawl, many workers: real ``crawlfw runspider`` processes sharing a frontier on a
real ``redis-server`` crawl a generated site with every page exactly once across their
feeds; one worker killed with SIGKILL mid-crawl loses nothing (its open leases expire
and the others crawl them; restarted under the same worker id it cuts its feed back to
what it committed); Redis restarted mid-crawl does not end the crawl.

Every random choice comes from ``random.Random(SEED)`` (``CRAWLFW_CRASH_SEED``).
"""

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.support.broadsite import BroadSite
from tests.support.linksite import LinkSite
from tests.support.wait import wait_for

pytestmark = pytest.mark.slow

SPIDER = Path(__file__).with_name("linkspider.py")
ROOT = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("CRAWLFW_CRASH_SEED", "20261123"))
KEY = "{crawlfw:links}"


@pytest.fixture(scope="module")
def site():
    s = LinkSite(pages=1200, fanout=6, seed=11, delay_s=0.01)
    yield s
    s.stop()


def start_worker(site, redis_url, worker, feed, log, *extra):
    cmd = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(SPIDER),
           "-a", f"base={site.url}", "-o", str(feed), "-s", f"FRONTIER_URL={redis_url}",
           "-s", f"FRONTIER_WORKER={worker}", "-s", "LOG_LEVEL=INFO",
           "-s", "CONCURRENT_REQUESTS=4", "-s", "FRONTIER_CHECKPOINT_INTERVAL=0.2",
           "-s", "FRONTIER_LEASE_TIMEOUT=5", *extra]
    env = {k: v for k, v in os.environ.items() if k != "CRAWLFW_FAULTS"}
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log)


def lines(feed: Path) -> int:
    try:
        return feed.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def read_pages(feed: Path) -> list:
    raw = feed.read_bytes()
    parts = raw.split(b"\n")
    assert parts[-1] == b"", f"{feed.name} ends with a partial line"
    return [json.loads(line)["n"] for line in parts[:-1]]


def wait_all(procs, logs, timeout_s=120):
    deadline = time.monotonic() + timeout_s
    codes = []
    for proc, log in zip(procs, logs, strict=True):
        try:
            codes.append(proc.wait(max(1, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail(f"a worker did not finish in {timeout_s} s:\n"
                        f"{Path(log.name).read_text(errors='replace')[-3000:]}")
    return codes


@pytest.mark.parametrize("workers", [2, 3])
def test_workers_crawl_every_page_exactly_once(site, redis_server, tmp_path, workers):
    feeds = [tmp_path / f"w{i}.jl" for i in range(workers)]
    logs = [open(tmp_path / f"w{i}.log", "wb") for i in range(workers)]
    # One host: its concurrency must let every worker take part (with per-host queues
    # a host at its limit is ready for no other worker; 8 by default < 3 x 4).
    procs = [start_worker(site, redis_server.url, f"w{i}", feeds[i], logs[i],
                          "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={4 * workers}")
             for i in range(workers)]
    codes = wait_all(procs, logs)
    texts = [Path(log.name).read_text(errors="replace") for log in logs]
    assert codes == [0] * workers, texts[codes.index(next(c for c in codes if c))][-3000:]
    pages = [n for feed in feeds for n in read_pages(feed)]
    assert sorted(pages) == list(range(site.pages)), (
        f"{len(set(range(site.pages)) - set(pages))} missing, "
        f"{len(pages) - len(set(pages))} twice")
    # Every worker took part, and each finished only when the whole crawl had.
    assert all(read_pages(feed) for feed in feeds), [len(read_pages(f)) for f in feeds]
    for text in texts:
        assert "'finish_reason': 'finished'" in text
    assert sum("start requests scheduled by this worker" in t for t in texts) == 1


def test_a_killed_worker_loses_nothing(site, redis_server, tmp_path):
    import redis

    rng = random.Random(f"{SEED}-kill")
    feeds = [tmp_path / f"w{i}.jl" for i in range(3)]
    logs = [open(tmp_path / f"w{i}.log", "wb") for i in range(3)]
    procs = [start_worker(site, redis_server.url, f"w{i}", feeds[i], logs[i],
                          "-s", "FRONTIER_MAX_OPEN_LEASES=6")
             for i in range(3)]
    threshold = rng.randrange(site.pages // 10, site.pages // 3)  # of the whole crawl
    client = redis.Redis.from_url(redis_server.url)
    # Killed past the threshold, at a moment it holds leases (not between a commit that
    # acked them all and its next lease).
    wait_for(lambda: (sum(lines(feed) for feed in feeds) >= threshold
                      and b"w0" in client.hvals(f"{KEY}:owners")),
             "the crawl past the threshold with w0 holding leases", poll_s=0.005,
             alive=procs[0])
    procs[0].send_signal(signal.SIGKILL)
    procs[0].wait(10)
    # The killed worker's open leases, as Redis holds them until they expire.
    owners = client.hgetall(f"{KEY}:owners")
    open_ids = [i for i, w in owners.items() if w == b"w0"]
    open_pages = {int(json.loads(client.hget(f"{KEY}:requests", i))["url"].rsplit("/", 1)[1])
                  for i in open_ids}
    committed = json.loads(client.hget(f"{KEY}:worker:w0", "feeds"))[str(feeds[0])]
    codes = wait_all(procs[1:], logs[1:])
    context = f"seed {SEED}, killed at {threshold} items, {len(open_ids)} open leases"
    assert codes == [0, 0], context
    pages = [n for feed in feeds for n in read_pages(feed)]
    counts = Counter(pages)
    assert set(counts) == set(range(site.pages)), f"{context}: pages lost"
    twice = {n for n, c in counts.items() if c > 1}
    # Duplicates come only from the killed worker's open leases, each at most twice, and
    # those are bounded: FRONTIER_MAX_OPEN_LEASES (6 here; 8 to 14 without it).
    assert len(open_ids) <= 6, context
    assert twice <= open_pages, f"{context}: {sorted(twice - open_pages)} twice"
    assert max(counts.values()) <= 2, context
    # Its feed past the committed offset holds exactly those pages' items.
    raw = feeds[0].read_bytes()
    past = [json.loads(line)["n"] for line in raw[committed["offset"]:].splitlines()
            if line.endswith(b"}")]
    assert twice <= set(past) <= open_pages, context
    # Restarted under the same worker id, it finds the crawl done and cuts its feed
    # back to its committed length: every page exactly once across the feeds.
    with open(tmp_path / "w0-again.log", "wb") as log:
        again = start_worker(site, redis_server.url, "w0", feeds[0], log,
                             "-s", "FRONTIER_MAX_OPEN_LEASES=6")
        assert wait_all([again], [log]) == [0]
    pages = [n for feed in feeds for n in read_pages(feed)]
    assert sorted(pages) == list(range(site.pages)), context


def test_redis_restarted_mid_crawl(site, redis_server, tmp_path):
    feeds = [tmp_path / f"w{i}.jl" for i in range(2)]
    logs = [open(tmp_path / f"w{i}.log", "wb") for i in range(2)]
    procs = [start_worker(site, redis_server.url, f"w{i}", feeds[i], logs[i])
             for i in range(2)]
    wait_for(lambda: lines(feeds[0]) + lines(feeds[1]) >= site.pages // 4,
             "a quarter of the crawl", poll_s=0.005)
    redis_server.restart(down_s=1.5)  # SIGTERM: the append-only file keeps the data
    codes = wait_all(procs, logs)
    texts = [Path(log.name).read_text(errors="replace") for log in logs]
    assert codes == [0, 0], texts[0][-3000:] + texts[1][-3000:]
    pages = [n for feed in feeds for n in read_pages(feed)]
    assert sorted(pages) == list(range(site.pages))
    assert all("unreachable" in t and "reachable again" in t for t in texts)


def children(pid: int) -> list:
    """The pids of ``pid``'s child processes (Linux ``/proc``)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except FileNotFoundError:
        return []
    return [int(p) for p in text.split()]


def alive(pid: int) -> bool:
    """True while ``pid`` runs (not a zombie)."""
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def test_workers_option_merges_every_item_once_into_the_feed(site, redis_server, tmp_path):
    """``runspider --workers 3 -o items.csv``: one worker killed with SIGKILL is started
    again by the parent under the same id; the CSV holds every page exactly once."""
    rng = random.Random(f"{SEED}-workers")
    feed = tmp_path / "items.csv"
    cmd = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(SPIDER),
           "-a", f"base={site.url}", "-o", str(feed), "--workers", "3",
           "-s", f"FRONTIER_URL={redis_server.url}", "-s", "LOG_LEVEL=INFO",
           "-s", "CONCURRENT_REQUESTS=4", "-s", "FRONTIER_CHECKPOINT_INTERVAL=0.2",
           "-s", "FRONTIER_LEASE_TIMEOUT=5"]
    with open(tmp_path / "parent.log", "wb") as log:
        parent = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)
        parts = Path(str(feed) + ".parts")
        threshold = rng.randrange(site.pages // 10, site.pages // 4)
        wait_for(lambda: sum(lines(p) for p in parts.glob("*.jl")) >= threshold,
                 "the workers' feeds past the threshold", poll_s=0.005, alive=parent)
        victim = rng.choice(children(parent.pid))
        os.kill(victim, signal.SIGKILL)
        code = parent.wait(120)
    text = (tmp_path / "parent.log").read_text(errors="replace")
    assert code == 0, text[-3000:]
    assert "exited with status -9: starting it again" in text
    import socket

    assert f"[{socket.gethostname()}-2] [crawlfw." in text  # each worker's lines say whose
    rows = feed.read_text().splitlines()
    assert rows[0] == "n,title"
    pages = sorted(int(row.split(",", 1)[0]) for row in rows[1:])
    assert pages == list(range(site.pages)), (
        f"seed {SEED}: {len(set(range(site.pages)) - set(pages))} missing, "
        f"{len(pages) - len(set(pages))} twice")
    assert not parts.exists()


def test_workers_option_with_overwrite_output(site, redis_server, tmp_path):
    """``--workers 2 -O items.json``: the workers write parts only; the parent writes the
    one JSON document, replacing what the file held."""
    feed = tmp_path / "items.json"
    feed.write_text("not json: left over from another crawl")
    cmd = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(SPIDER),
           "-a", f"base={site.url}", "-O", str(feed), "--workers", "2",
           "-s", f"FRONTIER_URL={redis_server.url}", "-s", "FRONTIER_KEY=overwrite-test",
           "-s", "LOG_LEVEL=INFO"]
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    pages = sorted(item["n"] for item in json.loads(feed.read_text()))
    assert pages == list(range(site.pages))


def test_workers_option_merges_every_item_once_into_every_feed(site, redis_server, tmp_path):
    """``--workers 2 -o a.jl -o a.csv`` (issue 34: every -o is a feed): the parent
    merges the workers' parts into each feed, every page once in each."""
    feeds = [tmp_path / "a.jl", tmp_path / "a.csv"]
    cmd = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(SPIDER),
           "-a", f"base={site.url}", "-o", str(feeds[0]), "-o", str(feeds[1]),
           "--workers", "2", "-s", f"FRONTIER_URL={redis_server.url}",
           "-s", "FRONTIER_KEY=two-feeds-test", "-s", "LOG_LEVEL=INFO"]
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    jl_pages = sorted(json.loads(line)["n"] for line in feeds[0].read_text().splitlines())
    rows = feeds[1].read_text().splitlines()
    assert rows[0] == "n,title"
    csv_pages = sorted(int(row.split(",", 1)[0]) for row in rows[1:])
    assert jl_pages == csv_pages == list(range(site.pages))
    assert not Path(str(feeds[0]) + ".parts").exists()


def test_workers_option_writes_the_feeds_of_custom_settings_once(site, redis_server,
                                                                  tmp_path):
    """A spider's custom_settings FEEDS with --workers: each worker wrote the feed
    itself (two JSON documents in one file); now the workers write their parts only and
    the parent the feed, once (issue 34)."""
    feed = tmp_path / "custom.json"
    spider = tmp_path / "customfeeds.py"
    spider.write_text(
        "from tests.crash.linkspider import LinkSpider\n\n\n"
        "class CustomFeeds(LinkSpider):\n"
        f"    custom_settings = {{'FEEDS': {{{str(feed)!r}: {{'format': 'json'}}}}}}\n")
    cmd = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(spider),
           "-a", f"base={site.url}", "--workers", "2",
           "-s", f"FRONTIER_URL={redis_server.url}", "-s", "FRONTIER_KEY=custom-feeds-test",
           "-s", "LOG_LEVEL=INFO"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=180,
                            env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    pages = sorted(item["n"] for item in json.loads(feed.read_text()))  # one document
    assert pages == list(range(site.pages))


def test_workers_option_needs_a_frontier_url(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "crawlfw.cmdline", "runspider", str(SPIDER),
                           "--workers", "2", "-o", str(tmp_path / "x.jl")],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "Usage error: --workers needs a shared frontier: set FRONTIER_URL "
        "(e.g. -s FRONTIER_URL=redis://127.0.0.1:6379/0)"]


def run_slow_workers(server, redis_url, tmp_path, n, *settings, workers=3):
    spider = Path(__file__).with_name("slowspider.py")
    procs, logs = [], []
    for i in range(workers):
        log = open(tmp_path / f"slow{i}.log", "wb")
        cmd = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(spider),
               "-a", f"base={server.url}", "-a", f"n={n}", "-o", str(tmp_path / f"s{i}.jl"),
               "-s", f"FRONTIER_URL={redis_url}", "-s", f"FRONTIER_WORKER=s{i}",
               "-s", "LOG_LEVEL=INFO", "-s", "FRONTIER_LEASE_TIMEOUT=5", *settings]
        procs.append(subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log))
        logs.append(log)
    codes = wait_all(procs, logs)
    assert codes == [0] * workers, Path(logs[0].name).read_text(errors="replace")[-3000:]
    feeds = [tmp_path / f"s{i}.jl" for i in range(workers)]
    pages = [n for feed in feeds if feed.exists() for n in read_pages(feed)]  # (none: no file)
    assert sorted(pages) == list(range(n))
    return pages


def test_per_domain_concurrency_holds_across_workers(redis_server, tmp_path):
    """3 workers, ``CONCURRENT_REQUESTS_PER_DOMAIN = 2``: the site never serves more than
    2 requests at once (each worker alone would allow 2, together 6)."""
    from tests.support.countserver import CountingServer

    server = CountingServer(hold_s=0.15)
    try:
        run_slow_workers(server, redis_server.url, tmp_path, 36,
                         "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=2")
    finally:
        server.stop()
    assert len(server.paths) == 36
    assert server.max_active == 2


def test_download_delay_holds_across_workers(redis_server, tmp_path):
    """3 workers, ``DOWNLOAD_DELAY = 0.25`` (not randomized), one request at a time
    each (so all three take part): requests to the site start at least a delay apart
    across the workers (0.1 s of slack for the transfer's own start)."""
    from tests.support.countserver import CountingServer

    server = CountingServer(hold_s=0.0)
    try:
        pages = run_slow_workers(server, redis_server.url, tmp_path, 15,
                                 "-s", "DOWNLOAD_DELAY=0.25", "-s", "CONCURRENT_REQUESTS=1",
                                 "-s", "RANDOMIZE_DOWNLOAD_DELAY=False")
    finally:
        server.stop()
    times = sorted(server.times)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert len(times) == len(pages) == 15
    assert min(gaps) >= 0.15, [round(g, 3) for g in gaps]


def test_workers_option_resumes_after_the_parent_was_killed(site, redis_server, tmp_path):
    """The ``--workers`` parent killed with SIGKILL: its workers stop (as on ^C), keeping
    their parts; the same command again finishes the crawl, every page once in the feed."""
    rng = random.Random(f"{SEED}-parent")
    feed = tmp_path / "items.jl"
    cmd = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(SPIDER),
           "-a", f"base={site.url}", "-o", str(feed), "--workers", "2",
           "-s", f"FRONTIER_URL={redis_server.url}", "-s", "LOG_LEVEL=INFO",
           "-s", "CONCURRENT_REQUESTS=4", "-s", "FRONTIER_CHECKPOINT_INTERVAL=0.2",
           "-s", "FRONTIER_LEASE_TIMEOUT=5"]
    parts = Path(str(feed) + ".parts")
    with open(tmp_path / "first.log", "wb") as log:
        parent = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)
        threshold = rng.randrange(site.pages // 10, site.pages // 3)
        wait_for(lambda: sum(lines(p) for p in parts.glob("*.jl")) >= threshold,
                 "the workers' feeds past the threshold", poll_s=0.005, alive=parent)
        workers = children(parent.pid)
        parent.kill()
        parent.wait(10)
        wait_for(lambda: not any(alive(pid) for pid in workers),
                 "the workers to end after their parent", timeout_s=30)
    first = (tmp_path / "first.log").read_text(errors="replace")
    assert first.count("'finish_reason': 'shutdown'") == 2, first[-3000:]  # not finished
    assert not feed.exists()
    with open(tmp_path / "again.log", "wb") as log:
        again = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log,
                               timeout=120)
    text = (tmp_path / "again.log").read_text(errors="replace")
    assert again.returncode == 0, text[-3000:]
    assert sorted(read_pages(feed)) == list(range(site.pages))


def test_status_shows_the_whole_shared_crawl_and_its_workers(redis_server, tmp_path):
    """``crawlfw status`` of one worker of a shared crawl reports the whole crawl (pages,
    items, queued and leased requests of every worker) and each worker's figures."""
    from tests.support.countserver import CountingServer
    from tests.support.live import LiveCrawl, RuntimeDir

    server = CountingServer(hold_s=0.2)
    runtime = RuntimeDir()
    crawls = []
    try:
        for wid in ("w1", "w2"):
            crawls.append(LiveCrawl(runtime, tmp_path / wid, server.url, pages=400, name=wid, args=(
                "-s", f"FRONTIER_URL={redis_server.url}", "-s", "FRONTIER_KEY=status-test",
                "-s", f"FRONTIER_WORKER={wid}", "-s", "FRONTIER_LEASE_TIMEOUT=3")))
        def both_reported():
            status = crawls[0].wait_listed(min_pages=1)
            shared = status["shared"]
            if shared and {w["worker"] for w in shared["workers"]} == {"w1", "w2"} and all(
                    w["pages"] for w in shared["workers"]):
                return status
            return None

        status = wait_for(both_reported, "shared figures of both workers", poll_s=0.1)
        shared = status["shared"]
        assert shared["pages"] == sum(w["pages"] for w in shared["workers"])
        assert shared["pages"] >= status["pages"]
        assert shared["queued"] + shared["leased"] > 0
        assert all(w["last_seen_s"] is not None and w["last_seen_s"] < 10
                   for w in shared["workers"])
        text = runtime.cli("status", crawls[1].pid).stdout
        assert "whole crawl" in text and "(shared frontier, 2 workers)" in text
        assert "  worker    w1:" in text and "  worker    w2:" in text
    finally:
        for crawl in crawls:
            crawl.proc.kill()
            crawl.proc.wait(30)
        runtime.cleanup()
        server.stop()


def run_broad_workers(site, redis_url, tmp_path, tag, *, hosts, big, workers=2,
                      settings=()):
    """``workers`` runspider workers of tests/crash/broadspider.py on one Redis crawl
    (key ``tag``); returns ``{worker: [url, ...]}`` of their feeds, after checking that
    every worker ended well."""
    spider = Path(__file__).with_name("broadspider.py")
    procs, logs, feeds = [], [], {}
    for i in range(workers):
        worker = f"{tag}{i}"
        feeds[worker] = tmp_path / f"{worker}.jl"
        log = open(tmp_path / f"{worker}.log", "wb")
        cmd = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(spider),
               "-a", f"hosts={hosts}", "-a", f"port={site.port}", "-a", f"big={big}",
               "-o", str(feeds[worker]), "-s", f"FRONTIER_URL={redis_url}",
               "-s", f"FRONTIER_KEY={tag}", "-s", f"FRONTIER_WORKER={worker}",
               "-s", "LOG_LEVEL=INFO", "-s", f"USER_AGENT={worker}", *settings]
        env = {k: v for k, v in os.environ.items() if k != "CRAWLFW_FAULTS"}
        procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                      stderr=log))
        logs.append(log)
    codes = wait_all(procs, logs)
    assert codes == [0] * workers, Path(logs[0].name).read_text(errors="replace")[-3000:]
    return {w: [json.loads(line)["url"] for line in f.read_text().splitlines()]
            for w, f in feeds.items()}


#: Seconds a worker may use less than 3/4 of its transfers while a host is ready in
#: Redis (its scheduler polls every 0.1 s; a loaded test machine adds some).
IDLE_S = 0.5


class IdleWatch(threading.Thread):
    """Samples, every 20 ms, whether Redis has a ready host (``ready`` key) while a
    worker that has started (made its first request at ``site``, told by its
    User-Agent) serves at most 3/4 of ``concurrency`` transfers; keeps each worker's
    longest such stretch (``idle_s``, seconds)."""

    def __init__(self, redis_url, ready_key, site, workers, concurrency):
        import redis

        super().__init__(daemon=True)
        self.client = redis.Redis.from_url(redis_url)
        self.key, self.site, self.workers = ready_key, site, workers
        self.limit = concurrency * 3 // 4
        self.idle_s = {w: 0.0 for w in workers}
        self.samples = 0
        self._halt = threading.Event()
        self.start()

    def run(self):
        since = {}
        while not self._halt.wait(0.02):
            ready = self.client.zcard(self.key)
            now = time.monotonic()
            self.samples += 1
            active = dict(self.site.active_by_agent)
            for w in self.workers:
                if ready and w in active and active[w] <= self.limit:
                    start = since.setdefault(w, now)
                    self.idle_s[w] = max(self.idle_s[w], now - start)
                else:
                    since.pop(w, None)

    def stop(self):
        self._halt.set()
        self.join(5)
        self.client.close()


def test_two_workers_keep_per_host_limits_and_the_big_host_paces_the_crawl(redis_server,
                                                                         tmp_path):
    """Issue 18's skewed mix at a small scale, on two workers sharing one Redis: a big
    host of 200 pages (each linking to the next 20) beside 60 hosts of 3 pages, every
    answer 0.1 s late, 16 concurrent requests per worker, 4 per host. The big host
    alone needs 200 / 4 x 0.1 = 5 s however many workers: that is the floor. With the
    small hosts beside it the crawl takes at most 15 % longer (measured at the server,
    first request to last answer, so the workers' start-up does not count), and both
    crawls stay within 40 % of the floor; the server
    never serves one host more than 4 requests at once, across both workers; and
    neither worker idles while a host is ready in Redis (:class:`IdleWatch`)."""
    big = "big.localhost"
    settings = ("-s", "CONCURRENT_REQUESTS=16", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=4")
    spans = {}
    for tag, hosts in (("alone", 0), ("mix", 60)):
        site = BroadSite(pages=3, links=20, host_pages={big: 200}, latency_s=0.1,
                         record=True)
        watch = IdleWatch(redis_server.url, f"{{{tag}}}:ready", site, [f"{tag}0", f"{tag}1"],
                          concurrency=16)
        try:
            got = run_broad_workers(site, redis_server.url, tmp_path, tag, hosts=hosts,
                                    big=big, settings=settings)
        finally:
            watch.stop()
            site.stop()
        # Neither worker idled while a host was ready: no stretch of IDLE_S where Redis
        # had a ready host and a running worker used at most 3/4 of its transfers.
        assert watch.samples > 50 and max(watch.idle_s.values()) < IDLE_S, watch.idle_s
        urls = [u for pages in got.values() for u in pages]
        assert len(urls) == len(set(urls)) == 200 + 3 * hosts  # every page once
        assert max(site.max_active.values()) <= 4, site.max_active
        assert site.max_active[big] == 4  # (the limit was reached: the test can fail)
        spans[tag] = site.last_s - site.first_s
    floor_s = 200 / 4 * 0.1
    assert spans["alone"] >= floor_s
    # Margins for a loaded 2-core machine (the full suite's four workers at load 11 once
    # gave alone 5.9 s, mix 7.0 s); the regression this guards against is far beyond them.
    assert spans["mix"] <= 1.25 * spans["alone"], spans
    # Both near the floor (before per-host queues the workers' permits held the big
    # host back: 16 s alone, 7.8 s in the mix).
    assert max(spans.values()) <= 1.5 * floor_s, spans


def test_a_500_host_crawl_on_two_workers_killed_twice_loses_nothing(redis_server, tmp_path):
    """The per-host layout under SIGKILL: ``runspider --workers 2`` over 500 hosts of 2
    pages (0.02 s per answer); a worker is killed with SIGKILL at two seeded moments and
    started again by the parent; the merged feed holds every page of every host exactly
    once (the dead worker's leases gave their hosts' counts back when they expired, or
    when its restarted process queued them again)."""
    rng = random.Random(f"{SEED}-500-hosts")
    site = BroadSite(pages=2, latency_s=0.02)
    feed = tmp_path / "items.jl"
    spider = Path(__file__).with_name("broadspider.py")
    cmd = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(spider),
           "-a", "hosts=500", "-a", f"port={site.port}", "-o", str(feed), "--workers", "2",
           "-s", f"FRONTIER_URL={redis_server.url}", "-s", "LOG_LEVEL=INFO",
           "-s", "CONCURRENT_REQUESTS=16", "-s", "FRONTIER_CHECKPOINT_INTERVAL=0.2",
           "-s", "FRONTIER_LEASE_TIMEOUT=5"]
    env = {k: v for k, v in os.environ.items() if k != "CRAWLFW_FAULTS"}
    try:
        with open(tmp_path / "parent.log", "wb") as log:
            parent = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                      stderr=log)
            parts = Path(str(feed) + ".parts")
            deadline = time.monotonic() + 90
            for threshold in sorted(rng.sample(range(100, 700), 2)):
                while sum(lines(p) for p in parts.glob("*.jl")) < threshold:
                    assert parent.poll() is None and time.monotonic() < deadline, \
                        "no progress"
                    time.sleep(0.005)
                os.kill(rng.choice(children(parent.pid)), signal.SIGKILL)
            code = parent.wait(120)
    finally:
        site.stop()
    text = (tmp_path / "parent.log").read_text(errors="replace")
    assert code == 0, text[-3000:]
    assert text.count("exited with status -9: starting it again") == 2, text[-3000:]
    urls = [json.loads(line)["url"] for line in feed.read_text().splitlines()]
    expected = {f"http://site{i}.localhost:{site.port}{path}" for i in range(500)
                for path in ("/", "/p/1")}
    assert len(urls) == len(set(urls)) and set(urls) == expected, (
        f"seed {SEED}: {len(expected - set(urls))} missing, {len(urls) - len(set(urls))} "
        f"twice")
