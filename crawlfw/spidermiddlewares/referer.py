"""Set the ``Referer`` header of requests a callback produces.

Scrapy 1.2's rule, the default here: ``Referer: <response.url>`` on every produced
request, whatever the schemes involved.

Later Scrapy (1.4+) added referrer policies (W3C Referrer Policy, §3 and §8.3); they
are available here too, chosen (first match wins) by ``request.meta['referrer_policy']``,
the response's ``Referrer-Policy`` header, or the ``REFERRER_POLICY`` setting. A policy
is a name (``'no-referrer'``, ``'no-referrer-when-downgrade'``, ``'same-origin'``,
``'origin'``, ``'strict-origin'``, ``'origin-when-cross-origin'``,
``'strict-origin-when-cross-origin'``, ``'unsafe-url'``, ``'scrapy-default'``,
``'legacy'``), or a :class:`ReferrerPolicy` subclass or its import path (import paths
only from the setting and the meta key: a ``Referrer-Policy`` header is matched against
the W3C names only, never imported). Except for
``legacy``, the URL sent is stripped of user info and fragment (W3C §8.4), and
``file:``/``data:``-like responses never leak a referrer.

A request that already has a ``Referer`` header keeps it. ``REFERER_ENABLED = False``
disables the middleware.
"""

import logging
from urllib.parse import urlparse, urlunparse

from crawlfw.exceptions import NotConfigured
from crawlfw.http import Headers, Request
from crawlfw.utils.misc import load_object
from crawlfw.utils.python import to_unicode
from crawlfw.utils.url import strip_url

__all__ = [
    "POLICY_NO_REFERRER",
    "POLICY_NO_REFERRER_WHEN_DOWNGRADE",
    "POLICY_SAME_ORIGIN",
    "POLICY_ORIGIN",
    "POLICY_STRICT_ORIGIN",
    "POLICY_ORIGIN_WHEN_CROSS_ORIGIN",
    "POLICY_STRICT_ORIGIN_WHEN_CROSS_ORIGIN",
    "POLICY_UNSAFE_URL",
    "POLICY_SCRAPY_DEFAULT",
    "LOCAL_SCHEMES",
    "RefererMiddleware",
    "ReferrerPolicy",
    "LegacyPolicy",
    "NoReferrerPolicy",
    "NoReferrerWhenDowngradePolicy",
    "SameOriginPolicy",
    "OriginPolicy",
    "StrictOriginPolicy",
    "OriginWhenCrossOriginPolicy",
    "StrictOriginWhenCrossOriginPolicy",
    "UnsafeUrlPolicy",
    "DefaultReferrerPolicy",
]

logger = logging.getLogger(__name__)


#: Schemes whose URLs never go into a Referer (later Scrapy's ``NOREFERRER_SCHEMES``).
LOCAL_SCHEMES = ("about", "blob", "data", "filesystem", "file", "s3")
_POTENTIALLY_TRUSTWORTHY = ("https", "ftps", "wss")

#: The W3C policy names (Scrapy 2's constants), and Scrapy's own default.
POLICY_NO_REFERRER = "no-referrer"
POLICY_NO_REFERRER_WHEN_DOWNGRADE = "no-referrer-when-downgrade"
POLICY_SAME_ORIGIN = "same-origin"
POLICY_ORIGIN = "origin"
POLICY_STRICT_ORIGIN = "strict-origin"
POLICY_ORIGIN_WHEN_CROSS_ORIGIN = "origin-when-cross-origin"
POLICY_STRICT_ORIGIN_WHEN_CROSS_ORIGIN = "strict-origin-when-cross-origin"
POLICY_UNSAFE_URL = "unsafe-url"
POLICY_SCRAPY_DEFAULT = "scrapy-default"


class ReferrerPolicy:
    """Base class: decide the ``Referer`` value for a request made from a page.

    Subclasses set ``name`` and implement :meth:`referrer`.
    """

    name = ""
    #: Schemes of pages that never give a referrer. crawlfw's every policy keeps file:
    #: and s3: URLs private too (Scrapy 2 only its default policy does).
    NOREFERRER_SCHEMES: tuple[str, ...] = LOCAL_SCHEMES

    def referrer(self, response_url: str, request_url: str) -> str | None:
        """The header value for ``request_url`` requested from ``response_url``, or None."""
        raise NotImplementedError

    # helpers (W3C Referrer Policy §8.4 "strip url for use as a referrer")
    def strip_url(self, url: str, origin_only: bool = False) -> str | None:
        """W3C Referrer Policy §8.4 "strip url for use as a referrer" (Scrapy 2): the URL
        without user info, fragment and default port, and with ``origin_only`` without
        path and query either (``scheme://host[:port]/``).

        Args:
            url: an absolute URL.
            origin_only: keep only the origin.

        Returns:
            str | None: None for an empty ``url``.
        """
        if not url:
            return None
        return strip_url(url, strip_credentials=True, strip_fragment=True,
                         strip_default_port=True, origin_only=origin_only)

    def stripped_referrer(self, url: str) -> str | None:
        parsed = urlparse(url)
        if parsed.scheme in self.NOREFERRER_SCHEMES or not parsed.netloc:
            return None
        netloc = parsed.hostname or ""
        if ":" in netloc:  # IPv6 literal
            netloc = f"[{netloc}]"
        if parsed.port is not None:
            netloc += f":{parsed.port}"
        return urlunparse((parsed.scheme, netloc, parsed.path, parsed.params, parsed.query, ""))

    def origin_referrer(self, url: str) -> str | None:
        stripped = self.stripped_referrer(url)
        if stripped is None:
            return None
        parsed = urlparse(stripped)
        return urlunparse((parsed.scheme, parsed.netloc, "/", "", "", ""))

    @staticmethod
    def origin(url: str) -> tuple:
        parsed = urlparse(url)
        return parsed.scheme, parsed.hostname, parsed.port

    def tls_protected(self, url: str) -> bool:
        return urlparse(url).scheme in _POTENTIALLY_TRUSTWORTHY

    def potentially_trustworthy(self, url: str) -> bool:
        return self.tls_protected(url)

    def downgrade(self, response_url: str, request_url: str) -> bool:
        return self.tls_protected(response_url) and not self.potentially_trustworthy(request_url)


