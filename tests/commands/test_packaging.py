"""The project and spider templates are package data: they are in the wheel, and
``startproject``/``genspider`` work from an installed (unpacked) wheel."""

import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from tests.commands.conftest import REPO_ROOT

# One worker runs the module under pytest-xdist (--dist loadgroup): its module-scoped
# wheel is built once, not once per worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheel")]

TEMPLATES = sorted(
    str(p.relative_to(REPO_ROOT)) for p in (REPO_ROOT / "crawlfw" / "templates").rglob("*")
    if p.is_file() and "__pycache__" not in p.parts)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """A wheel built (offline, no build isolation) from a copy of the source tree."""
    pytest.importorskip("setuptools")
    pytest.importorskip("wheel")
    src = tmp_path_factory.mktemp("src")
    shutil.copytree(REPO_ROOT / "crawlfw", src / "crawlfw",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO_ROOT / name, src / name)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps",
                    "--no-build-isolation", "--no-index", "-q", "-w", str(out)],
                   check=True, capture_output=True, timeout=300)
    (path,) = out.glob("crawlfw-*.whl")
    return path


def test_templates_are_in_the_wheel(wheel):
    assert len(TEMPLATES) >= 10
    names = set(zipfile.ZipFile(wheel).namelist())
    assert [t for t in TEMPLATES if t not in names] == []


def test_startproject_from_the_installed_package(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRAWLFW_")}
    env["PYTHONPATH"] = str(site)  # ahead of the editable install of the source tree
    work = tmp_path / "work"
    work.mkdir()

    def run(*args, cwd=work):
        return subprocess.run([sys.executable, "-m", "crawlfw.cmdline", *args], cwd=cwd,
                              env=env, capture_output=True, text=True, timeout=90)

    result = run("startproject", "fromwheel")
    assert result.returncode == 0, result.stderr
    assert f"using template directory '{site / 'crawlfw' / 'templates' / 'project'}'" \
        in result.stdout
    assert (work / "fromwheel" / "fromwheel" / "settings.py").exists()
    result = run("genspider", "-t", "crawl", "site", "example.com", cwd=work / "fromwheel")
    assert result.returncode == 0, result.stderr
    assert "CrawlSpider" in (work / "fromwheel" / "fromwheel" / "spiders" / "site.py").read_text()
