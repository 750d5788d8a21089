from urllib.parse import parse_qs, parse_qsl, urlparse

import pytest

from crawlfw.http import FormRequest, HtmlResponse, Request, Response


def _qs(req, keep_blank_values=True):
    data = req.body if req.method == "POST" else urlparse(req.url).query.encode()
    return parse_qs(data.decode(req.encoding), keep_blank_values=keep_blank_values)


def _response(body: str, url="http://www.example.com/this/get.php", **kw) -> HtmlResponse:
    return HtmlResponse(url, body=body.encode("utf-8"), encoding=kw.pop("encoding", "utf-8"), **kw)


# --- FormRequest constructor ------------------------------------------------------------


def test_no_formdata_is_a_plain_get():
    r = FormRequest("http://www.example.com")
    assert r.method == "GET"
    assert r.body == b""
    assert b"Content-Type" not in r.headers


def test_empty_formdata_keeps_method():
    r = FormRequest("http://www.example.com", formdata={})
    assert r.method == "GET"
    assert r.body == b""


def test_formdata_makes_a_urlencoded_post():
    r = FormRequest("http://www.example.com", formdata={"one": "two", "price": "\u00a3 100"})
    assert r.method == "POST"
    assert r.headers["Content-Type"] == b"application/x-www-form-urlencoded"
    assert r.body == b"one=two&price=%C2%A3+100"


def test_formdata_uses_request_encoding():
    r = FormRequest("http://www.example.com", formdata={"price": "\u00a3 100"}, encoding="latin1")
    assert r.body == b"price=%A3+100"


@pytest.mark.parametrize(
    "formdata",
    [
        [("a", "1"), ("b", "2"), ("a", "3")],
        {"a": ["1", "3"], "b": "2"},
    ],
)
def test_formdata_multivalued(formdata):
    r = FormRequest("http://www.example.com", formdata=formdata)
    assert parse_qsl(r.body.decode()) in (
        [("a", "1"), ("b", "2"), ("a", "3")],
        [("a", "1"), ("a", "3"), ("b", "2")],
    )


def test_explicit_content_type_is_kept():
    r = FormRequest(
        "http://www.example.com", formdata={"a": "1"}, headers={"Content-Type": "text/plain"}
    )
    assert r.headers["Content-Type"] == b"text/plain"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://www.example.com/path", "http://www.example.com/path?a=1&b=x+y"),
        ("http://www.example.com/path?q=0", "http://www.example.com/path?q=0&a=1&b=x+y"),
        ("http://www.example.com/path#frag", "http://www.example.com/path?a=1&b=x+y#frag"),
    ],
)
def test_get_formdata_goes_to_query_string(url, expected):
    r = FormRequest(url, method="GET", formdata=[("a", "1"), ("b", "x y")])
    assert r.method == "GET"
    assert r.body == b""
    assert r.url == expected


def test_formrequest_is_a_request():
    assert issubclass(FormRequest, Request)


# --- from_response: which form ----------------------------------------------------------

_TWO_FORMS = """
<html><body>
<form name="form1" id="f1" action="post1.php" method="POST">
  <input type="hidden" name="one" value="1">
</form>
<div class="wrap">
<form name="form2" id="f2" action="post2.php" method="POST">
  <p><input type="hidden" name="two" value="2"></p>
</form>
</div>
</body></html>
"""


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({}, "one"),
        ({"formnumber": 1}, "two"),
        ({"formname": "form2"}, "two"),
        ({"formname": "nonexistent"}, "one"),  # falls back to formnumber=0
        ({"formname": "nonexistent", "formnumber": 1}, "two"),
        ({"formid": "f2"}, "two"),
        ({"formid": "nonexistent", "formnumber": 1}, "two"),
        ({"formxpath": "//form[@action='post2.php']"}, "two"),
        ({"formxpath": "//input[@name='two']"}, "two"),  # goes up to the form
        ({"formcss": "form#f2"}, "two"),
        ({"formcss": "div.wrap input"}, "two"),
        ({"formname": "form1", "formid": "f2"}, "one"),  # formname wins
    ],
)
def test_form_selection(kwargs, field):
    r = FormRequest.from_response(_response(_TWO_FORMS), **kwargs)
    assert list(_qs(r)) == [field]


