"""``crawlfw runspider <spider_file.py>``: run a self-contained spider without a project."""

import importlib.util
import logging
import os
import sys
from typing import NoReturn

import argh

from crawlfw.commands import (
    ScrapyCommand,
    command,
    feed_options,
    feed_output_args,
    report_failure,
    spider_arguments,
)
from crawlfw.commands._command import delegate
from crawlfw.core.flow._reasons import is_failure_reason
from crawlfw.exceptions import CrawlStartError, UsageError
from crawlfw.utils.spider import iter_spider_classes


def _module_name(abspath: str) -> str:
    """The name a spider file is imported under: its file name without ``.py``, unless
    that would replace a module already imported or one of Python's own (a spider file
    called ``site.py`` must not replace Python's ``site``)."""
    fname = os.path.splitext(os.path.basename(abspath))[0]
    if fname in sys.modules or fname in sys.stdlib_module_names:
        return f"_crawlfw_runspider_{fname}"
    return fname


def _import_file(filepath):
    """Import a Python file as a module (its directory goes on ``sys.path`` first).

    Raises:
        ValueError: the file is not a ``.py`` file.
        Exception: whatever importing the file raises.
    """
    abspath = os.path.abspath(filepath)
    dirname, file = os.path.split(abspath)
    fext = os.path.splitext(file)[1]
    if fext not in (".py", ".pyw"):
        raise ValueError(f"Not a Python source file: {abspath}")
    if dirname not in sys.path:
        sys.path.insert(0, dirname)
    name = _module_name(abspath)
    spec = importlib.util.spec_from_file_location(name, abspath)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@argh.arg("spider_file", help="a Python file defining a Spider subclass")
@argh.arg("-a", "--spider-arg", action="append", default=None, metavar="NAME=VALUE",
          help="set spider argument (may be repeated)")
@feed_output_args
@argh.arg("-t", "--output-format", metavar="FORMAT", help="format to use for dumping items with -o")
@argh.arg("--workers", type=int, metavar="N",
          help="run N worker processes sharing the frontier of FRONTIER_URL")
@command(default_settings={"SPIDER_LOADER_WARN_ONLY": True},
         help="Run a self-contained spider (without creating a project)")
def runspider(spider_file, *, settings=None, spider_arg=None, output=None, output_format=None,
              overwrite_output=None, workers=None):
    """Run the spider defined in ``spider_file``; exits 1 if the crawl could not start."""
    spidercls = load_spider_file(spider_file)
    spargs = spider_arguments(spider_arg)
    feed_options(settings, output, output_format, overwrite_output)
    if workers is not None:  # N processes of one shared crawl
        from crawlfw.commands._workers import run_workers

        return run_workers(settings, workers, ["runspider", spider_file], spargs, spidercls)
    return run_crawl(settings, spidercls, spargs)


def load_spider_file(spider_file):
    """Import ``spider_file`` and return the last Spider subclass defined in it.

    A file that cannot be imported (a syntax error, a missing dependency, an error
    raised at import) is the same failure as a broken module of a project's
    ``SPIDER_MODULES`` for ``crawl`` and ``list``: one line naming the file, the line
    and the error (:func:`crawlfw.spiderloader.load_error_message`), exit status 1.

    Raises:
        UsageError: the file does not exist, is not a ``.py`` file, or defines no spider.
        SystemExit: 1 when the file cannot be imported.
    """
    if not os.path.exists(spider_file):
        raise UsageError(f"File not found: {spider_file}")
    if os.path.splitext(spider_file)[1] not in (".py", ".pyw"):
        raise UsageError(f"Unable to load {spider_file!r}: Not a Python source file: "
                         f"{os.path.abspath(spider_file)}")
    try:
        module = _import_file(spider_file)
    except Exception as e:
        _broken_file(spider_file, e)
    spclasses = list(iter_spider_classes(module))
    if not spclasses:
        raise UsageError(f"No spider found in file: {spider_file}")
    return spclasses.pop()


def _broken_file(spider_file, error) -> NoReturn:
    """Say in one line why ``spider_file`` could not be imported; exit 1."""
    from crawlfw.spiderloader import load_error_message

    name = _module_name(os.path.abspath(spider_file))
    report_failure(logging.getLogger(__name__),
                   load_error_message(f"file {spider_file!r}", error, name))
    sys.exit(1)


