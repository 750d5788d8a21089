"""The frontier objects on their own (no actors, no threads): queue order, the dupefilter,
leases, acks, releases, commits, recovery of a job whose process died, refusal of
requests that cannot be stored, and migration of the JOBDIR format of earlier versions."""

import os
import pickle
import subprocess
import sys
import textwrap

import pytest

import crawlfw
from crawlfw.core.frontier.frontier import (
    FrontierError,
    JobLocked,
    MemoryFrontier,
    read_job_meta,
)
from crawlfw.core.frontier.sqlite_frontier import SqliteFrontier
from crawlfw.core.transport.hostpolicy import HostPolicy
from crawlfw.dupefilters import BaseDupeFilter, RFPDupeFilter
from crawlfw.squeues import LifoMemoryQueue
from crawlfw.utils.test import get_crawler


class Spider(crawlfw.Spider):
    name = "frontier-test"

    def parse_item(self, response):
        pass


@pytest.fixture
def spider():
    return get_crawler(Spider)._create_spider()


def R(path, **kw):  # noqa: N802 - a request, briefly
    return crawlfw.Request(f"http://127.0.0.1/{path}", **kw)


def sqlite(tmp_path, spider, **kw):
    f = SqliteFrontier(str(tmp_path), RFPDupeFilter(), **kw)
    f.open(spider)
    return f


@pytest.fixture(params=["memory", "sqlite"])
def frontier(request, tmp_path, spider):
    if request.param == "memory":
        f = MemoryFrontier(RFPDupeFilter(), LifoMemoryQueue)
        f.open(spider)
    else:
        f = sqlite(tmp_path, spider)
    yield f


def urls(requests):
    return [r.url.rsplit("/", 1)[1] for r in requests]


def test_priority_then_lifo(frontier):
    for path, prio in [("a", 0), ("b", 0), ("c", 5), ("d", -1), ("e", 5)]:
        assert frontier.push(R(path, priority=prio))
    assert len(frontier) == 5
    assert urls(frontier.lease(10)) == ["e", "c", "b", "a", "d"]
    assert len(frontier) == 0


def test_dupefilter_and_dont_filter(frontier):
    assert frontier.push(R("a"))
    assert not frontier.push(R("a"))
    assert not frontier.push(R("a#fragment"))  # same fingerprint
    assert frontier.push(R("a", dont_filter=True))
    assert len(frontier) == 2


def test_fifo_order_with_sqlite(tmp_path, spider):
    f = sqlite(tmp_path, spider, lifo=False)
    for path in "abc":
        f.push(R(path))
    f.push(R("z", priority=1))
    assert urls(f.lease(10)) == ["z", "a", "b", "c"]


def test_leases_acks_and_releases(tmp_path, spider):
    f = sqlite(tmp_path, spider)
    for path in "abcd":
        f.push(R(path, callback=spider.parse_item))
    leased = f.lease(3)
    assert [r._lease for r in leased] == sorted({r._lease for r in leased}, reverse=True)
    assert all(r.callback == spider.parse_item for r in leased)
    assert len(f) == 1
    f.ack([leased[0]._lease])
    f.release(leased[1:])
    assert len(f) == 3
    f.commit({"note": 1})
    f.close("finished")

    again = sqlite(tmp_path, spider)
    assert again.meta["note"] == 1 and again.meta["resumed"]
    assert sorted(urls(again.lease(10))) == sorted(set("abcd") - {urls(leased[:1])[0]})


@pytest.mark.slow
def test_open_leases_of_a_dead_process_are_queued_again(tmp_path, spider):
    """A process that commits leased rows and dies: its leases were never durable."""
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(os.getcwd())!r})
        import crawlfw
        from crawlfw.core.frontier.sqlite_frontier import SqliteFrontier
        from crawlfw.dupefilters import RFPDupeFilter
        f = SqliteFrontier({str(tmp_path)!r}, RFPDupeFilter())
        f.open(None)
        for i in range(10):
            f.push(crawlfw.Request(f"http://127.0.0.1/{{i}}"))
        leased = f.lease(4)
        f.ack([leased[0]._lease])
        f.commit()
        os._exit(9)
    """)
    assert subprocess.run([sys.executable, "-c", script]).returncode == 9
    f = sqlite(tmp_path, spider)
    assert f.recovered == 3
    assert len(f) == 9
    assert not f.push(R("5"))  # the fingerprints were committed too


@pytest.mark.slow
def test_uncommitted_work_is_gone_after_a_crash(tmp_path, spider):
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(os.getcwd())!r})
        import crawlfw
        from crawlfw.core.frontier.sqlite_frontier import SqliteFrontier
        from crawlfw.dupefilters import RFPDupeFilter
        f = SqliteFrontier({str(tmp_path)!r}, RFPDupeFilter())
        f.open(None)
        f.push(crawlfw.Request("http://127.0.0.1/kept"))
        f.commit()
        f.push(crawlfw.Request("http://127.0.0.1/lost"))
        os._exit(9)
    """)
    assert subprocess.run([sys.executable, "-c", script]).returncode == 9
    f = sqlite(tmp_path, spider)
    assert urls(f.lease(10)) == ["kept"]
    assert f.push(R("lost"))  # its fingerprint went with it: it can be scheduled again