@pytest.mark.parametrize(
    ("kwargs", "exc", "message"),
    [
        ({"formnumber": 2}, IndexError, r"Form number 2 not found in <200 http://www\."),
        ({"formxpath": "//form/input[@name='three']"}, ValueError, "No <form> element found with"),
        ({"formcss": "form#nope"}, ValueError, "No <form> element found with"),
        ({"formxpath": "//div[@class='wrap']"}, ValueError, "No <form> element found with"),
    ],
)
def test_form_selection_errors(kwargs, exc, message):
    with pytest.raises(exc, match=message):
        FormRequest.from_response(_response(_TWO_FORMS), **kwargs)


def test_no_form_raises_clear_error():
    resp = _response("<html><body><p>nothing here</p></body></html>")
    with pytest.raises(
        ValueError, match=r"No <form> element found in <200 http://www.example.com/this/get.php>"
    ):
        FormRequest.from_response(resp)


def test_empty_body_raises_no_form():
    with pytest.raises(ValueError, match="No <form> element found in"):
        FormRequest.from_response(_response(""))


# --- from_response: url, method, encoding -----------------------------------------------


@pytest.mark.parametrize(
    ("form", "kwargs", "method", "url"),
    [
        (
            '<form action="post.php" method="POST">',
            {},
            "POST",
            "http://www.example.com/this/post.php",
        ),
        (
            '<form action="/abs/post.php" method="post">',
            {},
            "POST",
            "http://www.example.com/abs/post.php",
        ),
        ("<form>", {}, "GET", "http://www.example.com/this/get.php?a=1"),  # no action: the page
        ('<form action="">', {}, "GET", "http://www.example.com/this/get.php?a=1"),
        ('<form action="  next.php\n">', {}, "GET", "http://www.example.com/this/next.php?a=1"),
        ('<form action="http://other.org/x" method="GET">', {}, "GET", "http://other.org/x?a=1"),
        (
            '<form action="post.php" method="POST">',
            {"url": "override.php"},
            "POST",
            "http://www.example.com/this/override.php",
        ),
        (
            '<form action="post.php" method="POST">',
            {"method": "PUT"},
            "PUT",
            "http://www.example.com/this/post.php?a=1",
        ),  # only POST gets a body
    ],
)
def test_form_url_and_method(form, kwargs, method, url):
    resp = _response(
        f'<html><body>{form}<input type="hidden" name="a" value="1"></form></body></html>'
    )
    r = FormRequest.from_response(resp, **kwargs)
    assert r.method == method
    assert r.url == url
    if method == "POST":
        assert r.body == b"a=1"
        assert r.headers["Content-Type"] == b"application/x-www-form-urlencoded"


def test_base_href_is_honoured():
    resp = _response(
        '<html><head><base href="http://b.example.org/dir/"></head><body>'
        '<form action="post.php" method="POST"><input name="a" value="1"></form></body></html>'
    )
    assert FormRequest.from_response(resp).url == "http://b.example.org/dir/post.php"


def test_encoding_defaults_to_response_encoding():
    body = (
        '<html><body><form action="p" method="POST">'
        '<input name="price" value="\u00a3 5"></form></body></html>'
    ).encode("latin-1")
    resp = HtmlResponse(
        "http://www.example.com/", body=body, headers={"Content-Type": "text/html; charset=latin-1"}
    )
    r = FormRequest.from_response(resp)
    assert r.encoding == "cp1252"
    assert r.body == b"price=%A3+5"


def test_extra_kwargs_reach_the_request():
    def parse_result(response):
        return None

    resp = _response('<form action="p" method="POST"><input name="a" value="1"></form>')
    r = FormRequest.from_response(
        resp, callback=parse_result, meta={"k": 1}, dont_filter=True, priority=4
    )
    assert r.callback is parse_result
    assert r.meta == {"k": 1}
    assert r.dont_filter is True
    assert r.priority == 4


def test_from_response_with_subclass():
    class MyFormRequest(FormRequest):
        pass

    resp = _response('<form action="p" method="POST"><input name="a" value="1"></form>')
    assert type(MyFormRequest.from_response(resp)) is MyFormRequest


# --- from_response: fields ---------------------------------------------------------------

