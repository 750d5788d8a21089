"""``CrawlSpider`` and ``Rule``: follow links by rules (Scrapy 1.2's ``scrapy.spiders.crawl``).

A ``CrawlSpider`` answers every response it downloads with two things, in this order:
what the matching rule's callback returns (passed through :meth:`CrawlSpider.process_results`),
then, when the rule says *follow*, one request per link its rules extract. Each link of a
response is handled by the first rule whose link extractor returns it; the per-response
``seen`` set keeps later rules from requesting it again. Across responses the scheduler's
duplicates filter does the de-duplication.

Each rule request carries ``meta['rule']`` (the rule's index in ``spider.rules``) and
``meta['link_text']`` (the link's text); its callback is the spider's
``_response_downloaded``, which finds the rule again from ``meta['rule']``.

A rule callback (or ``parse_start_url``) may be ``async def``, with or without
``yield``, and ``await self.crawler.engine.download(request)``: the response's output is
then an async generator the Scraper steps without holding the spider's thread
(:meth:`CrawlSpider.parse_with_rules`). Plain callbacks take the plain path, as before.
"""

import copy
import inspect

from crawlfw.http import HtmlResponse, Request
from crawlfw.spiders import Spider
from crawlfw.utils.spider import iterate_spider_output

__all__ = ["CrawlSpider", "Rule"]


def identity(x):
    """Return ``x`` unchanged (the default ``Rule.process_request``)."""
    return x


class Rule:
    """How a ``CrawlSpider`` handles the links one link extractor finds.

    Args:
        link_extractor: an object with ``extract_links(response) -> list[Link]``
            (normally a ``crawlfw.linkextractors.LinkExtractor``); None means
            ``LinkExtractor()`` (every link; Scrapy 1.7's default).
        callback: called as ``callback(response, **cb_kwargs)`` for every response of a
            link this rule extracted; a callable or the name (``str``) of a spider method.
            Never use ``'parse'``: ``CrawlSpider`` uses ``parse`` itself.
        cb_kwargs: keyword arguments for ``callback`` (a dict; default ``{}``).
        follow: whether the responses of this rule's links are searched for more links;
            None (the default) means True when there is no ``callback``, else False.
        process_links: ``f(links) -> links`` applied to the list of links extracted from
            each response (to filter or rewrite them); a callable or a method name.
        process_request: ``f(request) -> request | None`` applied to each request this
            rule makes (None drops it); a callable or a method name. A function taking
            two positional arguments is called as ``f(request, response)`` (Scrapy 2.0's
            form), where ``response`` is the page the link was found in.
        errback: called with a ``Failure`` when one of this rule's requests fails; a
            callable or a method name (Scrapy 2.0's addition).

    Raises:
        TypeError: ``link_extractor`` has no ``extract_links`` method.
    """

    _async_callback = False  # the compiled callback is async def (CrawlSpider._compile_rules)

    def __init__(self, link_extractor=None, callback=None, cb_kwargs=None, follow=None,
                 process_links=None, process_request=identity, errback=None):
        if link_extractor is None:
            from crawlfw.linkextractors import LinkExtractor

            link_extractor = LinkExtractor()
        if not callable(getattr(link_extractor, "extract_links", None)):
            raise TypeError(
                "Rule link_extractor must have an extract_links(response) method, "
                f"got {link_extractor!r}"
            )
        self.link_extractor = link_extractor
        self.callback = callback
        self.cb_kwargs = cb_kwargs or {}
        self.process_links = process_links
        self.process_request = process_request if process_request is not None else identity
        self.errback = errback
        if follow is None:
            self.follow = not callback
        else:
            self.follow = follow

    def __repr__(self):
        return (
            f"Rule({self.link_extractor!r}, callback={self.callback!r}, "
            f"follow={self.follow!r})"
        )


