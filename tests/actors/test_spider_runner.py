"""SpiderRunnerActor: what it tells the Scheduler, Pipeline and Engine, and in which order,
also when responses queue up in its inbox (their output is then told in bursts)."""

import threading

import pykka
import pytest

import crawlfw
from crawlfw.actors.spider_runner import SpiderRunnerActor
from crawlfw.http import HtmlResponse, Request
from crawlfw.utils.test import get_crawler

WAIT_S = 10


class Recorder(pykka.ThreadingActor):
    """Records every message told to it, in arrival order, tagged with its name.

    The "engine" recorder answers each ``response_scraped`` by telling the "scheduler"
    recorder a ``probe``, as the real engine's idle check does; ``done`` is set when
    the recorders have had everything of ``expected`` responses: a ``process_items``
    each, ``response_scraped`` reporting them all (a burst merges them: ``responses``)
    with a ``probe`` each, and 3 requests each (in ``enqueue_requests`` that a burst
    merges too).
    """

    def __init__(self, name, log, lock, done, expected, scheduler=None):
        super().__init__()
        self.name, self.log, self.lock, self.done = name, log, lock, done
        self.expected, self.scheduler = expected, scheduler

    def on_receive(self, message):
        if message["type"] == "response_scraped" and self.scheduler is not None:
            self.scheduler.tell({"type": "probe", "url": message["request"].url})
        with self.lock:
            self.log.append((self.name, message))
            kinds = [m["type"] for _, m in self.log]
            scraped = sum(m.get("responses", 1) for _, m in self.log
                          if m["type"] == "response_scraped")
            requests = sum(len(m["requests"]) for _, m in self.log
                           if m["type"] == "enqueue_requests")
            if (kinds.count("process_items") >= self.expected and scraped >= self.expected
                    and kinds.count("probe") >= kinds.count("response_scraped")
                    and requests >= 3 * self.expected):
                self.done.set()


def _start_recorders(log, lock, done, expected):
    refs = {n: Recorder.start(n, log, lock, done, expected) for n in ("scheduler", "pipeline")}
    refs["engine"] = Recorder.start("engine", log, lock, done, expected, refs["scheduler"])
    return refs


class GateSpider(crawlfw.Spider):
    name = "gate"
    gate = None  # a threading.Event the first callback waits for

    def parse(self, response):
        if response.url.endswith("/0"):
            assert self.gate.wait(WAIT_S)
        yield {"url": response.url}
        for i in range(3):
            yield Request(f"{response.url}/{i}")


@pytest.mark.parametrize("responses", [1, 5, SpiderRunnerActor.max_held * 2 + 1])
def test_output_told_in_order_when_responses_queue_up(responses):
    crawler = get_crawler(GateSpider, {"LOG_LEVEL": "INFO"})
    crawler.spider = spider = GateSpider()
    spider.gate = threading.Event()
    log, lock, done = [], threading.Lock(), threading.Event()
    refs = _start_recorders(log, lock, done, responses)
    runner = SpiderRunnerActor.start(crawler, refs["scheduler"], refs["pipeline"], refs["engine"])
    try:
        urls = [f"http://example.com/{i}" for i in range(responses)]
        for url in urls:  # the first callback blocks: the others wait in the inbox
            request = Request(url)
            response = HtmlResponse(url, body=b"<html></html>", request=request)
            runner.tell({"type": "scrape_response", "request": request, "response": response})
        spider.gate.set()
        assert done.wait(WAIT_S)
        with lock:
            seen = list(log)
        # per response, as _consume sends them: requests, items, then response_scraped
        expected_log = []
        for url in urls:
            expected_log += [
                ("scheduler", "enqueue_requests", tuple(f"{url}/{i}" for i in range(3))),
                ("pipeline", "process_items", (url,)),
                ("engine", "response_scraped", url),
            ]
        got = []
        reported = 0  # responses the engine heard of so far
        covers = {}  # the url a response_scraped names (its last) -> the urls it reports
        for name, m in seen:
            if m["type"] == "enqueue_requests":  # a burst's are merged: split them again
                for i in range(0, len(m["requests"]), 3):
                    got.append((name, m["type"],
                                tuple(r.url for r in m["requests"][i:i + 3])))
            elif m["type"] == "process_items":
                got.append((name, m["type"], tuple(i["url"] for i in m["items"])))
            elif m["type"] == "response_scraped":  # a burst's are merged: split them again
                n = m.get("responses", 1)
                group = urls[reported:reported + n]
                assert m["request"].url == group[-1]  # a merged one names the last
                assert (m["items"], m["requests"], m["size"]) == (n, 3 * n, 13 * n)
                covers[m["request"].url] = group
                reported += n
                got += [(name, m["type"], url) for url in group]
        # each receiver gets its messages in the order they were sent
        for name in refs:
            assert [g for g in got if g[0] == name] == [e for e in expected_log if e[0] == name]
        # a response's requests reach the scheduler before anything the engine tells it
        # after hearing that the response was scraped (the idle check relies on it)
        scheduler_log = [m for name, m in seen if name == "scheduler"]
        for last, group in covers.items():
            probe = next(i for i, m in enumerate(scheduler_log)
                         if m["type"] == "probe" and m["url"] == last)
            for url in group:
                enq = next(i for i, m in enumerate(scheduler_log)
                           if m["type"] == "enqueue_requests"
                           and any(r.url == f"{url}/0" for r in m["requests"]))
                assert enq < probe
        # the responses waited together: their requests went in fewer enqueue_requests
        # (each a plain one: nothing but the requests)
        enqueues = [m for m in scheduler_log if m["type"] == "enqueue_requests"]
        assert all(set(m) == {"type", "requests"} for m in enqueues)
        if responses > 1:
            assert len(enqueues) < responses
            assert len(covers) < responses  # and fewer response_scraped
    finally:
        runner.stop()
        for ref in refs.values():
            ref.stop()


def test_held_output_is_told_on_stop():
    crawler = get_crawler(GateSpider, {"LOG_LEVEL": "INFO"})
    crawler.spider = spider = GateSpider()
    spider.gate = threading.Event()
    log, lock, done = [], threading.Lock(), threading.Event()
    refs = _start_recorders(log, lock, done, 1)
    runner = SpiderRunnerActor.start(crawler, refs["scheduler"], refs["pipeline"], refs["engine"])
    try:
        request = Request("http://example.com/0")
        response = HtmlResponse(request.url, body=b"<html></html>", request=request)
        runner.tell({"type": "scrape_response", "request": request, "response": response})
        stopped = runner.stop(block=False)  # queued behind the response
        spider.gate.set()
        stopped.get(timeout=WAIT_S)
        assert done.wait(WAIT_S)
        with lock:
            assert sorted(m["type"] for _, m in log) == [
                "enqueue_requests", "probe", "process_items", "response_scraped"
            ]
    finally:
        for ref in refs.values():
            ref.stop()
