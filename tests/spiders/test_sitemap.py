"""SitemapSpider: body detection (plain, gzip, size limits), robots.txt, sitemap index
following, rules and alternates; real crawls of aegisub.org from its robots.txt and of a
gzip-compressed sitemap."""

import gzip
import logging
import re
from pathlib import Path

import pytest

from crawlfw.http import HtmlResponse, Request, Response, TextResponse, XmlResponse
from crawlfw.spiders import SitemapSpider
from crawlfw.utils.test import get_crawler
from tests.support.crawl import run_crawl
from tests.support.servers import StaticSiteServer

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
URLSET = f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="{NS}" xmlns:xhtml="http://www.w3.org/1999/xhtml">
<url><loc>http://www.example.com/</loc></url>
<url><loc>/blog/post-1/</loc>
  <xhtml:link rel="alternate" hreflang="de" href="/de/blog/post-1/"/></url>
<url><loc>http://www.example.com/shop/item?id=7</loc></url>
</urlset>""".encode()
INDEX = f"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="{NS}">
<sitemap><loc>http://www.example.com/sitemap-blog.xml</loc></sitemap>
<sitemap><loc>/sitemap-shop.xml.gz</loc></sitemap>
</sitemapindex>""".encode()
SITEMAP_URL = "http://www.example.com/sitemap.xml"


class Spider(SitemapSpider):
    name = "sitemap"

    def parse(self, response):
        return {"url": response.url}

    def parse_blog(self, response):
        return {"blog": response.url}


def _targets(requests):
    return [(r.url, r.callback.__name__) for r in requests]


# --- body detection --------------------------------------------------------------------

GZ_URLSET = gzip.compress(URLSET)


@pytest.mark.parametrize(
    "response, expected",
    [
        (XmlResponse("http://a/sitemap", body=URLSET), URLSET),
        (Response("http://a/s", body=GZ_URLSET, headers={"Content-Type": "application/gzip"}),
         URLSET),
        (Response("http://a/s", body=GZ_URLSET, headers={"Content-Type": "application/x-gzip"}),
         URLSET),
        (Response("http://a/s", body=GZ_URLSET, headers={
            "Content-Type": "application/octet-stream", "Content-Encoding": "gzip"}), URLSET),
        (TextResponse("http://a/sitemap.xml", body=URLSET, headers={"Content-Type": "text/plain"}),
         URLSET),
        (TextResponse("http://a/sitemap.xml?page=2", body=URLSET), URLSET),
        (Response("http://a/sitemap.xml.gz", body=GZ_URLSET,
                  headers={"Content-Type": "application/octet-stream"}), URLSET),
        (HtmlResponse("http://a/page", body=b"<html></html>"), None),
        (TextResponse("http://a/sitemap.txt", body=b"http://a/1\n"), None),
        (Response("http://a/sitemap.xml.gz", body=b"not gzip"), None),
    ],
)
def test_get_sitemap_body(response, expected):
    assert Spider()._get_sitemap_body(response) == expected


def test_gzip_over_max_size_is_ignored(caplog):
    spider = Spider()
    spider._max_size = len(URLSET) - 1
    response = Response("http://a/s.xml.gz", body=GZ_URLSET, request=Request("http://a/s.xml.gz"))
    with caplog.at_level(logging.WARNING, logger="crawlfw.spiders.sitemap"):
        assert spider._get_sitemap_body(response) is None
        assert list(spider._parse_sitemap(response)) == []
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0] == (f"Decompressed size of http://a/s.xml.gz exceeds the maximum allowed "
                           f"size of {len(URLSET) - 1} bytes")
    assert "Ignoring invalid sitemap: <200 http://a/s.xml.gz>" in messages


@pytest.mark.parametrize("meta_max, ok", [(len(URLSET), True), (len(URLSET) - 1, False), (0, True)])
def test_download_maxsize_meta_overrides(meta_max, ok):
    spider = Spider()
    spider._max_size = 10
    request = Request("http://a/s.xml.gz", meta={"download_maxsize": meta_max})
    response = Response("http://a/s.xml.gz", body=GZ_URLSET, request=request)
    assert (spider._get_sitemap_body(response) == URLSET) is ok


def test_gzip_over_warn_size_warns(caplog):
    spider = Spider()
    spider._warn_size = 100
    response = Response("http://a/s.xml.gz", body=GZ_URLSET, request=Request("http://a/s.xml.gz"))
    with caplog.at_level(logging.WARNING, logger="crawlfw.spiders.sitemap"):
        assert spider._get_sitemap_body(response) == URLSET
    assert [r.getMessage() for r in caplog.records] == [
        f"Decompressed size of http://a/s.xml.gz ({len(URLSET)} bytes) is larger than the "
        "warning size of 100 bytes"
    ]


