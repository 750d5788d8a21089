"""XMLFeedSpider and CSVFeedSpider: each iterator and hook on real feeds, and real crawls
of the peps.python.org RSS feed, the 25 aegisub.org RSS feeds and the population CSV."""

from pathlib import Path

import lxml.etree
import pytest

from crawlfw.exceptions import NotSupported
from crawlfw.http import Request, TextResponse, XmlResponse
from crawlfw.spiders import CSVFeedSpider, XMLFeedSpider
from tests.support.crawl import run_crawl

DC_NS = "http://purl.org/dc/elements/1.1/"
ATOM_NS = "http://www.w3.org/2005/Atom"


@pytest.fixture(scope="module")
def peps_rss(sites_dir) -> bytes:
    return (sites_dir / "peps.python.org" / "peps.rss").read_bytes()


@pytest.fixture(scope="module")
def csv_path(sites_dir) -> Path:
    return sites_dir / "raw.githubusercontent.com/datasets/population/main/data/population.csv"


def _rss_titles(body):
    return [i.findtext("title") for i in lxml.etree.fromstring(body).iter("item")]


class TitlesSpider(XMLFeedSpider):
    name = "titles"

    def parse_node(self, response, node):
        return {"title": node.xpath("title/text()").extract_first(),
                "link": node.xpath("link/text()").extract_first(),
                "feed": response.url}


# --- XMLFeedSpider ---------------------------------------------------------------------


@pytest.mark.parametrize("iterator", ["iternodes", "xml", "html"])
def test_iterators_on_peps_rss(iterator, peps_rss):
    spider = TitlesSpider(iterator=iterator)
    response = XmlResponse("https://peps.python.org/peps.rss", body=peps_rss)
    items = list(spider.parse(response))
    assert [i["title"] for i in items] == _rss_titles(peps_rss)
    assert len(items) == 10
    if iterator != "html":  # <link> is a void element to the HTML parser
        assert all(i["link"].startswith("https://peps.python.org/pep-") for i in items)


FEED_WITH_NS = f"""<?xml version="1.0"?>
<rss version="2.0" xmlns:dc="{DC_NS}" xmlns:atom="{ATOM_NS}"><channel>
<atom:link href="http://a/feed" rel="self"/>
<item><title>one</title><dc:creator>Ann</dc:creator></item>
<item><title>two</title><dc:creator>Bob</dc:creator></item>
</channel></rss>""".encode()


@pytest.mark.parametrize("iterator", ["iternodes", "xml"])
def test_namespaces_are_registered_on_nodes(iterator):
    class DC(XMLFeedSpider):
        name = "dc"
        namespaces = [("dc", DC_NS)]

        def parse_node(self, response, node):
            yield {"creator": node.xpath("dc:creator/text()").extract_first()}

    spider = DC(iterator=iterator)
    out = list(spider.parse(XmlResponse("http://a/feed", body=FEED_WITH_NS)))
    assert out == [{"creator": "Ann"}, {"creator": "Bob"}]

    DC.namespaces = ()
    with pytest.raises(ValueError):  # undefined prefix without the registration
        list(DC(iterator=iterator).parse(XmlResponse("http://a/feed", body=FEED_WITH_NS)))


def test_prefixed_itertag_with_xml_iterator():
    class Links(XMLFeedSpider):
        name = "links"
        iterator = "xml"
        itertag = "atom:link"
        namespaces = [("atom", ATOM_NS)]

        def parse_node(self, response, node):
            return {"href": node.xpath("@href").extract_first()}

    out = list(Links().parse(XmlResponse("http://a/feed", body=FEED_WITH_NS)))
    assert out == [{"href": "http://a/feed"}]


def test_sitemap_nodes_with_registered_default_namespace(sites_dir):
    """Scrapy's documented example: ``itertag = 'n:url'`` with the sitemaps namespace
    registered as ``n`` (the document itself uses a default namespace)."""
    body = (sites_dir / "aegisub.org" / "zh-cn" / "sitemap.xml").read_bytes()

    class Locs(XMLFeedSpider):
        name = "locs"
        iterator = "xml"
        namespaces = [("n", "http://www.sitemaps.org/schemas/sitemap/0.9")]
        itertag = "n:url"

        def parse_node(self, response, node):
            return {"loc": node.xpath("n:loc/text()").extract_first()}

    out = list(Locs().parse(XmlResponse("http://a/zh-cn/sitemap.xml", body=body)))
    root = lxml.etree.fromstring(body)
    expected = [u.findtext("{http://www.sitemaps.org/schemas/sitemap/0.9}loc") for u in root]
    assert len(expected) == 84
    assert [i["loc"] for i in out] == expected


def test_itertag_and_hooks():
    calls = []

    class Hooks(XMLFeedSpider):
        name = "hooks"
        itertag = "title"

        def adapt_response(self, response):
            calls.append("adapt")
            return response.replace(body=response.body.replace(b"two", b"TWO"))

        def parse_node(self, response, node):
            return [node.xpath("text()").extract_first(), None]

        def process_results(self, response, results):
            calls.append("process")
            return [{"t": r, "body_has_TWO": b"TWO" in response.body} for r in results if r]

    out = list(Hooks().parse(XmlResponse("http://a/feed", body=FEED_WITH_NS)))
    assert out == [{"t": "one", "body_has_TWO": True}, {"t": "TWO", "body_has_TWO": True}]
    assert calls == ["adapt", "process", "process"]


