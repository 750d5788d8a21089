"""``crawlfw edit <spider>``: runs EDITOR on the spider's module file."""

import pytest

from tests.commands.conftest import QUOTES_SPIDER, write

pytestmark = pytest.mark.slow


@pytest.fixture
def with_spider(project):
    write(project / "testproj" / "spiders" / "quotes.py", QUOTES_SPIDER)
    return project


def test_runs_the_editor_from_the_environment(crawlfw, with_spider):
    result = crawlfw("edit", "quotes", cwd=with_spider, env={"EDITOR": "echo EDITING"})
    assert result.returncode == 0, result.stderr
    path = with_spider / "testproj" / "spiders" / "quotes.py"
    assert result.stdout == f"EDITING {path}\n"


def test_editor_setting_wins_over_the_environment(crawlfw, with_spider):
    result = crawlfw("edit", "quotes", "-s", "EDITOR=echo FROM_SETTING", cwd=with_spider,
                     env={"EDITOR": "echo FROM_ENV"})
    assert result.stdout.startswith("FROM_SETTING ")


def test_exit_status_of_the_editor(crawlfw, with_spider):
    result = crawlfw("edit", "quotes", cwd=with_spider, env={"EDITOR": "exit 3;"})
    assert result.returncode == 3


def test_unknown_spider(crawlfw, with_spider):
    result = crawlfw("edit", "nope", cwd=with_spider, env={"EDITOR": "echo"})
    assert result.returncode == 1
    assert result.stderr.strip() == "Spider not found: nope"
    assert result.stdout == ""


def test_needs_a_spider_name(crawlfw, with_spider):
    assert crawlfw("edit", cwd=with_spider).returncode == 2
