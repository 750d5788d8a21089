"""Issue 22, rows 1-3 and 6: redirects go only from the web to the web, and stay inside
``allowed_domains``. Real crawls (``crawlfw runspider``) against a scripted HTTP server
and a real FTP server on 127.0.0.1; each test asserts what the servers saw, what reached
the feed, the WARNING and the stat."""

import pytest

from tests.downloadermiddlewares._support import ScriptedServer
from tests.security._support import crawl, html, redirect
from tests.support.ftp import LocalFTPServer

pytestmark = pytest.mark.slow

SECRET = "TOPSECRET-7f3a"

SPIDER = '''
class Spider(StatsSpider):
    name = "hostile"

    def start_requests(self):
        meta = {"ftp_user": "feeduser", "ftp_password": "feed:pass"}
        yield crawlfw.Request(self.base + "/trap", meta=meta, callback=self.parse)
        yield crawlfw.Request(self.base + "/next", callback=self.parse, priority=-1)

    def parse(self, response):
        yield {"url": response.url, "body": response.text}
'''


@pytest.fixture
def secret_file(tmp_path):
    path = tmp_path / "secret.txt"
    path.write_text(SECRET)
    return path


def _assert_refused(run, server, target, reason):
    assert SECRET not in run.feed
    assert [item["url"] for item in run.items if item["url"].endswith("/next")], run.log[-3000:]
    assert not [item for item in run.items if not item["url"].startswith(server.url)]
    lines = run.warnings("to a non-http(s) URL")
    assert len(lines) == 1, run.log[-3000:]
    assert f"Ignoring redirect ({reason}) from <GET {server.url}/trap> to a non-http(s) URL: {target}" in lines[0]
    assert run.stats.get("redirect/refused_scheme") == 1


def test_302_to_file_is_not_followed(tmp_path, secret_file):
    target = secret_file.as_uri()
    with ScriptedServer({"/trap": redirect(target), "/next": html("next")}) as server:
        run = crawl(tmp_path, SPIDER, "-a", f"base={server.url}")
    _assert_refused(run, server, target, 302)


def test_meta_refresh_to_file_is_not_followed(tmp_path, secret_file):
    target = secret_file.as_uri()
    page = f'<html><head><meta http-equiv="refresh" content="0;url={target}"></head></html>'
    with ScriptedServer({"/trap": html(page), "/next": html("next")}) as server:
        run = crawl(tmp_path, SPIDER, "-a", f"base={server.url}")
    _assert_refused(run, server, target, "meta refresh")
    # as in Scrapy, the page itself reaches its callback; the refresh is not followed
    assert any(item["url"] == server.url + "/trap" for item in run.items)


def test_302_to_local_ftp_never_contacts_it(tmp_path):
    root = tmp_path / "ftproot"
    root.mkdir()
    (root / "secret.txt").write_text(SECRET)
    ftp = LocalFTPServer(root).start()
    try:
        target = f"ftp://127.0.0.1:{ftp.port}/secret.txt"
        with ScriptedServer({"/trap": redirect(target), "/next": html("next")}) as server:
            run = crawl(tmp_path, SPIDER, "-a", f"base={server.url}")
    finally:
        ftp.stop()
    assert ftp.connections == []
    _assert_refused(run, server, target, 302)


def test_ftp_start_request_still_works(tmp_path):
    """What a spider asks for itself is not affected: an ftp:// start URL is fetched."""
    root = tmp_path / "ftproot"
    root.mkdir()
    (root / "mine.txt").write_text("my own file")
    ftp = LocalFTPServer(root).start()
    spider = '''
class Spider(StatsSpider):
    name = "own_ftp"

    def start_requests(self):
        meta = {"ftp_user": "feeduser", "ftp_password": "feed:pass"}
        yield crawlfw.Request(self.target, meta=meta)

    def parse(self, response):
        yield {"url": response.url, "body": response.text}
'''
    try:
        run = crawl(tmp_path, spider, "-a", f"target=ftp://127.0.0.1:{ftp.port}/mine.txt")
    finally:
        ftp.stop()
    assert [item["body"] for item in run.items] == ["my own file"]


OFFSITE_SPIDER = '''
class Spider(StatsSpider):
    name = "offsite"
    allowed_domains = ["127.0.0.1"]

    def start_requests(self):
        yield crawlfw.Request(self.base + "/", callback=self.parse_index)

    def parse_index(self, response):
        for href in response.css("a::attr(href)").getall():
            meta = {"allow_offsite": True} if "allowed" in href else {}
            yield response.follow(href, callback=self.parse, meta=meta)

    def parse(self, response):
        yield {"url": response.url, "body": response.text}
'''


def test_offsite_redirect_is_filtered_in_the_downloader(tmp_path, secret_file):
    with ScriptedServer({"/landing": html("other host"), "/allowed": html("other, allowed")}) as other:
        other_url = other.url.replace("127.0.0.1", "localhost")
        index = ('<a href="/out">out</a> <a href="/file">file</a> '
                 '<a href="/out-allowed">allowed</a> <a href="/in">in</a>')
        routes = {
            "/": html(index),
            "/out": redirect(other_url + "/landing"),
            "/out-allowed": redirect(other_url + "/allowed"),
            "/file": redirect(secret_file.as_uri()),
            "/in": redirect("/inside"),
            "/inside": html("inside"),
        }
        with ScriptedServer(routes) as server:
            run = crawl(tmp_path, OFFSITE_SPIDER, "-a", f"base={server.url}")
        seen_by_other = [r["path"] for r in other.received]
    assert seen_by_other == ["/allowed"]  # meta['allow_offsite'] keeps Scrapy's meaning
    urls = sorted(item["url"] for item in run.items)
    assert urls == sorted([server.url + "/inside", other_url + "/allowed"])
    assert SECRET not in run.feed
    assert f"Filtered offsite request to 'localhost': <GET {other_url}/landing>" in run.log
    assert run.stats.get("offsite/filtered") == 1
    assert run.stats.get("offsite/domains") == 1
    assert run.stats.get("redirect/refused_scheme") == 1
