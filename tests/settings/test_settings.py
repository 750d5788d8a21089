import json
import types

import pytest

import crawlfw
from crawlfw.settings import (
    SETTINGS_PRIORITIES,
    BaseSettings,
    Settings,
    SettingsAttribute,
    default_settings,
    get_settings_priority,
    iter_default_settings,
    overridden_settings,
)


def test_exported_names():
    import crawlfw.settings as mod

    assert set(mod.__all__) == {
        "SETTINGS_PRIORITIES", "get_settings_priority", "SettingsAttribute",
        "BaseSettings", "Settings", "iter_default_settings", "overridden_settings",
    }


@pytest.mark.parametrize("name,value", [
    ("default", 0), ("command", 10), ("project", 20), ("spider", 30), ("cmdline", 40),
    (15, 15), (0, 0),
])
def test_get_settings_priority(name, value):
    assert get_settings_priority(name) == value


def test_get_settings_priority_unknown_name():
    with pytest.raises(KeyError, match="bogus"):
        get_settings_priority("bogus")


class TestSettingsAttribute:
    def test_set_greater_or_equal_priority(self):
        attr = SettingsAttribute("value", 10)
        attr.set("value2", 20)
        assert (attr.value, attr.priority) == ("value2", 20)
        attr.set("value3", 20)
        assert (attr.value, attr.priority) == ("value3", 20)

    def test_set_less_priority_is_ignored(self):
        attr = SettingsAttribute("value", 10)
        attr.set("value2", 0)
        assert (attr.value, attr.priority) == ("value", 10)

    def test_basesettings_value_takes_its_maxpriority(self):
        inner = BaseSettings({"a": 1}, priority=30)
        attr = SettingsAttribute(inner, 10)
        assert attr.priority == 30
        attr.set({"b": 2}, 40)
        assert isinstance(attr.value, BaseSettings)
        assert attr.value.getpriority("b") == 40

    def test_repr(self):
        assert repr(SettingsAttribute(1, 20)) == "<SettingsAttribute value=1 priority=20>"


