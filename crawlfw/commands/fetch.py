"""``crawlfw fetch [--spider=SPIDER] [--headers] [--no-redirect] <url>``: download a URL
with the crawlfw downloader (every middleware applies) and print it to standard output.

Log lines go to standard error; use ``--nolog`` to silence them.
"""

import logging
import sys

import argh
from w3lib.url import is_url

from crawlfw.commands import (
    ScrapyCommand,
    command,
    fail,
    load_spider,
    report_failure,
    start_failure,
)
from crawlfw.commands._command import delegate
from crawlfw.exceptions import IgnoreRequest, UsageError
from crawlfw.http import Request
from crawlfw.utils.datatypes import SequenceExclude
from crawlfw.utils.spider import DefaultSpider, spidercls_for_request

logger = logging.getLogger(__name__)


def _print_bytes(data: bytes) -> None:
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.flush()


def _print_headers(headers, prefix: bytes) -> None:
    for key, values in headers.items():
        for value in values:
            _print_bytes(prefix + b" " + key + b": " + value)


def print_response(response, headers: bool = False) -> None:
    """Print the body, or with ``headers`` the request headers (``> Name: value``), a
    ``>`` line and the response headers (``< Name: value``), as Scrapy 1.2 does."""
    if headers:
        _print_headers(response.request.headers, b">")
        print(">", flush=True)
        _print_headers(response.headers, b"<")
    else:
        _print_bytes(response.body)


def fetch_one(settings, url, *, spider=None, no_redirect=False, on_response,
              process=None) -> bool:
    """Crawl one request for ``url`` and call ``on_response(response)`` with the response.

    The spider is ``spider`` when named, else the project spider whose domains cover the
    URL, else :class:`~crawlfw.utils.spider.DefaultSpider`; its own start requests are
    not used. Redirects are followed unless ``no_redirect``; any status reaches
    ``on_response`` (3xx too with ``no_redirect``). The crawl runs in ``process`` (a
    :class:`~crawlfw.crawler.CrawlerProcess`; default: a new one for ``settings``).

    Returns:
        True when ``on_response`` was called. False when nothing was downloaded: the
        reason (the download error, the request dropped and why) is then logged at
        ERROR and, when ERROR lines do not reach standard error (``--nolog``...),
        printed there in one line.

    Raises:
        UsageError: ``url`` is not an absolute URL.
        SystemExit: 1 when the spider is unknown or the crawl could not start.
    """
    if not is_url(url):
        raise UsageError(f"Invalid URL: {url!r} (an absolute URL is needed, e.g. "
                         "http://example.com/)")
    got = []
    errors = []

    def callback(response):
        got.append(response)
        on_response(response)

    def errback(failure):
        errors.append(failure.value)
        raise failure.value  # logged by the scraper as without an errback

    request = Request(url, callback=callback, errback=errback, dont_filter=True)
    if no_redirect:
        request.meta["handle_httpstatus_all"] = True
    else:
        # let the redirect middleware handle 3xx; every other status reaches the callback
        request.meta["handle_httpstatus_list"] = SequenceExclude(range(300, 400))

    from crawlfw.crawler import CrawlerProcess

    if process is None:
        process = CrawlerProcess(settings)
    if spider:
        spidercls = load_spider(process.spider_loader, spider)
    else:
        spidercls = spidercls_for_request(process.spider_loader, request, DefaultSpider)
    try:
        process.crawl(spidercls, start_requests=lambda: [request])
    except Exception as e:
        process.shutdown()
        fail(start_failure(e))
    process.start()
    if not got:
        _report_nothing_fetched(request, errors)
    return bool(got)


def _report_nothing_fetched(request, errors) -> None:
    """Say in one line why ``request`` got no response (``errors``: what its errback
    received)."""
    if not errors:
        report_failure(logger, f"Nothing was downloaded for {request}")
        return
    error = errors[-1]
    if isinstance(error, IgnoreRequest):  # dropped quietly by a middleware
        reason = str(error) or type(error).__name__
        report_failure(logger, f"Nothing was downloaded: {request} was dropped ({reason})")
        return
    # the scraper logged "Error downloading <request>: ..." at ERROR
    report_failure(logger, f"Error downloading {request}: {type(error).__name__}: {error}",
                   logged=True)


@argh.arg("url", help="the URL to download")
@argh.arg("--spider", metavar="SPIDER", help="use this spider")
@argh.arg("--headers", help="print response HTTP headers instead of body")
@argh.arg("--no-redirect", help="do not handle HTTP 3xx status codes and print response as-is")
@command(help="Fetch a URL using the crawlfw downloader")
def fetch(url, *, settings=None, spider=None, headers=False, no_redirect=False):
    """Print the body of ``url`` (or the headers with ``--headers``) on standard output.

    Exit status 1 when nothing was downloaded (the error is logged), 2 for a bad URL.
    """
    if not fetch_one(settings, url, spider=spider, no_redirect=no_redirect,
                     on_response=lambda response: print_response(response, headers)):
        sys.exit(1)


class Command(ScrapyCommand):
    """``crawlfw fetch [options] <url>`` (Scrapy 1.2's fetch command).

    Subclasses may override ``_print_response(response, opts)`` (``view`` does).
    """

    requires_project = False

    def syntax(self):
        return "[options] <url>"

    def short_desc(self):
        return "Fetch a URL using the crawlfw downloader"

    def long_desc(self):
        return ("Fetch a URL using the crawlfw downloader and print its content to stdout. "
                "You may want to use --nolog to disable logging")

    def add_options(self, parser):
        ScrapyCommand.add_options(self, parser)
        parser.add_option("--spider", dest="spider", help="use this spider")
        parser.add_option("--headers", dest="headers", action="store_true",
                          help="print response HTTP headers instead of body")
        parser.add_option("--no-redirect", dest="no_redirect", action="store_true",
                          default=False,
                          help="do not handle HTTP 3xx status codes and print response as-is")

    def _print_response(self, response, opts):
        print_response(response, headers=bool(getattr(opts, "headers", False)))

    def run(self, args, opts):
        if len(args) != 1 or not is_url(args[0]):
            raise UsageError()
        got = delegate(self, fetch_one, self.settings, args[0], spider=opts.spider,
                       no_redirect=opts.no_redirect,
                       on_response=lambda response: self._print_response(response, opts),
                       process=self.crawler_process)
        if got is False:
            self.exitcode = 1
