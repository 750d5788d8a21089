"""RefererMiddleware and UrlLengthMiddleware."""

import logging

import pytest

from crawlfw.exceptions import NotConfigured
from crawlfw.http import Request, Response
from crawlfw.spidermiddlewares.referer import RefererMiddleware
from crawlfw.spidermiddlewares.urllength import UrlLengthMiddleware
from tests.downloadermiddlewares._support import close_crawler, get_crawler, open_spider

RESPONSE = Response("https://example.com/page?x=1", request=Request("https://example.com/page?x=1"))


def test_referer_set_from_response_url():
    crawler = get_crawler()
    try:
        mw = RefererMiddleware.from_crawler(crawler)
        plain = Request("http://other.com/")  # 1.2: no policy, sent even https -> http
        own = Request("http://example.com/", headers={"Referer": "mine"})
        item = {"a": 1}
        out = list(mw.process_spider_output(RESPONSE, [plain, own, item], None))
        assert out == [plain, own, item]
        assert plain.headers[b"Referer"] == b"https://example.com/page?x=1"
        assert own.headers[b"Referer"] == b"mine"
        assert list(mw.process_spider_output(RESPONSE, None, None)) == []
    finally:
        close_crawler(crawler)


def test_referer_disabled():
    crawler = get_crawler({"REFERER_ENABLED": False})
    try:
        with pytest.raises(NotConfigured):
            RefererMiddleware.from_crawler(crawler)
    finally:
        close_crawler(crawler)


@pytest.mark.parametrize(
    "limit, url, kept",
    [
        (25, "http://example.com/short", True),
        (25, "http://example.com/" + "a" * 6, True),  # exactly 25
        (25, "http://example.com/" + "a" * 7, False),
        (2083, "http://example.com/" + "a" * 2000, True),
    ],
)
def test_url_length(caplog, limit, url, kept):
    crawler = get_crawler({"URLLENGTH_LIMIT": limit})
    spider = open_spider(crawler)
    try:
        mw = UrlLengthMiddleware.from_crawler(crawler)
        caplog.set_level(logging.DEBUG, logger="crawlfw.spidermiddlewares.urllength")
        request = Request(url)
        out = list(mw.process_spider_output(RESPONSE, [request, {"item": 1}], spider))
        assert out == ([request] if kept else []) + [{"item": 1}]
        if not kept:
            assert caplog.records[-1].getMessage().strip() == (
                f"Ignoring link (url length > {limit}): {url}"
            )
            assert crawler.stats.get_value("urllength/request_ignored_count") == 1
    finally:
        close_crawler(crawler, spider)


def test_url_length_disabled():
    crawler = get_crawler({"URLLENGTH_LIMIT": 0})
    try:
        with pytest.raises(NotConfigured):
            UrlLengthMiddleware.from_crawler(crawler)
    finally:
        close_crawler(crawler)


# --- referrer policies (later Scrapy; W3C Referrer Policy) --------------------------------

from crawlfw.settings import Settings  # noqa: E402

HTTPS_PAGE = "https://user:pw@example.com:8443/a/page?q=1#frag"


