"""Misspelled setting names: one WARNING naming the setting a name was likely meant to be.

Settings are looked up by name, so ``-s CONCURENT_REQUESTS=8`` or ``CONCURENT_REQUESTS =
8`` in a project's ``settings.py`` is silently ignored by Scrapy. crawlfw warns, once per
name and process, before a crawl starts (:func:`warn_misspelled_settings`, called by
:class:`~crawlfw.crawler.Crawler`)::

    Setting 'CONCURENT_REQUESTS' (set with -s on the command line) is not a known
    setting: did you mean 'CONCURRENT_REQUESTS'? (it is ignored)

**The rule.** A name set with ``-s``, in the project's settings or in a spider's
``custom_settings`` is checked when it is not a known setting. Known settings are
crawlfw's defaults (:mod:`crawlfw.settings.default_settings`), the settings crawlfw reads
without a default (:data:`READ_WITHOUT_DEFAULT`) and every setting name of Scrapy 2.19
and 1.2.3 (:data:`SCRAPY_SETTINGS`: their default settings and the settings their docs
describe), so a Scrapy project's settings are never reported. An unknown name is reported
only when it is a near miss of a known name ``K``:

1. it differs from ``K`` only by underscores (``JOB_DIR`` for ``JOBDIR``), or only by
   case (``-s download_delay=2``); or
2. it has the same ``_``-separated words as ``K`` except one or two, each of which is one
   edit (a letter added, dropped, changed, or two neighbours swapped) from ``K``'s word,
   and that word of ``K`` has at least 4 letters (``CONCURENT_REQUESTS``,
   ``DOWNLOAD_DEALY``, ``ITEM_PIPELINE``).

So a name far from every known one (a project's own ``MY_SETTING``, ``MONGO_URI``, a
plugin's ``SPLASH_URL`` or ``ZYTE_API_KEY``) is never reported; nor is a short word
changed in a known name (``HTTPCACHE_DB`` is not ``HTTPCACHE_DIR``: a different word,
not a typo), a name that only shares a known name's prefix (``SPLASH_COOKIES_DEBUG``,
``SCHEDULER_PERSIST``), or a known name with an ``S`` added at the end (``USER_AGENTS``,
a list of user agents many projects keep for their own middleware).
"""

import logging

from crawlfw.settings import SETTINGS_PRIORITIES, default_settings

__all__ = ["READ_WITHOUT_DEFAULT", "SCRAPY_SETTINGS", "known_settings", "likely_setting",
           "warn_misspelled_settings"]

logger = logging.getLogger("crawlfw.settings")