class TestBaseSettings:
    def test_missing_key_is_none(self):
        s = BaseSettings()
        assert s["NOPE"] is None
        assert "NOPE" not in s
        assert s.get("NOPE", "d") == "d"

    def test_set_respects_priority(self):
        s = BaseSettings()
        s.set("X", 1, "cmdline")
        s.set("X", 2, "project")
        assert s["X"] == 1
        s.set("X", 3, 40)
        assert s["X"] == 3
        assert s.getpriority("X") == 40

    def test_setitem_uses_project_priority(self):
        s = BaseSettings()
        s["X"] = 5
        assert s.getpriority("X") == SETTINGS_PRIORITIES["project"]

    def test_initial_values_take_priority(self):
        s = BaseSettings({"A": 1}, priority="spider")
        assert s.getpriority("A") == 30

    def test_update_with_dict_json_and_basesettings(self):
        s = BaseSettings()
        s.update({"A": 1}, "default")
        s.update('{"B": 2}', "command")
        other = BaseSettings({"C": 3}, priority="cmdline")
        s.update(other, "default")  # per-key priorities of a BaseSettings are kept
        assert dict(s) == {"A": 1, "B": 2, "C": 3}
        assert [s.getpriority(k) for k in "ABC"] == [0, 10, 40]

    def test_update_none_is_noop(self):
        s = BaseSettings({"A": 1})
        s.update(None)
        assert dict(s) == {"A": 1}

    @pytest.mark.parametrize("bad", ['{"A": 1', '[1, 2]'])
    def test_update_bad_json(self, bad):
        with pytest.raises(ValueError, match="JSON"):
            BaseSettings().update(bad)

    def test_setdict_is_update(self):
        s = BaseSettings()
        s.setdict({"A": 1}, "spider")
        assert s.getpriority("A") == 30

    def test_setmodule_object_and_path(self):
        mod = types.ModuleType("fake_settings")
        mod.UPPER = 1
        mod.lower = 2
        s = BaseSettings()
        s.setmodule(mod, "command")
        assert dict(s) == {"UPPER": 1}
        assert s.getpriority("UPPER") == 10
        s2 = BaseSettings()
        s2.setmodule("crawlfw.settings.default_settings", "default")
        assert s2["BOT_NAME"] == "crawlfwbot"

    @pytest.mark.parametrize("value,expected", [
        (True, True), (False, False), (1, True), (0, False), ("1", True), ("0", False),
        ("True", True), ("False", False), ("true", True), ("false", False), (None, False),
    ])
    def test_getbool(self, value, expected):
        s = BaseSettings({"B": value})
        assert s.getbool("B") is expected

    def test_getbool_default(self):
        assert BaseSettings().getbool("B") is False
        assert BaseSettings().getbool("B", True) is True

    @pytest.mark.parametrize("value", ["yes", "no", "TRUE", "", [1]])
    def test_getbool_invalid(self, value):
        s = BaseSettings({"FLAG": value})
        with pytest.raises(ValueError) as exc:
            s.getbool("FLAG")
        message = str(exc.value)
        assert "Supported values for boolean settings are 0/1, True/False, '0'/'1', " \
               "'True'/'False' and 'true'/'false'" in message
        assert "FLAG" in message
        assert repr(value) in message

    @pytest.mark.parametrize("value,expected", [(1, 1), ("12", 12), (3.9, 3), (None, 0)])
    def test_getint(self, value, expected):
        assert BaseSettings({"I": value}).getint("I") == expected

    @pytest.mark.parametrize("value", ["abc", [1], "1.5"])
    def test_getint_invalid_names_setting(self, value):
        with pytest.raises(ValueError, match="'MYINT'"):
            BaseSettings({"MYINT": value}).getint("MYINT")

    @pytest.mark.parametrize("value,expected", [(1, 1.0), ("1.5", 1.5), (None, 0.0)])
    def test_getfloat(self, value, expected):
        assert BaseSettings({"F": value}).getfloat("F") == expected

    @pytest.mark.parametrize("value", ["abc", {}])
    def test_getfloat_invalid_names_setting(self, value):
        with pytest.raises(ValueError, match="'MYFLOAT'"):
            BaseSettings({"MYFLOAT": value}).getfloat("MYFLOAT")

    @pytest.mark.parametrize("value,expected", [
        ("one,two", ["one", "two"]), ("one", ["one"]), (["a", "b"], ["a", "b"]),
        (("a",), ["a"]), (None, []),
    ])
    def test_getlist(self, value, expected):
        assert BaseSettings({"L": value}).getlist("L") == expected

    def test_getlist_returns_copy(self):
        value = ["a"]
        s = BaseSettings({"L": value})
        s.getlist("L").append("b")
        assert value == ["a"]

    def test_getlist_invalid(self):
        with pytest.raises(ValueError, match="'L'"):
            BaseSettings({"L": 5}).getlist("L")

    def test_getdict(self):
        s = BaseSettings({"D": {"a": 1}, "J": '{"b": 2}', "BS": BaseSettings({"c": 3})})
        assert s.getdict("D") == {"a": 1}
        assert s.getdict("J") == {"b": 2}
        assert s.getdict("BS") == {"c": 3}
        assert type(s.getdict("BS")) is dict
        assert s.getdict("MISSING") == {}

    def test_getdict_returns_copy(self):
        d = {"a": 1}
        BaseSettings({"D": d}).getdict("D")["b"] = 2
        assert d == {"a": 1}

    @pytest.mark.parametrize("value", ['{"a": ', "not json"])
    def test_getdict_bad_json_names_setting(self, value):
        with pytest.raises(ValueError, match="'MYDICT'"):
            BaseSettings({"MYDICT": value}).getdict("MYDICT")

    def test_getwithbase(self):
        s = BaseSettings({
            "TEST_BASE": BaseSettings({1: 1, 2: 2}, "project"),
            "TEST": BaseSettings({1: 10, 3: 30}, "default"),
            "HASNOBASE": BaseSettings({3: 3000}, "default"),
        })
        merged = s.getwithbase("TEST")
        assert isinstance(merged, BaseSettings)
        assert dict(merged) == {1: 1, 2: 2, 3: 30}  # base 1 has higher priority
        assert dict(s.getwithbase("HASNOBASE")) == {3: 3000}
        assert len(s.getwithbase("NONEXISTENT")) == 0

    def test_maxpriority(self):
        assert BaseSettings().maxpriority() == 0
        s = BaseSettings({"A": 1}, 10)
        s.set("B", 2, 30)
        assert s.maxpriority() == 30

    def test_delete(self):
        s = BaseSettings({"A": 1}, "cmdline")
        s.delete("A", "project")
        assert "A" in s
        s.delete("A", "cmdline")
        assert "A" not in s
        with pytest.raises(KeyError):
            s.delete("A")

    def test_delitem(self):
        s = BaseSettings({"A": 1}, "cmdline")
        del s["A"]
        assert "A" not in s

    def test_freeze_blocks_every_mutation(self):
        s = BaseSettings({"A": 1})
        s.freeze()
        for mutate in (
            lambda: s.set("A", 2),
            lambda: s.__setitem__("A", 2),
            lambda: s.update({"A": 2}),
            lambda: s.setdict({"A": 2}),
            lambda: s.setmodule(default_settings),
            lambda: s.delete("A"),
            lambda: s.__delitem__("A"),
        ):
            with pytest.raises(TypeError, match="Trying to modify an immutable Settings object"):
                mutate()
        assert s["A"] == 1

    def test_copy_is_deep_and_keeps_priorities(self):
        s = BaseSettings({"L": [1], "D": BaseSettings({"k": 1}, "spider")}, "command")
        c = s.copy()
        c["L"].append(2)
        c["D"].set("k", 2, "cmdline")
        assert s["L"] == [1]
        assert s["D"]["k"] == 1
        assert c.getpriority("L") == 10
        assert c.getpriority("D") == 30

    def test_frozencopy(self):
        s = BaseSettings({"A": 1})
        fc = s.frozencopy()
        assert fc.frozen and not s.frozen
        assert fc["A"] == 1

    def test_copy_to_dict(self):
        s = BaseSettings({"A": 1, "D": BaseSettings({"k": [1]})})
        d = s.copy_to_dict()
        assert d == {"A": 1, "D": {"k": [1]}}
        assert type(d["D"]) is dict
        d["D"]["k"].append(2)
        assert s["D"]["k"] == [1]

    def test_iter_len(self):
        s = BaseSettings({"A": 1, "B": 2})
        assert sorted(s) == ["A", "B"]
        assert len(s) == 2

    def test_deprecated_overrides_and_defaults(self):
        s = BaseSettings()
        with pytest.warns(crawlfw.exceptions.CrawlfwDeprecationWarning):
            s.overrides["A"] = 1
        with pytest.warns(crawlfw.exceptions.CrawlfwDeprecationWarning):
            s.defaults["B"] = 2
        assert s.getpriority("A") == 40
        assert s.getpriority("B") == 0