@pytest.mark.parametrize(
    "policy, from_url, to_url, expected",
    [
        ("legacy", HTTPS_PAGE, "http://other.com/", HTTPS_PAGE),
        ("no-referrer", HTTPS_PAGE, "https://example.com:8443/", None),
        (
            "no-referrer-when-downgrade",
            HTTPS_PAGE,
            "https://other.com/",
            "https://example.com:8443/a/page?q=1",
        ),
        ("no-referrer-when-downgrade", HTTPS_PAGE, "http://other.com/", None),
        (
            "no-referrer-when-downgrade",
            "http://example.com/p",
            "http://other.com/",
            "http://example.com/p",
        ),
        (
            "same-origin",
            HTTPS_PAGE,
            "https://example.com:8443/b",
            "https://example.com:8443/a/page?q=1",
        ),
        ("same-origin", HTTPS_PAGE, "https://example.com/b", None),  # another port
        ("origin", HTTPS_PAGE, "http://other.com/", "https://example.com:8443/"),
        ("strict-origin", HTTPS_PAGE, "https://other.com/", "https://example.com:8443/"),
        ("strict-origin", HTTPS_PAGE, "http://other.com/", None),
        (
            "origin-when-cross-origin",
            HTTPS_PAGE,
            "https://example.com:8443/x",
            "https://example.com:8443/a/page?q=1",
        ),
        ("origin-when-cross-origin", HTTPS_PAGE, "http://other.com/", "https://example.com:8443/"),
        (
            "strict-origin-when-cross-origin",
            HTTPS_PAGE,
            "https://other.com/",
            "https://example.com:8443/",
        ),
        ("strict-origin-when-cross-origin", HTTPS_PAGE, "http://other.com/", None),
        ("unsafe-url", HTTPS_PAGE, "http://other.com/", "https://example.com:8443/a/page?q=1"),
        ("scrapy-default", "file:///tmp/page.html", "http://other.com/", None),
        ("scrapy-default", HTTPS_PAGE, "http://other.com/", None),
        (
            "crawlfw.spidermiddlewares.referer.OriginPolicy",
            HTTPS_PAGE,
            "http://o.com/",
            "https://example.com:8443/",
        ),
    ],
)
def test_referrer_policies(policy, from_url, to_url, expected):
    mw = RefererMiddleware(Settings({"REFERRER_POLICY": policy}))
    response = Response(from_url, request=Request(from_url))
    request = Request(to_url)
    list(mw.process_spider_output(response, [request], None))
    value = request.headers.get(b"Referer")
    assert (value.decode() if value is not None else None) == expected


def test_policy_precedence():
    mw = RefererMiddleware(Settings({"REFERRER_POLICY": "origin"}))
    page = "https://example.com/page"
    response = Response(
        page, headers={"Referrer-Policy": "unknown-thing, no-referrer"}, request=Request(page)
    )
    from_header = Request("https://example.com/a")
    from_meta = Request("https://example.com/b", meta={"referrer_policy": "unsafe-url"})
    list(mw.process_spider_output(response, [from_header, from_meta], None))
    assert b"Referer" not in from_header.headers  # the header's last known token
    assert from_meta.headers[b"Referer"] == b"https://example.com/page"  # meta wins


def test_unknown_policy_setting():
    with pytest.raises(ValueError, match="unknown referrer policy 'nope'"):
        RefererMiddleware(Settings({"REFERRER_POLICY": "nope"}))


@pytest.mark.parametrize("setting", [None, "legacy", "same-origin"])
@pytest.mark.parametrize(
    "response_headers", [{}, {"Referrer-Policy": "no-referrer"}, {"Referrer-Policy": "bogus"}]
)
def test_referer_same_as_policy_per_request(setting, response_headers):
    # process_spider_output (with its shortcut for the legacy policy) sets exactly what
    # policy(response, request).referrer(response.url, request.url) gives.
    from crawlfw.spidermiddlewares.referer import RefererMiddleware as Mw

    settings = Settings({"REFERRER_POLICY": setting} if setting else {})
    mw = Mw(settings)
    page = "https://u:p@example.com/a?x=1#frag"
    response = Response(page, headers=response_headers, request=Request(page))
    metas = [None, "unsafe-url", "no-referrer", "origin", "legacy", "nonsense"]
    urls = ["https://example.com/b", "http://example.com/c", "https://other.com/d"]
    requests = [Request(u, meta={"referrer_policy": m} if m else None) for u in urls for m in metas]
    requests.append(Request(urls[0], headers={"Referer": "kept"}))
    expected = []
    for r in requests:
        if b"Referer" in r.headers:
            expected.append(r.headers[b"Referer"])
            continue
        value = mw.policy(response, r).referrer(response.url, r.url)
        expected.append(None if value is None else value.encode())
    out = list(mw.process_spider_output(response, requests + [{"item": 1}], None))
    assert out == requests + [{"item": 1}]
    assert [r.headers.get(b"Referer") for r in requests] == expected


def test_referer_policy_override_in_subclass_is_used():
    class NoneMw(RefererMiddleware):
        def policy(self, response, request):
            from crawlfw.spidermiddlewares.referer import NoReferrerPolicy

            return NoReferrerPolicy()

    mw = NoneMw(Settings())
    r = Request("http://example.com/x")
    assert list(mw.process_spider_output(RESPONSE, [r], None)) == [r]
    assert b"Referer" not in r.headers


