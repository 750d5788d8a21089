"""Class-based (Scrapy 1.2 style) commands on the ``crawlfw`` command line.

Commands are found, as in Scrapy 1.2's ``scrapy.cmdline``, in:

- the ``crawlfw.commands`` entry-point group (name -> :class:`ScrapyCommand` subclass);
- the module (usually a package) named by the ``COMMANDS_MODULE`` setting: every
  :class:`ScrapyCommand` subclass defined in it or one of its submodules, named after
  the module that defines it (``myproject/commands/crawlall.py`` -> ``crawlall``).

``COMMANDS_MODULE`` wins over entry points, and both over the built-in commands of the
same name. A command whose ``requires_project`` is true is only offered inside a project.

Each command becomes an argh subcommand that takes its raw arguments
(``argparse.REMAINDER``) and runs :func:`run_command`.
"""

import argparse
import inspect
import logging
import os
import sys
from typing import TYPE_CHECKING

import argh

from crawlfw.commands._command import ScrapyCommand, ScrapyHelpFormatter
from crawlfw.exceptions import CrawlStartError, UsageError
from crawlfw.utils.misc import walk_modules

if TYPE_CHECKING:  # optparse is imported when a class-based command runs
    import optparse

__all__ = ["ENTRY_POINT_GROUP", "ScrapyArgumentParser", "iter_command_classes", "get_commands_from_module",
           "get_commands_from_entry_points", "may_declare_entry_points", "get_commands_dict",
           "argh_function", "build_parser", "crawler_process_class", "run_command"]

#: The entry-point group of third-party commands (Scrapy's ``scrapy.commands``).
ENTRY_POINT_GROUP = "crawlfw.commands"


def iter_command_classes(module_name: str):
    """Yield the :class:`ScrapyCommand` subclasses defined in ``module_name`` and its
    submodules (not the ones they import).

    Raises:
        ImportError: a module cannot be imported (or whatever importing it raises).
    """
    for module in walk_modules(module_name):
        for obj in vars(module).values():
            if (inspect.isclass(obj) and issubclass(obj, ScrapyCommand)
                    and obj.__module__ == module.__name__ and obj is not ScrapyCommand):
                yield obj


def get_commands_from_module(module_name: str, inproject: bool) -> tuple[dict, set]:
    """Instantiate the commands of ``module_name``.

    Returns:
        ``(commands, hidden)``: ``{name: ScrapyCommand instance}`` of the commands
        offered, and the set of names of those hidden because they need a project.
    """
    cmds, hidden = {}, set()
    for cmdcls in iter_command_classes(module_name):
        name = cmdcls.__module__.split(".")[-1]
        if inproject or not cmdcls.requires_project:
            cmds[name] = cmdcls()
        else:
            hidden.add(name)
    return cmds, hidden


def may_declare_entry_points(group: str) -> bool:
    """Whether a distribution on ``sys.path`` may declare entry points of ``group``:
    False only when none can, read without importing ``importlib.metadata``.

    ``importlib.metadata.entry_points`` finds distributions through the
    ``find_distributions`` of the ``sys.meta_path`` finders; the standard one reads the
    ``*.dist-info`` and ``*.egg-info`` folders of each ``sys.path`` directory (and the
    ``EGG-INFO`` of a ``.egg`` one) and their ``entry_points.txt``. This reads the same
    files and answers False when none names ``group``; any other finder, a ``sys.path``
    entry that is a file (a zip), or a file it cannot read makes it answer True, and
    the caller asks ``importlib.metadata``.

    Args:
        group: the entry-point group, e.g. ``"crawlfw.commands"``.

    Returns:
        bool: False when no distribution can declare it.
    """
    from importlib.machinery import PathFinder

    for finder in sys.meta_path:
        if (getattr(finder, "find_distributions", None) is not None
                and finder is not PathFinder):
            return True
    for entry in sys.path:
        path = entry or "."
        try:
            children = os.listdir(path)
        except NotADirectoryError:
            return True  # a zip file: importlib.metadata reads it
        except OSError:
            if os.path.exists(path):
                return True
            continue
        folders = [child for child in children
                   if child.lower().endswith((".dist-info", ".egg-info"))]
        if path.lower().endswith(".egg"):
            folders += [child for child in children if child.lower() == "egg-info"]
        for folder in folders:
            try:
                with open(os.path.join(path, folder, "entry_points.txt"), "rb") as f:
                    if group.encode() in f.read():
                        return True
            except (FileNotFoundError, NotADirectoryError):
                continue  # no entry points (or an .egg-info file: no folder)
            except OSError:
                return True
    return False


