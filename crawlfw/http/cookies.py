"""Cookie storage for the cookies middleware: ``http.cookiejar`` over crawlfw objects.

``http.cookiejar.CookieJar`` implements the cookie rules (RFC 6265 parsing of
``Set-Cookie``, Netscape/RFC 2965 domain and path matching, expiry, ``Secure``) for
``urllib.request`` objects. :class:`WrappedRequest` and :class:`WrappedResponse` give a
``crawlfw.http.Request``/``Response`` the interface it expects, and :class:`CookieJar`
adds Scrapy 1.2's speed-up: only the domains that can match the request host are
scanned when building the ``Cookie`` header.

Its default policy, :class:`PublicSuffixCookiePolicy`, refuses a ``Domain`` attribute
that names a public suffix (``.co.uk``, ``.github.io``: RFC 6265 §5.3 step 5, with the
Public Suffix List that the ``publicsuffixlist`` package ships, never fetched at run
time) or, for a request to an IP address, anything but that address (RFC 6265 §5.1.3).

A jar is not thread-safe by itself: the cookies middleware uses it from one thread (the
engine actor's).
"""

from __future__ import annotations

import ipaddress
import logging
import re
import threading
import time
from http.cookiejar import Cookie, CookiePolicy, DefaultCookiePolicy
from http.cookiejar import CookieJar as _CookieJar
from urllib.parse import urlsplit

from crawlfw.utils.httpobj import urlparse_cached
from crawlfw.utils.python import to_unicode

__all__ = [
    "IPV4_RE",
    "CookieJar",
    "PublicSuffixCookiePolicy",
    "WrappedRequest",
    "WrappedResponse",
    "is_public_suffix",
    "potential_domain_matches",
]

logger = logging.getLogger(__name__)

#: Matches a host name ending in a dot and digits, taken for an IPv4 address (the
#: pattern of ``http.cookiejar``'s undocumented ``IPV4_RE``; Scrapy 2's
#: ``scrapy.http.cookies.IPV4_RE``): such a host is matched by itself only.
IPV4_RE = re.compile(r"\.\d+$", re.ASCII)

_psl = None
_psl_lock = threading.Lock()


def is_public_suffix(domain: str) -> bool:
    """Whether ``domain`` is a public suffix: a rule of the Public Suffix List
    (https://publicsuffix.org/), ICANN and private sections alike, as browsers and
    Scrapy read it (``co.uk``, ``com``, ``github.io``, ``blogspot.com``).

    The list is the snapshot the ``publicsuffixlist`` package ships (loaded once per
    process, on first use: about 80 ms); nothing is fetched at run time. A name under
    no rule of the list (``localhost``, ``corp``) is not a public suffix.

    Args:
        domain: a host or domain name, any case, no leading dot; IDNs in Unicode or
            in their ``xn--`` form.

    Returns:
        True if ``domain`` itself is a public suffix.
    """
    global _psl
    if _psl is None:
        with _psl_lock:
            if _psl is None:
                from publicsuffixlist import PublicSuffixList

                _psl = PublicSuffixList(accept_unknown=False)
    return bool(_psl.is_public(domain.lower()))


