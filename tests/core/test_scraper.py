"""Scraper (crawlfw/core/flow/scraper.py), called directly: a real Spider subclass, real
Requests and Responses, the crawler's default spider middlewares, and a sink that
records its calls in order. No actors, no threads."""

import base64
import logging
import pickle
import threading

import pytest

import crawlfw
from crawlfw import signals
from crawlfw.core.flow.scraper import OUTPUT_BATCH, Scraper, report_spider_error
from crawlfw.exceptions import CloseSpider, DownloadError, IgnoreRequest
from crawlfw.http import HtmlResponse, Request
from crawlfw.item import Field, Item
from crawlfw.utils.failure import Failure
from crawlfw.utils.test import get_crawler

URL = "http://example.com/page"


class Product(Item):
    name = Field()


class TableSpider(crawlfw.Spider):
    """``parse`` returns ``self.output(response)``; ``start_requests`` returns
    ``self.starts()``; both set per test."""

    name = "table"

    def output(self, response):
        return None

    def starts(self):
        return ()

    def parse(self, response):
        return self.output(response)

    def parse_kw(self, response, page, tag="none"):
        yield {"page": page, "tag": tag}

    async def parse_async(self, response):
        yield {"n": 1}
        yield Request(f"{response.url}/a")
        yield {"n": 2}

    def start_requests(self):
        return self.starts()


class RecordingSink:
    """A ScraperSink recording every call, in order, in ``calls``."""

    def __init__(self):
        self.calls = []

    def requests(self, requests, running):
        self.calls.append(("requests", [r.url for r in requests], running))

    def items(self, items, response, spider_error):
        self.calls.append(("items", list(items), response, spider_error))

    def close_spider(self, reason):
        self.calls.append(("close_spider", reason))

    def of(self, kind):
        return [c for c in self.calls if c[0] == kind]


@pytest.fixture
def crawl():
    """``(crawler, spider, sink, scraper)``; ``crawler.spider_errors`` records the
    ``spider_error`` signals."""
    crawler = get_crawler(TableSpider)
    crawler.spider = spider = TableSpider.from_crawler(crawler)
    crawler.spider_errors = []

    def on_error(failure, response, spider):
        crawler.spider_errors.append((failure, response, spider))

    crawler.signals.connect(on_error, signals.spider_error, weak=False)
    sink = RecordingSink()
    return crawler, spider, sink, Scraper(crawler, sink)


def response_for(request):
    return HtmlResponse(request.url, body=b"<html></html>", request=request)


def errors(caplog):
    return [r for r in caplog.records if r.levelno >= logging.ERROR]


def urls(n, prefix=URL):
    return [f"{prefix}/{i}" for i in range(n)]


def _gen(*objs):
    yield from objs


def _yield_then_raise(*objs, error):
    """A callback output: a generator yielding ``objs``, then raising ``error``."""
    def output(response):
        yield from objs
        raise error
    return output


# --- callback output -> sink calls and counts -------------------------------------------

N = OUTPUT_BATCH

CALLBACK_OUTPUT = [
    # id, callback output (built from the response), expected sink calls, (items, requests)
    ("none", lambda r: None, [], (0, 0)),
    ("empty list", lambda r: [], [], (0, 0)),
    ("one dict", lambda r: {"a": 1}, [("items", [{"a": 1}], "resp", None)], (1, 0)),
    ("one request", lambda r: Request(f"{URL}/x"), [("requests", [f"{URL}/x"], False)], (0, 1)),
    ("mixed generator, None skipped",
     lambda r: _gen(Request(f"{URL}/0"), {"a": 1}, None, Request(f"{URL}/1"), {"a": 2}),
     [("requests", urls(2), False), ("items", [{"a": 1}, {"a": 2}], "resp", None)], (2, 2)),
    ("an Item is an item", lambda r: [Product(name="x")],
     [("items", [Product(name="x")], "resp", None)], (1, 0)),
    ("exactly one batch of requests: handed over while running",
     lambda r: (Request(u) for u in urls(N)), [("requests", urls(N), True)], (0, N)),
    ("one batch and one more request",
     lambda r: (Request(u) for u in urls(N + 1)),
     [("requests", urls(N), True), ("requests", urls(N + 1)[N:], False)], (0, N + 1)),
    ("two batches and 3 more items",
     lambda r: ({"i": i} for i in range(2 * N + 3)),
     [("items", [{"i": i} for i in range(N)], "resp", None),
      ("items", [{"i": i} for i in range(N, 2 * N)], "resp", None),
      ("items", [{"i": i} for i in range(2 * N, 2 * N + 3)], "resp", None)], (2 * N + 3, 0)),
    ("requests and items batched apart, the last ones after the loop",
     lambda r: (x for i in range(N + 1) for x in (Request(f"{URL}/{i}"), {"i": i})),
     [("requests", urls(N), True), ("items", [{"i": i} for i in range(N)], "resp", None),
      ("requests", [f"{URL}/{N}"], False), ("items", [{"i": N}], "resp", None)],
     (N + 1, N + 1)),
]


