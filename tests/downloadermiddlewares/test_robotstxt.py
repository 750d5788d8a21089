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
        assert isinstance(parser, Protego), path
        # every parser answers for a typical URL and user agent
        parser.can_fetch(f"https://{path.parent.name}/some/page?x=1", "crawlfw/0.1")
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
    assert parser.can_fetch(f"https://{host}{path}", agent) is allowed


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
    # robots.txt arrives: the parked requests come back, with dont_filter
    crawler.engine.crawled = []
    assert (
        list(robots[0].callback(robots_response(robots[0], b"User-agent: *\nDisallow: /private")))
        == []
    )
    reissued = crawler.engine.crawled
    assert [r.url for r in reissued] == [first.url, second.url]
    assert all(r.dont_filter for r in reissued)
    assert crawler.stats.get_value("robotstxt/response_count") == 1
    assert crawler.stats.get_value("robotstxt/response_status_count/200") == 1
    # now they are checked at once
    with pytest.raises(IgnoreRequest, match="Forbidden by robots.txt"):
        mw.process_request(reissued[0], spider)
    assert mw.process_request(reissued[1], spider) is None
    assert crawler.stats.get_value("robotstxt/forbidden") == 1
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
    robots = _release_all(crawler, spider, mw)
    assert [r.url for r in robots] == ["http://b.example/robots.txt"]
    assert crawler.stats.get_value("robotstxt/request_count") == 4
    reissued = crawler.engine.crawled
    assert [r.url for r in reissued] == [b + "private/1", b + "public"]
    with pytest.raises(IgnoreRequest):
        mw.process_request(reissued[0], spider)
    assert mw.process_request(reissued[1], spider) is None
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
    assert [r.url for r in crawler.engine.crawled] == [
        "http://y.example/1", "http://x.example/1", "http://x.example/2"]
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
    assert [r.url for r in crawler.engine.crawled[1:]] == ["http://example.com/x"]
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
    assert len(crawler.engine.crawled) == 2


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
    decisions = []
    for request in crawler.engine.crawled:
        try:
            decisions.append(mw.process_request(request, spider) is None)
        except IgnoreRequest:
            decisions.append(False)
    assert decisions == [False, True]  # "Disallow: /docs/3.2/"


def test_real_missing_robots_txt(setup, site_server):
    """quotes.toscrape.com has no robots.txt: the server's 404 allows everything."""
    server = site_server("quotes.toscrape.com")
    crawler, spider, mw = setup()
    with pytest.raises(RequestParked):
        mw.process_request(Request(server.url + "/page/2/"), spider)
    robots = crawler.engine.crawled.pop(0)
    robots.callback(fetch(robots))
    assert crawler.stats.get_value("robotstxt/response_status_count/404") == 1
    assert mw.process_request(crawler.engine.crawled[0], spider) is None