class PublicSuffixCookiePolicy(DefaultCookiePolicy):
    """``http.cookiejar.DefaultCookiePolicy`` that also refuses a ``Domain``
    attribute no browser accepts.

    On top of the default checks (the ``Domain`` must domain-match the request
    host, ...), a cookie whose ``Domain`` attribute is given is refused when:

    * the domain is a public suffix (:func:`is_public_suffix`) other than the request
      host itself: ``Domain=.co.uk`` from ``foo.co.uk`` would otherwise be sent to every
      ``.co.uk`` site (RFC 6265 §5.3 step 5; Scrapy refuses it too). A host that is
      itself a public suffix (``github.io``) keeps its cookie as a host-only one, sent
      back to that host alone;
    * the request host is an IP address and the domain is not exactly that address
      (RFC 6265 §5.1.3: an IP address domain-matches only itself); the accepted
      cookie is stored under the address, so it is sent back to it.

    Refusals are logged at DEBUG. Keyword arguments are ``DefaultCookiePolicy``'s.
    """

    def set_ok_domain(self, cookie: Cookie, request) -> bool:
        """Whether ``cookie``'s domain may be set from ``request`` (a
        ``urllib.request.Request``-like object, e.g. :class:`WrappedRequest`)."""
        if not super().set_ok_domain(cookie, request):
            return False
        if not cookie.domain_specified:
            return True
        host = urlsplit(request.get_full_url()).hostname or ""  # lower case, no port
        domain = cookie.domain.lower()
        undotted = domain[1:] if domain.startswith(".") else domain
        try:
            ipaddress.ip_address(host)
        except ValueError:
            pass
        else:
            if undotted.strip("[]") != host:
                logger.debug(
                    "Cookie %r from %s refused: Domain=%s is not the IP address of the "
                    "host (RFC 6265 5.1.3)", cookie.name, host, cookie.domain,
                )
                return False
            cookie.domain = host  # host-only: stored under the address, sent back to it
            return True
        if is_public_suffix(undotted):
            if undotted != host:
                logger.debug(
                    "Cookie %r from %s refused: Domain=%s is a public suffix (RFC 6265 5.3)",
                    cookie.name, host, cookie.domain,
                )
                return False
            # the host is itself a public suffix: a host-only cookie (RFC 6265 5.3 step 5)
            cookie.domain = host
            cookie._crawlfw_host_only = True
        return True

    def return_ok_domain(self, cookie: Cookie, request) -> bool:
        """Whether ``cookie`` may be sent with ``request`` as far as its domain goes;
        a host-only cookie (see :meth:`set_ok_domain`) only to its own host."""
        if getattr(cookie, "_crawlfw_host_only", False):
            if (urlsplit(request.get_full_url()).hostname or "") != cookie.domain:
                return False
        return super().return_ok_domain(cookie, request)


class CookieJar:
    """A cookie jar for crawlfw requests and responses.

    Args:
        policy: an ``http.cookiejar.CookiePolicy`` (default
            :class:`PublicSuffixCookiePolicy`, which refuses public-suffix domains).
        check_expired_frequency: expired cookies are purged every this many
            :meth:`add_cookie_header` calls.
    """

    def __init__(self, policy: CookiePolicy | None = None, check_expired_frequency: int = 10000):
        self.policy = policy or PublicSuffixCookiePolicy()
        self.jar = _CookieJar(self.policy)
        self.check_expired_frequency = check_expired_frequency
        self.processed = 0

    def extract_cookies(self, response, request) -> None:
        """Store the cookies the ``Set-Cookie`` headers of ``response`` set, if allowed.

        Args:
            response: the ``Response`` (its ``Set-Cookie``/``Set-Cookie2`` headers).
            request: the ``Request`` that produced it (its URL decides domain/path).
        """
        headers = response.headers
        if b"Set-Cookie" not in headers and b"Set-Cookie2" not in headers:
            return  # http.cookiejar's make_cookies finds nothing to store
        wreq = WrappedRequest(request)
        wrsp = WrappedResponse(response)
        self.jar.extract_cookies(wrsp, wreq)

    def add_cookie_header(self, request) -> None:
        """Add a ``Cookie`` header with the stored cookies that match ``request``.

        A request that already has a ``Cookie`` header is left unchanged.

        :attr:`processed` counts the requests checked against a jar holding cookies
        (every ``check_expired_frequency``-th purges the expired ones); an empty jar
        has nothing to add or purge and returns at once.

        Args:
            request: a ``crawlfw.http.Request`` (modified in place).
        """
        if not self.jar._cookies:
            return
        wreq = WrappedRequest(request)
        self.policy._now = self.jar._now = int(time.time())
        # http.cookiejar scans every domain it knows; restrict to possible matches
        req_host = urlparse_cached(request).hostname
        if not req_host:
            return
        if not IPV4_RE.search(req_host):
            hosts = potential_domain_matches(req_host)
            if "." not in req_host:
                hosts += [req_host + ".local"]
        else:
            hosts = [req_host]
        cookies = []
        for host in hosts:
            if host in self.jar._cookies:
                cookies += self.jar._cookies_for_domain(host, wreq)
        attrs = self.jar._cookie_attrs(cookies)
        if attrs and not wreq.has_header("Cookie"):
            wreq.add_unredirected_header("Cookie", "; ".join(attrs))
        self.processed += 1
        if self.processed % self.check_expired_frequency == 0:
            # still linear in the number of cookies, hence not on every call
            self.jar.clear_expired_cookies()

    @property
    def _cookies(self) -> dict:
        return self.jar._cookies

    def clear_session_cookies(self, *args, **kwargs) -> None:
        """Discard all session cookies (those without an expiry)."""
        return self.jar.clear_session_cookies(*args, **kwargs)

    def clear(self, domain: str | None = None, path: str | None = None, name: str | None = None):
        """Remove cookies: all, a domain's, a domain+path's, or one named cookie.

        Raises:
            KeyError: no cookie matches the given domain/path/name.
        """
        return self.jar.clear(domain, path, name)

    def __iter__(self):
        return iter(self.jar)

    def __len__(self) -> int:
        return len(self.jar)

    def set_policy(self, pol: CookiePolicy) -> None:
        self.policy = pol
        self.jar.set_policy(pol)

    def make_cookies(self, response, request) -> list[Cookie]:
        """Parse the ``Set-Cookie`` headers of ``response`` into ``Cookie`` objects
        (without storing them)."""
        wreq = WrappedRequest(request)
        wrsp = WrappedResponse(response)
        return self.jar.make_cookies(wrsp, wreq)

    def set_cookie(self, cookie: Cookie) -> None:
        """Store ``cookie`` unconditionally."""
        self.jar.set_cookie(cookie)

    def set_cookie_if_ok(self, cookie: Cookie, request) -> None:
        """Store ``cookie`` if the policy allows it for ``request``."""
        self.jar.set_cookie_if_ok(cookie, WrappedRequest(request))


