"""Scrapy 2.19's request/response API not in Scrapy 1.2 (issue 29): ``attributes``,
``Request.to_curl``, ``NO_CALLBACK``, ``VerboseCookie``,
``FormRequest.valid_form_methods``, ``Headers.to_tuple_list``, ``http.cookies.IPV4_RE``,
``Response`` ``certificate``/``ip_address``/``protocol``/``cb_kwargs``/``to_dict``/
``from_dict``/``jmespath``, the ``follow()`` argument order,
``utils.response.response_from_dict`` and ``get_meta_refresh(ignore_tags)``.

The expected values are what Scrapy 2.19 gives for the same calls."""

import ipaddress
import pickle
import shlex

import pytest

from crawlfw.exceptions import NotSupported
from crawlfw.http import (
    FormRequest,
    Headers,
    HtmlResponse,
    JsonRequest,
    JsonResponse,
    Request,
    Response,
    TextResponse,
    XmlResponse,
)
from crawlfw.http.cookies import IPV4_RE, CookieJar
from crawlfw.http.request import NO_CALLBACK, VerboseCookie
from crawlfw.utils.request import request_from_dict
from crawlfw.utils.response import get_meta_refresh, response_from_dict

# -- requests ------------------------------------------------------------------------------

#: Scrapy 2.19's Request.attributes, in its order.
REQUEST_ATTRIBUTES = (
    "url", "headers", "body", "cookies", "meta", "encoding", "flags", "cb_kwargs",
    "callback", "dont_filter", "errback", "method", "priority",
)


def test_request_attributes_are_scrapy_219s():
    assert Request.attributes == REQUEST_ATTRIBUTES
    assert FormRequest.attributes == REQUEST_ATTRIBUTES
    assert JsonRequest.attributes == (*REQUEST_ATTRIBUTES, "dumps_kwargs")


def test_every_request_attribute_is_a_constructor_argument_read_back():
    def cb(response):
        pass

    values = {
        "url": "http://example.com/a", "headers": {"X-A": "1"}, "body": b"b",
        "cookies": {"c": "1"}, "meta": {"m": 1}, "encoding": "latin-1", "flags": ["f"],
        "cb_kwargs": {"k": 1}, "callback": cb, "dont_filter": True, "errback": cb,
        "method": "PUT", "priority": 3,
    }
    request = Request(**values)
    for name in Request.attributes:
        value = getattr(request, name)
        if name == "headers":
            assert value == {b"X-A": [b"1"]}
        else:
            assert value == values[name], name


class _TaggedRequest(Request):
    attributes = (*Request.attributes, "tag")

    def __init__(self, *args, tag=None, **kwargs):
        self.tag = tag
        super().__init__(*args, **kwargs)


def test_replace_carries_a_subclass_attribute_over():
    request = _TaggedRequest("http://example.com/", tag="t1")
    assert request.replace(url="http://example.com/2").tag == "t1"
    assert request.replace(tag="t2").tag == "t2"
    # a class without the attribute does not get it (Scrapy would pass it: TypeError)
    plain = request.replace(cls=Request)
    assert type(plain) is Request and not hasattr(plain, "tag")


def test_json_request_dumps_kwargs_are_replaced_and_serialized():
    request = JsonRequest("http://example.com/", data={"a": 1}, dumps_kwargs={"indent": 1})
    assert request.replace(url="http://example.com/2").dumps_kwargs == {
        "indent": 1, "sort_keys": True}
    d = request.to_dict()
    assert d["dumps_kwargs"] == {"indent": 1, "sort_keys": True}
    again = request_from_dict(d)
    assert type(again) is JsonRequest
    assert again.dumps_kwargs == {"indent": 1, "sort_keys": True}
    assert again.replace(data={"b": 2}).body == b'{\n "b": 2\n}'


