"""Continuous crawling through the CLI (issue 32): real ``crawlfw runspider`` subprocesses
with ``REVISIT_ENABLED`` on tests/support/changing_site.py (a site whose version grows
every second: pages that change at every version, pages that never do, with and without
validators, a page that appears, one that goes away, one that redirects).

Each crawl runs until ``CLOSESPIDER_TIMEOUT``; what the site's request log and the feed
say is checked against the issue's "Done when": changed versions become items,
unchanged pages never reach the callback, pages with validators are answered 304,
often-changing pages are fetched several times more often than static ones, a new page
is found within one interval of the page linking to it, a gone page stops being
fetched, a redirect moves the schedule; the crawl waits between revisits without CPU;
and with ``JOBDIR`` a ``kill -9`` keeps the schedule (no burst on resume)."""

import json
import os
import re
import signal
import sqlite3
import time
from collections import Counter, defaultdict

import pytest

from tests.support.dashboard import start_dashboard
from tests.support.proc import run_measured, start_crawlfw, wait_measured
from tests.support.servers import ReplyHandler, handler_server

pytestmark = pytest.mark.slow

SPIDER = '''
import re

import crawlfw
from crawlfw import signals

STAMP_RE = re.compile(rb'<p class="stamp">[^<]*</p>\\n?')
VERSION_RE = re.compile(r'<p id="version">version (\\d+)</p>')


class ChangingSpider(crawlfw.Spider):
    name = "changing"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.seen = {"page_changed": 0, "page_unchanged": 0, "page_gone": 0}
        for name in spider.seen:
            crawler.signals.connect(spider.count(name), signal=getattr(signals, name))
        crawler.signals.connect(spider.report, signal=signals.spider_closed)
        return spider

    def count(self, name):
        def handler(response, request, spider):
            assert response.request is request or response.url == request.url
            self.seen[name] += 1
        self._handlers = getattr(self, "_handlers", []) + [handler]
        return handler

    def report(self, spider):
        self.logger.info("SIGNALS %s", " ".join(f"{k}={v}" for k, v in self.seen.items()))

    def start_requests(self):
        yield crawlfw.Request(self.site + "/", callback=self.parse)

    def revisit_content(self, response):
        return STAMP_RE.sub(b"", response.body)

    def parse(self, response):
        match = VERSION_RE.search(response.text)
        yield {"url": response.url, "version": int(match.group(1)) if match else None}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)
'''


def write_spider(tmp_path):
    path = tmp_path / "changing.py"
    path.write_text(SPIDER)
    return path


