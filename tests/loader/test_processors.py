"""Built-in processors (crawlfw.loader.processors) and wrap_loader_context."""

from functools import partial

import pytest

from crawlfw.item import Item
from crawlfw.loader.common import wrap_loader_context
from crawlfw.loader.processors import Compose, Identity, Join, MapCompose, SelectJmes, TakeFirst


@pytest.mark.parametrize(
    "values, expected",
    [
        ([None, "", "hello", "world"], "hello"),
        (["", None], None),
        ([], None),
        ([0, 1], 0),
        ([False], False),
        (iter(["", "x"]), "x"),
    ],
)
def test_take_first(values, expected):
    assert TakeFirst()(values) == expected


def test_identity():
    values = ["a", None, 3]
    assert Identity()(values) is values


@pytest.mark.parametrize(
    "separator, values, expected",
    [
        (None, ["one", "two", "three"], "one two three"),
        ("<br>", ["one", "two", "three"], "one<br>two<br>three"),
        ("", ["a", "b"], "ab"),
        (None, [], ""),
    ],
)
def test_join(separator, values, expected):
    proc = Join() if separator is None else Join(separator)
    assert proc(values) == expected


def _filter_world(x):
    return None if x == "world" else x


@pytest.mark.parametrize(
    "functions, value, expected",
    [
        ((_filter_world, str.upper), ["hello", "world", "this", "is", "scrapy"],
         ["HELLO", "THIS", "IS", "SCRAPY"]),
        ((str.upper,), "single", ["SINGLE"]),  # a non-iterable value is wrapped
        ((str.upper,), None, []),
        ((lambda x: [x, x * 2],), ["a", "b"], ["a", "aa", "b", "bb"]),  # lists flattened
        ((lambda x: None,), ["a", "b"], []),  # None results dropped
        ((str.strip, lambda x: x or None, int), [" 1 ", "  ", "2"], [1, 2]),
        ((), ["a"], ["a"]),
        ((lambda d: d["k"],), {"k": "v"}, ["v"]),  # a dict is one value
    ],
)
def test_map_compose(functions, value, expected):
    assert MapCompose(*functions)(value) == expected


def test_compose():
    proc = Compose(lambda v: v[0], str.upper)
    assert proc(["hello", "world"]) == "HELLO"
    assert Compose(lambda v: None, str.upper)(["x"]) is None  # stop_on_none
    with pytest.raises(ValueError, match="Error in Compose with .*upper.* value=None"):
        Compose(lambda v: None, str.upper, stop_on_none=False)(["x"])
    assert Compose(lambda v: v, len)(["a", "b"]) == 2


def test_processors_are_itemloaders_processors():
    import itemloaders.processors

    import crawlfw.loader.processors as ours

    for name in ours.__all__:
        theirs = getattr(itemloaders.processors, name)
        if name in ("MapCompose", "Compose"):  # subclasses keeping 1.2's error classes
            assert getattr(ours, name) is not theirs
            assert issubclass(getattr(ours, name), theirs)
        else:
            assert getattr(ours, name) is theirs


class TestScrapy123Processors:
    """Scrapy 1.2.3's ``tests/test_loader.py::ProcessorsTest``, renamed (unittest
    assertions written as pytest's)."""

    def test_take_first(self):
        proc = TakeFirst()
        assert proc([None, "", "hello", "world"]) == "hello"
        assert proc([None, "", 0, "hello", "world"]) == 0

    def test_identity(self):
        proc = Identity()
        assert proc([None, "", "hello", "world"]) == [None, "", "hello", "world"]

    def test_join(self):
        proc = Join()
        with pytest.raises(TypeError):
            proc([None, "", "hello", "world"])
        assert proc(["", "hello", "world"]) == " hello world"
        assert proc(["hello", "world"]) == "hello world"
        assert isinstance(proc(["hello", "world"]), str)

    def test_compose(self):
        proc = Compose(lambda v: v[0], str.upper)
        assert proc(["hello", "world"]) == "HELLO"
        proc = Compose(str.upper)
        assert proc(None) is None
        proc = Compose(str.upper, stop_on_none=False)
        with pytest.raises(TypeError):  # itemloaders alone raises a plain ValueError
            proc(None)

    def test_mapcompose(self):
        filter_world = lambda x: None if x == "world" else x  # noqa: E731
        proc = MapCompose(filter_world, str.upper)
        assert proc(["hello", "world", "this", "is", "scrapy"]) == [
            "HELLO", "THIS", "IS", "SCRAPY"]


def test_processor_errors_are_value_errors_of_the_function_class_too():
    # Scrapy 2 code catches ValueError (itemloaders' message, the cause kept); Scrapy 1.2
    # code catches the function's own error class.
    with pytest.raises(ValueError, match="Error in MapCompose with .*upper.* value=\\[None\\]") as e:
        MapCompose(str.upper)([None])
    assert isinstance(e.value, TypeError)
    assert isinstance(e.value.__cause__, TypeError)
    with pytest.raises(KeyError):  # nested: the innermost function's class survives
        MapCompose(Compose(lambda d: d["k"]))([{}])
    with pytest.raises(ZeroDivisionError):
        Compose(MapCompose(lambda v: 1 / v))([0])