def get_commands_from_entry_points(inproject: bool, group: str = ENTRY_POINT_GROUP):
    """Instantiate the commands registered under the entry-point ``group``.

    Returns:
        ``(commands, hidden)`` as :func:`get_commands_from_module`.

    Raises:
        TypeError: an entry point does not name a :class:`ScrapyCommand` subclass.
    """
    cmds, hidden = {}, set()
    if not may_declare_entry_points(group):
        return cmds, hidden
    from importlib import metadata  # ~25 ms of imports and a scan of every distribution

    for entry_point in metadata.entry_points(group=group):
        obj = entry_point.load()
        if not (inspect.isclass(obj) and issubclass(obj, ScrapyCommand)):
            raise TypeError(f"Invalid entry point {entry_point.name!r} in group {group!r}: "
                            f"{entry_point.value} is not a ScrapyCommand subclass")
        if inproject or not obj.requires_project:
            cmds[entry_point.name] = obj()
        else:
            hidden.add(entry_point.name)
    return cmds, hidden


def get_commands_dict(settings, inproject: bool) -> tuple[dict, set]:
    """The class-based commands: entry points, then ``COMMANDS_MODULE`` (which wins).

    Returns:
        ``(commands, hidden)``: ``{name: ScrapyCommand instance}``, and the names of
        commands hidden outside a project (and not offered by another source).
    """
    cmds, hidden = get_commands_from_entry_points(inproject)
    cmds_module = settings["COMMANDS_MODULE"]
    if cmds_module:
        more, more_hidden = get_commands_from_module(cmds_module, inproject)
        cmds.update(more)
        hidden |= more_hidden
    return cmds, hidden - set(cmds)


def argh_function(name: str, cmd: ScrapyCommand, settings):
    """An argh command function ``name`` (help: ``cmd.short_desc()``) that passes its
    raw arguments to :func:`run_command`.

    Register it with ``add_help=False`` so that ``-h`` reaches the command's parser.
    """

    def function(args):
        # crawlfw.cmdline puts "--" first so that argparse leaves options alone
        if args and args[0] == "--":
            args = args[1:]
        run_command(name, cmd, settings, args)

    function.__name__ = name
    function.__doc__ = cmd.short_desc()
    function = argh.arg("args", nargs=argparse.REMAINDER, metavar="...",
                        help="the command's arguments and options (see -h)")(function)
    return argh.named(name)(function)


def _parser(name: str, cmd: ScrapyCommand) -> "optparse.OptionParser":
    import optparse

    return optparse.OptionParser(prog=f"crawlfw {name}",
                                 usage=f"crawlfw {name} {cmd.syntax()}",
                                 description=cmd.long_desc(),
                                 formatter=optparse.TitledHelpFormatter(),
                                 conflict_handler="resolve")


class ScrapyArgumentParser(argparse.ArgumentParser):
    """Scrapy 2's argument parser of class-based commands (``scrapy.cmdline``): an
    :class:`argparse.ArgumentParser` that reads an argument starting with ``-:`` as a
    value, not an option, so ``-o -:json`` (standard output, JSON) parses."""

    def _parse_optional(self, arg_string):
        if arg_string.startswith("-:"):
            return None
        return super()._parse_optional(arg_string)


def _argparse_parser(name: str, cmd: ScrapyCommand) -> argparse.ArgumentParser:
    return ScrapyArgumentParser(prog=f"crawlfw {name}",
                                usage=f"crawlfw {name} {cmd.syntax()}",
                                description=cmd.long_desc(),
                                formatter_class=ScrapyHelpFormatter,
                                conflict_handler="resolve")


def _calls_add_argument(error: AttributeError) -> bool:
    return getattr(error, "name", None) in ("add_argument", "add_argument_group")


def build_parser(name: str, cmd: ScrapyCommand):
    """The parser of ``cmd``'s options, filled by ``cmd.add_options``.

    A Scrapy 1.2 command adds optparse options (``parser.add_option``); a Scrapy 2
    command calls ``parser.add_argument``: its ``add_options`` is tried on an optparse
    parser first, and on an :class:`argparse.ArgumentParser` when it asks for
    ``add_argument`` (the base class's own options adapt to either).

    Returns:
        ``(parser, parse)``: the parser, and ``parse(argv) -> (opts, args)`` (optparse's
        ``parse_args``, or argparse's ``parse_known_args`` as in Scrapy 2: arguments no
        option takes are in ``args``).
    """
    parser = _parser(name, cmd)
    try:
        cmd.add_options(parser)
    except AttributeError as e:
        if not _calls_add_argument(e):
            raise
    else:
        return parser, parser.parse_args
    parser = _argparse_parser(name, cmd)
    cmd.add_options(parser)
    return parser, parser.parse_known_args


def _run_print_help(parser, func, *args) -> None:
    try:
        func(*args)
    except UsageError as e:
        if isinstance(parser, argparse.ArgumentParser):  # Scrapy 2's handling
            if str(e):
                parser.error(str(e))  # usage and "prog: error: ..." (exit status 2)
            if e.print_help:
                parser.print_help()
            sys.exit(2)
        if e.print_help:
            parser.print_help(sys.stderr if str(e) else sys.stdout)
        if str(e):
            if not e.print_help:
                parser.print_usage(sys.stderr)
            print(f"{parser.get_prog_name()}: error: {e}", file=sys.stderr)
        sys.exit(2)


