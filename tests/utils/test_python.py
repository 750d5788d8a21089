import errno
import functools
import gc
import operator
import os
import re
import warnings

import pytest

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.utils.python import (
    WeakKeyCache,
    binary_is_text,
    equal_attributes,
    flatten,
    get_func_args,
    get_spec,
    global_object_name,
    iflatten,
    is_listlike,
    is_writable,
    isbinarytext,
    memoizemethod_noargs,
    re_rsearch,
    retry_on_eintr,
    setattr_default,
    str_to_unicode,
    stringify_dict,
    to_bytes,
    to_native_str,
    to_unicode,
    unicode_to_str,
    unique,
    without_none_values,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([1, 2, [3, 4], (5, 6)], [1, 2, 3, 4, 5, 6]),
        ([[[[1]]], [2, [3]]], [1, 2, 3]),
        (["foo", "bar"], ["foo", "bar"]),
        (["foo", ["baz", 42], "bar"], ["foo", "baz", 42, "bar"]),
        ([b"ab", [b"cd"]], [b"ab", b"cd"]),
        ((x for x in [1, [2]]), [1, 2]),
        ([], []),
        ([{"a": 1}], ["a"]),  # dicts are list-like (their keys)
    ],
)
def test_flatten(value, expected):
    assert flatten(value) == expected


def test_iflatten_is_lazy():
    it = iflatten([1, [2, 3]])
    assert next(it) == 1
    assert list(it) == [2, 3]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("foo", False),
        (b"foo", False),
        (5, False),
        (None, False),
        (["foo"], True),
        (("foo",), True),
        ({"a"}, True),
        ({"a": 1}, True),
        ((x for x in "ab"), True),
        (range(3), True),
    ],
)
def test_is_listlike(value, expected):
    assert is_listlike(value) is expected


def test_unique():
    assert unique([3, 1, 3, 2, 1]) == [3, 1, 2]
    assert unique(["a", "A", "b"], key=str.lower) == ["a", "b"]
    assert unique([]) == []


@pytest.mark.parametrize(
    ("func", "value", "kwargs", "expected"),
    [
        (to_unicode, "lel\u00f1e", {}, "lel\u00f1e"),
        (to_unicode, b"lel\xc3\xb1e", {}, "lel\u00f1e"),
        (to_unicode, b"lel\xf1e", {"encoding": "latin-1"}, "lel\u00f1e"),
        (to_unicode, b"a\xedb", {"errors": "replace"}, "a\ufffdb"),
        (to_unicode, bytearray(b"ab"), {}, "ab"),
        (to_native_str, b"ab", {}, "ab"),
        (to_bytes, "lel\u00f1e", {}, b"lel\xc3\xb1e"),
        (to_bytes, "lel\u00f1e", {"encoding": "latin-1"}, b"lel\xf1e"),
        (to_bytes, b"raw", {}, b"raw"),
        (to_bytes, "a\u20acb", {"encoding": "latin-1", "errors": "replace"}, b"a?b"),
    ],
)
def test_text_conversions(func, value, kwargs, expected):
    result = func(value, **kwargs)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("func", "value", "message"),
    [
        (to_unicode, 1, "to_unicode must receive a bytes or str object, got int"),
        (to_unicode, None, "to_unicode must receive a bytes or str object, got NoneType"),
        (to_bytes, 1.5, "to_bytes must receive a str or bytes object, got float"),
        (to_bytes, ["a"], "to_bytes must receive a str or bytes object, got list"),
    ],
)
def test_text_conversion_type_errors(func, value, message):
    with pytest.raises(TypeError, match=message):
        func(value)


def test_strict_errors_raise():
    with pytest.raises(UnicodeDecodeError):
        to_unicode(b"\xff")
    with pytest.raises(UnicodeEncodeError):
        to_bytes("\u20ac", "latin-1")


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        (r"a+", "xaaxa", (4, 5)),
        (re.compile(r"<[^>]+>"), "<a><b>tail", (3, 6)),
        (r"z", "abc", None),
        (r"x", "x" + "y" * 3000, (0, 1)),  # found in the first (whole-text) chunk
        (r"END", "a" * 3000 + "END" + "b" * 10, (3000, 3003)),
    ],
)
def test_re_rsearch(pattern, text, expected):
    assert re_rsearch(pattern, text, chunk_size=1) == expected


def test_memoizemethod_noargs():
    class A:
        calls = 0

        @memoizemethod_noargs
        def cached(self):
            A.calls += 1
            return object()

    a, b = A(), A()
    assert a.cached() is a.cached()
    assert a.cached() is not b.cached()
    assert A.calls == 2


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"hello", True),
        (b"tab\tnew\nline\r\n and NUL \x00", True),
        (b"\xc3\xa9 non-ascii", True),
        (b"", True),
        (b"\x02\xde", False),
        (b"bell\x07", False),
        (b"esc\x1b", False),
    ],
)
def test_binary_is_text(data, expected):
    assert binary_is_text(data) is expected


def test_binary_is_text_type_error():
    with pytest.raises(TypeError, match="data must be bytes, got 'str'"):
        binary_is_text("text")


def _f1(a, b, c):
    pass


