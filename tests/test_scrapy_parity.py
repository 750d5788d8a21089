"""Scrapy 1.2 public-API parity: every public ``scrapy.X`` module of Scrapy 1.2.0 exists as
``crawlfw.X`` with its public names, so a spider is ported by renaming the import.

The tables below are written out by hand from the module list and the public names of
the Scrapy 1.2.0 wheel (its 243 modules: each is in exactly one table):

- ``PROVIDED``: module -> public names (classes, functions, constants users import or
  the docs name; module internals such as ``logger`` are left out).
- ``DEPRECATED``: modules Scrapy 1.2 kept only as deprecated aliases; importing the
  crawlfw module warns (``CrawlfwDeprecationWarning``) and gives the new module's names.
- ``IMPORT_ERRORS``: modules Scrapy 1.2 kept only to raise ``ImportError`` with advice.
- ``NOT_PROVIDED``: modules crawlfw does not offer, each with the reason (Twisted
  internals, Python 2 only, ...). ``NOT_PROVIDED_NAMES`` does the same for single names.

A missing module or name fails its test; none is ever skipped (a regression of the
compatibility surface must not pass unseen).
"""

import importlib
import sys
import warnings

import pytest

from crawlfw.exceptions import CrawlfwDeprecationWarning

# --------------------------------------------------------------------------------------
# Modules and names provided
# --------------------------------------------------------------------------------------