def test_referer_output_not_iterable_raises_at_call():
    with pytest.raises(TypeError):
        RefererMiddleware(Settings()).process_spider_output(RESPONSE, 5, None)


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1", "cp1252"])
def test_referer_header_stored_as_headers_setitem_does(encoding):
    from crawlfw.http import Headers

    page = "http://example.com/caf\u00e9?q=\u00e9"
    response = Response(page, request=Request("http://example.com/"))
    r = Request("http://example.com/x", encoding=encoding)
    list(RefererMiddleware(Settings()).process_spider_output(response, [r], None))
    expected = Headers(encoding=encoding)
    expected[b"Referer"] = page
    assert dict(r.headers) == dict(expected)


def test_url_length_one_path_per_rule(caplog):
    # one implementation of the rule (no per-request method beside the inline loop); it
    # logs and counts each dropped request
    import logging

    assert not hasattr(UrlLengthMiddleware, "_filter")
    mw = UrlLengthMiddleware(30)
    long_request = Request("http://example.com/" + "x" * 20)
    short = Request("http://example.com/")
    with caplog.at_level(logging.DEBUG):
        out = list(mw.process_spider_output(RESPONSE, [long_request, short, {"i": 1}], None))
    assert out == [short, {"i": 1}]
    assert [r.getMessage() for r in caplog.records] == [
        f"Ignoring link (url length > 30): {long_request.url} "]


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_headers_setdefault_bytes(encoding):
    from crawlfw.http import Headers

    h = Headers({"X-A": "1"}, encoding=encoding)
    assert h.setdefault_bytes(b"Referer", "caf\u00e9".encode(encoding)) is True
    assert h.setdefault_bytes(b"Referer", b"other") is False
    expected = Headers({"X-A": "1"}, encoding=encoding)
    expected["Referer"] = "caf\u00e9"
    assert dict(h) == dict(expected) and h.getlist("referer") == [expected["Referer"]]


# -- Scrapy 2's referer API (issue 29); values are Scrapy 2.19's ----------------------

def test_policy_constants():
    from crawlfw.spidermiddlewares import referer

    names = sorted(getattr(referer, n) for n in dir(referer) if n.startswith("POLICY_"))
    assert names == ["no-referrer", "no-referrer-when-downgrade", "origin",
                     "origin-when-cross-origin", "same-origin", "scrapy-default",
                     "strict-origin", "strict-origin-when-cross-origin", "unsafe-url"]
    assert all(referer._policy_class(n) is not None for n in names)


@pytest.mark.parametrize("url, stripped, origin", [
    ("https://u:p@a.example:443/x?q#f", "https://a.example/x?q", "https://a.example/"),
    ("http://a.example:8080/p", "http://a.example:8080/p", "http://a.example:8080/"),
    ("", None, None),
])
def test_strip_url(url, stripped, origin):
    from crawlfw.spidermiddlewares.referer import NoReferrerWhenDowngradePolicy

    policy = NoReferrerWhenDowngradePolicy()
    assert policy.strip_url(url) == stripped
    assert policy.strip_url(url, origin_only=True) == origin


def test_noreferrer_schemes():
    from crawlfw.spidermiddlewares.referer import DefaultReferrerPolicy, ReferrerPolicy

    assert {"about", "blob", "data", "filesystem"} <= set(ReferrerPolicy.NOREFERRER_SCHEMES)
    assert {"file", "s3"} <= set(DefaultReferrerPolicy.NOREFERRER_SCHEMES)


def test_get_processed_request_and_policy():
    from crawlfw.settings import Settings
    from crawlfw.spidermiddlewares.referer import UnsafeUrlPolicy

    mw = RefererMiddleware(Settings({"REFERRER_POLICY": "origin"}))
    response = Response("https://a.example/page?x=1")
    request = Request("https://b.example/y")
    assert mw.get_processed_request(request, response) is request
    assert request.headers[b"Referer"] == b"https://a.example/"
    same = Request("https://b.example/y", meta={"referrer_policy": "same-origin"})
    assert b"Referer" not in mw.get_processed_request(same, response).headers
    assert mw.get_processed_request(same, None) is same
    unsafe = Request("http://x/", meta={"referrer_policy": "unsafe-url"})
    assert isinstance(mw.policy(response, unsafe), UnsafeUrlPolicy)
    assert isinstance(mw.policy(resp_or_url="https://a.example/", request=unsafe), UnsafeUrlPolicy)
    with pytest.raises(TypeError, match="request"):
        mw.policy(response)


