import os
import sys

import pytest

from crawlfw.exceptions import CrawlfwDeprecationWarning, NotConfigured
from crawlfw.utils.project import (
    data_path,
    get_project_settings,
    inside_project,
    project_data_dir,
)


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No CRAWLFW_* variables (nor SCRAPY_SETTINGS_MODULE), no user config files,
    sys.path/modules restored."""
    for key in list(os.environ):
        if key.startswith("CRAWLFW_") or key == "SCRAPY_SETTINGS_MODULE":
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "noxdg"))
    monkeypatch.setattr(sys, "path", list(sys.path))
    modules = set(sys.modules)
    yield monkeypatch
    for name in set(sys.modules) - modules:
        if name.startswith("myproj"):
            del sys.modules[name]


@pytest.fixture
def project(tmp_path):
    """A project: tmp/proj/crawlfw.cfg + package myproj with settings.py."""
    proj = tmp_path / "proj"
    pkg = proj / "myproj"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "settings.py").write_text(
        "BOT_NAME = 'myprojbot'\nCONCURRENT_REQUESTS = 3\nlowercase = 'ignored'\n")
    (proj / "crawlfw.cfg").write_text("[settings]\ndefault = myproj.settings\n")
    return proj


def test_outside_project(clean_env, tmp_path):
    clean_env.chdir(tmp_path)
    assert not inside_project()
    with pytest.raises(NotConfigured, match="Not inside a project"):
        project_data_dir()
    assert data_path("cache") == os.path.join(".crawlfw", "cache")


def test_inside_project_by_cfg(clean_env, project):
    clean_env.chdir(project / "myproj")
    assert inside_project()
    d = project_data_dir()
    assert d == str(project / ".crawlfw")
    assert os.path.isdir(d)
    assert data_path("cache") == str(project / ".crawlfw" / "cache")


def test_inside_project_by_env(clean_env, project, tmp_path):
    clean_env.syspath_prepend(str(project))
    clean_env.setenv("CRAWLFW_SETTINGS_MODULE", "myproj.settings")
    clean_env.chdir(tmp_path)
    assert inside_project()


def test_inside_project_env_not_importable_warns(clean_env, tmp_path):
    clean_env.setenv("CRAWLFW_SETTINGS_MODULE", "nosuchmodule999.settings")
    clean_env.chdir(tmp_path)
    with pytest.warns(UserWarning, match="Cannot import crawlfw settings module"):
        assert not inside_project()


def test_scrapy_settings_module_is_read_with_one_warning(clean_env, project, tmp_path):
    """Issue 34: a Scrapy project's CI sets SCRAPY_SETTINGS_MODULE; it is read when
    CRAWLFW_SETTINGS_MODULE is absent, with one warning, and wins over crawlfw.cfg (as
    SCRAPY_SETTINGS_MODULE wins over scrapy.cfg in Scrapy 2.19's init_env)."""
    (project / "myproj" / "other.py").write_text("BOT_NAME = 'fromscrapyenv'\n")
    clean_env.syspath_prepend(str(project))
    clean_env.setenv("SCRAPY_SETTINGS_MODULE", "myproj.other")
    clean_env.chdir(project)  # its crawlfw.cfg names myproj.settings
    with pytest.warns(CrawlfwDeprecationWarning) as caught:
        assert inside_project()
        settings = get_project_settings()
    assert [str(w.message) for w in caught] == [
        "Using SCRAPY_SETTINGS_MODULE=myproj.other (CRAWLFW_SETTINGS_MODULE is not set): "
        "rename the variable to CRAWLFW_SETTINGS_MODULE"]
    assert settings["BOT_NAME"] == "fromscrapyenv"
    assert os.environ["CRAWLFW_SETTINGS_MODULE"] == "myproj.other"  # subprocesses too


def test_crawlfw_settings_module_wins_over_scrapys(clean_env, project, recwarn):
    (project / "myproj" / "other.py").write_text("BOT_NAME = 'fromscrapyenv'\n")
    clean_env.syspath_prepend(str(project))
    clean_env.setenv("SCRAPY_SETTINGS_MODULE", "myproj.other")
    clean_env.setenv("CRAWLFW_SETTINGS_MODULE", "myproj.settings")
    assert get_project_settings()["BOT_NAME"] == "myprojbot"
    assert not [w for w in recwarn if issubclass(w.category, CrawlfwDeprecationWarning)]


def test_project_data_dir_from_datadir_section(clean_env, project, tmp_path):
    target = tmp_path / "elsewhere"
    (project / "crawlfw.cfg").write_text(
        f"[settings]\ndefault = myproj.settings\n[datadir]\ndefault = {target}\n")
    clean_env.chdir(project)
    assert project_data_dir() == str(target)
    assert target.is_dir()


def test_data_path_absolute_and_createdir(clean_env, tmp_path):
    clean_env.chdir(tmp_path)
    absolute = str(tmp_path / "abs")
    assert data_path(absolute) == absolute
    assert data_path(absolute, createdir=True) == absolute
    assert os.path.isdir(absolute)


def test_get_project_settings_from_cfg(clean_env, project):
    clean_env.chdir(project)
    settings = get_project_settings()
    assert os.environ["CRAWLFW_SETTINGS_MODULE"] == "myproj.settings"
    assert settings["BOT_NAME"] == "myprojbot"
    assert settings.getpriority("BOT_NAME") == 20
    assert settings.getint("CONCURRENT_REQUESTS") == 3
    assert "lowercase" not in settings
    assert settings["DOWNLOAD_TIMEOUT"] == 180  # defaults still there


def test_get_project_settings_crawlfw_project_selects_entry(clean_env, project):
    (project / "myproj" / "other.py").write_text("BOT_NAME = 'otherbot'\n")
    (project / "crawlfw.cfg").write_text(
        "[settings]\ndefault = myproj.settings\nalt = myproj.other\n")
    clean_env.setenv("CRAWLFW_PROJECT", "alt")
    clean_env.chdir(project)
    assert get_project_settings()["BOT_NAME"] == "otherbot"


def test_env_overrides(clean_env, project):
    clean_env.chdir(project)
    clean_env.setenv("CRAWLFW_BOT_NAME", "envbot")
    clean_env.setenv("CRAWLFW_DOWNLOAD_DELAY", "2.5")
    settings = get_project_settings()
    assert settings["BOT_NAME"] == "envbot"
    assert settings.getfloat("DOWNLOAD_DELAY") == 2.5


def test_no_project_gives_defaults(clean_env, tmp_path):
    clean_env.chdir(tmp_path)
    settings = get_project_settings()
    assert settings["BOT_NAME"] == "crawlfwbot"
    assert "CRAWLFW_SETTINGS_MODULE" not in os.environ