PROVIDED = {
    "scrapy": ["__version__", "version_info", "Spider", "Request", "FormRequest", "Selector",
               "Item", "Field"],
    "scrapy.cmdline": ["execute"],
    "scrapy.resolver": ["CachingThreadedResolver"],  # crawlfw's own resolver (issue 31)
    "scrapy.commands": ["ScrapyCommand"],
    "scrapy.commands.bench": ["Command"],
    "scrapy.commands.check": ["Command"],
    "scrapy.commands.crawl": ["Command"],
    "scrapy.commands.edit": ["Command"],
    "scrapy.commands.fetch": ["Command"],
    "scrapy.commands.genspider": ["Command"],
    "scrapy.commands.list": ["Command"],
    "scrapy.commands.parse": ["Command"],
    "scrapy.commands.runspider": ["Command"],
    "scrapy.commands.settings": ["Command"],
    "scrapy.commands.shell": ["Command"],
    "scrapy.commands.startproject": ["Command"],
    "scrapy.commands.version": ["Command"],
    "scrapy.commands.view": ["Command"],
    "scrapy.contracts": ["ContractsManager", "Contract"],
    "scrapy.contracts.default": ["UrlContract", "ReturnsContract", "ScrapesContract"],
    "scrapy.core": [],
    "scrapy.core.downloader": ["DownloaderMiddlewareManager"],
    "scrapy.core.downloader.middleware": ["DownloaderMiddlewareManager"],
    "scrapy.core.scheduler": ["Scheduler"],
    "scrapy.core.scraper": ["Scraper"],
    "scrapy.core.spidermw": ["SpiderMiddlewareManager"],
    "scrapy.crawler": ["Crawler", "CrawlerRunner", "CrawlerProcess"],
    "scrapy.downloadermiddlewares": [],
    "scrapy.downloadermiddlewares.ajaxcrawl": ["AjaxCrawlMiddleware"],
    "scrapy.downloadermiddlewares.chunked": ["ChunkedTransferMiddleware"],
    "scrapy.downloadermiddlewares.cookies": ["CookiesMiddleware"],
    "scrapy.downloadermiddlewares.decompression": ["DecompressionMiddleware"],
    "scrapy.downloadermiddlewares.defaultheaders": ["DefaultHeadersMiddleware"],
    "scrapy.downloadermiddlewares.downloadtimeout": ["DownloadTimeoutMiddleware"],
    "scrapy.downloadermiddlewares.httpauth": ["HttpAuthMiddleware"],
    "scrapy.downloadermiddlewares.httpcache": ["HttpCacheMiddleware"],
    "scrapy.downloadermiddlewares.httpcompression": ["HttpCompressionMiddleware"],
    "scrapy.downloadermiddlewares.httpproxy": ["HttpProxyMiddleware"],
    "scrapy.downloadermiddlewares.redirect": ["BaseRedirectMiddleware", "RedirectMiddleware",
                                              "MetaRefreshMiddleware"],
    "scrapy.downloadermiddlewares.retry": ["RetryMiddleware"],
    "scrapy.downloadermiddlewares.robotstxt": ["RobotsTxtMiddleware"],
    "scrapy.downloadermiddlewares.stats": ["DownloaderStats"],
    "scrapy.downloadermiddlewares.useragent": ["UserAgentMiddleware"],
    "scrapy.dupefilters": ["BaseDupeFilter", "RFPDupeFilter"],
    "scrapy.exceptions": ["NotConfigured", "IgnoreRequest", "DontCloseSpider", "CloseSpider",
                          "DropItem", "NotSupported", "UsageError", "ScrapyDeprecationWarning",
                          "ContractFail"],
    "scrapy.exporters": ["BaseItemExporter", "PprintItemExporter", "PickleItemExporter",
                         "CsvItemExporter", "XmlItemExporter", "JsonLinesItemExporter",
                         "JsonItemExporter", "MarshalItemExporter", "PythonItemExporter"],
    "scrapy.extension": ["ExtensionManager"],
    "scrapy.extensions": [],
    "scrapy.extensions.closespider": ["CloseSpider"],
    "scrapy.extensions.corestats": ["CoreStats"],
    "scrapy.extensions.debug": ["StackTraceDump", "Debugger"],
    "scrapy.extensions.feedexport": ["IFeedStorage", "BlockingFeedStorage", "StdoutFeedStorage",
                                     "FileFeedStorage", "S3FeedStorage", "FTPFeedStorage",
                                     "FeedExporter"],
    "scrapy.extensions.httpcache": ["DummyPolicy", "RFC2616Policy", "DbmCacheStorage",
                                    "FilesystemCacheStorage", "parse_cachecontrol",
                                    "rfc1123_to_epoch"],
    "scrapy.extensions.logstats": ["LogStats"],
    "scrapy.extensions.memdebug": ["MemoryDebugger"],
    "scrapy.extensions.memusage": ["MemoryUsage"],
    "scrapy.extensions.spiderstate": ["SpiderState"],
    "scrapy.extensions.statsmailer": ["StatsMailer"],
    "scrapy.extensions.telnet": ["TelnetConsole", "update_telnet_vars"],
    "scrapy.extensions.throttle": ["AutoThrottle"],
    "scrapy.http": ["Headers", "Request", "FormRequest", "XmlRpcRequest", "Response",
                    "HtmlResponse", "XmlResponse", "TextResponse"],
    "scrapy.http.common": ["obsolete_setter"],
    "scrapy.http.cookies": ["CookieJar", "potential_domain_matches", "WrappedRequest",
                            "WrappedResponse"],
    "scrapy.http.headers": ["Headers"],
    "scrapy.http.request": ["Request"],
    "scrapy.http.request.form": ["FormRequest"],
    "scrapy.http.request.rpc": ["DUMPS_ARGS", "XmlRpcRequest"],
    "scrapy.http.response": ["Response"],
    "scrapy.http.response.html": ["HtmlResponse"],
    "scrapy.http.response.text": ["TextResponse"],
    "scrapy.http.response.xml": ["XmlResponse"],
    "scrapy.interfaces": ["ISpiderLoader", "ISpiderManager"],
    "scrapy.item": ["BaseItem", "Field", "ItemMeta", "DictItem", "Item"],
    "scrapy.link": ["Link"],
    "scrapy.linkextractors": ["IGNORED_EXTENSIONS", "FilteringLinkExtractor", "LinkExtractor"],
    "scrapy.linkextractors.htmlparser": ["HtmlParserLinkExtractor"],
    "scrapy.linkextractors.lxmlhtml": ["XHTML_NAMESPACE", "LxmlParserLinkExtractor",
                                       "LxmlLinkExtractor"],
    "scrapy.loader": ["ItemLoader", "XPathItemLoader"],
    "scrapy.loader.common": ["wrap_loader_context"],
    "scrapy.loader.processors": ["MapCompose", "Compose", "TakeFirst", "Identity", "SelectJmes",
                                 "Join"],
    "scrapy.logformatter": ["SCRAPEDMSG", "DROPPEDMSG", "CRAWLEDMSG", "LogFormatter"],
    "scrapy.mail": ["MailSender"],
    "scrapy.middleware": ["MiddlewareManager"],
    "scrapy.pipelines": ["ItemPipelineManager"],
    "scrapy.pipelines.files": ["FileException", "FSFilesStore", "S3FilesStore", "FilesPipeline"],
    "scrapy.pipelines.images": ["NoimagesDrop", "ImageException", "ImagesPipeline"],
    "scrapy.pipelines.media": ["MediaPipeline"],
    "scrapy.responsetypes": ["ResponseTypes", "responsetypes"],
    "scrapy.selector": ["Selector", "SelectorList", "XPathSelector", "XmlXPathSelector",
                        "HtmlXPathSelector", "XPathSelectorList"],
    "scrapy.selector.csstranslator": ["ScrapyXPathExpr", "ScrapyGenericTranslator",
                                      "ScrapyHTMLTranslator"],
    "scrapy.selector.lxmlsel": ["XPathSelector", "XmlXPathSelector", "HtmlXPathSelector",
                                "XPathSelectorList"],
    "scrapy.selector.unified": ["Selector", "SelectorList"],
    "scrapy.settings": ["SETTINGS_PRIORITIES", "get_settings_priority", "SettingsAttribute",
                        "BaseSettings", "Settings", "iter_default_settings",
                        "overridden_settings"],
    "scrapy.settings.default_settings": [
        "AJAXCRAWL_ENABLED", "AUTOTHROTTLE_ENABLED", "AUTOTHROTTLE_DEBUG",
        "AUTOTHROTTLE_MAX_DELAY", "AUTOTHROTTLE_START_DELAY", "AUTOTHROTTLE_TARGET_CONCURRENCY",
        "BOT_NAME", "CLOSESPIDER_TIMEOUT", "CLOSESPIDER_PAGECOUNT", "CLOSESPIDER_ITEMCOUNT",
        "CLOSESPIDER_ERRORCOUNT", "COMMANDS_MODULE", "COMPRESSION_ENABLED", "CONCURRENT_ITEMS",
        "CONCURRENT_REQUESTS", "CONCURRENT_REQUESTS_PER_DOMAIN", "CONCURRENT_REQUESTS_PER_IP",
        "COOKIES_ENABLED", "COOKIES_DEBUG", "DEFAULT_ITEM_CLASS", "DEFAULT_REQUEST_HEADERS",
        "DEPTH_LIMIT", "DEPTH_STATS", "DEPTH_PRIORITY", "DNSCACHE_ENABLED", "DNSCACHE_SIZE",
        "DNS_TIMEOUT", "DOWNLOAD_DELAY", "DOWNLOAD_HANDLERS", "DOWNLOAD_HANDLERS_BASE",
        "DOWNLOAD_TIMEOUT", "DOWNLOAD_MAXSIZE", "DOWNLOAD_WARNSIZE", "DOWNLOADER",
        "DOWNLOADER_CLIENT_TLS_METHOD", "DOWNLOADER_MIDDLEWARES", "DOWNLOADER_MIDDLEWARES_BASE",
        "DOWNLOADER_STATS", "DUPEFILTER_CLASS", "EXTENSIONS", "EXTENSIONS_BASE", "FEED_TEMPDIR",
        "FEED_URI", "FEED_URI_PARAMS", "FEED_FORMAT", "FEED_STORE_EMPTY", "FEED_EXPORT_ENCODING",
        "FEED_EXPORT_FIELDS", "FEED_STORAGES", "FEED_STORAGES_BASE", "FEED_EXPORTERS",
        "FEED_EXPORTERS_BASE", "FILES_STORE_S3_ACL", "HTTPCACHE_ENABLED", "HTTPCACHE_DIR",
        "HTTPCACHE_IGNORE_MISSING", "HTTPCACHE_STORAGE", "HTTPCACHE_EXPIRATION_SECS",
        "HTTPCACHE_ALWAYS_STORE", "HTTPCACHE_IGNORE_HTTP_CODES", "HTTPCACHE_IGNORE_SCHEMES",
        "HTTPCACHE_IGNORE_RESPONSE_CACHE_CONTROLS", "HTTPCACHE_DBM_MODULE", "HTTPCACHE_POLICY",
        "HTTPCACHE_GZIP", "HTTPPROXY_AUTH_ENCODING", "IMAGES_STORE_S3_ACL", "ITEM_PROCESSOR",
        "ITEM_PIPELINES", "ITEM_PIPELINES_BASE", "LOG_ENABLED", "LOG_ENCODING", "LOG_FORMATTER",
        "LOG_FORMAT", "LOG_DATEFORMAT", "LOG_STDOUT", "LOG_LEVEL", "LOG_FILE", "SCHEDULER_DEBUG",
        "LOGSTATS_INTERVAL", "MAIL_HOST", "MAIL_PORT", "MAIL_FROM", "MAIL_PASS", "MAIL_USER",
        "MEMDEBUG_ENABLED", "MEMDEBUG_NOTIFY", "MEMUSAGE_CHECK_INTERVAL_SECONDS",
        "MEMUSAGE_ENABLED", "MEMUSAGE_LIMIT_MB", "MEMUSAGE_NOTIFY_MAIL", "MEMUSAGE_REPORT",
        "MEMUSAGE_WARNING_MB", "METAREFRESH_ENABLED", "METAREFRESH_MAXDELAY", "NEWSPIDER_MODULE",
        "RANDOMIZE_DOWNLOAD_DELAY", "REDIRECT_ENABLED", "REDIRECT_MAX_TIMES",
        "REDIRECT_PRIORITY_ADJUST", "REFERER_ENABLED", "RETRY_ENABLED", "RETRY_TIMES",
        "RETRY_HTTP_CODES", "RETRY_PRIORITY_ADJUST", "ROBOTSTXT_OBEY", "SCHEDULER",
        "SCHEDULER_DISK_QUEUE", "SCHEDULER_MEMORY_QUEUE", "SCHEDULER_PRIORITY_QUEUE",
        "SPIDER_LOADER_CLASS", "SPIDER_MIDDLEWARES", "SPIDER_MIDDLEWARES_BASE", "SPIDER_MODULES",
        "STATS_CLASS", "STATS_DUMP", "STATSMAILER_RCPTS", "TEMPLATES_DIR", "URLLENGTH_LIMIT",
        "USER_AGENT", "TELNETCONSOLE_ENABLED", "SPIDER_CONTRACTS", "SPIDER_CONTRACTS_BASE",
    ],
    "scrapy.settings.deprecated": ["DEPRECATED_SETTINGS", "check_deprecated_settings"],
    "scrapy.shell": ["Shell", "inspect_response"],
    "scrapy.signalmanager": ["SignalManager"],
    "scrapy.signals": ["engine_started", "engine_stopped", "spider_opened", "spider_idle",
                       "spider_closed", "spider_error", "request_scheduled", "request_dropped",
                       "response_received", "response_downloaded", "item_scraped",
                       "item_dropped", "stats_spider_opened", "stats_spider_closing",
                       "stats_spider_closed", "item_passed", "request_received"],
    "scrapy.spiderloader": ["SpiderLoader"],
    "scrapy.spidermiddlewares": [],
    "scrapy.spidermiddlewares.depth": ["DepthMiddleware"],
    "scrapy.spidermiddlewares.httperror": ["HttpError", "HttpErrorMiddleware"],
    "scrapy.spidermiddlewares.offsite": ["OffsiteMiddleware"],
    "scrapy.spidermiddlewares.referer": ["RefererMiddleware"],
    "scrapy.spidermiddlewares.urllength": ["UrlLengthMiddleware"],
    "scrapy.spiders": ["Spider", "BaseSpider", "CrawlSpider", "Rule", "XMLFeedSpider",
                       "CSVFeedSpider", "SitemapSpider"],
    "scrapy.spiders.crawl": ["identity", "Rule", "CrawlSpider"],
    "scrapy.spiders.feed": ["XMLFeedSpider", "CSVFeedSpider"],
    "scrapy.spiders.init": ["InitSpider"],
    "scrapy.spiders.sitemap": ["SitemapSpider", "regex", "iterloc"],
    "scrapy.squeues": ["PickleFifoDiskQueue", "PickleLifoDiskQueue", "MarshalFifoDiskQueue",
                       "MarshalLifoDiskQueue", "FifoMemoryQueue", "LifoMemoryQueue"],
    "scrapy.statscollectors": ["StatsCollector", "MemoryStatsCollector", "DummyStatsCollector"],
    "scrapy.templates.project.module": [],
    "scrapy.templates.project.module.spiders": [],
    "scrapy.utils": [],
    "scrapy.utils.boto": ["is_botocore"],
    "scrapy.utils.conf": ["build_component_list", "arglist_to_dict", "closest_scrapy_cfg",
                          "init_env", "get_config", "get_sources"],
    "scrapy.utils.console": ["DEFAULT_PYTHON_SHELLS", "get_shell_embed_func",
                             "start_python_console"],
    "scrapy.utils.datatypes": ["MultiValueDictKeyError", "MultiValueDict", "SiteNode",
                               "CaselessDict", "MergeDict", "LocalCache"],
    "scrapy.utils.decorators": ["deprecated"],
    "scrapy.utils.deprecate": ["attribute", "create_deprecated_class", "DEPRECATION_RULES",
                               "update_classpath"],
    "scrapy.utils.display": ["pformat", "pprint"],
    "scrapy.utils.engine": ["get_engine_status", "format_engine_status", "print_engine_status"],
    "scrapy.utils.ftp": ["ftp_makedirs_cwd"],
    "scrapy.utils.gz": ["gunzip", "is_gzipped"],
    "scrapy.utils.http": ["decode_chunked_transfer", "basic_auth_header", "headers_raw_to_dict",
                          "headers_dict_to_raw"],
    "scrapy.utils.httpobj": ["urlparse_cached"],
    "scrapy.utils.iterators": ["xmliter", "xmliter_lxml", "csviter"],
    "scrapy.utils.job": ["job_dir"],
    "scrapy.utils.log": ["failure_to_exc_info", "TopLevelFormatter", "DEFAULT_LOGGING",
                         "configure_logging", "log_scrapy_info", "StreamLogger",
                         "LogCounterHandler", "logformatter_adapter"],
    "scrapy.utils.markup": ["remove_tags", "replace_entities", "replace_escape_chars",
                            "remove_tags_with_content", "remove_comments", "get_base_url",
                            "get_meta_refresh", "unquote_markup", "replace_tags"],
    # Scrapy 1.2's Deferred helpers, on what crawlfw returns (issue 29)
    "scrapy.utils.defer": ["defer_fail", "defer_succeed", "defer_result", "mustbe_deferred",
                           "parallel", "process_chain", "process_chain_both",
                           "process_parallel", "iter_errback"],
    "scrapy.utils.reactor": ["listen_tcp", "CallLaterOnce"],
    "scrapy.utils.misc": ["arg_to_iter", "load_object", "walk_modules", "extract_regex",
                          "md5sum", "rel_has_nofollow"],
    "scrapy.utils.multipart": ["encode_multipart"],
    "scrapy.utils.ossignal": ["signal_names", "install_shutdown_handlers"],
    "scrapy.utils.project": ["ENVVAR", "DATADIR_CFG_SECTION", "inside_project",
                             "project_data_dir", "data_path", "get_project_settings"],
    "scrapy.utils.python": ["flatten", "iflatten", "is_listlike", "unique", "str_to_unicode",
                            "unicode_to_str", "to_unicode", "to_bytes", "to_native_str",
                            "re_rsearch", "memoizemethod_noargs", "isbinarytext",
                            "binary_is_text", "get_func_args", "get_spec", "equal_attributes",
                            "WeakKeyCache", "stringify_dict", "is_writable", "setattr_default",
                            "retry_on_eintr", "without_none_values"],
    "scrapy.utils.reqser": ["request_to_dict", "request_from_dict"],
    "scrapy.utils.request": ["request_fingerprint", "request_authenticate", "request_httprepr",
                             "referer_str"],
    "scrapy.utils.response": ["body_or_str", "get_base_url", "get_meta_refresh",
                              "response_status_message", "response_httprepr", "open_in_browser"],
    "scrapy.utils.serialize": ["ScrapyJSONEncoder", "ScrapyJSONDecoder"],
    "scrapy.utils.sitemap": ["Sitemap", "sitemap_urls_from_robots"],
    "scrapy.utils.spider": ["iterate_spider_output", "iter_spider_classes",
                            "spidercls_for_request", "DefaultSpider"],
    "scrapy.utils.template": ["render_templatefile", "CAMELCASE_INVALID_CHARS",
                              "string_camelcase"],
    "scrapy.utils.test": ["assert_aws_environ", "skip_if_no_boto", "get_s3_content_and_delete",
                          "get_crawler", "get_pythonpath", "get_testenv", "assert_samelines"],
    "scrapy.utils.trackref": ["NoneType", "live_refs", "object_ref", "format_live_refs",
                              "print_live_refs", "get_oldest", "iter_all"],
    "scrapy.utils.url": ["url_is_from_any_domain", "url_is_from_spider", "url_has_any_extension",
                         "parse_url", "escape_ajax", "add_http_if_no_scheme", "guess_scheme",
                         # re-exported from w3lib.url, as Scrapy 1.2 does
                         "canonicalize_url", "safe_url_string", "safe_download_url", "is_url",
                         "add_or_replace_parameter", "url_query_parameter", "url_query_cleaner",
                         "file_uri_to_path", "path_to_file_uri", "any_to_uri", "urljoin_rfc"],
}

