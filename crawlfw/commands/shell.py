"""``crawlfw shell [--spider=SPIDER] [-c CODE] [url|file]``: the interactive console.

A crawl is started and kept open for the whole session (see :mod:`crawlfw.shell`); the
URL, when given, is fetched through it first. ``-c CODE`` runs the code, prints the value
of its last line when that is an expression, and exits.
"""

import sys
import traceback

import argh

from crawlfw.commands import command, fail, load_spider
from crawlfw.exceptions import DownloadError
from crawlfw.http import Request
from crawlfw.utils.spider import DefaultSpider, spidercls_for_request
from crawlfw.utils.url import guess_scheme

#: Seconds the spider gets to close when the shell exits.
CLOSE_TIMEOUT_S = 30.0


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
@command(default_settings={"KEEP_ALIVE": True, "LOGSTATS_INTERVAL": 0,
                           "DUPEFILTER_CLASS": "crawlfw.dupefilters.BaseDupeFilter"},
         help="Interactive scraping console")
def shell(url=None, *, settings=None, code=None, spider=None):
    """Open the console (or run ``-c CODE``) on a live crawl.

    Exit status 1 when the spider is unknown, the crawl could not start, or fetching
    ``url`` failed (the error is printed); the status of ``-c CODE`` that raises is 1
    (with its traceback).
    """
    from crawlfw.crawler import CrawlerProcess
    from crawlfw.shell import CodeError, Shell, start_shell_crawler

    if url:
        url = guess_scheme(url)  # the argument may be a local file
    process = CrawlerProcess(settings)
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
            fail(f"Crawl could not start: {type(e).__name__}: {e}")
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
