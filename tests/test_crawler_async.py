"""Scrapy 2's runner classes on crawlfw's actors: ``CrawlerProcessBase``,
``AsyncCrawlerRunner`` (crawl() returns an asyncio Task; stop() and join() are
coroutines) and ``AsyncCrawlerProcess`` (start() runs its loop until the crawls end),
against a real local HTTP server."""

import asyncio
import inspect
import signal
import threading

import pytest

import crawlfw
from crawlfw import signals
from crawlfw.crawler import (
    AsyncCrawlerProcess,
    AsyncCrawlerRunner,
    CrawlerProcess,
    CrawlerProcessBase,
    CrawlerRunner,
)
from crawlfw.exceptions import CrawlStartError
from tests.support.servers import StaticSiteServer

pytestmark = pytest.mark.slow


@pytest.fixture
def site(tmp_path):
    for n in (1, 2):
        (tmp_path / f"{n}.html").write_text(f"<html><title>page {n}</title></html>")
    server = StaticSiteServer(tmp_path).start()
    yield server
    server.stop()


def _spider(url):
    class Pages(crawlfw.Spider):
        name = "pages"
        start_urls = [f"{url}/1.html", f"{url}/2.html"]

        def parse(self, response):
            yield {"title": response.css("title::text").get()}

    return Pages


def _collect(crawler, items):
    crawler.signals.connect(lambda item: items.append(item["title"]), signals.item_scraped,
                            weak=False)
    return crawler


def _signal_threads():
    return {t for t in threading.enumerate() if t.name == "crawlfw-signals"}


def _handlers():
    return {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}


@pytest.mark.parametrize("processcls", [CrawlerProcess, AsyncCrawlerProcess])
def test_a_process_shut_down_leaves_no_signal_thread_and_gives_the_handlers_back(site,
                                                                               processcls):
    # A program (or a test run) that makes several process objects, or goes on after
    # start(), keeps no thread or pipe of one shut down, and gets its ^C back.
    handlers, before = _handlers(), _signal_threads()
    process = processcls({"LOG_ENABLED": False, "CONTROL_ENDPOINT": 0})
    [thread] = _signal_threads() - before
    assert signal.getsignal(signal.SIGINT) == process._signals._first
    process.crawl(_spider(site.url))
    process.start()
    thread.join(5)
    assert not thread.is_alive()
    assert _handlers() == handlers
    process.shutdown()  # twice: nothing more to do
    assert _handlers() == handlers


def test_a_crawler_process_started_again_handles_signals_again_until_shut_down():
    handlers, before = _handlers(), _signal_threads()
    process = CrawlerProcess({"LOG_ENABLED": False, "CONTROL_ENDPOINT": 0})
    [first] = _signal_threads() - before
    process.start()  # nothing to crawl: returns, shut down
    first.join(5)
    assert _handlers() == handlers and not first.is_alive()
    process.start(stop_after_crawl=False)
    [thread] = _signal_threads() - before
    assert _handlers() == dict.fromkeys(handlers, process._signals._first)
    process.shutdown()
    thread.join(5)
    assert not thread.is_alive()
    assert _handlers() == handlers


def test_class_tree_and_signatures_are_scrapy_2_19s():
    assert issubclass(CrawlerProcess, CrawlerProcessBase)
    assert issubclass(AsyncCrawlerProcess, CrawlerProcessBase)
    assert issubclass(AsyncCrawlerProcess, AsyncCrawlerRunner)
    assert issubclass(AsyncCrawlerRunner, CrawlerRunner)
    # Scrapy 2.19: start(self, stop_after_crawl=True, install_signal_handlers=True)
    assert list(inspect.signature(CrawlerProcessBase.start).parameters) == [
        "self", "stop_after_crawl", "install_signal_handlers"]
    assert inspect.signature(AsyncCrawlerProcess).parameters[
        "install_root_handler"].default is None
    assert inspect.iscoroutinefunction(AsyncCrawlerRunner.stop)
    assert inspect.iscoroutinefunction(AsyncCrawlerRunner.join)


def test_async_crawler_runner_inside_a_running_loop(site):
    items = []

    async def main():
        runner = AsyncCrawlerRunner({"LOG_LEVEL": "INFO"})
        try:
            crawler = _collect(runner.create_crawler(_spider(site.url)), items)
            task = runner.crawl(crawler)
            assert isinstance(task, asyncio.Task)
            await runner.join()
            assert task.done() and task.exception() is None
            return crawler, runner.bootstrap_failed
        finally:
            runner.shutdown()

    crawler, failed = asyncio.run(main())
    assert sorted(items) == ["page 1", "page 2"]
    assert crawler.finish_reason == "finished"
    assert failed is False


