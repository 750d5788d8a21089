"""FeedWriter: configuration checks, URI templating, the empty-feed rule, storage errors,
and the -o/-t command-line helper. Storages are the real ones, on tmp_path."""

import json
import logging
import re
from datetime import datetime, timedelta, timezone

import pytest

from crawlfw.core.feeds.feed_settings import feed_settings_from_cli, uri_scheme
from crawlfw.core.feeds.feeds import FeedWriter
from crawlfw.core.feeds.storage import _redact_uri
from crawlfw.exceptions import NotConfigured, UsageError
from crawlfw.extensions.feedexport import BlockingFeedStorage
from crawlfw.settings import Settings
from crawlfw.spiders import Spider


class FeedSpider(Spider):
    name = "books"
    category = "fiction"


def uri_params_add_page(params, spider):
    """FEED_URI_PARAMS function (Scrapy 1.2 style: mutate ``params`` in place)."""
    params["page"] = 7


def uri_params_replace(params, spider):
    """FEED_URI_PARAMS function (later style: return the params to use)."""
    return {"only": spider.name.upper()}


def write_feed(settings, items, spider=None):
    writer = FeedWriter(settings, spider or FeedSpider())
    writer.open()
    for item in items:
        writer.export_item(item)
    return writer, writer.close()


# configuration


@pytest.mark.parametrize("uri", [None, ""])
def test_no_feed_uri_is_not_configured(uri):
    with pytest.raises(NotConfigured, match="FEED_URI is not set"):
        FeedWriter({"FEED_URI": uri}, FeedSpider())


def test_unknown_format_names_it_and_lists_known_ones(tmp_path):
    with pytest.raises(NotConfigured) as info:
        FeedWriter({"FEED_URI": str(tmp_path / "x"), "FEED_FORMAT": "yaml"}, FeedSpider())
    message = str(info.value)
    assert "'yaml'" in message
    for known in ("csv", "json", "jsonlines", "jl", "xml", "pickle", "marshal"):
        assert known in message


def test_format_is_case_insensitive(tmp_path):
    writer = FeedWriter({"FEED_URI": str(tmp_path / "x"), "FEED_FORMAT": "JSON"}, FeedSpider())
    assert writer.format == "json"


def test_unknown_scheme_names_it():
    with pytest.raises(NotConfigured, match=r"scheme: 'gopher'.*known schemes: '', file, ftp"):
        FeedWriter({"FEED_URI": "gopher://host/feed"}, FeedSpider())


def test_custom_exporter_and_storage_from_settings(tmp_path):
    settings = {
        "FEED_URI": f"mem://{tmp_path}/out.txt",
        "FEED_FORMAT": "upper",
        "FEED_EXPORTERS": {"upper": "tests.core.test_feeds.UpperExporter"},
        "FEED_STORAGES": {"mem": "tests.core.test_feeds.PathStorage"},
    }
    writer, result = write_feed(settings, [{"a": "x"}, {"a": "y"}])
    assert result["stored"] is True
    assert (tmp_path / "out.txt").read_bytes() == b"X\nY\n"


def test_none_removes_a_base_exporter(tmp_path):
    with pytest.raises(NotConfigured, match="Unknown feed format: 'csv'"):
        FeedWriter(
            {"FEED_URI": str(tmp_path / "x"), "FEED_FORMAT": "csv", "FEED_EXPORTERS": {"csv": None}},
            FeedSpider(),
        )


def test_disabled_storage_scheme(tmp_path):
    settings = {"FEED_URI": "off://x", "FEED_STORAGES": {"off": "tests.core.test_feeds.OffStorage"}}
    with pytest.raises(NotConfigured, match="Disabled feed storage scheme: 'off': no backend"):
        FeedWriter(settings, FeedSpider())


def test_bad_feed_uri_params_path():
    with pytest.raises(NotConfigured, match="FEED_URI_PARAMS 'no.such.module.func'"):
        FeedWriter({"FEED_URI": "x.jl", "FEED_URI_PARAMS": "no.such.module.func"}, FeedSpider())


