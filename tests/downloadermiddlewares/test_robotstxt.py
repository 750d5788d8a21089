"""RobotsTxtMiddleware: parsing the 152 real robots.txt files, hand-checked rules,
the park / fetch once / release flow, failures, and a real site.

``crawler.engine`` is a :class:`RecordingEngine` standing in for the engine actor's
facade (the tests need to see what the middleware schedules, and no crawl runs); the
robots.txt requests it records are fetched from a real local server where the test
needs real bytes.
"""

import logging

import pytest
from protego import Protego

from crawlfw.core.flow.downloadermw import RequestParked
from crawlfw.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from crawlfw.exceptions import DNSLookupError, IgnoreRequest, NotConfigured
from crawlfw.http import Request, Response, TextResponse
from crawlfw.robotstxt import ProtegoRobotParser
from crawlfw.spiders import Spider
from tests.downloadermiddlewares._support import (
    RecordingEngine,
    close_crawler,
    fetch,
    get_crawler,
    open_spider,
)


@pytest.fixture
def setup():
    made = []

    def start(settings=None, spidercls=None):
        crawler = get_crawler({"ROBOTSTXT_OBEY": True, **(settings or {})}, spidercls)
        spider = open_spider(crawler, spidercls.name if spidercls else "test")
        crawler.engine = RecordingEngine()
        made.append((crawler, spider))
        return crawler, spider, RobotsTxtMiddleware.from_crawler(crawler)

    yield start
    for crawler, spider in made:
        close_crawler(crawler, spider)


def robots_files(sites_dir):
    return sorted((sites_dir / "robots-txt").glob("*/robots.txt"))


def test_every_real_robots_txt_parses(sites_dir, caplog):
    mw = RobotsTxtMiddleware.__new__(RobotsTxtMiddleware)  # parse_robotstxt needs no crawler
    files = robots_files(sites_dir)
    assert len(files) == 152
    for path in files:
        parser = mw.parse_robotstxt(path.read_bytes())
        assert isinstance(parser, ProtegoRobotParser) and isinstance(parser.rp, Protego), path
        # every parser answers for a typical URL and user agent
        parser.allowed(f"https://{path.parent.name}/some/page?x=1", "crawlfw/0.1")
    assert "Error parsing robots.txt" not in caplog.text


# (host, user agent, path, allowed) -- read off the files by hand
HAND_CHECKED = [
    ("github.com", "crawlfw", "/humans.txt", True),
    ("github.com", "crawlfw", "/torvalds/linux", False),  # "User-agent: *" + "Disallow: /"
    ("github.com", "Googlebot", "/torvalds/linux", True),
    ("github.com", "Googlebot", "/torvalds/linux/raw/master/README", False),  # /*/*/raw/
    ("github.com", "Googlebot", "/torvalds/linux.git", False),  # /*.git$
    ("www.google.com", "crawlfw", "/search", False),
    ("www.google.com", "crawlfw", "/search/about", True),  # longer Allow wins
    ("www.google.com", "crawlfw", "/?hl=en", True),
    ("www.google.com", "crawlfw", "/?q=robots", False),
    ("en.wikipedia.org", "crawlfw", "/wiki/Python_(programming_language)", True),
    ("en.wikipedia.org", "crawlfw", "/wiki/Special:Random", False),
    ("en.wikipedia.org", "crawlfw", "/w/index.php?title=X", False),
    ("en.wikipedia.org", "crawlfw", "/w/load.php?modules=site", True),
    # BOM + CRLF file: the first group must still be read
    ("www.amnesty.org", "crawlfw", "/facebook/share", False),
    ("www.amnesty.org", "crawlfw", "/en/latest/news/", True),
    ("www.python.org", "crawlfw", "/webstats/2019", False),
    ("www.python.org", "crawlfw", "/downloads/", True),
    ("www.python.org", "HTTrack/3.0", "/downloads/", False),
    ("mlb.mlb.com", "truveo", "/index.jsp", False),
    # an HTML page served as robots.txt has no rules
    ("archive.codeplex.com", "crawlfw", "/anything", True),
]