# --------------------------------------------------------------------------------------
# Deprecated aliases (Scrapy 1.2 warns on import too) -> the module they stand for, and
# the names they must give (None: the target's names listed in PROVIDED)
# --------------------------------------------------------------------------------------

_CONTRIB = {
    "closespider": "extensions.closespider", "corestats": "extensions.corestats",
    "debug": "extensions.debug", "exporter": "exporters", "feedexport": "extensions.feedexport",
    "httpcache": "extensions.httpcache", "linkextractors": "linkextractors",
    "linkextractors.htmlparser": "linkextractors.htmlparser",
    "linkextractors.lxmlhtml": "linkextractors.lxmlhtml", "loader": "loader",
    "loader.common": "loader.common", "loader.processor": "loader.processors",
    "logstats": "extensions.logstats", "memdebug": "extensions.memdebug",
    "memusage": "extensions.memusage", "pipeline": "pipelines",
    "pipeline.files": "pipelines.files", "pipeline.images": "pipelines.images",
    "pipeline.media": "pipelines.media", "spiders": "spiders", "spiders.crawl": "spiders.crawl",
    "spiders.feed": "spiders.feed", "spiders.init": "spiders.init",
    "spiders.sitemap": "spiders.sitemap", "spiderstate": "extensions.spiderstate",
    "statsmailer": "extensions.statsmailer", "throttle": "extensions.throttle",
}
_CONTRIB.update({f"downloadermiddleware.{m}": f"downloadermiddlewares.{m}" for m in (
    "ajaxcrawl", "chunked", "cookies", "decompression", "defaultheaders", "downloadtimeout",
    "httpauth", "httpcache", "httpcompression", "httpproxy", "redirect", "retry", "robotstxt",
    "stats", "useragent")})
