"""Feed storages against real back ends (local disk, stdout, an FTP server and an
S3-compatible server on 127.0.0.1) and the signal-driven FeedExporter extension."""

import json
import logging
from pathlib import Path
from urllib.parse import quote

import pytest

from crawlfw import signals
from crawlfw.core.feeds.feeds import FeedWriter
from crawlfw.exceptions import NotConfigured
from crawlfw.extensions.feedexport import (
    BlockingFeedStorage,
    FeedExporter,
    FileFeedStorage,
    FTPFeedStorage,
    IFeedStorage,
    S3FeedStorage,
    StdoutFeedStorage,
)
from crawlfw.settings import Settings
from crawlfw.signalmanager import SignalManager
from crawlfw.spiders import Spider
from tests.support import ftp as ftp_support
from tests.support import s3 as s3_support
from tests.support.s3 import ACCESS_KEY, REGION, SECRET_KEY

# fixtures from tests/support
ftp_server = ftp_support.ftp_server
s3_server = s3_support.s3_server
s3_endpoint = s3_support.s3_endpoint
s3_client = s3_support.s3_client


class FeedSpider(Spider):
    name = "books"


def run_feed(settings, items, spider=None):
    spider = spider or FeedSpider()
    spider.settings = settings = Settings(settings)
    writer = FeedWriter(settings, spider)
    writer.open()
    for item in items:
        writer.export_item(item)
    return writer.close()


@pytest.mark.parametrize(
    "cls",
    [StdoutFeedStorage, FileFeedStorage, FTPFeedStorage, S3FeedStorage, BlockingFeedStorage],
)
def test_storages_provide_the_interface(cls):
    assert isinstance(cls.__new__(cls), IFeedStorage)


# file


@pytest.mark.parametrize("as_uri", [False, True])
def test_file_storage_creates_parent_dirs(tmp_path, as_uri):
    path = tmp_path / "a b" / "c" / "out.jl"
    uri = path.as_uri() if as_uri else str(path)
    storage = FileFeedStorage(uri)
    assert storage.path == str(path)
    f = storage.open(FeedSpider())
    f.write(b"data")
    storage.store(f)
    assert f.closed
    assert path.read_bytes() == b"data"


def test_file_storage_appends(tmp_path):
    path = tmp_path / "out.jl"
    path.write_bytes(b"old\n")
    storage = FileFeedStorage(str(path))
    f = storage.open(FeedSpider())
    f.write(b"new\n")
    storage.store(f)
    assert path.read_bytes() == b"old\nnew\n"


