"""FilesPipeline: paths, stores (file system, S3 on a local moto server), settings, and
real crawls of a local server (stored files, results, expiry, failures)."""

import hashlib
import logging
import os
import subprocess
import sys
import time
from io import BytesIO

import pytest

from crawlfw import Field, Item, Spider
from crawlfw.exceptions import CrawlfwDeprecationWarning, NotConfigured
from crawlfw.http import Request
from crawlfw.pipelines.files import FilesPipeline, FSFilesStore, S3FilesStore
from crawlfw.settings import Settings
from crawlfw.utils.test import get_testenv
from tests.support import s3 as s3_support
from tests.support.crawl import run_crawl
from tests.support.s3 import ACCESS_KEY, REGION, SECRET_KEY
from tests.support.servers import StaticSiteServer

s3_server = s3_support.s3_server
s3_endpoint = s3_support.s3_endpoint
s3_client = s3_support.s3_client

FILES = {
    "doc.pdf": b"%PDF-1.4 not really",
    "data.csv": b"a,b\n1,2\n",
    "noext": b"no extension",
    "empty.txt": b"",
}


def sha1(text):
    return hashlib.sha1(text.encode()).hexdigest()


def md5(data):
    return hashlib.md5(data).hexdigest()


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_bytes(b"<html>index</html>")
    for name, body in FILES.items():
        (root / name).write_bytes(body)
    srv = StaticSiteServer(root).start()
    yield srv
    srv.stop()


class FilesSpider(Spider):
    """Yields one item (a dict, or ``item_cls``) per group of file names."""

    name = "files"

    def __init__(self, base, groups, item_cls=dict, field="file_urls", **kw):
        super().__init__(**kw)
        self.start_urls = [f"{base}/index.html"]
        self.base = base
        self.groups = groups
        self.item_cls = item_cls
        self.field = field

    def parse(self, response):
        for group in self.groups:
            item = self.item_cls()
            item[self.field] = [n if "://" in n else f"{self.base}/{n}" for n in group]
            yield item


def crawl(server, store, groups, pipeline="crawlfw.pipelines.files.FilesPipeline", **kw):
    settings = {"ITEM_PIPELINES": {pipeline: 1}, "FILES_STORE": str(store)}
    settings.update(kw.pop("settings", {}))
    return run_crawl(FilesSpider, settings, base=server.url, groups=groups, **kw)


# --- file_path ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, expected",
    [
        ("https://dev.mydeco.com/mydeco.pdf", "full/c9b564df929f4bc635bdd19fde4f3d4847c757c5.pdf"),
        ("http://www.maddiebrown.co.uk///catalogue-items//image_54642_12175_95307.txt",
         "full/4ce274dd83db0368bafd7e406f382ae088e39219.txt"),
        ("http://example.com/noext", f"full/{sha1('http://example.com/noext')}"),
        ("http://example.com/a.tar.gz", f"full/{sha1('http://example.com/a.tar.gz')}.gz"),
    ],
)
def test_file_path(tmp_path, url, expected):
    pipe = FilesPipeline(str(tmp_path))
    assert pipe.file_path(Request(url)) == expected


@pytest.mark.slow
def test_file_path_is_the_same_on_the_first_call_in_a_process(tmp_path):
    # mimetypes reads the system's types on its first guess: file_path must not answer
    # otherwise before it (a.tar.gz: .tar first, .gz after, failed CI by test order)
    code = ("import mimetypes, sys\n"
            "from crawlfw.http import Request\n"
            "from crawlfw.pipelines.files import FilesPipeline\n"
            "pipe = FilesPipeline(sys.argv[1])\n"
            "urls = ['http://example.com/a.tar.gz', 'http://example.com/b.svgz',\n"
            "        'http://example.com/c.tgz']\n"
            "first = [pipe.file_path(Request(u)) for u in urls]\n"
            "mimetypes.init()\n"
            "print(first == [pipe.file_path(Request(u)) for u in urls])\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, env=get_testenv(), timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True"]


