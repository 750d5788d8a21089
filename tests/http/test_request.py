import pytest

from crawlfw.http import FormRequest, Headers, Request


def cb(response):
    return response


def eb(failure):
    return failure


def test_defaults():
    r = Request("http://www.example.com")
    assert r.url == "http://www.example.com"
    assert r.method == "GET"
    assert isinstance(r.headers, Headers)
    assert len(r.headers) == 0
    assert r.body == b""
    assert r.cookies == {}
    assert r.meta == {}
    assert r.cb_kwargs == {}
    assert r.encoding == "utf-8"
    assert r.priority == 0
    assert r.dont_filter is False
    assert r.callback is None
    assert r.errback is None
    assert r.flags == []


def test_every_argument_is_stored():
    r = Request(
        "http://www.example.com/path",
        callback=cb,
        method="post",
        headers={"X-A": "1"},
        body="caf\u00e9",
        cookies={"c": "v"},
        meta={"m": 1},
        encoding="latin-1",
        priority=-5,
        dont_filter=True,
        errback=eb,
        flags=["cached"],
        cb_kwargs={"k": 2},
    )
    assert r.method == "POST"
    assert r.callback is cb and r.errback is eb
    assert r.headers["x-a"] == b"1"
    assert r.headers.encoding == "latin-1"
    assert r.body == b"caf\xe9"
    assert r.cookies == {"c": "v"}
    assert r.meta == {"m": 1}
    assert r.encoding == "latin-1"
    assert r.priority == -5
    assert r.dont_filter is True
    assert r.flags == ["cached"]
    assert r.cb_kwargs == {"k": 2}


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://www.example.com", "http://www.example.com"),
        ("http://www.example.com/some page", "http://www.example.com/some%20page"),
        ("http://www.example.com/caf\u00e9", "http://www.example.com/caf%C3%A9"),
        ("http://WWW.Example.COM/Path", "http://www.example.com/Path"),
        ("http://www.m\u00fcnchen.de/", "http://www.xn--mnchen-3ya.de/"),
        ("  http://www.example.com/  ", "http://www.example.com/"),
        ("http://www.example.com/a#frag", "http://www.example.com/a#frag"),
        (
            "http://www.example.com/ajax.html#!key=value",
            "http://www.example.com/ajax.html?_escaped_fragment_=key%3Dvalue",
        ),
        (
            "http://www.example.com/ajax.html?a=1#!key=value",
            "http://www.example.com/ajax.html?a=1&_escaped_fragment_=key%3Dvalue",
        ),
        ("https://user:pass@host:8080/x?y=1", "https://user:pass@host:8080/x?y=1"),
        ("file:///tmp/foo.txt", "file:///tmp/foo.txt"),
        ("data:,hello", "data:,hello"),
        ("about:blank", "about:blank"),
    ],
)
def test_url_is_made_safe(url, expected):
    assert Request(url).url == expected


def test_url_query_uses_request_encoding():
    assert Request("http://example.com/?q=caf\u00e9", encoding="latin-1").url == (
        "http://example.com/?q=caf%E9"
    )
    assert Request("http://example.com/?q=caf\u00e9").url == "http://example.com/?q=caf%C3%A9"


@pytest.mark.parametrize("url", ["example.com", "/some/path", "www.example.com/a", "mailto:x@y.z"])
def test_missing_scheme(url):
    with pytest.raises(ValueError, match=f"Missing scheme in request url: {url}"):
        Request(url)


@pytest.mark.parametrize("url", [None, b"http://example.com", 123, ["http://example.com"]])
def test_url_must_be_str(url):
    with pytest.raises(TypeError, match=f"Request url must be str, got {type(url).__name__}"):
        Request(url)


@pytest.mark.parametrize("bad", ["parse", 1, object()])
def test_callback_must_be_callable(bad):
    with pytest.raises(TypeError, match="Request callback must be a callable or None, got"):
        Request("http://example.com", callback=bad)


@pytest.mark.parametrize("bad", ["handle_error", 1])
def test_errback_must_be_callable(bad):
    with pytest.raises(TypeError, match=f"Request errback must be a callable or None, got {bad!r}"):
        Request("http://example.com", callback=cb, errback=bad)


def test_errback_without_callback_is_accepted():
    # Scrapy 1.2 refused it; Scrapy 2 accepts it, the spider's parse being the callback
    # (issue 17)
    r = Request("http://example.com", errback=eb)
    assert r.callback is None and r.errback is eb


@pytest.mark.parametrize("bad", [1.5, "1", None])
def test_priority_must_be_int(bad):
    with pytest.raises(TypeError, match="Request priority not an integer"):
        Request("http://example.com", priority=bad)


@pytest.mark.parametrize("bad", [1, ["a"], {"a": 1}])
def test_body_must_be_str_or_bytes(bad):
    with pytest.raises(TypeError, match="Request body must be bytes or str"):
        Request("http://example.com", body=bad)


@pytest.mark.parametrize(
    ("body", "encoding", "expected"),
    [
        (None, "utf-8", b""),
        (b"raw", "utf-8", b"raw"),
        ("caf\u00e9", "utf-8", b"caf\xc3\xa9"),
        ("caf\u00e9", "latin-1", b"caf\xe9"),
        ("", "utf-8", b""),
    ],
)
def test_body(body, encoding, expected):
    assert Request("http://example.com", body=body, encoding=encoding).body == expected