def test_accepts_settings_object(tmp_path):
    settings = Settings({"FEED_URI": str(tmp_path / "a.jl")})
    writer, result = write_feed(settings, [{"a": 1}])
    assert result["stored"] and result["format"] == "jsonlines"


# URI templating


def test_uri_template_name_time_and_spider_attribute(tmp_path):
    before = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)
    settings = {"FEED_URI": str(tmp_path / "%(name)s" / "%(category)s-%(time)s.jl")}
    writer, result = write_feed(settings, [{"a": 1}])
    after = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)
    (path,) = (tmp_path / "books").iterdir()
    match = re.fullmatch(r"fiction-(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d)\.jl", path.name)
    assert match, path.name
    stamp = datetime.strptime(match.group(1), "%Y-%m-%dT%H-%M-%S")
    assert before <= stamp <= after + timedelta(seconds=1)
    assert result["uri"] == str(path)


def test_uri_params_function_mutating(tmp_path):
    settings = {
        "FEED_URI": str(tmp_path / "%(name)s-%(page)s.jl"),
        "FEED_URI_PARAMS": "tests.core.test_feeds.uri_params_add_page",
    }
    write_feed(settings, [{"a": 1}])
    assert (tmp_path / "books-7.jl").exists()


def test_uri_params_function_returning(tmp_path):
    settings = {
        "FEED_URI": str(tmp_path / "%(only)s.jl"),
        "FEED_URI_PARAMS": uri_params_replace,
    }
    write_feed(settings, [{"a": 1}])
    assert (tmp_path / "BOOKS.jl").exists()


def test_uri_template_unknown_parameter(tmp_path):
    writer = FeedWriter({"FEED_URI": str(tmp_path / "%(nope)s.jl")}, FeedSpider())
    with pytest.raises(NotConfigured, match=r"%\(nope\)s.*spider 'books' has no attribute 'nope'"):
        writer.open()


def test_uri_template_broken(tmp_path):
    writer = FeedWriter({"FEED_URI": str(tmp_path / "100%.jl")}, FeedSpider())
    with pytest.raises(NotConfigured, match="not a valid %-template"):
        writer.open()


@pytest.mark.parametrize(
    ("uri", "scheme"),
    [
        ("items.json", ""),
        ("/abs/items.json", ""),
        ("%(name)s/%(time)s.csv", ""),
        ("file:///tmp/x.json", "file"),
        ("FTP://h/x", "ftp"),
        ("s3://bucket/key", "s3"),
        ("stdout:", "stdout"),
        ("C:\\feeds\\items.json", ""),
        ("c:/feeds/items.json", ""),
    ],
)
def test_uri_scheme(uri, scheme):
    assert uri_scheme(uri) == scheme


@pytest.mark.parametrize(
    ("uri", "redacted"),
    [
        ("ftp://user:secret@host/path", "ftp://user:***@host/path"),
        ("ftp://user@host/path", "ftp://user@host/path"),
        ("s3://bucket/key", "s3://bucket/key"),
        ("items.jl", "items.jl"),
    ],
)
def test_redact_uri(uri, redacted):
    assert _redact_uri(uri) == redacted


# writing, FEED_EXPORT_FIELDS, FEED_EXPORT_ENCODING


def test_writes_json_feed_and_logs(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="crawlfw.core.feeds.feeds")
    path = tmp_path / "out.json"
    writer, result = write_feed({"FEED_URI": str(path), "FEED_FORMAT": "json"}, [{"a": 1}, {"a": 2}])
    assert json.loads(path.read_bytes()) == [{"a": 1}, {"a": 2}]
    assert result == {
        "uri": str(path),
        "format": "json",
        "itemcount": 2,
        "stored": True,
        "error": None,
        "local_path": None,
    }
    assert f"Stored json feed (2 items) in: {path}" in caplog.messages


def test_export_fields_and_encoding(tmp_path):
    path = tmp_path / "out.jl"
    settings = {
        "FEED_URI": str(path),
        "FEED_EXPORT_FIELDS": "b,a",
        "FEED_EXPORT_ENCODING": "utf-8",
    }
    write_feed(settings, [{"a": "é", "b": 2, "c": 3}])
    assert path.read_bytes() == '{"b": 2, "a": "é"}\n'.encode()


