"""``Request.cookies`` and ``Request.flags`` make their empty default on first read
(#20: most requests are dropped as duplicates before anyone reads them): on a table of
constructor arguments and operations (read, mutate, assign, delete, copy, replace,
serialize, pickle) they behave as Scrapy's plain attributes (``self.cookies = cookies or
{}``, ``self.flags = list(flags) if flags else []``), modelled by ``_Plain``."""

import copy
import pickle

import pytest

from crawlfw.http import FormRequest, Request
from crawlfw.utils.reqser import request_from_dict, request_to_dict


class _Plain:
    """Scrapy's Request.__init__ for the two attributes: the reference."""

    def __init__(self, cookies=None, flags=None):
        self.cookies = cookies or {}
        self.flags = list(flags) if flags else []


_COOKIES = [None, {}, {"a": "1"}, [{"name": "a", "value": "1"}], [], ""]
_FLAGS = [None, [], ["x"], ("y", "z"), ""]

_OPS = [
    ("read",), ("mutate",), ("read",), ("assign", None), ("read",), ("assign", {"b": 2}),
    ("read",), ("delete",), ("read",), ("delete",), ("assign", []), ("read",), ("mutate",),
    ("read",),
]


def _apply(obj, attr, op):
    kind = op[0]
    try:
        if kind == "read":
            value = getattr(obj, attr)
            return ("value", copy.deepcopy(value), type(value).__name__)
        if kind == "mutate":
            value = getattr(obj, attr)
            if isinstance(value, dict):
                value["m"] = 1
            else:
                value.append("m")
            return ("mutated",)
        if kind == "assign":
            setattr(obj, attr, copy.copy(op[1]))
            return ("assigned",)
        if kind == "delete":
            delattr(obj, attr)
            return ("deleted",)
    except (AttributeError, TypeError) as e:
        return (type(e).__name__, attr in str(e))
    raise AssertionError(op)


@pytest.mark.parametrize("cookies", _COOKIES)
@pytest.mark.parametrize("flags", _FLAGS)
def test_cookies_and_flags_behave_as_plain_attributes(cookies, flags):
    for attr in ("cookies", "flags"):
        plain = _Plain(copy.copy(cookies), copy.copy(flags))
        request = Request("http://e.com/", cookies=copy.copy(cookies), flags=copy.copy(flags))
        assert [_apply(request, attr, op) for op in _OPS] == [_apply(plain, attr, op) for op in _OPS]


def test_the_given_cookies_object_is_kept_and_flags_copied():
    cookies, flags = {"a": "1"}, ["f"]
    request = Request("http://e.com/", cookies=cookies, flags=flags)
    assert request.cookies is cookies and request.flags == flags and request.flags is not flags
    empty = Request("http://e.com/")
    assert empty.cookies is empty.cookies and empty.flags is empty.flags  # made once
    assert Request("http://e.com/").cookies is not empty.cookies  # one per request


@pytest.mark.parametrize("cookies", _COOKIES)
@pytest.mark.parametrize("flags", _FLAGS)
def test_copies_replace_serialization_and_pickles_keep_them(cookies, flags):
    request = Request("http://e.com/", cookies=copy.copy(cookies), flags=copy.copy(flags))
    expected = (_Plain(copy.copy(cookies)).cookies, _Plain(flags=copy.copy(flags)).flags)
    for other in (request.copy(), request.replace(url="http://e.com/2"), copy.copy(request),
                  copy.deepcopy(request), pickle.loads(pickle.dumps(request)),
                  request_from_dict(request_to_dict(request))):
        assert (other.cookies, other.flags) == expected
    form = FormRequest("http://e.com/", formdata={"a": "1"}, cookies=copy.copy(cookies),
                       flags=copy.copy(flags))
    assert (form.cookies, form.flags) == expected
    assert request_to_dict(request)["cookies"] == expected[0]
    assert request_to_dict(request)["flags"] == expected[1]


def test_a_deleted_attribute_stays_deleted_in_copies_and_pickles():
    request = Request("http://e.com/", cookies={"a": "1"}, flags=["f"])
    del request.cookies
    del request.flags
    for other in (copy.copy(request), copy.deepcopy(request), pickle.loads(pickle.dumps(request))):
        for attr in ("cookies", "flags"):
            with pytest.raises(AttributeError, match=attr):
                getattr(other, attr)
