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
    feed_output_args,
    spider_arguments,
    start_failure,
)
from crawlfw.commands._command import delegate
from crawlfw.exceptions import UsageError
from crawlfw.http import Request
from crawlfw.item import ITEM_TYPES, BaseItem
from crawlfw.spiders import Spider
from crawlfw.utils import display
from crawlfw.utils.spider import iterate_spider_output, spidercls_for_request

logger = logging.getLogger(__name__)


def _item_dict(item):
    """A dict of ``item``'s fields: ``dict(item)`` for dicts and Items, else
    ``ItemAdapter(item).asdict()`` (dataclass, attrs, pydantic items)."""
    if isinstance(item, (BaseItem, dict)):
        return dict(item)
    from itemadapter import ItemAdapter

    return ItemAdapter(item).asdict()


def _parsing_spidercls(spidercls, url, cmd, opts):
    """A subclass of ``spidercls`` whose only start request is ``url``, made by
    ``cmd.prepare_request`` (with ``opts.meta`` and ``opts.cbkwargs``)."""

    def start_requests(self):
        return [cmd.prepare_request(self, Request(url), opts)]

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
@feed_output_args
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
              verbose=False, process=None, meta=None, cb_kwargs=None,
              parse_command=None) -> None:
    """Crawl ``url`` with its spider and print what the callback produced, level by level.

    The work is done by the methods of ``parse_command``, a :class:`Command` (Scrapy 2's members:
    ``set_spidercls``, ``start_parsing``, ``prepare_request``, ``run_callback``,
    ``scraped_data``, ``print_results``...), so a project's subclass of it changes
    what it overrides.

    Args:
        settings: the :class:`~crawlfw.settings.Settings`.
        url: an absolute URL (str).
        spider: the spider's name (default: the project spider that handles ``url``).
        spargs: spider arguments (dict of str).
        meta: extra ``meta`` of the first request (``--meta``), or None.
        cb_kwargs: keyword arguments of the first callback (``--cbkwargs``), or None.
        process: the :class:`~crawlfw.crawler.CrawlerProcess` to crawl with (default: a
            new one for ``settings``).
        parse_command: the :class:`Command` whose methods run the parse (default: a
            new one).
        Other arguments: the ``parse`` command's options of the same names.

    Raises:
        SystemExit: 1 when no spider handles the URL, the named spider does not exist or
            nothing was downloaded.
    """
    import argparse

    from crawlfw.crawler import CrawlerProcess

    opts = argparse.Namespace(spider=spider, spargs=spargs or {}, pipelines=pipelines,
                              nolinks=nolinks, noitems=noitems, nocolour=nocolour,
                              rules=rules, callback=callback, depth=depth, verbose=verbose,
                              meta=meta, cbkwargs=cb_kwargs, output=None)
    cmd = parse_command
    if cmd is None:
        cmd = Command()
        cmd.settings = settings
    if process is None:
        process = CrawlerProcess(settings)
    cmd.crawler_process = process
    cmd.set_spidercls(url, opts)
    if cmd.spidercls is None:
        process.shutdown()
        fail(cmd._spidercls_error or f"Unable to find spider for: {url}")
    if depth <= 0:
        return
    cmd.start_parsing(url, opts)
    cmd.print_results(opts)
    sys.stdout.flush()
    if cmd.first_response is None:
        sys.exit(1)


