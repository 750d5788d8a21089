"""Scrapy 2's members of the command line's classes (issue 29): ``ScrapyHelpFormatter``,
``cmdline.ScrapyArgumentParser``, genspider's ``extract_domain`` / ``verify_url_scheme``
/ ``Command.templates_dir``, startproject's ``IGNORE`` / ``Command.templates_dir``, the
parse command's members, the spider loader's ``get_spider_loader`` /
``DummySpiderLoader`` / ``SpiderLoaderProtocol``, ``StartSpiderMiddleware`` and the
shell's ``loop`` / ``fetch_available``."""

import argparse
import asyncio
import logging
import shutil
from pathlib import Path

import pytest

from crawlfw.cmdline import ScrapyArgumentParser
from crawlfw.commands import ScrapyHelpFormatter
from crawlfw.commands import genspider as genspider_module
from crawlfw.commands import parse as parse_module
from crawlfw.commands import startproject as startproject_module
from crawlfw.exceptions import UsageError
from crawlfw.http import HtmlResponse, Request
from crawlfw.linkextractors import LinkExtractor
from crawlfw.settings import Settings
from crawlfw.shell import Shell
from crawlfw.spiderloader import (
    DummySpiderLoader,
    SpiderLoader,
    SpiderLoaderProtocol,
    get_spider_loader,
)
from crawlfw.spidermiddlewares.start import StartSpiderMiddleware
from crawlfw.spiders import CrawlSpider, Rule
from crawlfw.utils.test import get_crawler
from tests.commands.conftest import write


def test_help_formatter_and_parser_are_scrapys():
    parser = ScrapyArgumentParser(prog="x", formatter_class=ScrapyHelpFormatter,
                                  usage="crawlfw x [options]", description="Do x.")
    parser.add_argument("--pages", type=int, help="pages")
    group = parser.add_argument_group("Global Options")
    group.add_argument("--logfile", metavar="FILE", help="log file")
    parser.add_argument("-o", "--output", action="append")
    # Scrapy 2.19's formatter gives this text for the same parser
    assert parser.format_help() == (
        "Usage\n=====\n  crawlfw x [options]\n\nDo x.\n\nOptions\n=======\n"
        "  -h, --help            show this help message and exit\n"
        "  --pages PAGES         pages\n  -o OUTPUT, --output OUTPUT\n\n"
        "Global Options\n--------------\n  --logfile FILE        log file\n")
    opts, args = parser.parse_known_args(["-o", "-:json", "a"])
    assert opts.output == ["-:json"] and args == ["a"]  # -:json is a value
    with pytest.raises(SystemExit):
        argparse.ArgumentParser(prog="x").parse_args(["-o", "-:json"])


@pytest.mark.parametrize("url, domain, with_scheme", [
    # Scrapy 2.19's answers
    ("example.com", "", "https://example.com"),
    ("example.com/a?b=1", "", "https://example.com/a?b=1"),
    ("http://example.com:8080/x", "example.com:8080", "http://example.com:8080/x"),
    ("https://ex.org", "ex.org", "https://ex.org"),
    ("//ex.org/p", "ex.org", "//ex.org/p"),
    ("ftp://f.org/", "f.org", "ftp://f.org/"),
])
def test_genspider_helpers(url, domain, with_scheme):
    assert genspider_module.extract_domain(url) == domain
    assert genspider_module.verify_url_scheme(url) == with_scheme


def test_templates_dirs_and_ignore():
    settings = Settings({"TEMPLATES_DIR": "/t"})
    for module, kind in ((genspider_module, "spiders"), (startproject_module, "project")):
        cmd = module.Command()
        cmd.settings = settings
        assert cmd.templates_dir == f"/t/{kind}"
    assert sorted(startproject_module.IGNORE("/", ["a.pyc", "__pycache__", ".svn", "x.py"])) \
        == [".svn", "__pycache__", "a.pyc"]


