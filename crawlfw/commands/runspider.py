"""``crawlfw runspider <spider_file.py>``: run a self-contained spider without a project."""

import importlib.util
import os
import sys

import argh

from crawlfw.commands import command, feed_options, spider_arguments
from crawlfw.exceptions import UsageError
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
@argh.arg("-o", "--output", metavar="FILE",
          help="dump scraped items into FILE (use - for stdout)")
@argh.arg("-t", "--output-format", metavar="FORMAT", help="format to use for dumping items with -o")
@command(default_settings={"SPIDER_LOADER_WARN_ONLY": True},
         help="Run a self-contained spider (without creating a project)")
def runspider(spider_file, *, settings=None, spider_arg=None, output=None, output_format=None):
    """Run the spider defined in ``spider_file``; exits 1 if the crawl could not start."""
    if not os.path.exists(spider_file):
        raise UsageError(f"File not found: {spider_file}")
    try:
        module = _import_file(spider_file)
    except (ImportError, ValueError, SyntaxError) as e:
        raise UsageError(f"Unable to load {spider_file!r}: {e}") from e
    spclasses = list(iter_spider_classes(module))
    if not spclasses:
        raise UsageError(f"No spider found in file: {spider_file}")
    spargs = spider_arguments(spider_arg)
    feed_options(settings, output, output_format)
    return run_crawl(settings, spclasses.pop(), spargs)


def run_crawl(settings, spidercls, spargs) -> None:
    """Run one crawl in a CrawlerProcess; exit status 1 when it failed to start."""
    from crawlfw.crawler import CrawlerProcess

    process = CrawlerProcess(settings)
    try:
        process.crawl(spidercls, **spargs)
    except Exception as e:
        process.shutdown()
        import logging

        logging.getLogger(__name__).error("Crawl could not start: %s", e, exc_info=True)
        sys.exit(1)
    process.start()
