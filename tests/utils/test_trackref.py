import gc
import re
import weakref

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
    # (object.__new__ until a subclass with its own __new__ is defined, see below)
    assert Request.__new__ in (object.__new__, trackref._plain_new)
    assert HtmlResponse.__new__ in (object.__new__, trackref._plain_new)
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


# --- LiveRefs: the per-class storage (a list of plain weak references, pruned in bulk) ---


def test_recording_keeps_no_weak_reference_with_a_callback():
    # a request or response is recorded in its own slot (no weak reference at all), a
    # Foo with a plain weakref (no callback): an object freed on another thread (the
    # scheduler's) runs no Python code there (a WeakKeyDictionary calls its _remove)
    r = Request("http://example.com/no-callback")
    resp = HtmlResponse("http://example.com/no-callback", body=b"")
    assert weakref.getweakrefs(r) == [] and weakref.getweakrefs(resp) == []
    assert r in trackref.live_refs[Request] and resp in trackref.live_refs[HtmlResponse]
    assert isinstance(trackref.live_refs[Request], trackref.ScannedRefs)
    foo = Foo()
    refs = weakref.getweakrefs(foo)
    assert refs and all(ref.__callback__ is None for ref in refs)


def test_dead_entries_are_pruned_in_bulk_and_the_live_ones_kept():
    keep = [Foo() for _ in range(50)]
    times = {id(o): trackref.live_refs[Foo][o] for o in keep}
    for _ in range(20000):
        Foo()  # made and freed at once
    refs = trackref.live_refs[Foo]
    # never more than twice the live count at the last prune plus the slack
    assert len(refs._entries) <= 2 * 50 + trackref._PRUNE_SLACK
    assert refs._prunes >= 10
    assert len(refs) == 50 and set(map(id, refs)) == set(map(id, keep))
    assert all(refs[o] == times[id(o)] for o in keep)
    refs.prune()
    assert len(refs._entries) == 50


def test_recording_on_many_threads_while_pruning_loses_nothing():
    import threading

    kept: list[list] = [[] for _ in range(4)]
    start = threading.Barrier(5)

    def make(out):
        start.wait()
        for i in range(6000):
            obj = Foo()
            if i % 3 == 0:
                out.append(obj)  # kept alive; the others die at once

    threads = [threading.Thread(target=make, args=(out,)) for out in kept]
    for t in threads:
        t.start()
    start.wait()
    refs = trackref.live_refs[Foo]
    while any(t.is_alive() for t in threads):
        refs.prune()  # a prune racing the appends of the four threads
    for t in threads:
        t.join()
    alive = [o for out in kept for o in out]
    assert len(alive) == 8000
    assert len(refs) == 8000
    assert set(map(id, refs)) == set(map(id, alive))
    assert sum(1 for _ in trackref.iter_all("Foo")) == 8000


class Qux(Foo):
    """Its own __new__ calls the recording parent's __new__: one record, not two."""

    def __new__(cls, *args, **kwargs):
        return super().__new__(cls, *args, **kwargs)


class Quux(Qux):
    def __new__(cls, *args, **kwargs):
        return super().__new__(cls)


def test_a_subclass_new_calling_a_recording_parent_is_recorded_once():
    try:
        objs = [Qux(), Qux(), Quux()]
        assert len(trackref.live_refs[Qux]) == 2
        assert len(trackref.live_refs[Quux]) == 1
        assert len(trackref.live_refs[Qux]._entries) == 2
        assert len(trackref.live_refs[Quux]._entries) == 1
        del objs
        gc.collect()
        assert len(trackref.live_refs[Qux]) == 0
    finally:
        trackref.live_refs.pop(Qux, None)
        trackref.live_refs.pop(Quux, None)


