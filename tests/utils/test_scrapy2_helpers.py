"""Scrapy 2's helpers in crawlfw.utils.misc, .python, .datatypes, and
spidermiddlewares.base (issue 29); expected values are what Scrapy 2.19 gives."""

import asyncio
import os
import warnings

import pytest

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.http import Request, Response
from crawlfw.spidermiddlewares.base import BaseSpiderMiddleware
from crawlfw.utils import defer
from crawlfw.utils.failure import Failure
from crawlfw.utils.misc import (
    build_from_crawler,
    is_generator_with_return_value,
    set_environ,
    walk_modules_iter,
    warn_on_generator_with_return_value,
)
from crawlfw.utils.python import (
    MutableAsyncChain,
    MutableChain,
    garbage_collect,
    get_func_args_dict,
)


def test_walk_modules_iter_is_lazy():
    names = [m.__name__ for m in walk_modules_iter("crawlfw.spidermiddlewares")]
    assert names[0] == "crawlfw.spidermiddlewares" and "crawlfw.spidermiddlewares.base" in names
    gen = walk_modules_iter("crawlfw.nosuchmodule")  # nothing raised until consumed
    with pytest.raises(ModuleNotFoundError):
        list(gen)


def test_build_from_crawler():
    class WithFromCrawler:
        @classmethod
        def from_crawler(cls, crawler, x, y=0):
            o = cls()
            o.args = (crawler, x, y)
            return o

    class Plain:
        def __init__(self, x):
            self.x = x

    class Broken:
        @classmethod
        def from_crawler(cls, crawler):
            return None

    assert build_from_crawler(WithFromCrawler, "c", 1, y=2).args == ("c", 1, 2)
    assert build_from_crawler(Plain, "c", 5).x == 5
    with pytest.raises(TypeError, match="Broken.from_crawler returned None"):
        build_from_crawler(Broken, "c")


def test_set_environ_restores():
    os.environ.pop("CRAWLFW_T1", None)
    os.environ["CRAWLFW_T2"] = "old"
    with set_environ(CRAWLFW_T1="a", CRAWLFW_T2="b"):
        assert (os.environ["CRAWLFW_T1"], os.environ["CRAWLFW_T2"]) == ("a", "b")
    assert "CRAWLFW_T1" not in os.environ and os.environ.pop("CRAWLFW_T2") == "old"


def gen_returning_value():
    yield 1
    return 2


def gen_returning_none():
    yield 1

    def inner():
        return 3  # a nested function's return does not count

    return None


def test_generators_with_a_return_value():
    assert is_generator_with_return_value(gen_returning_value) is True
    assert is_generator_with_return_value(gen_returning_none) is False
    assert is_generator_with_return_value(len) is False

    class Spider:
        settings = None

    with pytest.warns(UserWarning, match='"Spider.gen_returning_value" method is a generator'):
        warn_on_generator_with_return_value(Spider(), gen_returning_value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_on_generator_with_return_value(Spider(), gen_returning_none)


def test_python_helpers():
    def f(a, b=1, *args, c, **kw):
        pass

    assert list(get_func_args_dict(f)) == ["a", "b", "args", "c", "kw"]
    assert get_func_args_dict(print) == {} or "sep" in get_func_args_dict(print)
    with pytest.raises(TypeError, match="func must be callable, got 'int'"):
        get_func_args_dict(1)
    with pytest.warns(CrawlfwDeprecationWarning):
        chain = MutableChain([1], (2,))
    chain.extend([3])
    assert list(chain) == [1, 2, 3]

    async def agen():
        yield "b"

    async def main():
        ch = MutableAsyncChain([1], agen())
        ch.extend(["c"])
        return [x async for x in ch]

    assert asyncio.run(main()) == [1, "b", "c"]
    garbage_collect()


def test_process_chain_both():
    ok = defer.process_chain_both([lambda x: x + 1, lambda x: x * 2],
                                  [lambda f: "recovered", lambda f: f], 1)
    assert ok.result(0) == 4
    recovered = defer.process_chain_both([lambda x: 1 / 0, lambda x: x],
                                         [None, lambda f: type(f.value).__name__], 1)
    assert recovered.result(0) == "ZeroDivisionError"
    failed = defer.process_chain_both([lambda x: x], [lambda f: f], Failure(KeyError("k")))
    assert isinstance(failed.exception(0), KeyError)


class Tagging(BaseSpiderMiddleware):
    def get_processed_request(self, request, response):
        if "drop" in request.url:
            return None
        request.meta["tag"] = response.url if response is not None else "start"
        return request

    def get_processed_item(self, item, response):
        return {**item, "seen": True}


def test_base_spider_middleware():
    mw = Tagging.from_crawler("crawler")
    assert mw.crawler == "crawler"
    response = Response("http://e.com/page")
    out = list(mw.process_spider_output(
        response, [Request("http://e.com/a"), Request("http://e.com/drop"), {"a": 1}]))
    assert [type(o).__name__ for o in out] == ["Request", "dict"]
    assert out[0].meta["tag"] == "http://e.com/page" and out[1] == {"a": 1, "seen": True}

    async def start():
        yield Request("http://e.com/s")
        yield {"b": 2}

    async def main():
        started = [o async for o in mw.process_start(start())]
        more = [o async for o in mw.process_spider_output_async(response, start())]
        return started, more

    started, more = asyncio.run(main())
    assert started[0].meta["tag"] == "start" and started[1] == {"b": 2, "seen": True}
    assert more[0].meta["tag"] == "http://e.com/page"
    plain = BaseSpiderMiddleware(None)
    assert list(plain.process_spider_output(None, [1, Request("http://e.com/")]))[0] == 1