def test_request_that_cannot_be_stored_is_refused_naming_it(tmp_path, spider, caplog):
    f = SqliteFrontier(str(tmp_path), RFPDupeFilter(), stats=spider.crawler.stats)
    f.open(spider)
    assert not f.push(R("x", callback=lambda r: None))
    assert "Request <GET http://127.0.0.1/x> refused" in caplog.text
    assert "<lambda>" in caplog.text and "is not an instance method in" in caplog.text
    assert spider.crawler.stats.get_value("frontier/refused") == 1
    assert len(f) == 0
    # The crawl's own machinery may keep such requests in memory (not resumed).
    transient = R("y", callback=lambda r: None)
    assert f.push(transient, transient_ok=True)
    assert f.lease(5) == [transient] and transient._lease is None


def test_other_dupefilters_are_asked(tmp_path, spider):
    class EveryOther(BaseDupeFilter):
        n = 0

        def request_seen(self, request):
            self.n += 1
            return self.n % 2 == 0

    f = SqliteFrontier(str(tmp_path), EveryOther())
    f.open(spider)
    assert [f.push(R(p)) for p in "abcd"] == [True, False, True, False]


def test_read_job_meta_while_open(tmp_path, spider):
    assert read_job_meta(str(tmp_path)) == {"resumed": False}
    f = sqlite(tmp_path, spider)
    f.commit({"start_requests": 3})
    meta = read_job_meta(str(tmp_path))
    assert meta["start_requests"] == 3 and meta["resumed"]
    f.close("finished")


def test_not_a_frontier_file(tmp_path, spider):
    (tmp_path / "frontier.sqlite").write_bytes(b"garbage" * 1000)
    with pytest.raises(FrontierError, match="Cannot open the frontier .*frontier.sqlite"):
        SqliteFrontier(str(tmp_path), RFPDupeFilter())


def test_other_schema_version_is_refused(tmp_path, spider):
    f = sqlite(tmp_path, spider)
    f.commit({"schema_version": 99})
    f.close("finished")
    with pytest.raises(FrontierError, match="version 99"):
        SqliteFrontier(str(tmp_path), RFPDupeFilter())


def test_old_jobdir_format_is_migrated(tmp_path, spider, caplog):
    """A JOBDIR of crawlfw 0.1 (Scrapy 1.2's layout: pickled disk queues per priority in
    requests.queue/, hex fingerprints in requests.seen) is moved into the frontier."""
    from crawlfw.core.frontier.pqueue import PriorityQueue
    from crawlfw.squeues import PickleLifoDiskQueue
    from crawlfw.utils.reqser import request_to_dict
    from crawlfw.utils.request import request_fingerprint

    qdir = tmp_path / "requests.queue"
    qdir.mkdir()
    queues = PriorityQueue(lambda p: PickleLifoDiskQueue(str(qdir / f"p{p}")))
    for path, prio in [("a", 0), ("b", 2)]:
        queues.push(request_to_dict(R(path, priority=prio, callback=spider.parse_item), spider),
                    -prio)
    (qdir / "active.json").write_text(str(queues.close()))
    (tmp_path / "requests.seen").write_text(request_fingerprint(R("old")) + "\n")

    f = sqlite(tmp_path, spider)
    assert "migrated 2 queued requests and 1 fingerprints" in caplog.text
    assert (tmp_path / "requests.queue.migrated").is_dir()
    assert not (tmp_path / "requests.seen").exists()
    leased = f.lease(10)
    assert urls(leased) == ["b", "a"]
    assert leased[0].callback == spider.parse_item
    assert not f.push(R("old"))


def test_stored_requests_are_pickled_request_dicts(tmp_path, spider):
    f = sqlite(tmp_path, spider)
    f.push(R("m", meta={"item": {"k": [1, 2]}}, callback=spider.parse_item))
    f.commit()
    (data,) = f.conn.execute("SELECT data FROM requests").fetchone()
    d = pickle.loads(data)
    assert d["callback"] == "parse_item" and d["meta"] == {"item": {"k": [1, 2]}}


