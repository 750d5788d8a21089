import gc
import re

import pytest

from crawlfw.http import HtmlResponse, Request, Response
from crawlfw.utils import trackref


class Foo(trackref.object_ref):
    pass


class Bar(trackref.object_ref):
    pass


@pytest.fixture(autouse=True)
def _clean_live_refs():
    gc.collect()
    trackref.live_refs.pop(Foo, None)
    trackref.live_refs.pop(Bar, None)
    yield
    trackref.live_refs.pop(Foo, None)
    trackref.live_refs.pop(Bar, None)


def test_instances_are_tracked_weakly():
    objs = [Foo(), Foo(), Bar()]
    assert len(trackref.live_refs[Foo]) == 2
    assert len(trackref.live_refs[Bar]) == 1
    del objs
    gc.collect()
    assert len(trackref.live_refs[Foo]) == 0


def test_http_objects_are_tracked():
    r = Request("http://example.com/tracked")
    resp = HtmlResponse("http://example.com/tracked", body=b"")
    assert r in trackref.live_refs[Request]
    assert resp in trackref.live_refs[HtmlResponse]
    assert isinstance(Response("http://x.com"), trackref.object_ref)


def test_format_live_refs():
    objs = [Foo(), Foo(), Bar()]  # noqa: F841 - kept alive for the report
    text = trackref.format_live_refs()
    assert text.startswith("Live References\n\n")
    assert re.search(r"^Foo\s+2   oldest: \d+s ago$", text, re.M)
    assert re.search(r"^Bar\s+1   oldest: \d+s ago$", text, re.M)
    assert "Foo" not in trackref.format_live_refs(ignore=Foo)


def test_print_live_refs(capsys):
    obj = Foo()  # noqa: F841
    trackref.print_live_refs()
    assert re.search(r"^Foo\s+1", capsys.readouterr().out, re.M)


def test_get_oldest_and_iter_all():
    o1, o2 = Foo(), Foo()
    trackref.live_refs[Foo][o1] -= 10  # pretend it is older
    assert trackref.get_oldest("Foo") is o1
    assert set(trackref.iter_all("Foo")) == {o1, o2}
    assert trackref.get_oldest("NoSuchClass") is None
    assert trackref.iter_all("NoSuchClass") is None
    del o1, o2
    gc.collect()
    assert trackref.get_oldest("Foo") is None


def test_tracking_can_be_disabled(monkeypatch):
    monkeypatch.setattr(trackref, "enabled", False)
    obj = Foo()
    assert obj not in trackref.live_refs[Foo]
