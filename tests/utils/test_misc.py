import sys
from io import BytesIO

import pytest

from crawlfw.item import Field, Item
from crawlfw.utils.misc import (
    arg_to_iter,
    create_instance,
    extract_regex,
    load_object,
    md5sum,
    rel_has_nofollow,
    walk_modules,
)


class TestItem(Item):
    __test__ = False
    name = Field()


def test_exported_names():
    import crawlfw.utils.misc as mod

    assert set(mod.__all__) == {"arg_to_iter", "load_object", "walk_modules", "extract_regex",
                                "md5sum", "create_instance", "rel_has_nofollow",
                                # Scrapy 2
                                "walk_modules_iter", "build_from_crawler",
                                "SupportsFromCrawler", "set_environ", "walk_callable",
                                "is_generator_with_return_value",
                                "warn_on_generator_with_return_value"}


@pytest.mark.parametrize("arg,expected", [
    (None, []),
    (100, [100]),
    ("lala", ["lala"]),
    (b"lala", [b"lala"]),
    ([1, 2, 3], [1, 2, 3]),
    ((1, 2), [1, 2]),
    ({"a": 1}, [{"a": 1}]),
])
def test_arg_to_iter(arg, expected):
    assert list(arg_to_iter(arg)) == expected


def test_arg_to_iter_keeps_iterables_and_wraps_items():
    gen = (x for x in "ab")
    assert arg_to_iter(gen) is gen
    item = TestItem(name="john")
    assert arg_to_iter(item) == [item]


def test_load_object():
    obj = load_object("crawlfw.utils.misc.load_object")
    assert obj is load_object
    assert load_object(load_object) is load_object  # already an object


@pytest.mark.parametrize("path,exc,message", [
    ("nodots", ValueError, "Error loading object 'nodots': not a full path"),
    ("crawlfw.utils.misc.nosuchname", NameError,
     "Module 'crawlfw.utils.misc' doesn't define any object named 'nosuchname'"),
])
def test_load_object_errors(path, exc, message):
    with pytest.raises(exc) as e:
        load_object(path)
    assert str(e.value) == message


def test_load_object_missing_module():
    with pytest.raises(ImportError):
        load_object("nomodule999.spam")


def test_load_object_bad_type():
    with pytest.raises(TypeError, match="expected string or object"):
        load_object(5)


@pytest.fixture
def test_package(tmp_path, monkeypatch):
    root = tmp_path / "walkpkg_x"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "mod1.py").write_text("A = 1\n")
    (root / "sub" / "__init__.py").write_text("")
    (root / "sub" / "mod2.py").write_text("B = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "walkpkg_x"
    for name in list(sys.modules):
        if name.startswith("walkpkg_x"):
            del sys.modules[name]


def test_walk_modules(test_package):
    names = sorted(m.__name__ for m in walk_modules(test_package))
    assert names == ["walkpkg_x", "walkpkg_x.mod1", "walkpkg_x.sub", "walkpkg_x.sub.mod2"]


def test_walk_modules_single_module(test_package):
    assert [m.__name__ for m in walk_modules("walkpkg_x.mod1")] == ["walkpkg_x.mod1"]


def test_walk_modules_missing():
    with pytest.raises(ImportError):
        walk_modules("nomodule999")


@pytest.mark.parametrize("regex,text,expected", [
    (r"Price: (?P<extract>\d+)", "Price: 100 and Price: 200", ["100"]),
    (r"(\w+)=(\d+)", "a=1 b=2", ["a", "1", "b", "2"]),
    (r"\d+", "1 22 333", ["1", "22", "333"]),
    (r"name: (\w+)", b"name: bob", ["bob"]),
    (r"t: (.*)", "t: a &amp; b &lt; c &gt; d &eacute;", ["a &amp; b &lt; c > d \xe9"]),
    (r"(?P<extract>x\d)", "nothing here", []),
])
def test_extract_regex(regex, text, expected):
    assert extract_regex(regex, text) == expected


def test_extract_regex_compiled_and_encoding():
    import re

    assert extract_regex(re.compile(r"v=(\w+)"), "v=\xe9".encode("latin-1"), "latin-1") == ["\xe9"]


def test_md5sum():
    assert md5sum(BytesIO(b"file content to hash")) == "784406af91dd5a54fbb9c84c2236595a"
    assert md5sum(BytesIO(b"")) == "d41d8cd98f00b204e9800998ecf8427e"
    big = b"x" * 100_000
    import hashlib

    assert md5sum(BytesIO(big)) == hashlib.md5(big).hexdigest()


class Plain:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class WithSettings(Plain):
    @classmethod
    def from_settings(cls, settings, *args, **kwargs):
        obj = cls(*args, **kwargs)
        obj.via = ("from_settings", settings)
        return obj


class WithCrawler(WithSettings):
    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        obj = cls(*args, **kwargs)
        obj.via = ("from_crawler", crawler)
        return obj


class ReturnsNone:
    @classmethod
    def from_settings(cls, settings):
        return None


class FakeCrawler:
    settings = "crawler-settings"


@pytest.mark.parametrize("cls,settings,crawler,via", [
    (WithCrawler, "s", "c", ("from_crawler", "c")),
    (WithCrawler, "s", None, ("from_settings", "s")),
    (WithSettings, "s", "c", ("from_settings", "s")),
    (Plain, "s", "c", None),
])
def test_create_instance(cls, settings, crawler, via):
    obj = create_instance(cls, settings, crawler, 1, k=2)
    assert obj.args == (1,) and obj.kwargs == {"k": 2}
    assert getattr(obj, "via", None) == via


def test_create_instance_settings_from_crawler():
    crawler = FakeCrawler()
    obj = create_instance(WithSettings, None, crawler)
    assert obj.via == ("from_settings", "crawler-settings")


def test_create_instance_needs_settings_or_crawler():
    with pytest.raises(ValueError, match="Specify at least one of settings and crawler"):
        create_instance(Plain, None, None)


def test_create_instance_factory_returning_none():
    with pytest.raises(TypeError, match="ReturnsNone.from_settings returned None"):
        create_instance(ReturnsNone, "s", None)


@pytest.mark.parametrize("rel,expected", [
    (None, False), ("", False), ("nofollow", True), ("nofollow noopener", True),
    ("noopener   nofollow", True), ("nofollowx", False), ("external", False),
])
def test_rel_has_nofollow(rel, expected):
    assert rel_has_nofollow(rel) is expected
