"""Scrapy 2 request helpers (issue 17): ``Request.from_curl``, ``JsonRequest``,
``Request.to_dict``/``request_from_dict``, ``fingerprint``, and the signals
``item_error``, ``request_reached_downloader``/``request_left_downloader``; spider-level
rows run through the ``crawlfw runspider`` CLI against a local echo server."""

import hashlib
import json

import pytest

from crawlfw.http import JsonRequest, Request
from crawlfw.utils.request import fingerprint, request_from_dict, request_to_curl
from tests.support.proc import run_measured
from tests.support.servers import EchoServer


@pytest.fixture
def echo():
    server = EchoServer().start()
    yield server
    server.stop()


REQUESTS_SPIDER = '''
import json

import crawlfw
from crawlfw import signals
from crawlfw.http import JsonRequest


class FailingPipeline:
    def process_item(self, item, spider):
        if item.get("fail"):
            raise RuntimeError("pipeline broke")
        return item


class S(crawlfw.Spider):
    name = "requests"
    custom_settings = {"ITEM_PIPELINES": {__name__ + ".FailingPipeline": 100}}

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.reached = []
        spider.item_errors = []
        crawler.signals.connect(spider.on_reached, signals.request_reached_downloader)
        crawler.signals.connect(spider.on_item_error, signals.item_error)
        crawler.signals.connect(spider.on_closed, signals.spider_closed)
        return spider

    def on_reached(self, request, spider):
        self.reached.append(request.url)

    def on_item_error(self, item, response, spider, failure):
        self.item_errors.append((item["what"], type(failure.value).__name__,
                                 response.url))

    def on_closed(self, spider):
        with open("signals.json", "w") as f:
            json.dump({"reached": sorted(self.reached), "item_errors": self.item_errors}, f)

    def start_requests(self):
        yield crawlfw.Request.from_curl(
            f"curl '{self.base}/curl?a=1' -X PUT -H 'X-Token: t1' "
            "-H 'Cookie: sid=s1' --data-raw 'name=x' --compressed",
            callback=self.echo, cb_kwargs={"what": "curl"})
        yield JsonRequest(f"{self.base}/json", data={"b": [1, 2], "a": "z"},
                          callback=self.echo, cb_kwargs={"what": "json"})
        yield JsonRequest(f"{self.base}/json-get", callback=self.echo,
                          cb_kwargs={"what": "json-get"})

    def echo(self, response, what):
        got = json.loads(response.text)
        yield {"what": what, "method": got["method"], "path": got["path"],
               "body": got["body"], "token": got["headers"].get("X-Token"),
               "cookie": got["headers"].get("Cookie"),
               "ctype": got["headers"].get("Content-Type"),
               "accept": got["headers"].get("Accept")}
        if what == "json-get":
            yield {"what": "broken", "fail": True}
'''


@pytest.mark.slow
def test_from_curl_json_request_and_signals_in_a_crawl(echo, tmp_path):
    (tmp_path / "spider.py").write_text(REQUESTS_SPIDER)
    run = run_measured("runspider", "spider.py", "-a", f"base={echo.url}", "-o", "out.jl",
                       "-s", "LOG_LEVEL=INFO", cwd=tmp_path, timeout_s=90)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = (tmp_path / "out.jl").read_text().splitlines()
    items = {i["what"]: i for i in map(json.loads, lines)}
    assert set(items) == {"curl", "json", "json-get"}  # "broken" was not exported
    assert items["curl"] == {"what": "curl", "method": "PUT", "path": "/curl?a=1",
                             "body": "name=x", "token": "t1", "cookie": "sid=s1",
                             "ctype": None, "accept": items["curl"]["accept"]}
    assert items["json"]["method"] == "POST"
    assert json.loads(items["json"]["body"]) == {"a": "z", "b": [1, 2]}
    assert items["json"]["body"] == '{"a": "z", "b": [1, 2]}'  # sort_keys by default
    assert items["json"]["ctype"] == "application/json"
    assert items["json"]["accept"] == "application/json, text/javascript, */*; q=0.01"
    assert items["json-get"]["method"] == "GET" and items["json-get"]["body"] == ""
    sig = json.loads((tmp_path / "signals.json").read_text())
    assert sig["reached"] == sorted([f"{echo.url}/curl?a=1", f"{echo.url}/json",
                                     f"{echo.url}/json-get"])
    assert sig["item_errors"] == [["broken", "RuntimeError", f"{echo.url}/json-get"]]
    assert "Error processing" in run.stderr


