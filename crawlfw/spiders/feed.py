"""Spiders for XML and CSV feeds (Scrapy 1.2's ``scrapy.spiders.feed``).

Both spiders' ``parse`` callback runs :meth:`adapt_response` on the response, cuts it into
nodes or rows, calls ``parse_node``/``parse_row`` on each, and passes each call's
results through :meth:`process_results`.

``parse_node``/``parse_row`` may be ``async def`` (with or without ``yield``; beyond
Scrapy 2.19, whose feed spiders do not await them) and ``await
self.crawler.engine.download(request)``: ``parse`` then returns an async generator
(:func:`_parse_async`) the Scraper steps without holding the spider's thread, one node
or row after the other, unless ``parse_nodes``/``parse_rows`` is overridden (a plain
override is iterated as it is: its coroutines run to completion on the spider's thread,
where they cannot await a download).
"""

import inspect

from crawlfw.exceptions import NotConfigured, NotSupported
from crawlfw.selector import Selector
from crawlfw.spiders import Spider
from crawlfw.utils.iterators import csviter, xmliter
from crawlfw.utils.spider import iterate_spider_output

__all__ = ["XMLFeedSpider", "CSVFeedSpider"]


class XMLFeedSpider(Spider):
    """A spider that calls :meth:`parse_node` for every ``<itertag>`` node of a feed.

    Class attributes:
        iterator (str): how nodes are found: ``'iternodes'`` (default; the regex-based
            :func:`crawlfw.utils.iterators.xmliter`: fast, one node parsed at a time),
            ``'xml'`` (the whole document parsed as XML, nodes selected with
            ``//itertag``) or ``'html'`` (the same with the HTML parser).
        itertag (str): the node name to iterate (default ``'item'``, as in RSS 2.0);
            may have a prefix (``'atom:entry'``) registered in ``namespaces``.
        namespaces (Sequence[tuple[str, str]]): ``(prefix, uri)`` pairs registered on
            every node's selector.
    """

    iterator = "iternodes"
    itertag = "item"
    namespaces = ()

    def process_results(self, response, results):
        """Override to post-process the results of each ``parse_node`` call.

        Args:
            response: the feed response.
            results: an iterable of items and requests.

        Returns:
            An iterable of items and requests (default: ``results`` unchanged).
        """
        return results

    def adapt_response(self, response):
        """Override to change the response (e.g. fix its body) before it is parsed.

        Returns:
            A response (default: ``response`` unchanged).
        """
        return response

    def parse_node(self, response, selector):
        """Override: return items/requests for one node.

        Args:
            response: the feed response (after :meth:`adapt_response`).
            selector: a ``Selector`` on the node.

        Raises:
            NotImplementedError: not overridden (and no ``parse_item`` either, the
                pre-1.0 name, which is called when present).
        """
        if hasattr(self, "parse_item"):  # backward compatibility
            return self.parse_item(response, selector)
        raise NotImplementedError(f"{type(self).__name__}.parse_node is not defined")

    def parse_nodes(self, response, nodes):
        """Call :meth:`parse_node` on each node and yield what :meth:`process_results`
        makes of each result."""
        for selector in nodes:
            ret = iterate_spider_output(self.parse_node(response, selector))
            yield from self.process_results(response, ret)

    def parse(self, response):
        """The feed's callback: adapt the response, find the nodes, parse them.

        Raises:
            NotConfigured: the spider has no ``parse_node`` method.
            NotSupported: ``iterator`` is not ``'iternodes'``, ``'xml'`` or ``'html'``.
        """
        if not hasattr(self, "parse_node"):
            raise NotConfigured("You must define parse_node method in order to scrape this XML feed")
        response = self.adapt_response(response)
        if self.iterator == "iternodes":
            nodes = self._iternodes(response)
        elif self.iterator in ("xml", "html"):
            selector = Selector(response, type=self.iterator)
            self._register_namespaces(selector)
            nodes = selector.xpath(f"//{self.itertag}")
        else:
            raise NotSupported(
                f"Unsupported node iterator {self.iterator!r} "
                "(expected 'iternodes', 'xml' or 'html')"
            )
        if _is_async(self.parse_node) and type(self).parse_nodes is XMLFeedSpider.parse_nodes:
            return _parse_async(self, response, self.parse_node, nodes)
        return self.parse_nodes(response, nodes)

    def _iternodes(self, response):
        for node in xmliter(response, self.itertag):
            self._register_namespaces(node)
            yield node

    def _register_namespaces(self, selector):
        for prefix, uri in self.namespaces:
            selector.register_namespace(prefix, uri)


class CSVFeedSpider(Spider):
    """A spider that calls :meth:`parse_row` for every row of a CSV feed.

    Class attributes:
        delimiter (str | None): the field separator; None means ``','``.
        quotechar (str | None): the quote character; None means ``'"'``.
        headers (Sequence[str] | None): column names; None means the first row.
    """

    delimiter = None
    quotechar = None
    headers = None

    def process_results(self, response, results):
        """Override to post-process the results of each ``parse_row`` call.

        Returns:
            An iterable of items and requests (default: ``results`` unchanged).
        """
        return results

    def adapt_response(self, response):
        """Override to change the response before it is parsed (default: unchanged)."""
        return response

    def parse_row(self, response, row):
        """Override: return items/requests for one row (a ``{header: value}`` dict).

        Raises:
            NotImplementedError: not overridden.
        """
        raise NotImplementedError(f"{type(self).__name__}.parse_row is not defined")

    def parse_rows(self, response):
        """Call :meth:`parse_row` on each row of ``response`` (see
        :func:`crawlfw.utils.iterators.csviter`) and yield what :meth:`process_results`
        makes of each result."""
        for row in csviter(response, self.delimiter, self.headers, quotechar=self.quotechar):
            ret = iterate_spider_output(self.parse_row(response, row))
            yield from self.process_results(response, ret)

    def parse(self, response):
        """The feed's callback: adapt the response, then :meth:`parse_rows`.

        Raises:
            NotConfigured: the spider has no ``parse_row`` method.
        """
        if not hasattr(self, "parse_row"):
            raise NotConfigured("You must define parse_row method in order to scrape this CSV feed")
        response = self.adapt_response(response)
        if _is_async(self.parse_row) and type(self).parse_rows is CSVFeedSpider.parse_rows:
            rows = csviter(response, self.delimiter, self.headers, quotechar=self.quotechar)
            return _parse_async(self, response, self.parse_row, rows)
        return self.parse_rows(response)


def _is_async(method) -> bool:
    """True when calling ``method`` makes a coroutine or an async generator."""
    return inspect.iscoroutinefunction(method) or inspect.isasyncgenfunction(method)


async def _parse_async(spider, response, parse_one, parts):
    """``parse_nodes``/``parse_rows`` for an ``async def`` ``parse_one`` (``parse_node``
    or ``parse_row``): each part's output, awaited (an async generator's collected, as
    :meth:`~XMLFeedSpider.process_results` takes a plain iterable), through
    ``spider.process_results``.

    Args:
        spider: the feed spider.
        response: the feed response (after ``adapt_response``).
        parse_one: ``parse_one(response, part)``, a coroutine function or an async
            generator function.
        parts: the node selectors or row dicts, iterated lazily.

    Yields:
        The items and requests, part after part.
    """
    for part in parts:
        result = parse_one(response, part)
        if inspect.isawaitable(result):
            result = await result
        if hasattr(result, "__aiter__"):
            result = [value async for value in result]
        for value in spider.process_results(response, iterate_spider_output(result)):
            yield value