class _Key:
    """A hashable object with a weak reference slot, for the mapping table."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"_Key({self.name})"


# (operation, argument index or None): run on a WeakKeyDictionary and on a LiveRefs
_OPS = [
    ("set", 0, 1.0), ("set", 1, 2.0), ("set", 2, 3.0), ("len",), ("items",), ("iter",),
    ("get", 0), ("get", 3), ("contains", 1), ("contains", 3), ("set", 1, 5.0), ("get", 1),
    ("len",), ("del", 1), ("del", 1), ("contains", 1), ("len",), ("kill", 0), ("len",),
    ("items",), ("bool",), ("set", 3, 0.5), ("getdefault", 3), ("getdefault", 1),
    ("kill", 2), ("kill", 3), ("len",), ("bool",), ("items",), ("min",), ("set", 4, 9.0),
    ("set", 4, 8.0), ("items",), ("min",), ("pop", 4), ("pop", 4), ("len",), ("eq",),
]


def _run(mapping, keys):
    out = []
    for op in _OPS:
        kind = op[0]
        try:
            if kind == "set":
                mapping[keys[op[1]]] = op[2]
                out.append(None)
            elif kind == "get":
                out.append(mapping[keys[op[1]]])
            elif kind == "getdefault":
                out.append(mapping.get(keys[op[1]], "none"))
            elif kind == "del":
                del mapping[keys[op[1]]]
                out.append(None)
            elif kind == "pop":
                out.append(mapping.pop(keys[op[1]]))
            elif kind == "contains":
                out.append(keys[op[1]] in mapping)
            elif kind == "len":
                out.append(len(mapping))
            elif kind == "bool":
                out.append(bool(mapping))
            elif kind == "items":
                out.append(sorted((k.name, t) for k, t in mapping.items()))
            elif kind == "iter":
                out.append(sorted(k.name for k in mapping))
            elif kind == "min":
                out.append(min(mapping.items(), key=lambda kv: kv[1])[0].name)
            elif kind == "eq":
                out.append(dict(mapping.items()) == {k: t for k, t in mapping.items()})
            elif kind == "kill":
                keys[op[1]] = None
                gc.collect()
                out.append(None)
        except KeyError:
            out.append(("KeyError", op[1]))
        except ValueError:  # min() of nothing
            out.append("ValueError")
    return out


class _Recorded(Request):
    """The table's keys for ScannedRefs: a request subclass (recorded in its slot)."""

    def __init__(self, name):
        super().__init__(f"http://example.com/{name}")
        self.name = name


def _run_scanned(keys):
    refs = trackref.live_refs[_Recorded]
    for k in keys:  # made with recording on: forget them, as the table starts empty
        del refs[k]
    return _run(refs, keys)


def test_scanned_refs_give_what_a_weak_key_dictionary_gives():
    try:
        expected = _run(weakref.WeakKeyDictionary(), [_Key(i) for i in range(5)])
        assert _run_scanned([_Recorded(i) for i in range(5)]) == expected
    finally:
        trackref.live_refs.pop(_Recorded, None)


def test_scanned_refs_find_what_every_thread_made_and_nothing_freed():
    import threading

    kept: list[list] = [[] for _ in range(4)]

    def make(out):
        for i in range(3000):
            r = Request(f"http://example.com/{i}")
            if i % 3 == 0:
                out.append(r)

    gc.collect()
    before = len(trackref.live_refs[Request])
    threads = [threading.Thread(target=make, args=(out,)) for out in kept]
    for t in threads:
        t.start()
    refs = trackref.live_refs[Request]
    while any(t.is_alive() for t in threads):
        len(refs)  # a scan racing the four threads
    for t in threads:
        t.join()
    alive = [r for out in kept for r in out]
    assert len(refs) == before + 4000
    assert {id(r) for r in alive} <= {id(r) for r in refs}
    assert all(isinstance(refs[r], float) for r in alive)
    del alive, kept
    gc.collect()
    assert len(refs) == before


def test_scanned_refs_count_exact_classes_and_recorded_instances_only(monkeypatch):
    from crawlfw.http import FormRequest, TextResponse

    gc.collect()
    n_request = len(trackref.live_refs[Request])
    n_html = len(trackref.live_refs[HtmlResponse])
    objs = [Request("http://e.com/1"), FormRequest("http://e.com/2"),
            HtmlResponse("http://e.com/3", body=b""), TextResponse("http://e.com/4", body=b"")]
    monkeypatch.setattr(trackref, "enabled", False)
    off = Request("http://e.com/off")
    assert "_trackref_time" not in vars(off)
    assert len(trackref.live_refs[Request]) == n_request + 1
    assert len(trackref.live_refs[HtmlResponse]) == n_html + 1
    assert objs[1] in trackref.live_refs[FormRequest] and objs[1] not in trackref.live_refs[Request]
    assert off not in trackref.live_refs[Request]
    with pytest.raises(KeyError):
        trackref.live_refs[Request][off]
    with pytest.raises(TypeError, match="records Request instances only"):
        trackref.live_refs[Request][objs[2]] = 1.0
    trackref.live_refs[Request][off] = 5.0  # recorded by hand, as a WeakKeyDictionary
    assert trackref.live_refs[Request][off] == 5.0
    assert trackref.get_oldest("Request") is off
    # the time is a private attribute of the instance
    assert isinstance(vars(objs[0])["_trackref_time"], float)
    text = trackref.format_live_refs()
    assert re.search(r"^FormRequest\s+\d+   oldest: \d+s ago$", text, re.M)
    assert re.search(r"^TextResponse\s+\d+   oldest: \d+s ago$", text, re.M)
    assert re.search(r"^Request\s", text, re.M)
    # other tests' live objects may have "Request" in their class names (a spider called
    # OnlyStartRequests): only Request and its subclasses are left out
    ignored = trackref.format_live_refs(ignore=Request)
    assert not re.search(r"^(Request|FormRequest)\s", ignored, re.M)