def test_from_curl_options():
    r = Request.from_curl(
        "curl 'example.org/p?q=1' -H 'Accept: text/html' -b 'a=1; b=2' -u 'me:pw' "
        "-d $'x=1' -s -v")
    assert r.url == "http://example.org/p?q=1"
    assert r.method == "POST" and r.body == b"x=1"
    assert r.headers[b"Accept"] == b"text/html"
    assert r.headers[b"Authorization"] == b"Basic bWU6cHc="
    assert r.cookies == {"a": "1", "b": "2"}
    assert Request.from_curl("curl http://e.org -X delete", method="GET").method == "GET"
    with pytest.warns(UserWarning, match="Unrecognized options: --foo"):
        Request.from_curl("curl http://e.org --foo")
    with pytest.raises(ValueError, match="Unrecognized options: --foo"):
        Request.from_curl("curl http://e.org --foo", ignore_unknown_options=False)
    with pytest.raises(ValueError, match='must start with "curl"'):
        Request.from_curl("wget http://e.org")
    assert JsonRequest.from_curl("curl http://e.org -d '{}'").headers[
        b"Content-Type"] == b"application/json"


def test_json_request_body_data_and_replace():
    r = JsonRequest("http://e.org/", data={"x": 1}, method="PUT",
                    dumps_kwargs={"separators": (",", ":")})
    assert (r.method, r.body) == ("PUT", b'{"x":1}')
    with pytest.warns(UserWarning, match="data will be ignored"):
        r2 = JsonRequest("http://e.org/", body=b"raw", data={"x": 1})
    assert r2.body == b"raw" and r2.method == "GET"
    r3 = r.replace(data=[1, 2])
    assert type(r3) is JsonRequest and r3.body == b"[1,2]" and r3.method == "PUT"
    own = JsonRequest("http://e.org/", headers={"Content-Type": "text/x-json"})
    assert own.headers[b"Content-Type"] == b"text/x-json"


class _Spider:
    def parse(self, response):
        pass

    def on_error(self, failure):
        pass


def test_to_dict_round_trip():
    spider = _Spider()
    r = JsonRequest("http://e.org/a?b=1", data={"k": "v"}, callback=spider.parse,
                    errback=spider.on_error, meta={"m": 1}, priority=3, dont_filter=True,
                    cookies={"c": "1"}, flags=["f"], cb_kwargs={"x": 2},
                    headers={"X-A": "b"})
    d = r.to_dict(spider=spider)
    json.dumps(d)  # JSON-serializable
    back = request_from_dict(d, spider=spider)
    assert type(back) is JsonRequest
    for attr in ("url", "method", "body", "meta", "priority", "dont_filter", "cookies",
                 "flags", "cb_kwargs", "encoding", "callback", "errback"):
        assert getattr(back, attr) == getattr(r, attr), attr
    assert back.headers == r.headers
    with pytest.raises(ValueError, match="is not an instance method"):
        Request("http://e.org", callback=lambda r: None).to_dict(spider=spider)
    # a dict as Scrapy 2 makes it (encoding key, bytes body)
    scrapy_made = {"url": "http://e.org/", "method": "POST", "body": b"\xff",
                   "encoding": "latin-1", "headers": {b"A": [b"b"]}}
    back = request_from_dict(scrapy_made)
    assert (back.body, back.encoding, back.headers[b"A"]) == (b"\xff", "latin-1", b"b")


