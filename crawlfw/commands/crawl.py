"""``crawlfw crawl <spider> [-a NAME=VALUE] [-o FILE] [-t FORMAT]``: run a project spider."""

import argh

from crawlfw.commands import (
    command,
    feed_options,
    get_spider_loader,
    load_spider,
    spider_arguments,
)
from crawlfw.commands.runspider import run_crawl


@argh.arg("spider", help="the spider's name")
@argh.arg("-a", "--spider-arg", action="append", default=None, metavar="NAME=VALUE",
          help="set spider argument (may be repeated)")
@argh.arg("-o", "--output", metavar="FILE",
          help="dump scraped items into FILE (use - for stdout)")
@argh.arg("-t", "--output-format", metavar="FORMAT", help="format to use for dumping items with -o")
@command(requires_project=True, help="Run a spider")
def crawl(spider, *, settings=None, spider_arg=None, output=None, output_format=None):
    """Crawl with the project spider called ``spider`` until it finishes.

    Exit status 1 when the spider does not exist ("Spider not found: <name>") or the
    crawl could not start; 2 on a bad ``-a``/``-o``/``-t``.
    """
    spargs = spider_arguments(spider_arg)
    feed_options(settings, output, output_format)
    spidercls = load_spider(get_spider_loader(settings), spider)
    return run_crawl(settings, spidercls, spargs)