@pytest.mark.parametrize("output, expected, counts",
                         [row[1:] for row in CALLBACK_OUTPUT], ids=[row[0] for row in CALLBACK_OUTPUT])
def test_callback_output_is_split_and_batched(crawl, caplog, output, expected, counts):
    crawler, spider, sink, scraper = crawl
    spider.output = output
    request = Request(URL)
    response = response_for(request)
    assert scraper.scrape_response(request, response) == counts
    expected = [tuple(response if x == "resp" else x for x in call) for call in expected]
    assert sink.calls == expected
    assert not errors(caplog)


class _FileUrlRequest(Request):
    """A subclass whose ``url`` is not its ``_url``: the local-file check reads ``url``."""

    @property
    def url(self):
        return "file:///etc/passwd" if "shifted" in self._url else self._url


def test_local_file_requests_from_a_web_page_are_refused(crawl, caplog):
    # _consume reads a plain Request's _url, any other request's url property
    crawler, spider, sink, scraper = crawl
    spider.output = lambda r: [
        Request("file:///etc/passwd"), Request(f"{URL}/kept"),
        crawlfw.FormRequest("file:///tmp/form"), _FileUrlRequest(f"{URL}/shifted"),
        _FileUrlRequest(f"{URL}/plain"), Request("FILE:///upper"),
    ]
    request = Request(URL)
    with caplog.at_level(logging.WARNING):
        assert scraper.scrape_response(request, response_for(request)) == (0, 2)
    assert sink.calls == [("requests", [f"{URL}/kept", f"{URL}/plain"], False)]
    assert crawler.stats.get_value("scraper/refused_local_url") == 4
    assert sum("a web page cannot open local files" in r.getMessage()
               for r in caplog.records) == 4


def test_wrong_types_are_logged_by_name_and_the_rest_kept(crawl, caplog):
    crawler, spider, sink, scraper = crawl
    spider.output = lambda r: _gen({"a": 1}, "text", Request(f"{URL}/0"), 3, {"a": 2})
    request = Request(URL)
    assert scraper.scrape_response(request, response_for(request)) == (2, 1)
    assert [m.getMessage() for m in errors(caplog)] == [
        f"Spider must return Request, BaseItem, dict or None, got 'str' in <GET {URL}>",
        f"Spider must return Request, BaseItem, dict or None, got 'int' in <GET {URL}>",
    ]
    assert sink.of("items")[0][1] == [{"a": 1}, {"a": 2}]
    assert sink.of("requests") == [("requests", urls(1), False)]


def test_cb_kwargs_are_passed_to_the_callback(crawl):
    crawler, spider, sink, scraper = crawl
    request = Request(URL, callback=spider.parse_kw, cb_kwargs={"page": 3, "tag": "t"})
    assert scraper.scrape_response(request, response_for(request)) == (1, 0)
    assert sink.of("items")[0][1] == [{"page": 3, "tag": "t"}]


def test_async_generator_callback(crawl):
    crawler, spider, sink, scraper = crawl
    request = Request(URL, callback=spider.parse_async)
    response = response_for(request)
    assert scraper.scrape_response(request, response) == (2, 1)
    assert sink.calls == [("requests", [f"{URL}/a"], False),
                          ("items", [{"n": 1}, {"n": 2}], response, None)]


# --- spider errors ----------------------------------------------------------------------


def _raise(exc):
    raise exc


def test_error_after_items_is_carried_with_the_last_batch_not_reported(crawl, caplog):
    crawler, spider, sink, scraper = crawl
    error = ValueError("broken after the items")
    spider.output = _yield_then_raise(*({"i": i} for i in range(N + 2)), Request(f"{URL}/0"),
                                      error=error)
    request = Request(URL)
    response = response_for(request)
    assert scraper.scrape_response(request, response) == (N + 2, 1)
    items = sink.of("items")
    assert [len(c[1]) for c in items] == [N, 2]
    assert items[0][3] is None  # only the last batch carries it
    assert items[1][3] == (error, request)
    assert sink.of("requests") == [("requests", urls(1), False)]
    # The items' receiver reports it after scraping them: nothing yet.
    assert not errors(caplog)
    assert crawler.spider_errors == []
    assert crawler.stats.get_value("spider_exceptions/ValueError") is None