def test_default_encoding_escapes_json(tmp_path):
    path = tmp_path / "out.jl"
    write_feed({"FEED_URI": str(path)}, [{"a": "é"}])
    assert path.read_bytes() == b'{"a": "\\u00e9"}\n'


def test_file_feed_appends_like_scrapy_1_2(tmp_path):
    path = tmp_path / "out.jl"
    write_feed({"FEED_URI": str(path)}, [{"run": 1}])
    write_feed({"FEED_URI": str(path)}, [{"run": 2}])
    assert path.read_bytes() == b'{"run": 1}\n{"run": 2}\n'


def test_failing_item_is_not_counted(tmp_path):
    writer = FeedWriter({"FEED_URI": str(tmp_path / "o.jl")}, FeedSpider())
    writer.open()
    writer.export_item({"ok": 1})
    with pytest.raises(TypeError):
        writer.export_item({"bad": object()})
    writer.export_item({"ok": 2})
    assert writer.close()["itemcount"] == 2
    assert (tmp_path / "o.jl").read_bytes() == b'{"ok": 1}\n{"ok": 2}\n'


# FEED_STORE_EMPTY


@pytest.mark.parametrize("fmt", ["json", "xml", "csv", "jsonlines"])
def test_empty_feed_not_stored_leaves_no_file(tmp_path, fmt):
    path = tmp_path / "sub" / f"out.{fmt}"
    settings = {"FEED_URI": str(path), "FEED_FORMAT": fmt, "FEED_STORE_EMPTY": False}
    writer, result = write_feed(settings, [])
    assert result["stored"] is False and result["itemcount"] == 0
    assert not path.exists()


def test_empty_feed_not_stored_leaves_existing_file_untouched(tmp_path):
    path = tmp_path / "out.json"
    path.write_bytes(b"previous run")
    write_feed({"FEED_URI": str(path), "FEED_FORMAT": "json", "FEED_STORE_EMPTY": False}, [])
    assert path.read_bytes() == b"previous run"


#: The bytes of an empty feed, per format, as Scrapy 2.19 writes them (``scrapy
#: runspider`` of a spider with no start URL, ``-O e.json -O e.jl ...``; issue 34):
#: byte-identical feeds keep diffs of a Scrapy run and a crawlfw run clean.
SCRAPY_219_EMPTY_FEEDS = {
    "json": b"[\n\n]",
    "jsonlines": b"",
    "jl": b"",
    "jsonl": b"",
    "csv": b"",
    "xml": b'<?xml version="1.0" encoding="utf-8"?>\n<items>\n</items>',
    "pickle": b"",
    "marshal": b"",
}


@pytest.mark.parametrize("fmt", sorted(SCRAPY_219_EMPTY_FEEDS))
def test_empty_feed_stored_when_store_empty(tmp_path, fmt):
    path = tmp_path / f"out.{fmt}"
    settings = {"FEED_URI": str(path), "FEED_FORMAT": fmt, "FEED_STORE_EMPTY": True}
    writer, result = write_feed(settings, [])
    assert result["stored"] is True
    assert path.read_bytes() == SCRAPY_219_EMPTY_FEEDS[fmt]


