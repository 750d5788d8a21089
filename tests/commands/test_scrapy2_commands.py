"""Scrapy 2's command class interface in a project's ``COMMANDS_MODULE``: commands
subclassing ``BaseRunSpiderCommand`` or ``ScrapyCommand`` with argparse options
(``parser.add_argument``), ``requires_crawler_process``, and ``run`` driving
``self.crawler_process.crawl(...)`` / ``.start()`` / ``.bootstrap_failed``, on the real
command line."""

import json

import pytest

from tests.commands.conftest import write

pytestmark = pytest.mark.slow

#: Scrapy 2.19's ``crawl`` command, with one argparse option of its own, as a project
#: writes it (``scrapy`` renamed ``crawlfw``).
CRAWL2 = '''
import argparse

from crawlfw.commands import BaseRunSpiderCommand
from crawlfw.crawler import CrawlerProcessBase
from crawlfw.exceptions import UsageError


class Command(BaseRunSpiderCommand):
    requires_project = True

    def syntax(self) -> str:
        return "[options] <spider>"

    def short_desc(self) -> str:
        return "Run a spider of the project for --pages pages"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--pages", type=int, default=1, help="pages to crawl")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) < 1:
            raise UsageError()
        if len(args) > 1:
            raise UsageError("running 'crawl2' with more than one spider is not supported")
        assert isinstance(self.crawler_process, CrawlerProcessBase)
        opts.spargs.setdefault("max_pages", str(opts.pages))
        self.crawler_process.crawl(self._create_crawler(args[0]), **opts.spargs)
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
'''

#: A command that needs no crawler process (Scrapy 2.12), with argparse options.
NOCRAWL = '''
from crawlfw.commands import ScrapyCommand


class Command(ScrapyCommand):
    requires_crawler_process = False

    def short_desc(self):
        return "Say hello without a crawler process"

    def add_options(self, parser):
        super().add_options(parser)
        group = parser.add_argument_group("Hello options")
        group.add_argument("--name", default="world")

    def run(self, args, opts):
        print(f"hello {opts.name}; process={self.crawler_process}; "
              f"loglevel={self.settings['LOG_LEVEL']}; args={args}")
'''


@pytest.fixture
def scrapy2_project(quotes_project):
    pkg = quotes_project / "testproj"
    with open(pkg / "settings.py", "a", encoding="utf-8") as f:
        f.write("\nCOMMANDS_MODULE = 'testproj.commands'\n")
    write(pkg / "commands" / "__init__.py", "")
    write(pkg / "commands" / "crawl2.py", CRAWL2)
    write(pkg / "commands" / "nocrawl.py", NOCRAWL)
    return quotes_project


def test_listed_with_their_short_desc(crawlfw, scrapy2_project):
    result = crawlfw(cwd=scrapy2_project)
    assert result.returncode == 0, result.stderr
    assert "Run a spider of the project for --pages pages" in result.stdout
    assert "Say hello without a crawler process" in result.stdout


def test_a_base_run_spider_command_crawls(crawlfw, scrapy2_project, quotes, tmp_path):
    out = tmp_path / "out.json"
    result = crawlfw("crawl2", "quotes", "-a", f"base_url={quotes.url}", "--pages", "2",
                     "-O", f"{out}:json", "-s", "LOG_LEVEL=INFO", cwd=scrapy2_project)
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(json.loads(out.read_text())) == 20  # 10 quotes a page, 2 pages
    assert "Traceback" not in result.stderr


def test_its_usage_errors_are_scrapy_2s(crawlfw, scrapy2_project):
    result = crawlfw("crawl2", "quotes", "other", cwd=scrapy2_project)
    assert result.returncode == 2
    assert "crawlfw crawl2: error: running 'crawl2' with more than one spider is not " \
           "supported" in result.stderr
    result = crawlfw("crawl2", "quotes", "-a", "nonsense", cwd=scrapy2_project)
    assert result.returncode == 2
    assert "Invalid -a value, use -a NAME=VALUE" in result.stderr
    result = crawlfw("crawl2", "-h", cwd=scrapy2_project)
    assert result.returncode == 0
    assert "--pages PAGES" in result.stdout and "Global Options" in result.stdout


def test_a_command_without_a_crawler_process(crawlfw, scrapy2_project):
    result = crawlfw("nocrawl", "--name", "crawlfw", "-L", "WARNING", "extra",
                     cwd=scrapy2_project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello crawlfw; process=None; loglevel=WARNING; args=['extra']\n"