@pytest.mark.parametrize("output", [
    lambda r: _raise(ValueError("raised at once")),
    _yield_then_raise(error=ValueError("raised at once")),
    _yield_then_raise(None, None, error=ValueError("raised at once")),
], ids=["callback raises", "generator raises before any object", "generator raises after Nones"])
def test_error_without_items_is_reported_at_once(crawl, caplog, output):
    crawler, spider, sink, scraper = crawl
    spider.output = output
    request = Request(URL, headers={"Referer": "http://example.com/from"})
    response = response_for(request)
    scraper.scrape_response(request, response)
    [record] = errors(caplog)
    assert record.getMessage() == (
        f"Spider error processing <GET {URL}> (referer: http://example.com/from)")
    assert str(record.exc_info[1]) == "raised at once"
    [(failure, signal_response, signal_spider)] = crawler.spider_errors
    assert isinstance(failure, Failure) and str(failure.value) == "raised at once"
    assert failure.request is request
    assert signal_response is response and signal_spider is spider
    assert crawler.stats.get_value("spider_exceptions/ValueError") == 1
    assert crawler.stats.get_value("spider_exceptions/count") == 1  # Scrapy 2.19's total
    assert sink.of("items") == [] and sink.of("close_spider") == []


def test_error_after_requests_only_is_reported_at_once_and_requests_kept(crawl, caplog):
    crawler, spider, sink, scraper = crawl
    spider.output = _yield_then_raise(Request(f"{URL}/0"), error=KeyError("k"))
    request = Request(URL)
    assert scraper.scrape_response(request, response_for(request)) == (0, 1)
    assert [r.getMessage() for r in errors(caplog)] == [
        f"Spider error processing <GET {URL}> (referer: None)"]
    assert crawler.stats.get_value("spider_exceptions/KeyError") == 1
    assert sink.calls == [("requests", urls(1), False)]


@pytest.mark.parametrize("output, reason, items", [
    (lambda r: _raise(CloseSpider("enough")), "enough", []),
    (lambda r: _raise(CloseSpider("")), "cancelled", []),
    (_yield_then_raise(error=CloseSpider("done")), "done", []),
    (_yield_then_raise({"a": 1}, error=CloseSpider("after")), "after", [{"a": 1}]),
], ids=["at once", "no reason", "in a generator", "after an item"])
def test_close_spider_closes_with_its_reason(crawl, caplog, output, reason, items):
    crawler, spider, sink, scraper = crawl
    spider.output = output
    request = Request(URL)
    scraper.scrape_response(request, response_for(request))
    assert sink.of("close_spider") == [("close_spider", reason)]
    # items yielded before it go on without an error to report
    assert [(c[1], c[3]) for c in sink.of("items")] == ([(items, None)] if items else [])
    assert not errors(caplog) and crawler.spider_errors == []


def test_report_spider_error_logs_signals_and_counts(crawl, caplog):
    crawler, spider, sink, scraper = crawl
    request = Request(URL)
    response = response_for(request)
    try:
        raise TypeError("bad")
    except TypeError as e:
        error = e
    report_spider_error(crawler, error, request, response)
    [record] = errors(caplog)
    assert record.getMessage() == f"Spider error processing <GET {URL}> (referer: None)"
    assert record.exc_info[1] is error
    assert crawler.spider_errors[0][0].value is error
    assert crawler.stats.get_value("spider_exceptions/TypeError") == 1


# --- download failures ------------------------------------------------------------------


def test_errback_is_called_with_a_failure_and_its_output_handed_on(crawl, caplog):
    crawler, spider, sink, scraper = crawl
    seen = []

    def errback(failure):
        seen.append(failure)
        yield {"failed": failure.request.url}
        yield Request(f"{URL}/retry")

    request = Request(URL, callback=spider.parse, errback=errback)
    error = DownloadError("connection refused", url=URL)
    assert scraper.scrape_failure(request, error) == (1, 1)
    [failure] = seen
    assert isinstance(failure, Failure)
    assert failure.value is error and failure.request is request
    assert sink.calls == [("requests", [f"{URL}/retry"], False),
                          ("items", [{"failed": URL}], None, None)]
    assert not errors(caplog)