@pytest.mark.parametrize("settings, max_size, warn_size", [
    ({}, 1024 * 1024 * 1024, 32 * 1024 * 1024),
    ({"DOWNLOAD_MAXSIZE": 1000, "DOWNLOAD_WARNSIZE": 10}, 1000, 10),
])
def test_from_crawler_reads_size_settings(settings, max_size, warn_size):
    spider = Spider.from_crawler(get_crawler(Spider, settings))
    assert (spider._max_size, spider._warn_size) == (max_size, warn_size)


# --- parsing ---------------------------------------------------------------------------


def test_robots_txt_gives_sitemap_requests():
    spider = Spider()
    body = b"User-agent: *\nDisallow: /x\nSitemap: /sitemap.xml\nsitemap: http://b/s.xml.gz\n"
    response = TextResponse("http://www.example.com/robots.txt", body=body)
    assert _targets(spider._parse_sitemap(response)) == [
        ("http://www.example.com/sitemap.xml", "_parse_sitemap"),
        ("http://b/s.xml.gz", "_parse_sitemap"),
    ]


def test_robots_txt_with_binary_content_type():
    response = Response("http://a/robots.txt", body=b"\xef\xbb\xbfSitemap: /s.xml\n",
                        headers={"Content-Type": "application/octet-stream"})
    assert _targets(Spider()._parse_sitemap(response)) == [("http://a/s.xml", "_parse_sitemap")]


@pytest.mark.parametrize(
    "follow, expected",
    [
        ([""], ["http://www.example.com/sitemap-blog.xml", "http://www.example.com/sitemap-shop.xml.gz"]),
        (["blog"], ["http://www.example.com/sitemap-blog.xml"]),
        ([re.compile(r"\.gz$"), "nothing"], ["http://www.example.com/sitemap-shop.xml.gz"]),
        ([], []),
    ],
)
def test_sitemap_index_follow(follow, expected):
    spider = Spider(sitemap_follow=follow)
    spider._follow = [re.compile(x) if isinstance(x, str) else x for x in follow]
    out = list(spider._parse_sitemap(XmlResponse(SITEMAP_URL, body=INDEX)))
    assert [r.url for r in out] == expected
    assert all(r.callback == spider._parse_sitemap for r in out)


class RulesSpider(Spider):
    sitemap_rules = [("/blog/", "parse_blog"), (re.compile(r"/$"), "parse")]


@pytest.mark.parametrize(
    "alternate, expected",
    [
        (False, [("http://www.example.com/", "parse"),
                 ("http://www.example.com/blog/post-1/", "parse_blog")]),
        (True, [("http://www.example.com/", "parse"),
                ("http://www.example.com/blog/post-1/", "parse_blog"),
                ("http://www.example.com/de/blog/post-1/", "parse_blog")]),
    ],
)
def test_urlset_rules_and_alternates(alternate, expected):
    spider = RulesSpider(sitemap_alternate_links=alternate)
    out = list(spider._parse_sitemap(XmlResponse(SITEMAP_URL, body=URLSET)))
    # /shop/item?id=7 matches no rule: not requested
    assert _targets(out) == expected


def test_default_rule_sends_everything_to_parse():
    out = list(Spider()._parse_sitemap(XmlResponse(SITEMAP_URL, body=URLSET)))
    assert [cb for _, cb in _targets(out)] == ["parse"] * 3


def test_callable_rule_and_missing_method():
    def cb(response):
        return None

    class C(Spider):
        sitemap_rules = [("", cb)]

    (first, *_) = C()._parse_sitemap(XmlResponse(SITEMAP_URL, body=URLSET))
    assert first.callback is cb

    class Missing(Spider):
        sitemap_rules = [("", "parse_nothing")]

    with pytest.raises(ValueError, match="'parse_nothing'"):
        Missing()


def test_sitemap_filter_hook():
    class Filtered(Spider):
        def sitemap_filter(self, entries):
            for entry in entries:
                if "shop" in entry["loc"]:
                    yield entry

    out = list(Filtered()._parse_sitemap(XmlResponse(SITEMAP_URL, body=URLSET)))
    assert [r.url for r in out] == ["http://www.example.com/shop/item?id=7"]


@pytest.mark.parametrize(
    "response",
    [
        HtmlResponse("http://a/page.html", body=b"<html><body>not a sitemap</body></html>"),
        TextResponse("http://a/sitemap.xml", body=b"plain text, no XML"),
    ],
)
def test_invalid_sitemap_is_logged(response, caplog):
    with caplog.at_level(logging.WARNING, logger="crawlfw.spiders.sitemap"):
        assert list(Spider()._parse_sitemap(response)) == []
    assert [r.getMessage() for r in caplog.records] == [f"Ignoring invalid sitemap: {response}"]


def test_start_requests():
    spider = Spider(sitemap_urls=["http://a/robots.txt", "http://a/sitemap.xml"])
    out = list(spider.start_requests())
    assert _targets(out) == [("http://a/robots.txt", "_parse_sitemap"),
                             ("http://a/sitemap.xml", "_parse_sitemap")]


# --- real crawls -----------------------------------------------------------------------


def _locs(path: Path):
    return re.findall(r"<loc>([^<]*)</loc>", path.read_text(encoding="utf-8"))


