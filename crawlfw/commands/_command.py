"""Scrapy 1.2's class-based command API (``scrapy.commands.ScrapyCommand``).

Custom commands (in the module named by the ``COMMANDS_MODULE`` setting, or registered
under the ``crawlfw.commands`` entry-point group) subclass :class:`ScrapyCommand`; the
command line (:mod:`crawlfw.cmdline`) runs them as Scrapy 1.2's ``scrapy.cmdline`` does:

1. ``settings.setdict(cmd.default_settings, priority='command')``; ``cmd.settings = settings``
2. ``cmd.add_options(parser)`` on an :mod:`optparse` parser, which parses the arguments
3. ``cmd.process_options(args, opts)``
4. ``cmd.crawler_process = CrawlerProcess(settings)``
5. ``cmd.run(args, opts)``; the exit status is ``cmd.exitcode``.

A :class:`~crawlfw.exceptions.UsageError` raised in step 3 or 5 exits with status 2,
printing the message and, when its ``print_help`` is true, the command's help.
"""

import logging
import os

from crawlfw.exceptions import UsageError
from crawlfw.utils.conf import arglist_to_dict

__all__ = ["ScrapyCommand", "CrawlfwCommand"]


class ScrapyCommand:
    """Base class of class-based commands (Scrapy 1.2's ``ScrapyCommand``).

    Attributes:
        requires_project: the command is only offered inside a project.
        crawler_process: the :class:`~crawlfw.crawler.CrawlerProcess` the command line
            creates (from the final settings) before calling :meth:`run`.
        default_settings: settings (dict) set at ``'command'`` priority before the
            options are parsed.
        exitcode: the exit status of the ``crawlfw`` process after :meth:`run` (int).
        settings: the :class:`~crawlfw.settings.Settings` (project settings, then
            ``default_settings``, then the command-line options); set by the command line.
    """

    requires_project = False
    crawler_process = None

    # default settings to be used for this command instead of global defaults
    default_settings: dict = {}

    exitcode = 0

    def __init__(self):
        self.settings = None  # set by crawlfw.cmdline

    def set_crawler(self, crawler):
        """Remember ``crawler`` as this command's crawler (once only).

        Raises:
            AssertionError: a crawler was already set.
        """
        assert not hasattr(self, "_crawler"), "crawler already set"
        self._crawler = crawler

    def syntax(self) -> str:
        """Command syntax (preferably one-line), without the command name."""
        return ""

    def short_desc(self) -> str:
        """A short description of the command (one line, shown by ``crawlfw -h``)."""
        return ""

    def long_desc(self) -> str:
        """A long description of the command (shown by ``crawlfw <command> -h``);
        defaults to :meth:`short_desc`."""
        return self.short_desc()

    def help(self) -> str:
        """An extensive help for the command; defaults to :meth:`long_desc`."""
        return self.long_desc()

    def add_options(self, parser) -> None:
        """Add the command's options to ``parser`` (an :class:`optparse.OptionParser`).

        This base adds the "Global Options" group: ``--logfile FILE``, ``-L/--loglevel
        LEVEL``, ``--nolog``, ``--profile FILE``, ``--pidfile FILE``, ``-s/--set
        NAME=VALUE`` (repeatable) and ``--pdb``. ``-h/--help`` is the parser's own.
        Subclasses call it and add their options.
        """
        from optparse import OptionGroup  # only for class-based commands, when they run

        level = self.settings["LOG_LEVEL"] if self.settings is not None else "DEBUG"
        group = OptionGroup(parser, "Global Options")
        group.add_option("--logfile", metavar="FILE",
                         help="log file. if omitted stderr will be used")
        group.add_option("-L", "--loglevel", metavar="LEVEL", default=None,
                         help=f"log level (default: {level})")
        group.add_option("--nolog", action="store_true",
                         help="disable logging completely")
        group.add_option("--profile", metavar="FILE", default=None,
                         help="write python cProfile stats to FILE")
        group.add_option("--pidfile", metavar="FILE",
                         help="write process ID to FILE")
        group.add_option("-s", "--set", action="append", default=[], metavar="NAME=VALUE",
                         help="set/override setting (may be repeated)")
        group.add_option("--pdb", action="store_true", help="enable pdb on failure")
        parser.add_option_group(group)

    def process_options(self, args, opts) -> None:
        """Apply the global options to :attr:`settings` at ``'cmdline'`` priority.

        ``-s NAME=VALUE`` sets ``NAME``; ``--logfile`` sets ``LOG_FILE`` (and
        ``LOG_ENABLED``); ``-L`` sets ``LOG_LEVEL`` (and ``LOG_ENABLED``); ``--nolog``
        sets ``LOG_ENABLED`` to False; ``--pidfile`` writes the process id (and a
        newline) to the file. ``--pdb`` is honoured by the command line, which opens
        :func:`pdb.post_mortem` when :meth:`run` raises.

        Args:
            args: the positional arguments (list of str).
            opts: the :class:`optparse.Values` of the parsed options.

        Raises:
            UsageError: a ``-s`` value is not ``NAME=VALUE`` (``print_help`` False).
            OSError: the pid file cannot be written.
        """
        try:
            apply_global_options(self.settings, set=getattr(opts, "set", None),
                                 loglevel=getattr(opts, "loglevel", None),
                                 logfile=getattr(opts, "logfile", None),
                                 nolog=getattr(opts, "nolog", False))
        except UsageError as e:
            raise UsageError(str(e), print_help=False) from None
        pidfile = getattr(opts, "pidfile", None)
        if pidfile:
            with open(pidfile, "w") as f:
                f.write(str(os.getpid()) + os.linesep)

    def run(self, args, opts) -> None:
        """Entry point for running the command.

        Args:
            args: the positional arguments (list of str).
            opts: the :class:`optparse.Values` of the parsed options.

        Raises:
            UsageError: bad arguments (exit status 2).
        """
        raise NotImplementedError


