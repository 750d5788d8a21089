"""Revisits and new pages in one queue (issue 32, session 12): a continuous crawl with
Scrapy's default order (LIFO, ``DEPTH_PRIORITY`` 0) whose revisits are backlogged (more
due per interval than the crawl can fetch) still fetches the new pages it found, and
revisits every page in turn. Real ``crawlfw runspider`` subprocesses against a server on
127.0.0.1."""

import time

import pytest

from tests.support.changing_site import INDEX_SPIDER
from tests.support.proc import run_measured
from tests.support.servers import ReplyHandler, handler_server

pytestmark = pytest.mark.slow


PAGES = 30


def backlog_handler(served, delay_s):
    """The index links to ``/new`` first, then ``/p0`` ... ``/p29``; each page takes
    ``delay_s`` to answer. Every request's path is appended to ``served``."""

    class Handler(ReplyHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            served.append((self.path, time.monotonic()))
            if self.path == "/":
                links = [b'<a href="/new">new</a>'] + [
                    b'<a href="/p%d">p</a>' % i for i in range(PAGES)]
                self.reply(200, b" ".join(links))
            else:
                time.sleep(delay_s)
                try:
                    self.reply(200, b"<p>page</p>")
                except OSError:  # the crawl stopped meanwhile
                    pass

    return Handler


def frontier_settings(frontier, tmp_path, request):
    if frontier == "jobdir":
        return ("-s", f"JOBDIR={tmp_path / 'job'}")
    if frontier == "redis":
        redis_server = request.getfixturevalue("redis_server")
        return ("-s", f"FRONTIER_URL={redis_server.url}")
    return ()


@pytest.mark.parametrize("frontier", ["memory", "jobdir", "redis"])
def test_new_pages_are_fetched_while_revisits_are_backlogged(tmp_path, frontier, request):
    """31 pages found at once, served one at a time in 0.1 s each, due again every
    0.5 s: ten times more revisits fall due than the crawl can fetch. Scrapy's default
    order is last in first out, so each wave of revisits went on top of the pages still
    queued: the five or so pages fetched first were revisited again and again and
    ``/new``, queued first, was never fetched. A revisit now waits behind the new
    requests of its priority and the revisits due before it (as Scrapy 2.13 queues
    start requests): every page is fetched once before any revisit (one or two may have
    been handed out ahead), then each is revisited in turn. The same with ``JOBDIR`` (the
    SQLite frontier) and ``FRONTIER_URL`` (the shared one, one worker)."""
    served = []
    spider = tmp_path / "backlog.py"
    spider.write_text(INDEX_SPIDER)
    with handler_server(backlog_handler(served, 0.1)) as server:
        done = run_measured("runspider", spider, "-a", f"site={server.url}",
                            "-s", "REVISIT_ENABLED=True", "-s", "REVISIT_INTERVAL=0.5",
                            "-s", "REVISIT_INTERVAL_MIN=0.5", "-s", "REVISIT_ADAPTIVE=False",
                            "-s", "CONCURRENT_REQUESTS=1", "-s", "CLOSESPIDER_TIMEOUT=10",
                            "-s", "LOG_LEVEL=INFO",
                            *frontier_settings(frontier, tmp_path, request),
                            cwd=tmp_path, timeout_s=60)
    assert done.returncode == 0, done.stderr[-3000:]
    paths = [path for path, _ in served]
    pages = {"/new"} | {f"/p{i}" for i in range(PAGES)}
    assert "/new" in paths, " ".join(paths)
    first_round = paths[1:1 + len(pages) + 2]
    assert pages <= set(first_round), " ".join(paths)
    # then every page is revisited in turn (oldest due first), none left behind
    rest = paths[1 + len(pages) + 2:]
    assert pages <= set(rest), sorted(pages - set(rest))
