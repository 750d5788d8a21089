"""Scrapy 2's exporter API (issue 29): ``BaseItemExporter.get_serialized_fields`` (the
public name; overriding it, or Scrapy 1.2's ``_get_serialized_fields``, changes every
exporter's output) and ``CsvItemExporter(errors=)``. Expected bytes are Scrapy 2.19's."""

import io
import json

import pytest

from crawlfw.exporters import (
    BaseItemExporter,
    CsvItemExporter,
    JsonItemExporter,
    JsonLinesItemExporter,
)


def _export(exporter_cls, items, *args, **kwargs) -> bytes:
    f = io.BytesIO()
    exporter = exporter_cls(f, *args, **kwargs)
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()
    return f.getvalue()


def test_get_serialized_fields_is_public():
    exporter = BaseItemExporter(fields_to_export=["name", "age"])
    assert list(exporter.get_serialized_fields({"name": "x"})) == [("name", "x")]
    assert list(exporter.get_serialized_fields({"name": "x"}, "-", True)) == [
        ("name", "x"), ("age", "-")]


class _Scrapy2Style(JsonLinesItemExporter):
    def get_serialized_fields(self, item, default_value=None, include_empty=None):
        for name, value in super().get_serialized_fields(item, default_value, include_empty):
            yield name.upper(), value


class _Scrapy12Style(JsonLinesItemExporter):
    def _get_serialized_fields(self, item, default_value=None, include_empty=None):
        for name, value in super()._get_serialized_fields(item, default_value, include_empty):
            yield name + "_", value


@pytest.mark.parametrize("cls, expected", [
    (_Scrapy2Style, {"A": 1, "B": "x"}),
    (_Scrapy12Style, {"a_": 1, "b_": "x"}),
])
def test_an_override_of_either_name_changes_the_output(cls, expected):
    # a plain dict: the path that encodes dicts as they are must not skip the override
    data = _export(cls, [{"a": 1, "b": "x"}])
    assert json.loads(data) == expected


def test_json_exporter_uses_get_serialized_fields():
    class Upper(JsonItemExporter):
        def get_serialized_fields(self, item, default_value=None, include_empty=None):
            return [(k, str(v).upper()) for k, v in item.items()]

    assert json.loads(_export(Upper, [{"a": "x"}])) == [{"a": "X"}]


def test_csv_errors():
    item = {"a": "caf\xe9 \u20ac"}
    # Scrapy 2.19: CsvItemExporter(f, True, ",", "replace", encoding="latin-1")
    assert _export(CsvItemExporter, [item], True, ",", "replace", encoding="latin-1") == \
        b"a\r\ncaf\xe9 ?\r\n"
    assert _export(CsvItemExporter, [item], errors="xmlcharrefreplace",
                   encoding="ascii") == b"a\r\ncaf&#233; &#8364;\r\n"
    with pytest.raises(UnicodeEncodeError):
        _export(CsvItemExporter, [item], encoding="latin-1")
