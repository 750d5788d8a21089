"""Item exporters: every format is written, parsed back and compared."""

import ast
import csv
import datetime
import decimal
import gc
import io
import json
import marshal
import pickle

import pytest
from lxml import etree

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.exporters import (
    BaseItemExporter,
    CsvItemExporter,
    JsonItemExporter,
    JsonLinesItemExporter,
    MarshalItemExporter,
    PickleItemExporter,
    PprintItemExporter,
    PythonItemExporter,
    XmlItemExporter,
)
from crawlfw.item import Field, Item


class Product(Item):
    name = Field()
    price = Field(serializer=lambda v: f"${v}")
    tags = Field()


class Plain(Item):
    name = Field()
    age = Field()


# Parsers: bytes written by an exporter -> list of dicts of strings/values


def parse_jsonlines(data):
    return [json.loads(line) for line in data.decode("ascii").splitlines()]


def parse_json(data):
    return json.loads(data)


def parse_xml(data):
    root = etree.fromstring(data)
    assert root.tag == "items"
    return [{child.tag: child.text or "" for child in item} for item in root]


def parse_csv(data):
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


def parse_pickle(data):
    f, out = io.BytesIO(data), []
    while f.tell() < len(data):
        out.append(pickle.load(f))
    return out


def parse_marshal(data):
    f, out = io.BytesIO(data), []
    while f.tell() < len(data):
        out.append(marshal.load(f))
    return out


def parse_pprint(data):
    return [ast.literal_eval(chunk) for chunk in data.decode("utf-8").splitlines()]


ALL_FORMATS = [
    (JsonLinesItemExporter, parse_jsonlines, False),
    (JsonItemExporter, parse_json, False),
    (XmlItemExporter, parse_xml, True),
    (CsvItemExporter, parse_csv, True),
    (PickleItemExporter, parse_pickle, False),
    (MarshalItemExporter, parse_marshal, False),
    (PprintItemExporter, parse_pprint, False),
]
FORMAT_IDS = [cls.__name__ for cls, _, _ in ALL_FORMATS]


def export(cls, items, **kwargs):
    f = io.BytesIO()
    exporter = cls(f, **kwargs)
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()
    assert not f.closed, "exporters must leave the file open"
    return f.getvalue()


@pytest.mark.parametrize(("cls", "parse", "as_text"), ALL_FORMATS, ids=FORMAT_IDS)
def test_round_trip_dicts(cls, parse, as_text):
    items = [{"name": "John", "age": 22}, {"name": "Ann", "age": 30}]
    got = parse(export(cls, items))
    expected = [{k: str(v) for k, v in i.items()} for i in items] if as_text else items
    assert got == expected


@pytest.mark.parametrize(("cls", "parse", "as_text"), ALL_FORMATS, ids=FORMAT_IDS)
def test_round_trip_items_apply_field_serializer(cls, parse, as_text):
    items = [Product(name="pen", price=3), Product(name="ink", price=5)]
    got = parse(export(cls, items, fields_to_export=["name", "price"]))
    assert got == [{"name": "pen", "price": "$3"}, {"name": "ink", "price": "$5"}]


@pytest.mark.parametrize(("cls", "parse", "as_text"), ALL_FORMATS, ids=FORMAT_IDS)
def test_empty_export_is_still_valid(cls, parse, as_text):
    assert parse(export(cls, [])) == []


@pytest.mark.parametrize(("cls", "parse", "as_text"), ALL_FORMATS, ids=FORMAT_IDS)
def test_fields_to_export_selects_and_orders(cls, parse, as_text):
    items = [{"a": 1, "b": 2, "c": 3}]
    data = export(cls, items, fields_to_export=["c", "a"])
    (got,) = parse(data)
    if cls is not PprintItemExporter:  # pprint sorts keys
        assert list(got) == ["c", "a"]
    assert got == ({"c": "3", "a": "1"} if as_text else {"c": 3, "a": 1})


@pytest.mark.parametrize(("cls", "parse", "as_text"), ALL_FORMATS, ids=FORMAT_IDS)
def test_fields_to_export_mapping_renames(cls, parse, as_text):
    data = export(cls, [{"a": 1, "b": 2}], fields_to_export={"b": "bee", "a": "ay"})
    (got,) = parse(data)
    assert got == ({"bee": "2", "ay": "1"} if as_text else {"bee": 2, "ay": 1})
    if cls is not PprintItemExporter:  # pprint sorts keys
        assert list(got) == ["bee", "ay"]


