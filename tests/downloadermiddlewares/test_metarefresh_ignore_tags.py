"""METAREFRESH_IGNORE_TAGS honoured by MetaRefreshMiddleware (issue 29), with the values
Scrapy 2.19's middleware gives for the same pages; crawlfw's default keeps Scrapy 1.2's
tags (script and noscript)."""

import pytest

from crawlfw.downloadermiddlewares.redirect import MetaRefreshMiddleware
from crawlfw.http import HtmlResponse, Request
from crawlfw.settings import default_settings
from crawlfw.settings._noeffect import SETTINGS_WITHOUT_EFFECT
from tests.downloadermiddlewares._support import get_crawler

BODIES = {
    "script": b'<html><head><script>var x = \'<meta http-equiv="refresh" '
              b'content="0;url=/s">\';</script></head></html>',
    "noscript": b'<html><head><noscript><meta http-equiv="refresh" content="0;url=/n">'
                b'</noscript></head></html>',
    "plain": b'<html><head><meta http-equiv="refresh" content="0;url=/p"></head></html>',
}


@pytest.mark.parametrize("tags, page, followed", [
    # Scrapy 2.19's answers for these settings
    (["noscript"], "script", "http://a.test/s"),
    (["noscript"], "noscript", None),
    (["noscript"], "plain", "http://a.test/p"),
    ([], "script", "http://a.test/s"),
    ([], "noscript", "http://a.test/n"),
    ([], "plain", "http://a.test/p"),
    (["script", "noscript"], "script", None),
    (["script", "noscript"], "noscript", None),
    (["script", "noscript"], "plain", "http://a.test/p"),
    (None, "script", None),  # crawlfw's default: Scrapy 1.2's tags
    (None, "noscript", None),
    (None, "plain", "http://a.test/p"),
])
def test_ignore_tags(tags, page, followed):
    settings = {} if tags is None else {"METAREFRESH_IGNORE_TAGS": tags}
    mw = MetaRefreshMiddleware.from_crawler(get_crawler(settings))
    request = Request("http://a.test/x")
    result = mw.process_response(request, HtmlResponse(request.url, body=BODIES[page],
                                                       request=request))
    assert (result.url if isinstance(result, Request) else None) == followed


def test_the_setting_has_effect():
    assert "METAREFRESH_IGNORE_TAGS" not in SETTINGS_WITHOUT_EFFECT
    assert default_settings.METAREFRESH_IGNORE_TAGS == ["script", "noscript"]


def test_a_response_without_a_body_is_not_decoded():
    """A 304 (a continuous crawl's revisit answered Not Modified) has no body, so no
    refresh: it passes as it is, its (empty) text never decoded nor its encoding
    sought."""
    mw = MetaRefreshMiddleware.from_crawler(get_crawler({}))
    request = Request("http://a.test/x.html")
    response = HtmlResponse(request.url, status=304, body=b"", request=request,
                            headers={"ETag": '"v1"'})
    assert mw.process_response(request, response) is response
    assert response._cached_ubody is None