_CONTRIB.update({f"spidermiddleware.{m}": f"spidermiddlewares.{m}" for m in (
    "depth", "httperror", "offsite", "referer", "urllength")})

DEPRECATED = {
    "scrapy.command": ("scrapy.commands", []),
    "scrapy.conf": ("crawler.settings", []),
    "scrapy.dupefilter": ("scrapy.dupefilters", None),
    "scrapy.linkextractor": ("scrapy.linkextractors", None),
    "scrapy.log": ("logging", ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL", "SILENT",
                               "level_names", "msg", "err"]),
    "scrapy.spider": ("scrapy.spiders", None),
    "scrapy.spidermanager": ("scrapy.spiderloader", ["SpiderManager"]),
    "scrapy.squeue": ("scrapy.squeues", None),
    "scrapy.statscol": ("scrapy.statscollectors", None),
    "scrapy.utils.decorator": ("scrapy.utils.decorators", None),
    "scrapy.contrib_exp.downloadermiddleware.decompression": (
        "scrapy.downloadermiddlewares.decompression", ["DecompressionMiddleware"]),
    "scrapy.contrib_exp.iterators": ("scrapy.utils.iterators", ["xmliter_lxml"]),
    **{f"scrapy.contrib.{old}": (f"scrapy.{new}", None) for old, new in _CONTRIB.items()},
}