class _AnswersEverything(Request):
    """A request subclass whose __getattr__ answers every missing attribute."""

    def __getattr__(self, name):
        return 1.0


def test_an_unrecorded_request_with_a_getattr_is_not_counted(monkeypatch):
    try:
        monkeypatch.setattr(trackref, "enabled", False)
        r = _AnswersEverything("http://e.com/x")
        assert r._trackref_time == 1.0  # its __getattr__ answers...
        assert r not in trackref.live_refs[_AnswersEverything]  # ...but the slot is unset
        assert len(trackref.live_refs[_AnswersEverything]) == 0
        with pytest.raises(KeyError):
            trackref.live_refs[_AnswersEverything][r]
    finally:
        trackref.live_refs.pop(_AnswersEverything, None)


def test_live_refs_gives_what_a_weak_key_dictionary_gives():
    # Scrapy's live_refs[cls] is a WeakKeyDictionary: LiveRefs answers each operation of
    # the table as one does (lookups, updates, deletes, deaths, min by time)
    expected = _run(weakref.WeakKeyDictionary(), [_Key(i) for i in range(5)])
    got = _run(trackref.LiveRefs(), [_Key(i) for i in range(5)])
    assert got == expected
    assert ("KeyError", 3) in expected and ("KeyError", 1) in expected
    assert "ValueError" in expected


def test_memdebug_counts_live_requests_per_class():
    from crawlfw.extensions.memdebug import MemoryDebugger
    from crawlfw.statscollectors import MemoryStatsCollector
    from crawlfw.utils.test import get_crawler

    stats = MemoryStatsCollector(get_crawler())
    gc.collect()
    n = len(trackref.live_refs[Request])
    keep = [Foo(), Foo(), Foo(), Request("http://e.com/a"), Request("http://e.com/b")]
    for _ in range(3000):
        Foo()
        Request("http://e.com/c")
    MemoryDebugger(stats).spider_closed(spider=None, reason="finished")
    assert stats.get_value("memdebug/live_refs/Foo") == 3
    assert stats.get_value("memdebug/live_refs/Request") == n + 2
    assert trackref.live_counts()[Request] == n + 2
    assert "memdebug/live_refs/Bar" not in stats.get_stats()
    del keep


def test_the_roots_get_a_forgiving_new_only_when_a_subclass_defines_its_own():
    class Root(trackref.object_ref):
        _trackref_in_init = True
        def __init__(self, value, extra=None):
            self._trackref_time = trackref.time()
            self.value = value

    class Child(Root):
        pass

    class Other(trackref.object_ref):
        pass

    try:
        assert "__new__" not in Root.__dict__ and Root.__new__ is object.__new__
        assert Child(1, extra=2).value == 1  # object.__new__ takes them: __init__ is own

        class Forwarding(Child):
            def __new__(cls, *args, **kwargs):
                return super().__new__(cls, *args, **kwargs)

        assert Root.__dict__["__new__"].__func__ is trackref._plain_new
        assert "__new__" not in Child.__dict__
        f = Forwarding(3, extra=4)
        assert f.value == 3 and f in trackref.live_refs[Forwarding]
        assert "__new__" not in trackref.object_ref.__dict__  # the base class untouched
        o = Other()
        assert o in trackref.live_refs[Other]  # recorded by its own recording __new__
    finally:
        for cls in ("Root", "Child", "Forwarding", "Other"):
            for key in [k for k in trackref.live_refs if k.__name__ == cls]:
                trackref.live_refs.pop(key, None)


@pytest.mark.slow
def test_request_and_response_are_made_without_a_python_new():
    # the hot path: in a fresh interpreter that has loaded crawlfw (no subclass with
    # its own __new__), type() calls object.__new__ for a Request directly
    import subprocess
    import sys

    code = (
        "import crawlfw, crawlfw.http, crawlfw.spiders, crawlfw.selector, crawlfw.item\n"
        "from crawlfw.http import Request, HtmlResponse, FormRequest\n"
        "assert '__new__' not in Request.__dict__, Request.__dict__['__new__']\n"
        "assert Request.__new__ is object.__new__ and HtmlResponse.__new__ is object.__new__\n"
        "assert FormRequest.__new__ is object.__new__\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
