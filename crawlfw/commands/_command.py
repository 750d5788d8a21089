"""The class-based command API of Scrapy 1.2 and Scrapy 2 (``scrapy.commands``):
:class:`ScrapyCommand` and Scrapy 2's :class:`BaseRunSpiderCommand`.

Custom commands (in the module named by the ``COMMANDS_MODULE`` setting, or registered
under the ``crawlfw.commands`` entry-point group) subclass :class:`ScrapyCommand`; the
command line (:mod:`crawlfw.cmdline`) runs them as ``scrapy.cmdline`` does:

1. ``settings.setdict(cmd.default_settings, priority='command')``; ``cmd.settings = settings``
2. ``cmd.add_options(parser)``: an :mod:`optparse` parser for a Scrapy 1.2 command
   (``parser.add_option``), or, when the command calls ``parser.add_argument`` (Scrapy
   2's interface), an :mod:`argparse` one, which parses the arguments as Scrapy 2 does
   (``parse_known_args``: what no option takes is in ``args``)
3. ``cmd.process_options(args, opts)``
4. ``cmd.crawler_process = CrawlerProcess(settings)`` (a
   :class:`~crawlfw.crawler.CrawlerProcessBase`; for a Scrapy 2 command an
   ``AsyncCrawlerProcess`` unless ``FORCE_CRAWLER_PROCESS``, as Scrapy 2.19 does:
   :func:`crawlfw.commands._custom.crawler_process_class`), unless the command's
   ``requires_crawler_process`` is false (Scrapy 2.12)
5. ``cmd.run(args, opts)``; the exit status is ``cmd.exitcode``.

A :class:`~crawlfw.exceptions.UsageError` raised in step 3 or 5 exits with status 2,
printing the message and, when its ``print_help`` is true, the command's help.
"""

import argparse
import logging
import os

from crawlfw import signals
from crawlfw.exceptions import UsageError
from crawlfw.utils.conf import arglist_to_dict

__all__ = ["ScrapyCommand", "CrawlfwCommand", "BaseRunSpiderCommand", "ScrapyHelpFormatter",
           "feed_options"]

logger = logging.getLogger("crawlfw.commands")


class ScrapyCommand:
    """Base class of class-based commands (Scrapy 1.2's ``ScrapyCommand``).

    Attributes:
        requires_project: the command is only offered inside a project.
        requires_crawler_process: the command line makes :attr:`crawler_process`
            (Scrapy 2.12; True by default).
        crawler_process: the :class:`~crawlfw.crawler.CrawlerProcess` the command line
            creates (from the final settings) before calling :meth:`run`.
        default_settings: settings (dict) set at ``'command'`` priority before the
            options are parsed.
        exitcode: the exit status of the ``crawlfw`` process after :meth:`run` (int).
        settings: the :class:`~crawlfw.settings.Settings` (project settings, then
            ``default_settings``, then the command-line options); set by the command line.
    """

    requires_project = False
    requires_crawler_process = True
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
        """Add the command's options to ``parser``: an :class:`optparse.OptionParser`
        (Scrapy 1.2) or an :class:`argparse.ArgumentParser` (Scrapy 2).

        This base adds the "Global Options" group: ``--logfile FILE``, ``-L/--loglevel
        LEVEL``, ``--nolog``, ``--profile FILE``, ``--pidfile FILE``, ``-s/--set
        NAME=VALUE`` (repeatable) and ``--pdb``. ``-h/--help`` is the parser's own.
        Subclasses call it and add their options.
        """
        level = self.settings["LOG_LEVEL"] if self.settings is not None else "DEBUG"
        if hasattr(parser, "add_argument_group"):  # argparse (Scrapy 2)
            group = parser.add_argument_group(title="Global Options")
            add = group.add_argument
            add("--logfile", metavar="FILE", help="log file. if omitted stderr will be used")
            add("-L", "--loglevel", metavar="LEVEL", default=None,
                help=f"log level (default: {level})")
            add("--nolog", action="store_true", help="disable logging completely")
            add("--profile", metavar="FILE", default=None,
                help="write python cProfile stats to FILE")
            add("--pidfile", metavar="FILE", help="write process ID to FILE")
            add("-s", "--set", action="append", default=[], metavar="NAME=VALUE",
                help="set/override setting (may be repeated)")
            add("--pdb", action="store_true", help="enable pdb on failure")
            return
        from optparse import OptionGroup  # only for class-based commands, when they run

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
            opts: the parsed options (:class:`optparse.Values` or
                :class:`argparse.Namespace`).

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