#: Packages holding deprecated modules; empty in Scrapy 1.2, importing them does not warn.
DEPRECATED_PACKAGES = ["scrapy.contrib", "scrapy.contrib.downloadermiddleware",
                       "scrapy.contrib.spidermiddleware", "scrapy.contrib_exp",
                       "scrapy.contrib_exp.downloadermiddleware"]

# --------------------------------------------------------------------------------------
# Modules kept only to raise ImportError with advice
# --------------------------------------------------------------------------------------

IMPORT_ERRORS = {
    "scrapy.project": "from_crawler",
    "scrapy.stats": "crawler.stats",
}

# --------------------------------------------------------------------------------------
# Not provided
# --------------------------------------------------------------------------------------

_TWISTED_HANDLERS = (
    "Twisted download handlers: crawlfw downloads with pycurl (crawlfw.core.transport.curl, "
    "crawlfw.actors.downloader); DOWNLOAD_HANDLERS names those"
)

NOT_PROVIDED = {
    "scrapy._monkeypatches": "Python 2 / Twisted monkeypatches, nothing to patch here",
    "scrapy.core.downloader.contextfactory": "Twisted TLS context factories; curl does TLS",
    "scrapy.core.downloader.handlers": _TWISTED_HANDLERS,
    "scrapy.core.downloader.handlers.file": _TWISTED_HANDLERS,
    "scrapy.core.downloader.handlers.ftp": _TWISTED_HANDLERS,
    "scrapy.core.downloader.handlers.http": _TWISTED_HANDLERS,
    "scrapy.core.downloader.handlers.http10": _TWISTED_HANDLERS,
    "scrapy.core.downloader.handlers.http11": _TWISTED_HANDLERS,
    "scrapy.core.downloader.handlers.s3": _TWISTED_HANDLERS,
    "scrapy.core.downloader.tls": "Twisted TLS helpers; curl does TLS",
    "scrapy.core.downloader.webclient": "Twisted HTTP/1.0 client; curl downloads",
    "scrapy.core.engine": (
        "the Twisted ExecutionEngine is replaced by the Engine actor (crawlfw.actors.engine); "
        "crawler.engine is crawlfw.crawler.EngineFacade (crawl, schedule, download, "
        "close_spider)"),
    "scrapy.telnet": "deprecated alias of scrapy.extensions.telnet (Twisted conch)",
    "scrapy.linkextractors.sgml": (
        "Python 2 only in Scrapy 1.2 (sgmllib) and deprecated; use LinkExtractor"),
    "scrapy.linkextractors.regex": (
        "Python 2 only in Scrapy 1.2 (built on the sgml extractor); use LinkExtractor"),
    "scrapy.contrib.linkextractors.sgml": "deprecated alias of scrapy.linkextractors.sgml",
    "scrapy.contrib.linkextractors.regex": "deprecated alias of scrapy.linkextractors.regex",
    "scrapy.utils.benchserver": (
        "Twisted web server for `bench`; the bench command runs its own local link server"),
    "scrapy.utils.signal": (
        "pydispatch helpers over a global dispatcher; crawlfw's SignalManager "
        "(crawler.signals.send_catch_log, disconnect_all) has no global dispatcher"),
    "scrapy.utils.testproc": "Twisted trial helpers for process tests",
    "scrapy.utils.testsite": "Twisted trial helpers serving a test site",
    "scrapy.xlib": "bundled pydispatch and Twisted backports",
    "scrapy.xlib.pydispatch": "bundled pydispatch; crawlfw.signalmanager dispatches signals",
    "scrapy.xlib.tx": "bundled Twisted backports",
    "scrapy.xlib.tx._newclient": "bundled Twisted backports",
    "scrapy.xlib.tx.client": "bundled Twisted backports",
    "scrapy.xlib.tx.endpoints": "bundled Twisted backports",
    "scrapy.xlib.tx.interfaces": "bundled Twisted backports",
    "scrapy.xlib.tx.iweb": "bundled Twisted backports",
}

