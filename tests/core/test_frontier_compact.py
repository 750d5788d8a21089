"""Compact records of queued requests (crawlfw/core/frontier/compact.py, issue 30): a
plain request encodes to a record of its URL plus a few bytes and decodes to a request
equal to it in every attribute, with the priority its sort key holds; anything else
takes the general path (encode gives None, the frontier keeps the object)."""

import pytest

from crawlfw import Spider
from crawlfw.core.frontier.compact import MAX_EXTRA_BYTES, RequestCodec
from crawlfw.core.frontier.hostqueues import sort_key
from crawlfw.http import FormRequest, JsonRequest, Request
from crawlfw.http.request import NO_CALLBACK
from crawlfw.utils import trackref
from crawlfw.utils.reqser import request_to_dict

URL = "http://host12345.example.com/item/123456?ref=list"


class _Spider(Spider):
    name = "compact"

    def parse_item(self, response):
        pass

    def on_error(self, failure):
        pass

    def __private(self, response):
        pass

    def private_ref(self):
        return self.__private


class _Other(_Spider):
    name = "other"


SPIDER = _Spider()
OTHER = _Other()


def _plain_cases():
    s = SPIDER
    return {
        "bare": Request(URL),
        "callback": Request(URL, callback=s.parse_item),
        "depth": Request(URL, callback=s.parse_item, meta={"depth": 3}),
        "depth 0": Request(URL, meta={"depth": 0}),
        "depth 255": Request(URL, meta={"depth": 255}),
        "depth 256": Request(URL, meta={"depth": 256}),
        "depth negative": Request(URL, meta={"depth": -1}),
        "depth float": Request(URL, meta={"depth": 1.5}),
        "depth bool": Request(URL, meta={"depth": True}),
        "start": Request(URL, callback=s.parse, meta={"is_start_request": True}),
        "slot": Request(URL, meta={"download_slot": "shared", "depth": 2}),
        "scalars": Request(URL, meta={"s": "é€", "i": -7, "f": 0.25, "b": False, "n": None,
                                      "y": b"\x00\xff", "t": (1, ("x", 2.0))}),
        "errback": Request(URL, callback=s.parse_item, errback=s.on_error),
        "errback only": Request(URL, errback=s.on_error),
        "dont_filter": Request(URL, dont_filter=True),
        "head": Request(URL, method="HEAD", callback=s.parse_item),
        "post no body": Request(URL, method="POST"),
        "priority": Request(URL, priority=-5, meta={"depth": 1}),
        "priority high": Request(URL, priority=10**6),
        "cb_kwargs": Request(URL, callback=s.parse_item, cb_kwargs={"page": 2, "q": "a"}),
        "flags": Request(URL, flags=["cached", "x"]),
        "mangled": Request(URL, callback=s.private_ref()),
        "unicode url": Request("http://d.example/caf\u00e9?q=\u20ac"),
        "data url": Request("data:,hello"),
        "referer": Request(URL, callback=s.parse_item, headers={"Referer": "http://a/"}),
        "referer depth": Request(URL, headers={"Referer": b"http://a/"}, meta={"depth": 4}),
        "referer meta": Request(URL, headers={"Referer": b"http://a/"}, meta={"x": 1}),
        "referer and post": Request(URL, headers={"Referer": b"http://a/"}, method="HEAD"),
        "headers": Request(URL, headers={"Accept": "text/html", "X-Two": ["a", "b"]}),
        "everything": Request(URL, callback=s.parse_item, errback=s.on_error, method="PUT",
                              meta={"depth": 300, "k": (1, 2)}, priority=3, dont_filter=True,
                              flags=["f"], cb_kwargs={"a": None}),
    }


def _read_defaults(request):
    """Read the lazily made defaults (cookies, flags, meta, cb_kwargs): still plain."""
    request.cookies, request.flags, request.meta, request.cb_kwargs  # noqa: B018
    return request


def _general_cases():
    with_attr = Request(URL)
    with_attr.extra = 1
    deleted_cookies = Request(URL)
    del deleted_cookies.cookies
    latin = Request(URL, encoding="latin-1")
    return {
        "form": FormRequest(URL, formdata={"a": "b"}),
        "json": JsonRequest(URL, data={"a": 1}),
        "body": Request(URL, method="POST", body=b"x"),
        "cookies": Request(URL, cookies={"a": "b"}),
        "cookies list": Request(URL, cookies=[{"name": "a", "value": "b"}]),
        "encoding": latin,
        "lambda": Request(URL, callback=lambda r: None),
        "NO_CALLBACK": Request(URL, callback=NO_CALLBACK),
        "other spider's method": Request(URL, callback=OTHER.parse_item),
        "errback lambda": Request(URL, errback=lambda f: None),
        "meta list": Request(URL, meta={"items": [1, 2]}),
        "meta dict": Request(URL, meta={"item": {"a": 1}}),
        "meta object": Request(URL, meta={"o": object()}),
        "meta int key": Request(URL, meta={1: "a"}),
        "meta str subclass": Request(URL, meta={"s": type("S", (str,), {})("x")}),
        "cb_kwargs list": Request(URL, cb_kwargs={"l": []}),
        "flags not str": Request(URL, flags=[1]),
        "priority bool": Request(URL, priority=True),
        "extra attribute": with_attr,
        "deleted cookies": deleted_cookies,
        "big meta": Request(URL, meta={"blob": "x" * (MAX_EXTRA_BYTES + 1)}),
    }


