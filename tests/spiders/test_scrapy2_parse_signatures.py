"""Scrapy 2's callback signatures (issue 29): ``Spider.parse(response, **kwargs)``,
``CrawlSpider.parse_start_url(response, **kwargs)`` getting the start request's
``cb_kwargs``, and ``CrawlSpider.parse_with_rules``, which rule responses go through
(overriding it, or Scrapy 1.2's private ``_parse_response``, changes what they yield)."""

import pytest

from crawlfw.http import HtmlResponse, Request
from crawlfw.linkextractors import LinkExtractor
from crawlfw.spiders import CrawlSpider, Rule, Spider

URL = "http://example.com/"
PAGE = b'<html><body><a href="/item/1">one</a><a href="/other">x</a></body></html>'


def _response(url=URL, meta=None, cb_kwargs=None):
    request = Request(url, meta=meta, cb_kwargs=cb_kwargs)
    return HtmlResponse(url, body=PAGE, request=request)


def test_spider_parse_takes_cb_kwargs():
    with pytest.raises(NotImplementedError, match="Spider.parse callback is not defined"):
        Spider("s").parse(_response(), page=1)


class _Spider(CrawlSpider):
    name = "s"
    rules = (Rule(LinkExtractor(allow=r"/item/"), callback="parse_item"),)

    def parse_start_url(self, response, **kwargs):
        return [{"start": response.url, **kwargs}]

    def parse_item(self, response, **kwargs):
        return [{"item": response.url, **kwargs}]


def test_parse_start_url_gets_the_start_requests_cb_kwargs():
    spider = _Spider()
    response = _response(cb_kwargs={"page": 1})
    out = list(spider.parse(response, **response.cb_kwargs))
    assert out[0] == {"start": URL, "page": 1}
    assert [r.url for r in out[1:]] == ["http://example.com/item/1"]
    assert list(CrawlSpider(name="c").parse_start_url(response, page=1)) == []


def _rule_response(spider):
    (request,) = [r for r in spider.parse(_response()) if isinstance(r, Request)]
    return _response(request.url, meta=request.meta), request


def test_rule_responses_go_through_parse_with_rules():
    calls = []

    class Spider2(_Spider):
        def parse_with_rules(self, response, callback, cb_kwargs, follow=True):
            calls.append((response.url, callback.__name__, cb_kwargs, follow))
            for x in super().parse_with_rules(response, callback, cb_kwargs, follow):
                yield {"wrapped": x} if isinstance(x, dict) else x

    spider = Spider2()
    response, request = _rule_response(spider)
    out = list(request.callback(response))
    # a rule with a callback follows no links unless told (Rule.follow)
    assert calls[-1] == ("http://example.com/item/1", "parse_item", {}, False)
    assert out[0] == {"wrapped": {"item": "http://example.com/item/1"}}
    # the start URL's response too, with parse_start_url as the callback
    assert calls[0] == (URL, "parse_start_url", {}, True)


def test_an_override_of_scrapy_12s_parse_response_still_runs():
    class Spider3(_Spider):
        def _parse_response(self, response, callback, cb_kwargs, follow=True):
            yield {"overridden": response.url}

    spider = Spider3()
    assert list(spider.parse(_response())) == [{"overridden": URL}]


def test_parse_with_rules_without_callback_or_follow():
    spider = _Spider()
    response = _response()
    assert list(spider.parse_with_rules(response, None, {}, follow=False)) == []
    assert [r.url for r in spider.parse_with_rules(response, None, {})] == [
        "http://example.com/item/1"]
