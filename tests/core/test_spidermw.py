"""SpiderMiddlewareManager: the four caller cases of the module docstring, hook order,
output validation, start requests."""

import pytest

from crawlfw.core.flow.downloadermw import _InvalidOutput
from crawlfw.core.flow.spidermw import SpiderMiddlewareManager
from crawlfw.http import Request, Response
from crawlfw.settings import Settings
from crawlfw.spidermiddlewares.httperror import HttpError, HttpErrorMiddleware


def scrape_func(result, request, spider):
    """What the SpiderRunner does (Scrapy 1.2's Scraper.call_spider)."""
    if isinstance(result, Exception):
        if request.errback is not None:
            return request.errback(result)
        raise result
    return request.callback(result)


class Log:
    """Middleware recording calls; ``tag`` marks each output element passing through."""

    def __init__(self, name, log, input_error=None, recover=None):
        self.name = name
        self.log = log
        self.input_error = input_error
        self.recover = recover

    def process_spider_input(self, response, spider):
        self.log.append((self.name, "input"))
        if self.input_error is not None:
            raise self.input_error

    def process_spider_output(self, response, result, spider):
        self.log.append((self.name, "output"))  # logged when called, not when iterated
        return (x if isinstance(x, Request) else (self.name, x) for x in result)

    def process_spider_exception(self, response, exception, spider):
        self.log.append((self.name, "exception", type(exception).__name__))
        return self.recover

    def process_start_requests(self, start_requests, spider):
        self.log.append((self.name, "start"))
        return (self._mark(r) for r in start_requests)

    def _mark(self, request):
        request.meta.setdefault("seen_by", []).append(self.name)
        return request


def make(*mws):
    return SpiderMiddlewareManager(*mws)


def response_for(callback=None, errback=None, status=200):
    request = Request("http://example.com/", callback=callback, errback=errback)
    return request, Response("http://example.com/", status=status, request=request)


def test_case1_callback_returns_list_goes_through_outputs_in_reverse():
    log = []
    mwm = make(Log("a", log), Log("b", log))
    request, response = response_for(callback=lambda r: [1, 2])
    out = list(mwm.scrape_response(scrape_func, response, request, None))
    # b is nearer to the spider: its output hook wraps first
    assert out == [("a", ("b", 1)), ("a", ("b", 2))]
    assert log == [("a", "input"), ("b", "input"), ("b", "output"), ("a", "output")]


@pytest.mark.parametrize(
    "returned, expected",
    [
        (None, []),
        ({"k": "v"}, [{"k": "v"}]),
        ("text", ["text"]),
        ((x for x in [1, 2]), [1, 2]),
    ],
)
def test_case1_single_values_and_none_are_normalised(returned, expected):
    request, response = response_for(callback=lambda r: returned)
    assert list(make().scrape_response(scrape_func, response, request, None)) == expected


def test_case1_single_request_is_wrapped():
    follow = Request("http://example.com/next")
    request, response = response_for(callback=lambda r: follow)
    assert list(make().scrape_response(scrape_func, response, request, None)) == [follow]


def test_case2_callback_raises_recovered_by_exception_hook():
    log = []
    mwm = make(Log("a", log, recover=["recovered"]), Log("b", log))

    def callback(response):
        raise ValueError("boom")

    request, response = response_for(callback=callback)
    out = list(mwm.scrape_response(scrape_func, response, request, None))
    # recovered output goes through the whole output chain (Scrapy 1.2)
    assert out == [("a", ("b", "recovered"))]
    assert ("b", "exception", "ValueError") in log
    assert log.index(("b", "exception", "ValueError")) < log.index(("a", "exception", "ValueError"))


def test_case2_callback_raises_unhandled_reaches_caller():
    log = []
    mwm = make(Log("a", log), Log("b", log))

    def callback(response):
        raise KeyError("boom")

    request, response = response_for(callback=callback)
    with pytest.raises(KeyError):
        mwm.scrape_response(scrape_func, response, request, None)
    assert [e for e in log if e[1] == "output"] == []


def test_case3_generator_raising_midway_after_some_output():
    log = []
    mwm = make(Log("a", log, recover=["never"]))

    def callback(response):
        yield 1
        raise RuntimeError("midway")

    request, response = response_for(callback=callback)
    result = iter(mwm.scrape_response(scrape_func, response, request, None))
    assert next(result) == ("a", 1)
    with pytest.raises(RuntimeError, match="midway"):
        next(result)
    # process_spider_exception is not called for iteration errors (Scrapy 1.2)
    assert not [e for e in log if e[1] == "exception"]
    # the generators are finished
    assert list(result) == []