class Command(ScrapyCommand):
    """``crawlfw parse [options] <url>`` (Scrapy 1.2's parse command), with Scrapy 2's
    members: the results per depth level (:attr:`items`, :attr:`requests`,
    :attr:`first_response`, :attr:`max_level`), and the steps ``crawlfw parse`` runs
    through (:meth:`set_spidercls`, :meth:`start_parsing`, :meth:`prepare_request`,
    :meth:`run_callback`, :meth:`scraped_data`, :meth:`print_results`...): a project's
    subclass overriding one changes that step. ``opts`` is the parsed options (an
    ``optparse``/``argparse`` namespace with the option names as attributes).

    Attributes:
        items (dict[int, list]): the items scraped, per depth level (1: the URL's).
        requests (dict[int, list[Request]]): the requests made, per depth level.
        first_response: the URL's response, once downloaded (else None).
        spidercls: the spider class used (:meth:`set_spidercls`).
        spider: the running spider (set by the first :meth:`prepare_request`).
    """

    requires_project = True
    spider = None
    spidercls = None
    first_response = None
    items: dict = {}  # (per instance: __init__)
    requests: dict = {}

    def __init__(self):
        super().__init__()
        self.items = {}
        self.requests = {}
        self._spidercls_error = None
        self.pcrawler = None

    # --- results ----------------------------------------------------------------------

    @property
    def max_level(self) -> int:
        """The deepest level with items or requests (0: none)."""
        levels = [*self.items, *self.requests]
        return max(levels) if levels else 0

    def add_items(self, lvl, new_items):
        """Record ``new_items`` (list) at depth level ``lvl`` (int)."""
        self.items[lvl] = self.items.get(lvl, []) + new_items

    def add_requests(self, lvl, new_reqs):
        """Record ``new_reqs`` (list of Request) at depth level ``lvl`` (int)."""
        self.requests[lvl] = self.requests.get(lvl, []) + new_reqs

    def print_items(self, lvl=None, colour=True):
        """Print the items of level ``lvl`` (None: of every level)."""
        if lvl is None:
            items = [item for lst in self.items.values() for item in lst]
        else:
            items = self.items.get(lvl, [])
        print("# Scraped Items ", "-" * 60)
        display.pprint([_item_dict(x) for x in items], colorize=colour)

    def print_requests(self, lvl=None, colour=True):
        """Print the requests of level ``lvl`` (None: of the deepest level)."""
        if lvl is None:
            requests = self.requests[max(self.requests)] if self.requests else []
        else:
            requests = self.requests.get(lvl, [])
        print("# Requests ", "-" * 65)
        display.pprint(requests, colorize=colour)

    def print_results(self, opts):
        """Print the results as ``opts`` say (``verbose``, ``noitems``, ``nolinks``,
        ``nocolour``)."""
        colour = not opts.nocolour
        if opts.verbose:
            for level in range(1, self.max_level + 1):
                print(f"\n>>> DEPTH LEVEL: {level} <<<")
                if not opts.noitems:
                    self.print_items(level, colour)
                if not opts.nolinks:
                    self.print_requests(level, colour)
        else:
            print(f"\n>>> STATUS DEPTH LEVEL {self.max_level} <<<")
            if not opts.noitems:
                self.print_items(colour=colour)
            if not opts.nolinks:
                self.print_requests(colour=colour)

    # --- running a callback -------------------------------------------------------------

    def handle_exception(self, _failure):
        """Log an error raised while iterating a callback's async output (Scrapy's
        message)."""
        from crawlfw.utils.log import failure_to_exc_info

        logger.error("An error is caught while iterating the async iterable",
                     exc_info=failure_to_exc_info(_failure))

    def iterate_spider_output(self, result):
        """Returns: a callback's ``result`` as an iterable (a coroutine is run, an async
        generator stepped: :func:`crawlfw.utils.spider.iterate_spider_output`)."""
        return iterate_spider_output(result)

    def run_callback(self, response, callback, cb_kwargs=None):
        """Call ``callback(response, **cb_kwargs)``.

        Returns:
            list: its output (items and requests), in order; for an ``async def``
            callback, a coroutine of that list, which the Scraper runs so that the
            callback may await ``engine.download``. Scrapy 2 returns a Deferred of it;
            the parse runs on the spider runner's thread here.
        """
        result = callback(response, **(cb_kwargs or {}))
        if inspect.iscoroutine(result) or inspect.isasyncgen(result):
            return self._collect_async(result)
        return list(self.iterate_spider_output(result))

    async def _collect_async(self, result):
        """The list of a coroutine's result or of an async generator's values."""
        if inspect.iscoroutine(result):
            result = await result
        if inspect.isasyncgen(result):
            return [x async for x in result]
        return list(self.iterate_spider_output(result))

    def get_callback_from_rules(self, spider, response):
        """The callback of the first ``CrawlSpider`` rule whose link extractor matches
        the response's URL and that has a callback (Scrapy 1.2's rule), or None (an
        ERROR is logged when the spider has no rules)."""
        if getattr(spider, "rules", None):
            for rule in spider.rules:
                if rule.link_extractor.matches(response.url) and rule.callback:
                    return rule.callback
        else:
            logger.error("No CrawlSpider rules found in spider %(spider)r, please specify a "
                         "callback to use for parsing", {"spider": spider.name})
        return None

    def _get_callback(self, spider, opts, response):
        """The callback for ``response``; None (an ERROR logged) when there is none."""
        cb = response.meta["_callback"]
        if not cb:
            if opts.callback:
                cb = opts.callback
            elif opts.rules and self.first_response is response:
                cb = self.get_callback_from_rules(spider, response)
                if not cb:
                    logger.error("Cannot find a rule that matches %(url)r in spider: %(spider)s",
                                 {"url": response.url, "spider": spider.name})
                    return None
            else:
                cb = "parse"
        if not callable(cb):
            cb_method = getattr(spider, cb, None)
            if not callable(cb_method):
                logger.error("Cannot find callback %(callback)r in spider: %(spider)s",
                             {"callback": cb, "spider": spider.name})
                return None
            cb = cb_method
        return cb

    def prepare_request(self, spider, request, opts):
        """Make ``request`` the parse's: ``opts.meta`` and ``opts.cbkwargs`` added, depth
        1, and a callback that records what the real callback (``-c``, ``--rules``, the
        request's, else ``parse``) produces (:meth:`run_callback`,
        :meth:`scraped_data`).

        Returns:
            The request.
        """
        self.spider = spider

        def callback(response, **cb_kwargs):
            if self.first_response is None:
                self.first_response = response
            cb = self._get_callback(spider, opts, response)
            if cb is None:
                return None
            depth = response.meta["_depth"]
            output = self.run_callback(response, cb, cb_kwargs)
            if inspect.iscoroutine(output):  # an async def callback: run by the Scraper
                return record_async(output, depth)
            return record(output, depth)

        def record(output, depth):
            items = [x for x in output if isinstance(x, ITEM_TYPES)]
            requests = [x for x in output if isinstance(x, Request)]
            return self.scraped_data((items, requests, opts, depth, spider, callback))

        async def record_async(output, depth):
            return record(await output, depth)

        if opts.meta:
            request.meta.update(opts.meta)
        if opts.cbkwargs:
            request.cb_kwargs.update(opts.cbkwargs)
        request.meta["_depth"] = 1
        request.meta["_callback"] = request.callback
        request.callback = callback
        return request

    def scraped_data(self, args):
        """Record one callback's output and return what goes on in the crawl.

        Args:
            args: ``(items, requests, opts, depth, spider, callback)`` (Scrapy 2's
                tuple): the output, the options, its depth level, the spider and the
                recording callback for the requests followed.

        Returns:
            list: the items when ``opts.pipelines`` (the crawl's item pipelines process
            them), and, below ``opts.depth``, the requests, given the recording callback.
        """
        items, requests, opts, depth, spider, callback = args
        self.add_items(depth, items)
        self.add_requests(depth, requests)
        output = list(items) if opts.pipelines or getattr(opts, "output", None) else []
        if depth < opts.depth:
            for req in requests:
                req.meta["_depth"] = depth + 1
                req.meta["_callback"] = req.callback
                req.callback = callback
            output.extend(requests)
        return output

    # --- the command's steps ------------------------------------------------------------

    def set_spidercls(self, url, opts):
        """Set :attr:`spidercls`: the spider ``opts.spider`` names, else the project
        spider that handles ``url``; None when there is none (the reason is logged at
        ERROR, and the command exits with status 1)."""
        loader = self.crawler_process.spider_loader
        self.spidercls = None
        if opts.spider:
            try:
                self.spidercls = loader.load(opts.spider)
            except KeyError:
                self._spidercls_error = f"Spider not found: {opts.spider}"
        else:
            self.spidercls = spidercls_for_request(loader, Request(url))
            if self.spidercls is None:
                self._spidercls_error = f"Unable to find spider for: {url}"

    def start_parsing(self, url, opts):
        """Crawl ``url`` with a subclass of :attr:`spidercls` whose only start request is
        :meth:`prepare_request`'s, until the crawl ends (``opts.spargs`` go to the
        spider). Exit status 1 when the crawl could not start."""
        self.pcrawler = self.crawler_process.create_crawler(
            _parsing_spidercls(self.spidercls, url, self, opts))
        try:
            self.crawler_process.crawl(self.pcrawler, **(opts.spargs or {}))
        except Exception as e:
            self.crawler_process.shutdown()
            fail(start_failure(e))
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
        if self.first_response is None:
            logger.error("No response downloaded for: %(url)s", {"url": url})

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
        except UsageError as e:
            raise UsageError(str(e), print_help=False) from None
        self.process_request_meta(opts)
        self.process_request_cb_kwargs(opts)
        try:
            feed_options(self.settings, opts.output, None, opts.overwrite_output)
        except UsageError as e:
            raise UsageError(str(e), print_help=False) from None

    def process_request_meta(self, opts):
        """Parse ``opts.meta`` (``-m``/``--meta``) as a JSON object, in place.

        Raises:
            UsageError: it is not a JSON object.
        """
        try:
            opts.meta = _json_object_option("--meta", opts.meta)
        except UsageError as e:
            raise UsageError(str(e), print_help=False) from None

    def process_request_cb_kwargs(self, opts):
        """Parse ``opts.cbkwargs`` (``--cbkwargs``) as a JSON object, in place.

        Raises:
            UsageError: it is not a JSON object.
        """
        try:
            opts.cbkwargs = _json_object_option("--cbkwargs", opts.cbkwargs)
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
                 process=self.crawler_process, meta=opts.meta, cb_kwargs=opts.cbkwargs,
                 parse_command=self)
