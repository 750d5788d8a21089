"""Pin the public names of the generic spiders, sitemap/feed utilities and contracts."""

import importlib

import pytest

EXPORTS = {
    "crawlfw.spiders.crawl": ["CrawlSpider", "Rule"],
    "crawlfw.spiders.feed": ["XMLFeedSpider", "CSVFeedSpider"],
    "crawlfw.spiders.sitemap": ["SitemapSpider"],
    "crawlfw.spiders.init": ["InitSpider"],
    "crawlfw.utils.sitemap": ["Sitemap", "sitemap_urls_from_robots"],
    "crawlfw.utils.iterators": ["xmliter", "xmliter_lxml", "csviter"],
    "crawlfw.contracts": ["Contract", "ContractsManager"],
    "crawlfw.contracts.default": [
        "UrlContract",
        "ReturnsContract",
        "ScrapesContract",
        "CallbackKeywordArgumentsContract",
        "MetadataContract",
        "MethodContract",
        "BodyContract",
        "HeaderContract",
        "CookieContract",
    ],
}


@pytest.mark.parametrize("module_name, names", sorted(EXPORTS.items()))
def test_all_is_pinned(module_name, names):
    module = importlib.import_module(module_name)
    assert sorted(module.__all__) == sorted(names)
    for name in names:
        assert getattr(module, name).__module__ == module_name


@pytest.mark.parametrize(
    "name, module_name",
    [
        ("CrawlSpider", "crawlfw.spiders.crawl"),
        ("Rule", "crawlfw.spiders.crawl"),
        ("XMLFeedSpider", "crawlfw.spiders.feed"),
        ("CSVFeedSpider", "crawlfw.spiders.feed"),
        ("SitemapSpider", "crawlfw.spiders.sitemap"),
    ],
)
def test_lazy_names_of_crawlfw_spiders(name, module_name):
    import crawlfw.spiders

    assert getattr(crawlfw.spiders, name) is getattr(importlib.import_module(module_name), name)
    assert name in crawlfw.spiders.__all__


def test_generic_spiders_are_spiders():
    from crawlfw.spiders import CrawlSpider, CSVFeedSpider, SitemapSpider, Spider, XMLFeedSpider
    from crawlfw.spiders.init import InitSpider

    for cls in (CrawlSpider, XMLFeedSpider, CSVFeedSpider, SitemapSpider, InitSpider):
        assert issubclass(cls, Spider)
