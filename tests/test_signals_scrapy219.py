"""Scrapy 2's signals and SignalManager coroutines (issue 29): scheduler_empty,
feed_slot_closed and feed_exporter_closed are sent where Scrapy 2.19 sends them (a real
crawl of a local server); send_catch_log_async awaits async handlers; wait_for wakes on
the next send, from another thread."""

import asyncio
import logging
import threading

import pytest

import crawlfw
from crawlfw import signals
from crawlfw.signalmanager import SignalManager

PAGE = (200, [("Content-Type", "text/html")], b"<html><body>page</body></html>")


def test_new_signals_exist_and_pickle():
    import pickle

    for name in ("scheduler_empty", "robots_parsed", "feed_slot_closed", "feed_exporter_closed"):
        signal = getattr(signals, name)
        assert name in signals.__all__ and pickle.loads(pickle.dumps(signal)) is signal


def test_send_catch_log_async_awaits_async_handlers(caplog):
    manager = SignalManager()
    sig = object()
    order = []

    def plain(arg):
        order.append(("plain", arg))
        return "p"

    async def slow(arg):
        await asyncio.sleep(0.01)
        order.append(("slow", arg))
        return "s"

    async def broken(arg):
        raise ValueError("async handler broke")

    async def ignored(arg):
        raise KeyError("not logged")

    for handler in (plain, slow, broken, ignored):
        manager.connect(handler, sig)
    results = asyncio.run(manager.send_catch_log_async(sig, arg=1, dont_log=KeyError))
    assert [r for _, r in results][:2] == ["p", "s"]
    assert isinstance(results[2][1], ValueError) and isinstance(results[3][1], KeyError)
    assert order == [("plain", 1), ("slow", 1)]
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "Error caught on signal handler" in errors[0].getMessage()
    assert errors[0].exc_info[0] is ValueError


def test_wait_for_wakes_on_a_send_from_another_thread():
    manager = SignalManager()
    sig = object()

    async def main():
        waiter = asyncio.ensure_future(manager.wait_for(sig))
        await asyncio.sleep(0)  # connected
        assert manager.has_receivers(sig)
        threading.Thread(target=manager.send_catch_log, args=(sig,)).start()
        await asyncio.wait_for(waiter, 5)
        return manager.has_receivers(sig)

    assert asyncio.run(main()) is False  # the temporary receiver is gone


class Pages(crawlfw.Spider):
    name = "signals219"
    base = ""

    def start_requests(self):
        for i in range(3):
            yield crawlfw.Request(f"{self.base}/page?{i}")

    def parse(self, response):
        yield {"url": response.url}


@pytest.mark.slow
def test_scheduler_empty_and_feed_signals_in_a_crawl(tmp_path):
    from crawlfw.crawler import CrawlerRunner
    from tests.downloadermiddlewares._support import ScriptedServer

    seen = []
    extra = []
    with ScriptedServer({"/page": PAGE, "/late": PAGE}) as server:
        runner = CrawlerRunner({"FEEDS": {str(tmp_path / "a.jl"): {"format": "jsonlines"},
                                          str(tmp_path / "b.json"): {"format": "json"}}})
        crawler = runner.create_crawler(Pages)

        def on_empty():
            seen.append("scheduler_empty")
            if not extra:  # Scrapy's use: feed more requests when the scheduler runs dry
                extra.append(True)
                crawler.engine.crawl(crawlfw.Request(server.url + "/late"))

        crawler.signals.connect(on_empty, signals.scheduler_empty, weak=False)
        crawler.signals.connect(lambda slot: seen.append(("slot", slot.uri, slot.itemcount)),
                                signals.feed_slot_closed, weak=False)
        crawler.signals.connect(lambda: seen.append("exporter_closed"),
                                signals.feed_exporter_closed, weak=False)
        crawler.signals.connect(lambda: seen.append("spider_closed"), signals.spider_closed,
                                weak=False)
        try:
            runner.crawl(crawler, base=server.url)
            assert crawler.wait(60)
        finally:
            runner.shutdown()
    assert crawler.finish_reason == "finished"
    assert "scheduler_empty" in seen
    assert crawler.stats.get_value("item_scraped_count") == 4  # /late was crawled
    slots = sorted(x for x in seen if isinstance(x, tuple))
    assert slots == [("slot", str(tmp_path / "a.jl"), 4), ("slot", str(tmp_path / "b.json"), 4)]
    tail = [x for x in seen if not isinstance(x, tuple) and x != "scheduler_empty"]
    assert tail == ["exporter_closed", "spider_closed"]
    assert seen.index("exporter_closed") > max(seen.index(s) for s in slots)