def test_spider_loaders():
    loader = DummySpiderLoader.from_settings(Settings())
    assert loader.list() == [] and loader.find_by_request(Request("http://a/")) == []
    with pytest.raises(KeyError, match="doesn't load any spiders"):
        loader.load("x")
    assert isinstance(get_spider_loader(Settings(
        {"SPIDER_LOADER_CLASS": "crawlfw.spiderloader.DummySpiderLoader"})), DummySpiderLoader)
    assert isinstance(get_spider_loader(Settings()), SpiderLoader)
    for cls in (SpiderLoader, DummySpiderLoader):
        for name in ("from_settings", "load", "list", "find_by_request"):
            assert callable(getattr(cls, name)) and hasattr(SpiderLoaderProtocol, name)


def test_start_spider_middleware():
    mw = StartSpiderMiddleware.from_crawler(get_crawler())
    own = Request("http://b/", meta={"is_start_request": False})

    async def start():
        yield Request("http://a/")
        yield own
        yield {"item": 1}

    async def collect():
        return [x async for x in mw.process_start(start())]

    first, second, item = asyncio.run(collect())
    assert first.meta["is_start_request"] is True
    assert second.meta["is_start_request"] is False and item == {"item": 1}
    response = HtmlResponse("http://a/", request=Request("http://a/"))
    later = list(mw.process_spider_output(response, [Request("http://c/")]))
    assert "is_start_request" not in later[0].meta


def test_shell_takes_a_loop_and_says_if_fetch_is_available():
    loop = asyncio.new_event_loop()
    try:
        shell = Shell(get_crawler(), loop=loop)
        assert shell._loop is loop
        assert shell.fetch_available is True  # on the main thread
        shell.inthread = False
        assert shell.fetch_available is False
    finally:
        loop.close()


# --- the parse command's members ---------------------------------------------------------

def _opts(**kw):
    values = {"callback": None, "rules": False, "depth": 1, "pipelines": False,
              "meta": None, "cbkwargs": None, "verbose": False, "noitems": False,
              "nolinks": False, "nocolour": True, "output": None}
    return argparse.Namespace(**{**values, **kw})


class Pages(CrawlSpider):
    name = "pages"
    rules = (Rule(LinkExtractor(allow=r"/item/"), callback="parse_item"),)

    def parse_item(self, response, extra=None):
        yield {"url": response.url, "extra": extra}
        yield Request("http://a.test/item/2")


def test_parse_command_results_and_steps(capsys):
    cmd = parse_module.Command()
    assert cmd.items == {} and cmd.requests == {} and cmd.max_level == 0
    assert parse_module.Command().items is not cmd.items  # per instance
    spider = Pages()
    opts = _opts(rules=True, depth=2, cbkwargs={"extra": 1})
    request = cmd.prepare_request(spider, Request("http://a.test/item/1"), opts)
    assert cmd.spider is spider
    assert request.meta["_depth"] == 1 and request.cb_kwargs == {"extra": 1}
    response = HtmlResponse(request.url, body=b"<html></html>", request=request)
    out = request.callback(response, **request.cb_kwargs)
    assert cmd.first_response is response
    # the rule's callback ran; its request goes on (depth 1 < 2), with the recording one
    assert [r.url for r in out] == ["http://a.test/item/2"]
    assert out[0].meta["_depth"] == 2 and out[0].callback is request.callback
    assert cmd.items == {1: [{"url": "http://a.test/item/1", "extra": 1}]}
    assert cmd.max_level == 1
    assert cmd.get_callback_from_rules(spider, response) == "parse_item"
    cmd.print_results(opts)
    printed = capsys.readouterr().out
    assert ">>> STATUS DEPTH LEVEL 1 <<<" in printed and "http://a.test/item/1" in printed
    assert cmd.run_callback(response, spider.parse_item, {"extra": 3})[0]["extra"] == 3
    assert cmd.scraped_data(([{"i": 1}], [], _opts(pipelines=True), 3, spider, None)) \
        == [{"i": 1}]
    assert cmd.items[3] == [{"i": 1}] and cmd.max_level == 3