@pytest.mark.parametrize("host, agent, path, allowed", HAND_CHECKED)
def test_hand_checked_rules(sites_dir, host, agent, path, allowed):
    mw = RobotsTxtMiddleware.__new__(RobotsTxtMiddleware)
    parser = mw.parse_robotstxt((sites_dir / "robots-txt" / host / "robots.txt").read_bytes())
    assert parser.allowed(f"https://{host}{path}", agent) is allowed


def robots_response(robots_request, body, status=200):
    return TextResponse(
        robots_request.url, status=status, body=body, encoding="utf-8", request=robots_request
    )


def test_park_fetch_once_release(setup):
    crawler, spider, mw = setup()
    first = Request("http://example.com/private/a")
    second = Request("http://example.com/public")
    other_host = Request("https://other.org/")
    for request in (first, second, other_host):
        with pytest.raises(RequestParked):
            mw.process_request(request, spider)
    # one robots.txt request per host
    robots = crawler.engine.crawled
    assert [r.url for r in robots] == [
        "http://example.com/robots.txt",
        "https://other.org/robots.txt",
    ]
    assert all(
        r.priority == 1000 and r.dont_filter and r.meta["dont_obey_robotstxt"] for r in robots
    )
    assert crawler.stats.get_value("robotstxt/request_count") == 2
    # the robots request itself is not parked
    assert mw.process_request(robots[0], spider) is None
    # robots.txt arrives: the parked requests are resumed in the engine, decided (the
    # same objects: never scheduled again)
    crawler.engine.crawled = []
    assert (
        list(robots[0].callback(robots_response(robots[0], b"User-agent: *\nDisallow: /private")))
        == []
    )
    assert crawler.engine.crawled == []
    resumed = crawler.engine.resumed
    assert [r for r, _ in resumed] == [first, second]
    assert isinstance(resumed[0][1], IgnoreRequest)
    assert str(resumed[0][1]) == "Forbidden by robots.txt"
    assert resumed[1][1] is None
    assert crawler.stats.get_value("robotstxt/forbidden") == 1
    assert crawler.stats.get_value("robotstxt/response_count") == 1
    assert crawler.stats.get_value("robotstxt/response_status_count/200") == 1
    # now new requests are checked at once
    with pytest.raises(IgnoreRequest, match="Forbidden by robots.txt"):
        mw.process_request(Request(first.url), spider)
    assert mw.process_request(Request(second.url), spider) is None
    assert crawler.stats.get_value("robotstxt/forbidden") == 2
    # the other host is still pending
    with pytest.raises(RequestParked):
        mw.process_request(Request("https://other.org/x"), spider)


def _release_all(crawler, spider, mw, body=b"User-agent: *\nDisallow: /private"):
    robots = [r for r in crawler.engine.crawled if r.meta.get("dont_obey_robotstxt")]
    crawler.engine.crawled = []
    for r in robots:
        r.callback(robots_response(r, body))
    return robots


def test_parser_cache_is_an_lru(setup):
    crawler, spider, mw = setup({"ROBOTSTXT_CACHE_SIZE": 2})
    a, b, c = (f"http://{h}.example/" for h in "abc")
    for url in (a, b):
        with pytest.raises(RequestParked):
            mw.process_request(Request(url), spider)
    _release_all(crawler, spider, mw)
    assert mw.process_request(Request(a + "x"), spider) is None  # a is now most recent
    with pytest.raises(RequestParked):
        mw.process_request(Request(c), spider)
    _release_all(crawler, spider, mw)
    assert list(mw._parsers) == ["a.example", "c.example"]  # b, least recent, evicted
    assert mw.process_request(Request(a + "y"), spider) is None  # a kept: no refetch
    # an evicted host parks again and its robots.txt is fetched again; still obeyed
    with pytest.raises(RequestParked):
        mw.process_request(Request(b + "private/1"), spider)
    with pytest.raises(RequestParked):
        mw.process_request(Request(b + "public"), spider)
    crawler.engine.resumed = []
    robots = _release_all(crawler, spider, mw)
    assert [r.url for r in robots] == ["http://b.example/robots.txt"]
    assert crawler.stats.get_value("robotstxt/request_count") == 4
    resumed = crawler.engine.resumed
    assert [r.url for r, _ in resumed] == [b + "private/1", b + "public"]
    assert isinstance(resumed[0][1], IgnoreRequest) and resumed[1][1] is None
    assert len(mw._parsers) == 2


