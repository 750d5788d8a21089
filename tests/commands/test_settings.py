"""``crawlfw settings --get/--getbool/--getint/--getfloat/--getlist``, in and out of a
project."""

import json
import os

import pytest

from crawlfw.settings import default_settings
from tests.commands.conftest import REPO_ROOT

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("args, outside, inside", [
    (["--get", "BOT_NAME"], "crawlfwbot", "testproj"),
    (["--getbool", "ROBOTSTXT_OBEY"], "False", "True"),
    (["--getint", "CONCURRENT_REQUESTS"], "16", "16"),
    (["--getfloat", "DOWNLOAD_DELAY"], "0.0", "0.0"),
    (["--getlist", "SPIDER_MODULES"], "[]", "['testproj.spiders']"),
    (["--get", "NEWSPIDER_MODULE"], "", "testproj.spiders"),
    (["-s", "FOO=bar", "--get", "FOO"], "bar", "bar"),
    (["-s", "BOT_NAME=cmdline", "--get", "BOT_NAME"], "cmdline", "cmdline"),
    (["-s", "N=7", "--getint", "N"], "7", "7"),
    (["--get", "NO_SUCH_SETTING"], "None", "None"),
])
def test_values(crawlfw, tmp_path, project, args, outside, inside):
    out = tmp_path / "outside"
    out.mkdir()
    result = crawlfw("settings", *args, cwd=out)
    assert (result.returncode, result.stdout) == (0, outside + "\n"), result.stderr
    result = crawlfw("settings", *args, cwd=project)
    assert (result.returncode, result.stdout) == (0, inside + "\n"), result.stderr


def test_a_settings_dict_is_printed_as_json(crawlfw):
    result = crawlfw("settings", "--get", "DOWNLOADER_MIDDLEWARES_BASE")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == default_settings.DOWNLOADER_MIDDLEWARES_BASE


def test_environment_overrides_in_a_project(crawlfw, project):
    result = crawlfw("settings", "--get", "BOT_NAME", cwd=project,
                     env={"CRAWLFW_BOT_NAME": "fromenv"})
    assert result.stdout == "fromenv\n"


def test_scrapy_settings_module_is_read_with_one_warning(crawlfw, tmp_path, project):
    """Issue 34: a Scrapy project's CI or deployment file sets SCRAPY_SETTINGS_MODULE;
    with no CRAWLFW_SETTINGS_MODULE it names the project, with one warning line."""
    out = tmp_path / "outside"
    out.mkdir()
    env = {"SCRAPY_SETTINGS_MODULE": "testproj.settings",
           "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(project)])}
    result = crawlfw("settings", "--get", "BOT_NAME", cwd=out, env=env)
    assert (result.returncode, result.stdout) == (0, "testproj\n"), result.stderr
    assert result.stderr.splitlines() == [
        "SCRAPY_SETTINGS_MODULE:0: CrawlfwDeprecationWarning: Using "
        "SCRAPY_SETTINGS_MODULE=testproj.settings (CRAWLFW_SETTINGS_MODULE is not set): "
        "rename the variable to CRAWLFW_SETTINGS_MODULE"]
    result = crawlfw("list", cwd=out, env=env)  # a project command: inside the project
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("SCRAPY_SETTINGS_MODULE=testproj.settings") == 1


def test_bad_conversion_fails(crawlfw):
    result = crawlfw("settings", "-s", "N=abc", "--getint", "N")
    assert result.returncode == 1
    assert "ValueError" in result.stderr


def test_bad_set_option_is_a_usage_error(crawlfw):
    result = crawlfw("settings", "-s", "NOVALUE", "--get", "BOT_NAME")
    assert result.returncode == 2
    assert "Usage error: Invalid -s value, use -s NAME=VALUE" in result.stderr