def run_crawl(settings, spidercls, spargs, process=None, *, logger=None) -> None:
    """Run one crawl in a CrawlerProcess; exit status 1 when it could not start or failed.

    A crawl that cannot start because of its configuration (a setting of the wrong type,
    a feed that cannot be opened: :class:`~crawlfw.exceptions.CrawlStartError`) is
    reported in one log line without a traceback. A crawl that ends with a failure
    reason (:func:`crawlfw.crawler.is_failure_reason`: an actor failed, a feed failed...)
    exits with status 1 too, as Scrapy does when its crawl fails. Either way the one-line
    reason is printed on standard error when the log does not show it there
    (:func:`crawlfw.commands.report_failure`: ``--nolog``, ``-L CRITICAL``,
    ``LOG_ENABLED = False``, ``LOG_FILE``). A shutdown forced by a second SIGINT/SIGTERM
    exits with ``128 + signal number`` (130 for ^C).

    Args:
        settings: the :class:`~crawlfw.settings.Settings`.
        spidercls: the Spider class.
        spargs: spider arguments (dict of str).
        process: the :class:`~crawlfw.crawler.CrawlerProcess` to use (default: a new
            one for ``settings``).
        logger: the command's :class:`logging.Logger`, under which start-up errors are
            logged (default: this module's, ``crawlfw.commands.runspider``).
    """
    from crawlfw.crawler import CrawlerProcess

    if logger is None:
        logger = logging.getLogger(__name__)
    if process is None:
        process = CrawlerProcess(settings)
    from crawlfw.commands._workers import report_to_parent

    try:
        process.crawl(spidercls, **spargs)
    except Exception as e:
        process.shutdown()
        if isinstance(e, CrawlStartError):  # refused on purpose: not a crash
            report_failure(logger, f"Crawl could not start: {e}")
            report_to_parent(f"start_failed: {e}")
        else:
            logger.error("Crawl could not start: %s: %s", type(e).__name__, e, exc_info=True)
            report_failure(logger, f"Crawl could not start: {type(e).__name__}: {e}",
                           logged=True)
        sys.exit(1)
    process.start()
    if getattr(process, "forced_signal", None):  # a second ^C: 130 for SIGINT
        from crawlfw.crawler import exit_now

        # unclean on purpose: no waiting for actor or pool threads at interpreter exit
        exit_now(128 + process.forced_signal)
    reasons = [c.finish_reason for c in process.crawlers if c.finish_reason is not None]
    if reasons:
        report_to_parent(next((r for r in reasons if is_failure_reason(r)), reasons[0]))
    failed = [c for c in process.crawlers if c.failed]
    if failed:
        # the stats dump says it (INFO); printed when ERROR lines are not seen either
        report_failure(logger, f"Crawl failed: finish_reason {failed[0].finish_reason!r}",
                       logged=True)
        sys.exit(1)


def add_crawl_options(parser) -> None:
    """Add ``-a NAME=VALUE``, ``-o FILE``, ``-t FORMAT`` (Scrapy 1.2's ``crawl`` and
    ``runspider`` options) and ``-O FILE`` (Scrapy 2) to an optparse ``parser``;
    ``-o`` and ``-O`` may be repeated (Scrapy 2: one feed each), ``opts.output`` and
    ``opts.overwrite_output`` are lists."""
    parser.add_option("-a", dest="spargs", action="append", default=[], metavar="NAME=VALUE",
                      help="set spider argument (may be repeated)")
    parser.add_option("-o", "--output", action="append", default=[], metavar="FILE",
                      help="append scraped items to the end of FILE (use - for stdout; "
                           "may be repeated: one feed each)")
    parser.add_option("-O", "--overwrite-output", action="append", default=[],
                      metavar="FILE",
                      help="dump scraped items into FILE, overwriting any existing file "
                           "(may be repeated: one feed each)")
    parser.add_option("-t", "--output-format", metavar="FORMAT",
                      help="format to use for dumping items with -o")


def process_crawl_options(cmd, opts) -> None:
    """Turn ``opts.spargs`` into a dict and apply ``-o``/``-O``/``-t`` to ``cmd.settings``.

    Raises:
        UsageError: a bad ``-a`` value or an unknown feed format (``print_help`` False).
    """
    try:
        opts.spargs = spider_arguments(opts.spargs)
        feed_options(cmd.settings, opts.output, opts.output_format,
                     getattr(opts, "overwrite_output", None))
    except UsageError as e:
        raise UsageError(str(e), print_help=False) from None


class Command(ScrapyCommand):
    """``crawlfw runspider [options] <spider_file>`` (Scrapy 1.2's runspider command)."""

    requires_project = False
    default_settings = {"SPIDER_LOADER_WARN_ONLY": True}

    def syntax(self):
        return "[options] <spider_file>"

    def short_desc(self):
        return "Run a self-contained spider (without creating a project)"

    def long_desc(self):
        return "Run the spider defined in the given file"

    def add_options(self, parser):
        ScrapyCommand.add_options(self, parser)
        add_crawl_options(parser)

    def process_options(self, args, opts):
        ScrapyCommand.process_options(self, args, opts)
        process_crawl_options(self, opts)

    def run(self, args, opts):
        if len(args) != 1:
            raise UsageError()
        spidercls = load_spider_file(args[0])
        delegate(self, run_crawl, self.settings, spidercls, opts.spargs,
                 process=self.crawler_process)
