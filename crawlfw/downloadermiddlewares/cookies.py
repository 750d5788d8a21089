"""Keep cookies per session like a browser: store ``Set-Cookie``, send ``Cookie``.

Cookies are stored in :class:`crawlfw.http.cookies.CookieJar` objects (RFC 6265
parsing and matching by ``http.cookiejar``). One jar per value of
``request.meta['cookiejar']`` (default None), so a spider can keep several sessions
apart; the key is not propagated to follow-up requests automatically (pass it on, as
in Scrapy).

Per request:

* ``request.cookies``: cookies to add to the jar before sending, as a dict
  ``{name: value}`` or a list of dicts with ``name``, ``value`` and optional
  ``domain``, ``path`` keys (Scrapy 1.2);
* ``meta['dont_merge_cookies']``: leave this request and its response alone (its own
  ``Cookie`` header is sent unchanged, ``Set-Cookie`` is not stored);
* otherwise any ``Cookie`` header set on the request is **replaced** by the jar's
  matching cookies (Scrapy 1.2's behaviour).

Settings: ``COOKIES_ENABLED`` (else ``NotConfigured``), ``COOKIES_DEBUG`` (log every
``Cookie`` sent and ``Set-Cookie`` received at DEBUG: "Sending cookies to: ..." and
"Received cookies from: ...").
"""

import logging
from collections import defaultdict

from crawlfw.exceptions import NotConfigured
from crawlfw.http import Response
from crawlfw.http.cookies import CookieJar
from crawlfw.utils.python import to_unicode

__all__ = ["CookiesMiddleware"]

logger = logging.getLogger(__name__)


class CookiesMiddleware:
    """Store cookies from responses and add them to matching requests.

    Args:
        debug: log cookies sent and received (``COOKIES_DEBUG``).

    Attributes:
        jars: ``{meta['cookiejar'] value: CookieJar}``, created on first use.
    """

    def __init__(self, debug: bool = False):
        self.jars = defaultdict(CookieJar)
        self.debug = debug

    @classmethod
    def from_crawler(cls, crawler):
        if not crawler.settings.getbool("COOKIES_ENABLED"):
            raise NotConfigured
        return cls(crawler.settings.getbool("COOKIES_DEBUG"))

    def process_request(self, request, spider=None):
        if request.meta.get("dont_merge_cookies", False):
            return
        jar = self.jars[request.meta.get("cookiejar")]
        for cookie in self._get_request_cookies(jar, request):
            jar.set_cookie_if_ok(cookie, request)
        # the jar's cookies replace any Cookie header (Scrapy 1.2)
        request.headers.pop(b"Cookie", None)
        jar.add_cookie_header(request)
        self._debug_cookie(request, spider)

    def process_response(self, request, response, spider=None):
        if request.meta.get("dont_merge_cookies", False):
            return response
        jar = self.jars[request.meta.get("cookiejar")]
        jar.extract_cookies(response, request)
        self._debug_set_cookie(response, spider)
        return response

    def _debug_cookie(self, request, spider):
        if self.debug:
            cl = [to_unicode(c, errors="replace") for c in request.headers.getlist(b"Cookie")]
            if cl:
                cookies = "\n".join(f"Cookie: {c}\n" for c in cl)
                msg = f"Sending cookies to: {request}\n{cookies}"
                logger.debug(msg, extra={"spider": spider})

    def _debug_set_cookie(self, response, spider):
        if self.debug:
            cl = [to_unicode(c, errors="replace") for c in response.headers.getlist(b"Set-Cookie")]
            if cl:
                cookies = "\n".join(f"Set-Cookie: {c}\n" for c in cl)
                msg = f"Received cookies from: {response}\n{cookies}"
                logger.debug(msg, extra={"spider": spider})

    @staticmethod
    def _format_cookie(cookie: dict, request) -> str | None:
        """``Set-Cookie`` line for a cookie dict; None (skipped, warned) when malformed."""
        for key in ("name", "value"):
            if cookie.get(key) is None:
                logger.warning(
                    "Invalid cookie found in request %(request)s: %(cookie)r (%(key)r is missing)",
                    {"request": request, "cookie": cookie, "key": key},
                )
                return None
        parts = []
        for key in ("name", "value"):
            value = cookie[key]
            parts.append(
                to_unicode(value, errors="replace") if isinstance(value, bytes) else str(value)
            )
        cookie_str = f"{parts[0]}={parts[1]}"
        if cookie.get("path"):
            cookie_str += f"; Path={cookie['path']}"
        if cookie.get("domain"):
            cookie_str += f"; Domain={cookie['domain']}"
        return cookie_str

    def _get_request_cookies(self, jar, request):
        """Turn ``request.cookies`` into ``Cookie`` objects as if the server had set them."""
        if not request.cookies:
            return []
        if isinstance(request.cookies, dict):
            cookie_list = [{"name": k, "value": v} for k, v in request.cookies.items()]
        else:
            cookie_list = request.cookies
        formatted = [self._format_cookie(c, request) for c in cookie_list]
        headers = {"Set-Cookie": [c for c in formatted if c is not None]}
        response = Response(request.url, headers=headers)
        return jar.make_cookies(response, request)