def _redirect(settings, request_kwargs, response_headers=None):
    from crawlfw.downloadermiddlewares.redirect import RedirectMiddleware

    crawler = get_crawler(settings)
    try:
        mw = RedirectMiddleware.from_crawler(crawler)
        request = Request("https://a.example/start", **request_kwargs)
        headers = {"Location": "https://c.example/target", **(response_headers or {})}
        response = Response("https://a.example/start", status=302, headers=headers,
                            request=request)
        return mw.process_response(request, response, None)
    finally:
        close_crawler(crawler)


def test_redirect_keeps_the_referer_under_the_legacy_policy():
    redirected = _redirect({}, {"headers": {"Referer": "https://src.example/list"}})
    assert redirected.headers[b"Referer"] == b"https://src.example/list"  # Scrapy 1.2


def test_redirect_sets_the_referer_under_a_scrapy2_policy():
    # Scrapy 2.19: removed, then set by the RefererMiddleware from the 3xx response
    redirected = _redirect({"REFERRER_POLICY": "origin"},
                           {"headers": {"Referer": "https://src.example/list"}})
    assert redirected.headers[b"Referer"] == b"https://a.example/"
    redirected = _redirect({}, {"headers": {"Referer": "https://src.example/list"},
                                "meta": {"referrer_policy": "no-referrer"}})
    assert b"Referer" not in redirected.headers


def test_handle_referer_can_be_overridden():
    from crawlfw.downloadermiddlewares.redirect import RedirectMiddleware

    class Mine(RedirectMiddleware):
        def handle_referer(self, request, response):
            request.headers[b"Referer"] = b"custom " + response.url.encode()

    crawler = get_crawler()
    try:
        mw = Mine.from_crawler(crawler)
        request = Request("https://a.example/start")
        response = Response("https://a.example/start", status=301,
                            headers={"Location": "/next"}, request=request)
        assert mw.process_response(request, response, None).headers[b"Referer"] == (
            b"custom https://a.example/start")
    finally:
        close_crawler(crawler)


def test_urllength_get_processed_request(caplog):
    crawler = get_crawler({"URLLENGTH_LIMIT": 20})
    try:
        mw = UrlLengthMiddleware.from_crawler(crawler)
        short = Request("http://e.com/a")
        assert mw.get_processed_request(short, None) is short
        with caplog.at_level(logging.DEBUG):
            assert mw.get_processed_request(Request("http://e.com/" + "x" * 30), None) is None
        assert "Ignoring link (url length > 20)" in caplog.text
        assert crawler.stats.get_value("urllength/request_ignored_count") == 1
    finally:
        close_crawler(crawler)


def test_metacopy_warns_once(caplog):
    from crawlfw.spidermiddlewares.metacopy import MetaCopyDetectionMiddleware

    crawler = get_crawler({"META_COPY_WARN_SKIP_KEYS": ["download_latency"]})
    try:
        open_spider(crawler)
        mw = MetaCopyDetectionMiddleware.from_crawler(crawler)
        response = Response("http://e.com/", request=Request("http://e.com/"))
        skipped = Request("http://e.com/1", meta={"download_latency": 0.1, "depth": 1})
        copied = Request("http://e.com/2", meta={"redirect_times": 1, "retry_times": 2})
        items = list(mw.process_spider_output(response, [skipped, copied, copied, {"a": 1}]))
        assert items == [skipped, copied, copied, {"a": 1}]
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1
        assert "internal meta keys" in warnings[0].getMessage()
        assert "['redirect_times', 'retry_times']" in warnings[0].getMessage()
        assert mw.get_processed_request(copied, None) is copied  # start requests: no check
    finally:
        close_crawler(crawler)
