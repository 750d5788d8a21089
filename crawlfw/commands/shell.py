"""``crawlfw shell [--spider=SPIDER] [-c CODE] [url|file]``: the interactive console.

A crawl is started and kept open for the whole session (see :mod:`crawlfw.shell`); the
URL, when given, is fetched through it first. ``-c CODE`` runs the code, prints the value
of its last line when that is an expression, and exits.
"""

import sys
import traceback

import argh

from crawlfw.commands import ScrapyCommand, command, fail, load_spider, start_failure
from crawlfw.commands._command import delegate
from crawlfw.exceptions import DownloadError
from crawlfw.http import Request
from crawlfw.utils.spider import DefaultSpider, spidercls_for_request
from crawlfw.utils.url import guess_scheme

#: Seconds the spider gets to close when the shell exits.
CLOSE_TIMEOUT_S = 30.0

#: Loggers of the console's own libraries (ptpython and prompt_toolkit, jedi and parso for
#: completion, asyncio for ptpython's event loop): kept at WARNING in the shell, so that
#: completions and commands do not print their DEBUG lines between the crawl's.
CONSOLE_LIBRARY_LOGGERS = ("asyncio", "parso", "jedi", "prompt_toolkit", "ptpython")


def quiet_console_libraries() -> None:
    """Set the loggers of :data:`CONSOLE_LIBRARY_LOGGERS` to WARNING (unless a level
    was set on one already)."""
    import logging

    for name in CONSOLE_LIBRARY_LOGGERS:
        console_logger = logging.getLogger(name)
        if console_logger.level == logging.NOTSET:
            console_logger.setLevel(logging.WARNING)


def _print_code_traceback(exc):
    """Print the traceback of ``-c CODE`` from its first frame in the code on."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != "<shell -c>":
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb or exc.__traceback__, file=sys.stderr)


def update_vars(namespace):
    """Hook to add your own objects to the shell's variables (does nothing)."""


@argh.arg("url", help="URL or local file to fetch first")
@argh.arg("-c", "--code", metavar="CODE",
          help="evaluate the code in the shell, print the result and exit")
@argh.arg("--spider", metavar="SPIDER", help="use this spider")
@argh.arg("--attach", nargs="?", const="", metavar="CRAWL",
          help="open the console on a running crawl (crawl id, spider name or pid; "
               "default: the only one) instead of starting one")
@command(default_settings={"KEEP_ALIVE": True, "LOGSTATS_INTERVAL": 0, "STATS_DUMP": False,
                           "PROGRESS": False,
                           "DUPEFILTER_CLASS": "crawlfw.dupefilters.BaseDupeFilter"},
         help="Interactive scraping console")
def shell(url=None, *, settings=None, code=None, spider=None, attach=None):
    """Open the console (or run ``-c CODE``) on a live crawl.

    With ``--attach [CRAWL]`` the console works on a crawl running in another process
    (see :class:`crawlfw.shell.AttachedShell`); exit status 1 when no crawl or several
    match.

    Exit status 1 when the spider is unknown, the crawl could not start, or fetching
    ``url`` failed (the error is printed); the status of ``-c CODE`` that raises is 1
    (with its traceback).
    """
    if attach is not None:
        run_attached(attach, url, code=code)
        return
    run_shell(settings, url, code=code, spider=spider, update_vars=update_vars)


def run_attached(crawl, url=None, *, code=None) -> None:
    """Open the console (or run ``code``) on the running crawl ``crawl`` (crawl id,
    spider name or pid; "" or None for the only one), after fetching ``url``.

    Raises:
        SystemExit: 1 when no crawl or several match, fetching ``url`` failed, or
            ``code`` raised.
    """
    from crawlfw.commands._control import target
    from crawlfw.core.control.protocol import ControlError
    from crawlfw.shell import AttachedShell, CodeError

    endpoint, found = target(crawl)
    try:
        AttachedShell(endpoint, found, code=code).start(url=url)
    except CodeError as e:
        _print_code_traceback(e.__cause__)
        sys.exit(1)
    except (ControlError, OSError) as e:
        fail(f"{type(e).__name__}: {e}")


def run_shell(settings, url=None, *, code=None, spider=None, process=None,
              update_vars=None) -> None:
    """Open the console (or run ``code``) on a live crawl, after fetching ``url``.

    Args:
        settings: the :class:`~crawlfw.settings.Settings`.
        url: a URL or a local file (str), or None.
        code: Python code to run instead of the console (str), or None.
        spider: the spider's name (default: the project spider that handles ``url``).
        process: the :class:`~crawlfw.crawler.CrawlerProcess` to crawl with (default: a
            new one for ``settings``); shut down on return.
        update_vars: ``update_vars(namespace)`` adds objects to the shell's variables
            (default: none are added).

    Raises:
        SystemExit: 1 as described for the ``shell`` command.
    """
    from crawlfw.crawler import CrawlerProcess
    from crawlfw.shell import CodeError, Shell, start_shell_crawler

    if url:
        url = guess_scheme(url)  # the argument may be a local file
    if update_vars is None:
        def update_vars(namespace):
            pass
    if process is None:
        process = CrawlerProcess(settings)
    quiet_console_libraries()
    try:
        spidercls = DefaultSpider
        if spider:
            spidercls = load_spider(process.spider_loader, spider)
        elif url:
            spidercls = spidercls_for_request(process.spider_loader, Request(url), spidercls,
                                              log_multiple=True)
        try:
            crawler = start_shell_crawler(process, spidercls)
        except Exception as e:
            fail(start_failure(e))
        try:
            sh = Shell(crawler, update_vars=update_vars, code=code)
            try:
                sh.start(url=url)
            except CodeError as e:
                _print_code_traceback(e.__cause__)
                sys.exit(1)
            except (DownloadError, OSError, RuntimeError) as e:
                fail(f"Error fetching {url}: {type(e).__name__}: {e}")
        finally:
            crawler.stop("shutdown")
            crawler.wait(CLOSE_TIMEOUT_S)
    finally:
        process.shutdown()


class Command(ScrapyCommand):
    """``crawlfw shell [url|file]`` (Scrapy 1.2's shell command); override
    :meth:`update_vars` to add objects to the shell's variables."""

    requires_project = False
    default_settings = {"KEEP_ALIVE": True, "LOGSTATS_INTERVAL": 0, "STATS_DUMP": False,
                        "PROGRESS": False,
                        "DUPEFILTER_CLASS": "crawlfw.dupefilters.BaseDupeFilter"}

    def syntax(self):
        return "[url|file]"

    def short_desc(self):
        return "Interactive scraping console"

    def long_desc(self):
        return "Interactive console for scraping the given url"

    def add_options(self, parser):
        ScrapyCommand.add_options(self, parser)
        parser.add_option("-c", dest="code",
                          help="evaluate the code in the shell, print the result and exit")
        parser.add_option("--spider", dest="spider", help="use this spider")

    def update_vars(self, vars):  # noqa: A002 - Scrapy's name
        """You can use this function to update the shell's variables (a dict)."""

    def run(self, args, opts):
        url = args[0] if args else None
        delegate(self, run_shell, self.settings, url, code=opts.code, spider=opts.spider,
                 process=self.crawler_process, update_vars=self.update_vars)
