"""``crawlfw list``: the project's spiders, sorted; a project-only command."""

import pytest

from tests.commands.conftest import write

pytestmark = pytest.mark.slow

SPIDERS = '''
import crawlfw


class B(crawlfw.Spider):
    name = "zeta"


class A(crawlfw.Spider):
    name = "alpha"


class NoName(crawlfw.Spider):
    pass
'''


def test_lists_spider_names_sorted(crawlfw, project):
    write(project / "testproj" / "spiders" / "several.py", SPIDERS)
    write(project / "testproj" / "spiders" / "sub" / "__init__.py", "")
    write(project / "testproj" / "spiders" / "sub" / "deep.py", """
        import crawlfw

        class Deep(crawlfw.Spider):
            name = "middle"
    """)
    result = crawlfw("list", cwd=project)
    assert (result.returncode, result.stdout) == (0, "alpha\nmiddle\nzeta\n"), result.stderr


def test_works_from_a_subdirectory(crawlfw, project):
    write(project / "testproj" / "spiders" / "several.py", SPIDERS)
    result = crawlfw("list", cwd=project / "testproj" / "spiders")
    assert result.stdout == "alpha\nzeta\n"


def test_broken_spider_module_fails(crawlfw, project):
    write(project / "testproj" / "spiders" / "broken.py", "import no_such_module_here\n")
    result = crawlfw("list", cwd=project)
    assert result.returncode == 1
    assert "no_such_module_here" in result.stderr


def test_not_available_outside_a_project(crawlfw):
    result = crawlfw("list")
    assert result.returncode == 2
    assert "Unknown command: list" in result.stderr
    assert "only works inside a project" in result.stderr
    help_text = crawlfw("-h").stdout
    assert "no active project" in help_text
    assert "list" not in help_text.split("Available commands:")[1]