class BaseRunSpiderCommand(ScrapyCommand):
    """Scrapy 2's base of the commands that run a spider (``crawl``, ``runspider``,
    ``parse``): ``-a NAME=VALUE`` (spider arguments, in ``opts.spargs`` as a dict once
    processed), ``-o FILE`` and ``-O FILE`` (a feed appended to / overwritten, ``FILE:FORMAT``
    naming the format), and :meth:`_create_crawler`.

    A subclass overrides :meth:`run`, typically::

        def run(self, args, opts):
            self.crawler_process.crawl(self._create_crawler(args[0]), **opts.spargs)
            self.crawler_process.start()
            if self.crawler_process.bootstrap_failed:
                self.exitcode = 1
    """

    def add_options(self, parser) -> None:
        """The global options, then ``-a``, ``-o/--output`` and ``-O/--overwrite-output``
        (each repeatable, as in Scrapy 2; crawlfw takes one feed from the command line)."""
        super().add_options(parser)
        add = getattr(parser, "add_argument", None) or parser.add_option
        add("-a", dest="spargs", action="append", default=[], metavar="NAME=VALUE",
            help="set spider argument (may be repeated)")
        add("-o", "--output", metavar="FILE", action="append",
            help="append scraped items to the end of FILE (use - for stdout), to define "
                 "format set a colon at the end of the output URI (i.e. -o FILE:FORMAT)")
        add("-O", "--overwrite-output", metavar="FILE", action="append",
            help="dump scraped items into FILE, overwriting any existing file, to define "
                 "format set a colon at the end of the output URI (i.e. -O FILE:FORMAT)")

    def process_options(self, args, opts) -> None:
        """The global options; ``opts.spargs`` becomes a dict; ``-o``/``-O`` set the feed
        at ``'cmdline'`` priority (:func:`crawlfw.commands.feed_options`).

        Raises:
            UsageError: a ``-a`` value is not ``NAME=VALUE``; more than one ``-o``/``-O``
                (use ``FEEDS``); an unknown feed format (``print_help`` False).
        """
        super().process_options(args, opts)
        try:
            opts.spargs = arglist_to_dict(getattr(opts, "spargs", None) or [])
        except ValueError:
            raise UsageError("Invalid -a value, use -a NAME=VALUE", print_help=False) from None
        output = getattr(opts, "output", None) or []
        overwrite = getattr(opts, "overwrite_output", None) or []
        if len(output) + len(overwrite) > 1:
            raise UsageError("crawlfw takes one -o/-O feed from the command line; "
                             "use the FEEDS setting for more", print_help=False)
        if output or overwrite:
            try:
                feed_options(self.settings, output[0] if output else None, None,
                             overwrite_output=overwrite[0] if overwrite else None)
            except UsageError as e:
                raise UsageError(str(e), print_help=False) from None

    def _create_crawler(self, spidercls):
        """A Crawler of ``crawler_process`` for a spider class or name; it warns (once
        the engine starts) when feeds are set but the FeedExporter extension is off.

        Returns:
            the :class:`~crawlfw.crawler.Crawler`.
        """
        crawler = self.crawler_process.create_crawler(spidercls)
        crawler.signals.connect(lambda: self._warn_if_feeds_unused(crawler),
                                signal=signals.engine_started, weak=False)
        return crawler

    @staticmethod
    def _warn_if_feeds_unused(sender) -> None:
        settings = sender.settings
        if not (settings.getdict("FEEDS") or settings.get("FEED_URI")):
            return
        names = {type(ext).__name__ for ext in sender.extensions.middlewares}
        if "FeedExporter" not in names:
            logger.warning(
                "The FeedExporter extension is not enabled, so no item will be exported "
                "to the configured feeds (FEEDS, -o, -O).")


