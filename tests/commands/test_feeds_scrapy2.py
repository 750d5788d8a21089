"""Scrapy 2's feed options, through ``crawlfw runspider`` against a local site (issue 17):
``batch_item_count`` / ``FEED_EXPORT_BATCH_ITEM_COUNT`` with ``%(batch_id)d`` and
``%(batch_time)s``, ``postprocessing`` (gzip, lzma, bz2 plug-ins), ``fields`` as a dict,
``item_filter`` / ``item_classes``, and ``-o``/``-O`` ``URI:FORMAT`` (``-:jl``). Every test
compares the items written with the items the spider yields."""

import bz2
import csv
import gzip
import io
import json
import lzma

import pytest

from tests.commands.conftest import write
from tests.support.servers import StaticSiteServer

pytestmark = pytest.mark.slow

WORDS = ["one", "three", "four", "sixteen", "a", "twelve", "ab"]
ITEMS = [{"text": w, "n": len(w)} for w in WORDS]

SPIDER = """
import crawlfw


class QuoteItem(crawlfw.Item):
    text = crawlfw.Field()
    n = crawlfw.Field()


class LongOnly:
    \"\"\"Scrapy's ItemFilter interface: built with the feed's options.\"\"\"

    def __init__(self, feed_options):
        self.min_n = feed_options["min_n"]

    def accepts(self, item):
        return item["n"] >= self.min_n


class QuoteSpider(crawlfw.Spider):
    name = "quotes2"
    custom_settings = CUSTOM

    def start_requests(self):
        yield crawlfw.Request(self.base_url + "/index.html")

    def parse(self, response):
        for i, text in enumerate(response.css("p.q::text").extract()):
            # every other item is an Item (item_classes tests)
            cls = QuoteItem if i % 2 else dict
            yield cls(text=text, n=len(text))
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site2")
    body = "".join(f'<p class="q">{w}</p>' for w in WORDS)
    (root / "index.html").write_text(f"<html><body>{body}</body></html>", encoding="utf-8")
    server = StaticSiteServer(root).start()
    yield server
    server.stop()


def run(crawlfw, tmp_path, site, custom="{}", *args):
    spider = write(tmp_path / "feedspider.py", SPIDER.replace("CUSTOM", custom))
    return crawlfw("runspider", spider, "-a", f"base_url={site.url}", *args)


def jl_bytes(data: bytes) -> list:
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


def test_batches_by_id(crawlfw, tmp_path, site):
    custom = """{"FEEDS": {"out/part-%(batch_id)d.jl": {"format": "jsonlines",
                                                       "batch_item_count": 3}}}"""
    result = run(crawlfw, tmp_path, site, custom)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["part-1.jl", "part-2.jl", "part-3.jl"]
    parts = [jl_bytes((out / f"part-{i}.jl").read_bytes()) for i in (1, 2, 3)]
    assert [len(p) for p in parts] == [3, 3, 1]
    assert parts[0] + parts[1] + parts[2] == ITEMS
    assert "Stored jsonlines feed (3 items) in: out/part-2.jl" in result.stderr
    assert "Stored jsonlines feed (1 items) in: out/part-3.jl" in result.stderr


def test_batch_setting_with_batch_time_and_an_exact_multiple(crawlfw, tmp_path, site):
    """FEED_EXPORT_BATCH_ITEM_COUNT applies to -o; 7 items in batches of 7: one file, no
    empty second one (Scrapy stores an empty batch only when it is the first)."""
    for count, files in ((2, 4), (7, 1)):
        out = tmp_path / f"out{count}"
        result = run(crawlfw, tmp_path, site, "{}", "-o", f"out{count}/%(batch_time)s.csv",
                     "-s", f"FEED_EXPORT_BATCH_ITEM_COUNT={count}")
        assert result.returncode == 0, result.stderr
        names = sorted(p.name for p in out.iterdir())
        assert len(names) == files, names
        assert all(n.endswith("+00-00.csv") and "T" in n for n in names), names
        rows = []
        for name in names:  # batch_time sorts in batch order
            lines = list(csv.DictReader(io.StringIO((out / name).read_text())))
            assert len(lines) <= count
            rows += [{"text": r["text"], "n": int(r["n"])} for r in lines]
        assert rows == ITEMS


def test_batches_need_a_batch_parameter(crawlfw, tmp_path, site):
    custom = """{"FEEDS": {"out/items.jl": {"format": "jsonlines", "batch_item_count": 3}}}"""
    result = run(crawlfw, tmp_path, site, custom)
    assert result.returncode == 1
    assert ("%(batch_time)s or %(batch_id)d must be in the feed URI (out/items.jl)"
            in result.stderr)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("option", ["batch_item_count", "postprocessing"])
def test_batches_and_postprocessing_are_refused_with_jobdir(crawlfw, tmp_path, site, option):
    value = 3 if option == "batch_item_count" else ["crawlfw.extensions.postprocessing.GzipPlugin"]
    custom = f"""{{"FEEDS": {{"out/%(batch_id)d.jl": {{"format": "jsonlines",
                                                    {option!r}: {value!r}}}}}}}"""
    result = run(crawlfw, tmp_path, site, custom, "-s", "JOBDIR=job")
    assert result.returncode == 1
    assert f"{option} cannot be used with JOBDIR" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("plugin, ext, decompress", [
    ("GzipPlugin", "gz", gzip.decompress),
    ("LZMAPlugin", "xz", lzma.decompress),
    ("Bz2Plugin", "bz2", bz2.decompress),
])
def test_postprocessing(crawlfw, tmp_path, site, plugin, ext, decompress):
    path = f"crawlfw.extensions.postprocessing.{plugin}"
    custom = f"""{{"FEEDS": {{
        "out/items.jl.{ext}": {{"format": "jsonlines", "postprocessing": [{path!r}],
                               "gzip_compresslevel": 1, "gzip_mtime": 0,
                               "bz2_compresslevel": 1, "lzma_preset": 1}},
        "out/items.csv.{ext}": {{"format": "csv", "postprocessing": [{path!r}]}},
        "out/b%(batch_id)d.json.{ext}": {{"format": "json", "postprocessing": [{path!r}],
                                         "batch_item_count": 4}},
    }}}}"""
    result = run(crawlfw, tmp_path, site, custom)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"
    raw = (out / f"items.jl.{ext}").read_bytes()
    assert jl_bytes(decompress(raw)) == ITEMS
    if plugin == "GzipPlugin":  # gzip_mtime reaches the header (RFC 1952 MTIME)
        assert raw[4:8] == b"\0\0\0\0"
    rows = list(csv.DictReader(io.StringIO(decompress((out / f"items.csv.{ext}").read_bytes())
                                           .decode())))
    assert [{"text": r["text"], "n": int(r["n"])} for r in rows] == ITEMS
    batches = [json.loads(decompress((out / f"b{i}.json.{ext}").read_bytes())) for i in (1, 2)]
    assert batches[0] + batches[1] == ITEMS and len(batches[0]) == 4


def test_gzip_then_a_plugin_of_ones_own(crawlfw, tmp_path, site):
    """Plug-ins chain in order, each closed so that it flushes into the next; a plug-in
    may read options of its own."""
    spider_extra = '''

class Upper:
    def __init__(self, file, feed_options):
        self.file, self.tag = file, feed_options["tag"].encode()

    def write(self, data):
        return self.file.write(data.upper())

    def close(self):
        self.file.write(self.tag)
'''
    custom = """{"FEEDS": {"out/items.jl": {"format": "jsonlines", "tag": "#end",
        "postprocessing": [Upper, "crawlfw.extensions.postprocessing.GzipPlugin"]}}}"""
    spider = SPIDER.replace("import crawlfw\n", "import crawlfw\n" + spider_extra, 1)
    write(tmp_path / "feedspider.py", spider.replace("CUSTOM", custom))
    result = crawlfw("runspider", tmp_path / "feedspider.py", "-a", f"base_url={site.url}")
    assert result.returncode == 0, result.stderr
    data = gzip.decompress((tmp_path / "out" / "items.jl").read_bytes())
    assert data.endswith(b"#end")
    assert jl_bytes(data[:-4]) == [{"TEXT": i["text"].upper(), "N": i["n"]} for i in ITEMS]


def test_fields_as_a_dict(crawlfw, tmp_path, site):
    custom = """{"FEEDS": {
        "out/items.csv": {"format": "csv", "fields": {"text": "Quote", "n": "Length"}},
        "out/items.jl": {"format": "jsonlines", "fields": {"n": "size"}},
    }, "FEED_EXPORT_FIELDS": {"text": "t"}}"""
    result = run(crawlfw, tmp_path, site, custom, )
    assert result.returncode == 0, result.stderr
    rows = list(csv.reader((tmp_path / "out" / "items.csv").read_text().splitlines()))
    assert rows == [["Quote", "Length"]] + [[i["text"], str(i["n"])] for i in ITEMS]
    assert jl_bytes((tmp_path / "out" / "items.jl").read_bytes()) == [
        {"size": i["n"]} for i in ITEMS]
    # FEED_EXPORT_FIELDS as a dict, for a feed without its own fields
    result = run(crawlfw, tmp_path, site, custom, "-O", "all.jl")
    assert result.returncode == 0, result.stderr
    assert jl_bytes((tmp_path / "all.jl").read_bytes()) == [{"t": i["text"]} for i in ITEMS]


def test_item_filter_and_item_classes(crawlfw, tmp_path, site):
    custom = """{"FEEDS": {
        "out/long.jl": {"format": "jsonlines", "item_filter": LongOnly, "min_n": 5},
        "out/items.jl": {"format": "jsonlines", "item_classes": [QuoteItem]},
        "out/all.jl": {"format": "jsonlines",
                       "item_filter": "crawlfw.extensions.feedexport.ItemFilter"},
    }}"""
    spider = SPIDER.replace("    custom_settings = CUSTOM\n", "")
    spider += f"\n\nQuoteSpider.custom_settings = {custom}\n"
    write(tmp_path / "feedspider.py", spider)
    result = crawlfw("runspider", tmp_path / "feedspider.py", "-a", f"base_url={site.url}")
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"
    assert jl_bytes((out / "long.jl").read_bytes()) == [i for i in ITEMS if i["n"] >= 5]
    assert jl_bytes((out / "items.jl").read_bytes()) == ITEMS[1::2]
    assert jl_bytes((out / "all.jl").read_bytes()) == ITEMS
    assert "Stored jsonlines feed (3 items) in: out/long.jl" in result.stderr


@pytest.mark.parametrize("option", ["-o", "-O"])
def test_uri_colon_format(crawlfw, tmp_path, site, option):
    result = run(crawlfw, tmp_path, site, "{}", option, "-:jl")
    assert result.returncode == 0, result.stderr
    assert jl_bytes(result.stdout.encode()) == ITEMS
    result = run(crawlfw, tmp_path, site, "{}", option, "out.txt:jsonlines")
    assert result.returncode == 0, result.stderr
    assert jl_bytes((tmp_path / "out.txt").read_bytes()) == ITEMS
    result = run(crawlfw, tmp_path, site, "{}", option, "items.csv:json")
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "items.csv").read_text()) == ITEMS
