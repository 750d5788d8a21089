"""``crawlfw crawl <spider> [-a NAME=VALUE] [-o FILE] [-t FORMAT]``: run a project spider."""

import logging

import argh

from crawlfw.commands import (
    ScrapyCommand,
    command,
    feed_options,
    feed_output_args,
    get_spider_loader,
    load_spider,
    spider_arguments,
)
from crawlfw.commands._command import delegate
from crawlfw.commands.runspider import add_crawl_options, process_crawl_options, run_crawl
from crawlfw.exceptions import UsageError

logger = logging.getLogger(__name__)


@argh.arg("spider", help="the spider's name")
@argh.arg("-a", "--spider-arg", action="append", default=None, metavar="NAME=VALUE",
          help="set spider argument (may be repeated)")
@feed_output_args
@argh.arg("-t", "--output-format", metavar="FORMAT", help="format to use for dumping items with -o")
@argh.arg("--workers", type=int, metavar="N",
          help="run N worker processes sharing the frontier of FRONTIER_URL")
@command(requires_project=True, help="Run a spider")
def crawl(spider, *, settings=None, spider_arg=None, output=None, output_format=None,
          overwrite_output=None, workers=None):
    """Crawl with the project spider called ``spider`` until it finishes.

    Exit status 1 when the spider does not exist ("Spider not found: <name>") or the
    crawl could not start; 2 on a bad ``-a``/``-o``/``-t``.
    """
    spargs = spider_arguments(spider_arg)
    feed_options(settings, output, output_format, overwrite_output)
    if workers is None:
        from crawlfw.utils.log import configure_logging

        # a spider module skipped with SPIDER_LOADER_WARN_ONLY is a WARNING of the log
        # (once: the crawl's CrawlerProcess loads the spiders again)
        configure_logging(settings)
    spidercls = load_spider(get_spider_loader(settings), spider)
    if workers is not None:  # N processes of one shared crawl
        from crawlfw.commands._workers import run_workers

        return run_workers(settings, workers, ["crawl", spider], spargs, spidercls)
    return run_crawl(settings, spidercls, spargs, logger=logger)


class Command(ScrapyCommand):
    """``crawlfw crawl [options] <spider>`` (Scrapy 1.2's crawl command).

    ``process_options`` turns ``opts.spargs`` into a dict and sets the feed settings;
    ``run`` crawls the spider with :attr:`crawler_process` and waits for it.
    """

    requires_project = True

    def syntax(self):
        return "[options] <spider>"

    def short_desc(self):
        return "Run a spider"

    def add_options(self, parser):
        ScrapyCommand.add_options(self, parser)
        add_crawl_options(parser)

    def process_options(self, args, opts):
        ScrapyCommand.process_options(self, args, opts)
        process_crawl_options(self, opts)

    def run(self, args, opts):
        if len(args) < 1:
            raise UsageError()
        elif len(args) > 1:
            raise UsageError("running 'crawlfw crawl' with more than one spider is no longer "
                             "supported")
        delegate(self, self._crawl, args[0], opts.spargs)

    def _crawl(self, spname, spargs):
        spidercls = load_spider(self.crawler_process.spider_loader, spname)
        run_crawl(self.settings, spidercls, spargs, process=self.crawler_process,
                  logger=logger)