#: Every setting name of Scrapy 2.19 (``dir(scrapy.settings.default_settings)``, and the
#: ``.. setting::`` entries of its docs) and of Scrapy 1.2.3's default settings.
SCRAPY_SETTINGS = frozenset({
    "ADDONS", "AJAXCRAWL_ENABLED", "ASYNCIO_EVENT_LOOP", "AUTOTHROTTLE_DEBUG",
    "AUTOTHROTTLE_ENABLED", "AUTOTHROTTLE_MAX_DELAY", "AUTOTHROTTLE_START_DELAY",
    "AUTOTHROTTLE_TARGET_CONCURRENCY", "AWS_ACCESS_KEY_ID", "AWS_ENDPOINT_URL",
    "AWS_MAX_POOL_CONNECTIONS", "AWS_REGION_NAME", "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN", "AWS_USE_SSL", "AWS_VERIFY", "BOT_NAME",
    "CLOSESPIDER_ERRORCOUNT", "CLOSESPIDER_ITEMCOUNT", "CLOSESPIDER_PAGECOUNT",
    "CLOSESPIDER_PAGECOUNT_NO_ITEM", "CLOSESPIDER_TIMEOUT",
    "CLOSESPIDER_TIMEOUT_NO_ITEM", "COMMANDS_MODULE", "COMPRESSION_ENABLED",
    "CONCURRENT_ITEMS", "CONCURRENT_REQUESTS", "CONCURRENT_REQUESTS_PER_DOMAIN",
    "CONCURRENT_REQUESTS_PER_IP", "COOKIES_DEBUG", "COOKIES_ENABLED",
    "CRAWLSPIDER_FOLLOW_LINKS", "DEFAULT_DROPITEM_LOG_LEVEL", "DEFAULT_ITEM_CLASS",
    "DEFAULT_REQUEST_HEADERS", "DEPTH_LIMIT", "DEPTH_PRIORITY", "DEPTH_STATS",
    "DEPTH_STATS_VERBOSE", "DNSCACHE_ENABLED", "DNSCACHE_SIZE", "DNS_RESOLVER",
    "DNS_TIMEOUT", "DOWNLOADER", "DOWNLOADER_CLIENTCONTEXTFACTORY",
    "DOWNLOADER_CLIENT_TLS_CIPHERS", "DOWNLOADER_CLIENT_TLS_METHOD",
    "DOWNLOADER_CLIENT_TLS_VERBOSE_LOGGING", "DOWNLOADER_HTTPCLIENTFACTORY",
    "DOWNLOADER_MIDDLEWARES", "DOWNLOADER_MIDDLEWARES_BASE", "DOWNLOADER_STATS",
    "DOWNLOAD_BIND_ADDRESS", "DOWNLOAD_DELAY", "DOWNLOAD_DELAY_JITTER",
    "DOWNLOAD_FAIL_ON_DATALOSS", "DOWNLOAD_HANDLERS", "DOWNLOAD_HANDLERS_BASE",
    "DOWNLOAD_MAXSIZE", "DOWNLOAD_SLOTS", "DOWNLOAD_TIMEOUT",
    "DOWNLOAD_TLS_MAX_VERSION", "DOWNLOAD_TLS_MIN_VERSION",
    "DOWNLOAD_VERIFY_CERTIFICATES", "DOWNLOAD_WARNSIZE", "DUPEFILTER_CLASS",
    "DUPEFILTER_DEBUG", "EDITOR", "EXTENSIONS", "EXTENSIONS_BASE", "FEEDS",
    "FEED_EXPORTERS", "FEED_EXPORTERS_BASE", "FEED_EXPORT_BATCH_ITEM_COUNT",
    "FEED_EXPORT_ENCODING", "FEED_EXPORT_FIELDS", "FEED_EXPORT_INDENT", "FEED_FORMAT",
    "FEED_STORAGES", "FEED_STORAGES_BASE", "FEED_STORAGE_FTP_ACTIVE",
    "FEED_STORAGE_GCS_ACL", "FEED_STORAGE_S3_ACL", "FEED_STORE_EMPTY", "FEED_TEMPDIR",
    "FEED_URI", "FEED_URI_PARAMS", "FILES_EXPIRES", "FILES_RESULT_FIELD", "FILES_STORE",
    "FILES_STORE_GCS_ACL", "FILES_STORE_S3_ACL", "FILES_URLS_FIELD",
    "FORCE_CRAWLER_PROCESS", "FTP_PASSIVE_MODE", "FTP_PASSWORD", "FTP_USER",
    "GCS_PROJECT_ID", "HTTP2_MAX_FRAME_SIZE", "HTTPAUTH_DOMAIN", "HTTPAUTH_PASS",
    "HTTPAUTH_USER", "HTTPCACHE_ALWAYS_STORE", "HTTPCACHE_DBM_MODULE", "HTTPCACHE_DIR",
    "HTTPCACHE_ENABLED", "HTTPCACHE_EXPIRATION_SECS", "HTTPCACHE_GZIP",
    "HTTPCACHE_IGNORE_HTTP_CODES", "HTTPCACHE_IGNORE_MISSING",
    "HTTPCACHE_IGNORE_RESPONSE_CACHE_CONTROLS", "HTTPCACHE_IGNORE_SCHEMES",
    "HTTPCACHE_POLICY", "HTTPCACHE_STORAGE", "HTTPERROR_ALLOWED_CODES",
    "HTTPERROR_ALLOW_ALL", "HTTPPROXY_AUTH_ENCODING", "HTTPPROXY_ENABLED",
    "HTTPX_HTTP2_ENABLED", "IMAGES_EXPIRES", "IMAGES_MIN_HEIGHT", "IMAGES_MIN_WIDTH",
    "IMAGES_RESULT_FIELD", "IMAGES_STORE", "IMAGES_STORE_GCS_ACL",
    "IMAGES_STORE_S3_ACL", "IMAGES_THUMBS", "IMAGES_URLS_FIELD", "ITEM_PIPELINES",
    "ITEM_PIPELINES_BASE", "ITEM_PROCESSOR", "JOBDIR", "LOGSTATS_INTERVAL", "LOG_COLOR",
    "LOG_DATEFORMAT", "LOG_ENABLED", "LOG_ENCODING", "LOG_FILE", "LOG_FILE_APPEND",
    "LOG_FORMAT", "LOG_FORMATTER", "LOG_INSTALL_ROOT_HANDLER", "LOG_LEVEL",
    "LOG_SHORT_NAMES", "LOG_STDOUT", "LOG_VERSIONS", "MAIL_FROM", "MAIL_HOST",
    "MAIL_PASS", "MAIL_PORT", "MAIL_SSL", "MAIL_TLS", "MAIL_USER",
    "MEDIA_ALLOW_REDIRECTS", "MEMDEBUG_ENABLED", "MEMDEBUG_NOTIFY",
    "MEMUSAGE_CHECK_INTERVAL_SECONDS", "MEMUSAGE_ENABLED", "MEMUSAGE_LIMIT_MB",
    "MEMUSAGE_NOTIFY_MAIL", "MEMUSAGE_REPORT", "MEMUSAGE_WARNING_MB",
    "METAREFRESH_ENABLED", "METAREFRESH_IGNORE_TAGS", "METAREFRESH_MAXDELAY",
    "NEWSPIDER_MODULE", "PERIODIC_LOG_DELTA", "PERIODIC_LOG_STATS",
    "PERIODIC_LOG_TIMING_ENABLED", "RANDOMIZE_DOWNLOAD_DELAY",
    "REACTOR_THREADPOOL_MAXSIZE", "REDIRECT_ENABLED", "REDIRECT_MAX_TIMES",
    "REDIRECT_PRIORITY_ADJUST", "REFERER_ENABLED", "REFERRER_POLICIES",
    "REFERRER_POLICY", "REMOTE_CONTROL_ENABLED", "REMOTE_CONTROL_JOBS_DIR",
    "REMOTE_CONTROL_OUTPUT_MAX_BYTES", "REMOTE_CONTROL_TIMEOUT_DEFAULT",
    "REMOTE_CONTROL_TIMEOUT_MAX", "REMOTE_CONTROL_TRACEBACK_MAX_BYTES",
    "REQUEST_FINGERPRINTER_CLASS", "RETRY_ENABLED", "RETRY_EXCEPTIONS",
    "RETRY_GIVE_UP_LOG_LEVEL", "RETRY_HTTP_CODES", "RETRY_PRIORITY_ADJUST",
    "RETRY_TIMES", "ROBOTSTXT_OBEY", "ROBOTSTXT_PARSER", "ROBOTSTXT_USER_AGENT",
    "SCHEDULER", "SCHEDULER_DEBUG", "SCHEDULER_DISK_QUEUE", "SCHEDULER_MEMORY_QUEUE",
    "SCHEDULER_PRIORITY_QUEUE", "SCHEDULER_START_DISK_QUEUE",
    "SCHEDULER_START_MEMORY_QUEUE", "SCRAPER_SLOT_MAX_ACTIVE_SIZE", "SPIDER_CONTRACTS",
    "SPIDER_CONTRACTS_BASE", "SPIDER_LOADER_CLASS", "SPIDER_LOADER_WARN_ONLY",
    "SPIDER_MIDDLEWARES", "SPIDER_MIDDLEWARES_BASE", "SPIDER_MODULES",
    "STATSMAILER_RCPTS", "STATS_CLASS", "STATS_DUMP", "TELNETCONSOLE_ENABLED",
    "TELNETCONSOLE_HOST", "TELNETCONSOLE_PASSWORD", "TELNETCONSOLE_PORT",
    "TELNETCONSOLE_USERNAME", "TEMPLATES_DIR", "TWISTED_DNS_RESOLVER",
    "TWISTED_REACTOR", "TWISTED_REACTOR_ENABLED", "URLLENGTH_LIMIT", "USER_AGENT",
    "WARN_ON_GENERATOR_RETURN_VALUE",
})

