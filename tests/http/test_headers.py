import copy
import pickle

import pytest

from crawlfw.http import Headers, Request


def test_case_insensitive_lookup_and_title_case_storage():
    h = Headers({"content-TYPE": "text/html"})
    for key in ("Content-Type", "content-type", "CONTENT-TYPE", b"content-type", b"Content-type"):
        assert h[key] == b"text/html"
        assert key in h
    assert list(h.keys()) == [b"Content-Type"]


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("text", [b"text"]),
        (b"bytes", [b"bytes"]),
        (42, [b"42"]),
        (["a", b"b", 3], [b"a", b"b", b"3"]),
        (("x", "y"), [b"x", b"y"]),
        (None, []),
        ("caf\u00e9", ["caf\u00e9".encode()]),
    ],
)
def test_values_are_normalised_to_lists_of_bytes(value, stored):
    h = Headers({"X-Test": value})
    assert h.getlist("x-test") == stored


def test_encoding_used_for_str_values():
    h = Headers({"X-Name": "caf\u00e9"}, encoding="latin-1")
    assert h["X-Name"] == b"caf\xe9"


@pytest.mark.parametrize("bad", [1.5, object(), {"a": 1}.keys])
def test_unsupported_value_type_raises_type_error(bad):
    # Scrapy 1.2.3's test_invalid_value: the message starts "Unsupported value type"
    with pytest.raises(TypeError, match="^Unsupported value type"):
        Headers({"X": bad})


def test_bad_name_type_raises_type_error_naming_it():
    with pytest.raises(TypeError, match="Header name must be str or bytes, got int"):
        Headers({1: "x"})


def test_bool_is_not_an_int_value():
    with pytest.raises(TypeError):
        Headers({"X": True})


def test_multi_values_getitem_is_last_getlist_is_all():
    h = Headers([("Set-Cookie", "a=1"), ("Accept", "*/*")])
    h.appendlist("set-cookie", "b=2")
    h.appendlist("Set-Cookie", ["c=3", "d=4"])
    assert h["Set-Cookie"] == b"d=4"
    assert h.get("set-cookie") == b"d=4"
    assert h.getlist("SET-COOKIE") == [b"a=1", b"b=2", b"c=3", b"d=4"]
    assert h.values() == [b"d=4", b"*/*"]
    assert h.items() == [
        (b"Set-Cookie", [b"a=1", b"b=2", b"c=3", b"d=4"]),
        (b"Accept", [b"*/*"]),
    ]


def test_missing_key():
    h = Headers()
    with pytest.raises(KeyError):
        h["X-Missing"]
    assert h.get("X-Missing") is None
    assert h.get("X-Missing", "dflt") == b"dflt"
    assert h.get("X-Missing", ["a", "b"]) == b"b"
    assert h.getlist("X-Missing") == []
    assert h.getlist("X-Missing", "dflt") == [b"dflt"]
    assert h.getlist("X-Missing", ["a", 1]) == [b"a", b"1"]
    assert "X-Missing" not in h


def test_empty_list_value_reads_as_none():
    h = Headers({"X-Empty": []})
    assert "X-Empty" in h
    assert h["X-Empty"] is None
    assert h.get("X-Empty") is None


def test_setlist_setdefault_setlistdefault():
    h = Headers()
    h.setlist("Accept", ["a", "b"])
    assert h.getlist("accept") == [b"a", b"b"]
    assert h.setdefault("accept", "z") == [b"a", b"b"]
    assert h.setdefault("X-New", "z") == [b"z"]
    assert h.setlistdefault("X-List", ["1", "2"]) == [b"1", b"2"]
    assert h.setlistdefault("x-list", ["9"]) == [b"1", b"2"]


def test_setitem_replaces_all_values():
    h = Headers({"X": ["1", "2"]})
    h["x"] = "3"
    assert h.getlist("X") == [b"3"]


def test_pop_delitem_len_iter():
    h = Headers({"A": "1", "B": ["2", "3"]})
    assert len(h) == 2
    assert list(h) == [b"A", b"B"]
    assert h.pop("b") == [b"2", b"3"]
    assert h.pop("b", "gone") == "gone"
    del h["a"]
    assert len(h) == 0
    with pytest.raises(KeyError):
        del h["a"]


def test_update_from_dict_pairs_and_headers():
    h = Headers({"A": "1"})
    h.update({"a": "2", "B": ["x", "y"]})
    h.update([("c", "3")])
    h.update(Headers({"D": ["4", "5"]}))
    assert h.getlist("A") == [b"2"]
    assert h.getlist("b") == [b"x", b"y"]
    assert h["C"] == b"3"
    assert h.getlist("d") == [b"4", b"5"]


def test_copy_does_not_share_lists_and_keeps_encoding():
    h = Headers({"A": ["1"]}, encoding="latin-1")
    for c in (h.copy(), copy.copy(h), copy.deepcopy(h), pickle.loads(pickle.dumps(h))):
        assert isinstance(c, Headers)
        assert c == h
        assert c.encoding == "latin-1"
        c.appendlist("A", "2")
        c["B"] = "new"
        assert h.getlist("A") == [b"1"]
        assert "B" not in h


