"""Sitemap and sitemap_urls_from_robots on the real aegisub.org sitemaps and 152 real
robots.txt files, plus hand-written edge cases (sitemaps.org protocol, XXE)."""

import re
from pathlib import Path

import pytest
from protego import Protego

from crawlfw.utils.sitemap import Sitemap, sitemap_urls_from_robots

SITEMAPS_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"

# The 12 urlset sitemaps of the aegisub.org copy and their <url> counts (PROVENANCE.txt:
# 544 <loc> entries in all, 4 of them in the index).
AEGISUB_URLSETS = {
    "en/sitemap.xml": 170,
    "blog/sitemap.xml": 49,
    "es-us/sitemap.xml": 23,
    "es-us/docs/sitemap.xml": 19,
    "docs/sitemap.xml": 74,
    "changelog/sitemap.xml": 36,
    "tr-tr/blog/sitemap.xml": 1,
    "tr-tr/sitemap.xml": 9,
    "tr-tr/docs/sitemap.xml": 0,
    "zh-cn/blog/sitemap.xml": 1,
    "zh-cn/sitemap.xml": 84,
    "zh-cn/docs/sitemap.xml": 74,
}


@pytest.fixture(scope="module")
def aegisub_dir(sites_dir) -> Path:
    return sites_dir / "aegisub.org"


def _regex_entries(text):
    """An independent reading of a urlset: [(loc, [alternate hrefs])] by regex."""
    out = []
    for block in re.findall(r"<url>(.*?)</url>", text, re.S):
        loc = re.search(r"<loc>(.*?)</loc>", block, re.S).group(1).strip()
        out.append((loc, re.findall(r'<xhtml:link [^>]*href="([^"]*)"', block)))
    return out


def test_aegisub_sitemap_index(aegisub_dir):
    s = Sitemap((aegisub_dir / "sitemap.xml").read_bytes())
    assert s.type == "sitemapindex"
    assert list(s) == [
        {"loc": "/en/sitemap.xml", "lastmod": "2025-01-12T00:00:00+00:00"},
        {"loc": "/es-us/sitemap.xml"},
        {"loc": "/tr-tr/sitemap.xml", "lastmod": "2024-12-30T00:00:00+00:00"},
        {"loc": "/zh-cn/sitemap.xml", "lastmod": "2024-12-30T00:00:00+00:00"},
    ]


@pytest.mark.parametrize("path, count", sorted(AEGISUB_URLSETS.items()))
def test_aegisub_urlsets(aegisub_dir, path, count):
    body = (aegisub_dir / path).read_bytes()
    s = Sitemap(body)
    assert s.type == "urlset"
    entries = list(s)
    assert len(entries) == count
    assert [(d["loc"], d.get("alternate", [])) for d in entries] == _regex_entries(
        body.decode("utf-8")
    )
    for d in entries:
        assert set(d) <= {"loc", "lastmod", "changefreq", "priority", "alternate"}


def test_aegisub_urlsets_total(aegisub_dir):
    assert sum(len(list(Sitemap((aegisub_dir / p).read_bytes()))) for p in AEGISUB_URLSETS) == 540


def test_hreflang_alternates_non_ascii(aegisub_dir):
    entries = {d["loc"]: d for d in Sitemap((aegisub_dir / "en/sitemap.xml").read_bytes())}
    assert entries["/blog/aegisub-3.4.0-released/"] == {
        "loc": "/blog/aegisub-3.4.0-released/",
        "lastmod": "2024-12-18T14:04:00-08:00",
        "changefreq": "weekly",
        "priority": "0.5",
        "alternate": [
            "/tr-tr/blog/aegisub-3.4.0-yay%C4%B1nland%C4%B1/",
            "/zh-cn/blog/aegisub-3.4.0-%E5%8F%91%E5%B8%83%E4%BA%86/",
            "/blog/aegisub-3.4.0-released/",
        ],
    }