def test_deprecated_file_key_override_is_used_with_a_warning(tmp_path):
    class Old(FilesPipeline):
        def file_key(self, url):
            return "old/" + url.rsplit("/", 1)[1]

    with pytest.warns(CrawlfwDeprecationWarning, match="file_key"):
        assert Old(str(tmp_path)).file_path(Request("http://a/x.pdf")) == "old/x.pdf"


def test_file_path_of_a_plain_url_warns(tmp_path):
    with pytest.warns(CrawlfwDeprecationWarning):
        assert FilesPipeline(str(tmp_path)).file_path("http://a/x.pdf") == \
            f"full/{sha1('http://a/x.pdf')}.pdf"


# --- construction and settings --------------------------------------------------------


def test_without_files_store_not_configured_names_the_setting():
    with pytest.raises(NotConfigured, match="FILES_STORE"):
        FilesPipeline.from_settings(Settings())


def test_unknown_store_scheme_is_a_clear_error():
    with pytest.raises(ValueError, match=r"ftp.*supported"):
        FilesPipeline("ftp://host/files")


@pytest.mark.parametrize("uri_prefix", ["", "file://"])
def test_fs_store_uri(tmp_path, uri_prefix):
    pipe = FilesPipeline(uri_prefix + str(tmp_path / "store"))
    assert isinstance(pipe.store, FSFilesStore)
    assert pipe.store.basedir == str(tmp_path / "store")
    assert (tmp_path / "store").is_dir()


@pytest.mark.parametrize(
    "settings, expected",
    [
        ({}, (90, "file_urls", "files")),
        ({"FILES_EXPIRES": 7, "FILES_URLS_FIELD": "urls", "FILES_RESULT_FIELD": "out"},
         (7, "urls", "out")),
        # a subclass reads its own prefixed settings first
        ({"USERPIPE_FILES_EXPIRES": 3, "FILES_EXPIRES": 7,
          "USERPIPE_FILES_URLS_FIELD": "mine"}, (3, "mine", "files")),
    ],
)
def test_settings(tmp_path, settings, expected):
    class UserPipe(FilesPipeline):
        pass

    pipe = UserPipe.from_settings(Settings({"FILES_STORE": str(tmp_path), **settings}))
    assert (pipe.expires, pipe.files_urls_field, pipe.files_result_field) == expected


def test_class_attributes_are_defaults(tmp_path):
    class Custom(FilesPipeline):
        EXPIRES = 30
        FILES_URLS_FIELD = "links"
        FILES_RESULT_FIELD = "stored"

    pipe = Custom(str(tmp_path))
    assert (pipe.expires, pipe.files_urls_field, pipe.files_result_field) == \
        (30, "links", "stored")


# --- FSFilesStore ---------------------------------------------------------------------


def test_fs_store_persist_and_stat(tmp_path):
    store = FSFilesStore(str(tmp_path))
    assert store.stat_file("full/x.txt", None) == {}
    store.persist_file("full/x.txt", BytesIO(b"data"), None)
    assert (tmp_path / "full" / "x.txt").read_bytes() == b"data"
    stat = store.stat_file("full/x.txt", None)
    assert stat["checksum"] == md5(b"data")
    assert stat["last_modified"] == pytest.approx(os.path.getmtime(tmp_path / "full" / "x.txt"))


# --- real crawls ----------------------------------------------------------------------


def test_crawl_stores_files_and_fills_results(server, tmp_path):
    store = tmp_path / "store"
    result = crawl(server, store, [["doc.pdf", "noext"], ["data.csv"]])
    assert result.finish_reason == "finished"
    by_first = {item["file_urls"][0].rsplit("/", 1)[1]: item for item in result.items}
    files = by_first["doc.pdf"]["files"]
    assert [f["url"] for f in files] == [f"{server.url}/doc.pdf", f"{server.url}/noext"]
    for f, name in zip(files, ["doc.pdf", "noext"], strict=True):
        ext = os.path.splitext(name)[1]
        assert f["path"] == f"full/{sha1(f['url'])}{ext}"
        assert (store / f["path"]).read_bytes() == FILES[name]
        assert f["checksum"] == md5(FILES[name])
    assert by_first["data.csv"]["files"][0]["checksum"] == md5(FILES["data.csv"])
    assert result.stats["file_count"] == 3
    assert result.stats["file_status_count/downloaded"] == 3


