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

import contextvars
import functools
import inspect
import os
import sys

import argh

from crawlfw.commands._command import (
    BaseRunSpiderCommand,
    CrawlfwCommand,
    ScrapyCommand,
    ScrapyHelpFormatter,
    apply_global_options,
    feed_options,
)
from crawlfw.exceptions import UsageError
from crawlfw.utils.conf import arglist_to_dict

__all__ = [
    "ScrapyCommand",
    "CrawlfwCommand",
    "BaseRunSpiderCommand",
    "ScrapyHelpFormatter",
    "command",
    "apply_global_options",
    "spider_arguments",
    "feed_options",
    "get_spider_loader",
    "load_spider",
    "fail",
    "report_failure",
    "start_failure",
    "exit_if_spiders_broken",
    "CommandError",
]

CommandError = argh.CommandError

#: Command name -> whether it needs a project (``crawlfw.cfg`` found).
REQUIRES_PROJECT: dict[str, bool] = {}

#: The settings ``crawlfw.cmdline.execute(settings=...)`` runs the command with (None:
#: the project's, read by :func:`command`).
_GIVEN_SETTINGS: contextvars.ContextVar = contextvars.ContextVar("crawlfw_given_settings",
                                                                 default=None)


def command(*, requires_project=False, project=True, default_settings=None,
            help=None):  # noqa: A002
    """Decorate a command function: global options, settings, and error mapping.

    The function receives ``settings`` (a ``Settings`` with the project's settings, the
    command's ``default_settings`` at ``'command'`` priority and ``-s`` values at
    ``'cmdline'`` priority) as its first keyword argument.

    Args:
        requires_project: the command only works inside a project.
        project: read the project's settings (False: crawlfw's defaults only, for a
            command that must not import the project, such as ``port``).
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

            if project:
                settings = _GIVEN_SETTINGS.get()
                if settings is None:
                    settings = get_project_settings()
            else:
                from crawlfw.settings import Settings

                settings = Settings()
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
            except Exception as e:
                exit_if_spiders_broken(e, func.__name__.rstrip("_"))
                raise

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


def feed_output_args(func):
    """Decorate an argh command with ``-o/--output`` and ``-O/--overwrite-output`` as
    ``crawl``, ``runspider`` and ``parse`` take them (Scrapy 2.19's help; each
    repeatable: one feed each, see :func:`feed_options`)."""
    func = argh.arg("-O", "--overwrite-output", action="append", default=None, metavar="FILE",
                    help="dump scraped items into FILE, overwriting any existing file (may "
                         "be repeated: one feed each), to define format set a colon at the "
                         "end of the output URI (i.e. -O FILE:FORMAT)")(func)
    return argh.arg("-o", "--output", action="append", default=None, metavar="FILE",
                    help="append scraped items to the end of FILE (use - for stdout; may be "
                         "repeated: one feed each), to define format set a colon at the end "
                         "of the output URI (i.e. -o FILE:FORMAT)")(func)


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


def start_failure(error: BaseException) -> str:
    """The one line saying why a crawl could not start: ``"Crawl could not start:
    <reason>"``, the reason of a :class:`~crawlfw.exceptions.CrawlStartError` (a start
    refused: a feed, a component that cannot be built...) as it is, any other error
    prefixed with its type."""
    from crawlfw.exceptions import CrawlStartError

    if isinstance(error, CrawlStartError):
        return f"Crawl could not start: {error}"
    return f"Crawl could not start: {type(error).__name__}: {error}"


def exit_if_spiders_broken(error: BaseException, name: str) -> None:
    """Exit with status 1 when ``error`` is a spider module that could not be imported,
    after saying so in one line (naming the module, file, line and error; see
    :mod:`crawlfw.spiderloader`) under the logger of command ``name``; return otherwise.
    """
    import logging

    from crawlfw.spiderloader import spider_load_error

    message = spider_load_error(error)
    if message is None:
        return
    report_failure(logging.getLogger(f"crawlfw.commands.{name}"), message)
    sys.exit(1)


def report_failure(logger, message: str, *, logged: bool = False) -> None:
    """Say why a command fails, in one line, whatever the log settings.

    The line is logged at ERROR on ``logger`` (the command's own logger, so it is in a
    ``LOG_FILE`` too) unless ``logged`` (it was logged already, e.g. by the scraper);
    when ERROR records do not reach standard error (``--nolog``, ``-L CRITICAL``,
    ``LOG_ENABLED = False``, ``LOG_FILE``; see
    :func:`crawlfw.utils.log.shown_on_stderr`) it is printed there as well, as
    ``crawlfw shell --nolog`` prints its errors.

    Args:
        logger: a :class:`logging.Logger`.
        message: the reason, one line.
        logged: the line was logged already; only print it when it is not seen.
    """
    from crawlfw.utils.log import shown_on_stderr

    if not logged:
        logger.error("%s", message)
    if not shown_on_stderr(name=logger.name):
        print(message, file=sys.stderr, flush=True)


def load_spider(spider_loader, name: str):
    """Return the spider class called ``name``; exit 1 with "Spider not found: <name>"
    on standard error when the project has none."""
    try:
        return spider_loader.load(name)
    except KeyError:
        fail(f"Spider not found: {name}")
