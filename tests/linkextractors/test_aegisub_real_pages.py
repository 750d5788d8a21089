"""LinkExtractor on real pages: ../shared/sites/aegisub.org (a Hugo site with minified,
unquoted attributes, four languages, percent-encoded non-ASCII paths, and a legacy
MediaWiki manual with rel="nofollow" links).

Exact link lists for chosen pages, and for every page of the site a comparison with a
second, independent reading of the source with regular expressions.
"""

import html
import posixpath
import re
from urllib.parse import urljoin, urlparse

import pytest
from w3lib.html import strip_html5_whitespace
from w3lib.url import safe_url_string

from crawlfw.http import HtmlResponse
from crawlfw.link import Link
from crawlfw.linkextractors import IGNORED_EXTENSIONS, LinkExtractor

SITE = "aegisub.org"
BASE = "https://aegisub.org/"


def _response(sites_dir, rel_path, url_path=None):
    body = (sites_dir / SITE / rel_path).read_bytes()
    url = BASE + (url_path if url_path is not None else rel_path)
    return HtmlResponse(url, body=body)


PRIVACY_POLICY = [
    ("https://aegisub.org/blog/aegisub-3.4.0-released/", "Aegisub 3.4.0 released!"),
    ("https://aegisub.org/", "Aegisub"),
    ("https://aegisub.org/privacy-policy/", "Downloads\n"),
    ("https://aegisub.org/downloads/", "Downloads"),
    ("https://aegisub.org/changelog/", "Changelog"),
    ("https://aegisub.org/docs/", "Docs"),
    ("https://github.com/TypesettingTools/Aegisub/issues", "Bug Tracker"),
    ("https://aegisub.org/blog/", "Blog"),
    ("https://github.com/TypesettingTools/Aegisub", "GitHub"),
    ("https://aegisub.org/tr-tr/privacy-policy/", "T\u00fcrk\u00e7e"),
    ("https://aegisub.org/zh-cn/privacy-policy/", "\u7b80\u4f53\u4e2d\u6587"),
    ("https://aegisub.org/privacy-policy/#full-disclosure-statistics-collected-by-the-update-checker", "#"),
    ("https://aegisub.org/privacy-policy/#date-and-time", "#"),
    ("https://aegisub.org/privacy-policy/#ip-address", "#"),
    ("https://aegisub.org/privacy-policy/#version", "#"),
    ("https://aegisub.org/privacy-policy/#operating-system", "#"),
    ("https://aegisub.org/privacy-policy/#interface-language", "#"),
    ("https://gohugo.io/", "Hugo"),
    ("https://getdoks.org/", "Doks"),
    ("https://github.com/Aegisub/aegisite/graphs/contributors", "contributors"),
]

TR_BLOG = [
    ("https://aegisub.org/tr/blog/aegisub-3.4.0-released/", "Aegisub 3.4.0 yay\u0131nland\u0131!"),
    ("https://aegisub.org/tr-tr/", "Aegisub"),
    ("https://aegisub.org/tr-tr/blog/", "\u0130ndir\n"),
    ("https://aegisub.org/tr-tr/downloads/", "\u0130ndir"),
    ("https://aegisub.org/changelog/", "De\u011fi\u015fiklikler G\u00fcnl\u00fc\u011f\u00fc"),
    ("https://aegisub.org/tr-tr/docs/", "Belgeler"),
    ("https://github.com/TypesettingTools/Aegisub/issues", "Hata Takibi"),
    ("https://github.com/TypesettingTools/Aegisub", "GitHub"),
    ("https://aegisub.org/blog/", "English"),
    ("https://aegisub.org/zh-cn/blog/", "\u7b80\u4f53\u4e2d\u6587"),
    ("https://aegisub.org/tr-tr/blog/aegisub-3.4.0-yay%C4%B1nland%C4%B1/", "Aegisub 3.4.0 Yay\u0131nland\u0131"),
    ("https://aegisub.org/tr-tr/contributors/coffeeflux/", "CoffeeFlux"),
    ("https://aegisub.org/tr-tr/contributors/kerim-demirkaynak/", "Kerim Demirkaynak"),
    ("https://gohugo.io/", "Hugo"),
    ("https://getdoks.org/", "Doks"),
    ("https://github.com/Aegisub/aegisite/graphs/contributors", "katk\u0131da bulunanlar"),
    ("https://aegisub.org/privacy-policy/", "Gizlilik"),
]


@pytest.mark.parametrize(
    "rel_path, url_path, expected",
    [
        ("privacy-policy/index.html", "privacy-policy/", PRIVACY_POLICY),
        ("tr-tr/blog/index.html", "tr-tr/blog/", TR_BLOG),
    ],
)
def test_every_link_of_a_page(sites_dir, rel_path, url_path, expected):
    links = LinkExtractor().extract_links(_response(sites_dir, rel_path, url_path))
    assert links == [Link(url, text) for url, text in expected]