def test_a_raising_fingerprint_of_a_custom_dupefilter_is_contained(tmp_path, spider, caplog):
    class Broken(RFPDupeFilter):
        def request_fingerprint(self, request):
            if "bad" in request.url:
                raise KeyError("no fingerprint today")
            return super().request_fingerprint(request)

    f = SqliteFrontier(str(tmp_path), Broken(), stats=spider.crawler.stats)
    f.open(spider)
    assert f.push(R("bad"))  # scheduled, unfiltered
    assert f.push(R("good")) and not f.push(R("good"))
    assert "Error in Broken.request_fingerprint(<GET http://127.0.0.1/bad>)" in caplog.text
    assert spider.crawler.stats.get_value("hook_errors/dupefilter") == 1


def test_one_frontier_per_jobdir_at_a_time(tmp_path, spider):
    """The JOBDIR's flock also holds within one process (two crawls under one
    Supervisor); closing the frontier gives it back."""
    first = sqlite(tmp_path, spider)
    with pytest.raises(JobLocked, match=f"JOBDIR {tmp_path} is in use by another crawl "
                                        f"\\(pid {os.getpid()}"):
        SqliteFrontier(str(tmp_path), RFPDupeFilter())
    first.close("finished")
    sqlite(tmp_path, spider).close("finished")


def test_commits_raise_the_generation_in_the_job_record(tmp_path, spider):
    import json

    f = sqlite(tmp_path, spider)
    f.push(R("a"))
    f.commit()
    f.commit({"note": 1})
    record = json.loads((tmp_path / "job.json").read_text())
    assert record == {"job": f.meta["job"], "generation": 2}
    f.close("finished")  # a last commit
    assert json.loads((tmp_path / "job.json").read_text())["generation"] == 3
    again = sqlite(tmp_path, spider)
    assert again.generation == 3 and again.meta["job"] == record["job"]


def test_wal_is_checkpointed_at_the_interval_and_at_close(tmp_path, spider):
    wal = tmp_path / "frontier.sqlite-wal"
    f = sqlite(tmp_path, spider, wal_checkpoint_s=3600)
    f.commit()  # a run's first commit is checkpointed: the main file holds the job
    assert wal.stat().st_size == 0
    f.push(R("a"))
    f.commit()
    assert wal.stat().st_size > 0  # not yet: the interval has not passed
    f.close("finished")
    assert wal.stat().st_size == 0 if wal.exists() else True
    f = sqlite(tmp_path, spider, wal_checkpoint_s=0)
    f.push(R("b"))
    f.commit()
    assert wal.stat().st_size == 0
    f.close("finished")


def test_an_older_copy_of_the_frontier_is_refused(tmp_path, spider):
    import shutil

    f = sqlite(tmp_path, spider)
    f.push(R("a"))
    f.close("finished")
    shutil.copy(tmp_path / "frontier.sqlite", tmp_path / "backup")
    f = sqlite(tmp_path, spider)
    f.push(R("b"))
    f.close("finished")
    shutil.copy(tmp_path / "backup", tmp_path / "frontier.sqlite")
    with pytest.raises(FrontierError, match="older than what this job committed"):
        SqliteFrontier(str(tmp_path), RFPDupeFilter())
    os.unlink(tmp_path / "job.json")  # the frontier alone is a consistent job
    f = sqlite(tmp_path, spider)
    assert urls(f.lease(5)) == ["a"]
    f.close("finished")


def S(path, **kw):  # noqa: N802 - a start request, as the Scraper marks it
    return R(path, meta={"is_start_request": True}, **kw)


@pytest.mark.parametrize("lifo", [True, False])
def test_sqlite_start_requests_first_in_first_out_and_resumed_in_order(tmp_path, spider,
                                                                         lifo):
    """Scrapy 2.13's start queue with a JOBDIR: start requests in the order given, after
    the other requests of their priority, before lower priorities, also after a resume."""
    f = sqlite(tmp_path, spider, lifo=lifo)
    f.push(R("x"))
    for path in "12345":
        f.push(S(path))
    f.push(R("y"))
    f.push(S("6", priority=1))
    f.push(R("z", priority=2))
    done = f.lease(4)
    assert urls(done) == ["z", "6"] + (["y", "x"] if lifo else ["x", "y"])
    leased = f.lease(2)
    assert urls(leased) == ["1", "2"]
    f.release(leased[1:])  # "2" goes back to its place
    f.ack([r._lease for r in done + leased[:1]])
    f.close("shutdown")
    f = sqlite(tmp_path, spider, lifo=lifo)  # resumed: the order is durable
    f.push(S("7"))
    f.push(R("w"))
    assert urls(f.lease(10)) == ["w", "2", "3", "4", "5", "7"]
    f.close("finished")


