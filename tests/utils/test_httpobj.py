import gc
from urllib.parse import urlparse

from crawlfw.http import Request, Response
from crawlfw.utils import httpobj
from crawlfw.utils.httpobj import urlparse_cached


def test_urlparse_cached_request_and_response():
    req = Request("http://www.example.com/index.html?a=1#frag")
    resp = Response("http://www.example.com/other")
    assert urlparse_cached(req) == urlparse("http://www.example.com/index.html?a=1#frag")
    assert urlparse_cached(req) is urlparse_cached(req)
    assert urlparse_cached(resp).path == "/other"


def test_cache_released_with_object():
    url = "http://www.example.com/released"

    def cached():  # other tests' garbage may be collected too: count only this URL
        return sum(1 for r in list(httpobj._urlparse_cache.keys()) if r.url == url)

    req = Request(url)
    urlparse_cached(req)
    assert cached() == 1
    del req
    gc.collect()
    assert cached() == 0


def test_replace_gets_its_own_entry():
    req = Request("http://www.example.com/a")
    other = req.replace(url="http://www.example.com/b")
    assert urlparse_cached(req).path == "/a"
    assert urlparse_cached(other).path == "/b"
