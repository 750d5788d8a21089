"""A project where one spider file has a syntax error (issue 35): ``crawl`` of another
spider, ``list`` and ``runspider`` on that file print one line naming the file, the line
and the error, and exit 1 (no traceback); with ``SPIDER_LOADER_WARN_ONLY`` the module is
skipped with one WARNING and the rest of the project works."""

import pytest

from tests.commands.conftest import write

pytestmark = pytest.mark.slow

OTHER = """
    import crawlfw


    class OtherSpider(crawlfw.Spider):
        name = "other"

        def start_requests(self):
            return []
"""

BROKEN = """
    import crawlfw


    class BrokenSpider(crawlfw.Spider):
        name = "broken"

        def parse(self, response)
            pass
"""

LINE = "(testproj/spiders/broken.py, line 7): SyntaxError: expected ':'"
MODULE_LINE = f"Could not load spiders from module 'testproj.spiders.broken' {LINE}"


@pytest.fixture
def broken_project(project):
    write(project / "testproj" / "spiders" / "other.py", OTHER)
    write(project / "testproj" / "spiders" / "broken.py", BROKEN)
    return project


@pytest.mark.parametrize("args", [
    ["crawl", "other"],
    ["crawl", "other", "--nolog"],
    ["list"],
    ["parse", "http://127.0.0.1:1/"],
])
def test_one_line_naming_file_line_and_error(crawlfw, broken_project, args):
    result = crawlfw(*args, cwd=broken_project)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    (line,) = [x for x in lines if "Could not load" in x]
    assert line.endswith(MODULE_LINE)
    if args[0] != "list" and "--nolog" not in args:  # the log is on: in it, once
        assert f"[crawlfw.commands.{args[0]}] ERROR: {MODULE_LINE}" in line
    else:
        assert lines == [MODULE_LINE]
    assert result.stdout == ""


def test_runspider_on_the_file_uses_the_same_convention(crawlfw, broken_project):
    spider_file = "testproj/spiders/broken.py"
    result = crawlfw("runspider", spider_file, cwd=broken_project)
    assert result.returncode == 1, result.stderr  # not a usage error (2)
    assert result.stderr.splitlines() == [
        f"Could not load spiders from file {spider_file!r} {LINE}"]


@pytest.mark.parametrize("how", ["-s", "settings.py"])
def test_warn_only_skips_the_module_with_one_warning(crawlfw, broken_project, how):
    if how == "-s":
        options = ["-s", "SPIDER_LOADER_WARN_ONLY=True"]
    else:
        options = []
        settings = broken_project / "testproj" / "settings.py"
        settings.write_text(settings.read_text() + "\nSPIDER_LOADER_WARN_ONLY = True\n")
    listed = crawlfw("list", *options, cwd=broken_project)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == ["other"]
    assert listed.stderr.splitlines() == [
        f"{MODULE_LINE}; skipped (SPIDER_LOADER_WARN_ONLY)"]
    crawled = crawlfw("crawl", "other", *options, cwd=broken_project)
    assert crawled.returncode == 0, crawled.stderr
    warnings = [x for x in crawled.stderr.splitlines() if "Could not load" in x]
    assert [x.split(" ", 2)[2] for x in warnings] == [
        f"[crawlfw.spiderloader] WARNING: {MODULE_LINE}; skipped (SPIDER_LOADER_WARN_ONLY)"]
    assert "'finish_reason': 'finished'" in crawled.stderr


@pytest.mark.parametrize("name, text, status, line", [
    ("missing.py", None, 2, "Usage error: File not found: missing.py"),
    ("spider.txt", "x = 1\n", 2, "Usage error: Unable to load 'spider.txt': Not a Python "
                                 "source file: {path}"),
    ("nospider.py", "x = 1\n", 2, "Usage error: No spider found in file: nospider.py"),
    ("raises.py", "import crawlfw\n\nint('x')\n", 1,
     "Could not load spiders from file 'raises.py' (raises.py, line 3): ValueError: "
     "invalid literal for int() with base 10: 'x'"),
])
def test_runspider_usage_errors_stay_usage_errors(crawlfw, tmp_path, name, text, status,
                                                  line):
    """The command line naming a wrong file is a usage error (2); a file that cannot be
    imported is not (1)."""
    if text is not None:
        (tmp_path / name).write_text(text)
    result = crawlfw("runspider", name)
    assert result.returncode == status, result.stderr
    assert result.stderr.splitlines()[0] == line.format(path=tmp_path / name)
