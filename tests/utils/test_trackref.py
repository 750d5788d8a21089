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


class Baz(trackref.object_ref):
    """A subclass with its own __new__ (wrapped by object_ref to record what it returns)."""

    def __new__(cls, *args, **kwargs):
        return super().__new__(cls)

    def __init__(self, value):
        self.value = value


class Sub(Foo):
    pass


class MyRequest(Request):
    def __init__(self, url, extra=None, **kwargs):
        super().__init__(url, **kwargs)
        self.extra = extra


def test_every_kind_of_subclass_is_tracked_under_its_own_class():
    from crawlfw import Item, Spider
    from crawlfw.http import FormRequest

    class MyItem(Item):
        pass

    class MySpider(Spider):
        name = "s"

    try:
        objs = [Baz(1), Sub(), MyRequest("http://example.com/my", extra=1),
                FormRequest("http://example.com/form", formdata={"a": "1"}),
                HtmlResponse("http://example.com/h", body=b""), MyItem(), MySpider()]
        for obj in objs:
            assert obj in trackref.live_refs[type(obj)], type(obj)
            assert list(trackref.live_refs[type(obj)]).count(obj) == 1
            assert isinstance(trackref.live_refs[type(obj)][obj], float)
        assert Baz(2).value == 2
        assert Sub not in {type(o) for o in trackref.live_refs[Foo]}
        del objs, obj
        gc.collect()
        for cls in (Baz, Sub, MyRequest, MyItem, MySpider):
            assert len(trackref.live_refs[cls]) == 0, cls
    finally:
        for cls in (Baz, Sub, MyRequest, MyItem, MySpider):
            trackref.live_refs.pop(cls, None)


def test_requests_and_responses_record_themselves_in_init_not_in_new(monkeypatch):
    # the hot path: Request() and Response() record in __init__; their __new__ only
    # makes the instance (and takes the constructor's arguments)
    assert Request.__new__ is trackref._plain_new
    assert HtmlResponse.__new__ is trackref._plain_new
    assert Foo.__new__ is not object.__new__
    gc.collect()
    before = len(trackref.live_refs[Request])
    r = Request("http://example.com/in-init")
    assert len(trackref.live_refs[Request]) == before + 1
    assert trackref.live_refs[Request][r] <= trackref.time()
    monkeypatch.setattr(trackref, "enabled", False)
    assert Request("http://example.com/off") not in trackref.live_refs[Request]
    assert HtmlResponse("http://example.com/off", body=b"") not in trackref.live_refs[HtmlResponse]
    del r
    gc.collect()
    assert len(trackref.live_refs[Request]) == before


def test_a_request_subclass_may_pass_the_arguments_on_to_its_parents_new():
    # Scrapy's object_ref.__new__ takes *args, **kwargs: a subclass's own __new__ that
    # forwards them (super().__new__(cls, *args, **kwargs)) works, and is recorded.
    class ForwardingRequest(Request):
        def __new__(cls, *args, **kwargs):
            return super().__new__(cls, *args, **kwargs)

    class ForwardingResponse(HtmlResponse):
        def __new__(cls, *args, **kwargs):
            return super().__new__(cls, *args, **kwargs)

    try:
        r = ForwardingRequest("http://example.com/fwd", meta={"a": 1})
        h = ForwardingResponse("http://example.com/fwd", body=b"<p>x</p>")
        assert r.meta == {"a": 1} and h.body == b"<p>x</p>"
        assert r in trackref.live_refs[ForwardingRequest]
        assert h in trackref.live_refs[ForwardingResponse]
    finally:
        trackref.live_refs.pop(ForwardingRequest, None)
        trackref.live_refs.pop(ForwardingResponse, None)