NOT_PROVIDED_NAMES = {
    ("scrapy", "twisted_version"): "no Twisted",
    ("scrapy.core.downloader", "Downloader"): _TWISTED_HANDLERS,
    ("scrapy.core.downloader", "Slot"): (
        "the download slots are crawlfw.core.transport.slot.DownloadSlot, in the downloader "
        "actors"),
    ("scrapy.core.scraper", "Slot"): (
        "the Scraper's count of responses being scraped (SCRAPER_SLOT_MAX_ACTIVE_SIZE) is "
        "kept by the Engine actor; the Pipeline actor runs the item pipelines"),
    ("scrapy.extensions.feedexport", "SpiderSlot"): (
        "internal state of the FeedExporter extension; feeds are written by the Exporter "
        "actor"),
    ("scrapy.extensions.httpcache", "LeveldbCacheStorage"): (
        "needs the unmaintained py-leveldb binding; use FilesystemCacheStorage or "
        "DbmCacheStorage"),
    ("scrapy.settings", "CrawlerSettings"): (
        "Scrapy 0.24's settings class (overrides/defaults), deprecated since 1.0; use Settings"),
    ("scrapy.settings.default_settings", "DOWNLOADER_HTTPCLIENTFACTORY"): "Twisted client",
    ("scrapy.spiders", "ObsoleteClass"): "placeholder raising on use since Scrapy 0.x",
    ("scrapy.spiders", "spiders"): (
        "obsolete placeholder; use CrawlerRunner.spider_loader"),
}

