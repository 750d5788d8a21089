"""Class-based custom commands (Scrapy 1.2's ``ScrapyCommand`` API) on the real command
line: from ``COMMANDS_MODULE`` in a project made by ``crawlfw startproject``, from the
``crawlfw.commands`` entry-point group, overriding and extending built-in commands."""

import json
import os
import re

import lxml.html
import pytest

import crawlfw
from tests.commands.conftest import REPO_ROOT, write
from tests.commands.test_crawl import expected_quotes

pytestmark = pytest.mark.slow

#: ``testproj/commands/quotestats.py``: crawls a quotes site through
#: ``self.crawler_process`` and prints how many quotes an author has.
QUOTESTATS = '''
import crawlfw
from crawlfw.commands import ScrapyCommand
from crawlfw.exceptions import UsageError

FOUND = []


class _AuthorsSpider(crawlfw.Spider):
    name = "authors"

    def __init__(self, url=None, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [url]

    def parse(self, response):
        for author in response.css("small.author::text").extract():
            FOUND.append(author)
            yield {"author": author}


class Command(ScrapyCommand):
    requires_project = True
    default_settings = {"LOG_LEVEL": "INFO"}

    def syntax(self):
        return "[options] <url>"

    def short_desc(self):
        return "Count the quotes of an author"

    def add_options(self, parser):
        ScrapyCommand.add_options(self, parser)
        parser.add_option("--author", metavar="NAME", help="the author whose quotes to count")

    def run(self, args, opts):
        if len(args) != 1:
            raise UsageError("quotestats takes exactly one URL", print_help=False)
        if not opts.author:
            raise UsageError("--author is required")
        self.crawler_process.crawl(_AuthorsSpider, url=args[0])
        self.crawler_process.start()
        label = self.settings.get("RESULT_LABEL", "quotes")
        print(f"{label}: {opts.author} {FOUND.count(opts.author)} of {len(FOUND)}")
        if not FOUND:
            self.exitcode = 3
'''

#: ``testproj/commands/version.py``: replaces the built-in ``version`` command.
VERSION = '''
from crawlfw.commands import ScrapyCommand


class Command(ScrapyCommand):
    def short_desc(self):
        return "Print the version of testproj"

    def run(self, args, opts):
        print("testproj version 7")
'''

#: ``testproj/commands/crawlpages.py``: the built-in crawl command with one more option.
CRAWLPAGES = '''
from crawlfw.commands.crawl import Command as CrawlCommand


class Command(CrawlCommand):
    def short_desc(self):
        return "Crawl a spider for --pages pages"

    def add_options(self, parser):
        super().add_options(parser)
        parser.add_option("--pages", type="int", default=1, help="pages to crawl")

    def process_options(self, args, opts):
        super().process_options(args, opts)
        opts.spargs.setdefault("max_pages", str(opts.pages))
'''

#: ``testproj/commands/crawlall.py``: Scrapy's classic "crawl every spider" command.
CRAWLALL = '''
from crawlfw.commands import ScrapyCommand


class Command(ScrapyCommand):
    requires_project = True

    def short_desc(self):
        return "Run every spider of the project"

    def run(self, args, opts):
        for name in sorted(self.crawler_process.spider_loader.list()):
            self.crawler_process.crawl(name, base_url=args[0], max_pages="1")
        self.crawler_process.start()
'''

#: Subclasses of built-in ``Command`` classes, each in ``testproj/commands/<name>.py``.
SUBCLASS = '''
from crawlfw.commands.{base} import Command as Base


class Command(Base):
    pass
'''


@pytest.fixture
def cmd_project(quotes_project):
    """The quotes project with ``COMMANDS_MODULE = 'testproj.commands'`` and the commands
    above in it."""
    pkg = quotes_project / "testproj"
    with open(pkg / "settings.py", "a", encoding="utf-8") as f:
        f.write("\nCOMMANDS_MODULE = 'testproj.commands'\n")
    write(pkg / "commands" / "__init__.py", "")
    write(pkg / "commands" / "quotestats.py", QUOTESTATS)
    write(pkg / "commands" / "version.py", VERSION)
    write(pkg / "commands" / "crawlpages.py", CRAWLPAGES)
    write(pkg / "commands" / "crawlall.py", CRAWLALL)
    for base in ("list", "settings", "version", "fetch", "parse", "check"):
        write(pkg / "commands" / f"my{base}.py", SUBCLASS.format(base=base))
    return quotes_project


