import os
import sys
import warnings

import pytest

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.settings import BaseSettings
from crawlfw.utils.conf import (
    arglist_to_dict,
    build_component_list,
    closest_crawlfw_cfg,
    closest_scrapy_cfg,
    get_config,
    get_sources,
    init_env,
)


def identity(x):
    return x


class TestBuildComponentList:
    def test_orders_by_value(self):
        d = {"one": 1, "two": None, "three": 8, "four": 4}
        assert build_component_list(d, convert=identity) == ["one", "four", "three"]

    def test_ties_keep_insertion_order(self):
        d = {"b": 0, "a": 0, "c": -1}
        assert build_component_list(d, convert=identity) == ["c", "b", "a"]

    def test_backwards_compatible_custom_dict(self):
        base = {"one": 1, "two": 2, "three": 3, "five": 5, "six": None}
        custom = {"two": None, "three": 8, "four": 4}
        assert build_component_list(base, custom, convert=identity) == \
            ["one", "four", "five", "three"]

    def test_backwards_compatible_custom_list(self):
        assert build_component_list({"a": 1}, ["c", "b"], convert=identity) == ["c", "b"]
        assert build_component_list({}, ("c",), convert=identity) == ("c",)

    def test_duplicate_after_convert_raises(self):
        d = {"one": 1, "ONE": 4}
        with pytest.raises(ValueError, match="convert to the same object"):
            build_component_list(d, convert=lambda x: x.lower())
        with pytest.raises(ValueError, match="convert to the same object"):
            build_component_list({}, ["one", "ONE"], convert=lambda x: x.lower())

    def test_basesettings(self):
        s = BaseSettings({"one": 1, "two": 2}, priority=0)
        s.set("one", None, 10)
        assert build_component_list(s, convert=identity) == ["two"]

    def test_basesettings_duplicates(self):
        same_priority = BaseSettings({"one": 1, "ONE": 4}, priority=0)
        with pytest.raises(ValueError, match="convert to the same object"):
            build_component_list(same_priority, convert=lambda x: x.lower())
        # a different priority decides which one wins
        mixed = BaseSettings({"one": 1}, priority=0)
        mixed.set("ONE", 4, 10)
        assert build_component_list(mixed, convert=lambda x: x.lower()) == ["one"]

    @pytest.mark.parametrize("value", ["a", "1", [1], {}])
    def test_invalid_order_value_names_component(self, value):
        with pytest.raises(ValueError, match="for component my.Component"):
            build_component_list({"my.Component": value}, convert=identity)

    @pytest.mark.parametrize("value", [0, -5, 2.5, None, True])
    def test_valid_order_values(self, value):
        expected = [] if value is None else ["x.Y"]
        assert build_component_list({"x.Y": value}, convert=identity) == expected

    def test_default_convert_updates_deprecated_paths(self):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            result = build_component_list({
                "crawlfw.contrib.downloadermiddleware.retry.RetryMiddleware": 1,
                "scrapy.downloadermiddlewares.redirect.RedirectMiddleware": 2,
            })
        assert result == ["crawlfw.downloadermiddlewares.retry.RetryMiddleware",
                          "crawlfw.downloadermiddlewares.redirect.RedirectMiddleware"]
        assert {x.category for x in w} == {CrawlfwDeprecationWarning}

    def test_none_compdict(self):
        assert build_component_list(None) == []


@pytest.mark.parametrize("arglist,expected", [
    (["arg1=val1", "arg2=val2"], {"arg1": "val1", "arg2": "val2"}),
    (["a=b=c"], {"a": "b=c"}),
    (["empty="], {"empty": ""}),
    ([], {}),
])
def test_arglist_to_dict(arglist, expected):
    assert arglist_to_dict(arglist) == expected


def test_arglist_to_dict_invalid():
    with pytest.raises(ValueError, match="'noequals'"):
        arglist_to_dict(["noequals"])


@pytest.fixture
def project_tree(tmp_path):
    """tmp/proj/crawlfw.cfg and tmp/proj/pkg/deep (start directory)."""
    proj = tmp_path / "proj"
    deep = proj / "pkg" / "deep"
    deep.mkdir(parents=True)
    return proj, deep


def test_closest_cfg_found_in_parent(project_tree):
    proj, deep = project_tree
    (proj / "crawlfw.cfg").write_text("[settings]\ndefault = myproj.settings\n")
    assert closest_crawlfw_cfg(str(deep)) == str(proj / "crawlfw.cfg")
    assert closest_scrapy_cfg is closest_crawlfw_cfg


def test_closest_cfg_prefers_nearest(project_tree):
    proj, deep = project_tree
    (proj / "crawlfw.cfg").write_text("")
    (deep / "crawlfw.cfg").write_text("")
    assert closest_crawlfw_cfg(str(deep)) == str(deep / "crawlfw.cfg")


def test_closest_cfg_none(tmp_path):
    # nothing in tmp_path or (normally) above it
    result = closest_crawlfw_cfg(str(tmp_path))
    assert not result.startswith(str(tmp_path))


def test_closest_cfg_legacy_scrapy_cfg(project_tree):
    proj, deep = project_tree
    (proj / "scrapy.cfg").write_text("")
    with pytest.warns(CrawlfwDeprecationWarning, match="rename it to crawlfw.cfg"):
        assert closest_crawlfw_cfg(str(deep)) == str(proj / "scrapy.cfg")
    (proj / "crawlfw.cfg").write_text("")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert closest_crawlfw_cfg(str(deep)) == str(proj / "crawlfw.cfg")


def test_get_sources(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    sources = get_sources(use_closest=False)
    assert sources == [
        "/etc/crawlfw.cfg",
        r"c:\crawlfw\crawlfw.cfg",
        str(tmp_path / "xdg") + "/crawlfw.cfg",
        os.path.expanduser("~/.crawlfw.cfg"),
    ]
    (tmp_path / "crawlfw.cfg").write_text("")
    assert get_sources()[-1] == str(tmp_path / "crawlfw.cfg")


def test_get_sources_default_xdg(monkeypatch):
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert get_sources(False)[2] == os.path.expanduser("~/.config") + "/crawlfw.cfg"


def test_get_config_later_sources_win(monkeypatch, tmp_path):
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    (xdg / "crawlfw.cfg").write_text("[settings]\ndefault = from_xdg\nother = xdg_only\n")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "crawlfw.cfg").write_text("[settings]\ndefault = from_project\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    monkeypatch.chdir(proj)
    cfg = get_config()
    assert cfg.get("settings", "default") == "from_project"
    assert cfg.get("settings", "other") == "xdg_only"
    assert get_config(use_closest=False).get("settings", "default") == "from_xdg"


def test_init_env(monkeypatch, project_tree):
    proj, deep = project_tree
    (proj / "crawlfw.cfg").write_text("[settings]\ndefault = myproj.settings\n"
                                      "other = otherproj.settings\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(proj / "noxdg"))
    # setenv first, so that monkeypatch restores the variable's absence afterwards
    # (init_env sets it; left set, it leaked "otherproj.settings" into later tests'
    # subprocesses)
    monkeypatch.setenv("CRAWLFW_SETTINGS_MODULE", "unset")
    monkeypatch.delenv("CRAWLFW_SETTINGS_MODULE")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(deep)
    init_env()
    assert os.environ["CRAWLFW_SETTINGS_MODULE"] == "myproj.settings"
    assert str(proj) in sys.path
    init_env("other", set_syspath=False)
    assert os.environ["CRAWLFW_SETTINGS_MODULE"] == "otherproj.settings"
    assert sys.path.count(str(proj)) == 1