@pytest.mark.parametrize(
    ("cls", "parse", "empty_value"),
    [
        (JsonLinesItemExporter, parse_jsonlines, None),
        (JsonItemExporter, parse_json, None),
        (XmlItemExporter, parse_xml, ""),
        (PickleItemExporter, parse_pickle, None),
        (PprintItemExporter, parse_pprint, None),
    ],
)
def test_export_empty_fields(cls, parse, empty_value):
    item = Plain(name="x")
    assert parse(export(cls, [item])) == [{"name": "x"}]
    assert parse(export(cls, [item], export_empty_fields=True)) == [
        {"name": "x", "age": empty_value}
    ]


def test_fields_to_export_names_missing_field_only_with_export_empty_fields():
    data = export(JsonLinesItemExporter, [{"a": 1}], fields_to_export=["a", "zz"])
    assert parse_jsonlines(data) == [{"a": 1}]
    data = export(
        JsonLinesItemExporter, [{"a": 1}], fields_to_export=["a", "zz"], export_empty_fields=True
    )
    assert parse_jsonlines(data) == [{"a": 1, "zz": None}]


@pytest.mark.parametrize("cls", [cls for cls, _, _ in ALL_FORMATS], ids=FORMAT_IDS)
def test_unknown_option_raises_type_error_naming_it(cls):
    with pytest.raises(TypeError, match=r"^Unexpected options: bogus_option"):
        cls(io.BytesIO(), bogus_option=1)


def test_base_exporter_unknown_option_and_dont_fail():
    with pytest.raises(TypeError, match="Unexpected options: foo, bar"):
        BaseItemExporter(foo=1, bar=2)
    BaseItemExporter(dont_fail=True, foo=1)
    with pytest.raises(NotImplementedError):
        BaseItemExporter().export_item({})


def test_serialize_field_override_is_used():
    class Upper(JsonLinesItemExporter):
        def serialize_field(self, field, name, value):
            return value.upper() if isinstance(value, str) else value

    assert parse_jsonlines(export(Upper, [{"a": "x", "n": 1}])) == [{"a": "X", "n": 1}]


def test_get_serialized_fields_default_value_and_include_empty():
    exporter = BaseItemExporter(fields_to_export=["name", "age"])
    item = Plain(name="x")
    assert list(exporter._get_serialized_fields(item)) == [("name", "x")]
    assert list(exporter._get_serialized_fields(item, default_value="-", include_empty=True)) == [
        ("name", "x"),
        ("age", "-"),
    ]


# JSON


def test_json_layout_is_scrapy_1_2():
    data = export(JsonItemExporter, [{"a": 1}, {"b": 2}])
    assert data == b'[\n{"a": 1},\n{"b": 2}\n]'


def test_jsonlines_one_object_per_line():
    data = export(JsonLinesItemExporter, [{"a": 1}, {"b": [1, 2]}])
    assert data == b'{"a": 1}\n{"b": [1, 2]}\n'


@pytest.mark.parametrize("cls", [JsonLinesItemExporter, JsonItemExporter])
@pytest.mark.parametrize(
    ("encoding", "expected_fragment", "decode_with"),
    [
        (None, b'"\\u00a3 caf\\u00e9 \\u2603"', "ascii"),
        ("utf-8", '"£ café ☃"'.encode(), "utf-8"),
        ("utf-16", '"£ café ☃"'.encode("utf-16-le"), "utf-16"),
    ],
)
def test_json_non_ascii(cls, encoding, expected_fragment, decode_with):
    data = export(cls, [{"s": "£ café ☃"}], encoding=encoding)
    assert expected_fragment in data
    text = data.decode(decode_with)
    parsed = json.loads(text) if cls is JsonItemExporter else json.loads(text.splitlines()[0])
    value = parsed[0]["s"] if cls is JsonItemExporter else parsed["s"]
    assert value == "£ café ☃"


def test_json_encoder_options_pass_through():
    data = export(JsonLinesItemExporter, [{"b": 1, "a": 2}], sort_keys=True)
    assert data == b'{"a": 2, "b": 1}\n'
    data = export(JsonItemExporter, [{"a": 1}], indent=2)
    assert json.loads(data) == [{"a": 1}]
    assert b'\n  "a": 1\n' in data


def test_json_nested_and_special_values():
    value = {
        "nested": {"x": [1, {"y": "z"}]},
        "when": datetime.datetime(2016, 10, 3, 12, 31, 5),
        "day": datetime.date(2016, 10, 3),
        "price": decimal.Decimal("10.10"),
        "set": {"only"},
        "item": Plain(name="inner"),
    }
    (got,) = parse_jsonlines(export(JsonLinesItemExporter, [value]))
    assert got == {
        "nested": {"x": [1, {"y": "z"}]},
        "when": "2016-10-03 12:31:05",
        "day": "2016-10-03",
        "price": "10.10",
        "set": ["only"],
        "item": {"name": "inner"},
    }