def test_processor_errors_keep_the_original_class_as_in_1_2():
    # Scrapy 1.2.3's test_compose and test_join: the original TypeError is what callers
    # catch. The processors are itemloaders' now (issue 17), which raise a ValueError
    # from it; a loader running them raises an error of the original class again.
    from crawlfw.loader import ItemLoader

    with pytest.raises(ValueError, match="Error in Compose with .*upper.* value=None") as excinfo:
        Compose(str.upper, stop_on_none=False)(None)
    assert isinstance(excinfo.value.__cause__, TypeError)
    assert Compose(str.upper)(None) is None
    with pytest.raises(ValueError, match="Error in MapCompose with .*upper.* value=\\[None\\]"):
        MapCompose(str.upper)([None])
    with pytest.raises(TypeError, match="Error with processor MapCompose"):
        ItemLoader(item={}).get_value([None], MapCompose(str.upper))
    with pytest.raises(KeyError) as excinfo:
        ItemLoader(item={}).add_value("x", [{}], MapCompose(lambda d: d["k"]))
    assert isinstance(excinfo.value, ValueError)
    filter_world = lambda x: None if x == "world" else x  # noqa: E731
    assert MapCompose(filter_world, str.upper)(["hello", "world", "this"]) == ["HELLO", "THIS"]
    with pytest.raises(TypeError):
        Join()([None, "", "hello"])


@pytest.mark.parametrize(
    "proc, value, match",
    [
        (MapCompose(int), ["1", "x"],
         r"Error in MapCompose with <class 'int'> value=\['1', 'x'\] error='ValueError: invalid literal"),
        (MapCompose(str.upper, float), ["nan?"],
         r"Error in MapCompose with <class 'float'> value=\['nan\?'\] error='ValueError: .*'NAN\?'"),
        (Compose(lambda v: v[5]), ["a"],
         r"Error in Compose with .*<lambda>.* value=\['a'\] error='IndexError: list index out of range'"),
    ],
)
def test_processor_errors_name_function_and_value(proc, value, match):
    with pytest.raises(ValueError, match=match):
        proc(value)


def _with_context(value, loader_context):
    return f"{value}-{loader_context['unit']}"


def test_processor_context():
    assert MapCompose(_with_context, unit="cm")(["1"]) == ["1-cm"]
    # The loader's context takes precedence over the processor's defaults.
    assert MapCompose(_with_context, unit="cm")(["1"], loader_context={"unit": "in"}) == ["1-in"]
    assert MapCompose(_with_context, unit="cm")(["1"], loader_context={"other": 1}) == ["1-cm"]
    assert Compose(lambda v: v[0], _with_context, unit="m")(["2"]) == "2-m"
    assert Compose(lambda v: v[0], _with_context)(["2"], loader_context={"unit": "km"}) == "2-km"


class _Callable:
    def __call__(self, value, loader_context=None):
        return (value, loader_context)


class _Method:
    def method(self, value, loader_context):
        return (value, loader_context)

    def plain(self, value):
        return value


@pytest.mark.parametrize(
    "function, wrapped",
    [
        (_with_context, True),
        (lambda v: v, False),
        (str.upper, False),
        (int, False),
        (_Callable(), True),
        (_Method().method, True),
        (_Method().plain, False),
        (partial(_with_context), True),
        (partial(_with_context, loader_context={}), False),
        (MapCompose(str.upper), True),
        (TakeFirst(), False),
    ],
)
def test_wrap_loader_context(function, wrapped):
    context = {"unit": "x"}
    result = wrap_loader_context(function, context)
    if wrapped:
        assert isinstance(result, partial) and result.keywords["loader_context"] is context
    else:
        assert result is function
    # a second call (cached) gives the same answer
    assert (wrap_loader_context(function, context) is not function) is wrapped


def test_wrap_loader_context_does_not_keep_functions_alive():
    import gc
    import weakref

    def make():
        return lambda value, loader_context: value

    fn = make()
    ref = weakref.ref(fn)
    wrap_loader_context(fn, {})
    del fn
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize(
    "expression, value, expected",
    [
        ("foo", {"foo": "bar"}, "bar"),
        ("foo", {"foo": {"bar": "baz"}}, {"bar": "baz"}),
        ("foo.bar", {"foo": {"bar": "baz"}}, "baz"),
        ("foo.bar.baz", {"foo": {"bar": "baz"}}, None),
        ("foo[0].bar", {"foo": [{"bar": 1}, {"bar": 2}]}, 1),
        ("foo[*].bar", {"foo": [{"bar": 1}, {"bar": 2}]}, [1, 2]),
    ],
)
def test_select_jmes(expression, value, expected):
    pytest.importorskip("jmespath")
    assert SelectJmes(expression)(value) == expected


def test_select_jmes_in_map_compose():
    pytest.importorskip("jmespath")
    proc = MapCompose(SelectJmes("name"))
    assert proc([{"name": "a"}, {"name": "b"}, {"other": 1}]) == ["a", "b"]


def test_map_compose_keeps_items_whole():
    class It(Item):
        pass

    item = It()
    assert MapCompose(lambda x: x)(item) == [item]
