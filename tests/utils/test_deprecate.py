import warnings

import pytest

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.utils.deprecate import (
    create_deprecated_class,
    method_is_overridden,
    update_classpath,
)


class MyWarning(UserWarning):
    pass


class NewName:
    pass


def _deprecated(**kw):
    kw.setdefault("warn_category", MyWarning)
    return create_deprecated_class("Deprecated", NewName, **kw)


def test_subclass_warns_once():
    Deprecated = _deprecated()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")

        class UserClass(Deprecated):
            pass

        class UserClass2(Deprecated):
            pass

    assert len(w) == 1
    msg = str(w[0].message)
    assert "UserClass inherits from deprecated class" in msg
    assert f"{__name__}.Deprecated" in msg and f"{__name__}.NewName" in msg
    assert "(warning only on first subclass, there may be others)" in msg
    assert w[0].category is MyWarning


def test_subclass_warns_every_time_without_warn_once():
    Deprecated = _deprecated(warn_once=False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")

        class A(Deprecated):
            pass

        class B(Deprecated):
            pass

    assert len(w) == 2


def test_instantiation_warns_only_for_deprecated_class():
    Deprecated = _deprecated(new_class_path="new.Path")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")

        class Sub(Deprecated):
            pass

        w.clear()
        Sub()
        assert w == []
        Deprecated()
    assert len(w) == 1
    assert str(w[0].message) == f"{__name__}.Deprecated is deprecated, instantiate new.Path instead."


def test_isinstance_and_issubclass():
    Deprecated = _deprecated()

    class NewSub(NewName):
        pass

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        class OldSub(Deprecated):
            pass

    assert issubclass(NewSub, Deprecated)
    assert isinstance(NewSub(), Deprecated)
    assert issubclass(OldSub, Deprecated)
    assert issubclass(OldSub, NewName)
    assert not issubclass(OldSub, NewSub)
    assert not issubclass(int, Deprecated)
    with pytest.raises(TypeError):
        issubclass(object(), Deprecated)


def test_module_is_caller():
    assert _deprecated().__module__ == __name__


@pytest.mark.parametrize("old,new", [
    ("crawlfw.contrib.downloadermiddleware.retry.RetryMiddleware",
     "crawlfw.downloadermiddlewares.retry.RetryMiddleware"),
    ("crawlfw.contrib.pipeline.images.ImagesPipeline", "crawlfw.pipelines.images.ImagesPipeline"),
    ("crawlfw.contrib.feedexport.FeedExporter", "crawlfw.extensions.feedexport.FeedExporter"),
    ("crawlfw.telnet.TelnetConsole", "crawlfw.extensions.telnet.TelnetConsole"),
    ("crawlfw.statscol.MemoryStatsCollector", "crawlfw.statscollectors.MemoryStatsCollector"),
    ("crawlfw.spidermanager.SpiderManager", "crawlfw.spiderloader.SpiderLoader"),
    ("scrapy.downloadermiddlewares.retry.RetryMiddleware",
     "crawlfw.downloadermiddlewares.retry.RetryMiddleware"),
    ("scrapy.contrib.spiders.CrawlSpider", "crawlfw.spiders.CrawlSpider"),
])
def test_update_classpath(old, new):
    with pytest.warns(CrawlfwDeprecationWarning, match=f"`{old}` class is deprecated"):
        assert update_classpath(old) == new


@pytest.mark.parametrize("path", ["crawlfw.downloadermiddlewares.retry.RetryMiddleware",
                                  "myproject.pipelines.P", NewName])
def test_update_classpath_unchanged(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert update_classpath(path) is path


class Base:
    def method(self):
        pass


class Overrides(Base):
    def method(self):
        pass


class Inherits(Base):
    pass


class InheritsOverride(Overrides):
    pass


@pytest.mark.parametrize("cls,expected", [
    (Base, False), (Overrides, True), (Inherits, False), (InheritsOverride, True),
])
def test_method_is_overridden(cls, expected):
    assert method_is_overridden(cls, Base, "method") is expected