def test_file_storage_unwritable_location(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(OSError):
        FileFeedStorage(str(blocker / "out.jl")).open(FeedSpider())


def test_relative_path_feed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_feed({"FEED_URI": "out/%(name)s.csv", "FEED_FORMAT": "csv"}, [{"a": 1}])
    assert (tmp_path / "out" / "books.csv").read_bytes() == b"a\r\n1\r\n"


# stdout


def test_stdout_feed(capfd):
    result = run_feed({"FEED_URI": "stdout:", "FEED_FORMAT": "jsonlines"}, [{"a": 1}, {"b": "é"}])
    assert result["stored"] is True
    out, _ = capfd.readouterr()
    assert out == '{"a": 1}\n{"b": "\\u00e9"}\n'


def test_stdout_empty_feed_writes_nothing(capfd):
    result = run_feed({"FEED_URI": "stdout:", "FEED_FORMAT": "json", "FEED_STORE_EMPTY": False}, [])
    assert result["stored"] is False
    assert capfd.readouterr().out == ""


def test_stdout_empty_feed_stored_by_default(capfd):
    result = run_feed({"FEED_URI": "stdout:", "FEED_FORMAT": "json"}, [])
    assert result["stored"] is True
    assert capfd.readouterr().out == "[\n\n]"  # Scrapy 2.19's empty JSON feed


def test_stdout_storage_explicit_file():
    import io

    buf = io.BytesIO()
    storage = StdoutFeedStorage("stdout:", _stdout=buf)
    f = storage.open(FeedSpider())
    f.write(b"x")
    storage.store(f)
    assert buf.getvalue() == b"x" and not buf.closed


# blocking storage temp dir


def test_blocking_storage_tempdir_must_be_a_directory(tmp_path):
    spider = FeedSpider()
    spider.settings = Settings({"FEED_TEMPDIR": str(tmp_path / "missing")})
    with pytest.raises(OSError, match="Not a Directory: .*missing"):
        BlockingFeedStorage().open(spider)


def test_blocking_storage_uses_tempdir_and_cleans_up(tmp_path):
    uploaded = []

    class Upload(BlockingFeedStorage):
        def _store_in_thread(self, file):
            uploaded.append(file.read())

    spider = FeedSpider()
    spider.settings = Settings({"FEED_TEMPDIR": str(tmp_path)})
    storage = Upload()
    f = storage.open(spider)
    assert Path(f.name).parent == tmp_path and Path(f.name).name.startswith("feed-")
    f.write(b"payload")
    storage.store(f)
    assert uploaded == [b"payload"]
    assert list(tmp_path.iterdir()) == []


# FTP


@pytest.mark.slow
@pytest.mark.parametrize("active", [False, True], ids=["passive", "active"])
def test_ftp_feed(ftp_server, active):
    # the password is percent-encoded in the URL: a literal % is %% in a FEED_URI template
    uri = ftp_server.url.replace("%", "%%") + "/feeds/%(name)s/items.json"
    settings = {"FEED_URI": uri, "FEED_FORMAT": "json", "FEED_STORAGE_FTP_ACTIVE": active}
    result = run_feed(settings, [{"a": 1}, {"a": 2}])
    assert result["stored"] is True, result
    assert "feed:pass" not in result["uri"] and ":***@" in result["uri"]
    stored = ftp_server.root / "feeds" / "books" / "items.json"
    assert json.loads(stored.read_bytes()) == [{"a": 1}, {"a": 2}]


def test_ftp_storage_parses_uri():
    storage = FTPFeedStorage("ftp://us%40er:p%3Ass@example.com:2121/a/b%20c.csv")
    assert (storage.host, storage.port) == ("example.com", 2121)
    assert (storage.username, storage.password) == ("us@er", "p:ss")
    assert storage.path == "/a/b c.csv"
    assert storage.use_active_mode is False
    storage = FTPFeedStorage.from_settings(
        Settings({"FEED_STORAGE_FTP_ACTIVE": True}), "ftp://h/x.csv"
    )
    assert storage.use_active_mode is True and storage.port == 21


@pytest.mark.parametrize("uri", ["ftp:///x.csv", "ftp://host/", "ftp://host"])
def test_ftp_storage_rejects_incomplete_uri(uri):
    with pytest.raises(ValueError, match="FTP feed URI"):
        FTPFeedStorage(uri)


@pytest.mark.slow
def test_ftp_overwrites_existing_file(ftp_server):
    (ftp_server.root / "items.jl").write_bytes(b"old\n")
    run_feed({"FEED_URI": ftp_server.url.replace("%", "%%") + "/items.jl"}, [{"a": 1}])
    assert (ftp_server.root / "items.jl").read_bytes() == b'{"a": 1}\n'


@pytest.mark.slow
def test_ftp_bad_login_keeps_local_copy(ftp_server, tmp_path, caplog):
    caplog.set_level(logging.ERROR, logger="crawlfw.core.feeds.feeds")
    staging = tmp_path / "staging"
    staging.mkdir()
    uri = f"ftp://{ftp_server.user}:wrong@127.0.0.1:{ftp_server.port}/items.jl"
    result = run_feed({"FEED_URI": uri, "FEED_TEMPDIR": str(staging)}, [{"a": 1}])
    assert result["stored"] is False
    assert result["error"].startswith("error_perm: 530")
    local = Path(result["local_path"])
    assert local.parent == staging and local.read_bytes() == b'{"a": 1}\n'
    assert not (ftp_server.root / "items.jl").exists()
    (message,) = caplog.messages
    assert message.startswith("Error storing jsonlines feed (1 items) in: ftp://")
    assert "wrong" not in message
    assert message.endswith(f"-- the feed data is kept in {local}")


# S3


@pytest.mark.slow
def test_s3_feed(s3_endpoint, s3_client):
    s3_client.create_bucket(Bucket="feeds")
    settings = {
        "FEED_URI": "s3://feeds/exports/%(name)s.csv",
        "FEED_FORMAT": "csv",
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_ENDPOINT_URL": s3_endpoint,
        "AWS_REGION_NAME": REGION,
    }
    result = run_feed(settings, [{"a": 1, "b": "é"}])
    assert result["stored"] is True, result
    body = s3_client.get_object(Bucket="feeds", Key="exports/books.csv")["Body"].read()
    assert body == "a,b\r\n1,é\r\n".encode()


@pytest.mark.slow
def test_s3_credentials_from_uri_and_acl(s3_endpoint, s3_client):
    s3_client.create_bucket(Bucket="feeds")
    uri = f"s3://{quote(ACCESS_KEY, safe='')}:{quote(SECRET_KEY, safe='')}@feeds/a%20b.jl"
    storage = S3FeedStorage(uri, endpoint_url=s3_endpoint, region_name=REGION, acl="public-read")
    assert (storage.access_key, storage.secret_key) == (ACCESS_KEY, SECRET_KEY)
    assert (storage.bucketname, storage.keyname) == ("feeds", "a b.jl")
    f = storage.open(FeedSpider())
    f.write(b'{"x": 1}\n')
    storage.store(f)
    assert s3_client.get_object(Bucket="feeds", Key="a b.jl")["Body"].read() == b'{"x": 1}\n'
    grants = s3_client.get_object_acl(Bucket="feeds", Key="a b.jl")["Grants"]
    assert any(g["Grantee"].get("URI", "").endswith("/AllUsers") for g in grants)


@pytest.mark.slow
def test_s3_endpoint_setting_precedence(s3_endpoint):
    settings = Settings(
        {"FEED_STORAGE_S3_ENDPOINT_URL": s3_endpoint, "AWS_ENDPOINT_URL": "http://127.0.0.1:9"}
    )
    storage = S3FeedStorage.from_settings(settings, "s3://b/k")
    assert storage.endpoint_url == s3_endpoint
    assert storage.s3_client.meta.endpoint_url == s3_endpoint


@pytest.mark.slow
def test_s3_missing_bucket_keeps_local_copy(s3_endpoint, tmp_path):
    settings = {
        "FEED_URI": "s3://no-such-bucket/items.jl",
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_ENDPOINT_URL": s3_endpoint,
        "AWS_REGION_NAME": REGION,
        "FEED_TEMPDIR": str(tmp_path),
    }
    result = run_feed(settings, [{"a": 1}])
    assert result["stored"] is False
    assert "NoSuchBucket" in result["error"]
    assert Path(result["local_path"]).read_bytes() == b'{"a": 1}\n'


def test_s3_storage_needs_bucket():
    with pytest.raises(ValueError, match="no bucket name"):
        S3FeedStorage("s3:///key")


# FeedExporter extension (Scrapy-style, driven by signals)


class _Crawler:
    """The two crawler attributes the extension uses: real settings and signals."""

    def __init__(self, settings):
        self.settings = Settings(settings)
        self.signals = SignalManager(self)


def test_feed_exporter_extension_follows_signals(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="crawlfw.core.feeds.feeds")
    crawler = _Crawler({"FEED_URI": str(tmp_path / "%(name)s.xml"), "FEED_FORMAT": "xml"})
    extension = FeedExporter.from_crawler(crawler)
    spider = FeedSpider()
    crawler.signals.send_catch_log(signals.spider_opened, spider=spider)
    for i in range(3):
        crawler.signals.send_catch_log(signals.item_scraped, item={"i": i}, spider=spider,
                                       response=None)
    [(_, result)] = crawler.signals.send_catch_log(signals.spider_closed, spider=spider,
                                                   reason="finished")
    assert result["stored"] is True and result["itemcount"] == 3
    data = (tmp_path / "books.xml").read_bytes()
    assert data.endswith(b"<items>\n<item><i>0</i></item>\n<item><i>1</i></item>"
                         b"\n<item><i>2</i></item>\n</items>")  # FEED_EXPORT_INDENT = 0
    assert f"Stored xml feed (3 items) in: {tmp_path / 'books.xml'}" in caplog.messages
    assert extension.writer.itemcount == 3


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({}, "FEED_URI is not set"),
        ({"FEED_URI": "x.jl", "FEED_FORMAT": "toml"}, "Unknown feed format: 'toml'"),
        ({"FEED_URI": "gopher://h/x"}, "Unknown feed storage scheme: 'gopher'"),
    ],
)
def test_feed_exporter_not_configured(settings, message):
    with pytest.raises(NotConfigured, match=message):
        FeedExporter.from_crawler(_Crawler(settings))


def test_exported_names():
    import crawlfw.extensions.feedexport as module

    assert sorted(module.__all__) == sorted([
        "IFeedStorage", "BlockingFeedStorage", "StdoutFeedStorage", "FileFeedStorage",
        "FTPFeedStorage", "S3FeedStorage", "FeedExporter", "ItemFilter",
    ])