#: Two items ``{"a": 1, "b": {"c": [1, 2]}}, {"a": 2}`` in Scrapy 2.19's JSON and XML
#: feeds, by ``indent`` (``FEED_EXPORT_INDENT``, default 0): the bytes Scrapy 2.19's
#: exporters write with that indent.
SCRAPY_219_FEEDS_BY_INDENT = {
    ("json", 0): b'[\n{"a": 1, "b": {"c": [1, 2]}},\n{"a": 2}\n]',
    ("json", 2): (b'[\n{\n  "a": 1,\n  "b": {\n    "c": [\n      1,\n      2\n    ]\n  }\n},'
                  b'\n{\n  "a": 2\n}\n]'),
    ("xml", None): (b'<?xml version="1.0" encoding="utf-8"?>\n<items><item><a>1</a><b><c>'
                    b"<value>1</value><value>2</value></c></b></item><item><a>2</a></item>"
                    b"</items>"),
    ("xml", 0): (b'<?xml version="1.0" encoding="utf-8"?>\n<items>\n<item><a>1</a><b><c>'
                 b"<value>1</value><value>2</value></c></b></item>\n<item><a>2</a></item>"
                 b"\n</items>"),
    ("xml", 2): (b'<?xml version="1.0" encoding="utf-8"?>\n<items>\n  <item>\n    <a>1</a>\n'
                 b"    <b>\n      <c>\n        <value>1</value>\n        <value>2</value>\n"
                 b"      </c>\n    </b>\n  </item>\n  <item>\n    <a>2</a>\n  </item>\n</items>"),
}


@pytest.mark.parametrize("fmt, indent", sorted(SCRAPY_219_FEEDS_BY_INDENT,
                                               key=lambda k: (k[0], k[1] or -1)))
@pytest.mark.parametrize("where", ["setting", "option"])
def test_json_and_xml_feeds_are_laid_out_as_scrapy_2_19s(tmp_path, fmt, indent, where):
    path = tmp_path / f"out.{fmt}"
    items = [{"a": 1, "b": {"c": [1, 2]}}, {"a": 2}]
    if where == "setting":
        settings = {"FEED_URI": str(path), "FEED_FORMAT": fmt}
        if indent != 0:  # 0 is the default
            settings["FEED_EXPORT_INDENT"] = indent
        write_feed(settings, items)
    else:
        writer = FeedWriter({}, spider=Spider("s"), uri=str(path),
                            options={"format": fmt, "indent": indent})
        writer.open()
        for item in items:
            writer.export_item(item)
        writer.close()
    assert path.read_bytes() == SCRAPY_219_FEEDS_BY_INDENT[(fmt, indent)]


# storage errors


