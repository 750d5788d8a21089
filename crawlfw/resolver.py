"""Name resolution for downloads: what ``DNS_RESOLVER`` names (Scrapy's ``scrapy.resolver``).

crawlfw resolves host names itself, asynchronously, on each downloader actor's event
loop (c-ares through pycares: no thread per lookup), and hands libcurl the answer, so
libcurl never resolves by itself. How and why: ARCHITECTURE.md ("Broad crawls", "Name
resolution") and docs/broad-crawls.md.

``DNS_RESOLVER`` takes:

- Scrapy's names, ``'scrapy.resolver.CachingThreadedResolver'`` (Scrapy's default) and
  ``'scrapy.resolver.CachingHostnameResolver'``, their ``crawlfw.resolver`` spellings,
  and ``'twisted.internet.resolver.GAIResolver'``: all mean crawlfw's resolver,
  :class:`CachingThreadedResolver`;
- ``'crawlfw.resolver.LibcurlResolver'``: let libcurl resolve, on its own threaded
  resolver (crawlfw's behaviour before issue 31; ``DNS_TIMEOUT`` and ``DNSCACHE_SIZE``
  act through libcurl's options);
- a subclass of :class:`crawlfw.core.transport.resolver.Resolver` (such as
  :class:`CachingThreadedResolver`): built with the keyword arguments the settings
  give (see :func:`resolver_options`);
- any other class, whose instances have a blocking ``resolve(host) -> [address, ...]``
  method (raising to fail): built with ``from_crawler(crawler)``,
  ``from_settings(settings)`` or no arguments, and called on a few worker threads
  (:class:`~crawlfw.core.transport.resolver.ThreadedResolver`), behind the same cache,
  ``DNS_TIMEOUT`` and bound on lookups in flight.

Each downloader actor has its own resolver and cache (a host's requests always go to
the same downloader), and so does each worker of a ``FRONTIER_URL`` crawl.
"""

from __future__ import annotations

import math
from typing import Any

from crawlfw.core.transport.dns import DnsCache, HostsFile, read_resolv_conf
from crawlfw.core.transport.resolver import Resolver, ThreadedResolver
from crawlfw.core.transport.resolver_cares import CaresResolver
from crawlfw.utils.misc import create_instance, load_object

__all__ = ["CachingThreadedResolver", "CachingHostnameResolver", "LibcurlResolver",
           "build_resolver", "resolver_options", "resolves_ahead", "DnsStats"]


class CachingThreadedResolver(CaresResolver):
    """crawlfw's resolver under Scrapy's name for its default (no thread is involved:
    the name is Scrapy's). See :class:`~crawlfw.core.transport.resolver_cares.CaresResolver`."""


class CachingHostnameResolver(CachingThreadedResolver):
    """Scrapy's resolver that also gives IPv6 addresses: crawlfw's resolver always
    does (RFC 8305), so the same as :class:`CachingThreadedResolver`."""


class LibcurlResolver:
    """``DNS_RESOLVER = 'crawlfw.resolver.LibcurlResolver'``: no resolver of crawlfw's;
    libcurl resolves on its own threaded resolver (``getaddrinfo``), its cache bounded
    by ``DNSCACHE_SIZE`` and its lookups by ``DNS_TIMEOUT`` through libcurl's options.
    A name server that drops ``AAAA`` queries then costs each new host its timeout."""


#: ``DNS_RESOLVER`` values that mean crawlfw's resolver.
DEFAULT_NAMES = frozenset({
    "scrapy.resolver.CachingThreadedResolver",
    "scrapy.resolver.CachingHostnameResolver",
    "crawlfw.resolver.CachingThreadedResolver",
    "crawlfw.resolver.CachingHostnameResolver",
    "twisted.internet.resolver.GAIResolver",
})


def resolver_options(settings: Any) -> dict[str, Any]:
    """The keyword arguments of :class:`~crawlfw.core.transport.resolver.Resolver` (and
    of :class:`~crawlfw.core.transport.resolver_cares.CaresResolver`: ``hosts``,
    ``resolv_conf``, ``resolution_delay_s``) the settings give: ``DNS_TIMEOUT``,
    ``DNS_CONCURRENT_LOOKUPS``, ``DNSCACHE_ENABLED``/``DNSCACHE_SIZE`` (a fresh
    cache), ``DNSCACHE_MIN_TTL``, ``DNSCACHE_MAX_TTL``, ``DNSCACHE_NEGATIVE_TTL``,
    ``DNS_HOSTS_FILE``, ``DNS_RESOLV_CONF``, ``DNS_RESOLUTION_DELAY``.

    Raises:
        ValueError: a setting is out of range or its file unusable (the message names
            the setting).
    """
    timeout_s = settings.getfloat("DNS_TIMEOUT", 60)
    if not timeout_s >= 0:
        raise ValueError(f"DNS_TIMEOUT must be a number of seconds >= 0 (0: no limit of "
                         f"its own), got {settings.get('DNS_TIMEOUT')!r}")
    cache = None
    if settings.getbool("DNSCACHE_ENABLED", True):
        cache = DnsCache(settings.getint("DNSCACHE_SIZE", 10000))
    hosts_path = settings.get("DNS_HOSTS_FILE", "/etc/hosts")
    conf_path = settings.get("DNS_RESOLV_CONF")
    return {
        "timeout_s": timeout_s if timeout_s != math.inf else 0.0,
        "max_in_flight": settings.getint("DNS_CONCURRENT_LOOKUPS", 100),
        "cache": cache,
        "min_ttl_s": settings.getfloat("DNSCACHE_MIN_TTL", 60),
        "max_ttl_s": settings.getfloat("DNSCACHE_MAX_TTL", 3600),
        "negative_ttl_s": settings.getfloat("DNSCACHE_NEGATIVE_TTL", 30),
        "hosts": HostsFile(hosts_path) if hosts_path else None,
        "resolv_conf": read_resolv_conf(conf_path) if conf_path else None,
        "resolution_delay_s": settings.getfloat("DNS_RESOLUTION_DELAY", 0.05),
    }


