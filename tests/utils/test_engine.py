"""crawlfw.utils.engine: the status of a live engine, asked by message."""

from crawlfw.crawler import CrawlerRunner
from crawlfw.shell import start_shell_crawler
from crawlfw.spiders import Spider
from crawlfw.utils.engine import format_engine_status, get_engine_status


class IdleSpider(Spider):
    name = "idle"


def test_status_of_a_live_and_a_stopped_engine():
    runner = CrawlerRunner()
    crawler = start_shell_crawler(runner, IdleSpider)  # stays open, no requests
    try:
        status = dict(get_engine_status(crawler.engine))
        assert status["engine.running"] is True
        assert status["engine.closing"] is None
        assert status["engine.downloading"] == 0
        assert status["engine.in_spider"] == 0
        assert status["engine.in_pipeline"] == 0
        assert status["time()-engine.start_time"] >= 0
        text = format_engine_status(crawler.engine)
        assert text.startswith("Execution engine status\n\n")
        assert f"{'engine.downloading':<47} : 0\n" in text
    finally:
        crawler.stop("shutdown")
        assert crawler.wait(30)
        runner.shutdown()
    status = get_engine_status(crawler.engine, timeout_s=1)
    assert status[0] == ("engine.running", False)
    assert status[1][0] == "error" and "ActorDeadError" in status[1][1]