def test_sqlite_frontier_of_an_older_crawlfw_is_read(tmp_path, spider):
    """A JOBDIR written before start requests were kept apart (no ``start_seq`` column)
    is resumed: its queued requests in their old order, new start requests after them."""
    import sqlite3

    f = sqlite(tmp_path, spider)
    for path in "abc":
        f.push(R(path))
    f.close("shutdown")
    conn = sqlite3.connect(tmp_path / "frontier.sqlite")  # back to the old layout
    conn.executescript(
        "DROP INDEX requests_host_lifo; ALTER TABLE requests DROP COLUMN start_seq;"
        "ALTER TABLE requests DROP COLUMN host;"
        "UPDATE meta SET value = '1' WHERE key = 'schema_version';"
        "CREATE INDEX requests_lifo ON requests (leased, priority, id);")
    conn.close()
    f = sqlite(tmp_path, spider)
    f.push(S("1"))
    f.push(S("2"))
    assert urls(f.lease(10)) == ["c", "b", "a", "1", "2"]
    indexes = {r[0] for r in f.conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'requests'")}
    assert indexes == {"requests_host_lifo"}
    f.close("finished")


#: The ``requests`` table and indexes of schema version 1 (crawlfw 0.3: one queue for
#: every host), as that version wrote them.
V1_SCHEMA = """
CREATE TABLE requests (id INTEGER PRIMARY KEY, priority INTEGER NOT NULL,
    leased INTEGER NOT NULL DEFAULT 0, data BLOB NOT NULL,
    start_seq INTEGER NOT NULL DEFAULT 0);
CREATE TABLE seen (fp BLOB PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE INDEX requests_next_lifo ON requests (leased, priority DESC, start_seq, id DESC);
"""


def test_schema_version_1_jobdir_is_migrated_to_per_host_queues(tmp_path, spider, caplog):
    """A JOBDIR written by the one-queue layout (schema version 1) is migrated on open:
    each row gets its host (``download_slot`` when set), the ready-set is built from
    them, leased rows of the dead run are queued again, and the crawl goes on."""
    import json
    import sqlite3

    from crawlfw.utils.reqser import request_to_dict

    conn = sqlite3.connect(tmp_path / "frontier.sqlite")
    conn.executescript(V1_SCHEMA)
    rows = [("http://a.example/1", 0, {}), ("http://a.example/2", 3, {}),
            ("http://B.example/1", 1, {}), ("http://c.example/1", 0, {"download_slot": "s"}),
            ("http://a.example/3", 0, {})]
    for i, (url, prio, meta) in enumerate(rows, 1):
        d = request_to_dict(crawlfw.Request(url, priority=prio, meta=meta), spider, compact=True)
        conn.execute("INSERT INTO requests (id, priority, leased, data) VALUES (?, ?, ?, ?)",
                     (i, prio, 1 if i == 5 else 0, pickle.dumps(d, 5)))
    conn.executemany("INSERT INTO meta VALUES (?, ?)",
                     [("schema_version", "1"), ("job", json.dumps("j1")),
                      ("generation", "3"), ("start_requests", "7")])
    conn.commit()
    conn.close()
    (tmp_path / "job.json").write_text(json.dumps({"job": "j1", "generation": 3}))

    f = sqlite(tmp_path, spider, policy=HostPolicy(1, 0.0, False))
    assert "migrated 5 stored requests to per-host queues" in caplog.text
    assert f.meta["start_requests"] == 7 and f.meta["schema_version"] == 2
    assert len(f) == 5
    hosts = dict(f.conn.execute("SELECT data, host FROM requests").fetchall())
    assert sorted(hosts.values()) == ["a.example", "a.example", "a.example", "b.example", "s"]
    # One per host at once (concurrency 1): the best head first.
    leased = f.lease(10)
    assert [r.url for r in leased] == ["http://a.example/2", "http://b.example/1",
                                       "http://c.example/1"]
    assert [r._host for r in leased] == ["a.example", "b.example", "s"]
    f.hosts_finished({"a.example": 1})
    assert urls(f.lease(10)) == ["3"]
    f.close("shutdown")
    again = sqlite(tmp_path, spider)  # version 2 now: opened without migrating
    caplog.clear()
    assert len(again) == 5 and "migrated" not in caplog.text
    again.close("finished")


def test_per_host_leases_in_both_frontiers(frontier):
    """A host at its concurrency does not hold the others back; a finished transfer
    frees its host; released requests give their host's count back."""
    frontier.policy.__init__(2, 0.0, False)
    for i in range(5):
        frontier.push(crawlfw.Request(f"http://big.example/{i}"))
    frontier.push(crawlfw.Request("http://small.example/1"))
    first = frontier.lease(10)
    assert [r._host for r in first] == ["big.example"] * 2 + ["small.example"]
    assert not any(r._paced for r in first)  # no delay: nothing for the slot to skip
    assert frontier.lease(10) == []
    frontier.hosts_finished({"big.example": 1})
    (one,) = frontier.lease(10)
    assert one._host == "big.example"
    frontier.release([one])
    assert len(frontier) == 3
    assert [r._host for r in frontier.lease(10)] == ["big.example"]


def test_host_delay_spaces_leases(frontier):
    frontier.policy.__init__(8, 2.0, False)
    for i in range(3):
        frontier.push(crawlfw.Request(f"http://a.example/{i}"))
    (paced,) = frontier.lease(10, 100.0)
    assert paced._paced  # spaced here: the download slot does not wait again
    assert frontier.lease(10, 101.0) == []
    assert frontier.next_ready_in_s(101.5) == 0.5
    assert len(frontier.lease(10, 102.0)) == 1
    frontier.set_host_delay("a.example", 5.0)  # AutoThrottle: the next start moves
    assert frontier.lease(10, 106.0) == []
    assert frontier.next_ready_in_s(106.0) == 1.0
    assert len(frontier.lease(10, 107.0)) == 1


def test_every_frontier_offers_the_frontier_protocol(frontier):
    from crawlfw.actors.scheduler import _ScrapySchedulerFrontier
    from crawlfw.core.frontier.api import Frontier
    from crawlfw.core.frontier.scheduler import Scheduler

    assert isinstance(frontier, Frontier)
    wrapped = _ScrapySchedulerFrontier(Scheduler(RFPDupeFilter()))
    assert isinstance(wrapped, Frontier)
    assert wrapped.next_ready_in_s() is None


def test_scheduler_next_request_reports_its_host_at_once(tmp_path, spider):
    """Scrapy's ``next_request`` has no transfer to report: the host is freed at once,
    so more than its concurrency can be taken one by one (the downloader's slot limits
    them), and the request is not marked paced (the slot applies the delay too)."""
    from crawlfw.core.frontier.scheduler import Scheduler

    scheduler = Scheduler(RFPDupeFilter(), policy=HostPolicy(1, 0.0, False))
    scheduler.open(spider)
    for path in "abc":
        scheduler.enqueue_request(R(path))
    taken = [scheduler.next_request() for _ in range(3)]
    assert urls(taken) == ["c", "b", "a"]
    assert all(r._host is None and not r._paced for r in taken)
    assert scheduler.next_request() is None


def test_sqlite_hands_out_the_pushed_objects_it_kept_and_rebuilds_the_others(tmp_path, spider,
                                                                             monkeypatch):
    """The requests kept as objects (at most LIVE_CACHE_SIZE) are leased as they were
    pushed; the others, and a released one leased again, are rebuilt from their rows: the
    same requests either way (their stored dicts equal)."""
    from crawlfw.core.frontier import sqlite_frontier
    from crawlfw.http.request._serialize import request_to_dict

    monkeypatch.setattr(sqlite_frontier, "LIVE_CACHE_SIZE", 3)
    f = sqlite(tmp_path, spider, lifo=False)
    pushed = [R(f"{i}", priority=i % 2, meta={"depth": i}, headers={"Referer": "http://a/"},
                callback=spider.parse_item, cb_kwargs={"n": i}, flags=["f"])
              for i in range(6)]
    assert f.push_many(pushed) == [True] * 6
    assert len(f._live) == 3
    leased = f.lease(6)
    assert sorted(urls(leased)) == [str(i) for i in range(6)]
    by_url = {r.url: r for r in pushed}
    kept = [r for r in leased if r is by_url[r.url]]
    assert sorted(urls(kept)) == ["0", "1", "2"]  # the first three pushed
    for request in leased:
        assert request_to_dict(request, spider) == request_to_dict(by_url[request.url], spider)
        assert request._lease is not None
    assert not f._live
    f.release(kept[:1])
    again = f.lease(1)
    assert urls(again) == urls(kept[:1]) and again[0] is not kept[0]  # from its row
    assert request_to_dict(again[0], spider) == request_to_dict(kept[0], spider)
