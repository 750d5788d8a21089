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
from crawlfw.core.frontier import (
    FrontierError,
    JobLocked,
    MemoryFrontier,
    SqliteFrontier,
    read_job_meta,
)
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
        from crawlfw.core.frontier import SqliteFrontier
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
        from crawlfw.core.frontier import SqliteFrontier
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
    from crawlfw.core.pqueue import PriorityQueue
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
        "DROP INDEX requests_next_lifo; ALTER TABLE requests DROP COLUMN start_seq;"
        "CREATE INDEX requests_lifo ON requests (leased, priority, id);")
    conn.close()
    f = sqlite(tmp_path, spider)
    f.push(S("1"))
    f.push(S("2"))
    assert urls(f.lease(10)) == ["c", "b", "a", "1", "2"]
    indexes = {r[0] for r in f.conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'requests'")}
    assert indexes == {"requests_next_lifo"}
    f.close("finished")