def authors_on_first_page(sites_dir):
    doc = lxml.html.fromstring((sites_dir / "quotes.toscrape.com" / "index.html").read_bytes())
    return doc.xpath('//small[@class="author"]/text()')


def test_custom_command_crawls_with_options_and_settings(crawlfw, cmd_project, quotes,
                                                         sites_dir):
    result = crawlfw("quotestats", "--author", "Albert Einstein", "-s", "RESULT_LABEL=einstein",
                     f"{quotes.url}/", cwd=cmd_project)
    assert result.returncode == 0, result.stderr
    authors = authors_on_first_page(sites_dir)
    assert authors.count("Albert Einstein") >= 1
    assert result.stdout == (f"einstein: Albert Einstein {authors.count('Albert Einstein')} "
                             f"of {len(authors)}\n")
    # the command's default_settings (LOG_LEVEL INFO) apply, and -L overrides them
    assert "(bot: testproj)" in result.stderr
    assert " DEBUG: " not in result.stderr
    debug = crawlfw("quotestats", "--author", "Albert Einstein", "-L", "DEBUG",
                    f"{quotes.url}/", cwd=cmd_project)
    assert debug.returncode == 0, debug.stderr
    assert " DEBUG: Crawled (200)" in debug.stderr
    quiet = crawlfw("quotestats", "--author", "Nobody", "--nolog", f"{quotes.url}/",
                    cwd=cmd_project)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == f"quotes: Nobody 0 of {len(authors)}\n"
    assert quiet.stderr == ""


def test_exitcode_is_the_exit_status(crawlfw, cmd_project, unused_port):
    result = crawlfw("quotestats", "--author", "X", "--nolog",
                     f"http://127.0.0.1:{unused_port}/", cwd=cmd_project)
    assert result.returncode == 3, result.stderr
    assert result.stdout == "quotes: X 0 of 0\n"


def test_help_lists_custom_commands(crawlfw, cmd_project):
    result = crawlfw("-h", cwd=cmd_project)
    assert result.returncode == 0, result.stderr
    assert "quotestats" in result.stdout
    assert "Count the quotes of an author" in result.stdout
    # the built-in "version" is replaced; "myversion" (a subclass) keeps its description
    assert re.search(r"^ +version +Print the version of testproj$", result.stdout, re.M)
    assert re.search(r"^ +myversion +Print crawlfw version$", result.stdout, re.M)
    assert len(re.findall(r"^ +version ", result.stdout, re.M)) == 1


def test_command_help(crawlfw, cmd_project):
    result = crawlfw("quotestats", "-h", cwd=cmd_project)
    assert result.returncode == 0, result.stderr
    assert "crawlfw quotestats [options] <url>" in result.stdout
    assert "--author=NAME" in result.stdout
    assert "Global Options" in result.stdout
    assert "--set=NAME=VALUE, -s NAME=VALUE" in result.stdout


@pytest.mark.parametrize("args, message, with_help", [
    (["quotestats"], "crawlfw quotestats: error: quotestats takes exactly one URL", False),
    (["quotestats", "http://127.0.0.1:1/"], "crawlfw quotestats: error: --author is required",
     True),
    (["quotestats", "-s", "NOEQUALS", "http://127.0.0.1:1/"],
     "Invalid -s value, use -s NAME=VALUE", False),
    (["quotestats", "--no-such-option"], "no such option: --no-such-option", False),
    (["crawlpages", "quotes", "-a", "novalue"], "Invalid -a value, use -a NAME=VALUE", False),
    (["crawlpages"], None, True),
])
def test_usage_errors_exit_2(crawlfw, cmd_project, args, message, with_help):
    result = crawlfw(*args, cwd=cmd_project)
    assert result.returncode == 2, (result.stdout, result.stderr)
    output = result.stdout + result.stderr
    if message:
        assert message in result.stderr
        assert f"Usage\n=====\n  crawlfw {args[0]} " in result.stderr
    assert ("Global Options" in output) is with_help