def test_case4_input_error_goes_to_errback_and_its_output_is_processed():
    log = []
    mwm = make(Log("a", log), Log("b", log, input_error=ValueError("bad input")), Log("c", log))
    seen = []

    def errback(failure):
        seen.append(failure)
        return ["from errback"]

    request, response = response_for(callback=lambda r: ["from callback"], errback=errback)
    out = list(mwm.scrape_response(scrape_func, response, request, None))
    assert out == [("a", ("b", ("c", "from errback")))]
    assert isinstance(seen[0], ValueError)
    # c's input hook was skipped
    assert ("c", "input") not in log


def test_case4_input_error_without_errback_goes_to_exception_hooks():
    log = []
    mwm = make(Log("a", log, recover=[]), Log("b", log, input_error=ValueError("bad input")))
    request, response = response_for(callback=lambda r: ["never"])
    assert list(mwm.scrape_response(scrape_func, response, request, None)) == []
    assert ("a", "exception", "ValueError") in log


def test_http_error_is_swallowed_by_httperror_middleware():
    mwm = make(HttpErrorMiddleware(Settings()))
    request, response = response_for(callback=lambda r: ["never"], status=404)
    assert list(mwm.scrape_response(scrape_func, response, request, None)) == []


def test_http_error_reaches_errback_with_response():
    seen = []
    mwm = make(HttpErrorMiddleware(Settings()))
    request, response = response_for(
        callback=lambda r: ["never"], errback=lambda f: seen.append(f) or ["handled"], status=500
    )
    assert list(mwm.scrape_response(scrape_func, response, request, None)) == ["handled"]
    assert isinstance(seen[0], HttpError) and seen[0].response is response


class ReturnsValue:
    def __init__(self, hook, value):
        setattr(self, hook, lambda *a, **kw: value)


@pytest.mark.parametrize(
    "hook, value, message",
    [
        (
            "process_spider_input",
            [],
            "process_spider_input must return None or raise an exception, got list",
        ),
        (
            "process_spider_output",
            None,
            "process_spider_output must return an iterable, got NoneType",
        ),
        ("process_spider_output", 3, "process_spider_output must return an iterable, got int"),
    ],
)
def test_invalid_output(hook, value, message):
    request, response = response_for(callback=lambda r: [1])
    with pytest.raises(_InvalidOutput, match=message):
        make(ReturnsValue(hook, value)).scrape_response(scrape_func, response, request, None)


def test_invalid_exception_hook_output():
    def callback(response):
        raise ValueError

    request, response = response_for(callback=callback)
    mwm = make(ReturnsValue("process_spider_exception", 5))
    with pytest.raises(_InvalidOutput, match="must return None or an iterable, got int"):
        mwm.scrape_response(scrape_func, response, request, None)


def test_invalid_output_is_not_offered_to_exception_hooks():
    log = []
    mwm = make(Log("a", log, recover=["x"]), ReturnsValue("process_spider_output", 3))
    request, response = response_for(callback=lambda r: [1])
    with pytest.raises(_InvalidOutput):
        mwm.scrape_response(scrape_func, response, request, None)
    assert not [e for e in log if e[1] == "exception"]


def test_process_start_requests_reverse_order_and_lazy():
    log = []
    mwm = make(Log("a", log), Log("b", log))
    produced = []

    def start():
        for i in range(3):
            produced.append(i)
            yield Request(f"http://example.com/{i}")

    result = mwm.process_start_requests(start(), None)
    assert produced == []  # nothing consumed yet
    first = next(iter(result))
    assert first.meta["seen_by"] == ["b", "a"]
    assert produced == [0]


def test_process_start_requests_validates():
    with pytest.raises(_InvalidOutput, match="process_start_requests must return an iterable"):
        make(ReturnsValue("process_start_requests", None)).process_start_requests([], None)


def test_single_item_is_wrapped_not_iterated():
    from crawlfw.item import Field, Item

    class Product(Item):
        name = Field()

    item = Product(name="x")
    request, response = response_for(callback=lambda r: item)
    assert list(make().scrape_response(scrape_func, response, request, None)) == [item]