def test_storage_error_is_logged_with_local_path(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="crawlfw.core.feeds.feeds")
    settings = {
        "FEED_URI": "broken://host/feed.jl",
        "FEED_STORAGES": {"broken": "tests.core.test_feeds.BrokenUploadStorage"},
        "FEED_TEMPDIR": str(tmp_path),
    }
    spider = FeedSpider()
    spider.settings = Settings(settings)  # BlockingFeedStorage reads FEED_TEMPDIR from here
    writer, result = write_feed(settings, [{"a": 1}], spider=spider)
    assert result["stored"] is False
    assert result["error"] == "ConnectionRefusedError: upload refused"
    local = result["local_path"]
    assert local and local.startswith(str(tmp_path))
    with open(local, "rb") as f:
        assert f.read() == b'{"a": 1}\n'
    (record,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.getMessage() == (
        f"Error storing jsonlines feed (1 items) in: broken://host/feed.jl "
        f"-- the feed data is kept in {local}"
    )
    assert record.exc_info[0] is ConnectionRefusedError


def _stats_crawler(settings):
    from crawlfw.statscollectors import MemoryStatsCollector

    class Crawler:
        pass

    crawler = Crawler()
    crawler.settings = Settings(settings)
    crawler.spider = FeedSpider()
    crawler.spider.settings = crawler.settings  # BlockingFeedStorage reads FEED_TEMPDIR
    crawler.stats = MemoryStatsCollector(crawler)
    return crawler


def test_stored_and_failed_files_are_counted_as_scrapy_2_19_counts_them(tmp_path):
    """Scrapy 2.19's stats keys: feedexport/success_count/<storage class> and
    feedexport/failed_count/<storage class>, one per file stored or not; an empty feed
    not stored (FEED_STORE_EMPTY False) is not counted (issue 34)."""
    broken = "tests.core.test_feeds.BrokenUploadStorage"
    crawler = _stats_crawler({"FEED_STORAGES": {"broken": broken},
                              "FEED_TEMPDIR": str(tmp_path)})
    feeds = [(str(tmp_path / "a.jl"), {}, [{"a": 1}]),
             (str(tmp_path / "b.csv"), {}, []),
             ("stdout:", {"format": "jsonlines", "store_empty": False}, []),
             ("broken://host/feed.jl", {"format": "jsonlines"}, [{"a": 1}]),
             (str(tmp_path / "batch-%(batch_id)d.jl"), {"batch_item_count": 1},
              [{"a": 1}, {"a": 2}])]
    for uri, options, items in feeds:
        writer = FeedWriter.from_crawler(crawler, uri, options)
        writer.open()
        for item in items:
            writer.export_item(item)
        writer.close()
    assert {k: v for k, v in crawler.stats.get_stats().items()
            if k.startswith("feedexport/")} == {
        "feedexport/success_count/FileFeedStorage": 4,  # a.jl, b.csv, two batches
        "feedexport/failed_count/BrokenUploadStorage": 1,
    }


def test_lifecycle_errors(tmp_path):
    writer = FeedWriter({"FEED_URI": str(tmp_path / "o.jl")})
    with pytest.raises(ValueError, match="needs the spider"):
        writer.open()
    with pytest.raises(RuntimeError, match="not open"):
        writer.close()
    writer.open(FeedSpider())
    with pytest.raises(RuntimeError, match="already open"):
        writer.open()
    writer.close()
    with pytest.raises(RuntimeError, match="not open"):
        writer.export_item({"a": 1})


def test_context_manager(tmp_path):
    with FeedWriter({"FEED_URI": str(tmp_path / "o.jl")}, FeedSpider()) as writer:
        writer.export_item({"a": 1})
    assert (tmp_path / "o.jl").read_bytes() == b'{"a": 1}\n'


def test_from_crawler_uses_crawler_spider_and_settings(tmp_path):
    class Crawler:
        settings = Settings({"FEED_URI": str(tmp_path / "%(name)s.jl")})
        spider = FeedSpider()

    writer = FeedWriter.from_crawler(Crawler())
    writer.open()
    writer.export_item({"a": 1})
    writer.close()
    assert (tmp_path / "books.jl").read_bytes() == b'{"a": 1}\n'


# -o / -t


@pytest.mark.parametrize(
    ("output", "fmt", "expected"),
    [
        ("items.json", None, {"FEED_URI": "items.json", "FEED_FORMAT": "json"}),
        # the extension names the format, as in Scrapy 2.19 ("Stored jl feed")
        ("items.jl", None, {"FEED_URI": "items.jl", "FEED_FORMAT": "jl"}),
        ("items.jsonl", None, {"FEED_URI": "items.jsonl", "FEED_FORMAT": "jsonl"}),
        ("out/items.CSV", None, {"FEED_URI": "out/items.CSV", "FEED_FORMAT": "csv"}),
        ("items.xml", None, {"FEED_URI": "items.xml", "FEED_FORMAT": "xml"}),
        ("items.pickle", None, {"FEED_URI": "items.pickle", "FEED_FORMAT": "pickle"}),
        ("items.marshal", None, {"FEED_URI": "items.marshal", "FEED_FORMAT": "marshal"}),
        ("items.txt", "csv", {"FEED_URI": "items.txt", "FEED_FORMAT": "csv"}),
        ("-", "jsonlines", {"FEED_URI": "stdout:", "FEED_FORMAT": "jsonlines"}),
        ("ftp://h/%(name)s.json", None, {"FEED_URI": "ftp://h/%(name)s.json", "FEED_FORMAT": "json"}),
        (None, None, {}),
    ],
)
def test_feed_settings_from_cli(output, fmt, expected):
    assert feed_settings_from_cli(output, fmt) == expected


@pytest.mark.parametrize(
    ("output", "fmt", "message"),
    [
        ("items.txt", None, r"Unrecognized output format 'txt'.*\('csv', 'jl', 'json'"),
        ("items", None, r"Unrecognized output format ''"),
        ("items.json", "yaml", r"Unrecognized output format 'yaml'"),
        ("-", None, r"'-o -' \(standard output\).*'-t'"),
    ],
)
def test_feed_settings_from_cli_errors(output, fmt, message):
    with pytest.raises(UsageError, match=message):
        feed_settings_from_cli(output, fmt)


def test_feed_settings_from_cli_uses_settings_exporters():
    settings = Settings({"FEED_EXPORTERS": {"upper": "tests.core.test_feeds.UpperExporter"}})
    assert feed_settings_from_cli("x.upper", None, settings)["FEED_FORMAT"] == "upper"


# components loaded by path from the settings above


class UpperExporter:
    def __init__(self, file, fields_to_export=None, encoding=None):
        self.file = file

    def start_exporting(self):
        pass

    def export_item(self, item):
        self.file.write(item["a"].upper().encode() + b"\n")

    def finish_exporting(self):
        pass


class PathStorage:
    """A scheme that writes to the URI's path on the local disk."""

    def __init__(self, uri):
        self.path = uri.split("://", 1)[1]

    def open(self, spider):
        return open(self.path, "wb")

    def store(self, file):
        file.close()


class OffStorage:
    def __init__(self, uri):
        raise NotConfigured("no backend")


class BrokenUploadStorage(BlockingFeedStorage):
    """Stages the feed in a temporary file like FTP/S3, but the upload always fails."""

    def __init__(self, uri):
        pass

    def _store_in_thread(self, file):
        assert file.read() == b'{"a": 1}\n'
        raise ConnectionRefusedError("upload refused")


def test_exported_names():
    # feeds.py was split (issue 19): the writer, the feeds of the settings, resuming
    import crawlfw.core.feeds.feed_settings as feed_settings
    import crawlfw.core.feeds.feeds as module
    import crawlfw.core.feeds.resume as resume

    assert sorted(module.__all__) == ["FeedWriter"]
    assert sorted(feed_settings.__all__) == ["FEED_OPTIONS", "feed_settings_from_cli",
                                             "feeds_from_settings", "resolve_uri",
                                             "uri_scheme"]
    assert sorted(resume.__all__) == ["FeedReplacedError", "FeedResumeError"]
    for mod in (module, feed_settings, resume):
        assert all(hasattr(mod, name) for name in mod.__all__)


# FEEDS (Scrapy 2): one writer per entry, options over the FEED_* settings


def test_feeds_from_settings_lists_feeds_then_feed_uri(tmp_path):
    from pathlib import Path

    from crawlfw.core.feeds.feed_settings import feeds_from_settings

    settings = {"FEEDS": {Path("a.json"): {"format": "json"}, "b.jl": None}, "FEED_URI": "c.csv"}
    assert feeds_from_settings(settings) == [("a.json", {"format": "json"}), ("b.jl", None),
                                             (None, None)]
    assert feeds_from_settings({"FEEDS": {"c.csv": {}}, "FEED_URI": "c.csv"}) == [("c.csv", {})]
    assert feeds_from_settings({}) == []
    assert feeds_from_settings({"FEEDS": '{"x.jl": {}}'}) == [("x.jl", {})]


def test_feed_options_override_feed_settings(tmp_path):
    settings = {"FEED_EXPORT_FIELDS": ["a"], "FEED_FORMAT": "csv", "FEED_STORE_EMPTY": False}
    path = tmp_path / "o.json"
    writer = FeedWriter(settings, FeedSpider(), uri=str(path),
                        options={"encoding": "utf-8", "fields": ["b", "a"], "indent": 1})
    assert writer.format == "json"  # guessed from the extension, not FEED_FORMAT
    writer.open()
    writer.export_item({"a": "\u00e9", "b": 2})
    writer.close()
    assert path.read_text(encoding="utf-8") == '[\n{\n "b": 2,\n "a": "\u00e9"\n}\n]'


@pytest.mark.parametrize("overwrite, expected", [(False, b"old\n{}\n"), (True, b"{}\n")])
def test_feed_option_overwrite(tmp_path, overwrite, expected):
    path = tmp_path / "o.jl"
    path.write_bytes(b"old\n")
    writer = FeedWriter({}, FeedSpider(), uri=str(path), options={"overwrite": overwrite})
    writer.open()
    writer.export_item({})
    writer.close()
    assert path.read_bytes() == expected


@pytest.mark.parametrize("store_empty, exists", [(None, True), (True, True), (False, False)])
def test_feed_option_store_empty_default_true(tmp_path, store_empty, exists):
    path = tmp_path / "o.json"
    writer = FeedWriter({}, FeedSpider(), uri=str(path), options={"store_empty": store_empty})
    writer.open()
    assert writer.close()["stored"] is exists
    assert path.exists() is exists
    if exists:
        assert path.read_text() == "[\n\n]"  # Scrapy 2.19's empty JSON feed


@pytest.mark.parametrize("options, match", [
    ({"bogus_option": 2}, r"FEEDS\['o.data'\] has unsupported feed option\(s\) 'bogus_option'"),
    ({"format": "json", "batch_item_count": 2},
     r"%\(batch_time\)s or %\(batch_id\)d must be in the feed URI \(o.data\)"),
    ({"format": "json", "batch_item_count": -1}, r"batch_item_count must be a whole number"),
    ({"format": "json", "postprocessing": ["no.such.Plugin"]},
     r"FEEDS\['o.data'\] postprocessing: "),
    ({"format": "json", "item_filter": "no.such.Filter"}, r"FEEDS\['o.data'\] item_filter: "),
    ({}, r"FEEDS\['o.data'\] has no 'format' and its file extension names none"),
    ({"format": "yaml"}, r"Unknown feed format: 'yaml' \(FEEDS\['o.data'\]\)"),
    ("json", r"FEEDS\['o.data'\] must be a dict of feed options"),
])
def test_bad_feed_options_are_named(tmp_path, options, match):
    with pytest.raises(NotConfigured, match=match):
        FeedWriter({}, FeedSpider(), uri="o.data", options=options)


# cutting a feed back to a mark (the Exporter actor's restart)

REWIND_ITEMS = [{"n": n, "name": f"item {n}"} for n in range(7)]


@pytest.mark.parametrize("fmt, ext, overwrite", [
    ("jsonlines", "jl", False), ("json", "json", False), ("json", "json", True),
    ("csv", "csv", False), ("xml", "xml", False), ("jsonlines", "jl", True),
])
@pytest.mark.parametrize("at", [0, 3])  # the mark: before the first item, or after 3
def test_rewind_cuts_the_feed_back_to_the_mark_and_goes_on(tmp_path, fmt, ext, overwrite, at):
    straight = tmp_path / f"straight.{ext}"
    writer = FeedWriter({}, FeedSpider(), uri=str(straight), options={"format": fmt})
    writer.open()
    for item in REWIND_ITEMS:
        writer.export_item(item)
    writer.close()
    path = tmp_path / f"rewound.{ext}"
    writer = FeedWriter({}, FeedSpider(), uri=str(path),
                        options={"format": fmt, "overwrite": overwrite})
    writer.open()
    for item in REWIND_ITEMS[:at]:
        writer.export_item(item)
    mark = writer.mark()
    for item in REWIND_ITEMS[at:at + 2]:  # half a batch, then half a line
        writer.export_item(item)
    writer.file.write(b'{"torn": "half a li')
    writer.rewind(mark)
    assert writer.itemcount == at
    for item in REWIND_ITEMS[at:]:  # the batch again, and the rest
        writer.export_item(item)
    summary = writer.close()
    assert summary["stored"] and summary["itemcount"] == len(REWIND_ITEMS)
    assert path.read_bytes() == straight.read_bytes()


def test_mark_makes_no_system_call(tmp_path):
    writer = FeedWriter({}, FeedSpider(), uri=str(tmp_path / "a.jl"), options={})
    writer.open()
    writer.export_item({"n": 1})
    assert writer.mark() == (0 + len(b'{"n": 1}\n'), 1, True)
    assert (tmp_path / "a.jl").read_bytes() == b""  # nothing flushed by mark()
    writer.close()


def test_a_stdout_feed_cannot_be_rewound():
    writer = FeedWriter({"FEED_URI": "stdout:", "FEED_FORMAT": "jsonlines"}, FeedSpider())
    writer.open()
    assert not writer.rewindable
    with pytest.raises(RuntimeError, match="The feed stdout: cannot be cut back"):
        writer.rewind((0, 0, False))


# A JOBDIR feed's file is watched (issue 23)


def test_a_feed_file_replaced_during_the_crawl_is_an_error_not_stored(tmp_path, caplog):
    from crawlfw.core.feeds.resume import FeedReplacedError

    path = tmp_path / "items.jl"
    writer = FeedWriter({"FEED_URI": str(path)}, FeedSpider())
    writer.open()
    writer.export_item({"a": 1})
    assert writer.checkpoint(fsync=False)["items"] == 1
    path.rename(tmp_path / "moved.jl")
    path.write_text("another file\n")
    with pytest.raises(FeedReplacedError, match="was replaced by another file during the crawl"):
        writer.checkpoint(fsync=False)
    with caplog.at_level(logging.INFO):
        result = writer.close()
    assert not result["stored"] and "replaced by another file" in result["error"]
    assert not any(r.getMessage().startswith("Stored") for r in caplog.records)
    assert path.read_text() == "another file\n"


def test_resume_of_a_shortened_feed_is_refused_or_started_anew(tmp_path):
    from crawlfw.core.feeds.resume import FeedResumeError

    path = tmp_path / "items.json"
    writer = FeedWriter({"FEED_URI": str(path), "FEED_FORMAT": "json"}, FeedSpider())
    writer.open()
    writer.export_item({"a": 1})
    writer.export_item({"a": 2})
    state = writer.checkpoint(fsync=False)
    writer.file.close()
    path.write_bytes(path.read_bytes()[:5])
    again = FeedWriter({"FEED_URI": str(path), "FEED_FORMAT": "json"}, FeedSpider())
    with pytest.raises(FeedResumeError, match=r"is 5 bytes long, but this job committed"):
        again.check_resume(state)
    with pytest.raises(FeedResumeError):
        again.open(resume=state)
    assert path.read_bytes() == b'[\n{"a"'[:5]  # nothing written
    anew = FeedWriter({"FEED_URI": str(path), "FEED_FORMAT": "json",
                       "FEED_RESTART_BROKEN": True}, FeedSpider())
    anew.check_resume(state)  # allowed
    anew.open(resume=state)
    anew.export_item({"a": 3})
    anew.close()
    assert json.loads(path.read_text()) == [{"a": 3}]
    [kept] = tmp_path.glob("items.json.broken-*")
    assert kept.read_bytes() == b'[\n{"a"'[:5]


def test_a_job_resumes_its_feed_under_another_name_of_the_format(tmp_path):
    """A JOBDIR job begun when '-o items.jl' was the format 'jsonlines' goes on when it
    is 'jl' (as Scrapy 2.19 names it): the same exporter, so the feed is cut back to its
    committed length and continued, not started again after what the crash left."""
    path = tmp_path / "items.jl"
    writer = FeedWriter({"FEED_URI": str(path), "FEED_FORMAT": "jsonlines"}, FeedSpider())
    writer.open()
    writer.export_item({"a": 1})
    state = writer.checkpoint(fsync=False)
    writer.export_item({"a": "not committed"})
    writer.file.close()
    again = FeedWriter({"FEED_URI": str(path), "FEED_FORMAT": "jl"}, FeedSpider())
    again.check_resume(state)
    again.open(resume=state)
    again.export_item({"a": 2})
    again.close()
    assert [json.loads(line) for line in path.read_text().splitlines()] == [{"a": 1}, {"a": 2}]
    other = FeedWriter({"FEED_URI": str(path), "FEED_FORMAT": "csv"}, FeedSpider())
    assert other._formats == {"csv"}  # another exporter: not a resume of this feed
    assert FeedWriter({"FEED_URI": str(path), "FEED_FORMAT": "jl"}, FeedSpider())._formats == {
        "jl", "jsonl", "jsonlines"}