def test_parked_requests_survive_eviction(setup):
    # Size 1: while x's robots.txt is in flight, y's arrives and fills the cache; x's
    # parked requests are released when x's arrives, whatever was evicted meanwhile.
    crawler, spider, mw = setup({"ROBOTSTXT_CACHE_SIZE": 1})
    for url in ("http://x.example/1", "http://y.example/1", "http://x.example/2"):
        with pytest.raises(RequestParked):
            mw.process_request(Request(url), spider)
    rx, ry = crawler.engine.crawled
    crawler.engine.crawled = []
    ry.callback(robots_response(ry, b""))
    rx.callback(robots_response(rx, b""))
    assert [(r.url, error) for r, error in crawler.engine.resumed] == [
        ("http://y.example/1", None), ("http://x.example/1", None), ("http://x.example/2", None)]
    assert list(mw._parsers) == ["x.example"]


def test_parser_cache_unbounded_when_zero(setup):
    crawler, spider, mw = setup({"ROBOTSTXT_CACHE_SIZE": 0})
    for i in range(50):
        with pytest.raises(RequestParked):
            mw.process_request(Request(f"http://h{i}.example/"), spider)
    _release_all(crawler, spider, mw)
    assert len(mw._parsers) == 50


def test_forbidden_is_logged(setup, caplog):
    crawler, spider, mw = setup()
    with pytest.raises(RequestParked):
        mw.process_request(Request("http://example.com/x"), spider)
    robots = crawler.engine.crawled[0]
    robots.callback(robots_response(robots, b"User-agent: *\nDisallow: /"))
    caplog.set_level(logging.DEBUG, logger="crawlfw.downloadermiddlewares.robotstxt")
    with pytest.raises(IgnoreRequest):
        mw.process_request(Request("http://example.com/y"), spider)
    assert caplog.records[-1].getMessage() == "Forbidden by robots.txt: <GET http://example.com/y>"


@pytest.mark.parametrize("status", [404, 403, 500, 503])
def test_error_status_allows_all(setup, status):
    crawler, spider, mw = setup()
    with pytest.raises(RequestParked):
        mw.process_request(Request("http://example.com/x"), spider)
    robots = crawler.engine.crawled[0]
    # 4xx/5xx must reach the callback instead of HttpErrorMiddleware's filter
    assert status in robots.meta["handle_httpstatus_list"]
    assert 301 not in robots.meta["handle_httpstatus_list"]  # redirects are followed
    robots.callback(robots_response(robots, b"User-agent: *\nDisallow: /", status=status))
    assert mw.process_request(Request("http://example.com/x"), spider) is None
    assert crawler.stats.get_value(f"robotstxt/response_status_count/{status}") == 1


def test_download_error_allows_all(setup, caplog):
    crawler, spider, mw = setup()
    with pytest.raises(RequestParked):
        mw.process_request(Request("http://example.com/x"), spider)
    robots = crawler.engine.crawled[0]
    robots.errback(DNSLookupError("no such host", url=robots.url))
    assert [(r.url, error) for r, error in crawler.engine.resumed] == [
        ("http://example.com/x", None)]
    assert mw.process_request(Request("http://example.com/y"), spider) is None
    assert "Error downloading" in caplog.text and "no such host" in caplog.text
    assert (
        crawler.stats.get_value("robotstxt/exception_count/crawlfw.exceptions.DNSLookupError") == 1
    )


def test_ignored_robots_request_is_not_an_error(setup, caplog):
    crawler, spider, mw = setup()
    with pytest.raises(RequestParked):
        mw.process_request(Request("http://example.com/x"), spider)

    class FailureLike:  # errbacks may receive a failure object with .value
        value = IgnoreRequest("max redirections reached")

    crawler.engine.crawled[0].errback(FailureLike())
    assert "Error downloading" not in caplog.text
    assert len(crawler.engine.resumed) == 1


@pytest.mark.parametrize(
    "request_",
    [
        Request("http://example.com/x", meta={"dont_obey_robotstxt": True}),
        Request("file:///etc/hosts"),
        Request("data:text/plain,hello"),
    ],
)
def test_not_checked(setup, request_):
    crawler, spider, mw = setup()
    assert mw.process_request(request_, spider) is None
    assert crawler.engine.crawled == []


