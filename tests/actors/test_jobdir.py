"""JOBDIR: a crawl closed early keeps its queue and seen-set on disk; the same crawl
started again with the same JOBDIR resumes and nothing is lost or scraped twice."""

import logging

from tests.actors.test_runtime import FollowSpider
from tests.support.countserver import CountingServer
from tests.support.crawl import run_crawl


def test_pause_and_resume_with_jobdir(tmp_path, caplog):
    import sqlite3

    caplog.set_level(logging.INFO)
    server = CountingServer(hold_s=0.05)
    try:
        settings = {"JOBDIR": str(tmp_path / "job"), "CONCURRENT_REQUESTS": 4}
        first = run_crawl(FollowSpider, {**settings, "CLOSESPIDER_ITEMCOUNT": 6},
                          start=server.url)
        assert first.finish_reason == "closespider_itemcount"
        scraped_first = [i["n"] for i in first.items]
        assert 6 <= len(scraped_first) < 30
        db = sqlite3.connect(tmp_path / "job" / "frontier.sqlite")
        queued = db.execute("SELECT COUNT(*) FROM requests").fetchone()[0]
        seen = db.execute("SELECT COUNT(*) FROM seen").fetchone()[0]
        db.close()
        assert queued > 0  # requests kept on disk
        assert seen > len(scraped_first)
        assert not (tmp_path / "job" / "requests.queue").exists()

        second = run_crawl(FollowSpider, settings, start=server.url)
        assert second.finish_reason == "finished"
        assert "Resuming crawl" in caplog.text
        scraped_second = [i["n"] for i in second.items]
        assert sorted(scraped_first + scraped_second) == list(range(30))
        assert second.stats["scheduler/dequeued/disk"] > 0
    finally:
        server.stop()


def test_unserializable_requests_stay_in_memory(tmp_path):
    import crawlfw
    from crawlfw.core.frontier.scheduler import Scheduler
    from crawlfw.dupefilters import RFPDupeFilter
    from crawlfw.utils.test import get_crawler

    crawler = get_crawler(settings_dict={"JOBDIR": str(tmp_path)})
    spider = crawler._create_spider("s")
    scheduler = Scheduler(RFPDupeFilter(), jobdir=str(tmp_path), stats=crawler.stats,
                          logunser=True)
    scheduler.open(spider)
    kept = crawlfw.Request("http://127.0.0.1/a")
    lambda_cb = crawlfw.Request("http://127.0.0.1/b", callback=lambda r: None)
    assert scheduler.enqueue_request(kept)
    assert scheduler.enqueue_request(lambda_cb)
    assert crawler.stats.get_value("scheduler/unserializable") == 1
    assert len(scheduler) == 2
    first = scheduler.next_request()
    assert first is lambda_cb  # memory (not resumed) is served before disk
    assert scheduler.next_request().url == kept.url
    assert scheduler.next_request() is None
    assert scheduler.close("finished") == []
