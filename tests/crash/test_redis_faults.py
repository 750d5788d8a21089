"""Faults of a shared frontier's Redis end cleanly (issue 23): a fault that waiting will
not mend (a wrong or missing password, a server that does not speak Redis, a malformed
``FRONTIER_URL``, a Redis that evicts keys) stops the crawl at once, in one line, exit
status 1, no traceback, no retry; an unreachable Redis is retried for
``FRONTIER_RETRY_TIMEOUT`` in total (the close path does not start it again); ^C stops a
crawl whose Redis is gone within seconds; the ``--workers`` parent restarts only
crashes, and a worker never starts the crawl anew over a Redis that lost it.

Each test runs the real thing: ``crawlfw runspider`` subprocesses crawling a local
``LinkSite``, a real ``redis-server`` started by the test (password-protected,
``--maxmemory-policy allkeys-lru``, killed, flushed).
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.linksite import LinkSite
from tests.support.redisserver import RedisServer, require_redis
from tests.support.wait import wait_for

pytestmark = pytest.mark.slow

SPIDER = Path(__file__).with_name("linkspider.py")
ROOT = Path(__file__).resolve().parents[2]
KEY = "{crawlfw:links}"


@pytest.fixture(scope="module")
def site():
    s = LinkSite(pages=300, fanout=4, seed=23, delay_s=0.01)
    yield s
    s.stop()


@pytest.fixture
def make_redis(tmp_path):
    """Start a ``redis-server`` with extra options: ``make_redis(*args, password=...)``."""
    require_redis()
    servers = []

    def make(*args, password=None, appendonly=True):
        server = RedisServer(tmp_path / f"redis{len(servers)}", appendonly=appendonly,
                             args=args, password=password).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


def crawl_cmd(site, url, feed, *extra, workers=None):
    cmd = [sys.executable, "-m", "crawlfw.cmdline", "runspider", str(SPIDER),
           "-a", f"base={site.url}", "-o", str(feed), "-s", f"FRONTIER_URL={url}",
           "-s", "LOG_LEVEL=INFO", "-s", "CONCURRENT_REQUESTS=4",
           "-s", "FRONTIER_CHECKPOINT_INTERVAL=0.2", "-s", "FRONTIER_LEASE_TIMEOUT=5", *extra]
    if workers:
        cmd += ["--workers", str(workers)]
    return cmd


def env():
    return {k: v for k, v in os.environ.items() if k != "CRAWLFW_FAULTS"}


def run(cmd, timeout_s=120):
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env(), capture_output=True, text=True,
                          timeout=timeout_s)
    return proc, time.monotonic() - start


def errors(text: str) -> list:
    return [line for line in text.splitlines() if "] ERROR: " in line]


def pages_of(feed: Path) -> list:
    return [json.loads(line)["n"] for line in feed.read_text().splitlines()]


def lines(feed: Path) -> int:
    try:
        return feed.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


# --- permanent faults: one line, exit 1, within seconds -------------------------------

@pytest.mark.parametrize("auth", ["wrong password", "no password"])
def test_authentication_error_stops_at_once(site, make_redis, tmp_path, auth):
    server = make_redis("--requirepass", "s3cret")
    url = server.url.replace("redis://", "redis://:wrong@" if auth == "wrong password"
                             else "redis://")
    # The default FRONTIER_RETRY_TIMEOUT (300 s): a retried fault would hit the bound.
    proc, took = run(crawl_cmd(site, url, tmp_path / "items.jl"))
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert took < 60, took
    shown = url.replace(":wrong@", ":***@")
    assert errors(proc.stderr) == [
        e for e in errors(proc.stderr)
        if f"Crawl could not start: shared frontier: Redis at {shown} refused the "
           "connection: " in e and "(authentication: check the password in FRONTIER_URL" in e]
    assert len(errors(proc.stderr)) == 1, proc.stderr[-3000:]
    assert "wrong" not in proc.stderr.replace(":***@", "")
    assert "Traceback" not in proc.stderr and "unreachable" not in proc.stderr
    assert not (tmp_path / "items.jl").exists() or lines(tmp_path / "items.jl") == 0


def test_a_server_that_does_not_speak_redis_stops_at_once(site, tmp_path):
    url = site.url.replace("http://", "redis://") + "/0"  # an HTTP server
    proc, took = run(crawl_cmd(site, url, tmp_path / "items.jl"))
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert took < 60, took
    [line] = errors(proc.stderr)
    assert f"shared frontier: the server at {url} does not speak Redis: it answered" in line
    assert "Traceback" not in proc.stderr and "unreachable" not in proc.stderr


@pytest.mark.parametrize("workers", [None, 2])
def test_a_malformed_url_stops_at_once(site, tmp_path, workers):
    proc, took = run(crawl_cmd(site, "redis:/x", tmp_path / "items.jl", workers=workers))
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert took < 60, took
    [line] = errors(proc.stderr)
    assert "Crawl could not start: shared frontier: FRONTIER_URL 'redis:/x' is not a " \
           "Redis URL" in line
    assert "Traceback" not in proc.stderr and "restart" not in proc.stderr


def test_workers_parent_refuses_a_wrong_password_without_starting_workers(
        site, make_redis, tmp_path):
    server = make_redis("--requirepass", "s3cret")
    url = server.url.replace("redis://", "redis://:wrong@")
    proc, took = run(crawl_cmd(site, url, tmp_path / "items.jl", workers=2))
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert took < 60, took
    [line] = errors(proc.stderr)
    assert "refused the connection" in line and ":***@" in line
    assert "Starting 2 workers" not in proc.stderr and "Traceback" not in proc.stderr


def test_an_evicting_redis_is_refused_at_start(site, make_redis, tmp_path):
    server = make_redis("--maxmemory-policy", "allkeys-lru")
    proc, took = run(crawl_cmd(site, server.url, tmp_path / "items.jl"))
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert took < 60, took
    [line] = errors(proc.stderr)
    assert (f"shared frontier: Redis at {server.url} has maxmemory-policy allkeys-lru: "
            "when full it evicts keys") in line
    assert "needs maxmemory-policy noeviction" in line


def test_an_evicting_redis_without_config_is_checked_through_info(site, make_redis, tmp_path):
    server = make_redis("--maxmemory-policy", "volatile-lru", "--rename-command", "CONFIG", "")
    proc, _ = run(crawl_cmd(site, server.url, tmp_path / "items.jl"))
    assert proc.returncode == 1, proc.stderr[-3000:]
    [line] = errors(proc.stderr)
    assert "has maxmemory-policy volatile-lru" in line


def test_a_policy_that_cannot_be_checked_is_said_and_the_crawl_goes_on(
        site, make_redis, tmp_path):
    server = make_redis("--rename-command", "CONFIG", "", "--rename-command", "INFO", "")
    feed = tmp_path / "items.jl"
    proc, _ = run(crawl_cmd(site, server.url, feed))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Could not check the maxmemory-policy of Redis at" in proc.stderr
    assert sorted(pages_of(feed)) == list(range(site.pages))


# --- transient faults: retried for FRONTIER_RETRY_TIMEOUT in total -----------------------

@pytest.mark.parametrize("workers", [None, 2])
def test_a_redis_gone_for_good_fails_after_the_retry_timeout_once(site, make_redis, tmp_path,
                                                                  workers):
    """Redis killed mid-crawl and not restarted: the worker fails (``frontier_failed``,
    exit 1) about FRONTIER_RETRY_TIMEOUT after the loss: the close path gives back
    nothing more after that budget (before: the close path retried twice as long), and
    the ``--workers`` parent does not restart workers that failed so (before: 5 restarts
    each, about 22 minutes at the default timeout)."""
    server = make_redis()
    feed = tmp_path / "items.jl"
    parts = Path(str(feed) + ".parts")
    retry_s = 10
    with open(tmp_path / "w.log", "wb") as log:
        proc = subprocess.Popen(crawl_cmd(site, server.url, feed, "-s",
                                          f"FRONTIER_RETRY_TIMEOUT={retry_s}",
                                          workers=workers),
                                cwd=ROOT, env=env(), stdout=subprocess.DEVNULL, stderr=log)
        wait_for(lambda: lines(feed) + sum(lines(p) for p in parts.glob("*.jl")) >= 20,
                 "the crawl's progress", poll_s=0.01, alive=proc)
        server.kill()
        killed = time.monotonic()
        code = proc.wait(120)
        took = time.monotonic() - killed
    text = (tmp_path / "w.log").read_text(errors="replace")
    assert code == 1, text[-3000:]
    assert "'finish_reason': 'frontier_failed'" in text
    assert f"unreachable for {retry_s} s (FRONTIER_RETRY_TIMEOUT)" in text
    # About retry_s plus the stop; the old close path alone took 2-3 x retry_s more.
    assert took < 2 * retry_s, (took, text[-3000:])
    assert "Traceback" not in text
    if workers:
        assert "stopped: frontier_failed (exit status 1); not restarted" in text
        assert "starting it again" not in text


# --- ^C ---------------------------------------------------------------------------------

@pytest.mark.parametrize("workers", [None, 2])
def test_interrupt_stops_a_crawl_whose_redis_is_gone(site, make_redis, tmp_path, workers):
    """Redis killed mid-crawl (the default 300 s of retries ahead): one SIGINT ends the
    crawl within seconds (before: the downloader did not stop within 60 s), also with
    ``--workers`` (the parent passes the SIGINT on; it exits 1, the parts kept)."""
    server = make_redis()
    feed = tmp_path / "items.jl"
    parts = Path(str(feed) + ".parts")
    with open(tmp_path / "w.log", "wb") as log:
        proc = subprocess.Popen(crawl_cmd(site, server.url, feed, workers=workers), cwd=ROOT,
                                env=env(), stdout=subprocess.DEVNULL, stderr=log)
        wait_for(lambda: lines(feed) + sum(lines(p) for p in parts.glob("*.jl")) >= 20,
                 "the crawl's progress", poll_s=0.01, alive=proc)
        server.kill()
        log_path = tmp_path / "w.log"
        wait_for(lambda: log_path.read_text(errors="replace").count("unreachable")
                 >= (workers or 1), "the crawl to notice that redis is gone", alive=proc)
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        try:
            code = proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("one SIGINT did not stop the crawl in 60 s")
        took = time.monotonic() - sent
    text = (tmp_path / "w.log").read_text(errors="replace")
    assert took < 15, (took, text[-3000:])
    assert text.count("'finish_reason': 'shutdown'") == (workers or 1), text[-3000:]
    assert "did not stop within" not in text and "Traceback" not in text
    if workers:
        assert code == 1 and "starting it again" not in text, text[-3000:]
        assert parts.exists() and not feed.exists()
    else:
        assert code == 0, text[-3000:]


@pytest.mark.parametrize("point", ["supervisor.frontier_opened", "scheduler.open"])
def test_redis_gone_while_a_worker_starts_is_one_line_and_exit_1(site, make_redis, tmp_path,
                                                                 point):
    """Redis dies at the worst moments of a worker's start: the worker has claimed the
    crawl and is about to commit its feeds' starting points (``supervisor.frontier_opened``),
    or its Scheduler actor is about to open the frontier (``scheduler.open``). The crawl
    ends in one ERROR line naming Redis, exit status 1, no traceback: refused
    (``start_failed: shared frontier: ...``) before the spider opened, else
    ``frontier_failed``. Before: "Could not start crawl" with a traceback of two
    chained FrontierErrors (the frontier's close failing too), then the same again from
    the command; or the Scheduler actor's death with pykka's traceback."""
    from tests.support.proc import is_stopped

    server = make_redis()
    feed = tmp_path / "items.jl"
    cmd = crawl_cmd(site, server.url, feed, "-s", "FRONTIER_RETRY_TIMEOUT=1")
    with open(tmp_path / "w.log", "wb") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log,
                                env={**env(), "CRAWLFW_FAULTS": f"{point}:1:stop"})
        try:
            wait_for(lambda: is_stopped(proc.pid), "the worker at its fault point", alive=proc)
            server.kill()
            proc.send_signal(signal.SIGCONT)
            code = proc.wait(60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    text = (tmp_path / "w.log").read_text(errors="replace")
    assert code == 1, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
    assert len(errors(text)) == 1, text[-3000:]
    if point == "supervisor.frontier_opened":
        assert "Crawl could not start: shared frontier: Redis at " in errors(text)[0], \
            text[-3000:]
        assert not feed.exists()  # the feed it had opened is discarded
    else:
        assert "Frontier failed: FrontierError: Redis at " in errors(text)[0], text[-3000:]
        assert "'finish_reason': 'frontier_failed'" in text, text[-3000:]
    assert "unreachable" in errors(text)[0], text[-3000:]


# --- the --workers parent restarts only crashes -----------------------------------------

def _flushall(server):
    import redis

    redis.Redis.from_url(server.url).flushall()


def _set_password(server):
    import redis

    client = redis.Redis.from_url(server.url)
    client.config_set("requirepass", "s3cret")
    client.client_kill_filter(_type="normal", skipme=True)  # they reconnect: NOAUTH


@pytest.mark.parametrize("fault", ["flushall", "restart without persistence",
                                   "password set"])
def test_workers_that_stop_on_purpose_are_not_restarted(site, make_redis, tmp_path, fault):
    """``--workers 2``; mid-crawl the Redis loses the crawl (FLUSHALL, a restart without
    persistence) or starts asking for a password: the workers stop (``frontier_failed``)
    and are not started again, so no new crawl is made over the lost one (before: 458 to
    1,959 duplicates, exit 0); the parent exits 1 naming the reason, parts kept, every
    page in them at most once. The same command again refuses to crawl from the start;
    with the parts removed (starting over on purpose) it crawls every page once."""
    server = make_redis(appendonly=fault != "restart without persistence")
    feed = tmp_path / "items.jl"
    parts = Path(str(feed) + ".parts")
    cmd = crawl_cmd(site, server.url, feed, workers=2)
    with open(tmp_path / "parent.log", "wb") as log:
        parent = subprocess.Popen(cmd, cwd=ROOT, env=env(), stdout=subprocess.DEVNULL,
                                  stderr=log)
        wait_for(lambda: sum(lines(p) for p in parts.glob("*.jl")) >= site.pages // 5,
                 "the crawl's progress", poll_s=0.005, alive=parent)
        if fault == "flushall":
            _flushall(server)
        elif fault == "password set":
            _set_password(server)
        else:
            server.restart()
        try:
            code = parent.wait(90)
        except subprocess.TimeoutExpired:
            parent.kill()
            pytest.fail("the workers did not stop within 90 s")
    text = (tmp_path / "parent.log").read_text(errors="replace")
    assert code == 1, text[-3000:]
    assert "starting it again" not in text, text[-3000:]
    # (a worker still starting when the fault came is refused: start_failed)
    assert ("stopped: frontier_failed (exit status 1); not restarted" in text
            or "stopped: start_failed: shared frontier: " in text), text[-3000:]
    if fault == "password set":
        assert "refused the connection: Authentication required" in text
    else:
        assert "the crawl's keys are gone from Redis" in text, text[-3000:]
    assert "Traceback" not in text
    got = [n for p in parts.glob("*.jl") for n in pages_of(p)]
    assert len(got) == len(set(got)), f"{len(got) - len(set(got))} pages twice"
    assert not feed.exists()
    if fault == "password set":
        return
    # Again: the parts show a history the empty Redis lacks: refused, nothing touched.
    before = {p.name: p.read_bytes() for p in parts.glob("*.jl")}
    proc, took = run(cmd, timeout_s=120)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert took < 60
    assert "holds no crawl under key {crawlfw:links}, but this worker only joins one" \
           in proc.stderr, proc.stderr[-3000:]
    assert "starting it again" not in proc.stderr and "Traceback" not in proc.stderr
    assert {p.name: p.read_bytes() for p in parts.glob("*.jl")} == before
    # Starting over on purpose: remove the parts.
    import shutil

    shutil.rmtree(parts)
    proc, _ = run(cmd, timeout_s=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sorted(pages_of(feed)) == list(range(site.pages))


# --- a Redis that evicts the crawl's keys -------------------------------------------------

def test_keys_evicted_mid_crawl_fail_the_crawl_clearly(site, make_redis, tmp_path):
    """The Redis is switched to ``allkeys-lru`` with no room left mid-crawl (the
    start-time check passed): it evicts the crawl's keys; the worker fails at its next
    call (``frontier_failed``, exit 1) with a line saying the keys vanished, no Lua type
    error; started again, the evicting Redis is refused at start."""
    import redis

    server = make_redis(appendonly=False)
    feed = tmp_path / "items.jl"
    cmd = crawl_cmd(site, server.url, feed)
    client = redis.Redis.from_url(server.url)
    with open(tmp_path / "w.log", "wb") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env(), stdout=subprocess.DEVNULL,
                                stderr=log)
        wait_for(lambda: lines(feed) >= site.pages // 5,
                 "the crawl's progress", poll_s=0.005, alive=proc)
        client.config_set("maxmemory-policy", "allkeys-lru")
        client.config_set("maxmemory", str(int(client.info("memory")["used_memory"] * 0.9)))
        code = proc.wait(60)
    text = (tmp_path / "w.log").read_text(errors="replace")
    assert client.info("stats")["evicted_keys"] > 0
    assert code == 1, text[-3000:]
    assert "'finish_reason': 'frontier_failed'" in text
    assert "the crawl's keys are gone from Redis at" in text, text[-3000:]
    assert "Lua redis lib" not in text and "Traceback" not in text
    proc, took = run(cmd)
    assert proc.returncode == 1 and took < 60, proc.stderr[-3000:]
    [line] = errors(proc.stderr)
    assert "has maxmemory-policy allkeys-lru" in line


def test_a_crawl_partly_lost_is_refused_not_restarted(site, make_redis, tmp_path):
    """A worker killed mid-crawl; then its crawl loses some keys (as an LRU eviction
    drops them: the crawl's mark and the queue order of its leases). Started again, the
    worker refuses to start over the remains, in one line (before: every start failed on
    ``Lua redis lib command arguments must be strings or integers``)."""
    import redis

    server = make_redis()
    feed = tmp_path / "items.jl"
    cmd = crawl_cmd(site, server.url, feed, "-s", "FRONTIER_WORKER=w0")
    client = redis.Redis.from_url(server.url)
    with open(tmp_path / "w.log", "wb") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env(), stdout=subprocess.DEVNULL,
                                stderr=log)
        wait_for(lambda: lines(feed) >= site.pages // 5 and client.hlen(f"{KEY}:owners"),
                 "the crawl's progress", poll_s=0.005, alive=proc)
        proc.kill()
        proc.wait(10)
    client.delete(f"{KEY}:meta", f"{KEY}:scores")
    before = feed.read_bytes()
    proc, took = run(cmd)
    assert proc.returncode == 1 and took < 60, proc.stderr[-3000:]
    [line] = errors(proc.stderr)
    assert (f"Crawl could not start: shared frontier: the crawl {KEY} in Redis at "
            f"{server.url} is incomplete: its created mark is gone") in line
    assert "to start over on purpose, delete the crawl's keys" in line
    assert "Lua redis lib" not in proc.stderr and "Traceback" not in proc.stderr
    assert feed.read_bytes() == before


@pytest.mark.parametrize("workers", [None, 2])
def test_interrupt_stops_a_crawl_waiting_for_its_redis_at_start(site, tmp_path, workers):
    """No Redis at the URL yet (connection refused: waited for, up to the default 300 s):
    one SIGINT ends the wait within seconds, in one line, exit 1 (with ``--workers``,
    the parent waits, before starting any worker)."""
    from tests.support.redisserver import free_port

    url = f"redis://127.0.0.1:{free_port()}/0"
    with open(tmp_path / "w.log", "wb") as log:
        proc = subprocess.Popen(crawl_cmd(site, url, tmp_path / "items.jl", workers=workers),
                                cwd=ROOT,
                                env=env(), stdout=subprocess.DEVNULL, stderr=log)
        log_path = tmp_path / "w.log"
        wait_for(lambda: "unreachable" in log_path.read_text(errors="replace"),
                 "the crawl to find redis unreachable", alive=proc)
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        code = proc.wait(60)
        took = time.monotonic() - sent
    text = (tmp_path / "w.log").read_text(errors="replace")
    assert code == 1 and took < 15, (took, text[-3000:])
    [line] = errors(text)
    assert f"Crawl could not start: shared frontier: Redis at {url} unreachable while " \
           "the crawl stops" in line
    assert "Traceback" not in text


def test_a_permanent_fault_met_by_a_download_slot_fails_the_crawl(site, make_redis, tmp_path):
    """An ACL user allowed the crawl's frontier keys but not its download slots' keys
    (``{crawlfw:links|slot|...}``): the slot's ``NOPERM`` is not retried; the crawl ends
    with ``frontier_failed`` in one line, exit 1 (the scheduler, whose own calls pass,
    fails the crawl with the slot's fault). The slots take permits only for requests the
    frontier did not pace (issue 18): here robots.txt's (``ROBOTSTXT_OBEY``)."""
    import redis

    server = make_redis()
    redis.Redis.from_url(server.url).acl_setuser(
        "crawler", enabled=True, passwords=["+pw"], keys=["{crawlfw:links}*"],
        commands=["+@all"])
    url = server.url.replace("redis://", "redis://crawler:pw@")
    proc, took = run(crawl_cmd(site, url, tmp_path / "items.jl", "-s", "ROBOTSTXT_OBEY=True"))
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert took < 60
    assert "'finish_reason': 'frontier_failed'" in proc.stderr
    [line] = errors(proc.stderr)
    assert "Frontier failed: FrontierPermanentError: Redis at redis://crawler:***@" in line
    assert "refused a command: this user has no permissions" in line
    assert "Traceback" not in proc.stderr and ":pw@" not in proc.stderr
