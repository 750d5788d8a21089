"""Feeds from the command line and from settings, as a Scrapy 2 user writes them:
``-O`` (overwrite) beside 1.2's appending ``-o``, ``FEEDS`` (also in ``custom_settings``),
``FEED_EXPORT_ENCODING``, and the feed an empty crawl still writes. Real ``runspider``
subprocesses against a local site."""

import csv
import json
import re

import pytest

from tests.commands.conftest import write
from tests.support.servers import StaticSiteServer

pytestmark = pytest.mark.slow

SPIDER = """
import crawlfw


class QuoteSpider(crawlfw.Spider):
    name = "quotesfeed"
    custom_settings = {CUSTOM}

    def start_requests(self):
        yield crawlfw.Request(self.base_url + "/index.html")

    def parse(self, response):
        for text in response.css("p.q::text").extract():
            yield {"text": text, "n": len(text)}
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    (root / "index.html").write_text(
        '<html><body><p class="q">caf\u00e9</p><p class="q">two</p>'
        '<p class="none">x</p></body></html>', encoding="utf-8")
    (root / "empty.html").write_text("<html><body></body></html>", encoding="utf-8")
    (root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    server = StaticSiteServer(root).start()
    yield server
    server.stop()


def spider_file(tmp_path, custom=None, page="index.html"):
    text = SPIDER.replace("{CUSTOM}", repr(custom or {}))
    return write(tmp_path / "feedspider.py", text.replace("/index.html", "/" + page))


def jl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_dash_o_appends_and_dash_O_overwrites(crawlfw, tmp_path, site):
    spider = spider_file(tmp_path)
    for _ in range(2):
        result = crawlfw("runspider", spider, "-a", f"base_url={site.url}", "-o", "a.jl")
        assert result.returncode == 0, result.stderr
    assert len(jl(tmp_path / "a.jl")) == 4  # Scrapy 1.2: -o appends

    (tmp_path / "b.json").write_text("old content that is not JSON")
    for _ in range(2):
        result = crawlfw("runspider", spider, "-a", f"base_url={site.url}", "-O", "b.json")
        assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "b.json").read_text()) == [
        {"text": "caf\u00e9", "n": 4}, {"text": "two", "n": 3}]


def test_dash_o_and_dash_O_together_is_a_usage_error(crawlfw, tmp_path, site):
    """Scrapy 2.19 refuses it with this message and exit status 2 (``scrapy runspider
    sp.py -o a.json -O b.json``); nothing is written."""
    for args in (["-o", "a.jl", "-O", "b.jl"], ["-O", "b.jl", "-o", "a.jl", "-o", "c.jl"]):
        result = crawlfw("runspider", spider_file(tmp_path), "-a", f"base_url={site.url}",
                         *args)
        assert result.returncode == 2
        assert result.stderr.strip().splitlines() == [
            "Usage error: Please use only one of -o/--output and -O/--overwrite-output"]
        assert not list(tmp_path.glob("*.jl"))


def test_every_dash_o_is_a_feed_of_its_own(crawlfw, tmp_path, site):
    """Issue 34: ``-o a.json -o a.csv`` wrote only a.csv. Each -o is a feed (Scrapy 2),
    appended to (Scrapy 1.2): a second run adds to each."""
    spider = spider_file(tmp_path)
    for _ in (1, 2):
        result = crawlfw("runspider", spider, "-a", f"base_url={site.url}",
                         "-o", "a.json", "-o", "a.csv", "-o", "a.txt:jsonlines")
        assert result.returncode == 0, result.stderr
        for name, fmt in (("a.json", "json"), ("a.csv", "csv"), ("a.txt", "jsonlines")):
            assert f"Stored {fmt} feed (2 items) in: {name}" in result.stderr
    raw = (tmp_path / "a.json").read_text(encoding="utf-8")
    one = '[\n{"text": "caf\\u00e9", "n": 4},\n{"text": "two", "n": 3}\n]'
    assert raw == one + one  # appended: two documents, as Scrapy 1.2's -o does
    rows = list(csv.reader((tmp_path / "a.csv").read_text(encoding="utf-8").splitlines()))
    assert rows == [["text", "n"], ["caf\u00e9", "4"], ["two", "3"]] * 2
    assert len(jl(tmp_path / "a.txt")) == 4


def test_every_dash_O_is_a_feed_of_its_own(crawlfw, tmp_path, site):
    spider = spider_file(tmp_path)
    (tmp_path / "b.csv").write_text("old content\n")
    for _ in (1, 2):
        result = crawlfw("runspider", spider, "-a", f"base_url={site.url}",
                         "-O", "b.jl", "-O", "b.csv")
        assert result.returncode == 0, result.stderr
    assert jl(tmp_path / "b.jl") == [{"text": "caf\u00e9", "n": 4}, {"text": "two", "n": 3}]
    rows = list(csv.reader((tmp_path / "b.csv").read_text(encoding="utf-8").splitlines()))
    assert rows == [["text", "n"], ["caf\u00e9", "4"], ["two", "3"]]


def test_dash_o_is_added_to_the_feeds_of_the_settings(crawlfw, tmp_path, site):
    """As in Scrapy 2.19: the -o feeds are added to the FEEDS of the settings (project,
    -s), whose options win for the same URI; a spider's custom_settings FEEDS are
    replaced (test_dash_o_replaces_the_feeds_of_custom_settings)."""
    feeds = json.dumps({"set.jl": {"format": "jsonlines"},
                        "both.json": {"format": "json", "indent": 2}})
    result = crawlfw("runspider", spider_file(tmp_path), "-a", f"base_url={site.url}",
                     "-s", f"FEEDS={feeds}", "-o", "cli.csv", "-o", "both.json")
    assert result.returncode == 0, result.stderr
    assert len(jl(tmp_path / "set.jl")) == 2
    assert len((tmp_path / "cli.csv").read_text().splitlines()) == 3
    assert '\n  "n": 4' in (tmp_path / "both.json").read_text()  # the setting's options
    assert result.stderr.count("Stored ") == 3


def test_feeds_from_custom_settings_with_options(crawlfw, tmp_path, site):
    custom = {"FEEDS": {
        "out/items.json": {"format": "json", "encoding": "utf-8", "indent": 2},
        "out/items.csv": {"fields": ["text"]},
        "out/latin.jl": {"format": "jsonlines", "encoding": "latin-1"},
    }}
    result = crawlfw("runspider", spider_file(tmp_path, custom), "-a", f"base_url={site.url}")
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"
    raw = (out / "items.json").read_text(encoding="utf-8")
    assert '"text": "caf\u00e9"' in raw and '\n  "n": 4' in raw  # utf-8 as is, indented
    assert json.loads(raw)[1] == {"text": "two", "n": 3}
    rows = list(csv.reader((out / "items.csv").read_text(encoding="utf-8").splitlines()))
    assert rows == [["text"], ["caf\u00e9"], ["two"]]
    assert (out / "latin.jl").read_bytes().splitlines()[0] == b'{"text": "caf\xe9", "n": 4}'
    assert result.stderr.count("Stored ") == 3


def test_dash_o_replaces_the_feeds_of_custom_settings(crawlfw, tmp_path, site):
    custom = {"FEEDS": {"fromsettings.jl": {"format": "jsonlines"}}}
    result = crawlfw("runspider", spider_file(tmp_path, custom), "-a", f"base_url={site.url}",
                     "-o", "cli.jl")
    assert result.returncode == 0, result.stderr
    assert len(jl(tmp_path / "cli.jl")) == 2
    assert not (tmp_path / "fromsettings.jl").exists()


def test_feeds_setting_on_the_command_line(crawlfw, tmp_path, site):
    feeds = json.dumps({"x.jl": {"format": "jsonlines"}, "y.csv": {}})
    result = crawlfw("runspider", spider_file(tmp_path), "-a", f"base_url={site.url}",
                     "-s", f"FEEDS={feeds}")
    assert result.returncode == 0, result.stderr
    assert len(jl(tmp_path / "x.jl")) == 2
    assert (tmp_path / "y.csv").read_text(encoding="utf-8").splitlines()[0] == "text,n"


def test_unknown_feed_option_is_named(crawlfw, tmp_path, site):
    custom = {"FEEDS": {"z.jl": {"format": "jsonlines", "batch_itme_count": 10}}}
    result = crawlfw("runspider", spider_file(tmp_path, custom), "-a", f"base_url={site.url}")
    assert "FEEDS['z.jl'] has unsupported feed option(s) 'batch_itme_count'" in result.stderr
    assert not (tmp_path / "z.jl").exists()


@pytest.mark.parametrize("encoding, expected", [
    ("utf-8", '{"text": "caf\u00e9", "n": 4}'),
    (None, '{"text": "caf\\u00e9", "n": 4}'),
])
def test_feed_export_encoding(crawlfw, tmp_path, site, encoding, expected):
    args = ["-s", f"FEED_EXPORT_ENCODING={encoding}"] if encoding else []
    result = crawlfw("runspider", spider_file(tmp_path), "-a", f"base_url={site.url}",
                     "-o", "e.jl", *args)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "e.jl").read_text(encoding="utf-8").splitlines()[0] == expected


#: Scrapy 2.19's empty feeds (``scrapy runspider`` of a spider that scrapes nothing,
#: ``-O empty.json -O empty.jl ...``), byte for byte (issue 34).
SCRAPY_219_EMPTY = {
    "empty.json": b"[\n\n]", "empty.jl": b"", "empty.jsonl": b"", "empty.csv": b"",
    "empty.xml": b'<?xml version="1.0" encoding="utf-8"?>\n<items>\n</items>',
    "empty.pickle": b"", "empty.marshal": b"",
}


def test_empty_crawl_still_writes_its_feeds_as_scrapy_2_19_does(crawlfw, tmp_path, site):
    spider = spider_file(tmp_path, page="empty.html")
    outputs = [arg for name in SCRAPY_219_EMPTY for arg in ("-O", name)]
    result = crawlfw("runspider", spider, "-a", f"base_url={site.url}", *outputs)
    assert result.returncode == 0, result.stderr
    for name, content in SCRAPY_219_EMPTY.items():
        assert (tmp_path / name).read_bytes() == content, name
    assert result.stderr.count("(0 items) in: ") == len(SCRAPY_219_EMPTY)


BROKEN_START = """
import crawlfw