class LegacyPolicy(ReferrerPolicy):
    """Scrapy 1.2: the response URL, always (the default here)."""

    name = "legacy"

    def referrer(self, response_url, request_url):
        return response_url


class NoReferrerPolicy(ReferrerPolicy):
    """Never send a referrer."""

    name = "no-referrer"

    def referrer(self, response_url, request_url):
        return None


class NoReferrerWhenDowngradePolicy(ReferrerPolicy):
    """The stripped URL, except from TLS-protected pages to non-TLS URLs."""

    name = "no-referrer-when-downgrade"

    def referrer(self, response_url, request_url):
        if self.downgrade(response_url, request_url):
            return None
        return self.stripped_referrer(response_url)


class SameOriginPolicy(ReferrerPolicy):
    """The stripped URL for same-origin requests only."""

    name = "same-origin"

    def referrer(self, response_url, request_url):
        if self.origin(response_url) == self.origin(request_url):
            return self.stripped_referrer(response_url)
        return None


class OriginPolicy(ReferrerPolicy):
    """Only the origin (``scheme://host[:port]/``), always."""

    name = "origin"

    def referrer(self, response_url, request_url):
        return self.origin_referrer(response_url)


class StrictOriginPolicy(ReferrerPolicy):
    """The origin, except on a TLS downgrade."""

    name = "strict-origin"

    def referrer(self, response_url, request_url):
        if self.downgrade(response_url, request_url):
            return None
        return self.origin_referrer(response_url)


class OriginWhenCrossOriginPolicy(ReferrerPolicy):
    """The stripped URL for same-origin requests, the origin otherwise."""

    name = "origin-when-cross-origin"

    def referrer(self, response_url, request_url):
        if self.origin(response_url) == self.origin(request_url):
            return self.stripped_referrer(response_url)
        return self.origin_referrer(response_url)


class StrictOriginWhenCrossOriginPolicy(ReferrerPolicy):
    """Same-origin: the stripped URL; cross-origin: the origin, none on a downgrade."""

    name = "strict-origin-when-cross-origin"

    def referrer(self, response_url, request_url):
        if self.origin(response_url) == self.origin(request_url):
            return self.stripped_referrer(response_url)
        if self.downgrade(response_url, request_url):
            return None
        return self.origin_referrer(response_url)


class UnsafeUrlPolicy(ReferrerPolicy):
    """The stripped URL, always (also from https to http)."""

    name = "unsafe-url"

    def referrer(self, response_url, request_url):
        return self.stripped_referrer(response_url)


class DefaultReferrerPolicy(NoReferrerWhenDowngradePolicy):
    """Later Scrapy's default (``'scrapy-default'``): no-referrer-when-downgrade, and no
    referrer from local schemes (file, data, s3...) at all."""

    name = "scrapy-default"


_POLICIES = {
    cls.name: cls
    for cls in (
        LegacyPolicy,
        NoReferrerPolicy,
        NoReferrerWhenDowngradePolicy,
        SameOriginPolicy,
        OriginPolicy,
        StrictOriginPolicy,
        OriginWhenCrossOriginPolicy,
        StrictOriginWhenCrossOriginPolicy,
        UnsafeUrlPolicy,
        DefaultReferrerPolicy,
    )
}
_POLICIES[""] = NoReferrerWhenDowngradePolicy  # W3C: the empty string is the default
# What a Referrer-Policy header may name: the W3C policy tokens (§3), nothing else.
_HEADER_POLICIES = {
    name: cls for name, cls in _POLICIES.items()
    if name and name not in ("legacy", "scrapy-default")
}