def test_to_curl_round_trips_through_from_curl():
    request = Request("http://example.com/p?q=1", method="POST", body=b"a=1&b='x'",
                      headers={"X-Token": "abc"}, cookies={"s": "1"})
    command = request.to_curl()
    assert shlex.split(command)[:4] == ["curl", "-X", "POST", "http://example.com/p?q=1"]
    again = Request.from_curl(command)
    assert (again.method, again.url, again.body) == ("POST", request.url, request.body)
    assert again.headers[b"X-Token"] == b"abc"
    assert again.cookies == {"s": "1"}


def test_no_callback_raises_when_called():
    request = Request("http://example.com/", callback=NO_CALLBACK)
    assert request.callback is NO_CALLBACK
    with pytest.raises(RuntimeError, match="NO_CALLBACK callback has been called"):
        request.callback(Response("http://example.com/"))
    # copies and pickles as itself (a module-level function)
    assert request.copy().callback is NO_CALLBACK
    assert pickle.loads(pickle.dumps(NO_CALLBACK)) is NO_CALLBACK


def test_verbose_cookie_keys():
    assert VerboseCookie.__required_keys__ == {"name", "value"}
    assert VerboseCookie.__optional_keys__ == {"domain", "path", "secure"}
    cookie: VerboseCookie = {"name": "a", "value": "1", "domain": "example.com"}
    request = Request("http://example.com/", cookies=[cookie])
    assert request.cookies == [cookie]


FORM_PAGE = b"""<html><body>
<form action="/go" method="%s"><input name="a" value="1"></form>
</body></html>"""


@pytest.mark.parametrize("form_method, kwargs, expected", [
    (b"post", {}, "POST"),
    (b"get", {}, "GET"),
    (b"PUT", {}, "GET"),  # not a valid form method: GET, as in Scrapy and browsers
    (b"dialog", {}, "GET"),
    # a method given is used as it is (Scrapy 1.2; Scrapy >= 1.7 would send GET)
    (b"post", {"method": "put"}, "PUT"),
    (b"get", {"method": "post"}, "POST"),
])
def test_from_response_method_is_one_of_valid_form_methods(form_method, kwargs, expected):
    assert FormRequest.valid_form_methods == ["GET", "POST"]
    response = HtmlResponse("http://example.com/f", body=FORM_PAGE % form_method)
    request = FormRequest.from_response(response, **kwargs)
    assert request.method == expected


def test_valid_form_methods_may_be_extended_by_a_subclass():
    class PutForm(FormRequest):
        valid_form_methods = ["GET", "POST", "PUT"]

    response = HtmlResponse("http://example.com/f", body=FORM_PAGE % b"put")
    request = PutForm.from_response(response)
    assert request.method == "PUT"
    assert request.url == "http://example.com/go?a=1"


# -- headers, cookies ----------------------------------------------------------------------


