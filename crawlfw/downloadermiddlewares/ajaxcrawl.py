"""Fetch the crawlable variant of AJAX pages that declare one.

Google's (now deprecated) AJAX crawling scheme: a page whose HTML contains
``<meta name="fragment" content="!">`` has a static snapshot at
``?_escaped_fragment_=``. For such a page (an ``HtmlResponse`` with status 200 to a
GET request) this middleware returns a new request for ``url + '#!'``, which
``crawlfw.http.Request`` rewrites to the ``_escaped_fragment_`` form
(``crawlfw.utils.url.escape_ajax``). URLs that already contain ``#!`` are handled by
``Request`` alone and need no middleware.

Only the first ``AJAXCRAWL_MAXSIZE`` characters (default 32768) are searched; scripts,
``noscript`` blocks and comments are ignored. ``meta['ajax_crawlable']`` marks the
new request so it is not rewritten again. Enabled by ``AJAXCRAWL_ENABLED`` (default
False: the check costs time on every page).
"""

import logging
import re

from w3lib import html

from crawlfw.exceptions import NotConfigured
from crawlfw.http import HtmlResponse

__all__ = ["AjaxCrawlMiddleware"]

logger = logging.getLogger(__name__)


class AjaxCrawlMiddleware:
    """Replace AJAX pages that have a crawlable variant by a request for that variant.

    Args:
        settings: the crawler's settings.

    Raises:
        NotConfigured: ``AJAXCRAWL_ENABLED`` is false.
    """

    def __init__(self, settings):
        if not settings.getbool("AJAXCRAWL_ENABLED"):
            raise NotConfigured
        # Google parses at least the first 100k bytes; 32k is a compromise for speed.
        self.lookup_bytes = settings.getint("AJAXCRAWL_MAXSIZE", 32768)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings)

    def process_response(self, request, response, spider):
        if not isinstance(response, HtmlResponse) or response.status != 200:
            return response
        if request.method != "GET":
            # other methods are unsafe or have no body
            return response
        if "ajax_crawlable" in request.meta:  # prevents loops
            return response
        if not self._has_ajax_crawlable_variant(response):
            return response
        ajax_crawl_request = request.replace(url=request.url + "#!")
        logger.debug(
            "Downloading AJAX crawlable %(ajax_crawl_request)s instead of %(request)s",
            {"ajax_crawl_request": ajax_crawl_request, "request": request},
            extra={"spider": spider},
        )
        ajax_crawl_request.meta["ajax_crawlable"] = True
        return ajax_crawl_request

    def _has_ajax_crawlable_variant(self, response) -> bool:
        """Whether the page declares ``<meta name="fragment" content="!">``."""
        body = response.text[: self.lookup_bytes]
        return _has_ajaxcrawlable_meta(body)


_ajax_crawlable_re = re.compile(r'<meta\s+name=["\']fragment["\']\s+content=["\']!["\']\s*/?>')


def _has_ajaxcrawlable_meta(text: str) -> bool:
    """Search ``text`` for the fragment meta tag outside scripts and comments.

    >>> _has_ajaxcrawlable_meta('<html><head><meta name="fragment"  content="!"/></head><body></body></html>')
    True
    >>> _has_ajaxcrawlable_meta("<html><head><!--<meta name='fragment' content='!'>--></head></html>")
    False
    """
    # stripping scripts and comments is ~20x slower than a substring test: fail fast
    if "fragment" not in text or "content" not in text:
        return False
    text = html.remove_tags_with_content(text, ("script", "noscript"))
    text = html.replace_entities(text)
    text = html.remove_comments(text)
    return _ajax_crawlable_re.search(text) is not None
