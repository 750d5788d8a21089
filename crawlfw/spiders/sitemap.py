"""``SitemapSpider``: crawl the pages a site's sitemaps list (Scrapy 1.2's
``scrapy.spiders.sitemap``).

Sitemaps and sitemap indexes follow the Sitemaps protocol
(https://www.sitemaps.org/protocol.html); robots.txt files announce them on ``Sitemap:``
lines (sitemaps.org, "Specifying the Sitemap location in your robots.txt file").
"""

import logging
import re

from crawlfw.http import Request, XmlResponse
from crawlfw.spiders import Spider
from crawlfw.spiders._start import iterates_start_requests
from crawlfw.utils.gz import DecompressionMaxSizeExceeded, gunzip, is_gzipped
from crawlfw.utils.sitemap import Sitemap, sitemap_urls_from_robots

logger = logging.getLogger(__name__)

__all__ = ["SitemapSpider"]


class SitemapSpider(Spider):
    """A spider whose start URLs are sitemaps (or robots.txt files naming them).

    Class attributes:
        sitemap_urls (Sequence[str]): URLs of sitemaps, sitemap indexes (plain or
            gzip-compressed) and robots.txt files (a URL ending in ``/robots.txt``; its
            ``Sitemap:`` lines are followed).
        sitemap_rules (Sequence[tuple[str | re.Pattern, str | Callable]]):
            ``(regex, callback)`` pairs; a page URL from a ``<urlset>`` goes to the
            callback of the first regex found in it (``re.search``); a URL no rule
            matches is not requested. Callbacks may be method names. Default: every URL
            to ``parse``.
        sitemap_follow (Sequence[str | re.Pattern]): regexes selecting which sitemaps of
            a sitemap index are followed (default: all).
        sitemap_alternate_links (bool): also request the alternate-language URLs of
            each entry (``<xhtml:link rel="alternate" href="...">``); default False.

    ``loc`` values are resolved against the sitemap's URL: the protocol asks for
    absolute URLs, but root-relative ones (``<loc>/en/sitemap.xml</loc>``) are common.

    Bodies are read as sitemaps when the response is an ``XmlResponse``, is gzipped
    (``application/gzip``...), or its URL ends in ``.xml`` or ``.xml.gz``. Gzip bodies
    are decompressed up to ``DOWNLOAD_MAXSIZE`` bytes (``meta['download_maxsize']``
    overrides it), with a warning above ``DOWNLOAD_WARNSIZE``; a larger one, or any
    other body, is logged as "Ignoring invalid sitemap" and skipped.

    Raises:
        ValueError: a ``sitemap_rules`` callback names no method of the spider.
    """

    sitemap_urls = ()
    sitemap_rules = [("", "parse")]
    sitemap_follow = [""]
    sitemap_alternate_links = False
    _max_size = 0
    _warn_size = 0

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self._cbs = []
        for r, c in self.sitemap_rules:
            if isinstance(c, str):
                method = getattr(self, c, None)
                if not callable(method):
                    raise ValueError(
                        f"sitemap_rules callback {c!r} of spider {self.name!r} is not a "
                        f"method of {type(self).__name__}"
                    )
                c = method
            self._cbs.append((regex(r), c))
        self._follow = [regex(x) for x in self.sitemap_follow]

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        """Create the spider; reads ``DOWNLOAD_MAXSIZE`` and ``DOWNLOAD_WARNSIZE``
        (bytes) for decompressed sitemaps."""
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider._max_size = getattr(spider, "download_maxsize",
                                   crawler.settings.getint("DOWNLOAD_MAXSIZE"))
        spider._warn_size = getattr(spider, "download_warnsize",
                                    crawler.settings.getint("DOWNLOAD_WARNSIZE"))
        return spider

    @iterates_start_requests
    async def start(self):
        """Yield what :meth:`start_requests` returns (Scrapy 2.13's entry point; a
        subclass overriding ``start_requests`` in Scrapy 1.2's way keeps working). As
        in Scrapy 2.19 the requests are one per ``sitemap_urls`` entry, parsed by
        ``_parse_sitemap``; ``super().start()`` gives them to a ``start()`` of a
        subclass."""
        for request in self.start_requests():
            yield request

    def start_requests(self):
        """One request per ``sitemap_urls`` entry, parsed by ``_parse_sitemap``."""
        for url in self.sitemap_urls:
            yield Request(url, self._parse_sitemap)

    def sitemap_filter(self, entries):
        """Override to filter or change sitemap entries (Scrapy 1.6's hook).

        Args:
            entries: the ``Sitemap`` (an iterable of entry dicts, see
                :class:`crawlfw.utils.sitemap.Sitemap`).

        Returns:
            An iterable of entry dicts (default: ``entries`` unchanged).
        """
        return entries

    def _parse_sitemap(self, response):
        if response.url.endswith("/robots.txt"):
            # a robots.txt served with a binary Content-Type has no .text: decode it
            text = getattr(response, "text", None) or response.body
            for url in sitemap_urls_from_robots(text, base_url=response.url):
                yield Request(url, callback=self._parse_sitemap)
            return
        body = self._get_sitemap_body(response)
        sitemap = None
        if body is not None:
            try:
                sitemap = Sitemap(body)
            except ValueError:
                sitemap = None
        if sitemap is None:
            logger.warning("Ignoring invalid sitemap: %(response)s",
                           {"response": response}, extra={"spider": self})
            return

        entries = self.sitemap_filter(sitemap)
        if sitemap.type == "sitemapindex":
            for loc in iterloc(entries, self.sitemap_alternate_links):
                loc = response.urljoin(loc)
                if any(x.search(loc) for x in self._follow):
                    yield Request(loc, callback=self._parse_sitemap)
        elif sitemap.type == "urlset":
            for loc in iterloc(entries, self.sitemap_alternate_links):
                loc = response.urljoin(loc)
                for r, c in self._cbs:
                    if r.search(loc):
                        yield Request(loc, callback=c)
                        break

    def _get_sitemap_body(self, response):
        """Return the sitemap body of ``response`` (``bytes``), or None when it holds
        no sitemap or its decompressed size exceeds the limit."""
        if isinstance(response, XmlResponse):
            return response.body
        if is_gzipped(response):
            return self._gunzip(response)
        # Some servers send sitemaps as text/plain or application/octet-stream: go by
        # the URL. (Only the URL's path, not its query, is considered.)
        path = response.url.split("?", 1)[0].split("#", 1)[0]
        if path.endswith(".xml"):
            return response.body
        if path.endswith(".xml.gz"):
            return self._gunzip(response)
        return None

    def _gunzip(self, response):
        request = getattr(response, "request", None)
        meta = request.meta if request is not None else {}
        max_size = meta.get("download_maxsize", self._max_size)
        warn_size = meta.get("download_warnsize", self._warn_size)
        try:
            body = gunzip(response.body, max_size=max_size)
        except DecompressionMaxSizeExceeded:
            logger.warning(
                "Decompressed size of %(url)s exceeds the maximum allowed size of "
                "%(max_size)s bytes",
                {"url": response.url, "max_size": max_size}, extra={"spider": self},
            )
            return None
        except OSError:
            return None
        if warn_size and len(body) > warn_size:
            logger.warning(
                "Decompressed size of %(url)s (%(size)s bytes) is larger than the "
                "warning size of %(warn_size)s bytes",
                {"url": response.url, "size": len(body), "warn_size": warn_size},
                extra={"spider": self},
            )
        return body


def regex(x):
    """Compile ``x`` when it is a ``str``; return a compiled pattern unchanged."""
    if isinstance(x, str):
        return re.compile(x)
    return x


def iterloc(it, alt=False):
    """Yield each entry's ``loc``, then its alternates when ``alt`` is true.

    Args:
        it: an iterable of sitemap entry dicts.
        alt: also yield the ``'alternate'`` hrefs of each entry.
    """
    for d in it:
        yield d["loc"]
        # alternate language versions (<xhtml:link rel="alternate" href="...">)
        if alt and "alternate" in d:
            yield from d["alternate"]