def test_headers_to_tuple_list():
    headers = Headers({"Set-Cookie": ["a=1", "b=2"], "content-type": "text/html"})
    assert headers.to_tuple_list() == [
        ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"), ("Content-Type", "text/html")]
    latin = Headers({"X-Name": "caf\xe9"}, encoding="latin-1")
    assert latin.to_tuple_list() == [("X-Name", "caf\xe9")]
    assert Headers().to_tuple_list() == []


@pytest.mark.parametrize("host, is_ip", [
    ("127.0.0.1", True), ("10.0.0.255", True), ("example.com", False),
    ("www.example.co.uk", False), ("host", False), ("a.b.1", True),
])
def test_ipv4_re(host, is_ip):
    assert bool(IPV4_RE.search(host)) is is_ip


def test_cookies_of_an_ip_host_match_that_host_only():
    jar = CookieJar()
    set_cookie = Response("http://127.0.0.1/", headers={"Set-Cookie": "a=1"})
    jar.extract_cookies(set_cookie, Request("http://127.0.0.1/"))
    for url, expected in [("http://127.0.0.1/x", b"a=1"), ("http://127.0.0.2/x", None)]:
        request = Request(url)
        jar.add_cookie_header(request)
        assert request.headers.get("Cookie") == expected


# -- responses -----------------------------------------------------------------------------

#: Scrapy 2.19's Response.attributes, in its order.
RESPONSE_ATTRIBUTES = (
    "url", "headers", "body", "flags", "status", "request", "certificate", "ip_address",
    "protocol",
)


def test_response_attributes_are_scrapy_219s():
    assert Response.attributes == RESPONSE_ATTRIBUTES
    for cls in (TextResponse, HtmlResponse, XmlResponse, JsonResponse):
        assert cls.attributes == (*RESPONSE_ATTRIBUTES, "encoding")


def test_response_certificate_ip_address_protocol():
    response = Response("http://example.com/")
    assert (response.certificate, response.ip_address, response.protocol) == (None, None, None)
    response = Response("http://example.com/", certificate="cert",
                        ip_address=ipaddress.ip_address("::1"), protocol="HTTP/1.1")
    assert response.certificate == "cert"
    assert response.ip_address == ipaddress.IPv6Address("::1")
    assert response.protocol == "HTTP/1.1"
    # a str is converted; a bad one is refused at once
    assert Response("http://e/", ip_address="127.0.0.1").ip_address == \
        ipaddress.IPv4Address("127.0.0.1")
    with pytest.raises(ValueError):
        Response("http://e/", ip_address="not an address")
    # positional, in Scrapy 2's order
    response = Response("http://e/", 201, None, b"", None, None, "c", "10.0.0.1", "HTTP/2")
    assert (response.certificate, str(response.ip_address), response.protocol) == (
        "c", "10.0.0.1", "HTTP/2")


def test_replace_carries_every_attribute_over():
    request = Request("http://example.com/")
    response = HtmlResponse("http://example.com/", body=b"<p>x</p>", encoding="utf-8",
                            request=request, flags=["f"], certificate="c",
                            ip_address="127.0.0.1", protocol="HTTP/1.1")
    copy = response.replace(status=404)
    for name in HtmlResponse.attributes:
        if name != "status":
            assert getattr(copy, name) == getattr(response, name), name
    assert copy.status == 404
    binary = response.replace(cls=Response)
    assert type(binary) is Response and binary.protocol == "HTTP/1.1"


def test_response_cb_kwargs():
    request = Request("http://example.com/", cb_kwargs={"a": 1})
    assert Response("http://example.com/", request=request).cb_kwargs == {"a": 1}
    with pytest.raises(AttributeError, match="Response.cb_kwargs not available"):
        Response("http://example.com/").cb_kwargs  # noqa: B018


def test_to_dict_is_scrapy_219s():
    request = Request("http://a/")
    response = HtmlResponse(
        "http://a/", body=b"<html>x</html>", headers={"Content-Type": "text/html"},
        request=request, certificate="c", ip_address="127.0.0.1", protocol="HTTP/1.1")
    # Scrapy 2.19: the same dict, "_class" naming its own module
    assert response.to_dict() == {
        "headers": {b"Content-Type": [b"text/html"]}, "url": "http://a/",
        "body": b"<html>x</html>", "flags": [], "status": 200,
        "ip_address": ipaddress.IPv4Address("127.0.0.1"), "protocol": "HTTP/1.1",
        "encoding": "cp1252", "_class": "crawlfw.http.response.html.HtmlResponse",
    }
    assert Response("http://b/").to_dict() == {
        "headers": {}, "url": "http://b/", "body": b"", "flags": [], "status": 200,
        "ip_address": None, "protocol": None,
    }


@pytest.mark.parametrize("response", [
    Response("http://b/", status=302, headers={"Location": "/x"}, body=b"\x00\x01",
             flags=["cached"], ip_address="::1", protocol="HTTP/1.0"),
    HtmlResponse("http://a/", body="<p>caf\xe9</p>".encode("latin-1"), encoding="latin-1"),
    JsonResponse("http://j/", body=b'{"a": 1}', headers={"Content-Type": "application/json"}),
])
def test_response_from_dict_round_trip(response):
    d = pickle.loads(pickle.dumps(response.to_dict()))
    again = response_from_dict(d)
    assert type(again) is type(response)
    for name in response.attributes:
        if name not in ("request", "certificate"):
            assert getattr(again, name) == getattr(response, name), name
    assert type(response).from_dict(d).to_dict() == response.to_dict()


@pytest.mark.parametrize("d, cls", [
    ({"url": "http://x/a.html", "body": b"<html></html>"}, HtmlResponse),
    ({"url": "http://x/a", "headers": {"Content-Type": "application/json"}}, JsonResponse),
    ({"url": "http://x/a.bin", "body": b"\x00\x01"}, Response),
    ({"url": "http://x/", "_class": "scrapy.http.response.xml.XmlResponse"}, XmlResponse),
])
def test_response_from_dict_picks_the_class(d, cls):
    assert type(response_from_dict(d)) is cls


def test_response_from_dict_imports_nothing():
    with pytest.raises(ValueError, match="'os.system'.*not a Response subclass"):
        response_from_dict({"url": "http://x/", "_class": "os.system"})


def test_jmespath():
    with pytest.raises(NotSupported, match="Response content isn't text"):
        Response("http://x/", body=b"{}").jmespath("a")
    response = TextResponse("http://x/", body=b'{"a": [{"b": 1}, {"b": 2}]}',
                            headers={"Content-Type": "application/json"})
    assert response.jmespath("a[].b").getall() == [1, 2]


@pytest.mark.parametrize("cls", [Response, TextResponse])
def test_follow_takes_cb_kwargs_then_flags_by_position(cls):
    response = cls("http://example.com/a/", body=b"")
    args = (None, "GET", None, None, None, None, "utf-8", 0, False, None, {"k": 1}, ["f"])
    request = response.follow("b", *args)
    assert request.url == "http://example.com/a/b"
    assert (request.cb_kwargs, request.flags) == ({"k": 1}, ["f"])
    requests = list(response.follow_all(["b", "c"], *args))
    assert [(r.url, r.cb_kwargs, r.flags) for r in requests] == [
        ("http://example.com/a/b", {"k": 1}, ["f"]), ("http://example.com/a/c", {"k": 1}, ["f"])]


def test_response_follow_all_takes_follows_keywords():
    response = Response("http://example.com/")
    (request,) = response.follow_all(["x"], method="POST", priority=2, dont_filter=True)
    assert (request.method, request.priority, request.dont_filter) == ("POST", 2, True)
    with pytest.raises(ValueError, match="encoding can't be None"):
        response.follow("x", encoding=None)


# -- utils.response.get_meta_refresh ------------------------------------------------------


def _page(head: bytes) -> HtmlResponse:
    return HtmlResponse("http://a.com/x/y", body=b"<html><head>" + head + b"</head></html>")


@pytest.mark.parametrize("head, kwargs, expected", [
    (b'<meta http-equiv="refresh" content="5; url=next">', {}, (5.0, "http://a.com/x/next")),
    # resolved against the page's <base>, as Scrapy does
    (b'<base href="http://b.com/base/"><meta http-equiv=refresh content="0; url=next">', {},
     (0.0, "http://b.com/base/next")),
    (b'<noscript><meta http-equiv=refresh content="0; url=n"></noscript>', {}, (None, None)),
    (b'<noscript><meta http-equiv=refresh content="0; url=n"></noscript>',
     {"ignore_tags": ()}, (0.0, "http://a.com/x/n")),
    (b'<script><meta http-equiv=refresh content="0; url=n"></script>',
     {"ignore_tags": ["noscript"]}, (0.0, "http://a.com/x/n")),
    (b'<noscript><meta http-equiv=refresh content="0; url=n"></noscript>',
     {"ignore_tags": ["noscript", "script"]}, (None, None)),
])
def test_get_meta_refresh(head, kwargs, expected):
    assert get_meta_refresh(_page(head), **kwargs) == expected


def test_get_meta_refresh_ignore_tags_is_not_cached_across_calls():
    response = _page(b'<noscript><meta http-equiv=refresh content="0; url=n"></noscript>')
    assert get_meta_refresh(response) == (None, None)
    assert get_meta_refresh(response, ignore_tags=()) == (0.0, "http://a.com/x/n")
    assert get_meta_refresh(response) == (None, None)