@pytest.mark.parametrize(
    "xml, type_, entries",
    [
        # the protocol's example urlset (sitemaps.org/protocol.html, "Sample XML Sitemap")
        (
            f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{SITEMAPS_NS}"><url>'
            "<loc>http://www.example.com/</loc><lastmod>2005-01-01</lastmod>"
            "<changefreq>monthly</changefreq><priority>0.8</priority></url></urlset>",
            "urlset",
            [{"loc": "http://www.example.com/", "lastmod": "2005-01-01",
              "changefreq": "monthly", "priority": "0.8"}],
        ),
        # whitespace around values, comments removed, entries without <loc> skipped
        (
            f"<urlset xmlns='{SITEMAPS_NS}'><url><loc>\n  http://a/1 \n</loc></url>"
            "<!-- a comment --><url><lastmod>2020</lastmod></url>"
            "<url><loc>http://a/<!-- c -->2</loc></url></urlset>",
            "urlset",
            [{"loc": "http://a/1"}, {"loc": "http://a/2"}],
        ),
        # no namespace at all, empty elements
        (
            "<urlset><url><loc>http://a/</loc><lastmod/></url></urlset>",
            "urlset",
            [{"loc": "http://a/", "lastmod": ""}],
        ),
        # recover=True: unclosed elements at the end still give what was read
        (
            f"<sitemapindex xmlns='{SITEMAPS_NS}'><sitemap><loc>http://a/s1.xml</loc>"
            "</sitemap><sitemap><loc>http://a/s2.xml</loc>",
            "sitemapindex",
            [{"loc": "http://a/s1.xml"}, {"loc": "http://a/s2.xml"}],
        ),
        # an alternate without href is ignored
        (
            "<urlset xmlns:xhtml='http://www.w3.org/1999/xhtml'><url><loc>http://a/</loc>"
            "<xhtml:link rel='alternate' hreflang='de'/>"
            "<xhtml:link rel='alternate' hreflang='fr' href=' http://a/fr '/></url></urlset>",
            "urlset",
            [{"loc": "http://a/", "alternate": ["http://a/fr"]}],
        ),
        # not a sitemap: the root element's name is the type, nothing matches
        ("<html><body><p>hi</p></body></html>", "html", []),
        # str input with an encoding declaration, non-ASCII
        (
            '<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>http://a/é</loc>'
            "</url></urlset>",
            "urlset",
            [{"loc": "http://a/é"}],
        ),
    ],
)
def test_sitemap_cases(xml, type_, entries):
    s = Sitemap(xml)
    assert s.type == type_
    assert list(s) == entries


def test_bytes_with_declared_encoding():
    xml = '<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>http://a/é</loc></url></urlset>'
    assert list(Sitemap(xml.encode("latin-1"))) == [{"loc": "http://a/é"}]


def test_external_entities_are_not_loaded(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    xml = (
        f'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY xxe SYSTEM "file://{secret}">]>'
        f"<urlset xmlns='{SITEMAPS_NS}'><url><loc>http://a/&xxe;</loc></url></urlset>"
    ).encode()
    entries = list(Sitemap(xml))
    assert entries and all("TOP-SECRET" not in d["loc"] for d in entries)


def test_internal_entities_are_not_expanded():
    # 3 levels of 10x: 3,000 characters if expanded (libxml2 expands this little)
    lol = "<!ENTITY lol0 'lol'>" + "".join(
        f"<!ENTITY lol{i} '{f'&lol{i - 1};' * 10}'>" for i in range(1, 4)
    )
    xml = f"<?xml version='1.0'?><!DOCTYPE urlset [{lol}]><urlset><url><loc>&lol3;</loc></url></urlset>"
    entries = list(Sitemap(xml.encode()))
    assert all(len(d["loc"]) < 100 for d in entries)


@pytest.mark.parametrize("body", [b"", b"   ", b"just some text", "plain text"])
def test_not_xml_raises_value_error(body):
    with pytest.raises(ValueError, match="Not a sitemap"):
        Sitemap(body)


def test_bad_type_raises_type_error():
    with pytest.raises(TypeError, match="bytes or str"):
        Sitemap(42)


# --- robots.txt ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, base_url, expected",
    [
        ("Sitemap: http://a/s.xml", None, ["http://a/s.xml"]),
        ("sitemap:http://a/s.xml\nSITEMAP :  http://a/t.xml", None, ["http://a/s.xml"]),
        ("  Sitemap: http://a/s.xml  \r\nUser-agent: *\r\nSitemap: http://a/t.xml\r\n", None,
         ["http://a/s.xml", "http://a/t.xml"]),
        ("Sitemap: http://a/s.xml # main sitemap", None, ["http://a/s.xml"]),
        ("# Sitemap: http://a/commented.xml\nSitemap:\n", None, []),
        ("\ufeffSitemap: http://a/bom.xml", None, ["http://a/bom.xml"]),
        ("Sitemap: /sitemap.xml", "http://h:8000/robots.txt", ["http://h:8000/sitemap.xml"]),
        ("Sitemap: sub/s.xml", "http://h/dir/robots.txt", ["http://h/dir/sub/s.xml"]),
        ("Sitemap: https://other/s.xml", "http://h/robots.txt", ["https://other/s.xml"]),
        ("Sitemap: /sitemap.xml", None, ["/sitemap.xml"]),
        (b"Sitemap: http://a/\xc3\xa9.xml", None, ["http://a/é.xml"]),
        ("User-agent: *\nDisallow: /sitemap:\n", None, []),
    ],
)
def test_sitemap_urls_from_robots_cases(text, base_url, expected):
    assert list(sitemap_urls_from_robots(text, base_url=base_url)) == expected


