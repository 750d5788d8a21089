"""``crawlfw parse [options] <url>``: fetch a URL with a project spider, run a callback on
it and print what the callback produced (items and requests), level by level.

Output (Scrapy 1.2's)::

    >>> STATUS DEPTH LEVEL 1 <<<
    # Scraped Items  ------------------------------------------------------------
    [{...}, ...]
    # Requests  -----------------------------------------------------------------
    [<GET http://...>, ...]

With ``-v`` one ``>>> DEPTH LEVEL: n <<<`` section per level. Requests produced at a
level below ``--depth`` are followed with their own callbacks.
"""

import inspect
import json
import logging
import sys

import argh
from w3lib.url import is_url

from crawlfw.commands import (
    ScrapyCommand,
    command,
    fail,
    feed_options,
    load_spider,
    spider_arguments,
)
from crawlfw.commands._command import delegate
from crawlfw.exceptions import UsageError
from crawlfw.http import Request
from crawlfw.item import ITEM_TYPES, BaseItem
from crawlfw.spiders import Spider
from crawlfw.utils import display
from crawlfw.utils.spider import iterate_spider_output, spidercls_for_request

logger = logging.getLogger(__name__)


class _Results:
    """Items and requests per depth level (1 = the URL's own response)."""

    def __init__(self):
        self.items = {}
        self.requests = {}
        self.first_response = None

    @property
    def max_level(self) -> int:
        levels = list(self.items) + list(self.requests)
        return max(levels) if levels else 0

    def add_items(self, lvl, new_items):
        self.items[lvl] = self.items.get(lvl, []) + new_items

    def add_requests(self, lvl, new_reqs):
        self.requests[lvl] = self.requests.get(lvl, []) + new_reqs

    def print_items(self, lvl=None, colour=True):
        if lvl is None:
            items = [item for lst in self.items.values() for item in lst]
        else:
            items = self.items.get(lvl, [])
        print("# Scraped Items ", "-" * 60)
        display.pprint([_item_dict(x) for x in items], colorize=colour)

    def print_requests(self, lvl=None, colour=True):
        if lvl is None:
            requests = self.requests[max(self.requests)] if self.requests else []
        else:
            requests = self.requests.get(lvl, [])
        print("# Requests ", "-" * 65)
        display.pprint(requests, colorize=colour)

    def print_results(self, *, verbose, noitems, nolinks, colour):
        if verbose:
            for level in range(1, self.max_level + 1):
                print(f"\n>>> DEPTH LEVEL: {level} <<<")
                if not noitems:
                    self.print_items(level, colour)
                if not nolinks:
                    self.print_requests(level, colour)
        else:
            print(f"\n>>> STATUS DEPTH LEVEL {self.max_level} <<<")
            if not noitems:
                self.print_items(colour=colour)
            if not nolinks:
                self.print_requests(colour=colour)


def _item_dict(item):
    """A dict of ``item``'s fields: ``dict(item)`` for dicts and Items, else
    ``ItemAdapter(item).asdict()`` (dataclass, attrs, pydantic items)."""
    if isinstance(item, (BaseItem, dict)):
        return dict(item)
    from itemadapter import ItemAdapter

    return ItemAdapter(item).asdict()


def _run_callback(response, cb, cb_kwargs=None):
    """``(items, requests)`` the callback ``cb`` produced for ``response``; for an
    ``async def`` callback, a coroutine of them (:func:`_collect_async`), which the
    Scraper runs so that the callback may await ``engine.download``."""
    result = cb(response, **(cb_kwargs or {}))
    if inspect.iscoroutine(result) or inspect.isasyncgen(result):
        return _collect_async(result)
    return _split(iterate_spider_output(result))


async def _collect_async(result):
    """``(items, requests)`` of a coroutine's result or an async generator's values."""
    if inspect.iscoroutine(result):
        result = await result
    if inspect.isasyncgen(result):
        result = [x async for x in result]
    return _split(iterate_spider_output(result))


