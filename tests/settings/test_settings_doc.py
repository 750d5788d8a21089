"""docs/settings.md's table of crawlfw's own settings lists every default setting that is
not Scrapy's, with its default value (issue 35); the generated settings.py points at it."""

import ast
import re
from pathlib import Path

from crawlfw.settings import default_settings
from crawlfw.settings._spelling import SCRAPY_SETTINGS

REPO = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| `([A-Z][A-Z0-9_]*)` \| `([^`]*)` \| (.+) \|$", re.M)


def _table():
    text = (REPO / "docs" / "settings.md").read_text()
    section = text.split("## crawlfw's own settings", 1)[1].split("\n## ", 1)[0]
    return {name: (default, what) for name, default, what in ROW.findall(section)}


def test_every_crawlfw_only_setting_is_in_the_table():
    own = {name for name in dir(default_settings)
           if name.isupper() and name not in SCRAPY_SETTINGS}
    assert sorted(_table()) == sorted(own)


def test_the_table_gives_each_default():
    for name, (default, what) in _table().items():
        assert ast.literal_eval(default) == getattr(default_settings, name), name
        assert what.strip(), name


def test_the_project_template_points_at_the_table():
    template = (REPO / "crawlfw" / "templates" / "project" / "module" / "settings.py.tmpl")
    assert "docs/settings.md" in template.read_text()