def test_non_unique_links_of_a_page(sites_dir):
    response = _response(sites_dir, "privacy-policy/index.html", "privacy-policy/")
    links = LinkExtractor(unique=False).extract_links(response)
    assert len(links) == 23
    assert [link.url for link in links].count("https://aegisub.org/privacy-policy/#version") == 1
    assert {link.url for link in links} == {url for url, _ in PRIVACY_POLICY}


def test_restrict_and_allow_on_a_real_page(sites_dir):
    response = _response(sites_dir, "privacy-policy/index.html", "privacy-policy/")
    assert [link.url for link in LinkExtractor(allow_domains="github.com").extract_links(response)] == [
        "https://github.com/TypesettingTools/Aegisub/issues",
        "https://github.com/TypesettingTools/Aegisub",
        "https://github.com/Aegisub/aegisite/graphs/contributors",
    ]
    internal = LinkExtractor(allow_domains="aegisub.org", deny=("#", r"/(tr-tr|zh-cn|es-us)/"))
    assert [link.url for link in internal.extract_links(response)] == [
        "https://aegisub.org/blog/aegisub-3.4.0-released/",
        "https://aegisub.org/",
        "https://aegisub.org/privacy-policy/",
        "https://aegisub.org/downloads/",
        "https://aegisub.org/changelog/",
        "https://aegisub.org/docs/",
        "https://aegisub.org/blog/",
    ]
    footer = LinkExtractor(restrict_css="footer")
    # the footer's "Privacy" link repeats a page URL; within the region it is new
    assert [link.text for link in footer.extract_links(response)] == ["Hugo", "Doks", "contributors", "Privacy"]


def test_legacy_manual_nofollow_links(sites_dir):
    response = _response(sites_dir, "docs/manual/Select_Lines.html")
    links = LinkExtractor().extract_links(response)
    assert len(links) == 41
    assert [link.url for link in links if link.nofollow] == [
        "http://en.wikipedia.org/wiki/Regular_expression",
        "http://perldoc.perl.org/perlretut.html",
        "http://www.wxwidgets.org/manuals/stable/wx_wxresyn.html",
    ]
    assert links[0] == Link("https://aegisub.org/docs/manual/File_Select_lines.html", "")
    assert links[3].text == "3 Match dialogues/comments"
    # <a name=...> anchors without href give no links
    assert all(link.url != response.url + "#top" for link in links)


def test_area_and_custom_tags_on_legacy_manual(sites_dir):
    response = _response(sites_dir, "docs/manual/Select_Lines.html")
    images = LinkExtractor(tags="img", attrs="src", deny_extensions=()).extract_links(response)
    assert images and all(link.url.startswith("https://aegisub.org/docs/manual/") for link in images)
    assert all(urlparse(link.url).path.lower().endswith((".png", ".jpg", ".gif")) for link in images)
    assert LinkExtractor(tags="img", attrs="src").extract_links(response) == []


# -- the whole site against an independent reading ---------------------------------------

_IGNORED = {"." + e for e in IGNORED_EXTENSIONS}
_TAG = re.compile(r"<(?:a|area)\b((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>", re.I)
_HREF = re.compile(r"""(?:^|\s)href\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))""", re.I)
# libxml2 drops the content of <noframes> (one legacy frameset page).
_SKIP = re.compile(r"<!--.*?-->|<(script|style|noframes)\b.*?</\1\s*>", re.S | re.I)


def _regex_links(text, url):
    found = []
    for tag in _TAG.finditer(_SKIP.sub("", text)):
        href = _HREF.search(tag.group(1))
        if href is None:
            continue
        value = next(g for g in href.groups() if g is not None)
        absolute = urljoin(url, strip_html5_whitespace(html.unescape(value)))
        try:
            absolute = safe_url_string(absolute, encoding="utf-8")
        except ValueError:
            continue
        if absolute.split("://", 1)[0] not in ("http", "https", "file", "ftp"):
            continue
        if posixpath.splitext(urlparse(absolute).path)[1].lower() in _IGNORED:
            continue
        if absolute not in found:
            found.append(absolute)
    return found


@pytest.mark.slow
def test_every_page_of_the_site(sites_dir):
    root = sites_dir / SITE
    pages = sorted(p for p in root.rglob("*") if p.suffix in (".html", ".htm"))
    assert len(pages) == 1047
    extractor = LinkExtractor()
    total = 0
    for path in pages:
        rel = path.relative_to(root).as_posix()
        response = HtmlResponse(BASE + rel, body=path.read_bytes())
        found = [link.url for link in extractor.extract_links(response)]
        assert found == _regex_links(response.text, response.url), rel
        total += len(found)
    assert total > 40000
