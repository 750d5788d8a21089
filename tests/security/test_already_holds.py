"""Issue 22, "what already holds and must keep holding": each promise with a test.

Held elsewhere (and referenced from docs/security.md): compression bombs, body and
sitemap (tests/downloadermiddlewares/test_decompression_bombs.py), external entities and
nested entities in sitemaps (tests/utils/test_sitemap.py), the control socket's modes
and the refusal of another user (tests/test_control.py, tests/core/test_control.py).
Here: XXE and billion laughs through every other XML path (selectors, ``xmliter``, an
``XMLFeedSpider`` crawl), a 50 MB robots.txt, CR/LF in links, and no TCP listener in a
crawl process."""

import os
import re
import socket
import sys
import time

import pytest

from crawlfw.http import XmlResponse
from crawlfw.selector import Selector
from crawlfw.utils.iterators import xmliter
from tests.downloadermiddlewares._support import ScriptedServer
from tests.security._support import crawl, html

SECRET = "TOPSECRET-x1e2"


def _xxe_doc(secret_path, port=9):
    return (f'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY xxe SYSTEM "file://{secret_path}">'
            f'<!ENTITY net SYSTEM "http://127.0.0.1:{port}/dtd">]>'
            f"<rss><channel><item><title>&xxe;</title><link>&net;</link></item></channel></rss>")


def _billion_laughs():
    lol = "<!ENTITY lol0 'lol'>" + "".join(
        f"<!ENTITY lol{i} '{f'&lol{i - 1};' * 10}'>" for i in range(1, 10))
    return f"<?xml version='1.0'?><!DOCTYPE rss [{lol}]><rss><item><title>&lol9;</title></item></rss>"


@pytest.fixture
def secret(tmp_path):
    path = tmp_path / "secret.txt"
    path.write_text(SECRET)
    return path


@pytest.fixture
def listener():
    """A raw TCP listener on 127.0.0.1 that records whether anyone connected."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.settimeout(0.0)
    yield sock

    sock.close()


def _contacted(sock) -> bool:
    try:
        conn, _ = sock.accept()
    except (BlockingIOError, OSError):
        return False
    conn.close()
    return True


def test_xxe_not_loaded_by_selectors_or_xmliter(secret, listener):
    port = listener.getsockname()[1]
    body = _xxe_doc(secret, port).encode()
    response = XmlResponse("http://example.com/feed.xml", body=body)
    texts = [response.xpath("//title").get() or "", response.xpath("string(//item)").get() or "",
             Selector(text=body.decode(), type="xml").xpath("//item").get() or ""]
    texts += [node.get() for node in xmliter(response, "item")]
    assert texts and all(SECRET not in t for t in texts)
    assert not _contacted(listener)


def test_billion_laughs_stays_bounded():
    body = _billion_laughs().encode()
    started = time.monotonic()
    response = XmlResponse("http://example.com/lol.xml", body=body)
    texts = [response.xpath("string(//title)").get() or "",
             response.xpath("//item").get() or ""]
    texts += [node.xpath("string(title)").get() or "" for node in xmliter(response, "item")]
    assert all(len(t) < 10_000 for t in texts)  # 3 * 10**9 characters if expanded
    assert time.monotonic() - started < 30  # generous: it takes milliseconds


XML_FEED_SPIDER = '''
from crawlfw.spiders import XMLFeedSpider


class Spider(XMLFeedSpider, StatsSpider):
    name = "xmlfeed"
    itertag = "item"

    def parse_node(self, response, node):
        yield {"title": node.xpath("string(title)").get(), "link": node.xpath("string(link)").get()}
'''


@pytest.mark.slow
def test_xxe_and_laughs_through_a_crawl(tmp_path, secret, listener):
    port = listener.getsockname()[1]
    routes = {"/xxe.xml": (200, [("Content-Type", "text/xml")], _xxe_doc(secret, port).encode()),
              "/lol.xml": (200, [("Content-Type", "text/xml")], _billion_laughs().encode())}
    with ScriptedServer(routes) as server:
        run = crawl(tmp_path, XML_FEED_SPIDER + f"\nSpider.start_urls = {[server.url + '/xxe.xml', server.url + '/lol.xml']!r}\n",
                    timeout_s=120)
    assert SECRET not in run.feed
    assert len(run.feed) < 100_000
    assert not _contacted(listener)


@pytest.mark.slow
def test_50_mb_robots_txt_is_harmless(tmp_path):
    line = b"User-agent: *\nDisallow: /private/\n" + b"Allow: /" + b"x" * 80 + b"\n"
    robots = line * ((50 << 20) // len(line))
    spider = '''
class Spider(StatsSpider):
    name = "robots"

    def start_requests(self):
        yield crawlfw.Request(self.base + "/page")
        yield crawlfw.Request(self.base + "/private/p")

    def parse(self, response):
        yield {"url": response.url}
'''
    routes = {"/robots.txt": (200, [("Content-Type", "text/plain")], robots),
              "/page": html("page"), "/private/p": html("private")}
    with ScriptedServer(routes) as server:
        run = crawl(tmp_path, spider, "-a", f"base={server.url}", "-s", "ROBOTSTXT_OBEY=True",
                    timeout_s=240)
    assert [i["url"] for i in run.items] == [server.url + "/page"]
    assert run.result.maxrss_bytes < 1 << 30  # generous: the body alone is 50 MB


@pytest.mark.slow
def test_cr_lf_in_links_never_reach_the_wire(tmp_path):
    page = ('<a href="/a%0d%0aX-Injected:%20one">a</a>'
            '<a href="/b\r\nX-Injected: two">b</a>'
            '<a href="/c&#13;&#10;X-Injected: three">c</a>')
    spider = '''
class Spider(StatsSpider):
    name = "crlf"

    def start_requests(self):
        yield crawlfw.Request(self.base + "/")

    def parse(self, response):
        yield {"url": response.url}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)
'''
    with ScriptedServer({"/": html(page)}) as server:
        run = crawl(tmp_path, spider, "-a", f"base={server.url}")
        received = list(server.received)
    assert len(received) == 4, run.log[-3000:]
    for r in received:
        assert "X-Injected" not in r["headers"]
        assert not re.search(r"[\r\n]", r["path"])


def _listening_tcp_inodes() -> set:
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for row in f:
                    cols = row.split()
                    if cols[3] == "0A":  # TCP_LISTEN
                        inodes.add(cols[9])
        except FileNotFoundError:
            pass
    return inodes


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_crawl_process_has_no_tcp_listener(tmp_path):
    from tests.support.countserver import CountingServer
    from tests.support.live import LiveCrawl, RuntimeDir

    server = CountingServer(hold_s=0.25)
    runtime = RuntimeDir()
    live = None
    try:
        live = LiveCrawl(runtime, tmp_path, server.url, pages=40)
        live.wait_listed(min_pages=2)  # the control endpoint is up
        sockets = set()
        for fd in os.listdir(f"/proc/{live.pid}/fd"):
            try:
                target = os.readlink(f"/proc/{live.pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                sockets.add(target[8:-1])
        assert sockets, "the crawl has at least its control socket"
        assert not sockets & _listening_tcp_inodes()
    finally:
        if live is not None:
            live.kill()
        runtime.cleanup()
        server.stop()
