"""Continuous crawling with a shared frontier (``FRONTIER_URL``): the revisit claims of
crawlfw/core/frontier/redis_revisit.py in real ``crawlfw runspider`` workers on a real
redis-server, against a server on 127.0.0.1. A page whose revisit waits in a backlog
past its interval is not claimed (and fetched) again by another worker; a worker killed
between its claims and its push leaves its pages to the others once the lease ends."""

import os
import threading
import time
from collections import defaultdict

import pytest

from tests.support.changing_site import INDEX_SPIDER
from tests.support.proc import start_crawlfw, wait_measured
from tests.support.servers import ReplyHandler, handler_server

pytestmark = pytest.mark.slow


KEYS = "{crawlfw:index}"  # the spider's name (INDEX_SPIDER)


def site_handler(pages, served, delay_s, answered=None):
    """``/`` links to ``/p0`` ... ``/p<pages-1>``; each page carries an ``ETag`` (a
    revisit is a conditional GET, answered 304) and takes ``delay_s``, one page at a
    time over all clients (a host slower than the revisits due). ``served`` gets
    ``(path, wall-clock time, revisit?)`` per request, ``answered`` (a dict of lists)
    the time each page's answer was sent, by path."""
    lock = threading.Lock()

    class Handler(ReplyHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            revisit = self.headers.get("If-None-Match") is not None
            served.append((self.path, time.time(), revisit))
            try:
                if self.path == "/":
                    self.reply(200, b" ".join(b'<a href="/p%d">p</a>' % i
                                              for i in range(pages)))
                    return
                with lock:
                    time.sleep(delay_s)
                    if answered is not None:
                        answered[self.path].append(time.time())
                body = b"" if revisit else b"<p>page</p>"
                self.send_response(304 if revisit else 200)
                self.send_header("ETag", '"v"')
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:  # the crawl stopped meanwhile
                pass

    return Handler


def worker(spider, site, redis_url, name, tmp_path, *settings, env=None):
    workdir = tmp_path / name
    workdir.mkdir()
    return start_crawlfw(
        "runspider", spider, "-a", f"site={site}", "-o", workdir / "items.jl",
        "-s", f"FRONTIER_URL={redis_url}", "-s", f"FRONTIER_WORKER={name}",
        "-s", "FRONTIER_CHECKPOINT_INTERVAL=0.2", "-s", "REVISIT_ENABLED=True",
        "-s", "REVISIT_INTERVAL=1", "-s", "REVISIT_INTERVAL_MIN=0.5",
        "-s", "REVISIT_ADAPTIVE=False", "-s", "LOG_LEVEL=INFO", *settings,
        cwd=workdir, env=env)


def test_two_workers_never_fetch_a_page_twice_for_one_due_time(redis_server, tmp_path):
    """20 pages due every second, a host that answers five pages a second: revisits
    wait in the shared frontier far past their interval. Each due time is claimed by
    one worker, and claimed again only after the visit's outcome: a page is asked for
    again an interval after its last answer at the earliest. Before, a worker's claim
    only moved the due time one interval on, so while the revisit waited the other
    worker (or the same one) claimed the page again: two revisits of it were queued,
    both compared with the same old state, and the duplicates took the host's time
    from other pages (fetched once in 11 s while others were fetched five times)."""
    served = []
    answered = defaultdict(list)
    spider = tmp_path / "shared.py"
    spider.write_text(INDEX_SPIDER)
    with handler_server(site_handler(20, served, 0.2, answered)) as server:
        procs = [worker(spider, server.url, redis_server.url, name, tmp_path,
                        "-s", "CONCURRENT_REQUESTS=2", "-s", "CLOSESPIDER_TIMEOUT=12")
                 for name in ("w1", "w2")]
        done = [wait_measured(*p, timeout_s=60) for p in procs]
    for d in done:
        assert d.returncode == 0, d.stderr[-3000:]
    # (a worker stopping at its CLOSESPIDER_TIMEOUT gives its leased requests back to
    # the shared frontier, and the other may fetch one again: the same claim's revisit,
    # redone; only the fetches before the first worker stops count)
    t0 = served[0][1]
    times = defaultdict(list)
    for path, t, _ in served:
        if t < t0 + 11.0:
            times[path].append(t)
    pages = [f"/p{i}" for i in range(20)]
    # from one answer of a page to the next request for it: its interval at least
    gaps = {p: min(asked - sent for sent, asked in zip(answered[p], times[p][1:],
                                                       strict=False))
            for p in pages if len(times[p]) >= 2}
    worst = min(gaps, key=gaps.get)
    assert gaps[worst] >= 0.9, (worst, gaps[worst], [
        (round(t - t0, 2), revisit) for p, t, revisit in served if p == worst],
        [round(t - t0, 2) for t in answered[worst]])
    # and no page left behind (the duplicates took the host's time before)
    assert all(len(times[p]) >= 2 for p in pages), {p: len(times[p]) for p in pages}
    # a backlog it was: a page came round every few seconds, not every second
    spans = sorted((ts[-1] - ts[0]) / (len(ts) - 1) for ts in (times[p] for p in pages))
    assert spans[len(spans) // 2] > 2.0, spans


def test_a_worker_killed_holding_claims_leaves_its_pages_to_the_other(redis_server,
                                                                      tmp_path):
    """Worker one crawls the site, claims the first due pages and is killed before it
    pushes their revisits (``CRAWLFW_FAULTS=revisit.claimed:1``: the process ends at
    once, as ``kill -9``). Its claims stay out for ``FRONTIER_LEASE_TIMEOUT`` (3 s):
    worker two does not revisit those pages before then, and revisits them after."""
    import redis

    from crawlfw.http import Request
    from crawlfw.utils.request import request_fingerprint

    served = []
    spider = tmp_path / "shared.py"
    spider.write_text(INDEX_SPIDER)
    common = ("-s", "FRONTIER_LEASE_TIMEOUT=3")
    with handler_server(site_handler(6, served, 0.0)) as server:
        one = worker(spider, server.url, redis_server.url, "w1", tmp_path, *common,
                     env={"CRAWLFW_FAULTS": "revisit.claimed:1"})
        killed = wait_measured(*one, timeout_s=60)
        assert killed.returncode == 75, killed.stderr[-3000:]  # ended at the fault
        client = redis.Redis.from_url(redis_server.url)
        out = {k.decode(): float(v.split()[1]) for k, v in
               client.hgetall(f"{KEYS}:revisit:out").items()}
        assert out, "no claim left"
        two = worker(spider, server.url, redis_server.url, "w2", tmp_path, *common,
                     "-s", "CLOSESPIDER_TIMEOUT=8")
        done = wait_measured(*two, timeout_s=60)
    assert done.returncode == 0, done.stderr[-3000:]
    by_fp = {request_fingerprint(Request(f"{server.url}/p{i}")): f"/p{i}" for i in range(6)}
    claimed = {by_fp[k]: expiry for k, expiry in out.items()}
    for path, expiry in claimed.items():
        revisits = [t for p, t, revisit in served if p == path and revisit]
        assert revisits, path
        assert expiry - 0.2 <= revisits[0] <= expiry + 2.5, (path, revisits[0] - expiry)
    # every page is revisited by worker two, again and again
    late = [p for p, t, revisit in served if revisit and t > max(out.values()) + 1]
    assert {f"/p{i}" for i in range(6)} <= set(late), sorted(set(late))
    assert os.path.exists(tmp_path / "w2" / "items.jl")