class Boom:
    def __init__(self):
        raise RuntimeError("this pipeline refuses to start")


class BrokenSpider(crawlfw.Spider):
    name = "broken"
    custom_settings = {SETTINGS}

    def start_requests(self):
        yield crawlfw.Request(self.base_url + "/index.html")

    def parse(self, response):
        yield {"text": "x"}
"""


@pytest.mark.parametrize("settings, last_line, traceback", [
    # the example of issue 29: a middleware importing a module that is not there
    ({"DOWNLOADER_MIDDLEWARES": {"nonexistent.module.Mw": 500}},
     "Crawl could not start: DOWNLOADER_MIDDLEWARES: cannot load 'nonexistent.module.Mw': "
     "ModuleNotFoundError: No module named 'nonexistent'", False),
    ({"ITEM_PIPELINES": {"brokenspider.Nope": 300}},
     "Crawl could not start: ITEM_PIPELINES: cannot load 'brokenspider.Nope': NameError: "
     "Module 'brokenspider' doesn't define any object named 'Nope'", False),
    # a component whose constructor raises: built before the feeds are opened (its
    # traceback logged at DEBUG: it is a bug to find in user code)
    ({"ITEM_PIPELINES": {"brokenspider.Boom": 300}},
     "Crawl could not start: ITEM_PIPELINES: cannot build 'brokenspider.Boom': "
     "RuntimeError: this pipeline refuses to start", True),
])
def test_a_crawl_that_fails_before_it_starts_writes_no_feed(crawlfw, tmp_path, site, settings,
                                                           last_line, traceback):
    """Issue 29/34: a feed '[]' was written although the crawl never started. Now no
    feed file is created, one appended to is left as it was, exit status 1, and the
    reason is the last line (Scrapy 2.19 writes no feed either)."""
    spider = write(tmp_path / "brokenspider.py", BROKEN_START.replace("{SETTINGS}", repr(settings)))
    (tmp_path / "kept.jl").write_bytes(b'{"earlier": 1}\n')
    result = crawlfw("runspider", spider, "-a", f"base_url={site.url}", "-o", "new.json",
                     "-o", "kept.jl", "-o", "new.csv")
    assert result.returncode == 1, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix != ".py") == ["kept.jl"]
    assert (tmp_path / "kept.jl").read_bytes() == b'{"earlier": 1}\n'
    assert "Stored" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1].endswith(last_line), result.stderr[-3000:]
    # refused in one line before anything was opened
    assert "Spider opened" not in result.stderr
    assert [line for line in result.stderr.splitlines() if "] ERROR: " in line] == [lines[-1]]
    if not traceback:
        assert "Traceback" not in result.stderr
    else:  # at DEBUG
        assert result.stderr.count("Traceback") == 1


STATS_SPIDER = """
import crawlfw


