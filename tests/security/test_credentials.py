"""Issue 22, rows 4, 5, 9 and 10: credentials stay with their origin. Real crawls
(``crawlfw runspider``) against scripted HTTP servers on 127.0.0.1 ("another host" is the
same loopback server reached as ``localhost``; "another origin" also means another
port), each asserting which headers every server saw and what reached the feed."""

import pytest

from tests.downloadermiddlewares._support import ScriptedServer, _ScriptedHandler
from tests.security._support import crawl, html, redirect

pytestmark = pytest.mark.slow


def _headers(server, path):
    return [r["headers"] for r in server.received if r["path"].split("?")[0] == path]


def test_request_cookies_stay_with_their_host(tmp_path):
    spider = '''
class Spider(StatsSpider):
    name = "cookies"

    def start_requests(self):
        yield crawlfw.Request(self.a + "/start", cookies={"session": "s3cret"})

    def parse(self, response):
        yield {"url": response.url}
        if response.url.endswith("/landing"):
            yield crawlfw.Request(self.b + "/later", callback=self.parse_other)
            yield crawlfw.Request(self.a + "/again", callback=self.parse_other)

    def parse_other(self, response):
        yield {"url": response.url}
'''
    with ScriptedServer({"/landing": html("b"), "/later": html("b later")}) as b:
        b_url = b.url.replace("127.0.0.1", "localhost")
        with ScriptedServer({"/start": redirect(b_url + "/landing"), "/again": html("a")}) as a:
            run = crawl(tmp_path, spider, "-a", f"a={a.url}", "-a", f"b={b_url}")
    assert sorted(i["url"] for i in run.items) == sorted(
        [b_url + "/landing", b_url + "/later", a.url + "/again"])
    # the other host never sees the cookie, not on the redirect, not later from its jar
    assert [h.get("Cookie") for h in _headers(b, "/landing") + _headers(b, "/later")] == [None, None]
    # the request's own host keeps it
    assert _headers(a, "/start")[0]["Cookie"] == "session=s3cret"
    assert _headers(a, "/again")[0]["Cookie"] == "session=s3cret"


def test_http_auth_without_domain_goes_to_the_first_host_only(tmp_path):
    spider = '''
class Spider(StatsSpider):
    name = "auth"
    http_user = "alice"
    http_pass = "wonderland"

    def start_requests(self):
        yield crawlfw.Request(self.a + "/start")

    def parse(self, response):
        yield {"url": response.url}
'''
    with ScriptedServer({"/landing": html("b")}) as b:
        b_url = b.url.replace("127.0.0.1", "localhost")
        with ScriptedServer({"/start": redirect(b_url + "/landing")}) as a:
            run = crawl(tmp_path, spider, "-a", f"a={a.url}")
    assert [i["url"] for i in run.items] == [b_url + "/landing"]
    assert _headers(a, "/start")[0]["Authorization"] == "Basic YWxpY2U6d29uZGVybGFuZA=="
    assert _headers(b, "/landing")[0].get("Authorization") is None
    lines = run.warnings("http_auth_domain is not")
    assert len(lines) == 1 and "'127.0.0.1'" in lines[0], run.log[-3000:]


def test_authorization_header_dropped_for_another_port(tmp_path):
    spider = '''
class Spider(StatsSpider):
    name = "authz"

    def start_requests(self):
        yield crawlfw.Request(self.a + "/start", headers={"Authorization": "Bearer tok3n"})
        yield crawlfw.Request(self.a + "/form", method="POST", body="user=alice&pw=secret",
                              headers={"Content-Type": "application/x-www-form-urlencoded",
                                       "Content-Language": "en"})

    def parse(self, response):
        yield {"url": response.url}
'''
    with ScriptedServer({"/landing": html("b"), "/posted": html("posted")}) as b:
        with ScriptedServer({"/start": redirect(b.url + "/landing"),
                             "/form": redirect(b.url + "/posted", 301)}) as a:
            run = crawl(tmp_path, spider, "-a", f"a={a.url}")
    assert sorted(i["url"] for i in run.items) == [b.url + "/landing", b.url + "/posted"]
    assert _headers(a, "/start")[0]["Authorization"] == "Bearer tok3n"
    assert _headers(b, "/landing")[0].get("Authorization") is None
    # a 301 of a POST becomes a GET without body nor Content-* headers (Fetch standard)
    posted = [r for r in b.received if r["path"] == "/posted"]
    assert [(r["method"], r["body"]) for r in posted] == [("GET", b"")]
    assert posted[0]["headers"].get("Content-Type") is None
    assert posted[0]["headers"].get("Content-Language") is None


