"""CrawlSpider and Rule: rule semantics on hand-made pages and a real aegisub.org page,
and real crawls of the quotes.toscrape.com copy."""

import lxml.html
import pytest

from crawlfw.http import HtmlResponse, Request, TextResponse, XmlResponse
from crawlfw.linkextractors import LinkExtractor
from crawlfw.spiders import CrawlSpider, Rule
from crawlfw.utils.test import get_crawler
from tests.support.crawl import run_crawl

PAGE = b"""<html><head><title>t</title></head><body>
<a href="/item/1">Item one</a>
<a href="/item/2">Item two</a>
<a href="/list?page=2">Next</a>
<a href="/about">About</a>
<a href="/item/1">Item one</a>
<a href="http://other.example/x">elsewhere</a>
</body></html>"""

URL = "http://www.example.com/"


def _response(body=PAGE, url=URL, cls=HtmlResponse, meta=None):
    return cls(url, body=body, request=Request(url, meta=meta or {}), encoding="utf-8")


def _urls(output):
    return [r.url for r in output if isinstance(r, Request)]


# --- Rule ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "callback, follow, expected",
    [
        (None, None, True),
        ("parse_item", None, False),
        (lambda r: None, None, False),
        (None, False, False),
        ("parse_item", True, True),
        ("", None, True),
    ],
)
def test_rule_follow_default(callback, follow, expected):
    assert Rule(LinkExtractor(), callback=callback, follow=follow).follow is expected


def test_rule_defaults():
    rule = Rule(LinkExtractor())
    assert rule.callback is None
    assert rule.cb_kwargs == {}
    assert rule.process_links is None
    assert rule.process_request(Request(URL)).url == URL  # identity
    assert rule.errback is None


def test_rule_default_link_extractor():
    spider = type("D", (CrawlSpider,), {"name": "d", "rules": (Rule(),)})()
    assert len(_urls(spider.parse(_response()))) == 5


def test_rule_rejects_non_extractor():
    with pytest.raises(TypeError, match="extract_links"):
        Rule("/item/")


# --- CrawlSpider -----------------------------------------------------------------------


class ItemsSpider(CrawlSpider):
    name = "items"
    rules = (
        Rule(LinkExtractor(allow=r"/item/"), callback="parse_item", cb_kwargs={"kind": "item"}),
        Rule(LinkExtractor(allow=r"/list"), follow=True),
        # overlaps both rules above: those links are left to them
        Rule(LinkExtractor(allow_domains=["www.example.com"]), callback="parse_other"),
    )

    def parse_item(self, response, kind):
        return {"url": response.url, "kind": kind}

    def parse_other(self, response):
        yield {"other": response.url}


def test_parse_start_url_then_rules_in_order():
    spider = ItemsSpider()
    out = list(spider.parse(_response()))
    # parse_start_url returns nothing by default; each link handled by its first rule
    # (the seen set holds Link objects, so the repeated "Item one" is not requested twice)
    assert _urls(out) == [
        "http://www.example.com/item/1",
        "http://www.example.com/item/2",
        "http://www.example.com/list?page=2",
        "http://www.example.com/about",
    ]
    assert [r.meta["rule"] for r in out] == [0, 0, 1, 2]
    assert [r.meta["link_text"] for r in out] == ["Item one", "Item two", "Next", "About"]
    assert all(r.callback == spider._response_downloaded for r in out)
    assert all(not r.dont_filter for r in out)


@pytest.mark.parametrize(
    "url, rule, expected",
    [
        # rule 0: callback with cb_kwargs, no follow
        ("http://www.example.com/item/1", 0, [{"url": "http://www.example.com/item/1", "kind": "item"}]),
        # rule 1: no callback, follows
        ("http://www.example.com/list?page=2", 1, [
            "http://www.example.com/item/1", "http://www.example.com/item/2",
            "http://www.example.com/list?page=2", "http://www.example.com/about"]),
        # rule 2: a generator callback, no follow
        ("http://www.example.com/about", 2, [{"other": "http://www.example.com/about"}]),
    ],
)
def test_response_downloaded_dispatches_on_meta_rule(url, rule, expected):
    spider = ItemsSpider()
    out = list(spider._response_downloaded(_response(url=url, meta={"rule": rule})))
    assert [x.url if isinstance(x, Request) else x for x in out] == expected


