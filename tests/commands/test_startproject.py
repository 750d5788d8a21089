"""``crawlfw startproject``: the project layout, rendered templates, name checks, and a
generated project that ``list``/``crawl`` work in."""

import ast
import configparser
import json

import pytest

from tests.commands.conftest import QUOTES_SPIDER, write

pytestmark = pytest.mark.slow

EXPECTED_FILES = {
    "crawlfw.cfg",
    "testproj/__init__.py",
    "testproj/items.py",
    "testproj/pipelines.py",
    "testproj/settings.py",
    "testproj/spiders/__init__.py",
}


def _files(root):
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()
            and "__pycache__" not in p.parts}


def test_creates_the_project_layout(crawlfw, tmp_path):
    result = crawlfw("startproject", "testproj")
    assert result.returncode == 0, result.stderr
    root = tmp_path / "testproj"
    assert _files(root) == EXPECTED_FILES
    assert "New crawlfw project 'testproj', using template directory" in result.stdout
    assert str(root) in result.stdout
    assert "crawlfw genspider example example.com" in result.stdout
    for path in root.rglob("*.py"):
        text = path.read_text()
        assert "$" not in text, path  # every placeholder rendered
        ast.parse(text, str(path))
    cfg = configparser.ConfigParser()
    cfg.read(root / "crawlfw.cfg")
    assert cfg.get("settings", "default") == "testproj.settings"
    settings = (root / "testproj" / "settings.py").read_text()
    assert "BOT_NAME = 'testproj'" in settings
    assert "SPIDER_MODULES = ['testproj.spiders']" in settings
    assert "NEWSPIDER_MODULE = 'testproj.spiders'" in settings
    assert "class TestprojItem(crawlfw.Item):" in (root / "testproj" / "items.py").read_text()
    assert "class TestprojPipeline(object):" in (root / "testproj" / "pipelines.py").read_text()


def test_project_dir_argument(crawlfw, tmp_path):
    result = crawlfw("startproject", "other_name", "somewhere")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "somewhere" / "crawlfw.cfg").exists()
    assert (tmp_path / "somewhere" / "other_name" / "settings.py").exists()
    assert not (tmp_path / "other_name").exists()


def test_camelcase_names_in_templates(crawlfw, tmp_path):
    assert crawlfw("startproject", "my_shop").returncode == 0
    items = (tmp_path / "my_shop" / "my_shop" / "items.py").read_text()
    assert "class MyShopItem(crawlfw.Item):" in items


@pytest.mark.parametrize("name, message", [
    ("1abc", "Project names must begin with a letter"),
    ("foo-bar", "Project names must begin with a letter"),
    ("foo bar", "Project names must begin with a letter"),
    ("héllo", "Project names must begin with a letter"),
    ("os", "Module 'os' already exists"),
    ("crawlfw", "Module 'crawlfw' already exists"),
    ("json", "Module 'json' already exists"),
])
def test_invalid_names(crawlfw, tmp_path, name, message):
    result = crawlfw("startproject", name)
    assert result.returncode == 1
    assert message in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_refuses_an_existing_project(crawlfw, tmp_path):
    assert crawlfw("startproject", "testproj").returncode == 0
    result = crawlfw("startproject", "testproj")
    assert result.returncode == 1
    assert f"crawlfw.cfg already exists in {tmp_path / 'testproj'}" in result.stderr


def test_missing_name_is_a_usage_error(crawlfw):
    result = crawlfw("startproject")
    assert result.returncode == 2
    assert "project-name" in result.stderr or "project_name" in result.stderr


def test_list_and_crawl_in_the_generated_project(crawlfw, project, quotes):
    result = crawlfw("list", cwd=project)
    assert (result.returncode, result.stdout) == (0, "")
    write(project / "testproj" / "spiders" / "quotes.py", QUOTES_SPIDER)
    result = crawlfw("list", cwd=project)
    assert (result.returncode, result.stdout) == (0, "quotes\n")

    out = project / "items.jl"
    result = crawlfw("crawl", "quotes", "-a", f"base_url={quotes.url}", "-a", "max_pages=2",
                     "-o", out, cwd=project)
    assert result.returncode == 0, result.stderr
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(items) == 20
    assert items[0]["author"] == "Albert Einstein"
    assert "'finish_reason': 'finished'" in result.stderr
    # the project's settings module was used (robots.txt obeyed, as the template says)
    assert "robotstxt/request_count" in result.stderr