ROTATE = '''
class RotateProxy:
    """On a retry, point the request to another proxy (or none): a common pattern."""

    target = None

    @classmethod
    def from_crawler(cls, crawler):
        o = cls()
        o.target = crawler.settings.get("ROTATE_TO") or None
        return o

    def process_request(self, request, spider):
        if request.meta.get("retry_times"):
            if self.target:
                request.meta["proxy"] = self.target
            else:
                request.meta.pop("proxy", None)
'''

PROXY_SPIDER = '''
class Spider(StatsSpider):
    name = "proxied"
    custom_settings = {"DOWNLOADER_MIDDLEWARES": {"rotate.RotateProxy": 740}}

    def start_requests(self):
        yield crawlfw.Request(self.origin + "/page", meta={"proxy": self.proxy})

    def parse(self, response):
        yield {"url": response.url, "body": response.text}
'''


def _proxy_auth_run(tmp_path, rotate_to):
    (tmp_path / "rotate.py").write_text(ROTATE)
    with ScriptedServer({"/page": html("direct")}) as origin:
        page = origin.url + "/page"
        with ScriptedServer({page: html("via proxy 2")}) as proxy2, \
                ScriptedServer({page: (503, [], b"busy")}) as proxy1:
            proxy1_url = proxy1.url.replace("http://", "http://bob:pr0xy@")
            target = proxy2.url if rotate_to == "other" else ""
            run = crawl(tmp_path, PROXY_SPIDER, "-a", f"origin={origin.url}",
                        "-a", f"proxy={proxy1_url}", "-s", f"ROTATE_TO={target}")
        seen = {"proxy1": [r["headers"].get("Proxy-Authorization") for r in proxy1.received],
                "proxy2": [r["headers"].get("Proxy-Authorization") for r in proxy2.received],
                "origin": [r["headers"].get("Proxy-Authorization") for r in origin.received]}
    return run, seen


def test_proxy_authorization_not_sent_to_another_proxy(tmp_path):
    run, seen = _proxy_auth_run(tmp_path, "other")
    assert seen["proxy1"] == ["Basic Ym9iOnByMHh5"]
    assert seen["proxy2"] == [None]
    assert seen["origin"] == []
    assert [i["body"] for i in run.items] == ["via proxy 2"]


def test_proxy_authorization_not_sent_to_the_origin(tmp_path):
    run, seen = _proxy_auth_run(tmp_path, "none")
    assert seen["proxy1"] == ["Basic Ym9iOnByMHh5"]
    assert seen["proxy2"] == []
    assert seen["origin"] == [None]
    assert [i["body"] for i in run.items] == ["direct"]


class _ConnectRecorder(_ScriptedHandler):
    """Records CONNECT requests too (answers them with the route for ``host:port``)."""

    do_CONNECT = _ScriptedHandler._answer


def test_scheme_changing_redirect_uses_that_schemes_env_proxy(tmp_path):
    spider = '''
class Spider(StatsSpider):
    name = "envproxy"

    def start_requests(self):
        yield crawlfw.Request(self.origin + "/page")

    def parse(self, response):
        yield {"url": response.url}
'''
    origin = "http://127.0.0.1:9/"  # never contacted: the proxies answer
    https_target = "https://localhost:9/secure"
    with ScriptedServer({"localhost:9": (403, [], b"no tunnel")}) as https_proxy, \
            ScriptedServer({origin + "page": redirect(https_target)}) as http_proxy:
        https_proxy.httpd.RequestHandlerClass = _ConnectRecorder
        env = {"http_proxy": http_proxy.url.replace("http://", "http://hp:one@"),
               "https_proxy": https_proxy.url.replace("http://", "http://sp:two@"),
               "no_proxy": "", "NO_PROXY": "", "HTTP_PROXY": "", "HTTPS_PROXY": "",
               "ALL_PROXY": "", "all_proxy": ""}
        crawl(tmp_path, spider, "-a", f"origin={origin.rstrip('/')}", "-s", "RETRY_ENABLED=False",
              env=env)
        http_seen = [(r["method"], r["headers"].get("Proxy-Authorization"))
                     for r in http_proxy.received]
        https_seen = [(r["method"], r["path"], r["headers"].get("Proxy-Authorization"))
                      for r in https_proxy.received]
    assert http_seen == [("GET", "Basic aHA6b25l")]  # hp:one
    assert https_seen == [("CONNECT", "localhost:9", "Basic c3A6dHdv")]  # sp:two