def _alternates(path: Path):
    return re.findall(r'<xhtml:link [^>]*href="([^"]*)"', path.read_text(encoding="utf-8"))


class AegisubSitemap(SitemapSpider):
    name = "aegisub_sitemap"
    sitemap_rules = [("/blog/", "parse_blog"), ("", "parse")]

    def parse(self, response):
        yield {"url": response.url, "kind": "page", "status": response.status}

    def parse_blog(self, response):
        yield {"url": response.url, "kind": "blog", "status": response.status}


@pytest.fixture(scope="module")
def aegisub(site_server, sites_dir):
    return site_server("aegisub.org"), sites_dir / "aegisub.org"


INDEXED = ["en/sitemap.xml", "es-us/sitemap.xml", "tr-tr/sitemap.xml", "zh-cn/sitemap.xml"]


@pytest.mark.slow
@pytest.mark.parametrize("alternates", [False, True])
def test_crawl_aegisub_from_robots_txt(aegisub, alternates):
    """robots.txt -> relative "Sitemap: /sitemap.xml" -> the index -> its 4 urlsets ->
    every page they list (and their hreflang alternates), each once, by rule."""
    server, root = aegisub
    paths = set()
    for sitemap in INDEXED:
        paths.update(_locs(root / sitemap))
        if alternates:
            paths.update(_alternates(root / sitemap))
    expected = {server.url + p: ("blog" if "/blog/" in p else "page") for p in paths}

    result = run_crawl(AegisubSitemap, timeout_s=60, sitemap_urls=[server.url + "/robots.txt"],
                       sitemap_alternate_links=alternates)
    assert result.finish_reason == "finished"
    urls = [i["url"] for i in result.items]
    assert len(urls) == len(set(urls))
    assert {i["url"]: i["kind"] for i in result.items} == expected
    assert all(i["status"] == 200 for i in result.items)
    # robots.txt + index + 4 urlsets + the pages; nothing missing
    assert result.stats["response_received_count"] == 6 + len(expected)
    assert "downloader/response_status_count/404" not in result.stats


def test_crawl_aegisub_sitemap_follow(aegisub):
    server, root = aegisub

    class OnlyTurkish(AegisubSitemap):
        sitemap_urls = [server.url + "/sitemap.xml"]
        sitemap_follow = ["/tr-tr/"]

    result = run_crawl(OnlyTurkish, timeout_s=60)
    expected = {server.url + p for p in _locs(root / "tr-tr/sitemap.xml")}
    assert len(expected) == 9
    assert {i["url"] for i in result.items} == expected
    assert "http://127.0.0.1" in next(iter(expected))


@pytest.fixture
def gz_site(tmp_path, aegisub):
    """A site with a plain sitemap index pointing to a gzip-compressed copy of aegisub's
    en/sitemap.xml whose locs are made absolute (to the aegisub server)."""
    server, root = aegisub
    text = (root / "en/sitemap.xml").read_text(encoding="utf-8")
    text = text.replace("<loc>/", f"<loc>{server.url}/")
    (tmp_path / "sitemap_en.xml.gz").write_bytes(gzip.compress(text.encode("utf-8")))
    (tmp_path / "index.xml").write_text(
        f'<?xml version="1.0"?><sitemapindex xmlns="{NS}">'
        "<sitemap><loc>sitemap_en.xml.gz</loc></sitemap></sitemapindex>"
    )
    gz_server = StaticSiteServer(tmp_path).start()
    yield gz_server, text
    gz_server.stop()


def test_crawl_gzip_sitemap(gz_site, aegisub):
    gz_server, text = gz_site
    expected = set(re.findall(r"<loc>([^<]*)</loc>", text))
    assert len(expected) == 170
    result = run_crawl(AegisubSitemap, timeout_s=60, sitemap_urls=[gz_server.url + "/index.xml"])
    assert result.finish_reason == "finished"
    assert {i["url"] for i in result.items} == expected


def test_crawl_gzip_sitemap_over_maxsize(gz_site, caplog):
    """DOWNLOAD_MAXSIZE also bounds the decompressed sitemap: the 3.6 kB download passes,
    the 39 kB sitemap inside does not."""
    gz_server, text = gz_site
    limit = 20_000
    assert len(gzip.compress(text.encode())) < limit < len(text.encode())
    with caplog.at_level(logging.WARNING, logger="crawlfw.spiders.sitemap"):
        result = run_crawl(AegisubSitemap, settings={"DOWNLOAD_MAXSIZE": limit}, timeout_s=60,
                           sitemap_urls=[gz_server.url + "/index.xml"])
    assert result.items == []
    messages = [r.getMessage() for r in caplog.records if r.name == "crawlfw.spiders.sitemap"]
    assert messages == [
        f"Decompressed size of {gz_server.url}/sitemap_en.xml.gz exceeds the maximum allowed "
        f"size of {limit} bytes",
        f"Ignoring invalid sitemap: <200 {gz_server.url}/sitemap_en.xml.gz>",
    ]