class StatsSpider(crawlfw.Spider):
    name = "stats"

    def start_requests(self):
        yield crawlfw.Request(self.base_url + "/index.html")
        yield crawlfw.Request(self.base_url + "/img.png")

    def parse(self, response):
        for text in response.css("p.q::text").extract():  # NotSupported on the image
            yield {"text": text}
"""


def test_stats_a_scrapy_2_user_compares(crawlfw, tmp_path, site):
    """The same crawl under Scrapy 2.19 (``scrapy runspider`` of this spider with ``-o
    a.json -o a.csv -s FEEDS='{"stdout:": {"format": "jsonlines"}}'``) dumps these
    stats, written here from its output (issue 34)."""
    spider = write(tmp_path / "statsspider.py", STATS_SPIDER)
    result = crawlfw("runspider", spider, "-a", f"base_url={site.url}", "-o", "a.json",
                     "-o", "a.csv", "-s", 'FEEDS={"stdout:": {"format": "jsonlines"}}')
    assert result.returncode == 0, result.stderr
    dump = result.stderr[result.stderr.index("Dumping crawlfw stats:"):]
    scrapy_219 = {  # key: value, or a pattern of its repr
        "feedexport/success_count/FileFeedStorage": "2",
        "feedexport/success_count/StdoutFeedStorage": "1",
        "spider_exceptions/NotSupported": "1",
        "spider_exceptions/count": "1",
        "item_scraped_count": "2",
        "elapsed_time_seconds": r"\d+\.\d+",
        "start_time": r"datetime\.datetime\([\d, ]+, tzinfo=datetime\.timezone\.utc\)",
        "finish_time": r"datetime\.datetime\([\d, ]+, tzinfo=datetime\.timezone\.utc\)",
        # LogStats's averages: None for a crawl under a second
        "items_per_minute": "None",
        "responses_per_minute": "None",
    }
    for key, value in scrapy_219.items():
        assert re.search(rf"'{re.escape(key)}': {value}[,}}]", dump), (key, dump)
    assert "_NotText" not in dump and "failed_count" not in dump


def test_stored_lines_name_the_format_as_given(crawlfw, tmp_path, site):
    """Scrapy 2.19 names each feed's format as the user gave it (an -o extension, a
    ':FORMAT' suffix, a FEEDS 'format'): these lines are its output for the same command
    (crawlfw said 'jsonlines' for the jl and jsonl feeds)."""
    result = crawlfw("runspider", spider_file(tmp_path), "-a", f"base_url={site.url}",
                     "-o", "a.jl", "-o", "b.jsonl", "-o", "c.json", "-o", "d.CSV:csv",
                     "-o", "e.txt:jsonlines", "-o", "f.xml",
                     "-s", 'FEEDS={"g.out": {"format": "jsonl"}}')
    assert result.returncode == 0, result.stderr
    scrapy_219 = ["Stored jl feed (2 items) in: a.jl",
                  "Stored jsonl feed (2 items) in: b.jsonl",
                  "Stored json feed (2 items) in: c.json",
                  "Stored csv feed (2 items) in: d.CSV",
                  "Stored jsonlines feed (2 items) in: e.txt",
                  "Stored xml feed (2 items) in: f.xml",
                  "Stored jsonl feed (2 items) in: g.out"]
    stored = [line.split("] INFO: ", 1)[1] for line in result.stderr.splitlines()
              if "] INFO: Stored " in line]
    assert sorted(stored) == sorted(scrapy_219), result.stderr[-3000:]
    assert jl(tmp_path / "a.jl") == jl(tmp_path / "b.jsonl") == jl(tmp_path / "e.txt") \
        == jl(tmp_path / "g.out") == json.loads((tmp_path / "c.json").read_text())


START_ERROR_SPIDER = """
import crawlfw


