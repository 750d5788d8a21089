"""Follow HTTP redirects (``RedirectMiddleware``) and ``<meta http-equiv="refresh">``
(``MetaRefreshMiddleware``), with Scrapy 1.2's bookkeeping and later Scrapy's safety rules.

HTTP redirects (RFC 9110 §15.4, the Fetch standard's "HTTP-redirect fetch" §4.4):

* a 301 or 302 of a ``POST``, and a 303 of anything but ``GET``/``HEAD``, become a
  ``GET`` without body; the request-body headers (every ``Content-*`` header) go with
  the body (Fetch standard, Scrapy 2.14+; Scrapy 1.2 turned any 302/303 into a GET and
  kept the method on 301);
* any other redirect (307, 308, a 302 of a ``PUT``...) keeps the method and body.

``Location`` (latin-1 decoded, percent-encoded as UTF-8 with w3lib's
``safe_url_string``) is resolved against the request URL; a response without
``Location`` or with another status is returned unchanged.

What a hostile site cannot do with a redirect (see docs/security.md):

* **leave the web**: only ``http`` and ``https`` targets are followed, for 3xx and meta
  refresh alike (Scrapy 2.19's rule). A redirect to ``file:``, ``ftp:``, ``data:``...
  is not followed: one WARNING names the page and the target ("Ignoring redirect
  (302) from <GET page> to a non-http(s) URL: target"), ``redirect/refused_scheme``
  counts it, and the response goes on unchanged, as in Scrapy (a 3xx is then dropped
  by ``HttpErrorMiddleware``; a page with a meta refresh reaches its callback);
* **take credentials to another origin** (scheme, host, port; RFC 6454): the
  ``Cookie`` and ``Authorization`` headers are dropped (the cookies middleware adds the
  jar's cookies for the new URL again), and ``Request.cookies`` is never carried over
  (those cookies were stored for the first request's host only). When the request's
  proxy came from the environment (``meta['_scheme_proxy']``, set by
  ``HttpProxyMiddleware``) and the scheme changes, the proxy, its
  ``Proxy-Authorization`` header and the marker are dropped, so that the proxy
  middleware picks the new scheme's proxy;
* **leave allowed_domains**: a target outside the spider's ``allowed_domains`` is dropped
  as Scrapy 2.19's downloader-side ``OffsiteMiddleware`` does (DEBUG "Filtered offsite
  request to 'host': <GET url>" once per host, ``offsite/domains`` and
  ``offsite/filtered`` stats), unless the request has ``dont_filter`` or
  ``meta['allow_offsite']``. The check is made here, on redirect targets only, so
  ordinary requests (already filtered by the spider middleware) pay nothing.

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
from urllib.parse import urljoin, urlsplit

from w3lib.url import safe_url_string

from crawlfw.exceptions import IgnoreRequest, NotConfigured
from crawlfw.http import HtmlResponse
from crawlfw.utils._spiderarg import spider_of
from crawlfw.utils.httpobj import urlparse_cached
from crawlfw.utils.response import _DEFAULT_IGNORE_TAGS, get_meta_refresh

__all__ = ["BaseRedirectMiddleware", "RedirectMiddleware", "MetaRefreshMiddleware"]

logger = logging.getLogger(__name__)

#: Schemes a redirect or a meta refresh may lead to.
WEB_SCHEMES = frozenset({"http", "https"})

_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(parsed) -> tuple:
    """``(scheme, host, port)`` of a parsed URL, the port defaulted (RFC 6454 §4)."""
    scheme = parsed.scheme.lower()
    try:
        port = parsed.port
    except ValueError:
        port = None
    return scheme, (parsed.hostname or ""), port or _DEFAULT_PORTS.get(scheme)


class BaseRedirectMiddleware:
    """Common redirect bookkeeping: limits, meta keys, priority, logging, safety checks.

    Args:
        settings: the crawler's settings.
        stats: the crawler's stats collector (None outside a crawl: nothing counted).

    Raises:
        NotConfigured: the setting named by ``enabled_setting`` is false.
    """

    enabled_setting = "REDIRECT_ENABLED"

    def __init__(self, settings, stats=None):
        if not settings.getbool(self.enabled_setting):
            raise NotConfigured
        self.max_redirect_times = settings.getint("REDIRECT_MAX_TIMES")
        self.priority_adjust = settings.getint("REDIRECT_PRIORITY_ADJUST")
        self.stats = stats
        self._offsite = None  # a spider-side OffsiteMiddleware, built on first use
        self._settings = settings
        self.crawler = None
        self._referer_mw = False  # the RefererMiddleware of SPIDER_MIDDLEWARES, on first use

    @classmethod
    def from_crawler(cls, crawler):
        mw = cls(crawler.settings, getattr(crawler, "stats", None))
        mw.crawler = crawler
        return mw

    def handle_referer(self, request, response):
        """Set the ``Referer`` of the redirected ``request`` from the ``response`` that
        redirected it (Scrapy 2.13's hook: override it for another rule).

        Under a referrer policy of Scrapy 2 (``REFERRER_POLICY``, the request's
        ``referrer_policy`` meta key or the response's ``Referrer-Policy`` header), the
        ``Referer`` is removed and set again by the crawl's ``RefererMiddleware`` (the
        one in ``SPIDER_MIDDLEWARES``, or a subclass) as for a request made from
        ``response``, as Scrapy 2.19 does. Under crawlfw's default ``legacy`` policy, or
        with ``REFERER_ENABLED`` off, the header is kept as the original request had it
        (Scrapy 1.2).

        Args:
            request: the redirected request (changed in place).
            response: the 3xx or meta-refresh response.
        """
        referer_mw = self._referer_middleware()
        if referer_mw is None:
            return
        from crawlfw.spidermiddlewares.referer import LegacyPolicy

        if isinstance(referer_mw.policy(response, request), LegacyPolicy):
            return
        request.headers.pop(b"Referer", None)
        referer_mw.get_processed_request(request, response)

    def _referer_middleware(self):
        """The crawl's RefererMiddleware (built from ``SPIDER_MIDDLEWARES`` once), or
        None when ``REFERER_ENABLED`` is off or none is enabled."""
        if self._referer_mw is not False:
            return self._referer_mw
        self._referer_mw = None
        settings = self._settings
        if not settings.getbool("REFERER_ENABLED", True):
            return None
        from crawlfw.spidermiddlewares.referer import RefererMiddleware
        from crawlfw.utils.conf import build_component_list
        from crawlfw.utils.misc import load_object

        for path in build_component_list(settings.getwithbase("SPIDER_MIDDLEWARES")):
            cls = load_object(path)
            if isinstance(cls, type) and issubclass(cls, RefererMiddleware):
                try:
                    self._referer_mw = (cls.from_crawler(self.crawler)
                                        if self.crawler is not None else cls(settings))
                except NotConfigured:
                    pass
                break
        return self._referer_mw

    def _refuse_scheme(self, url: str, request, spider, reason) -> bool:
        """True (after a WARNING and the stat) unless ``url`` is an http(s) URL."""
        scheme = urlsplit(url).scheme.lower()
        if scheme in WEB_SCHEMES:
            return False
        logger.warning(
            "Ignoring redirect (%(reason)s) from %(request)s to a non-http(s) URL: "
            "%(target)s",
            {"reason": reason, "request": request, "target": url},
            extra={"spider": spider},
        )
        if self.stats is not None:
            self.stats.inc_value("redirect/refused_scheme", spider=spider)
        return True

    def _check_offsite(self, redirected, spider) -> None:
        """Raise IgnoreRequest when ``redirected`` leaves ``spider.allowed_domains``
        (Scrapy 2.19's downloader-side offsite filter: log line and stats)."""
        if redirected.dont_filter or redirected.meta.get("allow_offsite"):
            return
        if not getattr(spider, "allowed_domains", None):
            return
        offsite = self._offsite
        if offsite is None:
            from crawlfw.spidermiddlewares.offsite import OffsiteMiddleware

            offsite = self._offsite = OffsiteMiddleware(self.stats)
        if offsite._regex_spider is not spider:
            offsite.spider_opened(spider)
        if offsite.should_follow(redirected, spider):
            return
        offsite.report_filtered(redirected, spider)
        raise IgnoreRequest(f"offsite redirect filtered: {redirected.url}")

    def _redirect(self, redirected, request, spider, reason):
        """Finish ``redirected`` (meta, priority, dont_filter) or drop it at the limit.

        Returns:
            ``redirected``.

        Raises:
            IgnoreRequest: ``REDIRECT_MAX_TIMES`` (or ``meta['redirect_ttl']``) reached,
                or the target is outside ``allowed_domains``.
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
            self._check_offsite(redirected, spider)
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
        # Request.cookies are not carried: they were stored for the first URL's host only
        redirected = request.replace(url=redirect_url, cookies=None, **kwargs)
        # the target's own slot and latency, as Scrapy 2's RedirectMiddleware does (the
        # downloader set download_slot to the source's slot)
        redirected.meta.pop("download_slot", None)
        redirected.meta.pop("download_latency", None)
        source = urlparse_cached(request)
        target = urlparse_cached(redirected)
        headers = redirected.headers
        if _origin(source) != _origin(target):
            headers.pop(b"Cookie", None)
            headers.pop(b"Authorization", None)
        if source.scheme != target.scheme and redirected.meta.get("_scheme_proxy"):
            # the environment's proxy for the old scheme: let HttpProxyMiddleware pick
            # the new scheme's (and its credentials)
            redirected.meta.pop("_scheme_proxy", None)
            redirected.meta.pop("proxy", None)
            redirected.meta.pop("_auth_proxy", None)
            headers.pop(b"Proxy-Authorization", None)
        return redirected

    def _redirect_request_using_get(self, request, redirect_url):
        redirected = self._build_redirect_request(request, redirect_url, method="GET", body="")
        headers = redirected.headers
        for name in [k for k in headers if k.lower().startswith(b"content-")]:
            del headers[name]
        return redirected


class RedirectMiddleware(BaseRedirectMiddleware):
    """Follow 301, 302, 303, 307 and 308 responses that carry a ``Location`` header."""

    #: Redirect statuses followed (308 is RFC 7538, later Scrapy).
    ALLOWED_STATUS = (301, 302, 303, 307, 308)

    def process_response(self, request, response, spider=None):
        if spider is None:  # (the crawler's spider, Scrapy 2.19)
            spider = spider_of(self)
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
        if self._refuse_scheme(redirected_url, request, spider, response.status):
            return response
        method = request.method
        if (response.status in (301, 302) and method == "POST") or (
            response.status == 303 and method not in ("GET", "HEAD")
        ):
            redirected = self._redirect_request_using_get(request, redirected_url)
        else:
            redirected = self._build_redirect_request(request, redirected_url)
        self.handle_referer(redirected, response)
        return self._redirect(redirected, request, spider, response.status)


class MetaRefreshMiddleware(BaseRedirectMiddleware):
    """Follow ``<meta http-equiv="refresh" content="N; url=...">`` in HTML responses.

    Only refreshes with a delay below ``METAREFRESH_MAXDELAY`` seconds are followed
    (``REDIRECT_MAX_METAREFRESH_DELAY`` is its deprecated Scrapy 1.0 name), with a GET
    request. Enabled by ``METAREFRESH_ENABLED``; ``meta['dont_redirect']`` and HEAD
    requests are left alone. The refresh URL is found by
    ``crawlfw.utils.response.get_meta_refresh`` (HTML spec "shared declarative
    refresh steps", via w3lib), which skips the ``<meta>`` tags inside the elements
    named by ``METAREFRESH_IGNORE_TAGS`` (crawlfw's default ``['script', 'noscript']``
    is Scrapy 1.2's; Scrapy 2.19's is ``['noscript']``).
    """

    enabled_setting = "METAREFRESH_ENABLED"

    def __init__(self, settings, stats=None):
        super().__init__(settings, stats)
        self._maxdelay = settings.getint(
            "REDIRECT_MAX_METAREFRESH_DELAY", settings.getint("METAREFRESH_MAXDELAY")
        )
        tags = tuple(settings.getlist("METAREFRESH_IGNORE_TAGS", ["script", "noscript"]))
        # None: get_meta_refresh's default tags, whose answer it caches per response
        self._ignore_tags = None if sorted(tags) == sorted(_DEFAULT_IGNORE_TAGS) else tags

    def process_response(self, request, response, spider=None):
        if spider is None:  # (the crawler's spider, Scrapy 2.19)
            spider = spider_of(self)
        if (
            request.meta.get("dont_redirect", False)
            or request.method == "HEAD"
            or not isinstance(response, HtmlResponse)
            or not response.body  # (a 304: nothing to decode or scan)
        ):
            return response
        if self._ignore_tags is None:
            interval, url = get_meta_refresh(response)
        else:
            interval, url = get_meta_refresh(response, ignore_tags=self._ignore_tags)
        if url and interval < self._maxdelay:
            if self._refuse_scheme(url, request, spider, "meta refresh"):
                return response
            redirected = self._redirect_request_using_get(request, url)
            self.handle_referer(redirected, response)
            return self._redirect(redirected, request, spider, "meta refresh")
        return response