class TestSettings:
    def test_defaults_loaded_at_default_priority(self):
        s = Settings()
        for name, value in iter_default_settings():
            assert name in s
            assert s.getpriority(name) == 0
            if not isinstance(value, dict):
                assert s[name] == value

    def test_dict_defaults_become_basesettings(self):
        s = Settings()
        for name, value in iter_default_settings():
            if isinstance(value, dict):
                assert isinstance(s[name], BaseSettings), name
                assert dict(s[name]) == value

    def test_values_applied_with_priority(self):
        s = Settings({"BOT_NAME": "mybot"}, priority="cmdline")
        assert s["BOT_NAME"] == "mybot"
        assert s.getpriority("BOT_NAME") == 40

    def test_user_dict_updates_default_dict(self):
        s = Settings({"DEFAULT_REQUEST_HEADERS": {"X-Test": "1"}})
        # a project-priority dict replaces the (lower priority) default dict...
        assert dict(s["DEFAULT_REQUEST_HEADERS"]) == {"X-Test": "1"}
        # ...but stays a BaseSettings so later per-key priorities work
        assert isinstance(s["DEFAULT_REQUEST_HEADERS"], BaseSettings)

    def test_component_base_dicts(self):
        s = Settings({"DOWNLOADER_MIDDLEWARES": {"my.Mw": 543,
                      "crawlfw.downloadermiddlewares.retry.RetryMiddleware": None}})
        merged = s.getwithbase("DOWNLOADER_MIDDLEWARES")
        assert merged["my.Mw"] == 543
        assert merged["crawlfw.downloadermiddlewares.retry.RetryMiddleware"] is None
        assert merged["crawlfw.downloadermiddlewares.useragent.UserAgentMiddleware"] == 500

    def test_copy_is_settings(self):
        assert type(Settings().copy()) is Settings

    def test_json_values(self):
        s = Settings(json.dumps({"CONCURRENT_REQUESTS": 3}))
        assert s.getint("CONCURRENT_REQUESTS") == 3


def test_overridden_settings():
    s = Settings({"BOT_NAME": "x", "DOWNLOADER_MIDDLEWARES": {"a.B": 1}})
    assert dict(overridden_settings(s)) == {"BOT_NAME": "x"}


def test_overridden_settings_none_when_default():
    assert dict(overridden_settings(Settings())) == {}


def test_iter_default_settings_sorted_and_upper():
    names = [n for n, _ in iter_default_settings()]
    assert names == sorted(names)
    assert all(n.isupper() for n in names)
