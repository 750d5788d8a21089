"""Issue 22, rows 7, 8 and 11: a web page cannot open local files, a response header
never names code, and no URL makes a stored file's name unsafe. Real crawls
(``crawlfw runspider``) against a scripted HTTP server on 127.0.0.1."""

import json
import os

import pytest

from tests.downloadermiddlewares._support import ScriptedServer
from tests.security._support import crawl, html

pytestmark = pytest.mark.slow

SECRET = "TOPSECRET-91c2"

FOLLOW_ALL = '''
class Spider(StatsSpider):
    name = "follow_all"

    def start_requests(self):
        yield crawlfw.Request(self.start)

    def parse(self, response):
        yield {"url": response.url, "body": response.text}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)
'''


def _site_linking_to(secret_uri):
    return {"/": html(f'<a href="{secret_uri}">secret</a> <a href="/b">b</a>'),
            "/b": html("page b")}


def test_file_link_from_web_page_is_dropped(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    with ScriptedServer(_site_linking_to(secret.as_uri())) as server:
        run = crawl(tmp_path, FOLLOW_ALL, "-a", f"start={server.url}/")
    assert SECRET not in run.feed
    assert sorted(i["url"] for i in run.items) == [server.url + "/", server.url + "/b"]
    lines = run.warnings("a web page cannot open local files")
    assert len(lines) == 1, run.log[-3000:]
    assert f"Ignoring request <GET {secret.as_uri()}> from <200 {server.url}/>" in lines[0]
    assert run.stats.get("scraper/refused_local_url") == 1


def test_setting_restores_scrapys_behaviour(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    with ScriptedServer(_site_linking_to(secret.as_uri())) as server:
        run = crawl(tmp_path, FOLLOW_ALL, "-a", f"start={server.url}/",
                    "-s", "LOCAL_URLS_FROM_WEB_ENABLED=True")
    assert [i["body"] for i in run.items if i["url"] == secret.as_uri()] == [SECRET]
    assert "scraper/refused_local_url" not in run.stats


def test_file_pages_may_link_to_files(tmp_path):
    """Start requests and requests made from a file:// response stay allowed."""
    (tmp_path / "other.html").write_text(f"<p>{SECRET}</p>")
    index = tmp_path / "index.html"
    index.write_text('<a href="other.html">other</a>')
    run = crawl(tmp_path, FOLLOW_ALL, "-a", f"start={index.as_uri()}")
    assert sorted(i["url"] for i in run.items) == sorted(
        [index.as_uri(), (tmp_path / "other.html").as_uri()])
    assert "scraper/refused_local_url" not in run.stats


EVIL_MODULE = '''
import pathlib
pathlib.Path("IMPORTED").write_text("the server made the crawler import me")

from crawlfw.spidermiddlewares.referer import NoReferrerPolicy


class Policy(NoReferrerPolicy):
    pass
'''


def test_referrer_policy_header_is_never_imported(tmp_path):
    (tmp_path / "evilpolicy.py").write_text(EVIL_MODULE)
    with ScriptedServer({
        "/": html('<a href="/b">b</a><a href="/c">c</a>',
                  headers=[("Referrer-Policy", "evilpolicy.Policy")]),
        "/b": html("b"),
        "/c": html("c", headers=[("Referrer-Policy", "no-referrer")]),
    }) as server:
        run = crawl(tmp_path, FOLLOW_ALL, "-a", f"start={server.url}/")
        referers = {r["path"]: r["headers"].get("Referer") for r in server.received}
    assert not (tmp_path / "IMPORTED").exists()
    assert len(run.items) == 3
    # the unknown value is ignored: the default (Scrapy 1.2's) rule applies
    assert referers["/b"] == server.url + "/"


def test_referrer_policy_setting_may_name_a_class(tmp_path):
    """Import paths from the settings (the spider's author) still work."""
    (tmp_path / "evilpolicy.py").write_text(EVIL_MODULE)
    with ScriptedServer({"/": html('<a href="/b">b</a>'), "/b": html("b")}) as server:
        crawl(tmp_path, FOLLOW_ALL, "-a", f"start={server.url}/",
              "-s", "REFERRER_POLICY=evilpolicy.Policy")
        referers = {r["path"]: r["headers"].get("Referer") for r in server.received}
    assert (tmp_path / "IMPORTED").exists()
    assert referers["/b"] is None


FILES_SPIDER = '''
class Spider(StatsSpider):
    name = "files"
    custom_settings = {"ITEM_PIPELINES": {"crawlfw.pipelines.files.FilesPipeline": 1}}

    def start_requests(self):
        yield crawlfw.Request(self.start)

    def parse(self, response):
        yield {"file_urls": [response.urljoin(u) for u in response.css("a::attr(href)").getall()]}
'''


def test_files_pipeline_keeps_only_known_extensions(tmp_path):
    long_ext = "/doc." + "x" * 300
    climbing = "/a/..%2F..%2F..%2Fetc.pdf%2F..%2F..%2Fescape"
    routes = {
        "/": html(f'<a href="{long_ext}">long</a> <a href="/report.pdf">pdf</a> '
                  f'<a href="{climbing}">climb</a>'),
        long_ext: (200, [("Content-Type", "application/octet-stream")], b"long-ext body"),
        "/report.pdf": (200, [("Content-Type", "application/pdf")], b"%PDF-1.4 body"),
        "/a/..%2F..%2F..%2Fetc.pdf%2F..%2F..%2Fescape": (200, [], b"climb body"),
    }
    store = tmp_path / "store"
    with ScriptedServer(routes) as server:
        run = crawl(tmp_path, FILES_SPIDER, "-a", f"start={server.url}/",
                    "-s", f"FILES_STORE={store}")
    [item] = run.items
    files = {f["url"].rsplit("/", 1)[-1][:12]: f["path"] for f in item["files"]}
    assert len(item["files"]) == 3, run.log[-3000:]
    for path in files.values():
        assert path.startswith("full/") and "/" not in path[5:] and len(path) < 60
        assert (store / path).is_file()
    assert files["report.pdf"].endswith(".pdf")
    assert (store / files["doc." + "x" * 8]).read_bytes() == b"long-ext body"
    assert sorted(os.listdir(store)) == ["full"]
    assert json.dumps(item)  # the item reached the feed intact