def test_fresh_files_are_not_downloaded_again_expired_ones_are(server, tmp_path):
    store = tmp_path / "store"
    first = crawl(server, store, [["doc.pdf", "data.csv"]])
    paths = {f["url"]: f["path"] for f in first.items[0]["files"]}
    # make data.csv's stored copy 10 days old; expiry is 5 days
    old = time.time() - 10 * 86400
    os.utime(store / paths[f"{server.url}/data.csv"], (old, old))
    second = crawl(server, store, [["doc.pdf", "data.csv"]], settings={"FILES_EXPIRES": 5})
    assert second.stats["file_status_count/uptodate"] == 1
    assert second.stats["file_status_count/downloaded"] == 1
    # the page and data.csv only
    assert second.stats["downloader/response_count"] == 2
    assert [f["checksum"] for f in second.items[0]["files"]] == \
        [md5(FILES["doc.pdf"]), md5(FILES["data.csv"])]


def test_failures_are_logged_and_the_item_goes_on(server, tmp_path, caplog):
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    refused = f"http://127.0.0.1:{sock.getsockname()[1]}/gone.pdf"
    sock.close()
    store = tmp_path / "store"
    with caplog.at_level(logging.DEBUG):
        result = crawl(server, store, [["missing.pdf", "empty.txt", refused, "doc.pdf"]],
                       settings={"RETRY_ENABLED": False})
    [item] = result.items
    assert [f["url"] for f in item["files"]] == [f"{server.url}/doc.pdf"]
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(m.startswith("File (code: 404): Error downloading file from <GET "
                            f"{server.url}/missing.pdf>") for m in messages)
    assert any(m.startswith(f"File (empty-content): Empty file from <GET {server.url}/empty.txt>")
               for m in messages)
    assert any(m.startswith(f"File (unknown-error): Error downloading file from <GET {refused}>")
               for m in messages)
    # FilesPipeline's item_completed does not log the failures again at ERROR
    assert not [r for r in caplog.records if "found errors processing" in r.getMessage()]
    assert sorted(p.name for p in (store / "full").iterdir()) == \
        [f"{sha1(f'{server.url}/doc.pdf')}.pdf"]


class DeclaredItem(Item):
    file_urls = Field()
    files = Field()


class UndeclaredItem(Item):
    file_urls = Field()


@pytest.mark.parametrize("item_cls, has_files", [(DeclaredItem, True), (UndeclaredItem, False)])
def test_item_classes(server, tmp_path, item_cls, has_files):
    result = crawl(server, tmp_path / "store", [["doc.pdf"]], item_cls=item_cls)
    [item] = result.items
    assert isinstance(item, item_cls)
    assert ("files" in item) is has_files
    assert (tmp_path / "store" / "full" / f"{sha1(f'{server.url}/doc.pdf')}.pdf").exists()


def test_custom_fields_from_settings(server, tmp_path):
    result = crawl(server, tmp_path / "store", [["data.csv"]], field="links",
                   settings={"FILES_URLS_FIELD": "links", "FILES_RESULT_FIELD": "saved"})
    [item] = result.items
    assert item["saved"][0]["checksum"] == md5(FILES["data.csv"])
    assert "files" not in item


class NamedFilesPipeline(FilesPipeline):
    """Stores files under their own names, in a folder per item."""

    def get_media_requests(self, item, info):
        return [Request(u, meta={"folder": item["folder"]}) for u in item["file_urls"]]

    def file_path(self, request, response=None, info=None):
        return f"{request.meta['folder']}/{request.url.rsplit('/', 1)[1]}"


class FolderSpider(FilesSpider):
    def parse(self, response):
        for item in super().parse(response):
            item["folder"] = "batch1"
            yield item