#: crawlfw's name for :class:`ScrapyCommand` (the same class).
CrawlfwCommand = ScrapyCommand


def delegate(cmd: ScrapyCommand, func, *args, **kwargs):
    """Call ``func(*args, **kwargs)`` for a built-in ``Command``'s :meth:`run`.

    The built-in implementations exit (``sys.exit(n)``) on failure; here an integer
    exit status becomes ``cmd.exitcode`` instead, so a subclass that calls
    ``super().run()`` gets control back, as with Scrapy 1.2's commands.

    Returns:
        What ``func`` returned, or None when it exited.
    """
    try:
        return func(*args, **kwargs)
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            cmd.exitcode = e.code or 0
            return None
        raise


def apply_global_options(settings, *, set=(), loglevel=None, logfile=None, nolog=False):  # noqa: A002
    """Apply ``-s``, ``-L``, ``--logfile`` and ``--nolog`` at ``'cmdline'`` priority.

    Raises:
        UsageError: a ``-s`` value is not ``NAME=VALUE``; ``-L`` names no logging level.
    """
    try:
        settings.setdict(arglist_to_dict([*(set or ())]), priority="cmdline")
    except ValueError:
        raise UsageError("Invalid -s value, use -s NAME=VALUE") from None
    if loglevel and not isinstance(logging.getLevelName(loglevel), int):
        raise UsageError(f"Invalid -L value {loglevel!r}, use one of CRITICAL, ERROR, "
                         "WARNING, INFO, DEBUG")
    if logfile:
        settings.set("LOG_ENABLED", True, priority="cmdline")
        settings.set("LOG_FILE", logfile, priority="cmdline")
    if loglevel:
        settings.set("LOG_ENABLED", True, priority="cmdline")
        settings.set("LOG_LEVEL", loglevel, priority="cmdline")
    if nolog:
        settings.set("LOG_ENABLED", False, priority="cmdline")