class UASpider(Spider):
    name = "ua"
    user_agent = "SpiderBot/1.0"


RULES = b"User-agent: settingsbot\nDisallow: /s\n\nUser-agent: headerbot\nDisallow: /h\n\nUser-agent: spiderbot\nDisallow: /p\n\nUser-agent: robotsbot\nDisallow: /r\n"


@pytest.mark.parametrize(
    "settings, spidercls, headers, forbidden",
    [
        ({"USER_AGENT": "SettingsBot/1"}, None, {}, "/s"),
        ({"USER_AGENT": "SettingsBot/1"}, UASpider, {}, "/p"),
        ({"USER_AGENT": "SettingsBot/1"}, UASpider, {"User-Agent": "HeaderBot/2"}, "/h"),
        ({"ROBOTSTXT_USER_AGENT": "RobotsBot"}, UASpider, {"User-Agent": "HeaderBot/2"}, "/r"),
    ],
)
def test_user_agent_choice(setup, settings, spidercls, headers, forbidden):
    crawler, spider, mw = setup(settings, spidercls)
    with pytest.raises(RequestParked):
        mw.process_request(Request("http://example.com/"), spider)
    robots = crawler.engine.crawled[0]
    robots.callback(robots_response(robots, RULES))
    for path in ("/s", "/h", "/p", "/r"):
        request = Request("http://example.com" + path, headers=headers)
        if path == forbidden:
            with pytest.raises(IgnoreRequest):
                mw.process_request(request, spider)
        else:
            assert mw.process_request(request, spider) is None, path


def test_disabled_by_default():
    crawler = get_crawler()
    try:
        with pytest.raises(NotConfigured):
            RobotsTxtMiddleware.from_crawler(crawler)
    finally:
        close_crawler(crawler)


def test_real_site(setup, site_server):
    """aegisub.org's robots.txt fetched from a real server decides for parked requests."""
    server = site_server("aegisub.org")
    crawler, spider, mw = setup()
    urls = [server.url + "/docs/3.2/Main_Page/", server.url + "/docs/latest/Main_Page/"]
    for url in urls:
        with pytest.raises(RequestParked):
            mw.process_request(Request(url), spider)
    robots = crawler.engine.crawled.pop(0)
    response = fetch(robots)
    assert isinstance(response, Response) and response.status == 200
    robots.callback(response)
    decisions = [(request.url, error is None) for request, error in crawler.engine.resumed]
    assert decisions == [(urls[0], False), (urls[1], True)]  # "Disallow: /docs/3.2/"


def test_real_missing_robots_txt(setup, site_server):
    """quotes.toscrape.com has no robots.txt: the server's 404 allows everything."""
    server = site_server("quotes.toscrape.com")
    crawler, spider, mw = setup()
    with pytest.raises(RequestParked):
        mw.process_request(Request(server.url + "/page/2/"), spider)
    robots = crawler.engine.crawled.pop(0)
    robots.callback(fetch(robots))
    assert crawler.stats.get_value("robotstxt/response_status_count/404") == 1
    [(request, error)] = crawler.engine.resumed
    assert request.url == server.url + "/page/2/" and error is None


# -- Scrapy 2's interface: ROBOTSTXT_PARSER, robots_parsed, robot_parser,
#    process_request_2 (issue 29)

def test_robotstxt_parser_setting_is_honoured(setup):
    body = b"User-agent: *\nDisallow: /*.pdf$\n"
    for path, allowed in (("crawlfw.robotstxt.PythonRobotParser", True),
                          ("scrapy.robotstxt.ProtegoRobotParser", False)):
        crawler, spider, mw = setup({"ROBOTSTXT_PARSER": path})
        with pytest.raises(RequestParked):
            mw.process_request(Request("http://example.com/a.pdf"), spider)
        robots = crawler.engine.crawled[0]
        robots.callback(robots_response(robots, body))
        assert (crawler.engine.resumed[0][1] is None) is allowed, path