def test_json_unserializable_value_raises_and_writes_nothing():
    f = io.BytesIO()
    exporter = JsonLinesItemExporter(f)
    with pytest.raises(TypeError, match="object"):
        exporter.export_item({"x": object()})
    assert f.getvalue() == b""


def test_json_fast_path_does_not_mutate_or_keep_dict():
    item = {"a": 1}
    data = export(JsonLinesItemExporter, [item])
    item["a"] = 2
    assert data == b'{"a": 1}\n'


# XML


def test_xml_layout_and_nesting():
    item = {"name": "pen", "tags": ["a", "b"], "dims": {"w": 1, "h": 2}, "deep": [["x"]]}
    data = export(XmlItemExporter, [item])
    assert data == (
        b'<?xml version="1.0" encoding="utf-8"?>\n'
        b"<items><item><name>pen</name>"
        b"<tags><value>a</value><value>b</value></tags>"
        b"<dims><w>1</w><h>2</h></dims>"
        b"<deep><value><value>x</value></value></deep>"
        b"</item></items>"
    )
    etree.fromstring(data)  # well-formed


def test_xml_custom_elements_and_escaping():
    data = export(
        XmlItemExporter, [{"t": "a < b & c"}], item_element="product", root_element="products"
    )
    root = etree.fromstring(data)
    assert root.tag == "products"
    assert [(e.tag, e[0].text) for e in root] == [("product", "a < b & c")]


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [
        (None, "<s>£ ☃</s>".encode()),
        ("latin-1", b"<s>\xa3 &#9731;</s>"),
        ("cp1252", b"<s>\xa3 &#9731;</s>"),
        ("utf-16", "<s>£ ☃</s>".encode("utf-16-le")),
    ],
)
def test_xml_encoding(encoding, expected):
    data = export(XmlItemExporter, [{"s": "£ ☃"}], encoding=encoding)
    assert expected in data
    assert etree.fromstring(data)[0][0].text == "£ ☃"


@pytest.mark.parametrize(
    ("encoding", "declared"),
    [("latin-1", "ISO-8859-1"), ("cp1252", "windows-1252"), ("ascii", "US-ASCII"),
     ("UTF-8", "UTF-8")],
)
def test_xml_declares_iana_encoding_name(encoding, declared):
    data = export(XmlItemExporter, [], encoding=encoding)
    assert data.startswith(f'<?xml version="1.0" encoding="{declared}"?>'.encode())


def test_xml_bytes_value_is_decoded():
    data = export(XmlItemExporter, [{"b": "é".encode()}])
    assert etree.fromstring(data)[0][0].text == "é"


@pytest.mark.parametrize("bad", ["first name", "1st", "a/b", ""])
def test_xml_invalid_field_name_raises(bad):
    exporter = XmlItemExporter(io.BytesIO())
    exporter.start_exporting()
    with pytest.raises(ValueError, match="not a valid XML element name"):
        exporter.export_item({bad: 1})


def test_xml_invalid_item_element_raises():
    with pytest.raises(ValueError, match="'bad name'"):
        XmlItemExporter(io.BytesIO(), item_element="bad name")


# CSV


def test_csv_headers_from_first_item_and_missing_fields_blank():
    data = export(CsvItemExporter, [{"a": 1, "b": 2}, {"b": 3, "c": 4}])
    assert data == b"a,b\r\n1,2\r\n,3\r\n"


def test_csv_headers_from_item_declared_fields():
    data = export(CsvItemExporter, [Product(name="pen", price=3)])
    assert parse_csv(data) == [{"name": "pen", "price": "$3", "tags": ""}]


def test_csv_without_headers():
    data = export(CsvItemExporter, [{"a": 1, "b": 2}], include_headers_line=False)
    assert data == b"1,2\r\n"


def test_csv_join_multivalued_and_quoting():
    items = [{"tags": ["a", "b"], "text": 'he said "hi", then left', "nums": [1, 2]}]
    data = export(CsvItemExporter, items, join_multivalued="|")
    (row,) = parse_csv(data)
    assert row == {"tags": "a|b", "text": 'he said "hi", then left', "nums": "[1, 2]"}


def test_csv_writer_options_and_encoding():
    data = export(CsvItemExporter, [{"a": "é", "b": 1}], delimiter=";", encoding="latin-1")
    assert data == b"a;b\r\n\xe9;1\r\n"