#: crawlfw's name for :class:`ScrapyCommand` (the same class).
CrawlfwCommand = ScrapyCommand


class ScrapyHelpFormatter(argparse.HelpFormatter):
    """Scrapy 2's help formatter of class-based commands (the ones whose options are
    argparse's): the usage and each section heading title-cased and underlined (``=``,
    or ``-`` for ``Global Options``)::

        Usage
        =====
          crawlfw crawl2 [options] <spider>

        Options
        =======
          --pages PAGES         pages to crawl

    Args:
        prog: the program name.
        indent_increment, max_help_position, width: as :class:`argparse.HelpFormatter`.
    """

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        super().__init__(prog, indent_increment=indent_increment,
                         max_help_position=max_help_position, width=width)

    def _join_parts(self, part_strings):
        return super()._join_parts(self.format_part_strings([*part_strings]))

    def format_part_strings(self, part_strings: list) -> list:
        """Title-case and underline the headings among ``part_strings`` (the help's
        pieces, in order; changed in place and returned)."""
        if part_strings and part_strings[0].startswith("usage: "):
            part_strings[0] = "Usage\n=====\n  " + part_strings[0][len("usage: "):]
        headings = [i for i, part in enumerate(part_strings) if part.endswith(":\n")]
        for index in reversed(headings):
            char = "-" if "Global Options" in part_strings[index] else "="
            part_strings[index] = part_strings[index][:-2].title()
            part_strings.insert(index + 1, "\n" + char * len(part_strings[index]) + "\n")
        return part_strings


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
        UsageError: a ``-s`` value is not ``NAME=VALUE``; ``-L`` or ``LOG_LEVEL`` (from
            ``-s`` or the project's settings) names no logging level.
    """
    try:
        settings.setdict(arglist_to_dict([*(set or ())]), priority="cmdline")
    except ValueError:
        raise UsageError("Invalid -s value, use -s NAME=VALUE") from None
    if loglevel and not isinstance(logging.getLevelName(loglevel), int):
        raise UsageError(f"Invalid -L value {loglevel!r}, use one of CRITICAL, ERROR, "
                         "WARNING, INFO, DEBUG")
    level = loglevel or settings.get("LOG_LEVEL")
    if not _is_log_level(level):
        where = settings.getpriority("LOG_LEVEL")
        source = {"cmdline": "-s", "project": "the project's settings"}.get(
            _priority_name(where), "the settings")
        raise UsageError(f"Invalid LOG_LEVEL {level!r} (set in {source}), use one of "
                         "CRITICAL, ERROR, WARNING, INFO, DEBUG or a number")
    if logfile:
        settings.set("LOG_ENABLED", True, priority="cmdline")
        settings.set("LOG_FILE", logfile, priority="cmdline")
    if loglevel:
        settings.set("LOG_ENABLED", True, priority="cmdline")
        settings.set("LOG_LEVEL", loglevel, priority="cmdline")
    if nolog:
        settings.set("LOG_ENABLED", False, priority="cmdline")


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


def _is_log_level(value) -> bool:
    """True for what :meth:`logging.Handler.setLevel` takes: a level number or a
    registered level name (``'INFO'``; names are case-sensitive, as in Scrapy)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and isinstance(logging.getLevelName(value), int)


def _priority_name(priority) -> str | None:
    """The name of a settings priority number (``'cmdline'``), or None."""
    from crawlfw.settings import SETTINGS_PRIORITIES

    return next((name for name, number in SETTINGS_PRIORITIES.items() if number == priority),
                None)