_FIELDS = """
<form action="post.php" method="POST">
  <input type="hidden" name="hidden" value="h">
  <input name="notype" value="n">
  <input type="text" name="empty">
  <input type="text" value="no name">
  <input type="checkbox" name="cb_on" value="yes" checked>
  <input type="checkbox" name="cb_off" value="no">
  <input type="checkbox" name="cb_novalue" checked>
  <input type="radio" name="radio" value="r1">
  <input type="radio" name="radio" value="r2" checked>
  <input type="reset" name="reset" value="R">
  <input type="image" name="image" src="x.png">
  <input type="password" name="pw" value="secret">
  <select name="sel_none"><option value="a">A</option><option value="b">B</option></select>
  <select name="sel_one"><option value="a">A</option><option value="b" selected>B</option></select>
  <select name="sel_textonly"><option>  Text value </option></select>
  <select name="sel_empty"></select>
  <select name="sel_multi" multiple>
    <option value="m1" selected>1</option><option value="m2">2</option>
    <option selected> m3 </option>
  </select>
  <select name="sel_multi_none" multiple><option value="x">X</option></select>
  <textarea name="ta">line one
line two</textarea>
  <textarea name="ta_empty"></textarea>
</form>
"""


def test_fields_collected_like_a_browser():
    r = FormRequest.from_response(_response(_FIELDS))
    fs = _qs(r)
    assert fs == {
        "hidden": ["h"],
        "notype": ["n"],
        "empty": [""],
        "cb_on": ["yes"],
        "cb_novalue": ["on"],
        "radio": ["r2"],
        "pw": ["secret"],
        "sel_none": ["a"],
        "sel_one": ["b"],
        "sel_textonly": ["Text value"],
        "sel_multi": ["m1", "m3"],
        "ta": ["line one\nline two"],
        "ta_empty": [""],
    }


@pytest.mark.parametrize(
    ("formdata", "expected"),
    [
        ({"hidden": "override"}, {"hidden": ["override"], "other": ["o"]}),
        ({"new": "added"}, {"hidden": ["h"], "other": ["o"], "new": ["added"]}),
        ([("hidden", "x")], {"hidden": ["x"], "other": ["o"]}),
        ({"hidden": None}, {"other": ["o"]}),  # None removes a field
        ({"hidden": ["a", "b"]}, {"hidden": ["a", "b"], "other": ["o"]}),
    ],
)
def test_formdata_overrides_fields(formdata, expected):
    resp = _response(
        '<form action="p" method="POST"><input type="hidden" name="hidden" value="h">'
        '<input type="hidden" name="other" value="o"></form>'
    )
    assert _qs(FormRequest.from_response(resp, formdata=formdata)) == expected


@pytest.mark.parametrize("bad", [1, "ab", [("a",)]])
def test_bad_formdata(bad):
    resp = _response('<form action="p"><input name="a" value="1"></form>')
    with pytest.raises(ValueError, match="formdata should be a dict or an iterable"):
        FormRequest.from_response(resp, formdata=bad)


def test_get_form_puts_fields_in_query():
    resp = _response(
        '<form action="get.php" method="GET"><input type="hidden" name="a" value="1">'
        '<input type="hidden" name="b" value="x y"></form>'
    )
    r = FormRequest.from_response(resp)
    assert r.method == "GET"
    assert r.url == "http://www.example.com/this/get.php?a=1&b=x+y"
    assert r.body == b""


# --- from_response: clickables ----------------------------------------------------------

_CLICKABLES = """
<form action="post.php" method="POST">
  <input type="hidden" name="one" value="1">
  <input type="submit" name="clickable1" value="clicked1">
  <input type="submit" name="clickable2" value="clicked2">
  <button name="button_notype" value="bn">B</button>
  <input type="SUBMIT" name="upper" value="up">
  <input type="submit" name="dup" value="d">
  <input type="submit" name="dup" value="d">
</form>
"""


@pytest.mark.parametrize(
    ("kwargs", "clicked"),
    [
        ({}, ("clickable1", "clicked1")),
        ({"clickdata": {"name": "clickable2"}}, ("clickable2", "clicked2")),
        ({"clickdata": {"value": "clicked2"}}, ("clickable2", "clicked2")),
        ({"clickdata": {"name": "button_notype"}}, ("button_notype", "bn")),
        ({"clickdata": {"name": "upper", "value": "up"}}, ("upper", "up")),
        ({"clickdata": {"nr": 2}}, ("clickable2", "clicked2")),  # index among form inputs
    ],
)
def test_clickdata(kwargs, clicked):
    fs = _qs(FormRequest.from_response(_response(_CLICKABLES), **kwargs))
    assert fs.pop("one") == ["1"]
    assert fs == {clicked[0]: [clicked[1]]}