def test_async_crawler_runner_stop_closes_the_crawl(site):
    class Endless(crawlfw.Spider):
        name = "endless"

        async def start(self):
            n = 0
            while True:
                n += 1
                yield crawlfw.Request(f"{site.url}/1.html?n={n}")

        def parse(self, response):
            pass

    async def main():
        runner = AsyncCrawlerRunner({"LOG_LEVEL": "INFO", "DOWNLOAD_DELAY": 0.2})
        try:
            crawler = runner.create_crawler(Endless)
            task = runner.crawl(crawler)
            await asyncio.sleep(0.5)
            await asyncio.wait_for(runner.stop(), 30)
            assert task.done()
            return crawler
        finally:
            runner.shutdown()

    assert asyncio.run(main()).finish_reason == "shutdown"


def test_a_crawl_that_cannot_start_fails_its_task_and_sets_bootstrap_failed(tmp_path):
    class S(crawlfw.Spider):
        name = "s"
        custom_settings = {"FEEDS": {str(tmp_path / "missing" / "dir" / "x.json"): {
            "format": "nosuchformat"}}}

    async def main():
        runner = AsyncCrawlerRunner({"LOG_LEVEL": "INFO"})
        try:
            task = runner.crawl(S)
            with pytest.raises(Exception) as excinfo:
                await task
            return runner.bootstrap_failed, excinfo.value
        finally:
            runner.shutdown()

    failed, error = asyncio.run(main())
    assert failed is True
    assert isinstance(error, (CrawlStartError, ValueError))


class _BrokenExtension:
    def __init__(self):
        raise OSError("no such socket")


def test_an_extension_that_cannot_be_built_refuses_the_crawl_in_one_line():
    """Crawler() builds the extensions: one that raises is a CrawlStartError naming it
    (the original exception chained), and the runner's bootstrap_failed is set, as
    Scrapy 2.19 sets it when its crawl() builds them (issue 34)."""
    runner = CrawlerRunner({"EXTENSIONS": {f"{__name__}._BrokenExtension": 1},
                            "LOG_LEVEL": "INFO"})
    try:
        with pytest.raises(CrawlStartError) as excinfo:
            runner.crawl(crawlfw.Spider, name="s")
        assert str(excinfo.value) == (f"EXTENSIONS: cannot build '{__name__}._BrokenExtension':"
                                      " OSError: no such socket")
        assert isinstance(excinfo.value.__cause__, OSError)
        assert runner.bootstrap_failed is True
    finally:
        runner.shutdown()


def test_async_crawler_process_start_runs_until_the_crawls_end(site):
    items = []
    process = AsyncCrawlerProcess({"LOG_LEVEL": "INFO"})
    crawler = _collect(process.create_crawler(_spider(site.url)), items)
    task = process.crawl(crawler)
    assert isinstance(task, asyncio.Task)
    process.start()
    assert task.done() and task.exception() is None
    assert sorted(items) == ["page 1", "page 2"]
    assert process.bootstrap_failed is False
    assert crawler.finish_reason == "finished"


@pytest.mark.parametrize("process_class", [CrawlerProcess, AsyncCrawlerProcess])
def test_start_waits_for_a_crawl_started_from_spider_closed(site, process_class):
    # Scrapy's join() waits until no crawl is active: a crawl chained from another's
    # spider_closed runs to its end (it was stopped as "shutdown" at once)
    items = []
    process = process_class({"LOG_LEVEL": "INFO"})
    first = _collect(process.create_crawler(_spider(site.url)), items)
    chained = []

    def start_the_next(spider, reason):
        chained.append(_collect(process.create_crawler(_spider(site.url)), items))
        process.crawl(chained[0])

    first.signals.connect(start_the_next, signals.spider_closed, weak=False)
    process.crawl(first)
    process.start()
    assert first.finish_reason == "finished"
    assert [c.finish_reason for c in chained] == ["finished"]
    assert sorted(items) == ["page 1", "page 1", "page 2", "page 2"]


def test_a_runner_after_an_async_process_was_shut_down_gets_a_new_loop(site):
    # the process's closed loop stays the thread's current one: crawl() makes a new loop
    # (it raised "Event loop is closed")
    process = AsyncCrawlerProcess({"LOG_LEVEL": "INFO"})
    process.crawl(_spider(site.url))
    process.start()
    items = []
    runner = AsyncCrawlerRunner({"LOG_LEVEL": "INFO"})
    try:
        task = runner.crawl(_collect(runner.create_crawler(_spider(site.url)), items))
        task.get_loop().run_until_complete(task)
        assert task.exception() is None
        assert sorted(items) == ["page 1", "page 2"]
    finally:
        runner.shutdown()
        task.get_loop().close()
