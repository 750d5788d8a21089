"""``crawlfw version [-v]``: -v lists every library the runtime uses, libcurl's build and
features, and says that Twisted is not used (the seed's listing names Twisted)."""

import re

import pycurl
import pytest

from crawlfw import __version__
from tests.commands.conftest import REPO_ROOT

pytestmark = pytest.mark.slow


def _lines(stdout):
    return dict(re.findall(r"^(.+?) +: (.*)$", stdout, re.M))


def test_version(crawlfw):
    result = crawlfw("version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"crawlfw {__version__}\n"


def test_verbose_lists_every_runtime_dependency(crawlfw):
    result = crawlfw("version", "-v")
    assert result.returncode == 0, result.stderr
    lines = _lines(result.stdout)
    assert lines["crawlfw"] == __version__
    pyproject = (REPO_ROOT / "pyproject.toml").read_text()
    block = re.search(r"^dependencies = \[(.*?)^\]", pyproject, re.M | re.S).group(1)
    requirements = re.findall(r'"([A-Za-z0-9_.-]+)', block)
    assert "pycurl" in requirements and "protego" in requirements
    for name in requirements:
        assert name in lines, f"{name} missing from version -v"
        assert lines[name] != "not installed"
    info = pycurl.version_info()
    assert lines["libcurl"].startswith(f"{info[1]} ({info[5]}")
    assert "SSL" in lines["libcurl features"].split(", ")
    assert lines["Twisted"].startswith("not used")
    for name in ("libxml2", "Python", "Platform"):
        assert lines[name]
