"""Decompression bombs against a real crawl: each coding (gzip, deflate, br, zstd) and a
``.xml.gz`` sitemap, made here, served by a real local server, crawled by ``crawlfw
runspider`` in a subprocess with ``DOWNLOAD_MAXSIZE`` = 10 MiB. The crawl must drop the
bomb (a WARNING naming its URL, the stat), go on to the next page, and stay far below the
bomb's size in peak memory (issue: a 3 KB brotli body took 4 GB)."""

import gzip
import json
import zlib

import pytest

from tests.downloadermiddlewares._support import ScriptedServer
from tests.support.proc import run_measured

pytestmark = pytest.mark.slow

try:
    import brotli
except ImportError:
    brotli = None
try:
    import zstandard
except ImportError:
    zstandard = None

#: Bytes each bomb inflates to: 512 MiB (several times the RSS bound below).
BOMB_BYTES = 512 << 20
MAXSIZE = 10 << 20
#: Peak RSS allowed for the whole crawl process (an idle crawl takes ~60 MB).
RSS_BOUND = 300 << 20

_MiB = bytes(1 << 20)


def _gzip_bomb() -> bytes:
    # concatenated members (RFC 1952 §2.2): 64 copies of an 8 MiB member
    member = gzip.compress(bytes(8 << 20), compresslevel=9)
    return member * (BOMB_BYTES // (8 << 20))


def _deflate_bomb() -> bytes:
    # a zlib stream (RFC 1950) of full-flushed 1 MiB deflate blocks: after a full flush
    # the same input compresses to the same bytes, so one block is repeated; then an
    # empty final block and the Adler-32 of BOMB_BYTES zeros (a = 1, b = n mod 65521)
    c = zlib.compressobj(9)
    first = c.compress(_MiB) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(_MiB) + c.flush(zlib.Z_FULL_FLUSH)
    adler = ((BOMB_BYTES % 65521) << 16) | 1
    return first + block * ((BOMB_BYTES >> 20) - 1) + b"\x03\x00" + adler.to_bytes(4, "big")


def _br_bomb() -> bytes:
    c = brotli.Compressor(quality=5)
    return b"".join(c.process(_MiB) for _ in range(BOMB_BYTES >> 20)) + c.finish()


def _zstd_bomb() -> bytes:
    c = zstandard.ZstdCompressor(level=3).compressobj()
    return b"".join(c.compress(_MiB) for _ in range(BOMB_BYTES >> 20)) + c.flush()


SPIDER = '''
import crawlfw


class BombSpider(crawlfw.Spider):
    name = "bomb"

    def start_requests(self):
        yield crawlfw.Request(self.base + "/bomb", callback=self.parse_bomb)
        yield crawlfw.Request(self.base + "/page", callback=self.parse_page, priority=-1)

    def parse_bomb(self, response):
        yield {"bomb_body_bytes": len(response.body)}

    def parse_page(self, response):
        yield {"page": response.text}
'''

SITEMAP_SPIDER = '''
import crawlfw
from crawlfw.spiders import SitemapSpider


class BombSitemapSpider(SitemapSpider):
    name = "sitemap_bomb"

    def start_requests(self):
        yield crawlfw.Request(self.base + "/sitemap.xml.gz", callback=self._parse_sitemap)
        yield crawlfw.Request(self.base + "/page", callback=self.parse_page, priority=-1)

    def parse_page(self, response):
        yield {"page": response.text}
'''


def _crawl(tmp_path, routes, spider_source):
    spider_file = tmp_path / "bomb_spider.py"
    spider_file.write_text(spider_source)
    with ScriptedServer(routes) as server:
        result = run_measured(
            "runspider", spider_file, "-a", f"base={server.url}", "-o", "items.jl",
            "-s", f"DOWNLOAD_MAXSIZE={MAXSIZE}", "-s", "LOG_LEVEL=INFO",
            "-s", "STATS_DUMP=True", cwd=tmp_path, timeout_s=120,
        )
    assert not result.timed_out, result.stderr[-3000:]
    items = [json.loads(line) for line in (tmp_path / "items.jl").read_text().splitlines()]
    return result, items, server.url


@pytest.mark.parametrize(
    "coding, make_bomb",
    [
        ("gzip", _gzip_bomb),
        ("deflate", _deflate_bomb),
        pytest.param("br", _br_bomb, marks=pytest.mark.skipif(
            brotli is None, reason="brotli is not installed")),
        pytest.param("zstd", _zstd_bomb, marks=pytest.mark.skipif(
            zstandard is None, reason="zstandard is not installed")),
    ],
)
def test_content_encoding_bomb_is_dropped_within_bounded_memory(tmp_path, coding, make_bomb):
    bomb = make_bomb()
    assert len(bomb) < 1 << 20  # a small body...
    routes = {
        "/bomb": (200, [("Content-Type", "text/html"), ("Content-Encoding", coding)], bomb),
        "/page": (200, [("Content-Type", "text/html")], b"<html><body>ok</body></html>"),
    }
    result, items, url = _crawl(tmp_path, routes, SPIDER)
    assert result.returncode == 0, result.stderr[-3000:]
    # ...that would take gigabytes decoded in full, kept far below that
    assert result.maxrss_bytes < RSS_BOUND, f"peak RSS {result.maxrss_bytes >> 20} MiB"
    # the bomb was dropped and said so; the crawl went on to the next page
    assert items == [{"page": "<html><body>ok</body></html>"}]
    warning = (f"WARNING: Ignored response <200 {url}/bomb> because its body ({len(bomb)} "
               f"bytes compressed) is larger than the download max size ({MAXSIZE} bytes)")
    assert warning in result.stderr
    assert "'httpcompression/response_dropped/maxsize': 1" in result.stderr
    assert "'finish_reason': 'finished'" in result.stderr


def test_gzip_sitemap_bomb_is_skipped_within_bounded_memory(tmp_path):
    bomb = _gzip_bomb()
    routes = {
        "/sitemap.xml.gz": (200, [("Content-Type", "application/x-gzip")], bomb),
        "/page": (200, [("Content-Type", "text/html")], b"<html><body>ok</body></html>"),
    }
    result, items, url = _crawl(tmp_path, routes, SITEMAP_SPIDER)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.maxrss_bytes < RSS_BOUND, f"peak RSS {result.maxrss_bytes >> 20} MiB"
    assert items == [{"page": "<html><body>ok</body></html>"}]
    assert (f"WARNING: Decompressed size of {url}/sitemap.xml.gz exceeds the maximum allowed "
            f"size of {MAXSIZE} bytes") in result.stderr