@pytest.mark.parametrize("attr", ["url", "body"])
def test_url_and_body_are_read_only(attr):
    r = Request("http://example.com")
    with pytest.raises(
        AttributeError,
        match=rf"Request\.{attr} is not modifiable, use Request\.replace\(\) instead",
    ):
        setattr(r, attr, "http://other.com")


def test_read_only_message_names_subclass():
    r = FormRequest("http://example.com")
    with pytest.raises(AttributeError, match=r"FormRequest\.url is not modifiable"):
        r.url = "http://other.com"


def test_encoding_is_read_only():
    with pytest.raises(AttributeError):
        Request("http://example.com").encoding = "latin-1"


def test_method_is_upper_cased_str():
    assert Request("http://example.com", method="patch").method == "PATCH"


class _Str(str):
    pass


@pytest.mark.parametrize("method", ["GET", "get", "Get", _Str("GET"), _Str("post"), b"GET", 1])
def test_method_is_always_an_upper_cased_plain_str(method):
    # "GET" takes a shortcut: the same result as str(method).upper()
    made = Request("http://example.com", method=method).method
    assert made == str(method).upper()
    assert made.__class__ is str


def test_cached_urls_and_the_scheme_check():
    # a made-safe URL is cached (the second Request takes it from there, with the same
    # result); a URL without a scheme is refused every time, never cached
    for _ in range(2):
        assert Request("http://example.com/café x").url == "http://example.com/caf%C3%A9%20x"
        assert Request(_Str("http://example.com/a")).url == "http://example.com/a"
        with pytest.raises(ValueError, match="Missing scheme in request url: example.com/x"):
            Request("example.com/x")
    assert Request("http://example.com/?q=é", encoding="latin-1").url.endswith("q=%E9")
    assert Request("http://example.com/?q=é").url.endswith("q=%C3%A9")


@pytest.mark.parametrize(
    ("method", "url", "text"),
    [
        ("GET", "http://www.example.com", "<GET http://www.example.com>"),
        ("POST", "http://example.com/a?b=c", "<POST http://example.com/a?b=c>"),
    ],
)
def test_repr_and_str(method, url, text):
    r = Request(url, method=method)
    assert repr(r) == text
    assert str(r) == text


def test_meta_is_copied_from_argument_and_lazy():
    meta = {"a": 1}
    r = Request("http://example.com", meta=meta)
    r.meta["b"] = 2
    assert meta == {"a": 1}
    r2 = Request("http://example.com")
    assert r2._meta is None  # not created until used
    r2.meta["x"] = 1
    assert r2.meta == {"x": 1}


def test_headers_argument_is_copied():
    h = Headers({"A": "1"})
    r = Request("http://example.com", headers=h)
    r.headers["B"] = "2"
    r.headers.appendlist("A", "3")
    assert h == Headers({"A": "1"})
    assert r.headers.getlist("a") == [b"1", b"3"]


def test_headers_from_pairs_list():
    r = Request("http://example.com", headers=[("Accept", "a"), ("accept", "b")])
    # dict-like update: the last pair wins
    assert r.headers.getlist("Accept") == [b"b"]


def test_replace_changes_given_attributes_only():
    r1 = Request(
        "http://example.com",
        callback=cb,
        errback=eb,
        method="POST",
        headers={"A": "1"},
        body=b"x",
        cookies={"c": "1"},
        meta={"m": 1},
        priority=3,
        dont_filter=True,
        flags=["f"],
        cb_kwargs={"k": 1},
    )
    r2 = r1.replace(url="http://example.org/new", priority=7)
    assert r2.url == "http://example.org/new"
    assert r2.priority == 7
    for attr in (
        "method",
        "headers",
        "body",
        "cookies",
        "meta",
        "encoding",
        "dont_filter",
        "callback",
        "errback",
        "flags",
        "cb_kwargs",
    ):
        assert getattr(r2, attr) == getattr(r1, attr), attr
    assert r1.url == "http://example.com"
    assert r1.priority == 3


def test_replace_copies_mutable_attributes():
    r1 = Request("http://example.com", headers={"A": "1"}, meta={"m": 1}, flags=["f"])
    r2 = r1.copy()
    assert r2 is not r1
    assert type(r2) is Request
    r2.meta["new"] = 1
    r2.headers["B"] = "2"
    r2.headers.appendlist("A", "x")
    r2.flags.append("g")
    assert r1.meta == {"m": 1}
    assert r1.headers == Headers({"A": "1"})
    assert r1.flags == ["f"]


def test_replace_keeps_lazy_meta_unset():
    r1 = Request("http://example.com")
    r2 = r1.replace(priority=1)
    assert r1._meta is None and r2._meta is None


def test_replace_to_other_class():
    r = Request("http://example.com", method="POST", body=b"a=1")
    f = r.replace(cls=FormRequest)
    assert type(f) is FormRequest
    assert f.body == b"a=1"


def test_replace_body_none_empties():
    r = Request("http://example.com", body=b"x")
    assert r.replace(body=None).body == b""


def test_request_is_hashable_and_identity_compared():
    r1 = Request("http://example.com")
    r2 = Request("http://example.com")
    assert r1 != r2
    assert len({r1, r2}) == 2


def test_crawlfw_top_level_exports_request():
    import crawlfw

    assert crawlfw.Request is Request
    assert crawlfw.FormRequest is FormRequest