def test_parse_command_options():
    cmd = parse_module.Command()
    opts = argparse.Namespace(meta='{"a": 1}', cbkwargs='{"b": 2}')
    cmd.process_request_meta(opts)
    cmd.process_request_cb_kwargs(opts)
    assert (opts.meta, opts.cbkwargs) == ({"a": 1}, {"b": 2})
    with pytest.raises(UsageError, match="--meta"):
        cmd.process_request_meta(argparse.Namespace(meta="[1]"))
    with pytest.raises(UsageError, match="--cbkwargs"):
        cmd.process_request_cb_kwargs(argparse.Namespace(cbkwargs="nope"))


def test_parse_handle_exception_logs(caplog):
    from crawlfw.utils.failure import Failure

    try:
        raise ValueError("boom")
    except ValueError as e:
        failure = Failure(e)
    with caplog.at_level(logging.ERROR):
        parse_module.Command().handle_exception(failure)
    assert caplog.records[-1].getMessage() == \
        "An error is caught while iterating the async iterable"
    assert caplog.records[-1].exc_info[1] is failure.value


# --- a project's subclasses, through the command line -----------------------------------

SUBCLASSES = '''
from crawlfw.commands import genspider, parse, startproject


class Command({base}.Command):
{body}
'''

MYPARSE = '''
    def print_items(self, lvl=None, colour=True):
        print("ITEMS", sum(len(v) for v in self.items.values()))

    def scraped_data(self, args):
        items, requests, opts, depth, spider, callback = args
        return super().scraped_data(([{"n": len(items)}], requests, opts, depth, spider,
                                     callback))
'''

MYTEMPLATES = '''
    @property
    def templates_dir(self):
        return {path!r}
'''


@pytest.mark.slow
def test_subclasses_use_the_scrapy2_members(crawlfw, quotes_project, quotes, tmp_path):
    pkg = quotes_project / "testproj"
    with open(pkg / "settings.py", "a", encoding="utf-8") as f:
        f.write("\nCOMMANDS_MODULE = 'testproj.commands'\n")
    write(pkg / "commands" / "__init__.py", "")
    write(pkg / "commands" / "myparse.py", SUBCLASSES.format(base="parse", body=MYPARSE))
    spiders = tmp_path / "tpl" / "spiders"
    write(spiders / "mine.tmpl", "# my template for $name on $domain\n")
    write(pkg / "commands" / "mygenspider.py", SUBCLASSES.format(
        base="genspider", body=MYTEMPLATES.format(path=str(spiders))))
    project_tpl = tmp_path / "ptpl"
    shutil.copytree(Path(startproject_module.__file__).parents[1] / "templates" / "project",
                    project_tpl)
    with open(project_tpl / "module" / "settings.py.tmpl", "a", encoding="utf-8") as f:
        f.write("MY_TEMPLATE = '$project_name'\n")
    write(project_tpl / "module" / "stale.pyc", "")
    write(pkg / "commands" / "mystartproject.py", SUBCLASSES.format(
        base="startproject", body=MYTEMPLATES.format(path=str(project_tpl))))

    result = crawlfw("myparse", "--nolog", "--nocolour", "--spider", "quotes", "-c", "parse",
                     "-a", f"base_url={quotes.url}", f"{quotes.url}/", cwd=quotes_project)
    assert result.returncode == 0, result.stderr
    assert "ITEMS 1" in result.stdout  # one {"n": 10} record per callback output
    result = crawlfw("mygenspider", "-l", cwd=quotes_project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["Available", "templates:", "mine"]
    result = crawlfw("mygenspider", "-t", "mine", "other", "other.example", cwd=quotes_project)
    assert result.returncode == 0, result.stderr
    assert (pkg / "spiders" / "other.py").read_text() == \
        "# my template for other on other.example\n"
    result = crawlfw("mystartproject", "newproj", str(tmp_path / "newproj"), cwd=quotes_project)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "newproj" / "newproj" / "settings.py").read_text().endswith(
        "MY_TEMPLATE = 'newproj'\n")
    assert not (tmp_path / "newproj" / "newproj" / "stale.pyc").exists()  # IGNORE