@pytest.mark.parametrize("error, message, traceback", [
    (DownloadError("connection refused"), f"Error downloading <GET {URL}>: connection refused",
     False),
    (DownloadError(), f"Error downloading <GET {URL}>: DownloadError", False),
    (RuntimeError("middleware bug"), f"Error downloading <GET {URL}>", True),
    (IgnoreRequest("filtered"), None, False),
], ids=["download error", "no message", "other error: with its traceback", "IgnoreRequest"])
def test_no_errback_logs_error_downloading(crawl, caplog, error, message, traceback):
    crawler, spider, sink, scraper = crawl
    request = Request(URL)
    assert scraper.scrape_failure(request, error) == (0, 0)
    logged = errors(caplog)
    if message is None:
        assert logged == []
    else:
        [record] = logged
        assert record.getMessage() == message
        assert (record.exc_info is not None and record.exc_info[1] is error) is traceback
    assert sink.calls == [] and crawler.spider_errors == []


def test_close_spider_as_a_download_error_closes_the_spider(crawl, caplog):
    crawler, spider, sink, scraper = crawl
    scraper.scrape_failure(Request(URL), CloseSpider("stop now"))
    assert sink.calls == [("close_spider", "stop now")]
    assert not errors(caplog)


def test_errback_that_raises_is_a_spider_error_then_the_download_error_is_logged(crawl, caplog):
    crawler, spider, sink, scraper = crawl
    request = Request(URL, callback=spider.parse, errback=lambda failure: _raise(ValueError("errback bug")))
    scraper.scrape_failure(request, DownloadError("timed out"))
    assert [r.getMessage() for r in errors(caplog)] == [
        f"Spider error processing <GET {URL}> (referer: None)",
        f"Error downloading <GET {URL}>: timed out",
    ]
    [(failure, response, _)] = crawler.spider_errors
    assert str(failure.value) == "errback bug" and response is None
    assert crawler.stats.get_value("spider_exceptions/ValueError") == 1


def test_errback_reraising_the_error_only_logs_it(crawl, caplog):
    crawler, spider, sink, scraper = crawl
    request = Request(URL, callback=spider.parse, errback=lambda failure: _raise(failure.value))
    scraper.scrape_failure(request, DownloadError("timed out"))
    assert [r.getMessage() for r in errors(caplog)] == [
        f"Error downloading <GET {URL}>: timed out"]
    assert crawler.spider_errors == []


def test_errback_generator_raising_midway_keeps_its_items_and_logs(crawl, caplog):
    crawler, spider, sink, scraper = crawl

    def errback(failure):
        yield {"a": 1}
        raise DownloadError("errback gave up")

    request = Request(URL, callback=spider.parse, errback=errback)
    assert scraper.scrape_failure(request, DownloadError("timed out")) == (1, 0)
    assert [r.getMessage() for r in errors(caplog)] == [
        f"Error downloading <GET {URL}>: errback gave up"]
    assert sink.calls == [("items", [{"a": 1}], None, None)]


# --- done leases ------------------------------------------------------------------------


def test_leases_of_finished_requests_are_taken_once(crawl):
    crawler, spider, sink, scraper = crawl
    spider.output = lambda r: _raise(ValueError("still done"))
    leased = []
    for i in range(3):
        request = Request(f"{URL}/{i}")
        if i != 1:  # no lease (a memory frontier, or the crawl's own machinery)
            request._lease = f"lease-{i}"
            leased.append(request._lease)
        scraper.scrape_response(request, response_for(request))
    failed = Request(f"{URL}/failed")
    failed._lease = "lease-failed"
    scraper.scrape_failure(failed, DownloadError("refused"))
    assert scraper.take_done_leases() == leased + ["lease-failed"]
    assert scraper.take_done_leases() == []


# --- start requests ---------------------------------------------------------------------


def _starts(*objs):
    def starts():
        for obj in objs:
            yield _raise(obj) if isinstance(obj, Exception) else obj
    return starts


START = [Request(u) for u in urls(5, "http://example.com/start")]

START_REQUESTS = [
    # id, start_requests outputs, start_skip, pull counts, expected (urls, consumed, exhausted)
    ("all at once", START, 0, [10], [(START, 5, True)]),
    ("in pulls", START, 0, [2, 2, 2], [(START[:2], 2, False), (START[2:4], 2, False),
                                       (START[4:], 1, True)]),
    ("exact count leaves them open", START, 0, [5, 1], [(START, 5, False), ([], 0, True)]),
    ("skip what an earlier run scheduled", START, 2, [10], [(START[2:], 3, True)]),
    ("skip past the end", START, 7, [3], [([], 0, True)]),
    ("non-Request dropped but counted", [START[0], "oops", START[1]], 0, [10],
     [([START[0], START[1]], 3, True)]),
    ("raising ends them", [START[0], ValueError("start broke"), START[1]], 0, [10, 10],
     [([START[0]], 1, True), ([], 0, True)]),
]


