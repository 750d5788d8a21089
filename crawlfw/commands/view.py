"""``crawlfw view [--spider=SPIDER] [--no-redirect] <url>``: download a URL with the
crawlfw downloader and open it in a web browser, as crawlfw sees it.

The browser is Python's :mod:`webbrowser` choice (the ``BROWSER`` environment variable
selects one).
"""

import sys

import argh

from crawlfw.commands import command
from crawlfw.commands import fetch as _fetch
from crawlfw.commands.fetch import fetch_one
from crawlfw.utils.response import open_in_browser


@argh.arg("url", help="the URL to open")
@argh.arg("--spider", metavar="SPIDER", help="use this spider")
@argh.arg("--no-redirect", help="do not handle HTTP 3xx status codes and show response as-is")
@command(help="Open URL in browser, as seen by crawlfw")
def view(url, *, settings=None, spider=None, no_redirect=False):
    """Open the downloaded page in the browser (a temporary file, with a ``<base>`` tag
    so relative links work). Exit status 1 when nothing was downloaded."""
    if not fetch_one(settings, url, spider=spider, no_redirect=no_redirect,
                     on_response=open_in_browser):
        sys.exit(1)


class Command(_fetch.Command):
    """``crawlfw view [options] <url>`` (Scrapy 1.2's view command: fetch's, without
    ``--headers``, opening the response in a browser)."""

    def short_desc(self):
        return "Open URL in browser, as seen by crawlfw"

    def long_desc(self):
        return "Fetch a URL using the crawlfw downloader and show its contents in a browser"

    def add_options(self, parser):
        super().add_options(parser)
        parser.remove_option("--headers")

    def _print_response(self, response, opts):
        open_in_browser(response)
