"""The ``crawlfw`` commands: one argh function per command, one module per command.

Each command module also has a ``Command`` class, a :class:`ScrapyCommand` (Scrapy 1.2's
class-based command API) with the options of Scrapy 1.2's command of that name, whose
``run()`` calls the same implementation; custom commands (``COMMANDS_MODULE``) subclass
:class:`ScrapyCommand` or one of these.

Every command takes the global options of Scrapy 1.2 (``-s NAME=VALUE``, ``-L LEVEL``,
``--logfile``, ``--nolog``, ``--pidfile``, ``--profile``, ``--pdb``), added by
:func:`command`. A usage error raises :class:`argh.CommandError` (exit status 2 with
``crawlfw.cmdline``); a crawl that could not start exits with status 1.

Note: importing the ``crawlfw.commands.list`` submodule binds ``list`` in this package's
namespace, so the builtin ``list`` must not be used by name in this module.
"""

import functools
import inspect
import os
import sys

import argh

from crawlfw.commands._command import CrawlfwCommand, ScrapyCommand, apply_global_options
from crawlfw.exceptions import UsageError
from crawlfw.utils.conf import arglist_to_dict

__all__ = [
    "ScrapyCommand",
    "CrawlfwCommand",
    "command",
    "apply_global_options",
    "spider_arguments",
    "feed_options",
    "get_spider_loader",
    "load_spider",
    "fail",
    "CommandError",
]

CommandError = argh.CommandError

#: Command name -> whether it needs a project (``crawlfw.cfg`` found).
REQUIRES_PROJECT: dict[str, bool] = {}


def command(*, requires_project=False, default_settings=None, help=None):  # noqa: A002
    """Decorate a command function: global options, settings, and error mapping.

    The function receives ``settings`` (a ``Settings`` with the project's settings, the
    command's ``default_settings`` at ``'command'`` priority and ``-s`` values at
    ``'cmdline'`` priority) as its first keyword argument.

    Args:
        requires_project: the command only works inside a project.
        default_settings: settings the command sets at ``'command'`` priority.
        help: one-line description shown in ``crawlfw -h``.

    Returns:
        A decorator. The decorated function has an ``impl`` attribute: the undecorated
        function, called as ``impl(*args, settings=settings, **options)`` by the
        ``Command`` classes.
    """

    def decorate(func):
        REQUIRES_PROJECT[func.__name__.rstrip("_")] = requires_project

        @argh.arg("-s", "--set", action="append", default=None, metavar="NAME=VALUE",
                  help="set/override setting (may be repeated)")
        @argh.arg("-L", "--loglevel", metavar="LEVEL", help="log level (default: DEBUG)")
        @argh.arg("--logfile", metavar="FILE", help="log file. if omitted stderr will be used")
        @argh.arg("--nolog", help="disable logging completely")
        @argh.arg("--pidfile", metavar="FILE", help="write process ID to FILE")
        @argh.arg("--profile", metavar="FILE", help="write python cProfile stats to FILE")
        @argh.arg("--pdb", help="enable pdb on failure")
        @functools.wraps(func)
        def wrapper(*args, set=None, loglevel=None, logfile=None, nolog=False,  # noqa: A002
                    pidfile=None, profile=None, pdb=False, **kwargs):
            from crawlfw.utils.project import get_project_settings

            settings = get_project_settings()
            settings.setdict(default_settings or {}, priority="command")
            try:
                apply_global_options(settings, set=set, loglevel=loglevel, logfile=logfile,
                                     nolog=nolog)
                if pidfile:
                    with open(pidfile, "w") as f:
                        f.write(str(os.getpid()) + os.linesep)
                if profile:
                    import cProfile

                    profiler = cProfile.Profile()
                    try:
                        return profiler.runcall(func, *args, settings=settings, **kwargs)
                    finally:
                        profiler.dump_stats(profile)
                return func(*args, settings=settings, **kwargs)
            except UsageError as e:
                raise argh.CommandError(str(e), code=2) from e

        wrapper.__doc__ = help or func.__doc__
        # argh itself prints a CommandError and exits with its code: say "Usage error".
        argh.wrap_errors([], processor=_usage_error_message)(wrapper)
        # argh reads the signature: the command's own parameters (without ``settings``)
        # followed by the global options.
        own = [p for p in inspect.signature(func).parameters.values() if p.name != "settings"]
        kw = inspect.Parameter.KEYWORD_ONLY
        globals_ = [
            inspect.Parameter("set", kw, default=None),
            inspect.Parameter("loglevel", kw, default=None),
            inspect.Parameter("logfile", kw, default=None),
            inspect.Parameter("nolog", kw, default=False),
            inspect.Parameter("pidfile", kw, default=None),
            inspect.Parameter("profile", kw, default=None),
            inspect.Parameter("pdb", kw, default=False),
        ]
        wrapper.__signature__ = inspect.Signature(own + globals_)
        del wrapper.__wrapped__
        wrapper.impl = func
        return wrapper

    return decorate