class CrawlSpider(Spider):
    """A spider that follows links by :class:`Rule`\\ s.

    Class attributes:
        rules (Sequence[Rule]): the rules, in priority order: a link extracted by
            several rules is handled by the first of them only.

    The start URLs' responses go to :meth:`parse`, which calls :meth:`parse_start_url`
    and follows their links. Setting ``CRAWLSPIDER_FOLLOW_LINKS = False`` stops all link
    following (callbacks still run).

    Args:
        *a, **kw: as for :class:`crawlfw.spiders.Spider`.

    Raises:
        ValueError: a rule names a callback, ``process_links``, ``process_request`` or
            ``errback`` the spider has no attribute for.
    """

    rules = ()
    _follow_links = True
    _async_start = False  # parse_start_url is async def (set by _compile_rules)
    _plain_rules = False  # neither parse_with_rules nor _parse_response is overridden

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self._compile_rules()

    def parse(self, response, **kwargs):
        """Callback of the start requests: :meth:`parse_start_url` (given the request's
        ``cb_kwargs`` as keyword arguments, as in Scrapy 2), then follow links."""
        if self._plain_rules and not self._async_start:
            return _rule_output(self, response, self.parse_start_url, kwargs, True)
        results = self._parse_response(response, self.parse_start_url, cb_kwargs=kwargs,
                                       follow=True)
        if self._async_start and results.__class__ is _RuleResults:
            return results.__aiter__()  # async def parse_start_url: as a rule's (below)
        return results

    def parse_start_url(self, response, **kwargs):
        """Override to return items/requests for the start URLs' responses (default:
        none); ``kwargs`` are the start request's ``cb_kwargs``."""
        return []

    def process_results(self, response, results):
        """Override to post-process what a rule callback returned.

        Args:
            response: the response the callback ran on.
            results: an iterable of items and requests.

        Returns:
            An iterable of items and requests (default: ``results`` unchanged).
        """
        return results

    def _build_request(self, rule_index, link):
        request = Request(url=link.url, callback=self._response_downloaded,
                          errback=self._rules[rule_index].errback)
        request.meta.update(rule=rule_index, link_text=link.text)
        return request

    def _requests_to_follow(self, response):
        """Yield one request per link of ``response`` (HTML only) the rules extract."""
        if not isinstance(response, HtmlResponse):
            return
        seen = set()
        for index, rule in enumerate(self._rules):
            links = [link for link in rule.link_extractor.extract_links(response)
                     if link not in seen]
            if links and rule.process_links:
                links = rule.process_links(links)
            for link in links:
                seen.add(link)
                request = self._build_request(index, link)
                if rule._process_request_takes_response:
                    request = rule.process_request(request, response)
                else:
                    request = rule.process_request(request)
                if request is not None:
                    yield request

    def _response_downloaded(self, response, **cb_kwargs):
        rule = self._rules[response.meta["rule"]]
        if cb_kwargs:  # the request's (a process_request set them): Scrapy 2's merge
            cb_kwargs = {**rule.cb_kwargs, **cb_kwargs}
        else:
            cb_kwargs = rule.cb_kwargs
        if self._plain_rules and not rule._async_callback:
            # the usual case, as fast as before: no override to call, a plain generator
            return _rule_output(self, response, rule.callback, cb_kwargs, rule.follow)
        results = self._parse_response(response, rule.callback, cb_kwargs, rule.follow)
        if rule._async_callback and results.__class__ is _RuleResults:
            # an async def rule callback: the Scraper steps it, so it may await downloads
            return results.__aiter__()
        return results

    def _parse_response(self, response, callback, cb_kwargs, follow=True):
        # Scrapy 1.2's name (private): its overrides still run; it hands over to
        # parse_with_rules, Scrapy 2's public name, so that overrides of either work
        return self.parse_with_rules(response, callback, cb_kwargs, follow)

    def parse_with_rules(self, response, callback, cb_kwargs, follow=True):
        """What the spider yields for a response: ``callback(response, **cb_kwargs)``'s
        results passed through :meth:`process_results`, then, when ``follow`` (and
        ``CRAWLSPIDER_FOLLOW_LINKS``), the requests of the links the rules extract
        (Scrapy 2.12's ``CrawlSpider.parse_with_rules``). Override it to change how a
        rule's response is handled.

        Args:
            response: the response.
            callback: a callable or None (then only links are followed); it may return
                an iterable, a coroutine or an async generator.
            cb_kwargs: dict of keyword arguments for ``callback``.
            follow: whether to follow the links of ``response``.

        Returns:
            A :class:`_RuleResults`, iterated with ``for`` (Scrapy 1.2's
            ``_parse_response``; an ``async def`` callback is then run to completion on
            the spider's thread, where it cannot await ``engine.download``) or with
            ``async for`` (Scrapy 2.19's, an async generator: an ``async def``
            callback is awaited). An override written for Scrapy 2.19 (``async def
            parse_with_rules(...)`` iterating ``super().parse_with_rules(...)`` with
            ``async for``) works as it is; one written as a plain generator (``for``)
            too, its ``async def`` callbacks then not awaiting downloads.
        """
        return _RuleResults(self, response, callback, cb_kwargs, follow)

    def _compile_rules(self):
        def get_method(rule, what, method):
            if method is None or callable(method):
                return method
            if isinstance(method, str):
                found = getattr(self, method, None)
                if callable(found):
                    return found
                raise ValueError(
                    f"Rule {what} {method!r} of spider {self.name!r} is not a method of "
                    f"{type(self).__name__}"
                )
            raise TypeError(f"Rule {what} must be a callable or a method name, got {method!r}")

        self._rules = [copy.copy(rule) for rule in self.rules]
        self._async_start = _is_async(self.parse_start_url)
        cls = type(self)
        self._plain_rules = (cls.parse_with_rules is CrawlSpider.parse_with_rules
                             and cls._parse_response is CrawlSpider._parse_response)
        for rule in self._rules:
            rule.callback = get_method(rule, "callback", rule.callback)
            rule.process_links = get_method(rule, "process_links", rule.process_links)
            rule.process_request = get_method(rule, "process_request", rule.process_request)
            rule.errback = get_method(rule, "errback", rule.errback)
            rule._process_request_takes_response = _takes_two_args(rule.process_request)
            rule._async_callback = _is_async(rule.callback)

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        """Create the spider; reads ``CRAWLSPIDER_FOLLOW_LINKS`` (default True)."""
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider._follow_links = crawler.settings.getbool("CRAWLSPIDER_FOLLOW_LINKS", True)
        return spider

    def set_crawler(self, crawler):
        super().set_crawler(crawler)
        self._follow_links = crawler.settings.getbool("CRAWLSPIDER_FOLLOW_LINKS", True)


