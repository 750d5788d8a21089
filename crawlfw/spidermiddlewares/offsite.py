"""Drop requests to hosts outside the spider's ``allowed_domains``.

A request is kept when its host is one of ``spider.allowed_domains`` or a subdomain
of one (``example.com`` allows ``www.example.com``), when ``request.dont_filter`` or
its ``meta['allow_offsite']`` (Scrapy 2.19) is true, or when the spider has no (or an
empty) ``allowed_domains``. Other requests are
dropped: the first one per host is logged at DEBUG as "Filtered offsite request to
'host': <GET url>" and counted in ``offsite/domains``; each is counted in
``offsite/filtered``.

``allowed_domains`` holds domain names only. An entry with a port
(``'example.com:8080'``) or a URL (``'http://example.com/'``) never matched anything in
Scrapy 1.2; here it is ignored with a warning naming it (later Scrapy's behaviour).

Scrapy 2.19 filters in a downloader middleware instead,
:class:`crawlfw.downloadermiddlewares.offsite.OffsiteMiddleware`, which crawlfw has too
(not enabled by default: see its docstring). Both share one record of the domains
already reported per crawler, so a domain's line is logged once even with both on.
"""

import logging
import re
import warnings

from crawlfw import signals
from crawlfw.http import Request
from crawlfw.utils.httpobj import urlparse_cached

__all__ = ["OffsiteMiddleware", "URLWarning", "PortWarning"]

logger = logging.getLogger(__name__)


class URLWarning(Warning):
    """An ``allowed_domains`` entry is a URL, not a domain."""


class PortWarning(Warning):
    """An ``allowed_domains`` entry has a port."""


_URL_PATTERN = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_PORT_PATTERN = re.compile(r":\d+$")


def domains_seen_of(crawler) -> set:
    """The set of domains whose filtered requests were reported for ``crawler``, shared
    by the spider-side and downloader-side offsite middlewares (kept on the crawler)."""
    seen = getattr(crawler, "_offsite_domains_seen", None)
    if not isinstance(seen, set):
        seen = set()
        try:
            crawler._offsite_domains_seen = seen
        except AttributeError:
            pass
    return seen


class _OffsiteFilter:
    """What both offsite middlewares share: the host regex of the spider's
    ``allowed_domains``, :meth:`should_follow` and :meth:`report_filtered`.

    The host regex is compiled once per spider, when the ``spider_opened`` signal
    fires (or on first use if the middleware is used without signals).

    Args:
        stats: the stats collector.
    """

    def __init__(self, stats):
        self.stats = stats
        self.host_regex = None
        self.domains_seen = set()
        self._regex_spider = None
        self._allows_all = False

    @classmethod
    def from_crawler(cls, crawler):
        o = cls(crawler.stats)
        o.crawler = crawler
        o.domains_seen = domains_seen_of(crawler)
        crawler.signals.connect(o.spider_opened, signal=signals.spider_opened)
        return o

    def report_filtered(self, request, spider) -> None:
        """Log and count ``request`` as dropped for leaving ``allowed_domains``: Scrapy's
        "Filtered offsite request to 'domain': <request>" DEBUG line once per domain and
        the ``offsite/domains`` stat with it, and ``offsite/filtered`` for every request.
        Also used by the redirect middleware for offsite redirect targets."""
        domain = urlparse_cached(request).hostname
        if domain and domain not in self.domains_seen:
            self.domains_seen.add(domain)
            logger.debug(
                "Filtered offsite request to %(domain)r: %(request)s",
                {"domain": domain, "request": request},
                extra={"spider": spider},
            )
            if self.stats is not None:
                self.stats.inc_value("offsite/domains", spider=spider)
        if self.stats is not None:
            self.stats.inc_value("offsite/filtered", spider=spider)

    def should_follow(self, request, spider) -> bool:
        """Whether ``request``'s host matches the spider's allowed domains."""
        # hostname is None for URLs without a host (e.g. javascript: or data: links)
        host = urlparse_cached(request).hostname or ""
        return bool(self.host_regex.search(host))

    def get_host_regex(self, spider) -> re.Pattern:
        """Compile the regex of allowed hosts. Override to implement another policy."""
        allowed_domains = getattr(spider, "allowed_domains", None)
        if not allowed_domains:
            return re.compile("")  # allow all by default
        domains = []
        spider_name = getattr(spider, "name", spider)
        for domain in allowed_domains:
            if domain is None:
                continue
            if _URL_PATTERN.match(domain):
                warnings.warn(
                    "allowed_domains accepts only domains, not URLs. Ignoring URL entry "
                    f"{domain!r} in allowed_domains of spider {spider_name!r}.",
                    URLWarning,
                    stacklevel=2,
                )
            elif _PORT_PATTERN.search(domain):
                warnings.warn(
                    "allowed_domains accepts only domains without ports. Ignoring entry "
                    f"{domain!r} in allowed_domains of spider {spider_name!r}.",
                    PortWarning,
                    stacklevel=2,
                )
            else:
                domains.append(re.escape(domain.lower()))
        regex = r"^(.*\.)?(" + "|".join(domains) + r")$"
        return re.compile(regex, re.I)

    def spider_opened(self, spider):
        """Signal handler: compile the host regex and reset the seen-domains set."""
        self.host_regex = self.get_host_regex(spider)
        self.domains_seen.clear()
        self._regex_spider = spider
        # The default policy with an empty regex lets every request through.
        self._allows_all = (
            self.host_regex.pattern == ""
            and type(self).should_follow is _OffsiteFilter.should_follow
        )


class OffsiteMiddleware(_OffsiteFilter):
    """Filter the requests a callback returns whose host is not in
    ``spider.allowed_domains`` (see the module docstring).

    Args:
        stats: the stats collector.
    """

    def process_spider_output(self, response, result, spider=None):
        if self._regex_spider is not spider or spider is None:
            if spider is None:  # (the crawler's spider, as Scrapy 2.19's hooks)
                spider = getattr(getattr(self, "crawler", None), "spider", None)
            if self._regex_spider is not spider:
                self.spider_opened(spider)
        if self._allows_all:
            yield from result  # no allowed_domains: nothing to parse or filter
            return
        for x in result:
            if isinstance(x, Request):
                if x.dont_filter or self.should_follow(x, spider) or x.meta.get("allow_offsite"):
                    yield x
                else:
                    self.report_filtered(x, spider)
            else:
                yield x