def test_fingerprint_is_scrapy_27s():
    def scrapy_fp(method, url, body=b"", headers=None):
        data = {"method": method, "url": url, "body": body.hex(), "headers": headers or {}}
        return hashlib.sha1(json.dumps(data, sort_keys=True).encode()).digest()

    r1 = Request("http://www.example.com/query?id=111&cat=222#frag")
    r2 = Request("http://www.example.com/query?cat=222&id=111")
    assert fingerprint(r1) == fingerprint(r2) == scrapy_fp(
        "GET", "http://www.example.com/query?cat=222&id=111")
    assert isinstance(fingerprint(r1), bytes) and len(fingerprint(r1)) == 20
    assert fingerprint(r1, keep_fragments=True) == scrapy_fp(
        "GET", "http://www.example.com/query?cat=222&id=111#frag")
    post = Request("http://e.org/", method="POST", body=b"a", headers={"X-H": "v"})
    assert fingerprint(post) == scrapy_fp("POST", "http://e.org/", b"a")
    assert fingerprint(post, include_headers=["x-h"]) == scrapy_fp(
        "POST", "http://e.org/", b"a", {b"x-h".hex(): [b"v".hex()]})


def test_request_to_curl_round_trips_through_from_curl():
    r = Request("http://e.org/p", method="POST", body=b"a=1 b", headers={"X-A": "1"},
                cookies={"s": "v"})
    back = Request.from_curl(request_to_curl(r))
    assert (back.url, back.method, back.body, back.headers[b"X-A"], back.cookies) == (
        r.url, "POST", b"a=1 b", b"1", {"s": "v"})


STOP_SPIDER = '''
import json

import crawlfw
from crawlfw import signals
from crawlfw.exceptions import StopDownload


class S(crawlfw.Spider):
    name = "stop"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.on_headers, signals.headers_received)
        crawler.signals.connect(spider.on_bytes, signals.bytes_received)
        spider.seen = {"headers": [], "chunks": 0}
        return spider

    def on_headers(self, headers, body_length, request, spider):
        self.seen["headers"].append([request.url.rsplit("/", 1)[1], body_length,
                                     headers.get("Content-Type").decode()])
        if request.url.endswith("/big-headers"):
            raise StopDownload(fail=False)

    def on_bytes(self, data, request, spider):
        if request.url.endswith("/big-bytes"):
            self.seen["chunks"] += 1
            raise StopDownload()

    def start_requests(self):
        for path in ("big-headers", "big-bytes", "big-whole"):
            yield crawlfw.Request(f"{self.base}/{path}", errback=self.failed)

    def parse(self, response):
        yield {"url": response.url.rsplit("/", 1)[1], "size": len(response.body),
               "flags": response.flags}

    def failed(self, failure):
        response = failure.value.response
        yield {"url": response.url.rsplit("/", 1)[1], "error": type(failure.value).__name__,
               "partial": 0 < len(response.body) < 65536, "flags": response.flags,
               "seen": self.seen}
'''


@pytest.mark.slow
def test_stop_download_from_headers_received_and_bytes_received(echo, tmp_path):
    (tmp_path / "spider.py").write_text(STOP_SPIDER)
    run = run_measured("runspider", "spider.py", "-a", f"base={echo.url}", "-o", "out.jl",
                       "-s", "LOG_LEVEL=INFO", cwd=tmp_path, timeout_s=90)
    assert run.returncode == 0, run.stderr[-3000:]
    items = {i["url"]: i for i in map(json.loads, (tmp_path / "out.jl").read_text().splitlines())}
    # fail=False: the callback gets what was received (no body yet), flagged
    assert items["big-headers"] == {"url": "big-headers", "size": 0,
                                    "flags": ["download_stopped"]}
    # fail=True: the errback gets StopDownload with the partial response
    stopped = items["big-bytes"]
    assert stopped["error"] == "StopDownload" and stopped["partial"]
    assert stopped["flags"] == ["download_stopped"]
    assert items["big-whole"] == {"url": "big-whole", "size": 65536, "flags": []}
    assert sorted(stopped["seen"]["headers"])[0] == ["big-bytes", 65536, "text/plain"]
    assert "Error caught on signal handler" not in run.stderr