def test_csv_fields_to_export_mapping_header_uses_output_names():
    data = export(CsvItemExporter, [{"a": 1, "b": 2}], fields_to_export={"b": "Bee"})
    assert data == b"Bee\r\n2\r\n"


def test_csv_does_not_close_file_when_dropped():
    f = io.BytesIO()
    exporter = CsvItemExporter(f)
    exporter.export_item({"a": 1})
    del exporter
    gc.collect()
    assert not f.closed
    assert f.getvalue() == b"a\r\n1\r\n"


# pickle, marshal, pprint


def test_pickle_protocol_default_and_custom():
    assert export(PickleItemExporter, [{"a": 1}])[:2] == b"\x80\x02"
    assert export(PickleItemExporter, [{"a": 1}], protocol=4)[:2] == b"\x80\x04"


def test_marshal_rejects_unmarshallable():
    with pytest.raises(ValueError):
        export(MarshalItemExporter, [{"a": object()}])


def test_pprint_output():
    assert export(PprintItemExporter, [{"b": 1, "a": "é"}]) == "{'a': 'é', 'b': 1}\n".encode()


# PythonItemExporter


def test_python_exporter_str_mode_nested():
    exporter = PythonItemExporter(binary=False)
    item = Product(name=b"pen", price=2, tags=[Plain(name="x"), {"k": (b"v",)}])
    assert exporter.export_item(item) == {
        "name": "pen",
        "price": "$2",
        "tags": [{"name": "x"}, {"k": ["v"]}],
    }


def test_python_exporter_binary_mode_warns_and_encodes():
    with pytest.warns(CrawlfwDeprecationWarning, match="binary"):
        exporter = PythonItemExporter()
    got = exporter.export_item({"name": "é", "sub": {"k": "v"}, "n": 1})
    assert got == {b"name": "é".encode(), b"sub": {b"k": b"v"}, b"n": 1}


def test_python_exporter_rejects_unknown_option():
    with pytest.raises(TypeError, match="Unexpected options: nope"):
        PythonItemExporter(binary=False, nope=1)


def test_exported_names():
    import crawlfw.exporters

    assert sorted(crawlfw.exporters.__all__) == sorted([
        "BaseItemExporter", "PprintItemExporter", "PickleItemExporter", "CsvItemExporter",
        "XmlItemExporter", "JsonLinesItemExporter", "JsonItemExporter", "MarshalItemExporter",
        "PythonItemExporter",
    ])


# --- the JSON exporters' one-shot encoder gives what json.JSONEncoder.encode gives ------------


def _json_items():
    circular = {"a": 1}
    circular["self"] = circular
    inner = [1, 2.5, None, True, "\u00e9\u20ac\U0001f600", {"n": {"m": []}}]
    return [
        {},
        {"url": "http://e.com/p/1.html", "title": "Page 1"},
        {"nested": inner, "tuple": (1, 2), "float": 1e300, "neg": -0.0},
        {"nan": float("nan"), "inf": float("inf")},
        {1: "int key", 2.5: "float key", False: "bool key", None: "none key"},
        {(1, 2): "tuple key"},
        {"when": datetime.datetime(2026, 11, 25, 19, 30), "d": decimal.Decimal("1.10"),
         "s": {3}},
        {"bad": object()},
        circular,
        {"again": "after the circular one"},
        ["not", "a", "dict"],
        "a str",
    ]


@pytest.mark.parametrize(
    "options",
    [{}, {"sort_keys": True}, {"encoding": "utf-8"}, {"skipkeys": True},
     {"allow_nan": False}, {"check_circular": False}, {"separators": (",", ":")},
     {"indent": 2}],
)
@pytest.mark.parametrize("cls", [JsonLinesItemExporter, JsonItemExporter])
def test_json_one_shot_encoder_is_the_encoders_encode(cls, options):
    if options.get("indent") and cls is JsonLinesItemExporter:
        pytest.skip("JSON Lines takes no indent")
    exporter = cls(io.BytesIO(), **options)
    assert (exporter._encode == exporter.encoder.encode) is bool(options.get("indent"))

    def outcome(encode, item):
        try:
            return encode(item)
        except (TypeError, ValueError, RecursionError) as e:
            return type(e), str(e)

    for item in _json_items():
        if item is not None and options.get("check_circular") is False and "self" in item:
            continue  # no memo: the C encoder recurses until the interpreter stops it
        assert outcome(exporter._encode, item) == outcome(exporter.encoder.encode, item), item
