"""``crawlfw runspider <spider_file.py>``: run a self-contained spider without a project."""

import importlib.util
import logging
import os
import sys

import argh

from crawlfw.commands import ScrapyCommand, command, feed_options, spider_arguments
from crawlfw.commands._command import delegate
from crawlfw.core.flow._reasons import is_failure_reason
from crawlfw.exceptions import CrawlStartError, UsageError
from crawlfw.utils.spider import iter_spider_classes


def _import_file(filepath):
    """Import a Python file as a module (its directory goes on ``sys.path`` first).

    Raises:
        ValueError: the file is not a ``.py`` file.
        Exception: whatever importing the file raises.
    """
    abspath = os.path.abspath(filepath)
    dirname, file = os.path.split(abspath)
    fname, fext = os.path.splitext(file)
    if fext not in (".py", ".pyw"):
        raise ValueError(f"Not a Python source file: {abspath}")
    if dirname not in sys.path:
        sys.path.insert(0, dirname)
    name = fname
    if name in sys.modules or name in sys.stdlib_module_names:
        # e.g. a spider file called site.py must not replace Python's own ``site`` module
        name = f"_crawlfw_runspider_{fname}"
    spec = importlib.util.spec_from_file_location(name, abspath)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@argh.arg("spider_file", help="a Python file defining a Spider subclass")
@argh.arg("-a", "--spider-arg", action="append", default=None, metavar="NAME=VALUE",
          help="set spider argument (may be repeated)")
@argh.arg("-o", "--output", action="append", default=None, metavar="FILE",
          help="append scraped items to the end of FILE (use - for stdout; may be "
               "repeated: one feed each), to define format set a colon at the end of "
               "the output URI (i.e. -o FILE:FORMAT)")
@argh.arg("-O", "--overwrite-output", action="append", default=None, metavar="FILE",
          help="dump scraped items into FILE, overwriting any existing file (may be "
               "repeated: one feed each), to define format set a colon at the end of "
               "the output URI (i.e. -O FILE:FORMAT)")
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

    Raises:
        UsageError: the file does not exist, cannot be imported, or defines no spider.
    """
    if not os.path.exists(spider_file):
        raise UsageError(f"File not found: {spider_file}")
    try:
        module = _import_file(spider_file)
    except (ImportError, ValueError, SyntaxError) as e:
        raise UsageError(f"Unable to load {spider_file!r}: {e}") from e
    spclasses = list(iter_spider_classes(module))
    if not spclasses:
        raise UsageError(f"No spider found in file: {spider_file}")
    return spclasses.pop()


def run_crawl(settings, spidercls, spargs, process=None) -> None:
    """Run one crawl in a CrawlerProcess; exit status 1 when it could not start or failed.

    A crawl that cannot start because of its configuration (a setting of the wrong type,
    a feed that cannot be opened: :class:`~crawlfw.exceptions.CrawlStartError`) is
    reported in one log line without a traceback. A crawl that ends with a failure
    reason (:func:`crawlfw.crawler.is_failure_reason`: an actor failed, a feed failed...)
    exits with status 1 too, as Scrapy does when its crawl fails. A shutdown forced by a
    second SIGINT/SIGTERM exits with ``128 + signal number`` (130 for ^C).

    Args:
        settings: the :class:`~crawlfw.settings.Settings`.
        spidercls: the Spider class.
        spargs: spider arguments (dict of str).
        process: the :class:`~crawlfw.crawler.CrawlerProcess` to use (default: a new
            one for ``settings``).
    """
    from crawlfw.crawler import CrawlerProcess

    if process is None:
        process = CrawlerProcess(settings)
    from crawlfw.commands._workers import report_to_parent

    try:
        process.crawl(spidercls, **spargs)
    except Exception as e:
        process.shutdown()
        refused = isinstance(e, CrawlStartError)  # on purpose, in one line
        logging.getLogger(__name__).error("Crawl could not start: %s",
                                          e if refused else f"{type(e).__name__}: {e}",
                                          exc_info=not refused)
        if refused:  # not a crash
            report_to_parent(f"start_failed: {e}")
        sys.exit(1)
    process.start()
    if getattr(process, "forced_signal", None):  # a second ^C: 130 for SIGINT
        from crawlfw.crawler import exit_now

        # unclean on purpose: no waiting for actor or pool threads at interpreter exit
        exit_now(128 + process.forced_signal)
    reasons = [c.finish_reason for c in process.crawlers if c.finish_reason is not None]
    if reasons:
        report_to_parent(next((r for r in reasons if is_failure_reason(r)), reasons[0]))
    if any(crawler.failed for crawler in process.crawlers):
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
