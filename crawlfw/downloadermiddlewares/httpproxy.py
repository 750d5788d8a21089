"""Route requests through proxies from the environment or ``request.meta['proxy']``."""

import base64
from urllib.parse import unquote, urlunparse
from urllib.request import _parse_proxy, getproxies, proxy_bypass

from crawlfw.exceptions import NotConfigured
from crawlfw.utils.httpobj import urlparse_cached
from crawlfw.utils.python import to_bytes

__all__ = ["HttpProxyMiddleware"]


class HttpProxyMiddleware:
    """Set ``request.meta['proxy']`` and the ``Proxy-Authorization`` header.

    Proxies come from the environment (``http_proxy``, ``https_proxy``, ... as read by
    ``urllib.request.getproxies``; ``no_proxy`` is honoured for http and https URLs), or
    from ``request.meta['proxy']`` set by the spider, which always wins. Credentials in
    a proxy URL (``http://user:pass@host:port``) are removed from the URL and sent as
    ``Proxy-Authorization: Basic <base64(user:pass)>`` (RFC 7617), encoded with
    ``HTTPPROXY_AUTH_ENCODING`` (default latin-1). The downloader reads
    ``meta['proxy']`` and sends the header to the proxy only.

    Credentials never outlive their proxy (Scrapy 2.8+'s rule): the proxy a
    ``Proxy-Authorization`` header was made for is kept in ``meta['_auth_proxy']``; when
    a request comes back (retry, redirect) with ``meta['proxy']`` removed, set to None or
    pointing to another proxy, the header is dropped, so it never reaches the origin
    server or another proxy. A proxy taken from the environment is marked with
    ``meta['_scheme_proxy']``, so that a redirect to another scheme drops it and this
    middleware picks that scheme's proxy (see ``RedirectMiddleware``).

    Scrapy 1.2 disabled this middleware when the environment had no proxies, so
    credentials in ``meta['proxy']`` were ignored; here (as in Scrapy >= 1.4) it stays
    enabled unless ``HTTPPROXY_ENABLED`` is false, and handles such credentials.

    Args:
        auth_encoding: encoding of ``user:pass`` before base64.
    """

    def __init__(self, auth_encoding: str = "latin-1"):
        self.auth_encoding = auth_encoding
        self.proxies = {}
        for scheme, url in getproxies().items():
            if scheme == "no":
                continue
            self.proxies[scheme] = self._get_proxy(url, scheme)

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        if not settings.getbool("HTTPPROXY_ENABLED", True):
            raise NotConfigured
        return cls(settings.get("HTTPPROXY_AUTH_ENCODING") or "latin-1")

    def _basic_auth_header(self, username: str, password: str) -> bytes:
        user_pass = to_bytes(
            f"{unquote(username)}:{unquote(password)}", encoding=self.auth_encoding
        )
        return base64.b64encode(user_pass)

    def _get_proxy(self, url: str, orig_type: str):
        """Split a proxy URL into ``(credentials bytes or None, URL without them)``."""
        proxy_type, user, password, hostport = _parse_proxy(url)
        proxy_url = urlunparse((proxy_type or orig_type, hostport, "", "", "", ""))
        creds = self._basic_auth_header(user, password or "") if user else None
        return creds, proxy_url

    def process_request(self, request, spider=None):
        meta = request.meta
        if "proxy" in meta:
            proxy = meta["proxy"]
            if proxy is None:
                self._drop_proxy_auth(request)
                return
            creds, proxy_url = self._get_proxy(proxy, "http")
            meta["proxy"] = proxy_url
            if creds:
                request.headers[b"Proxy-Authorization"] = b"Basic " + creds
                meta["_auth_proxy"] = proxy_url
            elif "_auth_proxy" in meta:
                if meta["_auth_proxy"] != proxy_url:  # the proxy changed: not its creds
                    self._drop_proxy_auth(request)
            elif b"Proxy-Authorization" in request.headers:
                meta["_auth_proxy"] = proxy_url  # set by the user for this proxy
            return
        if "_auth_proxy" in meta:  # the proxy was removed: its credentials go too
            self._drop_proxy_auth(request)
        if not self.proxies:
            return
        parsed = urlparse_cached(request)
        scheme = parsed.scheme
        # no_proxy only applies to the http schemes (as in Scrapy)
        if scheme in ("http", "https") and proxy_bypass(parsed.hostname or ""):
            return
        if scheme in self.proxies:
            creds, proxy = self.proxies[scheme]
            meta["proxy"] = proxy
            meta["_scheme_proxy"] = True
            if creds:
                request.headers[b"Proxy-Authorization"] = b"Basic " + creds
                meta["_auth_proxy"] = proxy

    @staticmethod
    def _drop_proxy_auth(request) -> None:
        request.headers.pop(b"Proxy-Authorization", None)
        request.meta.pop("_auth_proxy", None)