def test_callback_output_comes_before_followed_links():
    class Both(CrawlSpider):
        name = "both"
        rules = (Rule(LinkExtractor(), callback="cb", follow=True),)

        def cb(self, response):
            return [{"n": 1}, Request("http://www.example.com/extra")]

    out = list(Both()._response_downloaded(_response(meta={"rule": 0})))
    assert out[0] == {"n": 1}
    assert out[1].url == "http://www.example.com/extra"
    assert len(out) == 2 + 5  # 5 distinct links (the cross-site one too: no domain filter)


@pytest.mark.parametrize("cls", [TextResponse, XmlResponse])
def test_no_links_followed_from_non_html(cls):
    spider = ItemsSpider()
    assert list(spider.parse(_response(cls=cls))) == []


def test_process_links_by_name_and_callable():
    class P(CrawlSpider):
        name = "p"
        rules = (
            Rule(LinkExtractor(allow=r"/item/"), process_links="only_first"),
            Rule(LinkExtractor(allow=r"/about"),
                 process_links=lambda links: [lk for lk in links if lk.text != "About"]),
        )

        def only_first(self, links):
            return links[:1]

    out = list(P().parse(_response()))
    assert _urls(out) == ["http://www.example.com/item/1"]


def test_process_request_can_change_or_drop():
    def tag_or_drop(request):
        if request.url.endswith("/about"):
            return None
        return request.replace(priority=7, meta=dict(request.meta, tagged=True))

    class P(CrawlSpider):
        name = "p"
        rules = (Rule(LinkExtractor(deny=r"other\.example"), process_request=tag_or_drop),)

    out = list(P().parse(_response()))
    assert _urls(out) == [
        "http://www.example.com/item/1",
        "http://www.example.com/item/2",
        "http://www.example.com/list?page=2",
    ]
    assert all(r.priority == 7 and r.meta["tagged"] and r.meta["rule"] == 0 for r in out)


def test_process_request_with_response_argument():
    seen = []

    class P(CrawlSpider):
        name = "p"
        rules = (Rule(LinkExtractor(allow=r"/item/2"), process_request="pr"),)

        def pr(self, request, response):
            seen.append((request.url, response.url))
            return request

    list(P().parse(_response()))
    assert seen == [("http://www.example.com/item/2", URL)]


def test_rule_errback_by_name():
    class P(CrawlSpider):
        name = "p"
        rules = (Rule(LinkExtractor(allow=r"/item/1"), errback="on_error"),)

        def on_error(self, failure):
            return None

    spider = P()
    (request,) = list(spider.parse(_response()))
    assert request.errback == spider.on_error


@pytest.mark.parametrize("attr", ["callback", "process_links", "process_request", "errback"])
def test_missing_method_names_are_errors(attr):
    class P(CrawlSpider):
        name = "p"
        rules = (Rule(LinkExtractor(), **{attr: "nope"}),)

    with pytest.raises(ValueError, match=f"Rule {attr} 'nope' of spider 'p'"):
        P()


def test_rules_are_copied_per_spider():
    spider = ItemsSpider()
    assert ItemsSpider.rules[0].callback == "parse_item"
    assert spider._rules[0].callback == spider.parse_item
    assert spider._rules[0] is not ItemsSpider.rules[0]


def test_process_results_and_parse_start_url():
    class P(CrawlSpider):
        name = "p"
        rules = (Rule(LinkExtractor(allow=r"/item/"), callback="cb"),)

        def parse_start_url(self, response):
            return [{"start": response.url}]

        def cb(self, response):
            return [{"n": 1}, {"n": 2}]

        def process_results(self, response, results):
            return [dict(r, seen=True) for r in results if r.get("n") != 2]

    spider = P()
    out = list(spider.parse(_response()))
    assert out[0] == {"start": URL, "seen": True}
    assert len(_urls(out)) == 2
    out = list(spider._response_downloaded(_response(meta={"rule": 0})))
    assert out == [{"n": 1, "seen": True}]


