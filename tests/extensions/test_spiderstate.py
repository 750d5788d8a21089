import pytest

from crawlfw import signals
from crawlfw.exceptions import NotConfigured
from crawlfw.extensions.spiderstate import SpiderState
from tests.extensions._crawler import get_crawler


def test_not_configured_without_jobdir():
    with pytest.raises(NotConfigured):
        SpiderState.from_crawler(get_crawler())


def test_state_saved_and_restored(tmp_path):
    jobdir = tmp_path / "job" / "nested"
    crawler = get_crawler({"JOBDIR": str(jobdir)})
    ext = SpiderState.from_crawler(crawler)
    assert jobdir.is_dir()  # job_dir creates it
    spider = crawler._create_spider(name="st")
    crawler.signals.send_catch_log(signals.spider_opened, spider=spider)
    assert spider.state == {}
    spider.state["seen"] = {"a", "b"}
    spider.state["n"] = 3
    crawler.signals.send_catch_log(signals.spider_closed, spider=spider, reason="shutdown")
    assert ext.statefn == str(jobdir / "spider.state")
    assert (jobdir / "spider.state").is_file()
    assert not (jobdir / "spider.state.tmp").exists()

    crawler2 = get_crawler({"JOBDIR": str(jobdir)})
    ext2 = SpiderState.from_crawler(crawler2)  # noqa: F841 - receivers are held weakly
    spider2 = crawler2._create_spider(name="st")
    crawler2.signals.send_catch_log(signals.spider_opened, spider=spider2)
    assert spider2.state == {"seen": {"a", "b"}, "n": 3}
