"""CrawlfwJSONEncoder (Scrapy 1.2 ScrapyJSONEncoder) conversions."""

import datetime
import decimal
import json

import pytest

from crawlfw.http import HtmlResponse, Request, Response
from crawlfw.item import Field, Item
from crawlfw.utils import serialize
from crawlfw.utils.serialize import (
    CrawlfwJSONDecoder,
    CrawlfwJSONEncoder,
    ScrapyJSONDecoder,
    ScrapyJSONEncoder,
)


class Book(Item):
    title = Field()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({3}, [3]),
        (frozenset(["a"]), ["a"]),
        (datetime.datetime(2010, 1, 2, 10, 11, 12, 999), "2010-01-02 10:11:12"),
        (datetime.date(2010, 1, 2), "2010-01-02"),
        (datetime.time(10, 11, 12), "10:11:12"),
        (decimal.Decimal("1000.12"), "1000.12"),
        (Book(title="Dune"), {"title": "Dune"}),
        (Request("http://www.example.com/lala"), "<Request GET http://www.example.com/lala>"),
        (Request("http://example.com/", method="POST"), "<Request POST http://example.com/>"),
        (Response("http://www.example.com/lala"), "<Response 200 http://www.example.com/lala>"),
        (HtmlResponse("http://example.com/", status=404), "<HtmlResponse 404 http://example.com/>"),
        ({"nested": [datetime.date(2020, 5, 6)]}, {"nested": ["2020-05-06"]}),
    ],
)
def test_encodes(value, expected):
    assert json.loads(CrawlfwJSONEncoder().encode(value)) == expected


def test_unknown_type_raises_type_error_naming_it():
    class Thing:
        pass

    with pytest.raises(TypeError, match="Thing"):
        CrawlfwJSONEncoder().encode(Thing())


def test_encoder_options_pass_through():
    assert CrawlfwJSONEncoder(ensure_ascii=False).encode({"a": "é"}) == '{"a": "é"}'
    assert CrawlfwJSONEncoder(sort_keys=True).encode({"b": 1, "a": 2}) == '{"a": 2, "b": 1}'


def test_scrapy_names_are_aliases():
    assert ScrapyJSONEncoder is CrawlfwJSONEncoder
    assert ScrapyJSONDecoder is CrawlfwJSONDecoder
    assert CrawlfwJSONDecoder().decode('{"a": [1]}') == {"a": [1]}


def test_exported_names():
    assert sorted(serialize.__all__) == sorted(
        ["CrawlfwJSONEncoder", "CrawlfwJSONDecoder", "ScrapyJSONEncoder", "ScrapyJSONDecoder"]
    )
