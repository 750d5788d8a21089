import copy

import pytest

from crawlfw.utils.datatypes import (
    CaselessDict,
    LocalCache,
    MergeDict,
    MultiValueDict,
    MultiValueDictKeyError,
    SequenceExclude,
)

# --- CaselessDict ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "seq",
    [
        {"Red": 1, "Green": 2},
        [("Red", 1), ("Green", 2)],
        (("Red", 1), ("Green", 2)),
        ((k, v) for k, v in [("Red", 1), ("Green", 2)]),
    ],
)
def test_caselessdict_init(seq):
    d = CaselessDict(seq)
    assert d["red"] == 1 and d["RED"] == 1 and d["Red"] == 1
    assert d["green"] == 2
    assert len(d) == 2


def test_caselessdict_operations():
    d = CaselessDict()
    d["Key"] = 1
    assert "KEY" in d and d.has_key("key")
    assert d.get("kEy") == 1
    assert d.get("missing") is None
    assert d.get("missing", 5) == 5
    assert d.setdefault("KEY", 9) == 1
    assert d.setdefault("other", 9) == 9
    assert d.pop("OTHER") == 9
    assert d.pop("other", "x") == "x"
    with pytest.raises(KeyError):
        d.pop("other")
    del d["key"]
    assert "Key" not in d
    with pytest.raises(KeyError):
        d["key"]


def test_caselessdict_update_and_fromkeys():
    d = CaselessDict({"a": 1})
    d.update({"A": 2, "b": 3})
    d.update([("C", 4)])
    assert d == {"a": 2, "b": 3, "c": 4}
    f = CaselessDict.fromkeys(["A", "B"], 0)
    assert isinstance(f, CaselessDict) and f == {"a": 0, "b": 0}


def test_caselessdict_copy_keeps_class():
    class MyDict(CaselessDict):
        def normvalue(self, value):
            return value * 2 if isinstance(value, int) else value

    d = MyDict({"a": 1})
    assert d["A"] == 2
    for c in (d.copy(), copy.copy(d)):
        assert type(c) is MyDict
    c = d.copy()
    c["new"] = 1
    assert "new" not in d


def test_caselessdict_normkey_override():
    class UpperDict(CaselessDict):
        def normkey(self, key):
            return key.upper()

    d = UpperDict({"a": 1})
    assert list(d) == ["A"]


# --- MultiValueDict ---------------------------------------------------------------------------


def test_multivaluedict():
    d = MultiValueDict({"name": ["Adrian", "Simon"], "position": ["Developer"], "empty": []})
    assert d["name"] == "Simon"
    assert d.get("name") == "Simon"
    assert d.getlist("name") == ["Adrian", "Simon"]
    assert d.get("lastname", "nonexistent") == "nonexistent"
    assert d.get("empty", "dflt") == "dflt"
    assert d.getlist("missing") == []
    with pytest.raises(MultiValueDictKeyError, match="lastname"):
        d["lastname"]
    assert issubclass(MultiValueDictKeyError, KeyError)
    d["name"] = "Ann"
    assert d.getlist("name") == ["Ann"]
    d.appendlist("name", "Bob")
    assert d.getlist("name") == ["Ann", "Bob"]
    d.setlist("position", ["A", "B"])
    assert d["position"] == "B"
    assert d.setdefault("new", "v") == "v"
    assert d.setlistdefault("newlist", ["1"]) == ["1"]
    assert ("name", "Bob") in d.items()
    assert ("name", ["Ann", "Bob"]) in d.lists()
    assert "Bob" in d.values()
    assert repr(d).startswith("<MultiValueDict: ")


def test_multivaluedict_update_extends():
    d = MultiValueDict({"a": ["1"]})
    d.update({"a": "2"})
    d.update(MultiValueDict({"a": ["3", "4"], "b": ["x"]}))
    d.update(c="5")
    assert d.getlist("a") == ["1", "2", "3", "4"]
    assert d.getlist("b") == ["x"]
    assert d.getlist("c") == ["5"]
    with pytest.raises(TypeError):
        d.update({}, {})
    with pytest.raises(ValueError, match="takes either a MultiValueDict or dictionary"):
        d.update(5)


def test_multivaluedict_copies():
    d = MultiValueDict({"a": [["inner"]]})
    shallow = copy.copy(d)
    deep = d.copy()
    assert shallow.getlist("a") is d.getlist("a")
    assert deep.getlist("a") == d.getlist("a")
    assert deep.getlist("a") is not d.getlist("a")
    assert deep["a"] is not d["a"]


# --- MergeDict ----------------------------------------------------------------------------------


def test_mergedict():
    d1, d2 = {"a": 1, "b": 2}, {"a": 10, "c": 3}
    m = MergeDict(d1, d2)
    assert m["a"] == 1 and m["c"] == 3
    assert m.get("z") is None and m.get("z", 0) == 0
    with pytest.raises(KeyError):
        m["z"]
    assert "c" in m and m.has_key("b") and "z" not in m
    assert m.items() == [("a", 1), ("b", 2), ("a", 10), ("c", 3)]
    c = m.copy()
    assert isinstance(c, MergeDict) and c["a"] == 1
    mv = MergeDict({"x": 1}, MultiValueDict({"k": ["1", "2"]}))
    assert mv.getlist("k") == ["1", "2"]
    assert mv.getlist("missing") == []


# --- LocalCache ---------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [1, 2, 5])
def test_localcache_evicts_oldest(limit):
    cache = LocalCache(limit=limit)
    for i in range(limit + 3):
        cache[i] = str(i)
    assert len(cache) == limit
    assert list(cache) == list(range(3, limit + 3))
    assert cache[limit + 2] == str(limit + 2)
    with pytest.raises(KeyError):
        cache[0]


def test_localcache_unbounded():
    cache = LocalCache()
    for i in range(100):
        cache[i] = i
    assert len(cache) == 100


# --- SequenceExclude --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seq", "item", "expected"),
    [
        (range(200, 300), 404, True),
        (range(200, 300), 200, False),
        ([1, 2], 3, True),
        ("abc", "b", False),
    ],
)
def test_sequence_exclude(seq, item, expected):
    assert (item in SequenceExclude(seq)) is expected