def _f2(a, b=None, c=None):
    pass


def _f3(a, b=None, *, c=None):
    pass


class _A:
    def __init__(self, a, b, c):
        pass

    def method(self, a, b, c):
        pass


class _Callable:
    def __call__(self, a, b, c):
        pass


@pytest.mark.parametrize(
    ("func", "expected"),
    [
        (_f1, ["a", "b", "c"]),
        (_f2, ["a", "b", "c"]),
        (_f3, ["a", "b", "c"]),
        (_A, ["a", "b", "c"]),
        (_A(1, 2, 3).method, ["a", "b", "c"]),
        (_Callable(), ["a", "b", "c"]),
        (functools.partial(_f1, None), ["b", "c"]),
        (functools.partial(_f1, b=None), ["a", "c"]),
        (functools.partial(_f1, None, c=None), ["b"]),
        (" ".join, []),
        (operator.itemgetter(2), []),
        (str.split, []),
    ],
)
def test_get_func_args(func, expected):
    assert get_func_args(func) == expected


def test_get_func_args_stripself_and_errors():
    assert get_func_args(_f1, stripself=True) == ["b", "c"]
    with pytest.raises(TypeError, match="is not callable"):
        get_func_args(5)


@pytest.mark.parametrize(
    ("func", "expected"),
    [
        (_f1, (["a", "b", "c"], {})),
        (_f2, (["a"], {"b": None, "c": None})),
        (_A(1, 2, 3).method, (["self", "a", "b", "c"], {})),
        (_Callable(), (["self", "a", "b", "c"], {})),
    ],
)
def test_get_spec(func, expected):
    assert get_spec(func) == expected


def test_get_spec_not_callable():
    with pytest.raises(TypeError):
        get_spec(5)


class _Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


@pytest.mark.parametrize(
    ("a", "b", "attributes", "expected"),
    [
        (_Obj(x=1, y=2), _Obj(x=1, y=3), ["x"], True),
        (_Obj(x=1, y=2), _Obj(x=1, y=3), ["x", "y"], False),
        (_Obj(x=1), _Obj(x=1), [], False),
        (_Obj(x=1), _Obj(x=1), None, False),
        (_Obj(x=1), _Obj(), ["x"], False),
        (_Obj(), _Obj(), ["missing"], False),
        (_Obj(x=[1, 2]), _Obj(x=[2, 1]), [lambda o: sorted(o.x)], True),
        (_Obj(x=[1, 2]), _Obj(x=[2, 3]), [lambda o: sorted(o.x)], False),
    ],
)
def test_equal_attributes(a, b, attributes, expected):
    assert equal_attributes(a, b, attributes) is expected


def test_weakkeycache():
    calls = []

    class K:
        pass

    cache = WeakKeyCache(lambda k: calls.append(type(k)) or len(calls))
    k1, k2 = K(), K()
    assert cache[k1] == 1
    assert cache[k1] == 1
    assert cache[k2] == 2
    del k1
    gc.collect()
    assert len(cache._weakdict) == 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": 1, "b": None, "c": 0}, {"a": 1, "c": 0}),
        ([1, None, 2], [1, 2]),
        ((None, "x"), ("x",)),
        ({}, {}),
    ],
)
def test_without_none_values(value, expected):
    assert without_none_values(value) == expected


def test_retry_on_eintr():
    attempts = []

    def flaky(x):
        attempts.append(x)
        if len(attempts) < 3:
            raise OSError(errno.EINTR, "interrupted")
        return x * 2

    assert retry_on_eintr(flaky, 21) == 42
    assert len(attempts) == 3

    def broken():
        raise OSError(errno.EBADF, "bad fd")

    with pytest.raises(OSError, match="bad fd"):
        retry_on_eintr(broken)


def test_global_object_name():
    from crawlfw.http import Request

    assert global_object_name(Request) == "crawlfw.http.request.Request"
    assert global_object_name(_f1) == "tests.utils.test_python._f1"


def test_is_writable(tmp_path):
    existing = tmp_path / "f.txt"
    existing.write_text("x")
    assert is_writable(str(existing))
    assert is_writable(str(tmp_path / "new.txt"))
    assert not is_writable(str(tmp_path / "missing-dir" / "new.txt"))
    if os.geteuid() != 0:  # root may write anywhere
        existing.chmod(0o444)
        assert not is_writable(str(existing))


def test_setattr_default():
    o = _Obj(a=1)
    setattr_default(o, "a", 2)
    setattr_default(o, "b", 3)
    assert (o.a, o.b) == (1, 3)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda: str_to_unicode(b"caf\xc3\xa9"), "caf\u00e9"),
        (lambda: unicode_to_str("caf\u00e9"), b"caf\xc3\xa9"),
        (lambda: isbinarytext(b"\x02binary"), True),
        (lambda: isbinarytext(b"text"), False),
        (lambda: stringify_dict({"a": "b"}), {b"a": "b"}),
        (lambda: stringify_dict([("a", "b")], keys_only=False), {b"a": b"b"}),
    ],
)
def test_deprecated_helpers_warn_and_work(call, expected):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert call() == expected
    assert [x.category for x in w] == [CrawlfwDeprecationWarning]
