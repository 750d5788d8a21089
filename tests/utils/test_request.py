import gc
import hashlib
import re
from urllib.parse import urljoin

import pytest
from w3lib.url import canonicalize_url

from crawlfw.http import FormRequest, Request
from crawlfw.utils import request as request_mod
from crawlfw.utils.request import request_authenticate, request_fingerprint, request_httprepr

fp = request_fingerprint


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # query argument order does not matter
        (
            Request("http://www.example.com/query?id=111&cat=222"),
            Request("http://www.example.com/query?cat=222&id=111"),
        ),
        # neither does the fragment
        (Request("http://www.example.com/page"), Request("http://www.example.com/page#section")),
        (Request("http://www.example.com/page#a"), Request("http://www.example.com/page#b")),
        # nor percent-encoding differences that canonicalize away
        (Request("http://www.example.com/caf%c3%a9"), Request("http://www.example.com/caf\u00e9")),
        (Request("http://www.example.com/a%20b"), Request("http://www.example.com/a b")),
        # nor the host's case
        (Request("http://WWW.Example.com/p"), Request("http://www.example.com/p")),
        # headers are ignored by default
        (
            Request("http://www.example.com/", headers={"Accept": "a"}),
            Request("http://www.example.com/", headers={"Accept": "b"}),
        ),
        (
            Request("http://www.example.com/", headers={"Cookie": "x=1"}),
            Request("http://www.example.com/"),
        ),
        # callbacks, meta, priority are ignored
        (
            Request("http://www.example.com/", meta={"a": 1}, priority=5, dont_filter=True),
            Request("http://www.example.com/"),
        ),
        # str and bytes bodies of the same bytes
        (
            Request("http://www.example.com/", method="POST", body="x=1"),
            Request("http://www.example.com/", method="POST", body=b"x=1"),
        ),
        # method case
        (
            Request("http://www.example.com/", method="post"),
            Request("http://www.example.com/", method="POST"),
        ),
        # blank query value normalisation
        (Request("http://www.example.com/q?a=&b=2"), Request("http://www.example.com/q?b=2&a=")),
    ],
)
def test_same_fingerprint(a, b):
    assert fp(a) == fp(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            Request("http://www.example.com/query?id=111"),
            Request("http://www.example.com/query?id=222"),
        ),
        (Request("http://www.example.com/a"), Request("http://www.example.com/b")),
        (Request("http://www.example.com/"), Request("https://www.example.com/")),
        (Request("http://www.example.com/"), Request("http://www.example.com/", method="POST")),
        (
            Request("http://www.example.com/", method="POST", body=b"a"),
            Request("http://www.example.com/", method="POST", body=b"b"),
        ),
        (Request("http://www.example.com/Path"), Request("http://www.example.com/path")),
        (Request("http://www.example.com/?a=1"), Request("http://www.example.com/?a=1&a=1")),
        (
            FormRequest("http://www.example.com/", formdata={"a": "1"}),
            FormRequest("http://www.example.com/", formdata={"a": "2"}),
        ),
    ],
)
def test_different_fingerprint(a, b):
    assert fp(a) != fp(b)


def test_fingerprint_is_sha1_hex_of_scrapy_fields():
    r = Request("http://www.example.com/query?id=111&cat=222", method="POST", body=b"data")
    expected = hashlib.sha1(
        b"POST" + b"http://www.example.com/query?cat=222&id=111" + b"data"
    ).hexdigest()
    assert fp(r) == expected
    assert len(fp(r)) == 40


def test_include_headers():
    r1 = Request("http://www.example.com/", headers={"Accept-Language": "en"})
    r2 = Request("http://www.example.com/", headers={"Accept-Language": "pt"})
    r3 = Request("http://www.example.com/")
    assert fp(r1) == fp(r2) == fp(r3)
    assert fp(r1, include_headers=["Accept-Language"]) != fp(
        r2, include_headers=["Accept-Language"]
    )
    # header name case does not matter, neither for the listed name nor the stored one
    assert fp(r1, include_headers=["accept-language"]) == fp(
        r1, include_headers=[b"ACCEPT-LANGUAGE"]
    )
    # a listed header the request does not have changes nothing
    assert fp(r3, include_headers=["Accept-Language"]) == fp(r3)
    # all values of a multi-valued header count
    r4 = Request("http://www.example.com/", headers={"X": ["1", "2"]})
    r5 = Request("http://www.example.com/", headers={"X": ["1", "3"]})
    assert fp(r4, include_headers=["X"]) != fp(r5, include_headers=["X"])


def test_fingerprint_cached_per_request_and_released_with_it():
    r = Request("http://www.example.com/cached", method="POST", body=b"x")
    first = fp(r)
    assert request_mod._fingerprint_cache[r] == {None: first}
    fp(r, include_headers=["A"])
    assert set(request_mod._fingerprint_cache[r]) == {None, (b"a",)}
    n = len(request_mod._fingerprint_cache)
    del r
    gc.collect()
    assert len(request_mod._fingerprint_cache) == n - 1