@pytest.mark.parametrize("setting, expected", [(None, 4), (True, 4), (False, 0)])
def test_crawlspider_follow_links_setting(setting, expected):
    settings = {} if setting is None else {"CRAWLSPIDER_FOLLOW_LINKS": setting}
    crawler = get_crawler(ItemsSpider, settings)
    spider = ItemsSpider.from_crawler(crawler)
    assert len(_urls(spider.parse(_response()))) == expected


def test_real_page_links_match_the_link_extractor(sites_dir):
    """On aegisub.org's home page the spider requests exactly the LinkExtractor's links
    (an independent lxml reading gives the same same-site <a> targets)."""
    body = (sites_dir / "aegisub.org" / "index.html").read_bytes()
    url = "http://127.0.0.1:8000/"

    class A(CrawlSpider):
        name = "a"
        rules = (Rule(LinkExtractor(allow_domains=["127.0.0.1:8000"])),)

    response = HtmlResponse(url, body=body, request=Request(url),
                            headers={"Content-Type": "text/html; charset=utf-8"})
    urls = _urls(A().parse(response))
    doc = lxml.html.fromstring(body)
    hrefs = [h.strip() for h in doc.xpath("//a/@href | //area/@href")]
    expected = []
    for h in hrefs:
        absolute = response.urljoin(h)
        if absolute.startswith(url) and absolute not in expected:
            if not absolute.split("?")[0].lower().endswith((".png", ".jpg", ".gif", ".svg")):
                expected.append(absolute)
    assert urls == expected
    assert len(urls) == 10


# --- real crawls -----------------------------------------------------------------------


class QuotesCrawl(CrawlSpider):
    name = "quotes_crawl"
    rules = (
        # pagination (not /tag/<tag>/page/N/): follow, no callback
        Rule(LinkExtractor(allow=r"://[^/]+/page/\d+/$")),
        Rule(LinkExtractor(allow=r"/author/"), callback="parse_author"),
    )

    def __init__(self, base_url, **kw):
        self.start_urls = [base_url + "/"]
        super().__init__(**kw)

    def parse_start_url(self, response):
        return [{"start": response.url}]

    def parse_author(self, response):
        yield {
            "author": response.css("h3.author-title::text").extract_first().strip(),
            "url": response.url,
            "link_text": response.meta["link_text"],
        }


@pytest.fixture(scope="module")
def quotes(site_server, sites_dir):
    return site_server("quotes.toscrape.com"), sites_dir / "quotes.toscrape.com"


def _expected_author_hrefs(site):
    hrefs = set()
    for n in range(1, 11):
        doc = lxml.html.parse(str(site / "page" / str(n) / "index.html")).getroot()
        hrefs.update(doc.xpath('//div[@class="quote"]//a[contains(@href, "/author/")]/@href'))
    return hrefs


def test_crawl_quotes_by_rules(quotes):
    server, site = quotes
    result = run_crawl(QuotesCrawl, base_url=server.url, timeout_s=120)
    assert result.finish_reason == "finished"
    authors = [i for i in result.items if "author" in i]
    expected = {f"{server.url}{h}/" for h in _expected_author_hrefs(site)}  # after the 301
    assert len(expected) == 50
    assert sorted(a["url"] for a in authors) == sorted(expected)
    assert all(a["link_text"] == "(about)" for a in authors)
    assert [i for i in result.items if "start" in i] == [{"start": server.url + "/"}]
    # "/", /page/1/ (page 2's "Previous") to /page/10/, the authors
    assert result.stats["response_received_count"] == 1 + 10 + 50
    assert result.stats["downloader/response_status_count/301"] == 50  # slashless authors


def test_crawl_quotes_without_following(quotes):
    server, _ = quotes
    result = run_crawl(QuotesCrawl, settings={"CRAWLSPIDER_FOLLOW_LINKS": False},
                       base_url=server.url, timeout_s=60)
    assert result.items == [{"start": server.url + "/"}]
    assert result.stats["response_received_count"] == 1
