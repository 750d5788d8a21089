"""Run a real crawl in-process (the actor tree, pycurl transfers) and collect its items."""

from crawlfw import signals
from crawlfw.crawler import CrawlerRunner


class CrawlResult:
    """What a test crawl produced: ``items`` (in scrape order), ``stats`` (a dict),
    ``finish_reason`` and the ``crawler``."""

    def __init__(self, crawler, items):
        self.crawler = crawler
        self.items = items
        self.stats = crawler.stats.get_stats()
        self.finish_reason = crawler.finish_reason


def run_crawl(spidercls, settings=None, timeout_s=60.0, **spider_kwargs) -> CrawlResult:
    """Crawl with ``spidercls`` until it closes; fail if it takes over ``timeout_s`` seconds.

    ``settings`` defaults to LOG_LEVEL DEBUG (for caplog) and no telnet/extension noise.
    """
    items = []
    runner = CrawlerRunner({"LOG_LEVEL": "DEBUG", **(settings or {})})
    crawler = runner.create_crawler(spidercls)
    crawler.signals.connect(lambda item: items.append(item), signals.item_scraped, weak=False)
    try:
        runner.crawl(crawler, **spider_kwargs)
        if not crawler.wait(timeout_s):
            runner.stop("test_timeout")
            crawler.wait(10)
            raise AssertionError(f"crawl did not finish within {timeout_s} s")
    finally:
        runner.shutdown()
    return CrawlResult(crawler, items)