def test_custom_command_replaces_builtin(crawlfw, cmd_project):
    result = crawlfw("version", cwd=cmd_project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "testproj version 7\n"


def test_builtin_is_back_outside_the_project(crawlfw, cmd_project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    result = crawlfw("version", cwd=outside)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"crawlfw {crawlfw_version()}\n"


def crawlfw_version():
    return crawlfw.__version__


def test_subclass_of_crawl_command(crawlfw, cmd_project, quotes, sites_dir):
    out = cmd_project / "out.jl"
    result = crawlfw("crawlpages", "quotes", "-a", f"base_url={quotes.url}", "--pages", "2",
                     "-o", out, cwd=cmd_project)
    assert result.returncode == 0, result.stderr
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert items == expected_quotes(sites_dir, 2)


def test_subclass_of_crawl_command_unknown_spider(crawlfw, cmd_project):
    result = crawlfw("crawlpages", "nosuchspider", cwd=cmd_project)
    assert result.returncode == 1
    assert "Spider not found: nosuchspider" in result.stderr


def test_crawl_every_spider(crawlfw, cmd_project, quotes):
    result = crawlfw("crawlall", quotes.url, "-s", "LOG_LEVEL=INFO", cwd=cmd_project)
    assert result.returncode == 0, result.stderr
    assert "'item_scraped_count': 10" in result.stderr
    assert "'finish_reason': 'finished'" in result.stderr


@pytest.mark.parametrize("name, args, expected", [
    ("mylist", [], "quotes\n"),
    ("mysettings", ["--get", "BOT_NAME"], "testproj\n"),
    ("myversion", [], f"crawlfw {crawlfw.__version__}\n"),
    ("mycheck", ["-l"], ""),
])
def test_subclasses_of_builtin_commands(crawlfw, cmd_project, name, args, expected):
    result = crawlfw(name, *args, cwd=cmd_project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected


def test_subclass_of_fetch_command(crawlfw, cmd_project, quotes, sites_dir):
    result = crawlfw("myfetch", "--nolog", f"{quotes.url}/", cwd=cmd_project)
    assert result.returncode == 0, result.stderr
    body = (sites_dir / "quotes.toscrape.com" / "index.html").read_text(encoding="utf-8")
    assert result.stdout.rstrip("\n") == body.rstrip("\n")
    refused = crawlfw("myfetch", "--nolog", "http://127.0.0.1:1/", cwd=cmd_project)
    assert refused.returncode == 1
    assert refused.stdout == ""


def test_subclass_of_parse_command(crawlfw, cmd_project, quotes):
    result = crawlfw("myparse", "--nolog", "--nocolour", "--spider", "quotes", "-c", "parse",
                     "-a", f"base_url={quotes.url}", f"{quotes.url}/", cwd=cmd_project)
    assert result.returncode == 0, result.stderr
    assert ">>> STATUS DEPTH LEVEL 1 <<<" in result.stdout
    assert "Albert Einstein" in result.stdout


def test_profile_and_pidfile(crawlfw, cmd_project, tmp_path):
    result = crawlfw("mysettings", "--get", "BOT_NAME", "--profile", tmp_path / "prof",
                     "--pidfile", tmp_path / "pid", cwd=cmd_project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "testproj\n"
    assert (tmp_path / "prof").stat().st_size > 0
    assert int((tmp_path / "pid").read_text()) > 0


# --------------------------------------------------------------------------------------
# Outside a project: COMMANDS_MODULE from the environment, and entry points
# --------------------------------------------------------------------------------------

EXT_HELLO = '''
from crawlfw.commands import ScrapyCommand


class Command(ScrapyCommand):
    def short_desc(self):
        return "Say hello"

    def run(self, args, opts):
        print("hello", *args)
'''

EXT_NEEDSPROJ = '''
from crawlfw.commands import CrawlfwCommand


class Command(CrawlfwCommand):
    requires_project = True

    def short_desc(self):
        return "Needs a project"

    def run(self, args, opts):
        print("in project")
'''

#: ``extcmds/version.py``: replaces the built-in ``version`` inside a project only.
EXT_VERSION = '''
from crawlfw.commands import ScrapyCommand


class Command(ScrapyCommand):
    requires_project = True

    def run(self, args, opts):
        print("extcmds version")
'''

EP_MODULE = '''
from crawlfw.commands import ScrapyCommand


class Hello(ScrapyCommand):
    def short_desc(self):
        return "Entry point hello"

    def run(self, args, opts):
        print("ep hello", self.settings.get("WHO", "nobody"))


class NeedsProject(ScrapyCommand):
    requires_project = True

    def short_desc(self):
        return "Entry point needing a project"

    def run(self, args, opts):
        print("ep in project")


not_a_class = 42
'''


def make_lib(tmp_path, entry_points: str) -> dict:
    """A directory on PYTHONPATH with the ``extcmds`` package, the ``epcmds`` module and
    a distribution declaring ``entry_points``; returns the environment to use."""
    lib = tmp_path / "lib"
    write(lib / "extcmds" / "__init__.py", "")
    write(lib / "extcmds" / "hello.py", EXT_HELLO)
    write(lib / "extcmds" / "needsproj.py", EXT_NEEDSPROJ)
    write(lib / "extcmds" / "version.py", EXT_VERSION)
    write(lib / "epcmds.py", EP_MODULE)
    dist = lib / "epcmds_dist-1.0.dist-info"
    write(dist / "METADATA", "Metadata-Version: 2.1\nName: epcmds-dist\nVersion: 1.0\n")
    write(dist / "entry_points.txt", entry_points)
    return {"PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(lib)])}


ENTRY_POINTS = """
[crawlfw.commands]
ephello = epcmds:Hello
epproj = epcmds:NeedsProject
"""


@pytest.fixture
def outside(tmp_path):
    path = tmp_path / "outside"
    path.mkdir()
    return path


def test_commands_module_outside_a_project(crawlfw, tmp_path, outside):
    env = {**make_lib(tmp_path, ENTRY_POINTS), "CRAWLFW_COMMANDS_MODULE": "extcmds"}
    hello = crawlfw("hello", "world", cwd=outside, env=env)
    assert hello.returncode == 0, hello.stderr
    assert hello.stdout == "hello world\n"
    listing = crawlfw("-h", cwd=outside, env=env)
    assert "Say hello" in listing.stdout
    assert "needsproj" not in listing.stdout
    needs = crawlfw("needsproj", cwd=outside, env=env)
    assert needs.returncode == 2
    assert "only works inside a project" in needs.stderr
    assert needs.stdout == ""
    # a hidden command does not hide the built-in command of its name
    version = crawlfw("version", cwd=outside, env=env)
    assert version.returncode == 0, version.stderr
    assert version.stdout == f"crawlfw {crawlfw_version()}\n"


def test_requires_project_command_inside_a_project(crawlfw, tmp_path, project):
    env = {**make_lib(tmp_path, ENTRY_POINTS), "CRAWLFW_COMMANDS_MODULE": "extcmds"}
    result = crawlfw("needsproj", cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "in project\n"
    result = crawlfw("epproj", cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ep in project\n"
    result = crawlfw("version", cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "extcmds version\n"


def test_entry_point_commands(crawlfw, tmp_path, outside):
    env = make_lib(tmp_path, ENTRY_POINTS)
    result = crawlfw("ephello", "-s", "WHO=me", cwd=outside, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ep hello me\n"
    listing = crawlfw("-h", cwd=outside, env=env)
    assert "Entry point hello" in listing.stdout
    assert "epproj" not in listing.stdout
    hidden = crawlfw("epproj", cwd=outside, env=env)
    assert hidden.returncode == 2
    assert "only works inside a project" in hidden.stderr


def test_invalid_entry_point(crawlfw, tmp_path, outside):
    env = make_lib(tmp_path, "[crawlfw.commands]\nbroken = epcmds:not_a_class\n")
    result = crawlfw("version", cwd=outside, env=env)
    assert result.returncode == 1
    assert "Invalid entry point 'broken'" in result.stderr


def test_unimportable_commands_module(crawlfw, outside):
    result = crawlfw("version", cwd=outside,
                     env={"CRAWLFW_COMMANDS_MODULE": "no_such_commands_module"})
    assert result.returncode == 1
    assert "COMMANDS_MODULE = 'no_such_commands_module'" in result.stderr
    assert "No module named 'no_such_commands_module'" in result.stderr
