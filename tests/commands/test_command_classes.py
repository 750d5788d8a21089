"""``crawlfw.commands.ScrapyCommand`` (Scrapy 1.2's class-based command API) and the
``Command`` class of every built-in command module, without running them: options are
parsed with a real optparse parser into real Settings."""

import importlib
import optparse
import os

import pytest

from crawlfw.commands import CrawlfwCommand, ScrapyCommand
from crawlfw.commands._custom import iter_command_classes
from crawlfw.exceptions import UsageError
from crawlfw.settings import SETTINGS_PRIORITIES, Settings


def parse(cmd, argv):
    """Set up ``cmd`` as the command line does; return ``(args, opts)``."""
    parser = optparse.OptionParser(conflict_handler="resolve")
    cmd.settings = Settings()
    cmd.settings.setdict(cmd.default_settings, priority="command")
    cmd.add_options(parser)
    opts, args = parser.parse_args(args=argv)
    cmd.process_options(args, opts)
    return args, opts


def test_alias_and_defaults():
    assert CrawlfwCommand is ScrapyCommand
    cmd = ScrapyCommand()
    assert cmd.settings is None
    assert (cmd.syntax(), cmd.short_desc(), cmd.long_desc(), cmd.help()) == ("", "", "", "")
    assert (cmd.requires_project, cmd.crawler_process, cmd.exitcode) == (False, None, 0)
    with pytest.raises(NotImplementedError):
        cmd.run([], None)


def test_long_desc_and_help_default_to_short_desc():
    class Command(ScrapyCommand):
        def short_desc(self):
            return "does things"

    assert Command().long_desc() == Command().help() == "does things"


def test_set_crawler_only_once():
    cmd = ScrapyCommand()
    cmd.set_crawler(object())
    with pytest.raises(AssertionError, match="crawler already set"):
        cmd.set_crawler(object())


@pytest.mark.parametrize("argv, expected", [
    ([], {"LOG_ENABLED": True, "LOG_FILE": None, "LOG_LEVEL": "DEBUG"}),
    (["-s", "FOO=bar", "--set", "BAZ=1"], {"FOO": "bar", "BAZ": "1"}),
    (["-L", "INFO"], {"LOG_ENABLED": True, "LOG_LEVEL": "INFO"}),
    (["--loglevel=WARNING"], {"LOG_LEVEL": "WARNING"}),
    (["--logfile", "x.log"], {"LOG_ENABLED": True, "LOG_FILE": "x.log"}),
    (["--nolog"], {"LOG_ENABLED": False}),
    (["--nolog", "-L", "INFO"], {"LOG_ENABLED": False, "LOG_LEVEL": "INFO"}),
])
def test_global_options_set_settings(argv, expected):
    cmd = ScrapyCommand()
    args, opts = parse(cmd, [*argv, "positional"])
    assert args == ["positional"]
    for name, value in expected.items():
        assert cmd.settings[name] == value, name
    changed = {n for n in expected
               if cmd.settings.getpriority(n) == SETTINGS_PRIORITIES["cmdline"]}
    assert changed == ({n for n in expected} if argv else set())


def test_global_options_are_in_their_group():
    cmd = ScrapyCommand()
    cmd.settings = Settings({"LOG_LEVEL": "INFO"})
    parser = optparse.OptionParser()
    cmd.add_options(parser)
    [group] = parser.option_groups
    assert group.title == "Global Options"
    assert {s for o in group.option_list for s in o._short_opts + o._long_opts} == {
        "--logfile", "-L", "--loglevel", "--nolog", "--profile", "--pidfile", "-s", "--set",
        "--pdb"}
    assert "(default: INFO)" in parser.format_help()


def test_bad_set_value_is_a_usage_error_without_help():
    with pytest.raises(UsageError, match="Invalid -s value, use -s NAME=VALUE") as excinfo:
        parse(ScrapyCommand(), ["-s", "NOEQUALS"])
    assert excinfo.value.print_help is False


def test_pidfile_is_written(tmp_path):
    pidfile = tmp_path / "pid"
    parse(ScrapyCommand(), ["--pidfile", str(pidfile)])
    assert pidfile.read_text() == f"{os.getpid()}{os.linesep}"


#: module -> (syntax, short_desc, requires_project, options of its own)
BUILTIN = {
    "bench": ("", "Run quick benchmark test", False, set()),
    "check": ("[options] <spider>", "Check spider contracts", True,
              {"-l", "--list", "-v", "--verbose"}),
    "crawl": ("[options] <spider>", "Run a spider", True,
              {"-a", "-o", "--output", "-O", "--overwrite-output", "-t", "--output-format"}),
    "edit": ("<spider>", "Edit spider", True, set()),
    "fetch": ("[options] <url>", "Fetch a URL using the crawlfw downloader", False,
              {"--spider", "--headers", "--no-redirect"}),
    "genspider": ("[options] <name> <domain>",
                  "Generate new spider using pre-defined templates", False,
                  {"-l", "--list", "-e", "--edit", "-d", "--dump", "-t", "--template",
                   "--force"}),
    "list": ("", "List available spiders", True, set()),
    "parse": ("[options] <url>", "Parse URL (using its spider) and print the results", True,
              {"--spider", "-a", "--pipelines", "--nolinks", "--noitems", "--nocolour", "-r",
               "--rules", "-c", "--callback", "-d", "--depth", "-v", "--verbose",
               "--cbkwargs", "-m", "--meta",  # Scrapy 2 (issue 17)
               "-o", "--output", "-O", "--overwrite-output"}),  # Scrapy 2.19 (issue 34)
    "runspider": ("[options] <spider_file>",
                  "Run a self-contained spider (without creating a project)", False,
                  {"-a", "-o", "--output", "-O", "--overwrite-output", "-t", "--output-format"}),
    "settings": ("[options]", "Get settings values", False,
                 {"--get", "--getbool", "--getint", "--getfloat", "--getlist"}),
    "shell": ("[url|file]", "Interactive scraping console", False, {"-c", "--spider"}),
    "startproject": ("<project_name> [project_dir]", "Create new project", False, set()),
    "version": ("[-v]", "Print crawlfw version", False, {"-v", "--verbose"}),
    "view": ("[options] <url>", "Open URL in browser, as seen by crawlfw", False,
             {"--spider", "--no-redirect"}),
}