def _attributes(request):
    return {name: getattr(request, name) for name in Request.attributes}


@pytest.mark.parametrize("case", sorted(_plain_cases()))
@pytest.mark.parametrize("read_defaults", [False, True])
def test_plain_request_round_trip(case, read_defaults):
    request = _plain_cases()[case]
    if read_defaults:
        _read_defaults(request)
    codec = RequestCodec(SPIDER)
    record = codec.encode(request)
    assert isinstance(record, bytes)
    key = sort_key(request.priority, bool(request.meta.get("is_start_request")))
    back = codec.decode(record, key)
    assert type(back) is Request
    assert _attributes(back) == _attributes(request)
    assert back.headers.encoding == "utf-8" and "encoding" not in vars(back.headers)
    assert dict(back.headers) == dict(request.headers)
    assert type(back.headers) is type(request.headers)
    assert request_to_dict(back, SPIDER) == request_to_dict(request, SPIDER)
    assert back.meta is not request.meta  # its own dict
    # a record costs its URL plus a few dozen bytes
    if case in ("bare", "callback", "depth", "start", "slot", "dont_filter"):
        assert len(record) <= len(request.url.encode()) + 48


def test_plain_shapes_are_short():
    codec = RequestCodec(SPIDER)
    assert len(codec.encode(Request(URL, callback=SPIDER.parse_item))) == len(URL) + 2
    assert len(codec.encode(Request(URL, callback=SPIDER.parse_item,
                                    meta={"depth": 7}))) == len(URL) + 3


@pytest.mark.parametrize("case", sorted(_general_cases()))
def test_other_requests_take_the_general_path(case):
    request = _general_cases()[case]
    assert RequestCodec(SPIDER).encode(request) is None


def test_without_a_spider_only_requests_without_callbacks_are_plain():
    codec = RequestCodec(None)
    assert codec.encode(Request(URL, callback=SPIDER.parse_item)) is None
    record = codec.encode(Request(URL, meta={"depth": 1}))
    assert codec.decode(record, 0).meta == {"depth": 1}


def test_encoding_leaves_the_request_unchanged():
    request = Request(URL, callback=SPIDER.parse_item, meta={"depth": 1})
    before = dict(vars(request))
    RequestCodec(SPIDER).encode(request)
    assert vars(request) == before


@pytest.mark.parametrize("enabled", [True, False])
def test_decoded_request_is_recorded_by_trackref_as_new(monkeypatch, enabled):
    monkeypatch.setattr(trackref, "enabled", enabled)
    codec = RequestCodec(SPIDER)
    back = codec.decode(codec.encode(Request(URL)), 0)
    assert ("_trackref_time" in vars(back)) is enabled


def test_callback_ids_are_per_codec_and_stable():
    codec = RequestCodec(SPIDER)
    a = codec.encode(Request(URL, callback=SPIDER.parse_item))
    b = codec.encode(Request(URL, callback=SPIDER.parse))
    assert a[1] != b[1]
    assert codec.encode(Request(URL, callback=SPIDER.parse_item)) == a
    assert codec.decode(b, 0).callback == SPIDER.parse


def test_a_shared_referer_is_kept_once_and_goes_with_its_last_record():
    codec = RequestCodec(SPIDER)
    referer = b"http://host12345.example.com/page/with/a/long/address?x=1"
    records = [codec.encode(Request(f"{URL}&n={i}", headers={"Referer": referer},
                                    meta={"depth": 2})) for i in range(100)]
    assert all(len(r) == len(URL) + len(f"&n={i}") + 7 for i, r in enumerate(records))
    assert len(codec._refs) == 1 and codec.table_bytes > len(referer)
    other = codec.encode(Request(URL, headers={"Referer": b"http://other/"}))
    assert len(codec._refs) == 2
    for record in records:
        assert codec.decode(record, 0).headers[b"Referer"] == referer
    assert len(codec._refs) == 1
    assert codec.decode(other, 0).headers.getlist("Referer") == [b"http://other/"]
    assert codec._refs == {} and codec._ref_ids == {} and codec.table_bytes == 0


def test_header_types_that_are_not_plain():
    codec = RequestCodec(SPIDER)
    request = Request(URL, headers={"Referer": b"http://a/"})
    dict.__setitem__(request.headers, b"X", "text")  # (no Headers method makes this)
    assert codec.encode(request) is None
    request = Request(URL)
    dict.__setitem__(request.headers, b"Referer", (b"a",))
    assert codec.encode(request) is None


@pytest.mark.parametrize("case", sorted(_plain_cases()))
@pytest.mark.parametrize("trackref_on", [False, True])
def test_a_known_callback_gives_the_record_its_first_encoding_gave(case, trackref_on,
                                                                   monkeypatch):
    """A request's first encoding learns its callback's id (the general path); later
    ones of the same shape take the short shapes' fast path: the same record."""
    monkeypatch.setattr(trackref, "enabled", trackref_on)
    codec = RequestCodec(SPIDER)
    first = codec.encode(_plain_cases()[case])
    again = codec.encode(_plain_cases()[case])
    assert again == first
    back = codec.decode(again, 0)
    assert back.url == _plain_cases()[case].url
    assert dict(back.headers) == dict(_plain_cases()[case].headers)