def _policy_class(value, allow_import: bool = True):
    """A policy class from a name, a class or (``allow_import``) an import path; None if
    unknown.

    ``allow_import`` is False for the ``Referrer-Policy`` response header: a value from
    the network is matched against the W3C policy names only and never imported
    (Scrapy 2.19's rule; see docs/security.md).
    """
    if isinstance(value, type) and issubclass(value, ReferrerPolicy):
        return value
    if isinstance(value, bytes):
        value = to_unicode(value, encoding="latin-1")
    if not isinstance(value, str):
        return None
    known = _POLICIES if allow_import else _HEADER_POLICIES
    # a header may list several policies: the last one the client knows wins (W3C §4.1)
    for token in reversed([t.strip().lower() for t in value.split(",")]):
        if token in known:
            return known[token]
    if allow_import and "." in value:
        try:
            cls = load_object(value)
        except (ImportError, NameError, ValueError):
            return None
        if isinstance(cls, type) and issubclass(cls, ReferrerPolicy):
            return cls
    return None


class RefererMiddleware:
    """Populate ``Referer`` on produced requests (Scrapy 1.2 rule by default).

    Args:
        settings: reads ``REFERRER_POLICY`` (default ``'legacy'``, Scrapy 1.2's rule).

    Raises:
        ValueError: ``REFERRER_POLICY`` names no known policy.
    """

    def __init__(self, settings=None):
        value = settings.get("REFERRER_POLICY") if settings is not None else None
        cls = _policy_class(value) if value else LegacyPolicy
        if cls is None:
            raise ValueError(f"REFERRER_POLICY: unknown referrer policy {value!r}")
        self.default_policy = cls

    @classmethod
    def from_crawler(cls, crawler):
        if not crawler.settings.getbool("REFERER_ENABLED"):
            raise NotConfigured
        return cls(crawler.settings)

    def policy(self, response=None, request=None, **kwargs) -> ReferrerPolicy:
        """The policy for ``request`` made from ``response``: the request's
        ``referrer_policy`` meta key, else the response's ``Referrer-Policy`` header,
        else ``REFERRER_POLICY``.

        Args:
            response: the Response the request came from; a URL (str) as Scrapy
                accepted (no header then), or None. Scrapy's deprecated keyword
                ``resp_or_url`` is accepted too.
            request: the request.

        Raises:
            TypeError: ``request`` is missing, or both ``response`` and ``resp_or_url``
                are given.
        """
        if "resp_or_url" in kwargs:
            if response is not None:
                raise TypeError("Cannot pass both 'response' and 'resp_or_url'")
            response = kwargs.pop("resp_or_url")
        if kwargs:
            raise TypeError(f"policy() got unexpected keyword arguments: {sorted(kwargs)}")
        if request is None:
            raise TypeError("Missing required argument: 'request'")
        meta_value = request.meta.get("referrer_policy")
        cls = _policy_class(meta_value) if meta_value else None
        if cls is None and response is not None and not isinstance(response, str):
            header = response.headers.get(b"Referrer-Policy")
            cls = _policy_class(header, False) if header else None
        return (cls or self.default_policy)()

    def get_processed_request(self, request, response):
        """Set ``request``'s ``Referer`` as made from ``response`` (Scrapy 2.13's
        per-request hook), unless it has one; a request with no response (a start
        request) is returned as it is.

        Args:
            request: a ``crawlfw.http.Request``.
            response: the Response it came from, or None.

        Returns:
            The same request.
        """
        if response is None or not isinstance(request, Request):
            return request
        if b"Referer" not in request.headers:
            referrer = self.policy(response, request).referrer(response.url, request.url)
            if referrer is not None:
                request.headers[b"Referer"] = referrer
        return request

    def process_spider_output(self, response, result, spider):
        if (
            type(self).policy is RefererMiddleware.policy
            and self.default_policy is LegacyPolicy
            and response is not None
        ):
            return self._legacy_output(response, iter(result or ()))

        def _set_referer(r):
            if isinstance(r, Request) and b"Referer" not in r.headers:
                referrer = self.policy(response, r).referrer(response.url, r.url)
                if referrer is not None:
                    r.headers[b"Referer"] = referrer
            return r

        return (_set_referer(r) for r in result or ())

    def _legacy_output(self, response, result):
        # process_spider_output when the policy is legacy unless a request or the
        # response says otherwise: what policy() + LegacyPolicy.referrer() give, without
        # building a policy object per request.
        url = response.url
        url_bytes = {}  # encoding -> url encoded as Headers stores it
        header_checked = False
        setdefault_bytes = Headers.setdefault_bytes
        for r in result:
            if r.__class__ is Request or isinstance(r, Request):
                meta_value = r.meta.get("referrer_policy")
                cls = _policy_class(meta_value) if meta_value else None
                if cls is None:
                    if not header_checked:
                        header = response.headers.get(b"Referrer-Policy")
                        header_cls = _policy_class(header, False) if header else None
                        header_checked = True
                    cls = header_cls
                headers = r.headers
                if cls is not None and cls is not LegacyPolicy:
                    if b"Referer" not in headers:
                        referrer = cls().referrer(url, r.url)
                        if referrer is not None:
                            headers[b"Referer"] = referrer
                elif headers.__class__ is Headers:
                    value = url_bytes.get(headers.encoding)
                    if value is None:
                        value = url_bytes[headers.encoding] = url.encode(headers.encoding)
                    setdefault_bytes(headers, b"Referer", value)
                elif b"Referer" not in headers:
                    headers[b"Referer"] = url
            yield r