def _split(output):
    items, requests = [], []
    for x in output:
        if isinstance(x, ITEM_TYPES):
            items.append(x)
        elif isinstance(x, Request):
            requests.append(x)
    return items, requests


def _callback_from_rules(spider, response):
    """The callback of the first CrawlSpider rule whose link extractor matches the URL."""
    if getattr(spider, "rules", None):
        for rule in spider.rules:
            if rule.link_extractor.matches(response.url) and rule.callback:
                return rule.callback
    else:
        logger.error("No CrawlSpider rules found in spider %(spider)r, please specify a "
                     "callback to use for parsing", {"spider": spider.name})
    return None


def _parsing_spidercls(spidercls, url, results, *, callback, rules, depth, pipelines,
                       meta=None, cb_kwargs=None):
    """A subclass of ``spidercls`` whose only start request is ``url`` (with ``meta``
    and ``cb_kwargs``), parsed by the recording callback below (on the spider runner's
    thread)."""

    def parse_callback(spider, response, **kwargs):
        if results.first_response is None:
            results.first_response = response
        cb = response.meta["_callback"]
        if not cb:
            if rules and results.first_response is response:
                cb = _callback_from_rules(spider, response)
                if not cb:
                    logger.error("Cannot find a rule that matches %(url)r in spider: %(spider)s",
                                 {"url": response.url, "spider": spider.name})
                    return None
            else:
                cb = "parse"
        if not callable(cb):
            cb_method = getattr(spider, cb, None)
            if callable(cb_method):
                cb = cb_method
            else:
                logger.error("Cannot find callback %(callback)r in spider: %(spider)s",
                             {"callback": cb, "spider": spider.name})
                return None
        level = response.meta["_depth"]
        produced = _run_callback(response, cb, kwargs)
        if inspect.iscoroutine(produced):  # an async def callback: run by the Scraper
            return _record_async(spider, produced, level)
        return record(spider, produced, level)

    async def _record_async(spider, produced, level):
        return record(spider, await produced, level)

    def record(spider, produced, level):
        """Note the ``(items, requests)`` a callback ``produced`` at depth ``level``;
        return the callback's output for the crawl (items for the pipelines, requests
        to follow, with this recording callback)."""
        items, requests = produced
        results.add_items(level, items)
        results.add_requests(level, requests)
        output = list(items) if pipelines else []  # the crawl's item pipelines process them
        if level < depth:
            for req in requests:
                req.meta["_depth"] = level + 1
                req.meta["_callback"] = req.callback
                req.callback = lambda r, _spider=spider, **kw: parse_callback(_spider, r, **kw)
            output.extend(requests)
        return output

    def start_requests(self):
        request = Request(url, callback=lambda r, **kw: parse_callback(self, r, **kw),
                          meta=meta, cb_kwargs=cb_kwargs)
        request.meta["_depth"] = 1
        request.meta["_callback"] = callback
        return [request]

    return type(spidercls.__name__, (spidercls,), {
        "start_requests": start_requests,
        "start": Spider.start,  # iterates start_requests: a spider's own start() must not win
        "__module__": spidercls.__module__,
        "__qualname__": spidercls.__qualname__,
    })


@argh.arg("url", help="the URL to parse")
@argh.arg("--spider", metavar="SPIDER", help="use this spider without looking for one")
@argh.arg("-a", "--spider-arg", action="append", default=None, metavar="NAME=VALUE",
          help="set spider argument (may be repeated)")
@argh.arg("--pipelines", help="process items through pipelines")
@argh.arg("-o", "--output", action="append", default=None, metavar="FILE",
          help="append scraped items to the end of FILE (use - for stdout; may be "
               "repeated: one feed each), to define format set a colon at the end of "
               "the output URI (i.e. -o FILE:FORMAT)")
@argh.arg("-O", "--overwrite-output", action="append", default=None, metavar="FILE",
          help="dump scraped items into FILE, overwriting any existing file (may be "
               "repeated: one feed each), to define format set a colon at the end of "
               "the output URI (i.e. -O FILE:FORMAT)")