def _run(cmd: ScrapyCommand, args, opts) -> None:
    profile = getattr(opts, "profile", None)
    try:
        if profile:
            import cProfile

            print(f"crawlfw: writing cProfile stats to {profile!r}", file=sys.stderr)
            profiler = cProfile.Profile()
            try:
                profiler.runcall(cmd.run, args, opts)
            finally:
                profiler.dump_stats(profile)
        else:
            cmd.run(args, opts)
    except (UsageError, SystemExit, KeyboardInterrupt):
        raise
    except Exception:
        if getattr(opts, "pdb", False):
            import pdb
            import traceback

            traceback.print_exc()
            pdb.post_mortem(sys.exc_info()[2])
        raise


#: Scrapy's asyncio reactor, the ``TWISTED_REACTOR`` under which Scrapy 2.19's command
#: line makes an ``AsyncCrawlerProcess``.
_ASYNCIO_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"


def crawler_process_class(settings, *, scrapy2: bool):
    """The class of a class-based command's ``crawler_process``.

    A command written for Scrapy 2 (its options are argparse's) gets Scrapy 2.19's
    choice: :class:`~crawlfw.crawler.AsyncCrawlerProcess` (``crawl()`` returns an
    :class:`asyncio.Task`), unless ``FORCE_CRAWLER_PROCESS`` is true or
    ``TWISTED_REACTOR`` names another reactor than asyncio's, when it gets
    :class:`~crawlfw.crawler.CrawlerProcess`. A Scrapy 1.2 command (optparse options)
    always gets :class:`~crawlfw.crawler.CrawlerProcess` (``crawl()`` returns the
    Crawler), as in Scrapy 1.2. Both run the crawl in the same actors.

    Args:
        settings: the command's settings.
        scrapy2: the command's parser is argparse's.

    Returns:
        type: ``AsyncCrawlerProcess`` or ``CrawlerProcess``.
    """
    from crawlfw.crawler import AsyncCrawlerProcess, CrawlerProcess

    if not scrapy2 or settings.getbool("FORCE_CRAWLER_PROCESS"):
        return CrawlerProcess
    reactor = settings.get("TWISTED_REACTOR")
    if reactor and reactor != _ASYNCIO_REACTOR:
        return CrawlerProcess
    return AsyncCrawlerProcess


def run_command(name: str, cmd: ScrapyCommand, settings, argv) -> None:
    """Run ``cmd`` as ``scrapy.cmdline.execute`` does, then exit.

    ``default_settings`` go into ``settings`` at ``'command'`` priority, ``add_options``
    builds a parser for ``argv`` (optparse, or argparse for a Scrapy 2 command:
    :func:`build_parser`), ``process_options`` and ``run`` follow, with
    ``cmd.crawler_process`` made for ``settings`` unless
    ``cmd.requires_crawler_process`` is false (:func:`crawler_process_class`). A crawl
    that cannot start (:class:`~crawlfw.exceptions.CrawlStartError`: a Scrapy plugin in
    the settings...) is reported in one ERROR line, "Crawl could not start: ...",
    without a traceback, and the exit status is then 1 unless the command set another.

    Args:
        name: the command's name (for its usage line).
        cmd: the :class:`ScrapyCommand` instance.
        settings: the project's :class:`~crawlfw.settings.Settings`.
        argv: the arguments after the command name (list of str).

    Raises:
        SystemExit: always; status ``cmd.exitcode`` (1 when it is 0 but a crawl could
            not start: ``crawler_process.bootstrap_failed``), or 2 on a usage error (bad option,
            or :class:`~crawlfw.exceptions.UsageError` from ``process_options``/``run``:
            the message, and with ``print_help`` the command's help, on standard error).
    """
    settings.setdict(cmd.default_settings, priority="command")
    cmd.settings = settings
    parser, parse = build_parser(name, cmd)
    opts, args = parse(argv)
    _run_print_help(parser, cmd.process_options, args, opts)
    if getattr(cmd, "requires_crawler_process", True):
        process_class = crawler_process_class(
            settings, scrapy2=isinstance(parser, argparse.ArgumentParser))
        try:
            cmd.crawler_process = process_class(settings)
        except Exception as e:
            from crawlfw.commands import exit_if_spiders_broken

            exit_if_spiders_broken(e, name)
            raise
    try:
        _run_print_help(parser, _run, cmd, args, opts)
    except CrawlStartError as e:  # CrawlerProcess.crawl(): refused on purpose, one line
        logging.getLogger(__name__).error("Crawl could not start: %s", e)
        cmd.exitcode = cmd.exitcode or 1
    finally:
        if cmd.crawler_process is not None:
            cmd.crawler_process.shutdown()
    if not cmd.exitcode and getattr(cmd.crawler_process, "bootstrap_failed", False):
        cmd.exitcode = 1  # a crawl could not start (crawlfw's exit status rule)
    sys.exit(cmd.exitcode)
