import json

import pytest

from crawlfw.http import FormRequest, Request
from crawlfw.spiders import Spider
from crawlfw.utils.reqser import request_from_dict, request_to_dict


class TestSpider(Spider):
    __test__ = False
    name = "reqser"

    def parse_item(self, response):
        pass

    def handle_error(self, failure):
        pass

    def __parse_private(self, response):
        pass

    def private_callback(self):
        return self.__parse_private


class OtherSpider(Spider):
    name = "other"

    def parse(self, response):
        pass


def module_function(response):
    pass


@pytest.fixture
def spider():
    return TestSpider()


def _roundtrip(request, spider=None):
    d = request_to_dict(request, spider=spider)
    d = json.loads(json.dumps(d))  # the dict must be JSON-able
    return d, request_from_dict(d, spider=spider)


def _assert_same(r1, r2):
    assert type(r1) is type(r2)
    for attr in ("url", "method", "body", "cookies", "meta", "encoding", "priority",
                 "dont_filter", "flags", "cb_kwargs", "callback", "errback"):
        assert getattr(r1, attr) == getattr(r2, attr), attr
    assert sorted(r1.headers.items()) == sorted(r2.headers.items())


def test_basic():
    _assert_same(Request("http://www.example.com"), _roundtrip(Request("http://www.example.com"))[1])


def test_all_attributes():
    r = Request(
        "http://www.example.com/p?q=1",
        method="POST",
        body=b"\x00\xff binary \xe9",
        headers={"X-Bin": b"caf\xc3\xa9", "Accept": ["a", "b"]},
        cookies={"currency": "usd"},
        meta={"a": "b", "n": [1, 2]},
        encoding="latin-1",
        priority=20,
        dont_filter=True,
        flags=["f1"],
        cb_kwargs={"k": 1},
    )
    d, r2 = _roundtrip(r)
    _assert_same(r, r2)
    assert isinstance(d["body"], str)
    assert d["body"].encode("latin-1") == b"\x00\xff binary \xe9"
    assert d["headers"]["Accept"] == ["a", "b"]
    assert "_class" not in d


def test_subclass_recorded():
    r = FormRequest("http://www.example.com", formdata={"a": "1"})
    d, r2 = _roundtrip(r)
    assert d["_class"] == f"{FormRequest.__module__}.FormRequest"
    _assert_same(r, r2)


def test_callbacks_by_name(spider):
    r = Request("http://www.example.com", callback=spider.parse_item, errback=spider.handle_error)
    d, r2 = _roundtrip(r, spider)
    assert d["callback"] == "parse_item"
    assert d["errback"] == "handle_error"
    assert r2.callback == spider.parse_item
    assert r2.errback == spider.handle_error


def test_private_callback(spider):
    r = Request("http://www.example.com", callback=spider.private_callback())
    d, r2 = _roundtrip(r, spider)
    assert d["callback"] == "_TestSpider__parse_private"
    assert r2.callback == spider.private_callback()


@pytest.mark.parametrize("make_callback", [
    lambda spider: OtherSpider().parse,
    lambda spider: module_function,
    lambda spider: (lambda response: None),
])
def test_callback_not_a_spider_method(spider, make_callback):
    r = Request("http://www.example.com", callback=make_callback(spider))
    with pytest.raises(ValueError, match="is not an instance method in"):
        request_to_dict(r, spider=spider)


def test_callback_without_spider():
    r = Request("http://www.example.com", callback=module_function)
    with pytest.raises(ValueError, match="module_function"):
        request_to_dict(r)


def test_unknown_callback_name(spider):
    d = request_to_dict(Request("http://www.example.com"))
    d["callback"] = "no_such_method"
    with pytest.raises(ValueError, match="Method 'no_such_method' not found in"):
        request_from_dict(d, spider=spider)


def test_from_dict_without_spider_drops_callbacks(spider):
    d = request_to_dict(Request("http://www.example.com", callback=spider.parse_item), spider)
    assert request_from_dict(d).callback is None


# The compact form (what the frontiers store): only the keys that differ from the default.
COMPACT_CASES = [
    # (request kwargs, the compact dict's keys besides "url")
    ({}, set()),
    ({"callback": "parse_item"}, {"callback"}),
    ({"callback": "parse_item", "priority": -3, "dont_filter": True, "method": "HEAD"},
     {"callback", "priority", "dont_filter", "method"}),
    ({"callback": "parse_item", "errback": "handle_error"}, {"callback", "errback"}),
    ({"meta": {"depth": 2}}, {"meta"}),
    ({"headers": {"Referer": "http://www.example.com/"}}, {"headers"}),
    ({"method": "POST", "body": b"a=1"}, {"method", "body"}),
    ({"cookies": {"c": "1"}}, {"cookies"}),
    ({"encoding": "latin-1"}, {"_encoding"}),
    ({"flags": ["cached"]}, {"flags"}),
    ({"callback": "parse_item", "cb_kwargs": {"page": 2}}, {"callback", "cb_kwargs"}),
]


@pytest.mark.parametrize("kwargs, keys", COMPACT_CASES)
def test_compact_dict_keeps_only_what_differs_and_round_trips(spider, kwargs, keys):
    kwargs = {k: getattr(spider, v) if k in ("callback", "errback") else v
              for k, v in kwargs.items()}
    request = Request("http://www.example.com/p?q=1", **kwargs)
    d = json.loads(json.dumps(request_to_dict(request, spider, compact=True)))
    assert set(d) == {"url"} | keys
    _assert_same(request, request_from_dict(d, spider))


def test_compact_dict_of_a_subclass_names_it(spider):
    request = FormRequest("http://www.example.com", formdata={"a": "1"})
    d = request_to_dict(request, spider, compact=True)
    assert d["_class"] == f"{FormRequest.__module__}.FormRequest"
    _assert_same(request, request_from_dict(json.loads(json.dumps(d)), spider))
