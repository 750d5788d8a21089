"""FeedWriter with Scrapy 2's feed options, and the feeds checked before any is opened
(issue 17): the cases a crawl through the CLI does not reach easily. Real storages on
tmp_path; the crawl-level tests are tests/commands/test_feeds_scrapy2.py."""

import gzip
import json

import pytest

from crawlfw.actors.exporter import open_feeds, prepare_feeds
from crawlfw.core.feeds.feeds import FeedWriter
from crawlfw.exceptions import CrawlStartError
from crawlfw.extensions.feedexport import FileFeedStorage
from crawlfw.settings import Settings
from crawlfw.spiders import Spider

GZIP = "crawlfw.extensions.postprocessing.GzipPlugin"


class FeedSpider(Spider):
    name = "books"


def feed(tmp_path, name, **options):
    return FeedWriter({}, FeedSpider(), uri=str(tmp_path / name), options=options)


def test_batches_with_store_empty_false(tmp_path):
    writer = feed(tmp_path, "b-%(batch_id)d.jl", format="jsonlines", batch_item_count=2,
                  store_empty=False)
    writer.open()
    for n in range(4):
        writer.export_item({"n": n})
    summary = writer.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b-1.jl", "b-2.jl"]
    assert summary["itemcount"] == 0 and not summary["stored"] and summary["error"] is None
    assert [json.loads(x) for x in (tmp_path / "b-2.jl").read_text().splitlines()] == [
        {"n": 2}, {"n": 3}]


def test_discarding_a_batched_feed_between_batches_keeps_the_stored_ones(tmp_path):
    # A full batch is stored and the next batch's file waits for its first item: a
    # discard then has no file to undo (it used to call close() on None).
    writer = feed(tmp_path, "d-%(batch_id)d.jl", format="jsonlines", batch_item_count=1)
    writer.open()
    writer.export_item({"n": 0})
    assert writer.file is None
    writer.discard()
    assert [p.name for p in tmp_path.iterdir()] == ["d-1.jl"]
    assert json.loads((tmp_path / "d-1.jl").read_text()) == {"n": 0}


def test_empty_postprocessed_feed_not_stored_leaves_nothing(tmp_path):
    writer = feed(tmp_path, "e.jl.gz", format="jsonlines", postprocessing=[GZIP],
                  store_empty=False)
    writer.open()
    assert not writer.close()["stored"]
    assert list(tmp_path.iterdir()) == []
    # the plug-ins were closed before the file: none writes into it when collected
    assert writer.file.closed


def test_empty_postprocessed_feed_is_a_valid_empty_document(tmp_path):
    writer = feed(tmp_path, "e.json.gz", format="json", postprocessing=[GZIP])
    writer.open()
    assert writer.close()["stored"]
    assert json.loads(gzip.decompress((tmp_path / "e.json.gz").read_bytes())) == []


def test_appending_to_a_gzip_feed_gives_a_multi_member_gzip(tmp_path):
    for run in range(2):
        writer = feed(tmp_path, "a.jl.gz", format="jsonlines", postprocessing=[GZIP])
        writer.open()
        writer.export_item({"run": run})
        writer.close()
    lines = gzip.decompress((tmp_path / "a.jl.gz").read_bytes()).splitlines()
    assert [json.loads(x) for x in lines] == [{"run": 0}, {"run": 1}]


def test_batch_and_postprocessed_feeds_are_not_rewindable(tmp_path):
    plain = feed(tmp_path, "p.jl", format="jsonlines")
    batched = feed(tmp_path, "b%(batch_id)d.jl", format="jsonlines", batch_item_count=3)
    packed = feed(tmp_path, "z.jl.gz", format="jsonlines", postprocessing=[GZIP])
    for writer in (plain, batched, packed):
        writer.open()
    assert plain.rewindable and plain.checkpoint(fsync=False) is not None
    assert not batched.rewindable and batched.checkpoint(fsync=False) is None
    assert not packed.rewindable and packed.not_rewindable_because == "postprocessing"
    for writer in (plain, batched, packed):
        writer.close()


def test_prepare_touches_nothing(tmp_path):
    (tmp_path / "old.json").write_bytes(b"old")
    writer = feed(tmp_path, "sub/dir/%(name)s.jl", format="jsonlines")
    assert writer.prepare().endswith("sub/dir/books.jl")
    assert not (tmp_path / "sub").exists()
    over = feed(tmp_path, "old.json", format="json", overwrite=True)
    over.prepare()
    assert (tmp_path / "old.json").read_bytes() == b"old"
    (tmp_path / "afile").write_text("x")
    with pytest.raises(NotADirectoryError):
        feed(tmp_path, "afile/x.jl", format="jsonlines").prepare()
    (tmp_path / "adir").mkdir()
    with pytest.raises(IsADirectoryError):
        feed(tmp_path, "adir", format="jsonlines").prepare()


class FailingOpenStorage(FileFeedStorage):
    """A storage whose open() fails after the configuration was accepted."""

    def open(self, spider):
        raise OSError("the disk went away")


class _Crawler:
    def __init__(self, settings):
        self.settings = Settings(settings)
        self.spider = FeedSpider()


def test_a_feed_that_fails_to_open_empties_no_overwrite_feed(tmp_path):
    """Overwrite feeds are opened last; the ones opened before a failure are undone."""
    (tmp_path / "keep.json").write_bytes(b"[\n{\"kept\": 1}\n]")
    (tmp_path / "app.jl").write_bytes(b'{"old": 1}\n')
    crawler = _Crawler({"FEED_STORAGES": {"fail": f"{__name__}.FailingOpenStorage"}})
    feeds = [(str(tmp_path / "keep.json"), {"format": "json", "overwrite": True}),
             (str(tmp_path / "app.jl"), {"format": "jsonlines"}),
             (str(tmp_path / "new.jl"), {"format": "jsonlines"}),
             ("fail://x/out.jl", {"format": "jsonlines"})]
    writers = prepare_feeds(crawler, feeds)
    with pytest.raises(CrawlStartError, match="Cannot open the feed fail://x/out.jl: "
                                              "the disk went away"):
        open_feeds(crawler, writers)
    assert (tmp_path / "keep.json").read_bytes() == b"[\n{\"kept\": 1}\n]"
    assert (tmp_path / "app.jl").read_bytes() == b'{"old": 1}\n'
    assert not (tmp_path / "new.jl").exists()