def items_of(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def stat_of(stderr, name):
    """A stat's value in the crawl's dumped stats (None when absent)."""
    for line in stderr.splitlines():
        line = line.strip()
        if line.startswith(f"'{name}':"):
            return eval(line.split(":", 1)[1].strip().rstrip(",").rstrip("}"))  # noqa: S307
    return None


def path_of(url):
    return "/" + url.split("/", 3)[3]


#: The site and the settings of the continuous-crawl tests (one worker, two workers).
SITE = {"often": 3, "static": 8, "step_s": 1.0, "appear_at": 3, "gone_at": 3,
        "gone_status": 404, "redirect_at": 4}
CONTINUOUS = ("-s", "REVISIT_ENABLED=True", "-s", "REVISIT_INTERVAL=1",
              "-s", "REVISIT_INTERVAL_MIN=0.5", "-s", "REVISIT_INTERVAL_MAX=8",
              "-s", "REVISIT_GONE_LIMIT=2", "-s", "CLOSESPIDER_TIMEOUT=12",
              "-s", "LOG_LEVEL=INFO")


def test_a_continuous_crawl_on_a_changing_site(changing_site, tmp_path):
    site = changing_site(**SITE)
    spider = write_spider(tmp_path)
    feed = tmp_path / "items.jl"
    done = run_measured("runspider", spider, "-a", f"site={site.url}", "-O", feed,
                        *CONTINUOUS, cwd=tmp_path, timeout_s=60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "'finish_reason': 'closespider_timeout'" in done.stderr
    assert "Waiting for revisits" in done.stderr
    check_continuous_crawl(site, items_of(feed))

    # Stats and signals agree with what happened.
    log = site.log
    changed = stat_of(done.stderr, "revisit/changed")
    unchanged = stat_of(done.stderr, "revisit/unchanged")
    not_modified = stat_of(done.stderr, "revisit/not_modified")
    assert not_modified == log.not_modified()
    assert unchanged >= not_modified > 0 and changed > 0
    assert stat_of(done.stderr, "revisit/gone") == 2
    assert stat_of(done.stderr, "revisit/scheduled") == 3 + 8 + 3  # index, new, moved-new
    assert (f"SIGNALS page_changed={changed} page_unchanged={unchanged} page_gone=2"
            in done.stderr)


def check_continuous_crawl(site, items):
    """What a continuous crawl of a ``SITE`` site with ``CONTINUOUS`` settings must have
    done, by the site's request log and the items of every worker."""
    log = site.log
    hits = log.snapshot()

    # Unchanged pages never reach the callback: each (page, content version) is one item.
    pairs = Counter((path_of(i["url"]), i["version"]) for i in items)
    assert max(pairs.values()) == 1, [p for p, n in pairs.items() if n > 1]
    # Changed versions become items: the often-changing pages, version after version.
    for i in range(3):
        versions = sorted(v for (p, v) in pairs if p == f"/often/{i}.html")
        assert len(versions) >= 5, versions
    # Static pages: one item each, however often revisited.
    for i in range(8):
        assert pairs[(f"/static/{i}.html", 0)] == 1
        assert log.requests(f"/static/{i}.html") >= 3

    # Pages with validators (the cycle: both, none, etag, last-modified) are answered 304
    # on every revisit, asked with If-None-Match / If-Modified-Since.
    for i in (0, 2, 3, 4, 6, 7):
        statuses = log.statuses(f"/static/{i}.html")
        assert statuses[0] == 200 and set(statuses[1:]) == {304}, (i, statuses)
    etag_revisits = [h for h in log.snapshot("/static/2.html")][1:]
    assert all(h.header("If-None-Match") for h in etag_revisits)
    lm_revisits = [h for h in log.snapshot("/static/3.html")][1:]
    assert all(h.header("If-Modified-Since") for h in lm_revisits)
    # Without validators: fetched in full (200), the digest of the normalised body says
    # unchanged (the stamp line differs on every answer).
    assert set(log.statuses("/static/1.html")) == {200}

    # After a few rounds, often-changing pages are fetched several times more often.
    t_end = max(h.time for h in hits)
    late = defaultdict(int)
    for h in hits:
        if h.time >= t_end - 6:
            late[h.path] += 1
    often_late = min(late[f"/often/{i}.html"] for i in range(3))
    static_late = max(late[f"/static/{i}.html"] for i in range(8))
    assert often_late >= 3 * max(static_late, 1), (dict(late))

    # A new page is found within one interval of the page that links to it (the index
    # changes when /new.html appears; the index's interval is at most its gap between
    # two visits then).
    appeared = site._t0 + 3 * site.step_s
    index_times = [h.time for h in log.snapshot("/")]
    new_first = min(h.time for h in log.snapshot("/new.html"))
    before = [t for t in index_times if t <= appeared]
    after = [t for t in index_times if t > appeared]
    index_interval = max(b - a for a, b in zip(index_times, index_times[1:], strict=False))
    assert before and after
    assert new_first - appeared <= index_interval + 1.0, (new_first - appeared,
                                                          index_interval)
    assert ("/new.html", 3) in pairs or any(p == "/new.html" for p, _ in pairs)

    # A gone page stops being fetched after REVISIT_GONE_LIMIT (2) answers 404.
    assert log.statuses("/gone.html")[-2:] == [404, 404]
    assert log.statuses("/gone.html").count(404) == 2
    # A redirect moves the schedule: the old URL is asked once more, the new one revisited.
    moved = log.statuses("/moved.html")
    assert moved.count(301) == 1 and moved[-1] == 301, moved
    assert log.requests("/moved-new.html") >= 2


def test_off_by_default_the_crawl_ends_and_fetches_each_page_once(changing_site, tmp_path):
    site = changing_site(often=2, static=2, step_s=1.0)
    feed = tmp_path / "items.jl"
    done = run_measured("runspider", write_spider(tmp_path), "-a", f"site={site.url}",
                        "-O", feed, cwd=tmp_path, timeout_s=60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "'finish_reason': 'finished'" in done.stderr
    assert set(log_counts := site.log.counts().values()) == {1}, log_counts
    assert not any(h.header("If-None-Match") or h.header("If-Modified-Since")
                   for h in site.log.snapshot())
    assert stat_of(done.stderr, "revisit/new") is None


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_between_revisits_the_crawl_waits_without_cpu_and_status_shows_it(
        changing_site, runtime, tmp_path):
    site = changing_site(often=2, static=4)
    process, out, err = start_crawlfw(
        "runspider", write_spider(tmp_path), "-a", f"site={site.url}",
        "-s", "REVISIT_ENABLED=True", "-s", "REVISIT_INTERVAL=60",
        "-s", "CLOSESPIDER_TIMEOUT=40", cwd=tmp_path, env=runtime.env())
    try:
        deadline = time.monotonic() + 20
        while site.log.requests() < 1 + 2 + 4 + 2 and time.monotonic() < deadline:
            time.sleep(0.1)  # index, often, static, gone.html, moved.html: the first round
        time.sleep(1.0)
        cpu_before = cpu_seconds(process.pid)
        time.sleep(3.0)
        cpu_used = cpu_seconds(process.pid) - cpu_before
        status = runtime.cli_json("status")
        human = runtime.cli("status").stdout
        # the dashboard's samples carry the schedule's figures (issue 33)
        board, dashboard = start_dashboard(runtime)
        try:
            crawl_id = dashboard.get_json("/api/crawls")[0]["id"]
            sample = dashboard.get_json(f"/api/crawls/{crawl_id}/history")["samples"][-1]
        finally:
            board.kill()
            board.wait(10)
        stopped = runtime.cli("stop")  # a waiting continuous crawl stops when told
    finally:
        done = wait_measured(process, out, err, timeout_s=40)
    assert done.returncode == 0, done.stderr[-3000:]
    assert stopped.returncode == 0, stopped.stderr
    assert "'finish_reason': 'shutdown'" in done.stderr
    assert cpu_used < 0.15, cpu_used  # 3 s of waiting: no polling loop
    assert site.log.requests() == 1 + 2 + 4 + 2  # nothing due within the minute
    # crawlfw status: pages scheduled, due now, next due, changed and unchanged counts
    stats = status["stats"]
    assert stats["revisit/scheduled"] == 1 + 2 + 4 + 2
    assert stats["revisit/due_now"] == 0
    assert 50 < stats["revisit/next_due"] - time.time() < 60
    assert re.search(r"revisits    9 pages scheduled, 0 due now, next due in (4|5)\ds; "
                     r"0 changed, 0 unchanged \(0 answered 304\), 0 gone", human), human
    revisit = sample["revisit"]
    assert revisit == {"due_now": 0, "next_due": pytest.approx(stats["revisit/next_due"]),
                       "scheduled": 9, "changed": 0, "unchanged": 0, "gone": 0}, sample


def _all_due_ahead(job, pages):
    """True when the job's committed schedule has ``pages`` records none of which is due."""
    try:
        conn = sqlite3.connect(f"file:{job / 'frontier.sqlite'}?mode=ro", uri=True, timeout=1)
        try:
            dues = [due for (due,) in conn.execute("SELECT due FROM revisits")]
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    return len(dues) == pages and min(dues) > time.time()


def test_kill_9_and_resume_keeps_the_schedule(changing_site, tmp_path):
    """With JOBDIR the schedule, validators and digests survive ``kill -9``: the resumed
    crawl fetches nothing before the pages are due (no burst), then revisits them with
    the stored validators (304s) and emits no item twice."""
    site = changing_site(often=2, static=4, step_s=1.0, appear_at=1000, gone_at=1000,
                         redirect_at=1000)
    spider = write_spider(tmp_path)
    feed = tmp_path / "items.jl"
    job = tmp_path / "job"
    args = ("runspider", spider, "-a", f"site={site.url}", "-o", feed, "-s", f"JOBDIR={job}",
            "-s", "REVISIT_ENABLED=True", "-s", "REVISIT_INTERVAL=4",
            "-s", "REVISIT_ADAPTIVE=False", "-s", "LOG_LEVEL=INFO")
    pages = 1 + 2 + 4 + 2  # index, often, static, gone.html, moved.html
    process, out, err = start_crawlfw(*args, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 30
        while site.log.requests() < 2 * pages and time.monotonic() < deadline:
            time.sleep(0.05)  # the first round and the revisits 4 s later
        # their visits committed: every page's due time is ahead again (a checkpoint
        # comes within 1 s, later on a loaded machine; a fixed wait left leases unacked)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not _all_due_ahead(job, pages):
            time.sleep(0.1)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        first = wait_measured(process, out, err, timeout_s=30)
    assert first.returncode == -signal.SIGKILL
    assert site.log.requests() == 2 * pages, site.log.counts()
    conn = sqlite3.connect(job / "frontier.sqlite")
    rows = conn.execute("SELECT due, etag, last_modified, digest FROM revisits").fetchall()
    conn.close()
    assert len(rows) == pages
    assert sum(1 for r in rows if r[1]) >= 3 and all(r[3] for r in rows)
    first_due = min(r[0] for r in rows)
    killed_hits = len(site.log.snapshot())
    items_before = items_of(feed)

    restarted = time.time()
    assert first_due > restarted + 0.5, (first_due, restarted)  # nothing due yet
    second = run_measured(*args, "-s", "CLOSESPIDER_TIMEOUT=6", cwd=tmp_path, timeout_s=60)
    assert second.returncode == 0, second.stderr[-3000:]
    resumed_hits = site.log.snapshot()[killed_hits:]
    # No burst: nothing is fetched before the first page is due, but a request whose
    # lease was not acked by a checkpoint when the crawl was killed (a page of the last
    # round answered while the kill came): it is fetched again at once, as any unacked
    # lease of a JOBDIR job is (at-least-once downloads, exactly-once items).
    offset = time.time() - time.monotonic()  # wall clock of the site's monotonic times
    assert resumed_hits, "the schedule was not continued"
    early = [h.path for h in resumed_hits if h.time + offset < first_due - 0.3]
    assert len(early) <= 1 and len(set(early)) == len(early), [
        (h.path, round(h.time + offset - first_due, 2)) for h in resumed_hits[:12]]
    assert len(resumed_hits) <= 2 * pages  # one round in 6 s at an interval of 4 s
    assert {h.path for h in resumed_hits} == {h.path for h in site.log.snapshot()[:pages]}
    # The validators survived: static pages with validators are answered 304.
    for i in (0, 2, 3):
        assert [h.status for h in resumed_hits if h.path == f"/static/{i}.html"] == [304]
    # No item twice (the digests survived: the static page without validators, fetched
    # in full, is unchanged), and the changed pages became items.
    items = items_of(feed)
    pairs = Counter((path_of(i["url"]), i["version"]) for i in items)
    assert max(pairs.values()) == 1, pairs
    assert len(items) > len(items_before)


def test_two_redis_workers_share_one_schedule(changing_site, redis_server, tmp_path):
    """FRONTIER_URL: the schedule is in Redis, shared by the workers; each due page is
    claimed by one of them (no item twice across their feeds), and the whole crawl
    behaves as one worker's would."""
    import redis

    site = changing_site(**SITE)
    spider = write_spider(tmp_path)
    workers = []
    for name in ("w1", "w2"):
        workdir = tmp_path / name
        workdir.mkdir()
        workers.append((workdir, start_crawlfw(
            "runspider", spider, "-a", f"site={site.url}", "-o", workdir / "items.jl",
            "-s", f"FRONTIER_URL={redis_server.url}", "-s", f"FRONTIER_WORKER={name}",
            "-s", "FRONTIER_CHECKPOINT_INTERVAL=0.2", *CONTINUOUS, cwd=workdir)))
    done = [wait_measured(*w, timeout_s=60) for _, w in workers]
    for d in done:
        assert d.returncode == 0, d.stderr[-3000:]
        assert "'finish_reason': 'closespider_timeout'" in d.stderr
    items = [i for workdir, _ in workers for i in items_of(workdir / "items.jl")]
    check_continuous_crawl(site, items)
    # Both workers made revisits: the schedule is the crawl's, not one worker's.
    assert all(stat_of(d.stderr, "revisit/requests") for d in done), [
        stat_of(d.stderr, "revisit/requests") for d in done]
    assert sum(stat_of(d.stderr, "revisit/not_modified") or 0 for d in done) == \
        site.log.not_modified()
    client = redis.Redis.from_url(redis_server.url)
    assert client.zcard("{crawlfw:changing}:revisit:due") == 3 + 8 + 3
    assert client.hlen("{crawlfw:changing}:revisit:rec") == 3 + 8 + 3


def test_a_redis_worker_killed_leaves_its_schedule_to_the_other(changing_site, redis_server,
                                                                tmp_path):
    """The schedule is the crawl's: a worker killed with SIGKILL takes none of it away
    (its leased revisits expire back to the queue, the pages it took are due again an
    interval later), and the other worker keeps revisiting every page."""
    site = changing_site(often=2, static=4, step_s=1.0, appear_at=1000, gone_at=1000,
                         redirect_at=1000)
    spider = write_spider(tmp_path)
    settings = ("-s", f"FRONTIER_URL={redis_server.url}", "-s", "FRONTIER_LEASE_TIMEOUT=2",
                "-s", "FRONTIER_CHECKPOINT_INTERVAL=0.2", "-s", "REVISIT_ENABLED=True",
                "-s", "REVISIT_INTERVAL=1", "-s", "REVISIT_ADAPTIVE=False",
                "-s", "LOG_LEVEL=INFO")
    procs = {}
    for name, extra in (("w1", ()), ("w2", ("-s", "CLOSESPIDER_TIMEOUT=14"))):
        workdir = tmp_path / name
        workdir.mkdir()
        procs[name] = start_crawlfw("runspider", spider, "-a", f"site={site.url}",
                                    "-o", workdir / "items.jl", "-s",
                                    f"FRONTIER_WORKER={name}", *settings, *extra,
                                    cwd=workdir)
    pages = 1 + 2 + 4 + 2
    try:
        deadline = time.monotonic() + 30
        while site.log.requests() < 3 * pages and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        os.kill(procs["w1"][0].pid, signal.SIGKILL)
        killed = wait_measured(*procs["w1"], timeout_s=30)
    killed_at = time.monotonic()
    assert killed.returncode == -signal.SIGKILL
    done = wait_measured(*procs["w2"], timeout_s=60)
    assert done.returncode == 0, done.stderr[-3000:]
    # Every page kept being revisited after the kill (interval 1 s, leases expire in 2 s).
    late = [h for h in site.log.snapshot() if h.time >= killed_at + 4]
    assert {h.path for h in late} == {h.path for h in site.log.snapshot()}, sorted(
        {h.path for h in late})
    assert min(Counter(h.path for h in late).values()) >= 3
    import redis

    client = redis.Redis.from_url(redis_server.url)
    assert client.zcard("{crawlfw:changing}:revisit:due") == pages


FAILING_SPIDER = '''
import crawlfw
from crawlfw.exceptions import CloseSpider


class FailingSpider(crawlfw.Spider):
    name = "failing"
    errors = 0

    def start_requests(self):
        yield crawlfw.Request(self.site + "/", meta={"revisit": False})

    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.page, errback=self.failed)

    def page(self, response):
        yield {"url": response.url}

    def failed(self, failure):
        self.errors += 1
        if self.errors >= 4:  # two rounds of revisits of both pages, each a 503
            raise CloseSpider("enough")
'''


def test_a_failed_revisit_is_no_longer_due_now(tmp_path):
    """A revisit answered 503 (or a download error, a request a middleware dropped)
    says nothing of the page: the record keeps its due time, and the revisit is counted
    in ``revisit/failed`` and no longer as pending in ``revisit/due_now`` (before, it
    stayed there until the page's next successful visit)."""
    served = Counter()

    class Handler(ReplyHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            served[self.path] += 1
            if self.path == "/":
                self.reply(200, b'<a href="/a">a</a> <a href="/b">b</a>')
            else:  # the first visit answered, the revisits fail
                self.reply(200 if served[self.path] == 1 else 503, b"<p>page</p>")

    spider = tmp_path / "failing.py"
    spider.write_text(FAILING_SPIDER)
    with handler_server(Handler) as server:
        done = run_measured("runspider", spider, "-a", f"site={server.url}",
                            "-s", "REVISIT_ENABLED=True", "-s", "REVISIT_INTERVAL=1",
                            "-s", "REVISIT_INTERVAL_MIN=0.5", "-s", "RETRY_ENABLED=False",
                            "-s", "CLOSESPIDER_TIMEOUT=30", "-s", "LOG_LEVEL=INFO",
                            cwd=tmp_path, timeout_s=60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "'finish_reason': 'enough'" in done.stderr
    assert served["/a"] >= 3 and served["/b"] >= 3
    assert stat_of(done.stderr, "revisit/failed") >= 4
    assert stat_of(done.stderr, "revisit/scheduled") == 2  # kept: due again
    assert stat_of(done.stderr, "revisit/due_now") == 0


def test_a_page_still_queued_is_not_pushed_again(tmp_path):
    """A backlog longer than the interval (four slow pages served one at a time, first in
    first out, due every 0.5 s) does not queue a page twice: its revisit still waiting in the frontier, the
    schedule's next due time is skipped (``revisit/still_queued``) and the visit's
    outcome sets it again. Before, each wake pushed the page once more: the same page
    was fetched back to back and both answers compared with one old digest."""
    served = []

    class Handler(ReplyHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            served.append(self.path)
            if self.path == "/":
                self.reply(200, b"".join(b'<a href="/p%d">p</a> ' % i for i in range(4)))
            else:
                time.sleep(0.3)
                self.reply(200, b"<p>page</p>")

    spider = tmp_path / "slow.py"
    spider.write_text(FAILING_SPIDER)
    with handler_server(Handler) as server:
        done = run_measured("runspider", spider, "-a", f"site={server.url}",
                            "-s", "REVISIT_ENABLED=True", "-s", "REVISIT_INTERVAL=0.5",
                            "-s", "REVISIT_INTERVAL_MIN=0.5", "-s", "REVISIT_ADAPTIVE=False",
                            "-s", "CONCURRENT_REQUESTS=1", "-s", "CLOSESPIDER_TIMEOUT=6",
                            # first in, first out (Scrapy's breadth-first order): a page
                            # pushed again waits behind the others
                            "-s", "SCHEDULER_MEMORY_QUEUE=crawlfw.squeues.FifoMemoryQueue",
                            "-s", "LOG_LEVEL=INFO", cwd=tmp_path, timeout_s=60)
    assert done.returncode == 0, done.stderr[-3000:]
    pages = [path for path in served if path != "/"]
    assert len(pages) >= 10, served
    # one request per page at a time: never the same page twice in a row
    assert all(a != b for a, b in zip(pages, pages[1:], strict=False)), " ".join(pages)
    pushed = stat_of(done.stderr, "revisit/requests")
    revisited = len(pages) - len(set(pages))
    assert pushed <= revisited + 4, (pushed, " ".join(pages))  # fetched, or still queued
    assert stat_of(done.stderr, "revisit/still_queued") > 0