@pytest.mark.parametrize("outputs, skip, pulls, expected",
                         [row[1:] for row in START_REQUESTS], ids=[row[0] for row in START_REQUESTS])
def test_pull_start_requests(outputs, skip, pulls, expected):
    crawler = get_crawler(TableSpider)
    crawler.spider = spider = TableSpider.from_crawler(crawler)
    spider.starts = _starts(*outputs)
    sink = RecordingSink()
    scraper = Scraper(crawler, sink, start_skip=skip)
    scraper.open_start_requests()
    got = [scraper.pull_start_requests(n) for n in pulls]
    assert got == expected
    assert sink.calls == []  # the caller sends them, with the count


def test_start_request_errors_are_logged(caplog):
    crawler = get_crawler(TableSpider)
    crawler.spider = spider = TableSpider.from_crawler(crawler)
    spider.starts = _starts(START[0], 42, ValueError("start broke"))
    scraper = Scraper(crawler, RecordingSink())
    scraper.open_start_requests()
    assert scraper.pull_start_requests(10) == ([START[0]], 2, True)
    first, second = errors(caplog)
    assert first.getMessage() == (
        "start_requests must yield Request objects or items, got 'int': 42")
    # Scrapy 2.19's message, spider_error and stats
    assert second.getMessage() == "Error while reading start items and requests: start broke."
    assert str(second.exc_info[1]) == "start broke"
    assert scraper.start_error  # the crawl closes with start_error (issue 17)
    assert crawler.stats.get_value("spider_exceptions/count") == 1
    assert crawler.stats.get_value("spider_exceptions/ValueError") == 1


def test_start_requests_raising_on_call_end_them(caplog):
    crawler = get_crawler(TableSpider)
    crawler.spider = spider = TableSpider.from_crawler(crawler)
    spider.starts = lambda: _raise(RuntimeError("no start"))
    scraper = Scraper(crawler, RecordingSink())
    scraper.open_start_requests()
    assert scraper.pull_start_requests(3) == ([], 0, True)
    [record] = errors(caplog)
    assert record.getMessage() == "Error while reading start items and requests: no start."
    assert str(record.exc_info[1]) == "no start"


def test_start_requests_go_through_the_spider_middlewares():
    crawler = get_crawler(TableSpider, {"SPIDER_MIDDLEWARES": {
        "tests.core.test_scraper.TagStartMiddleware": 10}})
    crawler.spider = spider = TableSpider.from_crawler(crawler)
    spider.starts = lambda: iter([Request(u) for u in urls(3)])
    scraper = Scraper(crawler, RecordingSink(), start_skip=1)
    batch, consumed, exhausted = scraper.pull_start_requests(5)  # opened on first pull
    assert [(r.url, r.meta.get("tagged")) for r in batch] == [
        (u, True) for u in urls(3)[1:]] + [(f"{URL}/extra", True)]
    assert (consumed, exhausted) == (3, True)


class TagStartMiddleware:
    """Marks each start request and adds one at the end."""

    def process_start_requests(self, start_requests, spider):
        for request in start_requests:
            request.meta["tagged"] = True
            yield request
        yield Request(f"{URL}/extra", meta={"tagged": True})


def test_exhausted_start_requests_are_not_called():
    crawler = get_crawler(TableSpider)
    crawler.spider = spider = TableSpider.from_crawler(crawler)
    called = []
    spider.starts = lambda: called.append(True) or iter(START)
    scraper = Scraper(crawler, RecordingSink(), start_exhausted=True)
    scraper.open_start_requests()
    assert scraper.pull_start_requests(5) == ([], 0, True)
    assert called == []


# --- spider.state snapshots -------------------------------------------------------------


def test_spider_state_snapshot(crawl, caplog):
    crawler, spider, sink, scraper = crawl
    assert scraper.spider_state_snapshot() is None  # no state
    spider.state = {"pages": 3, "seen": ["a", "b"]}
    snapshot = scraper.spider_state_snapshot()
    assert pickle.loads(base64.b64decode(snapshot.encode("ascii"))) == spider.state
    assert not errors(caplog)


def test_unpicklable_spider_state_is_logged(crawl, caplog):
    crawler, spider, sink, scraper = crawl
    spider.state = {"lock": threading.Lock()}
    assert scraper.spider_state_snapshot() is None
    [record] = errors(caplog)
    assert record.getMessage().startswith(
        "spider.state cannot be saved (it must be picklable): ")
    assert "lock" in record.getMessage()
