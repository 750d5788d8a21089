"""Follow HTTP redirects (``RedirectMiddleware``) and ``<meta http-equiv="refresh">``
(``MetaRefreshMiddleware``), with Scrapy 1.2's rules.

HTTP redirects (RFC 7231 §6.4, RFC 7538 for 308):

* 301, 307, 308 and any redirect of a HEAD request keep the method and body;
* 302 and 303 become a GET without body (``Content-Type``/``Content-Length`` removed),
  as browsers do (RFC 7231 §6.4.3 allows it for 302).

``Location`` (latin-1 decoded, percent-encoded as UTF-8 with w3lib's
``safe_url_string``) is resolved against the request URL; a response without
``Location`` or with another status is returned unchanged.

Later-Scrapy safety rules, included: the ``Cookie`` header is dropped when the redirect
leaves the original host (the cookies middleware recomputes it for the new one), and
the ``Authorization`` header when it changes host or scheme.

Not redirected: ``meta['dont_redirect']``; statuses the spider handles itself
(``spider.handle_httpstatus_list``, ``meta['handle_httpstatus_list']``,
``meta['handle_httpstatus_all']``).

Meta kept on the redirected request: ``redirect_times`` (hops so far),
``redirect_ttl`` (hops left), ``redirect_urls`` (URLs redirected from, oldest first),
and ``redirect_reasons`` (status codes or ``'meta refresh'``, later Scrapy). The new
request inherits ``dont_filter`` and gets ``priority + REDIRECT_PRIORITY_ADJUST``. After
``REDIRECT_MAX_TIMES`` hops the request is dropped with ``IgnoreRequest``.
"""

import logging
from urllib.parse import urljoin

from w3lib.url import safe_url_string

from crawlfw.exceptions import IgnoreRequest, NotConfigured
from crawlfw.http import HtmlResponse
from crawlfw.utils.httpobj import urlparse_cached
from crawlfw.utils.response import get_meta_refresh

__all__ = ["BaseRedirectMiddleware", "RedirectMiddleware", "MetaRefreshMiddleware"]

logger = logging.getLogger(__name__)


class BaseRedirectMiddleware:
    """Common redirect bookkeeping: limits, meta keys, priority, logging.

    Args:
        settings: the crawler's settings.

    Raises:
        NotConfigured: the setting named by ``enabled_setting`` is false.
    """

    enabled_setting = "REDIRECT_ENABLED"

    def __init__(self, settings):
        if not settings.getbool(self.enabled_setting):
            raise NotConfigured
        self.max_redirect_times = settings.getint("REDIRECT_MAX_TIMES")
        self.priority_adjust = settings.getint("REDIRECT_PRIORITY_ADJUST")

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings)

    def _redirect(self, redirected, request, spider, reason):
        """Finish ``redirected`` (meta, priority, dont_filter) or drop it at the limit.

        Returns:
            ``redirected``.

        Raises:
            IgnoreRequest: ``REDIRECT_MAX_TIMES`` (or ``meta['redirect_ttl']``) reached.
        """
        ttl = request.meta.setdefault("redirect_ttl", self.max_redirect_times)
        redirects = request.meta.get("redirect_times", 0) + 1
        if ttl and redirects <= self.max_redirect_times:
            redirected.meta["redirect_times"] = redirects
            redirected.meta["redirect_ttl"] = ttl - 1
            redirected.meta["redirect_urls"] = request.meta.get("redirect_urls", []) + [request.url]
            redirected.meta["redirect_reasons"] = request.meta.get("redirect_reasons", []) + [
                reason
            ]
            redirected.dont_filter = request.dont_filter
            redirected.priority = request.priority + self.priority_adjust
            logger.debug(
                "Redirecting (%(reason)s) to %(redirected)s from %(request)s",
                {"reason": reason, "redirected": redirected, "request": request},
                extra={"spider": spider},
            )
            return redirected
        logger.debug(
            "Discarding %(request)s: max redirections reached",
            {"request": request},
            extra={"spider": spider},
        )
        raise IgnoreRequest("max redirections reached")

    def _build_redirect_request(self, request, redirect_url, **kwargs):
        redirected = request.replace(url=redirect_url, **kwargs)
        source = urlparse_cached(request)
        target = urlparse_cached(redirected)
        if source.hostname != target.hostname:
            redirected.headers.pop(b"Cookie", None)
        if source.hostname != target.hostname or source.scheme != target.scheme:
            redirected.headers.pop(b"Authorization", None)
        return redirected

    def _redirect_request_using_get(self, request, redirect_url):
        redirected = self._build_redirect_request(request, redirect_url, method="GET", body="")
        redirected.headers.pop(b"Content-Type", None)
        redirected.headers.pop(b"Content-Length", None)
        return redirected


class RedirectMiddleware(BaseRedirectMiddleware):
    """Follow 301, 302, 303, 307 and 308 responses that carry a ``Location`` header."""

    #: Redirect statuses followed (308 is RFC 7538, later Scrapy).
    ALLOWED_STATUS = (301, 302, 303, 307, 308)

    def process_response(self, request, response, spider):
        if (
            request.meta.get("dont_redirect", False)
            or response.status in getattr(spider, "handle_httpstatus_list", [])
            or response.status in request.meta.get("handle_httpstatus_list", [])
            or request.meta.get("handle_httpstatus_all", False)
        ):
            return response
        if response.status not in self.ALLOWED_STATUS or b"Location" not in response.headers:
            return response
        # header values are latin-1 on the wire; non-ASCII becomes percent-encoded UTF-8
        location = safe_url_string(response.headers[b"Location"].decode("latin-1"))
        redirected_url = urljoin(request.url, location)
        if response.status in (301, 307, 308) or request.method == "HEAD":
            redirected = self._build_redirect_request(request, redirected_url)
        else:
            redirected = self._redirect_request_using_get(request, redirected_url)
        return self._redirect(redirected, request, spider, response.status)


class MetaRefreshMiddleware(BaseRedirectMiddleware):
    """Follow ``<meta http-equiv="refresh" content="N; url=...">`` in HTML responses.

    Only refreshes with a delay below ``METAREFRESH_MAXDELAY`` seconds are followed
    (``REDIRECT_MAX_METAREFRESH_DELAY`` is its deprecated Scrapy 1.0 name), with a GET
    request. Enabled by ``METAREFRESH_ENABLED``; ``meta['dont_redirect']`` and HEAD
    requests are left alone. The refresh URL is found by
    ``crawlfw.utils.response.get_meta_refresh`` (HTML spec "shared declarative
    refresh steps", via w3lib).
    """

    enabled_setting = "METAREFRESH_ENABLED"

    def __init__(self, settings):
        super().__init__(settings)
        self._maxdelay = settings.getint(
            "REDIRECT_MAX_METAREFRESH_DELAY", settings.getint("METAREFRESH_MAXDELAY")
        )

    def process_response(self, request, response, spider):
        if (
            request.meta.get("dont_redirect", False)
            or request.method == "HEAD"
            or not isinstance(response, HtmlResponse)
        ):
            return response
        interval, url = get_meta_refresh(response)
        if url and interval < self._maxdelay:
            redirected = self._redirect_request_using_get(request, url)
            return self._redirect(redirected, request, spider, "meta refresh")
        return response