def test_robotstxt_parser_without_its_library_fails_at_start(setup):
    try:
        import robotexclusionrulesparser  # noqa: F401
        pytest.skip("robotexclusionrulesparser is installed")
    except ImportError:
        pass
    with pytest.raises(ImportError, match="RerpRobotParser needs the robotexclusionrulesparser"):
        setup({"ROBOTSTXT_PARSER": "crawlfw.robotstxt.RerpRobotParser"})


def test_robots_parsed_signal(setup):
    from crawlfw import signals

    crawler, spider, mw = setup()
    got = []
    crawler.signals.connect(lambda robotparser, request: got.append((robotparser, request)),
                            signal=signals.robots_parsed, weak=False)
    first = Request("http://example.com/a")
    for request in (first, Request("http://example.com/b")):
        with pytest.raises(RequestParked):
            mw.process_request(request, spider)
    robots = crawler.engine.crawled[0]
    robots.callback(robots_response(robots, b"User-agent: *\nDisallow: /b"))
    assert len(got) == 1 and got[0][1] is first
    assert got[0][0].allowed("http://example.com/a", "x") and not got[0][0].allowed(
        "http://example.com/b", "x")
    # a 404 robots.txt is an empty file: parsed, signalled, everything allowed
    with pytest.raises(RequestParked):
        mw.process_request(Request("http://other.example/b"), spider)
    robots = crawler.engine.crawled[1]
    robots.callback(robots_response(robots, b"Disallow: /", status=404))
    assert len(got) == 2 and got[1][0].allowed("http://other.example/b", "x")


def test_robot_parser_and_process_request_2(setup):
    import asyncio

    crawler, spider, mw = setup()
    request = Request("http://example.com/private/1")
    with pytest.raises(RequestParked):  # unknown host: parked, robots.txt fetched
        asyncio.run(mw.robot_parser(request))
    robots = crawler.engine.crawled[0]
    robots.callback(robots_response(robots, b"User-agent: *\nDisallow: /private"))
    assert isinstance(crawler.engine.resumed[0][1], IgnoreRequest)
    rp = asyncio.run(mw.robot_parser(Request("http://example.com/x")))
    assert rp.allowed("http://example.com/x", "bot")
    mw.process_request_2(rp, Request("http://example.com/public"))
    mw.process_request_2(None, Request("http://example.com/private/2"))
    with pytest.raises(IgnoreRequest, match="Forbidden by robots.txt"):
        mw.process_request_2(rp, Request("http://example.com/private/2"))


class ScrapyStyleRobots(RobotsTxtMiddleware):
    """A subclass written for Scrapy 2.13+: decided in a decision of its own."""

    async def process_request(self, request, spider=None):
        if request.meta.get("dont_obey_robotstxt"):
            return None
        rp = await self.robot_parser(request)
        self.process_request_2(rp, request)
        return None

    def process_request_2(self, rp, request):
        if request.url.endswith("/always"):
            return None  # this project's exception to robots.txt
        return super().process_request_2(rp, request)


@pytest.mark.slow
def test_scrapy_style_subclass_crawls():
    from tests.downloadermiddlewares._support import ScriptedServer
    from tests.support.crawl import run_crawl

    page = (200, [("Content-Type", "text/html")], b"<html></html>")
    robots = (200, [("Content-Type", "text/plain")], b"User-agent: *\nDisallow: /no\n")

    class Pages(Spider):
        name = "robots_subclass"
        base = ""

        def start_requests(self):
            for path in ("/yes", "/no/x", "/no/always"):
                yield Request(self.base + path)

        def parse(self, response):
            yield {"url": response.url}

    with ScriptedServer({"/robots.txt": robots, "/yes": page, "/no/x": page,
                         "/no/always": page}) as server:
        result = run_crawl(Pages, {
            "ROBOTSTXT_OBEY": True,
            "DOWNLOADER_MIDDLEWARES": {
                "crawlfw.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
                f"{__name__}.ScrapyStyleRobots": 100}}, base=server.url)
    assert result.finish_reason == "finished"
    assert sorted(i["url"][len(server.url):] for i in result.items) == ["/no/always", "/yes"]
    assert result.stats["robotstxt/forbidden"] == 1
    assert [r["path"] for r in server.received].count("/robots.txt") == 1
