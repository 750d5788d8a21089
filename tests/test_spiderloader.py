"""SpiderLoader: spiders found in SPIDER_MODULES and their submodules; a broken spider
module named in one line (file, line, error), raised as Scrapy raises it or, with
SPIDER_LOADER_WARN_ONLY, skipped with one WARNING; find_by_request ignores a URL's port
as allowed_domains does (issue 35)."""

import logging
import sys
import textwrap

import pytest

from crawlfw import spiderloader
from crawlfw.http import Request
from crawlfw.settings import Settings
from crawlfw.spiderloader import SpiderLoader, load_error_message, spider_load_error

GOOD = '''
import crawlfw


class GoodSpider(crawlfw.Spider):
    name = "good"
    allowed_domains = ["example.com"]
'''

PORT = '''
import crawlfw


class LocalSpider(crawlfw.Spider):
    name = "local"
    allowed_domains = ["127.0.0.1"]


class WithPortSpider(crawlfw.Spider):
    name = "with_port"
    allowed_domains = ["localhost:8400"]
'''

BROKEN = {
    "syntax": ("import crawlfw\n\n\ndef parse(self, response)\n    pass\n", 4, "SyntaxError: "),
    "missing dependency": ("import crawlfw\nimport nosuchmodule_xyz\n", 2,
                           "ModuleNotFoundError: No module named 'nosuchmodule_xyz'"),
    "error at import": ("import crawlfw\n\nX = 1\nY = undefined_name\n", 4,
                        "NameError: name 'undefined_name' is not defined"),
}


@pytest.fixture
def make_project(tmp_path, monkeypatch):
    """``make_project({module: source})`` -> the package name of a spiders package
    holding those modules (importable; removed from sys.modules afterwards)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(spiderloader, "_warned", set())
    made = []

    def make(modules, package="sl_proj_spiders"):
        root = tmp_path / package
        (root / "sub").mkdir(parents=True)
        (root / "__init__.py").write_text("")
        (root / "sub" / "__init__.py").write_text("")
        for name, source in modules.items():
            (root / f"{name.replace('.', '/')}.py").write_text(textwrap.dedent(source))
        made.append(package)
        return package

    yield make
    for name in list(sys.modules):
        if any(name == p or name.startswith(p + ".") for p in made):
            del sys.modules[name]


def _loader(package, **settings):
    return SpiderLoader.from_settings(Settings({"SPIDER_MODULES": [package], **settings}))


def test_finds_spiders_in_submodules(make_project):
    package = make_project({"good": GOOD, "sub.port": PORT})
    assert sorted(_loader(package).list()) == ["good", "local", "with_port"]


@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_broken_module_is_raised_with_its_one_line(make_project, kind):
    source, line, error = BROKEN[kind]
    package = make_project({"good": GOOD, "sub.broken": source})
    with pytest.raises(Exception) as info:
        _loader(package)
    # Scrapy's exception types (a test of a Scrapy project may expect them)
    assert isinstance(info.value, SyntaxError if kind == "syntax" else Exception)
    message = spider_load_error(info.value)
    assert message.startswith(
        f"Could not load spiders from module '{package}.sub.broken' "
        f"({package}/sub/broken.py, line {line}): {error}")
    assert "\n" not in message


@pytest.mark.parametrize("kind", list(BROKEN))
def test_warn_only_skips_the_broken_module_with_one_warning(make_project, caplog, kind):
    source, line, error = BROKEN[kind]
    package = make_project({"good": GOOD, "sub.broken": source, "sub.port": PORT})
    with caplog.at_level(logging.WARNING, logger="crawlfw.spiderloader"):
        loader = _loader(package, SPIDER_LOADER_WARN_ONLY=True)
        _loader(package, SPIDER_LOADER_WARN_ONLY=True)  # loaded again: not warned again
    assert sorted(loader.list()) == ["good", "local", "with_port"]  # the others load
    (record,) = [r for r in caplog.records if r.name == "crawlfw.spiderloader"]
    assert record.levelno == logging.WARNING
    assert record.getMessage().startswith(
        f"Could not load spiders from module '{package}.sub.broken' "
        f"({package}/sub/broken.py, line {line}): {error}")
    assert record.getMessage().endswith("; skipped (SPIDER_LOADER_WARN_ONLY)")


def test_warn_only_a_missing_module(make_project, caplog):
    with caplog.at_level(logging.WARNING, logger="crawlfw.spiderloader"):
        loader = _loader("sl_no_such_package", SPIDER_LOADER_WARN_ONLY="True")
    assert loader.list() == []
    assert [r.getMessage() for r in caplog.records] == [
        "Could not load spiders from module 'sl_no_such_package': ModuleNotFoundError: "
        "No module named 'sl_no_such_package'; skipped (SPIDER_LOADER_WARN_ONLY)"]


def test_a_missing_module_raises_import_error():
    with pytest.raises(ImportError) as info:
        _loader("sl_no_such_package")
    assert spider_load_error(info.value) == (
        "Could not load spiders from module 'sl_no_such_package': ModuleNotFoundError: "
        "No module named 'sl_no_such_package'")


def test_a_syntax_error_in_a_module_the_spider_imports_is_placed_there(make_project):
    package = make_project({"helper": "def f(:\n    pass\n",
                            "sub.uses": "from sl_proj_spiders import helper\n"})
    with pytest.raises(SyntaxError) as info:
        _loader(package)
    assert spider_load_error(info.value).startswith(
        f"Could not load spiders from module '{package}.helper' ({package}/helper.py, "
        "line 1): SyntaxError: ")


def test_other_errors_are_not_described():
    assert spider_load_error(ValueError("x")) is None


def test_load_error_message_outside_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    error = SyntaxError("invalid syntax", (str(tmp_path / "x.py"), 3, 1, "x y"))
    assert load_error_message("file 'x.py'", error) == (
        f"Could not load spiders from file 'x.py' ({tmp_path}/x.py, line 3): "
        "SyntaxError: invalid syntax")


@pytest.mark.parametrize("url, names", [
    ("http://127.0.0.1:8400/", ["local"]),  # the port is ignored, as allowed_domains does
    ("http://127.0.0.1/", ["local"]),
    ("https://sub.example.com:8443/x", ["good"]),
    ("http://localhost:8400/", ["with_port"]),  # an entry with its port still matches
    ("http://localhost/", []),
    ("http://127.0.0.2:8400/", []),
])
def test_find_by_request_ignores_the_port(make_project, url, names):
    package = make_project({"good": GOOD, "port": PORT})
    assert sorted(_loader(package).find_by_request(Request(url))) == names
