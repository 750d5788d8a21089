"""DepthMiddleware: depth meta, limit, priority, stats."""

import logging

import pytest

from crawlfw.http import Request, Response
from crawlfw.spidermiddlewares.depth import DepthMiddleware
from tests.downloadermiddlewares._support import close_crawler, get_crawler, open_spider


@pytest.fixture
def setup():
    made = []

    def start(settings=None):
        crawler = get_crawler(settings)
        spider = open_spider(crawler)
        made.append((crawler, spider))
        return crawler, spider, DepthMiddleware.from_crawler(crawler)

    yield start
    for crawler, spider in made:
        close_crawler(crawler, spider)


def response_at(depth=None):
    meta = {} if depth is None else {"depth": depth}
    request = Request("http://example.com/", meta=meta)
    return Response("http://example.com/", request=request)


def test_start_response_is_depth_zero(setup):
    crawler, spider, mw = setup()
    response = response_at(None)
    out = list(
        mw.process_spider_output(response, [Request("http://example.com/a"), {"i": 1}], spider)
    )
    assert response.meta["depth"] == 0
    assert out[0].meta["depth"] == 1
    assert out[1] == {"i": 1}
    assert crawler.stats.get_value("request_depth_max") == 1


@pytest.mark.parametrize(
    "limit, response_depth, kept",
    [(0, 10, True), (2, 0, True), (2, 1, True), (2, 2, False), (1, 1, False)],
)
def test_limit(setup, caplog, limit, response_depth, kept):
    crawler, spider, mw = setup({"DEPTH_LIMIT": limit})
    caplog.set_level(logging.DEBUG, logger="crawlfw.spidermiddlewares.depth")
    request = Request("http://example.com/deep")
    out = list(mw.process_spider_output(response_at(response_depth), [request], spider))
    assert out == ([request] if kept else [])
    if not kept:
        assert caplog.records[-1].getMessage().strip() == (
            f"Ignoring link (depth > {limit}): http://example.com/deep"
        )


@pytest.mark.parametrize("prio, expected", [(0, 5), (1, 2), (-1, 8)])
def test_priority(setup, prio, expected):
    crawler, spider, mw = setup({"DEPTH_PRIORITY": prio})
    request = Request("http://example.com/", priority=5)
    list(mw.process_spider_output(response_at(2), [request], spider))
    assert request.priority == expected  # priority -= depth * DEPTH_PRIORITY (depth 3)


def test_verbose_stats(setup):
    crawler, spider, mw = setup({"DEPTH_STATS_VERBOSE": True})
    list(mw.process_spider_output(response_at(None), [Request("http://e.com/1")], spider))
    list(
        mw.process_spider_output(
            response_at(1), [Request("http://e.com/2"), Request("http://e.com/3")], spider
        )
    )
    get = crawler.stats.get_value
    assert (
        get("request_depth_count/0"),
        get("request_depth_count/1"),
        get("request_depth_count/2"),
    ) == (1, 1, 2)
    assert get("request_depth_max") == 2


def test_no_stats(setup):
    crawler, spider, mw = setup({"DEPTH_STATS": False})
    list(mw.process_spider_output(response_at(3), [Request("http://e.com/1")], spider))
    assert crawler.stats.get_value("request_depth_max") is None


def test_none_result(setup):
    crawler, spider, mw = setup()
    assert list(mw.process_spider_output(response_at(0), None, spider)) == []


def _scrapy12_output(mw, response, result, spider):
    """The reference: Scrapy 1.2's DepthMiddleware rule, per request (its ``_filter``),
    with crawlfw's stats names."""
    if "depth" not in response.meta:
        response.meta["depth"] = 0
        if mw.stats is not None and mw.verbose_stats:
            mw.stats.inc_value("request_depth_count/0", spider=spider)
    for request in result:
        if isinstance(request, Request):
            depth = response.meta["depth"] + 1
            request.meta["depth"] = depth
            if mw.prio:
                request.priority -= depth * mw.prio
            if mw.maxdepth and depth > mw.maxdepth:
                continue
            if mw.stats is not None:
                if mw.verbose_stats:
                    mw.stats.inc_value(f"request_depth_count/{depth}", spider=spider)
                mw.stats.max_value("request_depth_max", depth, spider=spider)
        yield request


@pytest.mark.parametrize(
    "settings",
    [{}, {"DEPTH_STATS_VERBOSE": True}, {"DEPTH_LIMIT": 3}, {"DEPTH_PRIORITY": -2},
     {"DEPTH_STATS": False}],
)
def test_output_same_as_scrapy_1_2_rule(setup, settings):
    # process_spider_output gives the same output, request meta, priorities and stats
    # as Scrapy 1.2's per-request rule.
    results = []
    for reference in (False, True):
        crawler, spider, _ = setup(settings)
        mw = DepthMiddleware.from_crawler(crawler)
        out_all = []
        for response_depth in (None, 2, 0, 3, 1):
            response = response_at(response_depth)
            produced = [Request(f"http://example.com/{i}", priority=i) for i in range(3)]
            produced.insert(1, {"item": 1})
            if reference:
                out = list(_scrapy12_output(mw, response, produced, spider))
            else:
                out = list(mw.process_spider_output(response, produced, spider))
            out_all.append(
                [(o.url, o.meta["depth"], o.priority) if isinstance(o, Request) else o for o in out]
            )
        stats = {k: v for k, v in crawler.stats.get_stats().items() if k.startswith("request_depth")}
        results.append((out_all, stats))
    assert results[0] == results[1]
    assert results[0][0][0]  # something was produced


def test_one_path_per_rule():
    # the rule lives in one place: no per-request method beside the inline loop
    assert not hasattr(DepthMiddleware, "_filter")


# -- Scrapy 2.13's per-request hooks (issue 29) ----------------------------------------

def test_depth_get_processed_request_and_async_output():
    import asyncio

    from crawlfw.http import Request, Response
    from crawlfw.spidermiddlewares.depth import DepthMiddleware
    crawler = get_crawler()
    stats = crawler.stats
    mw = DepthMiddleware(maxdepth=2, stats=stats, verbose_stats=True, prio=1)
    response = Response("http://e.com/", request=Request("http://e.com/"))
    response.meta["depth"] = 1
    ok = mw.get_processed_request(Request("http://e.com/a"), response)
    assert ok.meta["depth"] == 2 and ok.priority == -2
    start = Request("http://e.com/s")
    assert mw.get_processed_request(start, None) is start and "depth" not in start.meta
    response.meta["depth"] = 2
    assert mw.get_processed_request(Request("http://e.com/deep"), response) is None
    assert stats.get_value("request_depth_max") == 2

    async def run():
        async def result():
            for item in (Request("http://e.com/b"), {"x": 1}):
                yield item
        first = Response("http://e.com/first", request=Request("http://e.com/first"))
        return first, [o async for o in mw.process_spider_output_async(first, result())]
    first, out = asyncio.run(run())
    assert first.meta["depth"] == 0 and out[0].meta["depth"] == 1 and out[1] == {"x": 1}
    close_crawler(crawler)
