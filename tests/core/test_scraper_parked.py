"""Scraper (crawlfw/core/flow/scraper.py) with ``async def`` callbacks that wait for outside
answers (what ``await crawler.engine.download(request)`` does on the spider runner): the
callback is parked, its output so far handed on, and ``download_answered`` goes on with
it. Called directly, no actors, no threads: the callbacks make their futures with
``external_future`` (the spider runner's ``callback_download`` does the same and sends
the ``download`` message) and the test answers them."""

import asyncio

import pytest

import crawlfw
from crawlfw.core.flow.scraper import Scraper
from crawlfw.exceptions import ConnectionRefusedError
from crawlfw.http import HtmlResponse, Request
from crawlfw.spiders._async import NotSuspendable, SuspendableRun, external_future
from crawlfw.utils.test import get_crawler
from tests.core.test_scraper import RecordingSink

URL = "http://example.com/page"


def download(waits, url):
    """What ``engine.download(Request(url))`` returns in a callback: a future the test
    answers (recorded in ``waits`` as ``(url, future, run)``)."""
    future, run = external_future()
    waits.append((url, future, run))
    return future


def answer(scraper, waits, url, error=None):
    """Answer the wait for ``url`` with a response (or ``error``); what ended."""
    [(i, (_, future, run))] = [(i, w) for i, w in enumerate(waits) if w[0] == url]
    del waits[i]
    response = None if error else HtmlResponse(url, body=f"body of {url}".encode())
    return scraper.download_answered(future, run, response, error)


class WaitingSpider(crawlfw.Spider):
    name = "waiting"
    waits: list

    async def parse_coroutine(self, response):
        other = await download(self.waits, f"{response.url}/other")
        return [{"page": response.url, "other": other.text}, Request(f"{response.url}/next")]

    async def parse_agen(self, response):
        yield Request(f"{response.url}/before")
        yield {"n": 1}
        other = await download(self.waits, f"{response.url}/other")
        yield {"n": 2, "other": other.text}
        yield Request(f"{response.url}/after")

    async def parse_twice(self, response):
        first = await download(self.waits, f"{response.url}/1")
        yield {"first": first.text}
        second = await download(self.waits, f"{response.url}/2")
        yield {"second": second.text}

    async def parse_gather(self, response):
        pages = await asyncio.gather(*(download(self.waits, f"{response.url}/{i}")
                                       for i in range(3)))
        return {"texts": [p.text for p in pages]}

    async def parse_catching(self, response):
        try:
            await download(self.waits, f"{response.url}/dead")
        except ConnectionRefusedError as e:
            return {"error": type(e).__name__}

    async def parse_raising(self, response):
        yield {"n": 1}
        await download(self.waits, f"{response.url}/dead")
        yield {"never": True}

    async def errback_waiting(self, failure):
        other = await download(self.waits, f"{failure.request.url}/fallback")
        return {"fallback": other.text}


@pytest.fixture
def crawl():
    crawler = get_crawler(WaitingSpider)
    crawler.spider = spider = WaitingSpider.from_crawler(crawler)
    spider.waits = []
    sink = RecordingSink()
    return spider, sink, Scraper(crawler, sink)


def scrape(scraper, callback, url=URL):
    request = Request(url, callback=callback)
    return request, scraper.scrape_response(
        request, HtmlResponse(url, body=b"<html></html>", request=request))


def test_a_coroutine_callback_parks_and_ends_with_its_answer(crawl):
    spider, sink, scraper = crawl
    request, counts = scrape(scraper, spider.parse_coroutine)
    assert counts is None and sink.calls == []  # parked before any output
    assert [w[0] for w in spider.waits] == [f"{URL}/other"]
    [(ended_request, response, n_items, n_requests)] = answer(scraper, spider.waits,
                                                             f"{URL}/other")
    assert ended_request is request and response.url == URL
    assert (n_items, n_requests) == (1, 1)
    assert sink.of("items")[0][1] == [{"page": URL, "other": f"body of {URL}/other"}]
    assert sink.of("requests") == [("requests", [f"{URL}/next"], False)]
    assert scraper.parked == {}


def test_an_async_generator_hands_on_what_it_yielded_before_it_waits(crawl):
    spider, sink, scraper = crawl
    _, counts = scrape(scraper, spider.parse_agen)
    assert counts is None
    # the output before the wait went through the middlewares and to the sinks
    assert sink.calls == [("requests", [f"{URL}/before"], False),
                          ("items", [{"n": 1}], sink.calls[1][2], None)]
    [(_, _, n_items, n_requests)] = answer(scraper, spider.waits, f"{URL}/other")
    assert (n_items, n_requests) == (2, 2)  # the whole callback's
    assert sink.calls[2:] == [("requests", [f"{URL}/after"], False),
                              ("items", [{"n": 2, "other": f"body of {URL}/other"}],
                               sink.calls[3][2], None)]


def test_waiting_twice_parks_twice_and_counts_everything(crawl):
    spider, sink, scraper = crawl
    assert scrape(scraper, spider.parse_twice)[1] is None
    assert answer(scraper, spider.waits, f"{URL}/1") == []  # parked again
    assert len(scraper.parked) == 1
    [(_, _, n_items, _)] = answer(scraper, spider.waits, f"{URL}/2")
    assert n_items == 2
    assert [c[1] for c in sink.of("items")] == [[{"first": f"body of {URL}/1"}],
                                                [{"second": f"body of {URL}/2"}]]