class _RuleResults:
    """The output of :meth:`CrawlSpider.parse_with_rules` for one response, to iterate
    once: with ``for`` (a plain generator: Scrapy 1.2's ``_parse_response``, the path of
    plain callbacks) or with ``async for`` (an async generator: Scrapy 2.19's
    ``parse_with_rules``, where an ``async def`` callback is awaited).

    Args:
        spider: the :class:`CrawlSpider`.
        response: the response.
        callback: the callable run on it, or None.
        cb_kwargs: its keyword arguments (dict).
        follow: whether the rules' links are followed.

    Iterating yields the callback's results through ``spider.process_results``, then
    the rules' requests. With ``async for`` an async generator callback's values are
    yielded as they come when ``process_results`` is not overridden; when it is, they are
    collected first (``process_results`` takes a plain iterable, as in Scrapy 2.19).
    """

    __slots__ = ("spider", "response", "callback", "cb_kwargs", "follow")

    def __init__(self, spider, response, callback, cb_kwargs, follow):
        self.spider = spider
        self.response = response
        self.callback = callback
        self.cb_kwargs = cb_kwargs
        self.follow = follow

    def __iter__(self):
        return _rule_output(self.spider, self.response, self.callback, self.cb_kwargs,
                            self.follow)

    async def __aiter__(self):
        spider, response, callback = self.spider, self.response, self.callback
        if callback:
            cb_res = callback(response, **self.cb_kwargs)
            if inspect.isawaitable(cb_res):
                cb_res = await cb_res
            if hasattr(cb_res, "__aiter__"):
                if type(spider).process_results is CrawlSpider.process_results:
                    async for value in cb_res:  # streamed: nothing to post-process
                        yield value
                    cb_res = ()
                else:
                    cb_res = [value async for value in cb_res]
            cb_res = spider.process_results(response, cb_res or ())
            for value in iterate_spider_output(cb_res):
                yield value
        if self.follow and spider._follow_links:
            for request in spider._requests_to_follow(response):
                yield request


def _rule_output(spider, response, callback, cb_kwargs, follow):
    """The plain generator of :class:`_RuleResults` (its arguments): what a plain
    callback returns through ``process_results``, then the rules' requests."""
    if callback:
        cb_res = callback(response, **cb_kwargs) or ()
        cb_res = spider.process_results(response, cb_res)
        yield from iterate_spider_output(cb_res)
    if follow and spider._follow_links:
        yield from spider._requests_to_follow(response)


def _is_async(func) -> bool:
    """True when calling ``func`` makes a coroutine or an async generator (``async
    def``, also behind ``functools.partial``)."""
    return inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func)


def _takes_two_args(func) -> bool:
    """True when ``func`` names at least two positional parameters."""
    if func is identity:
        return False
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for p in params if p.kind in positional) >= 2