def test_aegisub_robots_relative_sitemap(aegisub_dir):
    text = (aegisub_dir / "robots.txt").read_text()
    assert list(sitemap_urls_from_robots(text)) == ["/sitemap.xml"]
    assert list(sitemap_urls_from_robots(text, base_url="http://127.0.0.1:81/robots.txt")) == [
        "http://127.0.0.1:81/sitemap.xml"
    ]


def test_real_robots_with_bom_and_crlf(sites_dir):
    # Hand-checked: a BOM before the first line, CRLF endings, a third host's sitemap.
    text = (sites_dir / "robots-txt/www.aao.org/robots.txt").read_bytes().decode("utf-8")
    assert list(sitemap_urls_from_robots(text)) == [
        "https://www.aao.org/sitemap.xml",
        "https://www.aao.org/sitemap_lms.xml",
        "https://isrs.org/sitemap.xml",
    ]


def test_real_robots_files_agree_with_protego(sites_dir):
    """All 152 files: the same URLs as Protego's parser (given the text without BOM,
    which Protego does not strip); 98 files name sitemaps."""
    files = sorted((sites_dir / "robots-txt").glob("*/robots.txt"))
    assert len(files) == 152
    with_sitemaps = 0
    for path in files:
        text = path.read_bytes().decode("utf-8", "replace")
        ours = list(sitemap_urls_from_robots(text))
        assert ours == list(Protego.parse(text.lstrip("\ufeff")).sitemaps), path.parent.name
        with_sitemaps += bool(ours)
    assert with_sitemaps == 98


# --- streaming (Scrapy 2's Sitemap.xmliter) ----------------------------------------------


def test_xmliter_is_the_stream_and_entries_are_freed_once_read():
    xml = ("<urlset>" + "".join(f"<url><loc>http://a/{i}</loc></url>" for i in range(50))
           + "</urlset>").encode()
    s = Sitemap(xml)
    assert iter(s.xmliter) is s.xmliter
    children_seen = []
    for entry in s:
        children_seen.append(len(s._root))
        assert entry["loc"].startswith("http://a/")
    assert len(children_seen) == 50
    # the iteration took the stream: a second one yields nothing (as in Scrapy 2)
    assert list(s) == []
    assert next(s.xmliter, None) is None
    # the entries before the current one were dropped (lxml parsed this small document
    # ahead: the root held the current entry and the ones after it)
    assert children_seen == list(range(50, 0, -1))


def test_xmliter_yields_start_and_end_events():
    s = Sitemap(b"<urlset><url><loc>http://a/</loc></url></urlset>")
    events = [(event, el.tag) for event, el in s.xmliter]
    assert events == [("start", "url"), ("start", "loc"), ("end", "loc"), ("end", "url"),
                      ("end", "urlset")]


def test_a_document_that_breaks_off_keeps_the_entries_read():
    xml = b"<urlset><url><loc>http://a/1</loc></url><url><loc>http://a/2</loc></url><url><lo"
    assert [d["loc"] for d in Sitemap(xml)] == ["http://a/1", "http://a/2"]