def test_request_authenticate():
    r = Request("http://www.example.com")
    request_authenticate(r, "someuser", "somepass")
    assert r.headers["Authorization"] == b"Basic c29tZXVzZXI6c29tZXBhc3M="


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (Request("http://www.example.com"), b"GET / HTTP/1.1\r\nHost: www.example.com\r\n\r\n"),
        (
            Request("http://www.example.com/some/page.html?arg=1"),
            b"GET /some/page.html?arg=1 HTTP/1.1\r\nHost: www.example.com\r\n\r\n",
        ),
        (
            Request(
                "http://www.example.com",
                method="POST",
                headers={"Content-type": b"text/html"},
                body=b"Some body",
            ),
            b"POST / HTTP/1.1\r\nHost: www.example.com\r\nContent-Type: text/html\r\n\r\nSome body",
        ),
        (
            Request("http://user:pw@www.example.com:8080/p;params?q#frag"),
            b"GET /p;params?q HTTP/1.1\r\nHost: www.example.com\r\n\r\n",
        ),
        (Request("file:///tmp/foo.txt"), b"GET /tmp/foo.txt HTTP/1.1\r\nHost: \r\n\r\n"),
    ],
)
def test_request_httprepr(request_, expected):
    assert request_httprepr(request_) == expected


@pytest.mark.slow
def test_fingerprint_equals_reference_on_every_link_of_the_shared_sites(sites_dir):
    # request_fingerprint takes a shortcut for plain URLs; the digest must stay
    # sha1(method + w3lib canonicalize_url(url) + body), byte for byte.
    attr = re.compile(rb"""\shref\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.I)
    urls = set()
    for path in sites_dir.rglob("*.htm*"):
        base = "http://127.0.0.1:8080/" + path.relative_to(sites_dir).as_posix()
        for m in attr.finditer(path.read_bytes()):
            href = next(g for g in m.groups() if g is not None).decode("utf-8", "replace").strip()
            urls.add(urljoin(base, href))
    checked = 0
    for url in urls:
        try:
            request = Request(url)
        except ValueError:
            continue
        expected = hashlib.sha1(b"GET" + canonicalize_url(request.url).encode() + b"").hexdigest()
        assert request_fingerprint(request) == expected, url
        checked += 1
    assert checked > 5000


def test_get_fingerprint_memoised_per_url_and_bounded(monkeypatch):
    monkeypatch.setattr(request_mod, "_GET_FINGERPRINTS", {})
    monkeypatch.setattr(request_mod, "_GET_FINGERPRINTS_OLDER", {})
    monkeypatch.setattr(request_mod, "_GET_FINGERPRINTS_SIZE", 3)
    urls = [f"http://www.example.com/p/{i}?b=2&a=1#f" for i in range(5)]
    for url in urls + urls:
        r = Request(url)
        expected = hashlib.sha1(b"GET" + canonicalize_url(url).encode()).hexdigest()
        assert fp(r) == expected
        assert r not in request_mod._fingerprint_cache  # no per-request entry needed
        assert request_mod._GET_FINGERPRINTS[r.url] == expected
        assert len(request_mod._GET_FINGERPRINTS) <= 3
        assert len(request_mod._GET_FINGERPRINTS_OLDER) <= 3
    # a body, another method or include_headers take the per-request path
    for r in (Request(urls[0], body=b"x"), Request(urls[0], method="HEAD")):
        assert fp(r) != fp(Request(urls[0]))
        assert r in request_mod._fingerprint_cache
    r = Request(urls[0], headers={"A": "1"})
    assert fp(r, include_headers=["A"]) != fp(r)


def test_get_fingerprints_of_a_cycle_longer_than_one_generation_are_found(monkeypatch):
    """A site whose pages link to more URLs than one generation holds (here 5 URLs met
    again and again, generations of 4): after the first round every fingerprint comes
    from the memo (a memo emptied when full computed every one again)."""
    monkeypatch.setattr(request_mod, "_GET_FINGERPRINTS", {})
    monkeypatch.setattr(request_mod, "_GET_FINGERPRINTS_OLDER", {})
    monkeypatch.setattr(request_mod, "_GET_FINGERPRINTS_SIZE", 4)
    computed = []
    real = request_mod.canonical_url
    monkeypatch.setattr(request_mod, "canonical_url",
                        lambda url: computed.append(url) or real(url))
    urls = [f"http://www.example.com/p/{i}" for i in range(5)]
    for _ in range(4):
        for url in urls:
            r = Request(url)
            assert fp(r) == hashlib.sha1(b"GET" + canonicalize_url(url).encode()).hexdigest()
    assert computed == urls  # once each, in the first round
