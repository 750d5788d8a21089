"""The default spider middlewares' output in one pass (crawlfw/spidermiddlewares/
_default_chain.py) does exactly what their chain of process_spider_output generators
does: on a table of settings, spiders, responses and callback outputs, both paths give
the same elements in the same order (depth, priority, Referer), the same stats, the
same log lines, the same interleaving with the callback, and the same error."""

import itertools
import logging

import pytest

from crawlfw.core.flow.spidermw import SpiderMiddlewareManager
from crawlfw.http import FormRequest, Request, Response
from crawlfw.spidermiddlewares._default_chain import default_chain_plan
from crawlfw.spidermiddlewares.depth import DepthMiddleware
from crawlfw.spiders import Spider
from tests.downloadermiddlewares._support import close_crawler, get_crawler, open_spider


class _Plain(Spider):
    name = "test"


class _Allowed(Spider):
    name = "test"
    allowed_domains = ["example.com"]


_MW = "crawlfw.spidermiddlewares."
SETTINGS = [
    {},
    {"DEPTH_LIMIT": 2},
    {"DEPTH_LIMIT": 1, "DEPTH_PRIORITY": 1, "DEPTH_STATS_VERBOSE": True},
    {"DEPTH_PRIORITY": -2, "DEPTH_STATS": False},
    {"URLLENGTH_LIMIT": 40},
    {"REFERER_ENABLED": False},
    {"REFERRER_POLICY": "same-origin"},  # not the legacy policy: the chain itself runs
    {"SPIDER_MIDDLEWARES": {_MW + "depth.DepthMiddleware": None}},
    {"SPIDER_MIDDLEWARES": {_MW + "offsite.OffsiteMiddleware": None,
                            _MW + "urllength.UrlLengthMiddleware": None}},
    {"SPIDER_MIDDLEWARES": {_MW + "depth.DepthMiddleware": None,
                            _MW + "referer.RefererMiddleware": None,
                            _MW + "urllength.UrlLengthMiddleware": None}},
]


def _response(kind):
    if kind == "start":
        request = Request("http://example.com/")
        return Response("http://example.com/", request=request)
    if kind == "deep":
        request = Request("https://example.com/dir/page?q=1#f", meta={"depth": 1})
        return Response("https://example.com/dir/page?q=1#f", request=request)
    request = Request("http://www.example.com/x", meta={"depth": 2})
    return Response("http://www.example.com/x", request=request,
                    headers={"Referrer-Policy": "origin"})


def _outputs(events, fail):
    def make():
        yield Request("http://example.com/a")
        yield {"item": 1}
        yield Request("http://other.org/b")
        yield Request("http://example.com/" + "x" * 60)
        if fail:
            raise ValueError("callback failed")
        yield Request("http://other.org/c", dont_filter=True)
        yield Request("http://example.com/d", meta={"referrer_policy": "no-referrer"})
        yield Request("http://example.com/e", headers={"Referer": "http://mine/"})
        yield Request("http://example.com/f", encoding="latin-1")
        yield FormRequest("http://sub.example.com/g", formdata={"a": "1"})
        yield "a string"
        yield None
        yield Request("http://example.com/h", meta={"depth": 7}, priority=3)
        yield Request("http://example.com/i", meta={"referrer_policy": "unsafe-url"})
        yield Request("data:,x")
        yield Request("http://other.org/b")  # a second one to the same offsite host

    for i, obj in enumerate(make()):
        events.append(("callback", i))
        yield obj


def _seen(obj):
    if isinstance(obj, Request):
        return (type(obj).__name__, obj.url, obj._meta, obj.priority,
                obj.headers.getlist(b"Referer"), obj.dont_filter)
    return obj


def _run(settings, spidercls, response_kind, fail, fused, caplog):
    crawler = get_crawler(settings, spidercls)
    spider = open_spider(crawler)
    try:
        manager = SpiderMiddlewareManager.from_crawler(crawler)
        if not fused:  # the chain of generators: the manager's general path
            manager._output_plan = (list(manager.methods["process_spider_output"]), None, None)
        response = _response(response_kind)
        events = []
        caplog.clear()
        output = manager._process_spider_output(response, _outputs(events, fail), spider)
        events.append(("returned", None))
        error = None
        try:
            for obj in output:
                events.append(("consumer", _seen(obj)))
        except ValueError as e:
            error = str(e)
        stats = {k: v for k, v in crawler.stats.get_stats().items() if k != "start_time"}
        logs = [(r.name, r.levelno, r.getMessage()) for r in caplog.records
                if r.name.startswith("crawlfw.spidermiddlewares")]
        took_fast_path = manager._output_plan[1] is not None
        return (events, error, stats, logs, dict(response.meta)), took_fast_path
    finally:
        close_crawler(crawler, spider)


@pytest.mark.parametrize(
    ("settings", "spidercls", "response_kind", "fail"),
    list(itertools.product(SETTINGS, [_Plain, _Allowed], ["start", "deep", "policy"],
                           [False, True])),
)
def test_one_pass_does_what_the_chain_does(settings, spidercls, response_kind, fail, caplog):
    caplog.set_level(logging.DEBUG)
    chain, _ = _run(settings, spidercls, response_kind, fail, False, caplog)
    fused, took_fast_path = _run(settings, spidercls, response_kind, fail, True, caplog)
    assert took_fast_path  # every table row has only default middlewares
    assert fused == chain


class _MyDepth(DepthMiddleware):
    pass


class _Other:
    def process_spider_output(self, response, result, spider):
        return result


@pytest.mark.parametrize(
    "middlewares",
    [
        {"tests.spidermiddlewares.test_default_chain._Other": 600},
        {_MW + "depth.DepthMiddleware": None,
         "tests.spidermiddlewares.test_default_chain._MyDepth": 900},
        {_MW + "depth.DepthMiddleware": 100},  # another order
    ],
)
def test_any_other_middleware_keeps_the_chain(middlewares):
    crawler = get_crawler({"SPIDER_MIDDLEWARES": middlewares})
    spider = open_spider(crawler)
    try:
        manager = SpiderMiddlewareManager.from_crawler(crawler)
        assert default_chain_plan(manager.methods["process_spider_output"]) is None
    finally:
        close_crawler(crawler, spider)


def test_a_method_set_on_the_instance_keeps_the_chain():
    crawler = get_crawler()
    spider = open_spider(crawler)
    try:
        manager = SpiderMiddlewareManager.from_crawler(crawler)
        methods = manager.methods["process_spider_output"]
        assert default_chain_plan(methods) is not None
        depth = next(m.__self__ for m in methods if isinstance(m.__self__, DepthMiddleware))
        depth.process_spider_output = lambda response, result, spider: result
        assert default_chain_plan(methods) is None
    finally:
        close_crawler(crawler, spider)