#: Number of modules in the Scrapy 1.2.0 wheel; every one is in exactly one table.
SCRAPY_12_MODULE_COUNT = 243


def crawlfw_name(scrapy_module: str) -> str:
    return "crawlfw" + scrapy_module[len("scrapy"):]


def fresh_import(module: str):
    """Import ``module`` anew (so that its import-time warning is raised again)."""
    sys.modules.pop(module, None)
    return importlib.import_module(module)


# --------------------------------------------------------------------------------------
# The tables themselves
# --------------------------------------------------------------------------------------


def test_tables_cover_every_scrapy_module_once():
    tables = [PROVIDED, DEPRECATED, DEPRECATED_PACKAGES, IMPORT_ERRORS, NOT_PROVIDED]
    modules = [m for table in tables for m in table]
    assert len(modules) == len(set(modules)), "a module is in two tables"
    assert len(modules) == SCRAPY_12_MODULE_COUNT
    assert all(m == "scrapy" or m.startswith("scrapy.") for m in modules)


def test_not_provided_names_are_not_also_listed():
    for module, name in NOT_PROVIDED_NAMES:
        assert name not in PROVIDED[module]


# --------------------------------------------------------------------------------------
# Provided modules
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("scrapy_module", sorted(PROVIDED))
def test_module_has_public_names(scrapy_module):
    module_name = crawlfw_name(scrapy_module)
    module = importlib.import_module(module_name)  # ImportError: the module is missing
    missing = [name for name in PROVIDED[scrapy_module] if not hasattr(module, name)]
    assert not missing, f"{module_name} lacks {missing} (Scrapy 1.2's {scrapy_module} has them)"


def test_a_missing_name_fails_and_is_never_skipped(monkeypatch):
    import crawlfw.spiders.crawl

    monkeypatch.delattr(crawlfw.spiders.crawl, "Rule")
    with pytest.raises(AssertionError, match=r"lacks \['Rule'\]"):  # not pytest.skip's Skipped
        test_module_has_public_names("scrapy.spiders.crawl")


@pytest.mark.parametrize("scrapy_module, name", sorted(NOT_PROVIDED_NAMES))
def test_names_not_provided(scrapy_module, name):
    module = importlib.import_module(crawlfw_name(scrapy_module))
    assert not hasattr(module, name), (
        f"{crawlfw_name(scrapy_module)}.{name} exists now: move it from NOT_PROVIDED_NAMES "
        "to PROVIDED"
    )


@pytest.mark.parametrize("scrapy_module", sorted(NOT_PROVIDED))
def test_modules_not_provided(scrapy_module, restore_modules):
    module_name = crawlfw_name(scrapy_module)
    with warnings.catch_warnings(), pytest.raises(ModuleNotFoundError):
        warnings.simplefilter("ignore", CrawlfwDeprecationWarning)  # a deprecated parent
        importlib.import_module(module_name)


@pytest.mark.parametrize("scrapy_module, advice", sorted(IMPORT_ERRORS.items()))
def test_obsolete_modules_raise_with_advice(scrapy_module, advice):
    module_name = crawlfw_name(scrapy_module)
    sys.modules.pop(module_name, None)
    with pytest.raises(ImportError, match="obsolete") as excinfo:
        importlib.import_module(module_name)
    assert advice in str(excinfo.value)
    assert not isinstance(excinfo.value, ModuleNotFoundError)


# --------------------------------------------------------------------------------------
# Deprecated aliases
# --------------------------------------------------------------------------------------


@pytest.fixture
def restore_modules():
    """Put ``sys.modules`` entries of crawlfw back as they were after the test."""
    saved = {k: v for k, v in sys.modules.items() if k.startswith("crawlfw")}
    yield
    for name in [k for k in sys.modules if k.startswith("crawlfw") and k not in saved]:
        del sys.modules[name]
    sys.modules.update(saved)


@pytest.mark.parametrize("scrapy_module", sorted(DEPRECATED))
def test_deprecated_module_warns_and_gives_the_new_names(scrapy_module, restore_modules):
    target, names = DEPRECATED[scrapy_module]
    module_name = crawlfw_name(scrapy_module)
    target_name = crawlfw_name(target) if target.startswith("scrapy") else target
    with pytest.warns(CrawlfwDeprecationWarning) as record:
        module = fresh_import(module_name)
    # a parent alias (crawlfw.contrib.pipeline for ...pipeline.files) warns too
    [message] = [str(r.message) for r in record if f"`{module_name}`" in str(r.message)]
    if target.startswith("scrapy"):
        assert f"`{target_name}`" in message
    if names is None:
        names = PROVIDED[target]
    missing = [n for n in names if not hasattr(module, n)]
    assert not missing, f"{module_name} lacks {missing}"
    if target.startswith("scrapy"):
        new = importlib.import_module(target_name)
        for name in names:
            if hasattr(new, name):
                assert getattr(module, name) is getattr(new, name)