def test_gathered_downloads_are_all_sent_before_it_parks(crawl):
    spider, sink, scraper = crawl
    assert scrape(scraper, spider.parse_gather)[1] is None
    assert sorted(w[0] for w in spider.waits) == [f"{URL}/{i}" for i in range(3)]
    assert answer(scraper, spider.waits, f"{URL}/2") == []
    assert answer(scraper, spider.waits, f"{URL}/0") == []
    [(_, _, n_items, _)] = answer(scraper, spider.waits, f"{URL}/1")
    assert n_items == 1
    assert sink.of("items")[0][1] == [{"texts": [f"body of {URL}/{i}" for i in range(3)]}]


def test_a_failed_download_raises_in_the_callback(crawl):
    spider, sink, scraper = crawl
    scrape(scraper, spider.parse_catching)
    error = ConnectionRefusedError("refused")
    [(_, _, n_items, _)] = answer(scraper, spider.waits, f"{URL}/dead", error=error)
    assert n_items == 1
    assert sink.of("items")[0][1] == [{"error": "ConnectionRefusedError"}]


def test_an_uncaught_download_error_is_a_spider_error_after_the_items_before(crawl, caplog):
    spider, sink, scraper = crawl
    scrape(scraper, spider.parse_raising)
    ended = answer(scraper, spider.waits, f"{URL}/dead",
                   error=ConnectionRefusedError("refused"))
    assert [e[2] for e in ended] == [1]
    assert "Spider error processing" in caplog.text and "refused" in caplog.text
    assert scraper.crawler.stats.get_value(
        "spider_exceptions/ConnectionRefusedError") == 1


def test_many_callbacks_wait_at_once_and_end_in_any_order(crawl):
    import random

    spider, sink, scraper = crawl
    pages = [f"{URL}/{i}" for i in range(50)]
    for page in pages:
        assert scrape(scraper, spider.parse_agen, page)[1] is None
    assert len(scraper.parked) == 50
    rng = random.Random(29)
    order = list(pages)
    rng.shuffle(order)
    ended = []
    for page in order:
        ended += answer(scraper, spider.waits, f"{page}/other")
    assert [e[0].url for e in ended] == order
    assert all((e[2], e[3]) == (2, 2) for e in ended)
    assert scraper.parked == {}


def test_the_lease_is_done_when_the_callback_ends(crawl):
    spider, sink, scraper = crawl
    request = Request(URL, callback=spider.parse_agen)
    request._lease = 7
    scraper.scrape_response(request, HtmlResponse(URL, body=b"", request=request))
    assert scraper.take_done_leases() == []
    answer(scraper, spider.waits, f"{URL}/other")
    assert scraper.take_done_leases() == [7]


def test_an_async_errback_of_a_download_error_waits_too(crawl):
    spider, sink, scraper = crawl
    request = Request(URL, errback=spider.errback_waiting)
    assert scraper.scrape_failure(request, ConnectionRefusedError("refused")) is None
    [(ended, response, n_items, _)] = answer(scraper, spider.waits, f"{URL}/fallback")
    assert ended is request and response is None and n_items == 1
    assert sink.of("items")[0][1] == [{"fallback": f"body of {URL}/fallback"}]


def test_the_rest_of_the_output_goes_through_the_spider_middlewares(crawl):
    """An offsite request yielded after the wait is filtered as one yielded before."""
    spider, sink, scraper = crawl
    spider.allowed_domains = ["example.com"]

    async def parse(response):
        yield Request("http://elsewhere.org/1")
        await download(spider.waits, f"{URL}/other")
        yield Request("http://elsewhere.org/2")
        yield Request(f"{URL}/kept")

    signals = scraper.crawler.signals
    signals.send_catch_log(crawlfw.signals.spider_opened, spider=spider)
    try:
        scrape(scraper, parse)
        answer(scraper, spider.waits, f"{URL}/other")
    finally:
        # spider_opened started the extensions' timers too (LogStats...): a spider
        # left open would log "Crawled 0 pages" into later tests of this worker
        signals.send_catch_log(crawlfw.signals.spider_closed, spider=spider,
                               reason="finished")
    assert sink.of("requests") == [("requests", [f"{URL}/kept"], False)]


def test_abandon_cancels_the_parked_callbacks(crawl):
    spider, sink, scraper = crawl
    done = []

    async def parse(response):
        try:
            await download(spider.waits, f"{URL}/never")
            yield {"never": True}
        finally:
            done.append("finally")

    scrape(scraper, parse)
    assert scraper.abandon() == 1
    assert done == ["finally"] and scraper.parked == {}


def test_a_plain_callback_cannot_wait(crawl):
    spider, sink, scraper = crawl
    with pytest.raises(NotSuspendable):
        external_future()


@pytest.mark.parametrize("n_before", [0, 1, 5])
def test_suspendable_run_settles_before_it_gives_back(n_before):
    """A run that waits goes on with what is ready first (up to SETTLE_PASSES passes):
    downloads started a few awaits into a gathered branch are still sent."""
    made = []

    async def branch(i):
        for _ in range(n_before):
            await asyncio.sleep(0)
        future, _ = external_future()
        made.append(future)
        return await future

    async def main():
        return await asyncio.gather(*(branch(i) for i in range(4)))

    run = SuspendableRun(main())
    assert run.drive() is False
    assert len(made) == 4
    for i, future in enumerate(made):
        future.set_result(i)
    assert run.drive() is True
    assert run.task.result() == [0, 1, 2, 3]