@argh.arg("--nolinks", help="don't show links to follow (extracted requests)")
@argh.arg("--noitems", help="don't show scraped items")
@argh.arg("--nocolour", help="avoid using pygments to colorize the output")
@argh.arg("-r", "--rules", help="use CrawlSpider rules to discover the callback")
@argh.arg("-c", "--callback", metavar="CALLBACK",
          help="use this callback for parsing, instead looking for a callback")
@argh.arg("-d", "--depth", type=int, metavar="DEPTH",
          help="maximum depth for parsing requests (default: 1)")
@argh.arg("-v", "--verbose", help="print each depth level one by one")
@argh.arg("-m", "--meta", metavar="JSON",
          help="inject extra meta into the Request, e.g. -m '{\"foo\": \"bar\"}'")
@argh.arg("--cbkwargs", metavar="JSON",
          help="inject extra callback kwargs into the Request, e.g. --cbkwargs '{\"foo\": 1}'")
@command(requires_project=True, help="Parse URL (using its spider) and print the results")
def parse(url, *, settings=None, spider=None, spider_arg=None, pipelines=False, output=None,
          overwrite_output=None, nolinks=False, noitems=False, nocolour=False, rules=False,
          callback=None, depth=1, verbose=False, meta=None, cbkwargs=None):
    """Print the items and requests the spider's callback produces for ``url``.

    ``-o``/``-O`` (Scrapy 2.19's, repeatable) also write the items to feeds: the items
    then go through the crawl's item pipelines, as with ``--pipelines``.

    Exit status 1 when no spider handles the URL, the named spider does not exist or
    nothing was downloaded; 2 for a bad URL, ``-a`` value, or ``--meta``/``--cbkwargs``
    that is not a JSON object.
    """
    if not is_url(url):
        raise UsageError(f"Invalid URL: {url!r} (an absolute URL is needed)")
    feed_options(settings, output, None, overwrite_output)
    run_parse(settings, url, spider=spider, spargs=spider_arguments(spider_arg),
              pipelines=pipelines or bool(output or overwrite_output), nolinks=nolinks,
              noitems=noitems, nocolour=nocolour, rules=rules, callback=callback,
              depth=depth, verbose=verbose,
              meta=_json_object_option("--meta", meta),
              cb_kwargs=_json_object_option("--cbkwargs", cbkwargs))


def _json_object_option(option, text):
    """``--meta``/``--cbkwargs``: a JSON object (dict), or None when not given.

    Raises:
        UsageError: ``text`` is not a JSON object.
    """
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as e:
        raise UsageError(f"Invalid {option} value, pass a valid JSON object: {e}") from None
    if not isinstance(value, dict):
        raise UsageError(f"Invalid {option} value, pass a valid JSON object, got {text!r}")
    return value


def run_parse(settings, url, *, spider=None, spargs=None, pipelines=False, nolinks=False,
              noitems=False, nocolour=False, rules=False, callback=None, depth=1,
              verbose=False, process=None, meta=None, cb_kwargs=None) -> None:
    """Crawl ``url`` with its spider and print what the callback produced, level by level.

    Args:
        settings: the :class:`~crawlfw.settings.Settings`.
        url: an absolute URL (str).
        spider: the spider's name (default: the project spider that handles ``url``).
        spargs: spider arguments (dict of str).
        meta: extra ``meta`` of the first request (``--meta``), or None.
        cb_kwargs: keyword arguments of the first callback (``--cbkwargs``), or None.
        process: the :class:`~crawlfw.crawler.CrawlerProcess` to crawl with (default: a
            new one for ``settings``).
        Other arguments: the ``parse`` command's options of the same names.

    Raises:
        SystemExit: 1 when no spider handles the URL, the named spider does not exist or
            nothing was downloaded.
    """
    from crawlfw.crawler import CrawlerProcess

    spargs = spargs or {}
    if process is None:
        process = CrawlerProcess(settings)
    loader = process.spider_loader
    if spider:
        spidercls = load_spider(loader, spider)
    else:
        spidercls = spidercls_for_request(loader, Request(url))
        if spidercls is None:
            process.shutdown()
            fail(f"Unable to find spider for: {url}")
    if depth <= 0:
        return
    results = _Results()
    parsing_cls = _parsing_spidercls(spidercls, url, results, callback=callback, rules=rules,
                                     depth=depth, pipelines=pipelines, meta=meta,
                                     cb_kwargs=cb_kwargs)
    try:
        process.crawl(parsing_cls, **spargs)
    except Exception as e:
        process.shutdown()
        fail(f"Crawl could not start: {type(e).__name__}: {e}")
    process.start()
    if results.first_response is None:
        logger.error("No response downloaded for: %(url)s", {"url": url})
    results.print_results(verbose=verbose, noitems=noitems, nolinks=nolinks,
                          colour=not nocolour)
    sys.stdout.flush()
    if results.first_response is None:
        sys.exit(1)


