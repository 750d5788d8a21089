"""The command line as real Scrapy 2 projects ported with ``crawlfw port`` use it (issue 29:
kingfisher-collect, querido-diario): ``cmdline.execute(["scrapy", ...])`` from their
tests, a project command's ``crawler_process`` (Scrapy 2.19's ``AsyncCrawlerProcess``,
which their tests patch), and a Scrapy-only plugin left in the settings."""

import subprocess
import sys

import pytest

from tests.commands.conftest import write
from tests.support.proc import crawlfw_env

pytestmark = pytest.mark.slow


def _python(code, cwd):
    return subprocess.run([sys.executable, "-c", code], cwd=str(cwd), env=crawlfw_env(),
                          capture_output=True, text=True, timeout=90)


EXECUTE = '''
from crawlfw.cmdline import execute
from crawlfw.settings import Settings
for argv, settings in ((["scrapy", "list"], None),
                       (["scrapy", "settings", "--get", "BOT_NAME"],
                        Settings({"BOT_NAME": "given"}))):
    try:
        execute(argv, settings)
    except SystemExit as e:  # always, as Scrapy's
        print("exit", e.code)
'''


def test_execute_takes_the_program_name_first(quotes_project):
    # kingfisher-collect's tests: execute(["scrapy", "checkall"]) in pytest.raises(SystemExit)
    result = _python(EXECUTE, quotes_project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["quotes", "exit 0", "given", "exit 0"]


#: A Scrapy plugin left in the settings: its module imports Scrapy.
PLUGIN = '''
import scrapy  # noqa: F401


class ItemValidationPipeline:
    def process_item(self, item, spider):
        return item
'''

#: A project command crawling every spider, as kingfisher-collect's crawlall.
CRAWLALL = '''
from crawlfw.commands import ScrapyCommand


class Command(ScrapyCommand):
    def short_desc(self):
        return "Run all spiders"

    def add_options(self, parser):  # argparse: a Scrapy 2 command
        super().add_options(parser)
        parser.add_argument("--dry-run", action="store_true")

    def run(self, args, opts):
        print("process:", type(self.crawler_process).__name__, flush=True)
        for name in self.crawler_process.spider_loader.list():
            self.crawler_process.crawl(name, base_url=args[0] if args else "")
        self.crawler_process.start()
'''


@pytest.fixture
def plugin_project(quotes_project):
    pkg = quotes_project / "testproj"
    write(quotes_project / "scrapy_fakeplugin" / "__init__.py", "")
    write(quotes_project / "scrapy_fakeplugin" / "pipelines.py", PLUGIN)
    write(pkg / "commands" / "__init__.py", "")
    write(pkg / "commands" / "crawlall.py", CRAWLALL)
    with open(pkg / "settings.py", "a", encoding="utf-8") as f:
        f.write("\nCOMMANDS_MODULE = 'testproj.commands'\n"
                "ITEM_PIPELINES = {'scrapy_fakeplugin.pipelines.ItemValidationPipeline': 400}"
                "\n")
    return quotes_project


LINE = ("ITEM_PIPELINES: cannot load 'scrapy_fakeplugin.pipelines.ItemValidationPipeline': "
        "ModuleNotFoundError: No module named 'scrapy' (a Scrapy plugin, which crawlfw "
        "cannot load: remove it or map it to None)")


def test_a_scrapy_plugin_in_the_settings_refuses_the_crawl_in_one_line(
        crawlfw, plugin_project, quotes):
    out = plugin_project / "out.json"
    result = crawlfw("crawl", "quotes", "-a", f"base_url={quotes.url}", "-O", str(out),
                     cwd=plugin_project)
    assert result.returncode == 1, result.stderr[-3000:]
    assert f"Crawl could not start: {LINE}" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()
    # mapped to None it is not loaded: the crawl runs
    result = crawlfw("crawl", "quotes", "-a", f"base_url={quotes.url}", "-O", str(out),
                     "-a", "max_pages=1", "-s",
                     "ITEM_PIPELINES={\"scrapy_fakeplugin.pipelines.ItemValidationPipeline\": null}",
                     cwd=plugin_project)
    assert result.returncode == 0, result.stderr[-3000:]
    assert out.exists()


def test_a_project_command_whose_crawl_cannot_start_exits_1_in_one_line(
        crawlfw, plugin_project, quotes):
    result = crawlfw("crawlall", quotes.url, cwd=plugin_project)
    assert result.stdout.startswith("process: AsyncCrawlerProcess\n")  # Scrapy 2.19's
    assert result.returncode == 1, result.stderr[-3000:]
    assert f"Crawl could not start: {LINE}" in result.stderr
    assert "Traceback" not in result.stderr and "never retrieved" not in result.stderr
    result = crawlfw("crawlall", quotes.url, "-s", "FORCE_CRAWLER_PROCESS=True",
                     cwd=plugin_project)
    assert result.stdout.startswith("process: CrawlerProcess\n")
    assert result.returncode == 1, result.stderr[-3000:]
    assert f"Crawl could not start: {LINE}" in result.stderr
    assert "Traceback" not in result.stderr
