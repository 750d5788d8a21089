"""AjaxCrawlMiddleware: the fragment meta tag, where it is ignored, and the rewrite."""

import pytest

from crawlfw.downloadermiddlewares.ajaxcrawl import AjaxCrawlMiddleware, _has_ajaxcrawlable_meta
from crawlfw.exceptions import NotConfigured
from crawlfw.http import HtmlResponse, Request, TextResponse
from crawlfw.settings import Settings

URL = "http://example.com/page"


@pytest.fixture
def mw():
    return AjaxCrawlMiddleware(Settings({"AJAXCRAWL_ENABLED": True}))


@pytest.mark.parametrize(
    "html, expected",
    [
        ('<html><head><meta name="fragment" content="!"/></head></html>', True),
        ("<html><head><meta name='fragment' content='!'></head></html>", True),
        ('<html><head><meta  name="fragment"   content="!" /></head></html>', True),
        ('<html><head><meta name="fragment" content="?"></head></html>', False),
        ('<html><head><!--<meta name="fragment" content="!">--></head></html>', False),
        ('<html><script>var s = \'<meta name="fragment" content="!">\';</script></html>', False),
        ('<html><noscript><meta name="fragment" content="!"></noscript></html>', False),
        ("<html><head><title>fragment content</title></head></html>", False),
        ("<html></html>", False),
    ],
)
def test_meta_detection(html, expected):
    assert _has_ajaxcrawlable_meta(html) is expected


def html_response(body, status=200, url=URL, cls=HtmlResponse):
    return cls(url, status=status, body=body.encode(), encoding="utf-8")


AJAX_PAGE = '<html><head><meta name="fragment" content="!"></head><body></body></html>'


def test_rewrites_to_escaped_fragment(mw):
    request = Request(URL + "?a=1")
    result = mw.process_response(request, html_response(AJAX_PAGE, url=request.url), None)
    assert isinstance(result, Request)
    assert result.url == "http://example.com/page?a=1&_escaped_fragment_="
    assert result.meta["ajax_crawlable"] is True
    # the rewritten page is not rewritten again
    again = html_response(AJAX_PAGE, url=result.url)
    assert mw.process_response(result, again, None) is again


@pytest.mark.parametrize(
    "request_, response",
    [
        (Request(URL, method="POST"), html_response(AJAX_PAGE)),
        (Request(URL), html_response(AJAX_PAGE, status=404)),
        (Request(URL), html_response(AJAX_PAGE, cls=TextResponse)),
        (Request(URL), html_response("<html><body>plain</body></html>")),
    ],
)
def test_left_alone(mw, request_, response):
    assert mw.process_response(request_, response, None) is response


def test_lookup_limit():
    mw = AjaxCrawlMiddleware(Settings({"AJAXCRAWL_ENABLED": True, "AJAXCRAWL_MAXSIZE": 100}))
    late = "<html><head>" + " " * 200 + '<meta name="fragment" content="!"></head></html>'
    response = html_response(late)
    assert mw.process_response(Request(URL), response, None) is response
    # the default limit (32 KiB) finds it
    default = AjaxCrawlMiddleware(Settings({"AJAXCRAWL_ENABLED": True}))
    assert isinstance(default.process_response(Request(URL), response, None), Request)


def test_disabled_by_default():
    with pytest.raises(NotConfigured):
        AjaxCrawlMiddleware(Settings())
