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

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self._compile_rules()

    def parse(self, response, **kwargs):
        """Callback of the start requests: :meth:`parse_start_url` (given the request's
        ``cb_kwargs`` as keyword arguments, as in Scrapy 2), then follow links."""
        return self._parse_response(response, self.parse_start_url, cb_kwargs=kwargs, follow=True)

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

    def _response_downloaded(self, response):
        rule = self._rules[response.meta["rule"]]
        return self._parse_response(response, rule.callback, rule.cb_kwargs, rule.follow)

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
                an iterable, a coroutine or an async generator (run to completion here).
            cb_kwargs: dict of keyword arguments for ``callback``.
            follow: whether to follow the links of ``response``.

        Returns:
            A generator of items and requests. Scrapy's is an async generator; this
            one is a plain one, so an override iterates ``super().parse_with_rules(...)``
            with ``for``, not ``async for``.
        """
        if callback:
            cb_res = callback(response, **cb_kwargs) or ()
            cb_res = self.process_results(response, cb_res)
            yield from iterate_spider_output(cb_res)
        if follow and self._follow_links:
            yield from self._requests_to_follow(response)

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
        for rule in self._rules:
            rule.callback = get_method(rule, "callback", rule.callback)
            rule.process_links = get_method(rule, "process_links", rule.process_links)
            rule.process_request = get_method(rule, "process_request", rule.process_request)
            rule.errback = get_method(rule, "errback", rule.errback)
            rule._process_request_takes_response = _takes_two_args(rule.process_request)

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        """Create the spider; reads ``CRAWLSPIDER_FOLLOW_LINKS`` (default True)."""
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider._follow_links = crawler.settings.getbool("CRAWLSPIDER_FOLLOW_LINKS", True)
        return spider

    def set_crawler(self, crawler):
        super().set_crawler(crawler)
        self._follow_links = crawler.settings.getbool("CRAWLSPIDER_FOLLOW_LINKS", True)


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