def _usage_error_message(exc) -> str:
    return f"Usage error: {exc}"


def spider_arguments(values) -> dict:
    """Parse repeated ``-a NAME=VALUE`` options into a dict.

    Raises:
        UsageError: a value is not ``NAME=VALUE``.
    """
    try:
        return arglist_to_dict([*(values or ())])
    except ValueError:
        raise UsageError("Invalid -a value, use -a NAME=VALUE") from None


def feed_options(settings, output, output_format, overwrite_output=None) -> None:
    """Apply ``-o``/``-O``/``-t`` to ``settings`` at ``'cmdline'`` priority.

    Every ``-o FILE`` (or every ``-O FILE``) given is a feed of its own, as in Scrapy 2:
    each becomes a ``FEEDS`` entry ``{FILE: {'format': ...}}`` (``-O``: also
    ``'overwrite': True``; ``-o`` appends to a local file, as in Scrapy 1.2), added to
    the ``FEEDS`` of the settings (the project's, ``-s FEEDS=...``), whose options win
    for the same URI (as Scrapy 2.19's). Being at ``'cmdline'`` priority, they replace
    the spider's ``custom_settings`` ``FEEDS``. ``-o`` also sets ``FEED_URI`` and
    ``FEED_FORMAT`` to the first ``-o`` (Scrapy 1.2's settings, for code that reads
    them; that feed is written once); ``-O`` sets ``FEED_URI`` to None. ``-t FORMAT``
    is the format of every ``-o``/``-O`` that names none after a colon.

    Args:
        settings: the command's :class:`~crawlfw.settings.Settings`.
        output: the ``-o`` values (list of str; a str is one value), or None.
        output_format: the ``-t`` value, or None.
        overwrite_output: the ``-O`` values (list of str; a str is one value), or None.

    Raises:
        UsageError: an unknown format (naming it and the valid ones); both ``-o`` and
            ``-O`` given (Scrapy 2.19's message).
    """
    from crawlfw.core.feeds.feed_settings import feed_settings_from_cli

    outputs = [output] if isinstance(output, str) else [*(output or ())]
    overwrites = ([overwrite_output] if isinstance(overwrite_output, str)
                  else [*(overwrite_output or ())])
    outputs, overwrites = [o for o in outputs if o], [o for o in overwrites if o]
    if outputs and overwrites:
        raise UsageError("Please use only one of -o/--output and -O/--overwrite-output")
    if not (outputs or overwrites):
        return
    feeds: dict = {}
    first: dict = {}
    for value in outputs or overwrites:
        feed = feed_settings_from_cli(value, output_format, settings)
        feeds[feed["FEED_URI"]] = {"format": feed["FEED_FORMAT"],
                                   **({"overwrite": True} if overwrites else {})}
        first = first or feed
    try:
        feeds.update(settings.getdict("FEEDS"))  # the settings' own options win
    except ValueError as e:
        raise UsageError(f"FEEDS: {e}") from None
    cli = first if outputs else {"FEED_URI": None}
    settings.setdict({**cli, "FEEDS": feeds}, priority="cmdline")


def get_spider_loader(settings):
    """Return the project's spider loader (``SPIDER_LOADER_CLASS``) for ``settings``.

    Raises:
        ImportError: a module of ``SPIDER_MODULES`` cannot be imported.
    """
    from crawlfw.utils.misc import load_object

    loader_cls = load_object(settings.get("SPIDER_LOADER_CLASS",
                                          "crawlfw.spiderloader.SpiderLoader"))
    return loader_cls.from_settings(settings.frozencopy())


def fail(message: str, status: int = 1):
    """Print ``message`` on standard error and exit with ``status`` (default 1)."""
    print(message, file=sys.stderr)
    sys.exit(status)


def load_spider(spider_loader, name: str):
    """Return the spider class called ``name``; exit 1 with "Spider not found: <name>"
    on standard error when the project has none."""
    try:
        return spider_loader.load(name)
    except KeyError:
        fail(f"Spider not found: {name}")