def test_to_string():
    h = Headers([("Content-Type", "text/html"), ("Set-Cookie", ["a=1", "b=2"])])
    assert h.to_string() == b"Content-Type: text/html\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2"
    assert Headers().to_string() == b""


def test_to_unicode_dict_joins_values_with_commas():
    h = Headers({"Accept": ["a", "b"], "X-One": "caf\u00e9"})
    d = h.to_unicode_dict()
    assert d["accept"] == "a,b"
    assert d["X-ONE"] == "caf\u00e9"
    assert all(isinstance(k, str) for k in d)


def test_from_raw_pairs_fast_path():
    pairs = [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"Set-Cookie", b"a=1"),
        (b"set-cookie", b"b=2"),
        (b"X-Custom-HEADER", b"v"),
        ("x-str-name", "str value"),
    ]
    h = Headers.from_raw_pairs(pairs)
    assert isinstance(h, Headers)
    assert h.encoding == "utf-8"
    assert list(h.keys()) == [b"Content-Type", b"Set-Cookie", b"X-Custom-Header", b"X-Str-Name"]
    assert h.getlist("set-cookie") == [b"a=1", b"b=2"]
    assert h["x-str-name"] == b"str value"
    # it behaves like any other Headers object afterwards
    assert h == Headers(
        [
            ("Content-Type", "text/html; charset=utf-8"),
            ("Set-Cookie", ["a=1", "b=2"]),
            ("X-Custom-Header", "v"),
            ("X-Str-Name", "str value"),
        ]
    )
    h.appendlist("Set-Cookie", "c=3")
    assert h.getlist("SET-COOKIE") == [b"a=1", b"b=2", b"c=3"]


def test_from_raw_pairs_encoding():
    h = Headers.from_raw_pairs([("X", "caf\u00e9")], encoding="latin-1")
    assert h["x"] == b"caf\xe9"
    assert h.encoding == "latin-1"


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_empty_is_the_constructor_without_arguments(encoding):
    # Headers._empty: the Request hot path's shortcut for Headers(encoding=...)
    fast, slow = Headers._empty(encoding), Headers(encoding=encoding)
    assert type(fast) is Headers and fast == slow == {}
    assert vars(fast) == vars(slow)
    assert fast.encoding == slow.encoding == encoding
    fast["X-A"], slow["X-A"] = "\u00e9", "\u00e9"
    assert dict(fast) == dict(slow)
    request = Request("http://example.com/", encoding=encoding)
    assert type(request.headers) is Headers and vars(request.headers) == vars(slow)
    assert request.headers.encoding == encoding


def test_the_default_encoding_is_not_stored_and_other_attributes_still_work():
    # the default encoding is the class's (no instance dict per request); any other
    # is the instance's; copies, pickles and subclasses keep it, and an instance still
    # takes attributes of its own and weak references
    import copy
    import pickle
    import weakref

    assert "encoding" not in vars(Headers({"A": "1"})) and Headers().encoding == "utf-8"
    assert "encoding" not in vars(Headers.from_raw_pairs([(b"A", b"1")]))
    assert "encoding" not in vars(Request("http://e.com/").headers)
    for encoding in ("utf-8", "latin-1"):
        h = Headers({"A": "\u00e9"}, encoding=encoding)
        for other in (h.copy(), copy.copy(h), copy.deepcopy(h), pickle.loads(pickle.dumps(h)),
                      Headers.from_raw_pairs([("A", "\u00e9")], encoding=encoding),
                      Headers._empty(encoding), Request("http://e.com/", encoding=encoding).headers,
                      Request("http://e.com/", headers=h, encoding=encoding).headers):
            assert other.encoding == encoding and type(other) is Headers
        h.note = "mine"
        assert h.note == "mine" and weakref.ref(h)() is h
        h.encoding = "cp1252"
        assert h.encoding == "cp1252" and h.copy().encoding == "cp1252"
    # a request's encoding replaces the one of the headers it is given
    assert Request("http://e.com/", headers=Headers(encoding="latin-1")).headers.encoding == "utf-8"

    class MyHeaders(Headers):
        encoding = "latin-1"  # another class default

    m = MyHeaders({"B": "\u00e9"}, encoding="utf-8")
    assert m.encoding == "utf-8" and m[b"B"] == b"\xc3\xa9"
    for other in (m.copy(), MyHeaders._empty("utf-8"), MyHeaders.from_raw_pairs([], "utf-8")):
        assert other.encoding == "utf-8"
    assert MyHeaders().encoding == "utf-8"  # the constructor's default argument


def test_a_subclass_may_mix_in_a_class_with_slots():
    # no __slots__ on Request, Response or Headers: a mixin with slots of its own fits
    from crawlfw.http import HtmlResponse

    class Slotted:
        __slots__ = ("extra",)

    class SlottedDict(dict):
        __slots__ = ("more",)

    class MyRequest(Request, Slotted):
        pass

    class MyResponse(HtmlResponse, Slotted):
        pass

    class MyHeaders(Headers, SlottedDict):
        pass

    r = MyRequest("http://e.com/")
    r.extra = 1
    assert r.extra == 1 and r.url == "http://e.com/"
    assert MyResponse("http://e.com/", body=b"<p>x</p>").css("p::text").get() == "x"
    h = MyHeaders({"A": "1"})
    h.more = 2
    assert h[b"A"] == b"1" and h.more == 2
