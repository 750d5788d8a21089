"""``crawlfw`` with no arguments prints Scrapy 1.2's listing: a first line naming the
active project (or ``no active project``), then one line per available command."""

import re

import pytest

from crawlfw import __version__

pytestmark = pytest.mark.slow


def _commands(stdout):
    listing = stdout.split("Available commands:\n")[1]
    return re.findall(r"^  (\S+) +(\S.*)$", listing, re.M)


def test_no_arguments_outside_a_project(crawlfw):
    result = crawlfw()
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"crawlfw {__version__} - no active project"
    assert lines[2:4] == ["Usage:", "  crawlfw <command> [options] [args]"]
    commands = dict(_commands(result.stdout))
    assert commands["runspider"] == "Run a self-contained spider (without creating a project)"
    assert commands["version"] == "Print crawlfw version"
    assert commands["startproject"] == "Create new project"
    assert "crawl" not in commands and "list" not in commands
    assert "  [ more ]      More commands available when run from project directory" in lines
    assert lines[-1] == 'Use "crawlfw <command> -h" to see more info about a command'
    assert crawlfw("-h").stdout == result.stdout


def test_no_arguments_inside_a_project(crawlfw, project):
    result = crawlfw(cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == f"crawlfw {__version__} - project: testproj"
    commands = dict(_commands(result.stdout))
    assert commands["crawl"] == "Run a spider"
    assert commands["list"] == "List available spiders"
    assert "[ more ]" not in result.stdout


def test_command_help_shows_each_default_once(crawlfw, project):
    for command in ("runspider", "crawl", "genspider", "parse", "fetch", "shell", "version"):
        result = crawlfw(command, "-h", cwd=project)
        assert result.returncode == 0, result.stderr
        text = " ".join(result.stdout.split())  # argparse wraps long lines
        assert "(default: -)" not in text, command
        assert "(default: False)" not in text, command
        assert text.count("(default: DEBUG)") == 1, command
    assert "(default: basic)" in crawlfw("genspider", "-h").stdout


def test_scrapy_cfg_warns_once_per_command(crawlfw, project):
    (project / "crawlfw.cfg").rename(project / "scrapy.cfg")
    for args in (["list"], ["version"], []):
        result = crawlfw(*args, cwd=project)
        assert result.returncode == 0, result.stderr
        warning = f"{project / 'scrapy.cfg'}:0: CrawlfwDeprecationWarning: Using "
        assert result.stderr.count("rename it to crawlfw.cfg") == 1, result.stderr
        assert result.stderr.splitlines() == [
            f"{warning}{project / 'scrapy.cfg'}: rename it to crawlfw.cfg"]