#: Settings crawlfw reads without a default of its own.
READ_WITHOUT_DEFAULT = frozenset({
    "CRAWLSPIDER_FOLLOW_LINKS", "DUPEFILTER_DEBUG", "FILES_STORE", "IMAGES_STORE",
    "JOBDIR", "LOG_UNSERIALIZABLE_REQUESTS", "REDIRECT_MAX_METAREFRESH_DELAY",
    "SCRAPER_SLOT_MAX_ACTIVE_SIZE",
})

#: The shortest word of a known name that a one-letter edit may be reported against.
MIN_WORD_LENGTH = 4

_SOURCES = {
    SETTINGS_PRIORITIES["cmdline"]: "set with -s on the command line",
    SETTINGS_PRIORITIES["spider"]: "set in the spider's custom_settings",
    SETTINGS_PRIORITIES["project"]: "set in the project's settings",
}

_known: frozenset | None = None
_warned: set = set()  # names warned about in this process


def known_settings() -> frozenset:
    """Every known setting name (see the module's docstring), computed once."""
    global _known
    if _known is None:
        own = {name for name in dir(default_settings) if name.isupper()}
        _known = frozenset(own | READ_WITHOUT_DEFAULT | SCRAPY_SETTINGS)
    return _known


def _one_edit(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` differ by exactly one edit: a letter inserted, deleted
    or replaced, or two neighbouring letters swapped."""
    if a == b:
        return False
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la == lb:
        diff = [i for i in range(la) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return (len(diff) == 2 and diff[1] == diff[0] + 1
                and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    if la > lb:
        a, b = b, a  # a is the shorter
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i:] == b[i + 1:]


def _near(name: str, known: str) -> bool:
    if name == known + "S":  # a list of them (USER_AGENTS)
        return False
    if name.replace("_", "") == known.replace("_", ""):
        return True
    words, known_words = name.split("_"), known.split("_")
    if len(words) != len(known_words):
        return False
    changed = [(w, k) for w, k in zip(words, known_words, strict=True) if w != k]
    return 0 < len(changed) <= 2 and all(
        len(k) >= MIN_WORD_LENGTH and _one_edit(w, k) for w, k in changed)


def likely_setting(name: str, known=None) -> str | None:
    """The known setting ``name`` was likely meant to be, or None.

    Args:
        name: a setting name.
        known: the known names (default :func:`known_settings`).

    Returns:
        None when ``name`` is known or not a near miss of a known name (the rule in the
        module's docstring); else the known name (the alphabetically first when several
        are near).
    """
    known = known_settings() if known is None else known
    if name in known or name.startswith("_"):
        return None
    if name.upper() in known:  # -s download_delay=2
        return name.upper()
    if not name.isupper():
        return None
    near = sorted(k for k in known if _near(name, k))
    return near[0] if near else None


def warn_misspelled_settings(settings) -> list:
    """Log one WARNING per misspelled setting name of ``settings`` (set on the command
    line, in the project's settings or a spider's ``custom_settings``), once per name
    and process.

    Args:
        settings: a :class:`~crawlfw.settings.BaseSettings`.

    Returns:
        list[tuple[str, str]]: ``(name, likely name)`` of the names warned about by this
        call.
    """
    warned = []
    for name in sorted(settings.attributes):
        priority = settings.getpriority(name)
        if priority is None or priority < SETTINGS_PRIORITIES["project"] or name in _warned:
            continue
        likely = likely_setting(name)
        if likely is None:
            continue
        _warned.add(name)
        warned.append((name, likely))
        source = _SOURCES.get(priority, "set")
        logger.warning("Setting %r (%s) is not a known setting: did you mean %r? "
                       "(it is ignored)", name, source, likely)
    return warned