def resolves_ahead(settings: Any) -> bool:
    """Whether host names are resolved ahead of their transfers, as their hosts' first
    requests are queued in the frontier (the SchedulerActor tells the downloaders
    ``resolve_ahead``): with crawlfw's resolver (``DNS_RESOLVER`` anything but
    :class:`LibcurlResolver`) and its cache (``DNSCACHE_ENABLED``)."""
    if not settings.getbool("DNSCACHE_ENABLED", True):
        return False
    name = settings.get("DNS_RESOLVER") or "crawlfw.resolver.CachingThreadedResolver"
    if isinstance(name, str) and name in DEFAULT_NAMES:
        return True
    try:
        cls = load_object(name) if isinstance(name, str) else name
    except (ImportError, NameError, ValueError, AttributeError):
        return False  # build_resolver refuses it, in one line
    return cls is not LibcurlResolver


def build_resolver(crawler: Any) -> Resolver | None:
    """The resolver ``crawler.settings['DNS_RESOLVER']`` names (see the module
    docstring), for one downloader; None for :class:`LibcurlResolver`.

    Raises:
        ValueError: a bad setting (named in the message), or a class that cannot
            resolve.
    """
    settings = crawler.settings
    name = settings.get("DNS_RESOLVER") or "crawlfw.resolver.CachingThreadedResolver"
    options = resolver_options(settings)
    if isinstance(name, str) and name in DEFAULT_NAMES:
        return CachingThreadedResolver(**options)
    try:
        cls = load_object(name) if isinstance(name, str) else name
    except (ImportError, NameError, ValueError, AttributeError) as e:
        raise ValueError(f"DNS_RESOLVER: cannot load {name!r}: {e}") from None
    if cls is LibcurlResolver:
        return None
    if isinstance(cls, type) and issubclass(cls, Resolver):
        if not issubclass(cls, CaresResolver):
            for key in ("hosts", "resolv_conf", "resolution_delay_s"):
                options.pop(key)
        return cls(**options)
    if not isinstance(cls, type):
        raise ValueError(f"DNS_RESOLVER must name a class, got {name!r}")
    user = create_instance(cls, settings, crawler)
    for key in ("hosts", "resolv_conf", "resolution_delay_s"):
        options.pop(key)
    threads = max(1, min(options["max_in_flight"], 8))
    return ThreadedResolver(user, threads=threads, **options)


class DnsStats:
    """Adds a resolver's counters to the crawl's stats as ``dns/*`` (increments since
    the last call, so the downloaders of a crawl add up): ``dns/lookups`` (names asked
    of the name servers), ``dns/cache_hits`` (transfers served without a new lookup),
    ``dns/failures/<kind>`` (``nxdomain``, ``nodata``, ``timeout``, ``servfail``,
    ``refused``, ``error``), ``dns/answered`` and ``dns/latency_total_ms`` (lookups the
    name servers answered, and the time they took: their mean is the ratio),
    ``dns/latency_max_ms``, ``dns/in_flight`` and ``dns/queued`` (now),
    ``dns/prefetched`` (of the lookups, those asked ahead of any transfer, as a host's
    first request was queued), ``dns/merged`` (answers the other address family joined
    after the Resolution Delay),
    ``dns/curl_lookups`` (names libcurl resolved by itself: none expected).

    Args:
        resolver: the downloader's resolver.
        stats: the crawl's stats collector.
        spider: the spider (for the stats calls).
    """

    def __init__(self, resolver: Resolver, stats: Any, spider: Any) -> None:
        self.resolver = resolver
        self.stats = stats
        self.spider = spider
        self._last: dict[str, int] = {}
        self._max_ms = 0

    def publish(self, curl_lookups: int = 0) -> None:
        """Add what changed since the last call (on the downloader's thread)."""
        r = self.resolver
        values = {
            "dns/lookups": r.lookups,
            "dns/prefetched": r.prefetched,
            "dns/merged": r.merged,
            "dns/cache_hits": r.cache_hits,
            "dns/answered": r.answered,
            "dns/latency_total_ms": round(r.latency_total_s * 1000),
            "dns/in_flight": r.in_flight,
            "dns/queued": r.queued,
            "dns/curl_lookups": curl_lookups,
        }
        for kind, count in r.failures.items():
            values[f"dns/failures/{kind}"] = count
        last = self._last
        stats = self.stats
        for key, value in values.items():
            delta = value - last.get(key, 0)
            if delta or (key not in last and key in ("dns/in_flight", "dns/queued")):
                stats.inc_value(key, delta, spider=self.spider)
                last[key] = value
        max_ms = round(r.latency_max_s * 1000)
        if max_ms > self._max_ms:
            self._max_ms = max_ms
            stats.max_value("dns/latency_max_ms", max_ms, spider=self.spider)