class Command(ScrapyCommand):
    """``crawlfw parse [options] <url>`` (Scrapy 1.2's parse command)."""

    requires_project = True

    def syntax(self):
        return "[options] <url>"

    def short_desc(self):
        return "Parse URL (using its spider) and print the results"

    def add_options(self, parser):
        ScrapyCommand.add_options(self, parser)
        parser.add_option("--spider", dest="spider", default=None,
                          help="use this spider without looking for one")
        parser.add_option("-a", dest="spargs", action="append", default=[],
                          metavar="NAME=VALUE", help="set spider argument (may be repeated)")
        parser.add_option("--pipelines", action="store_true",
                          help="process items through pipelines")
        parser.add_option("-o", "--output", action="append", default=[], metavar="FILE",
                          help="append scraped items to the end of FILE (use - for "
                               "stdout; may be repeated: one feed each)")
        parser.add_option("-O", "--overwrite-output", action="append", default=[],
                          metavar="FILE",
                          help="dump scraped items into FILE, overwriting any existing "
                               "file (may be repeated: one feed each)")
        parser.add_option("--nolinks", dest="nolinks", action="store_true",
                          help="don't show links to follow (extracted requests)")
        parser.add_option("--noitems", dest="noitems", action="store_true",
                          help="don't show scraped items")
        parser.add_option("--nocolour", dest="nocolour", action="store_true",
                          help="avoid using pygments to colorize the output")
        parser.add_option("-r", "--rules", dest="rules", action="store_true",
                          help="use CrawlSpider rules to discover the callback")
        parser.add_option("-c", "--callback", dest="callback",
                          help="use this callback for parsing, instead looking for a callback")
        parser.add_option("-d", "--depth", dest="depth", type="int", default=1,
                          help="maximum depth for parsing requests [default: %default]")
        parser.add_option("-v", "--verbose", dest="verbose", action="store_true",
                          help="print each depth level one by one")
        parser.add_option("-m", "--meta", dest="meta",
                          help="inject extra meta into the Request (a JSON object)")
        parser.add_option("--cbkwargs", dest="cbkwargs",
                          help="inject extra callback kwargs into the Request (a JSON object)")

    def process_options(self, args, opts):
        ScrapyCommand.process_options(self, args, opts)
        try:
            opts.spargs = spider_arguments(opts.spargs)
            opts.meta = _json_object_option("--meta", opts.meta)
            opts.cbkwargs = _json_object_option("--cbkwargs", opts.cbkwargs)
            feed_options(self.settings, opts.output, None, opts.overwrite_output)
        except UsageError as e:
            raise UsageError(str(e), print_help=False) from None

    def run(self, args, opts):
        if not len(args) == 1 or not is_url(args[0]):
            raise UsageError()
        delegate(self, run_parse, self.settings, args[0], spider=opts.spider,
                 spargs=opts.spargs,
                 pipelines=opts.pipelines or bool(opts.output or opts.overwrite_output),
                 nolinks=opts.nolinks,
                 noitems=opts.noitems, nocolour=opts.nocolour, rules=opts.rules,
                 callback=opts.callback, depth=opts.depth, verbose=opts.verbose,
                 process=self.crawler_process, meta=opts.meta, cb_kwargs=opts.cbkwargs)