def potential_domain_matches(domain: str) -> list[str]:
    """Domains whose cookies may apply to host ``domain``.

    >>> potential_domain_matches('www.example.com')
    ['www.example.com', 'example.com', '.www.example.com', '.example.com']
    """
    matches = [domain]
    try:
        start = domain.index(".") + 1
        end = domain.rindex(".")
        while start < end:
            matches.append(domain[start:])
            start = domain.index(".", start) + 1
    except ValueError:
        pass
    return matches + ["." + d for d in matches]


class WrappedRequest:
    """A ``crawlfw.http.Request`` seen through ``urllib.request.Request``'s interface.

    Only what ``http.cookiejar`` uses. ``unverifiable`` (RFC 2965 §3.3.6: a request
    the user did not choose, e.g. an embedded image) comes from
    ``request.meta['is_unverifiable']`` (default False).
    """

    def __init__(self, request):
        self.request = request

    def get_full_url(self) -> str:
        return self.request.url

    def get_host(self) -> str:
        return urlparse_cached(self.request).netloc

    def get_type(self) -> str:
        return urlparse_cached(self.request).scheme

    def is_unverifiable(self) -> bool:
        return self.request.meta.get("is_unverifiable", False)

    def get_origin_req_host(self) -> str:
        return urlparse_cached(self.request).hostname

    @property
    def full_url(self) -> str:
        return self.get_full_url()

    @property
    def host(self) -> str:
        return self.get_host()

    @property
    def type(self) -> str:
        return self.get_type()

    @property
    def unverifiable(self) -> bool:
        return self.is_unverifiable()

    @property
    def origin_req_host(self) -> str:
        return self.get_origin_req_host()

    def has_header(self, name: str) -> bool:
        return name in self.request.headers

    def get_header(self, name: str, default=None):
        value = self.request.headers.get(name)
        if value is None:
            return default
        return to_unicode(value, errors="replace")

    def header_items(self) -> list[tuple[str, list[str]]]:
        return [
            (
                to_unicode(k, errors="replace"),
                [to_unicode(x, errors="replace") for x in v],
            )
            for k, v in self.request.headers.items()
        ]

    def add_unredirected_header(self, name: str, value: str) -> None:
        self.request.headers.appendlist(name, value)


class WrappedResponse:
    """A ``crawlfw.http.Response`` seen through the ``info()`` interface
    ``http.cookiejar`` reads ``Set-Cookie`` headers from."""

    def __init__(self, response):
        self.response = response

    def info(self):
        return self

    def get_all(self, name: str, default=None) -> list[str]:
        return [to_unicode(v, errors="replace") for v in self.response.headers.getlist(name)]