@pytest.mark.parametrize("clickdata", [{"nr": 99}, {"nr": 1}, {"nr": 99, "name": "clickable1"}])
def test_clickdata_nr_out_of_range_raises(clickdata):
    # Scrapy 1.2.3's test_from_response_invalid_nr_index_clickdata: an "nr" matching no
    # input stays a criterion, so nothing matches
    one_clickable = _response(
        '<form action="p"><input type="submit" name="clickable" value="clicked"></form>'
    )
    with pytest.raises(ValueError, match="No clickable element matching clickdata"):
        FormRequest.from_response(one_clickable, clickdata=clickdata)
    if clickdata["nr"] == 99:
        with pytest.raises(ValueError, match="No clickable element matching clickdata"):
            FormRequest.from_response(_response(_CLICKABLES), clickdata=clickdata)


def test_dont_click():
    fs = _qs(FormRequest.from_response(_response(_CLICKABLES), dont_click=True))
    assert fs == {"one": ["1"]}


def test_clickable_without_value_sends_empty_string():
    resp = _response('<form action="p" method="POST"><input type="submit" name="go"></form>')
    assert _qs(FormRequest.from_response(resp)) == {"go": [""]}


def test_clickable_without_name_is_not_sent():
    resp = _response(
        '<form action="p" method="POST"><input name="a" value="1"><input type="submit" value="Go"></form>'
    )
    assert _qs(FormRequest.from_response(resp)) == {"a": ["1"]}


def test_clickable_overridden_by_formdata():
    fs = _qs(FormRequest.from_response(_response(_CLICKABLES), formdata={"clickable1": "mine"}))
    assert fs == {"one": ["1"], "clickable1": ["mine"]}


@pytest.mark.parametrize(
    ("clickdata", "message"),
    [
        ({"name": "nonexistent"}, "No clickable element matching clickdata"),
        ({"name": "dup"}, "Multiple elements found"),
    ],
)
def test_clickdata_errors(clickdata, message):
    with pytest.raises(ValueError, match=message):
        FormRequest.from_response(_response(_CLICKABLES), clickdata=clickdata)


def test_clickdata_value_with_quotes_is_safe():
    resp = _response(
        """<form action="p" method="POST"><input type="submit" name="q" value='say "hi"'></form>"""
    )
    fs = _qs(FormRequest.from_response(resp, clickdata={"value": 'say "hi"'}))
    assert fs == {"q": ['say "hi"']}


def test_formname_with_quotes_is_safe():
    resp = _response(
        """<form name='a"b' action="x" method="POST"><input name="f" value="1"></form>"""
    )
    assert _qs(FormRequest.from_response(resp, formname='a"b')) == {"f": ["1"]}


# --- real pages --------------------------------------------------------------------------


def test_real_page_without_form_raises(sites_dir):
    body = (sites_dir / "quotes.toscrape.com" / "index.html").read_bytes()
    resp = HtmlResponse("http://quotes.toscrape.com/", body=body)
    with pytest.raises(
        ValueError, match=r"^No <form> element found in <200 http://quotes\.toscrape\.com/>$"
    ):
        FormRequest.from_response(resp)


def test_real_sphinx_search_form(sites_dir):
    body = (sites_dir / "scrapy-docs-2019" / "faq.html").read_bytes()
    resp = HtmlResponse(
        "https://docs.scrapy.org/en/latest/faq.html",
        body=body,
        headers={"Content-Type": "text/html; charset=utf-8"},
    )
    r = FormRequest.from_response(resp, formid="rtd-search-form", formdata={"q": "xpath"})
    assert r.method == "GET"
    parsed = urlparse(r.url)
    assert parsed.path == "/en/latest/search.html"
    assert parse_qs(parsed.query) == {
        "q": ["xpath"],
        "check_keywords": ["yes"],
        "area": ["default"],
    }


def test_binary_response_is_refused():
    resp = Response("http://www.example.com/x.bin", body=b"\x00\x01")
    with pytest.raises(
        TypeError, match=r"from_response needs a TextResponse \(e.g. HtmlResponse\), got Response"
    ):
        FormRequest.from_response(resp)