def test_parse_item_backward_compatibility():
    class Old(XMLFeedSpider):
        name = "old"

        def parse_item(self, response, node):
            return {"old": node.xpath("title/text()").extract_first()}

    out = list(Old().parse(XmlResponse("http://a/feed", body=FEED_WITH_NS)))
    assert out == [{"old": "one"}, {"old": "two"}]


def test_parse_node_not_defined():
    class Bare(XMLFeedSpider):
        name = "bare"

    with pytest.raises(NotImplementedError, match="Bare.parse_node"):
        list(Bare().parse(XmlResponse("http://a/feed", body=FEED_WITH_NS)))


def test_unsupported_iterator():
    with pytest.raises(NotSupported, match="'sax'"):
        TitlesSpider(iterator="sax").parse(XmlResponse("http://a/feed", body=FEED_WITH_NS))


def test_requests_from_parse_node():
    class Follow(XMLFeedSpider):
        name = "follow"

        def parse_node(self, response, node):
            yield Request(response.urljoin(node.xpath("title/text()").extract_first()))

    out = list(Follow().parse(XmlResponse("http://a/feed", body=FEED_WITH_NS)))
    assert [r.url for r in out] == ["http://a/one", "http://a/two"]


# --- CSVFeedSpider ---------------------------------------------------------------------


class RowsSpider(CSVFeedSpider):
    name = "rows"

    def parse_row(self, response, row):
        return row


@pytest.mark.parametrize(
    "attrs, text, expected",
    [
        ({}, "a,b\n1,2\n", [{"a": "1", "b": "2"}]),
        ({"delimiter": ";"}, "a;b\n1;2\n", [{"a": "1", "b": "2"}]),
        ({"delimiter": "\t", "quotechar": "'"}, "a\tb\n'1\t2'\t3\n", [{"a": "1\t2", "b": "3"}]),
        ({"headers": ["x", "y"]}, "1,2\n3,4\n", [{"x": "1", "y": "2"}, {"x": "3", "y": "4"}]),
        ({"quotechar": "'"}, "a,b\n'x,y',z\n", [{"a": "x,y", "b": "z"}]),
    ],
)
def test_csv_attributes(attrs, text, expected):
    spider = RowsSpider(**attrs)
    response = TextResponse("http://a/f.csv", body=text.encode(), encoding="utf-8")
    assert list(spider.parse(response)) == expected


def test_csv_hooks():
    class Hooks(CSVFeedSpider):
        name = "hooks"

        def adapt_response(self, response):
            return response.replace(body=b"n\n" + response.body)

        def parse_row(self, response, row):
            return [row, Request(f"http://a/{row['n']}")]

        def process_results(self, response, results):
            return [r for r in results if isinstance(r, Request)]

    out = list(Hooks().parse(TextResponse("http://a/f.csv", body=b"1\n2\n", encoding="utf-8")))
    assert [r.url for r in out] == ["http://a/1", "http://a/2"]


def test_parse_row_not_defined():
    class Bare(CSVFeedSpider):
        name = "bare"

    with pytest.raises(NotImplementedError, match="Bare.parse_row"):
        list(Bare().parse(TextResponse("http://a/f.csv", body=b"a\n1\n", encoding="utf-8")))


def test_population_csv_rows(csv_path):
    body = csv_path.read_bytes()
    out = list(RowsSpider().parse(TextResponse("http://a/p.csv", body=body, encoding="utf-8")))
    assert len(out) == 17195
    assert out[-1] == dict(zip(["Country Name", "Country Code", "Year", "Value"],
                               body.decode().strip().rsplit("\n", 1)[1].split(","), strict=True))


# --- real crawls -----------------------------------------------------------------------


def test_crawl_peps_rss(site_server, peps_rss):
    server = site_server("peps.python.org")

    class Peps(TitlesSpider):
        start_urls = [server.url + "/peps.rss"]

    result = run_crawl(Peps, timeout_s=60)
    assert result.finish_reason == "finished"
    assert [i["title"] for i in result.items] == _rss_titles(peps_rss)
    assert result.stats["item_scraped_count"] == 10


@pytest.mark.parametrize("iterator", ["iternodes", "xml"])
def test_crawl_all_aegisub_feeds(site_server, sites_dir, iterator):
    server = site_server("aegisub.org")
    root = sites_dir / "aegisub.org"
    feeds = sorted(p.relative_to(root).as_posix() for p in root.rglob("index.xml"))
    assert len(feeds) == 25
    expected = {}
    for feed in feeds:
        for title in _rss_titles((root / feed).read_bytes()):
            key = (server.url + "/" + feed, title)
            expected[key] = expected.get(key, 0) + 1

    class Feeds(TitlesSpider):
        start_urls = [server.url + "/" + feed for feed in feeds]

    result = run_crawl(Feeds, timeout_s=60, iterator=iterator)
    assert result.finish_reason == "finished"
    got = {}
    for item in result.items:
        key = (item["feed"], item["title"])
        got[key] = got.get(key, 0) + 1
    assert got == expected


def test_crawl_population_csv(site_server, csv_path):
    server = site_server("raw.githubusercontent.com")

    class Population(CSVFeedSpider):
        name = "population"
        start_urls = [server.url + "/datasets/population/main/data/population.csv"]

        def parse_row(self, response, row):
            if row["Country Code"] == "WLD":
                yield {"year": int(row["Year"]), "population": int(row["Value"])}

    result = run_crawl(Population, timeout_s=60)
    assert result.finish_reason == "finished"
    expected = [
        (int(line.split(",")[-2]), int(line.split(",")[-1]))
        for line in csv_path.read_text().splitlines()
        if line.startswith("World,WLD,")
    ]
    assert len(expected) > 60
    assert [(i["year"], i["population"]) for i in result.items] == expected
