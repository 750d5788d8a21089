"""Scrapy 2 item types (issue 17): spiders yielding dataclass, attrs and pydantic items,
pipelines using ``itemadapter.ItemAdapter``, loaders filling a dataclass; run through the
``crawlfw runspider`` CLI on the local quotes copy, items compared with what plain lxml
reads from the site's files."""

import json
import subprocess
import sys
from pathlib import Path

import lxml.html
import pytest

from tests.support.proc import crawlfw_env, run_measured


@pytest.fixture(scope="module")
def quotes(sites_dir, site_server):
    """``(server, expected)``: the quotes site and its first two pages' quotes as dicts
    ``{"text", "author", "tags"}``, in page order."""
    site = sites_dir / "quotes.toscrape.com"
    expected = []
    for n in (1, 2):
        doc = lxml.html.parse(str(site / "page" / str(n) / "index.html")).getroot()
        for q in doc.find_class("quote"):
            expected.append({
                "text": q.xpath('.//span[@class="text"]/text()')[0],
                "author": q.xpath('.//small[@class="author"]/text()')[0],
                "tags": q.xpath('.//div[@class="tags"]/a[@class="tag"]/text()'),
            })
    return site_server("quotes.toscrape.com"), expected


ITEM_SPIDER = '''
import dataclasses

import attrs
import pydantic
from itemadapter import ItemAdapter

import crawlfw


@dataclasses.dataclass
class DcQuote:
    text: str
    author: str
    tags: list = dataclasses.field(default_factory=list)
    kind: str = "dataclass"


@attrs.define
class AttrsQuote:
    text: str
    author: str
    tags: list = attrs.field(factory=list)
    kind: str = "attrs"


class PydQuote(pydantic.BaseModel):
    text: str
    author: str
    tags: list = []
    kind: str = "pydantic"


class CrawlfwQuote(crawlfw.Item):
    text = crawlfw.Field()
    author = crawlfw.Field()
    tags = crawlfw.Field()
    kind = crawlfw.Field()


KINDS = {1: DcQuote, 2: AttrsQuote}


class UpperAuthorPipeline:
    """Reads and writes any item through ItemAdapter (Scrapy 2's idiom)."""

    def process_item(self, item, spider):
        adapter = ItemAdapter(item)
        adapter["author"] = adapter["author"].upper()
        return item


class S(crawlfw.Spider):
    name = "items"
    custom_settings = {"ITEM_PIPELINES": {__name__ + ".UpperAuthorPipeline": 100}}

    def start_requests(self):
        for n in (1, 2):
            yield crawlfw.Request(f"{self.base}/page/{n}/", cb_kwargs={"n": n})

    def parse(self, response, n):
        for i, q in enumerate(response.css("div.quote")):
            values = dict(text=q.css("span.text::text").extract_first(),
                          author=q.css("small.author::text").extract_first(),
                          tags=q.css("a.tag::text").extract())
            if i % 3 == 2:  # every third: a pydantic model or a crawlfw.Item
                yield PydQuote(**values) if n == 1 else CrawlfwQuote(kind="item", **values)
            else:
                yield KINDS[n](**values)
'''


def _kind(n, i):
    if i % 3 == 2:
        return "pydantic" if n == 1 else "item"
    return "dataclass" if n == 1 else "attrs"