GLOBAL_OPTIONS = {"-h", "--help", "--logfile", "-L", "--loglevel", "--nolog", "--profile",
                  "--pidfile", "-s", "--set", "--pdb"}


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_builtin_command_classes(name):
    syntax, short_desc, requires_project, options = BUILTIN[name]
    module = importlib.import_module(f"crawlfw.commands.{name}")
    cmd = module.Command()
    assert isinstance(cmd, ScrapyCommand)
    assert cmd.syntax() == syntax
    assert cmd.short_desc() == short_desc
    assert cmd.requires_project is requires_project
    # the command line finds exactly this class in the module
    assert list(iter_command_classes(module.__name__)) == [module.Command]
    parser = optparse.OptionParser(conflict_handler="resolve")
    cmd.settings = Settings()
    cmd.add_options(parser)
    strings = {s for o in parser._get_all_options() for s in o._short_opts + o._long_opts}
    assert strings == GLOBAL_OPTIONS | options


@pytest.mark.parametrize("argv, spargs, feed", [
    ([], {}, {}),
    (["-a", "x=1", "-a", "y=2"], {"x": "1", "y": "2"}, {}),
    (["-o", "out.json"], {}, {"FEED_URI": "out.json", "FEED_FORMAT": "json"}),
    (["-o", "-", "-t", "csv"], {}, {"FEED_URI": "stdout:", "FEED_FORMAT": "csv"}),
    # Scrapy 2: every -o (or -O) is a feed of its own (issue 34)
    (["-o", "a.json", "-o", "a.csv"], {},
     {"FEED_URI": "a.json", "FEED_FORMAT": "json",
      "FEEDS": {"a.json": {"format": "json"}, "a.csv": {"format": "csv"}}}),
    (["-O", "b.jl", "-O", "b.csv"], {},
     {"FEED_URI": None, "FEEDS": {"b.jl": {"format": "jl", "overwrite": True},
                                 "b.csv": {"format": "csv", "overwrite": True}}}),
])
def test_crawl_command_options(argv, spargs, feed):
    from crawlfw.commands.crawl import Command

    cmd = Command()
    args, opts = parse(cmd, [*argv, "spidername"])
    assert args == ["spidername"]
    assert opts.spargs == spargs
    for name, value in feed.items():
        got = cmd.settings.getdict(name) if name == "FEEDS" else cmd.settings[name]
        assert got == value


@pytest.mark.parametrize("module, argv, message", [
    ("crawl", ["-a", "novalue"], "Invalid -a value, use -a NAME=VALUE"),
    ("runspider", ["-o", "out.nosuchformat"], "nosuchformat"),
    ("parse", ["-a", "novalue"], "Invalid -a value, use -a NAME=VALUE"),
])
def test_bad_command_options_are_usage_errors(module, argv, message):
    cmd = importlib.import_module(f"crawlfw.commands.{module}").Command()
    with pytest.raises(UsageError, match=message) as excinfo:
        parse(cmd, argv)
    assert excinfo.value.print_help is False


@pytest.mark.parametrize("module, args", [
    ("crawl", []),
    ("crawl", ["a", "b"]),
    ("edit", []),
    ("fetch", []),
    ("fetch", ["not-a-url"]),
    ("view", ["not-a-url"]),
    ("genspider", ["onlyname"]),
    ("parse", ["not-a-url"]),
    ("runspider", []),
    ("startproject", []),
    ("startproject", ["a", "b", "c"]),
])
def test_bad_arguments_raise_usage_error_before_running(module, args):
    cmd = importlib.import_module(f"crawlfw.commands.{module}").Command()
    _, opts = parse(cmd, [])
    with pytest.raises(UsageError):
        cmd.run(args, opts)


def test_version_command_runs(capsys):
    import crawlfw
    from crawlfw.commands.version import Command

    cmd = Command()
    args, opts = parse(cmd, [])
    cmd.run(args, opts)
    assert capsys.readouterr().out == f"crawlfw {crawlfw.__version__}\n"
    assert cmd.exitcode == 0


def test_settings_command_runs(capsys):
    from crawlfw.commands.settings import Command

    cmd = Command()
    args, opts = parse(cmd, ["-s", "FOO=42", "--getint", "FOO"])
    cmd.run(args, opts)
    assert capsys.readouterr().out == "42\n"
