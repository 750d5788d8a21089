"""A generic whole-site spider: follow every same-site link, one item per HTML page.

Every URL of the site referenced from a page is requested once: links (``<a href>``,
``<area href>``, ``<link href>``) and embedded assets (``<script src>``, ``<img src>``),
whatever their extension. Each HTML page gives one item ``{"url", "status", "title"}``;
other documents (CSS, feeds, text files) give none. Missing pages and assets answer 404:
the HttpError spider middleware logs them ("Ignoring response <404 ...>") and counts them
in the ``httperror/response_ignored_status_count/404`` stat; the crawl goes on.

HTTP redirects and ``<meta http-equiv="refresh">`` alias pages are followed by the
redirect middlewares, so an item's ``url`` is the page's final URL; the duplicates filter
makes each final URL crawled once however many links and aliases lead to it. Fragments
(``#section``) are dropped from links: they name parts of a page, not pages.

    crawlfw runspider examples/site.py -a base_url=http://127.0.0.1:8000 -o site.jl
"""

from urllib.parse import urldefrag, urlsplit

from crawlfw.http import HtmlResponse, Request
from crawlfw.linkextractors import LinkExtractor
from crawlfw.spiders import CrawlSpider, Rule

#: Elements and attributes whose URLs the spider requests.
LINK_TAGS = ("a", "area", "link", "script", "img")
LINK_ATTRS = ("href", "src")


class SiteSpider(CrawlSpider):
    """Crawl one site from its root page.

    Args:
        base_url: the site's origin, e.g. ``http://127.0.0.1:8000`` (``-a base_url=...``);
            the crawl starts at ``<base_url>/`` and stays on its host.
        **kw: as for ``CrawlSpider``.

    Raises:
        ValueError: ``base_url`` is not an absolute http(s) URL.
    """

    name = "site"
    base_url = "https://aegisub.org"

    def __init__(self, base_url=None, **kw):
        base_url = (base_url or self.base_url).rstrip("/")
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an absolute http(s) URL, got {base_url!r}")
        self.base_url = base_url
        self.allowed_domains = [parts.hostname]
        self.start_urls = [base_url + "/"]
        # The rules depend on the host, so they are set before CrawlSpider compiles them.
        self.rules = (
            Rule(
                LinkExtractor(
                    # the link extractor compares host:port (Scrapy 1.2's
                    # url_is_from_any_domain); the offsite middleware the host only
                    allow_domains=[parts.netloc],
                    tags=LINK_TAGS,
                    attrs=LINK_ATTRS,
                    deny_extensions=(),  # assets too: their 404s are reported
                ),
                callback="parse_page",
                follow=True,
                process_links="drop_fragments",
            ),
        )
        super().__init__(**kw)

    def start_requests(self):
        # Not dont_filter (Spider's default for start URLs): the root page must enter the
        # duplicates filter, or the first link back to "/" would crawl it a second time.
        for url in self.start_urls:
            yield Request(url)

    def parse_start_url(self, response):
        return self.parse_page(response)

    def parse_page(self, response):
        """One item per HTML page: ``{"url": str, "status": int, "title": str | None}``."""
        if not isinstance(response, HtmlResponse):
            return
        title = response.css("title::text").extract_first()
        yield {
            "url": response.url,
            "status": response.status,
            "title": title.strip() if title is not None else None,
        }

    def drop_fragments(self, links):
        """Strip ``#fragment`` from each link's URL (the link extractor keeps it)."""
        for link in links:
            link.url = urldefrag(link.url)[0]
        return links