@pytest.mark.slow
def test_dataclass_attrs_pydantic_items_reach_pipelines_and_feeds(quotes, tmp_path):
    server, expected = quotes
    (tmp_path / "spider.py").write_text(ITEM_SPIDER)
    run = run_measured("runspider", "spider.py", "-a", f"base={server.url}", "-o", "out.jl",
                       "-s", "LOG_LEVEL=INFO", cwd=tmp_path, timeout_s=90)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Spider must return" not in run.stderr
    assert "ERROR" not in run.stderr, run.stderr[-3000:]
    got = [json.loads(line) for line in (tmp_path / "out.jl").read_text().splitlines()]
    want = [
        {**q, "author": q["author"].upper(), "kind": _kind(1 + i // 10, i % 10)}
        for i, q in enumerate(expected)
    ]
    key = lambda d: (d["kind"], d["text"])  # noqa: E731
    assert sorted(got, key=key) == sorted(want, key=key)
    assert "'item_scraped_count': 20" in run.stderr


@pytest.mark.parametrize("fmt", ["csv", "xml", "json", "pickle", "marshal"])
def test_exporters_write_dataclass_items(tmp_path, fmt):
    """Every feed format takes a dataclass item; a ``serializer`` in the field's
    metadata is applied as a ``Field``'s is."""
    import dataclasses
    import io
    import marshal
    import pickle

    from crawlfw import exporters

    @dataclasses.dataclass
    class Product:
        name: str
        price: int = dataclasses.field(default=0, metadata={"serializer": lambda p: f"${p}"})

    classes = {"csv": exporters.CsvItemExporter, "xml": exporters.XmlItemExporter,
               "json": exporters.JsonItemExporter, "pickle": exporters.PickleItemExporter,
               "marshal": exporters.MarshalItemExporter}
    buf = io.BytesIO()
    exporter = classes[fmt](buf)
    exporter.start_exporting()
    exporter.export_item(Product("pen", 3))
    exporter.finish_exporting()
    data = buf.getvalue()
    if fmt == "csv":
        assert data.decode().splitlines() == ["name,price", "pen,$3"]
    elif fmt == "xml":
        assert b"<item><name>pen</name><price>$3</price></item>" in data
    elif fmt == "json":
        assert json.loads(data) == [{"name": "pen", "price": "$3"}]
    elif fmt == "pickle":
        assert pickle.loads(data) == {"name": "pen", "price": "$3"}
    else:
        assert marshal.loads(data) == {"name": "pen", "price": "$3"}


def test_python_exporter_and_json_encoder_nest_dataclass_items():
    import dataclasses

    from crawlfw.exporters import PythonItemExporter
    from crawlfw.utils.serialize import CrawlfwJSONEncoder

    @dataclasses.dataclass
    class Inner:
        x: int

    item = {"inner": Inner(1), "many": [Inner(2)]}
    exported = PythonItemExporter(binary=False).export_item(item)
    assert exported == {"inner": {"x": 1}, "many": [{"x": 2}]}
    assert json.loads(CrawlfwJSONEncoder().encode(item)) == exported


@pytest.mark.slow
@pytest.mark.parametrize("first", ["itemadapter", "crawlfw"])
def test_item_adapter_adapts_crawlfw_items_whatever_is_imported_first(first):
    """``ItemAdapter(crawlfw_item)`` works (field names are the declared fields, field
    metadata the Field), and ``import crawlfw`` alone does not import itemadapter."""
    code = f'''
import sys
if "{first}" == "itemadapter":
    import itemadapter
import crawlfw
import dataclasses
import re
from crawlfw.item import is_item
from crawlfw.utils.misc import arg_to_iter

@dataclasses.dataclass
class D:
    x: int = 0

assert is_item({{}}) and is_item(crawlfw.Item()) and is_item(D())
assert arg_to_iter(re.compile("x")) == [re.compile("x")] and not is_item("x")
assert ("itemadapter" in sys.modules) == ("{first}" == "itemadapter")
from itemadapter import ItemAdapter

class P(crawlfw.Item):
    name = crawlfw.Field(serializer=str)
    price = crawlfw.Field()

adapter = ItemAdapter(P(name="pen"))
assert list(adapter.field_names()) == ["name", "price"], adapter.field_names()
assert dict(adapter) == {{"name": "pen"}}
assert adapter.get_field_meta("name") == {{"serializer": str}}
adapter["price"] = 3
assert adapter.item["price"] == 3
assert ItemAdapter.is_item_class(P)
print("ok")
'''
    out = subprocess.run([sys.executable, "-c", code], env=crawlfw_env(), capture_output=True,
                         text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr


def test_any_item_type_test():
    import dataclasses

    import attrs
    import pydantic

    from crawlfw.item import AnyItem, Item, is_item

    @dataclasses.dataclass
    class D:
        a: int = 1

    @attrs.define
    class A:
        a: int = 1

    class P(pydantic.BaseModel):
        a: int = 1

    for obj in ({}, Item(), D(), A(), P()):
        assert is_item(obj), obj
    for obj in ("x", b"x", 1, None, [], (), D, object()):
        assert not is_item(obj), obj
    with pytest.raises(TypeError, match="type test"):
        AnyItem()


def test_files_pipeline_sets_results_on_a_dataclass_item():
    import dataclasses

    from crawlfw.pipelines.files import FilesPipeline

    @dataclasses.dataclass
    class WithFiles:
        file_urls: list
        files: list = None

    @dataclasses.dataclass
    class WithoutFiles:
        file_urls: list

    pipe = FilesPipeline.from_settings(__import__("crawlfw.settings").settings.Settings(
        {"FILES_STORE": str(Path("/tmp"))}))
    item = WithFiles(["http://127.0.0.1/a.txt"])
    assert [r.url for r in pipe.get_media_requests(item, None)] == ["http://127.0.0.1/a.txt"]
    assert pipe.item_completed([(True, {"path": "full/x"}), (False, None)], item, None) is item
    assert item.files == [{"path": "full/x"}]
    other = WithoutFiles([])
    assert pipe.item_completed([(True, {"path": "full/x"})], other, None) is other


LOADER_SPIDER = '''
import dataclasses

from itemloaders.processors import MapCompose, TakeFirst

import crawlfw
from crawlfw.loader import ItemLoader


@dataclasses.dataclass
class Quote:
    text: str = None
    author: str = dataclasses.field(
        default=None, metadata={"input_processor": MapCompose(str.strip, str.upper)})
    tags: list = None


class QuoteLoader(ItemLoader):
    default_item_class = Quote
    default_output_processor = TakeFirst()
    tags_out = MapCompose()  # all of them


class S(crawlfw.Spider):
    name = "loader"

    def start_requests(self):
        yield crawlfw.Request(self.base + "/page/1/")

    def parse(self, response):
        for q in response.css("div.quote"):
            loader = QuoteLoader(selector=q)
            loader.add_css("text", "span.text::text")
            loader.add_css("author", "small.author::text")
            loader.add_css("tags", "a.tag::text")
            yield loader.load_item()
'''


@pytest.mark.slow
def test_item_loader_fills_a_dataclass_with_itemloaders_processors(quotes, tmp_path):
    server, expected = quotes
    (tmp_path / "spider.py").write_text(LOADER_SPIDER)
    run = run_measured("runspider", "spider.py", "-a", f"base={server.url}", "-o", "out.json",
                       "-s", "LOG_LEVEL=INFO", cwd=tmp_path, timeout_s=90)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "ERROR" not in run.stderr, run.stderr[-3000:]
    got = json.loads((tmp_path / "out.json").read_text())
    want = [{**q, "author": q["author"].upper(), "tags": q["tags"] or None}
            for q in expected[:10]]
    assert got == want


def test_loader_keeps_a_given_items_values_and_nested_loaders_do_not_repeat_them():
    import dataclasses

    from crawlfw.loader import ItemLoader
    from crawlfw.selector import Selector

    @dataclasses.dataclass
    class D:
        name: str = None
        summary: str = None

    item = D(summary="kept")
    loader = ItemLoader(item=item, selector=Selector(text="<p><b>x</b></p>"))
    nested = loader.nested_css("p")
    nested.add_css("name", "b::text")
    assert loader.load_item() is item
    assert item == D(name=["x"], summary="kept")
    with pytest.raises(KeyError, match="D does not support field: nope"):
        loader.add_value("nope", 1)
