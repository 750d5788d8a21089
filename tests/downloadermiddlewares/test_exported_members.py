"""Pin the public names of the middleware modules (Scrapy 1.2's, plus crawlfw's few)."""

import importlib

import pytest

EXPORTS = {
    "crawlfw.core.flow.downloadermw": ["DownloaderMiddlewareManager", "RequestParked"],
    "crawlfw.core.spidermw": ["SpiderMiddlewareManager"],
    "crawlfw.http.cookies": [
        "IPV4_RE",
        "CookieJar",
        "PublicSuffixCookiePolicy",
        "WrappedRequest",
        "WrappedResponse",
        "is_public_suffix",
        "potential_domain_matches",
    ],
    "crawlfw.utils.gz": ["gunzip", "gzip_magic_number", "is_gzipped",
                         "DecompressionMaxSizeExceeded"],
    "crawlfw.extensions.httpcache": [
        "DummyPolicy",
        "RFC2616Policy",
        "FilesystemCacheStorage",
        "DbmCacheStorage",
        "parse_cachecontrol",
        "rfc1123_to_epoch",
    ],
    "crawlfw.downloadermiddlewares.ajaxcrawl": ["AjaxCrawlMiddleware"],
    "crawlfw.downloadermiddlewares.chunked": ["ChunkedTransferMiddleware"],
    "crawlfw.downloadermiddlewares.cookies": ["CookiesMiddleware"],
    "crawlfw.downloadermiddlewares.decompression": ["DecompressionMiddleware"],
    "crawlfw.downloadermiddlewares.defaultheaders": ["DefaultHeadersMiddleware"],
    "crawlfw.downloadermiddlewares.downloadtimeout": ["DownloadTimeoutMiddleware"],
    "crawlfw.downloadermiddlewares.httpauth": ["HttpAuthMiddleware"],
    "crawlfw.downloadermiddlewares.httpcache": ["HttpCacheMiddleware"],
    "crawlfw.downloadermiddlewares.httpcompression": [
        "HttpCompressionMiddleware",
        "ACCEPTED_ENCODINGS",
    ],
    "crawlfw.downloadermiddlewares.httpproxy": ["HttpProxyMiddleware"],
    "crawlfw.downloadermiddlewares.redirect": [
        "BaseRedirectMiddleware",
        "RedirectMiddleware",
        "MetaRefreshMiddleware",
    ],
    "crawlfw.downloadermiddlewares.retry": ["RetryMiddleware", "get_retry_request",
                                            "retry_logger", "SCRAPY_EXCEPTION_NAMES"],
    "crawlfw.downloadermiddlewares.robotstxt": ["RobotsTxtMiddleware"],
    "crawlfw.downloadermiddlewares.stats": ["DownloaderStats", "get_header_size", "get_status_size"],
    "crawlfw.downloadermiddlewares.useragent": ["UserAgentMiddleware"],
    "crawlfw.spidermiddlewares.depth": ["DepthMiddleware"],
    "crawlfw.spidermiddlewares.httperror": ["HttpError", "HttpErrorMiddleware"],
    "crawlfw.spidermiddlewares.offsite": ["OffsiteMiddleware", "URLWarning", "PortWarning"],
    "crawlfw.spidermiddlewares.referer": [
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
    ],
    "crawlfw.spidermiddlewares.urllength": ["UrlLengthMiddleware"],
}


@pytest.mark.parametrize("module_name, names", sorted(EXPORTS.items()))
def test_exported_names(module_name, names):
    module = importlib.import_module(module_name)
    assert sorted(module.__all__) == sorted(names)
    for name in names:
        assert getattr(module, name) is not None


def test_every_base_component_is_importable():
    """Each path in the *_MIDDLEWARES_BASE settings names a class that exists."""
    from crawlfw.settings import default_settings
    from crawlfw.utils.misc import load_object

    for setting in ("DOWNLOADER_MIDDLEWARES_BASE", "SPIDER_MIDDLEWARES_BASE"):
        for path in getattr(default_settings, setting):
            assert isinstance(load_object(path), type), path