def test_overridden_file_path_and_get_media_requests(server, tmp_path):
    store = tmp_path / "store"
    result = run_crawl(FolderSpider, {"ITEM_PIPELINES": {NamedFilesPipeline: 1},
                                      "FILES_STORE": str(store)},
                       base=server.url, groups=[["doc.pdf"]])
    [item] = result.items
    assert item["files"][0]["path"] == "batch1/doc.pdf"
    assert (store / "batch1" / "doc.pdf").read_bytes() == FILES["doc.pdf"]


def test_disabled_without_store_warns(server, caplog):
    with caplog.at_level(logging.WARNING):
        result = run_crawl(FilesSpider, {"ITEM_PIPELINES":
                                         {"crawlfw.pipelines.files.FilesPipeline": 1}},
                           base=server.url, groups=[["doc.pdf"]])
    assert "files" not in result.items[0]
    assert any("Disabled FilesPipeline" in r.getMessage() and "FILES_STORE" in r.getMessage()
               for r in caplog.records)


# --- S3 (a local moto server) ---------------------------------------------------------


def s3_settings(endpoint, store, **extra):
    return {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_ENDPOINT_URL": endpoint, "AWS_REGION_NAME": REGION, "FILES_STORE": store,
            **extra}


@pytest.mark.slow
def test_s3_store_persist_and_stat(s3_endpoint, s3_client):
    s3_client.create_bucket(Bucket="media")
    pipe = FilesPipeline.from_settings(Settings(s3_settings(s3_endpoint, "s3://media/files/")))
    store = pipe.store
    assert isinstance(store, S3FilesStore)
    assert store.stat_file("full/a.txt", None) == {}
    store.persist_file("full/a.txt", BytesIO(b"hello"), None, meta={"width": 3},
                       headers={"Content-Type": "text/plain"})
    obj = s3_client.get_object(Bucket="media", Key="files/full/a.txt")
    assert obj["Body"].read() == b"hello"
    assert obj["ContentType"] == "text/plain"
    assert obj["CacheControl"] == "max-age=172800"
    assert obj["Metadata"] == {"width": "3"}
    stat = store.stat_file("full/a.txt", None)
    assert stat["checksum"] == md5(b"hello")
    assert stat["last_modified"] == pytest.approx(time.time(), abs=600)


@pytest.mark.slow
def test_s3_acl_from_settings(s3_endpoint, s3_client):
    s3_client.create_bucket(Bucket="media")
    settings = Settings(s3_settings(s3_endpoint, "s3://media/", FILES_STORE_S3_ACL="public-read"))
    pipe = FilesPipeline.from_settings(settings)
    pipe.store.persist_file("x", BytesIO(b"x"), None)
    grants = s3_client.get_object_acl(Bucket="media", Key="x")["Grants"]
    assert any(g["Grantee"].get("URI", "").endswith("AllUsers") and g["Permission"] == "READ"
               for g in grants)


@pytest.mark.slow
def test_s3_unsupported_header_is_named(s3_endpoint, s3_client):
    pipe = FilesPipeline.from_settings(Settings(s3_settings(s3_endpoint, "s3://media/")))
    with pytest.raises(TypeError, match="X-Custom"):
        pipe.store.persist_file("x", BytesIO(b"x"), None, headers={"X-Custom": "1"})


@pytest.mark.slow
@pytest.mark.parametrize("uri", ["s3://", "s3:///prefix", "s3://bucket"])
def test_s3_bad_uri(s3_endpoint, uri):
    with pytest.raises(ValueError, match="s3://"):
        S3FilesStore(uri)


@pytest.mark.slow
def test_crawl_into_s3_then_uptodate(server, s3_endpoint, s3_client):
    s3_client.create_bucket(Bucket="media")
    settings = s3_settings(s3_endpoint, "s3://media/crawl/")
    first = crawl(server, "unused", [["doc.pdf"]], settings=settings)
    [f] = first.items[0]["files"]
    body = s3_client.get_object(Bucket="media", Key=f"crawl/{f['path']}")["Body"].read()
    assert body == FILES["doc.pdf"]
    second = crawl(server, "unused", [["doc.pdf"]], settings=settings)
    assert second.stats["file_status_count/uptodate"] == 1
    assert second.items[0]["files"][0]["checksum"] == md5(FILES["doc.pdf"])