class StartErrorSpider(crawlfw.Spider):
    name = "starterror"

    async def start(self):
        yield crawlfw.Request(self.base_url + "/index.html")
        raise ValueError("bad start")

    def parse(self, response):
        yield {"a": 1}
"""


def test_stats_of_a_start_that_raises(crawlfw, tmp_path, site):
    """Scrapy 2.19 (``scrapy runspider`` of this spider, ``-o o.jl``) logs "Error while
    reading start items and requests: bad start.", crawls what start() gave and dumps
    these stats, written here from its output (issue 34)."""
    spider = write(tmp_path / "starterror.py", START_ERROR_SPIDER)
    result = crawlfw("runspider", spider, "-a", f"base_url={site.url}", "-o", "o.jl")
    assert result.returncode == 0, result.stderr  # as Scrapy: start_error is no failure
    assert "ERROR: Error while reading start items and requests: bad start." in result.stderr
    dump = result.stderr[result.stderr.index("Dumping crawlfw stats:"):]
    scrapy_219 = {
        "spider_exceptions/ValueError": "1",
        "spider_exceptions/count": "1",
        "finish_reason": "'start_error'",
        "item_scraped_count": "1",
        "response_received_count": "1",
        "feedexport/success_count/FileFeedStorage": "1",
        "items_per_minute": "None",
        "responses_per_minute": "None",
        "log_count/ERROR": "1",
    }
    for key, value in scrapy_219.items():
        assert re.search(rf"'{re.escape(key)}': {value}[,}}]", dump), (key, dump)
    assert "Stored jl feed (1 items) in: o.jl" in result.stderr


@pytest.mark.parametrize("refused, message", [
    ({"z.jl": {"format": "jsonlines", "no_such_option": 10}},
     "has unsupported feed option(s) 'no_such_option'"),
    ({"z.jl": {"format": "yaml"}}, "Unknown feed format: 'yaml'"),
    ({"z-%(nope)s.jl": {"format": "jsonlines"}}, "uses %(nope)s"),
    ({"blocker/z.jl": {"format": "jsonlines"}}, "Not a directory"),
])
@pytest.mark.parametrize("overwrite_first", [True, False])
def test_a_refused_feed_destroys_no_earlier_output(crawlfw, tmp_path, site, refused, message,
                                                   overwrite_first):
    """Issue 17: every feed is checked before any is opened; an overwrite feed is emptied
    only when the crawl really starts."""
    out = tmp_path / "out"
    out.mkdir()
    old = b'[\n{"text": "kept from an earlier run", "n": 1}\n]'
    (out / "items.json").write_bytes(old)
    (out / "log.jl").write_bytes(b'{"earlier": 1}\n')
    (tmp_path / "blocker").write_text("a file where a directory should be")
    feeds = {"out/items.json": {"format": "json", "overwrite": True},
             "out/log.jl": {"format": "jsonlines"}}
    feeds = {**feeds, **refused} if overwrite_first else {**refused, **feeds}
    result = crawlfw("runspider", spider_file(tmp_path, {"FEEDS": feeds}),
                     "-a", f"base_url={site.url}")
    assert result.returncode == 1, result.stderr
    assert message in result.stderr
    assert (out / "items.json").read_bytes() == old
    assert (out / "log.jl").read_bytes() == b'{"earlier": 1}\n'
    assert sorted(p.name for p in out.iterdir()) == ["items.json", "log.jl"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".jl") == []