@pytest.mark.parametrize("scrapy_module", DEPRECATED_PACKAGES)
def test_deprecated_packages_import_quietly(scrapy_module, restore_modules):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module = fresh_import(crawlfw_name(scrapy_module))
    assert module.__name__ == crawlfw_name(scrapy_module)


@pytest.mark.parametrize("module", ["crawlfw.contrib.spiders", "crawlfw.spider",
                                    "crawlfw.spidermanager", "crawlfw.log"])
def test_deprecated_warning_points_at_the_importing_line(module, restore_modules):
    sys.modules.pop(module, None)
    with pytest.warns(CrawlfwDeprecationWarning) as record:
        exec(f"import {module}", {})  # noqa: S102 - the importing line is this exec's
    assert [r.filename for r in record] == ["<string>"]


def test_ported_spider_imports(restore_modules):
    """A Scrapy 1.2 spider module, imports renamed, imports and defines its spider."""
    source = '''
import crawlfw
from crawlfw.spiders import CrawlSpider, Rule
from crawlfw.linkextractors import LinkExtractor
from crawlfw.loader import ItemLoader
from crawlfw.loader.processors import TakeFirst, MapCompose
from crawlfw.http import Request, FormRequest
from crawlfw.exceptions import CloseSpider, DropItem
from crawlfw.pipelines.images import ImagesPipeline
from crawlfw.utils.project import get_project_settings
from crawlfw.utils.response import open_in_browser, get_base_url
from crawlfw.utils.misc import load_object, arg_to_iter
from crawlfw.utils.python import to_bytes, to_unicode
from crawlfw.utils.request import request_fingerprint
from crawlfw.utils.log import configure_logging
from crawlfw.utils.url import canonicalize_url
from crawlfw.crawler import CrawlerProcess

class Product(crawlfw.Item):
    name = crawlfw.Field()
    image_urls = crawlfw.Field()
    images = crawlfw.Field()

class ShopSpider(CrawlSpider):
    name = "shop"
    rules = (Rule(LinkExtractor(allow=r"/item/"), callback="parse_item"),)

    def parse_item(self, response):
        loader = ItemLoader(item=Product(), response=response)
        loader.default_output_processor = TakeFirst()
        loader.add_css("name", "h1::text", MapCompose(str.strip))
        return loader.load_item()
'''
    namespace = {}
    exec(compile(source, "shop_spider.py", "exec"), namespace)
    assert namespace["ShopSpider"].name == "shop"


# --------------------------------------------------------------------------------------
# Scrapy 2 additions (issue 17: selectors, items and loaders, requests, components): beyond Scrapy 1.2's 243 modules, so outside the tables
# above. Module -> names, or "module:Class" -> attributes of that class.
# --------------------------------------------------------------------------------------

SCRAPY_2_PROVIDED = {
    "scrapy.__main__": [],  # python -m crawlfw
    "scrapy.selector.unified:Selector": ["jmespath", "drop", "get", "getall", "attrib"],
    "scrapy.selector.unified:SelectorList": ["jmespath", "drop", "get", "getall", "attrib"],
    "scrapy.http.response.text:TextResponse": ["json", "jmespath"],
    "scrapy.http.request:Request": ["from_curl", "to_dict"],
    "scrapy.http": ["JsonRequest"],
    "scrapy.http.request.json_request": ["JsonRequest"],
    "scrapy.exceptions": ["StopDownload"],
    "scrapy.signals": ["headers_received", "bytes_received", "item_error",
                       "request_reached_downloader", "request_left_downloader"],
    "scrapy.utils.request": ["fingerprint", "RequestFingerprinter", "request_from_dict",
                             "request_to_curl"],
    "scrapy.utils.curl": ["curl_to_request_kwargs"],
    "scrapy.contracts.default": ["CallbackKeywordArgumentsContract", "MetadataContract"],
}


@pytest.mark.parametrize("target", sorted(SCRAPY_2_PROVIDED))
def test_scrapy_2_names(target):
    module_name, _, cls_name = target.partition(":")
    obj = importlib.import_module(crawlfw_name(module_name))
    if cls_name:
        obj = getattr(obj, cls_name)
    missing = [name for name in SCRAPY_2_PROVIDED[target] if not hasattr(obj, name)]
    assert not missing, f"{crawlfw_name(target)} lacks {missing} (Scrapy 2.19 has them)"


def test_scrapy2_request_and_item_helpers():
    import itemloaders.processors
    from itemadapter import ItemAdapter

    import crawlfw
    import crawlfw.loader.processors as processors
    from crawlfw.loader import ItemLoader

    assert callable(crawlfw.Request.from_curl) and callable(crawlfw.Request.to_dict)
    assert ItemAdapter.is_item(crawlfw.Item())
    assert issubclass(ItemLoader, __import__("itemloaders").ItemLoader)
    assert processors.TakeFirst is itemloaders.processors.TakeFirst
