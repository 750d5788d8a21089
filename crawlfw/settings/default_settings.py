"""Default values of every crawlfw setting.

These are Scrapy 1.2's defaults (``scrapy/settings/default_settings.py``) with the
dotted paths rewritten from ``scrapy.`` to ``crawlfw.``, in the same alphabetical
order and grouping, followed by the crawlfw-only settings at the end of the module.

Rules for adding a setting:

* put it in alphabetical order, grouping similar settings without blank lines;
* component orders go in a ``*_BASE`` dict next to an empty user dict
  (``EXTENSIONS = {}`` / ``EXTENSIONS_BASE = {...}``); ``Settings`` turns every dict
  default into a :class:`~crawlfw.settings.BaseSettings` so each key keeps its own
  priority, and :func:`crawlfw.utils.conf.build_component_list` merges the pair;
* document it here in a comment (units: seconds, bytes, megabytes).

Differences from Scrapy 1.2 (the runtime has no Twisted reactor; every scheme is
downloaded with libcurl):

* removed: ``DOWNLOADER_HTTPCLIENTFACTORY`` (Twisted-only, gone from Scrapy 2 too);
  every key of Scrapy 2.19's defaults is here (the "Scrapy 2 settings" block), the
  Twisted-only ones (``TWISTED_REACTOR``, ``TELNETCONSOLE_PORT``...) without effect;
* ``TELNETCONSOLE_ENABLED`` is kept but ``False``: the telnet console is not
  supported, and ``crawlfw.extensions.telnet.TelnetConsole`` is not in
  ``EXTENSIONS_BASE``;
* ``DOWNLOAD_HANDLERS_BASE`` maps every scheme to the curl transfer core
  (``crawlfw.core.transport.curl.MultiDriver``); a scheme set to None in ``DOWNLOAD_HANDLERS``
  is refused (``NotSupported``), other handler classes have no effect;
  ``DNSCACHE_ENABLED``, ``DNSCACHE_SIZE``, ``DNS_TIMEOUT`` and
  ``DOWNLOADER_CLIENT_TLS_METHOD`` map to curl options
  (``crawlfw.core.transport.curl_options.driver_options``, ``DnsCacheBudget``);
* settings kept for Scrapy projects but without effect, each logged once as a warning
  when a user sets it (``crawlfw.settings._noeffect``): ``CONCURRENT_ITEMS``,
  ``DOWNLOADER``, ``DOWNLOAD_HANDLERS`` classes, ``MEMDEBUG_NOTIFY``;
  ``SCHEDULER_PRIORITY_QUEUE`` accepts only the per-host layout's names (Scrapy's
  ``DownloaderAwarePriorityQueue`` among them);
* crawlfw-only settings (``CONTROL_ENDPOINT``, ``CURL_MAXCONNECTS``, ``DUPEFILTER_MEMORY_LIMIT``,
  ``DUPEFILTER_BLOOM_ERROR_RATE``, ``FRONTIER_*``, ``MESSAGE_VALIDATION``, ``PROGRESS``,
  ``SUPERVISOR_*``) are at the end.
"""

import os
import sys
from os.path import abspath, dirname, join

import crawlfw as _crawlfw

# User actors added to each crawl's tree, under supervision: {'path.to.Actor': order},
# started in ascending order (see crawlfw.actors.UserActor and docs/actors.md).
ACTORS = {}

AJAXCRAWL_ENABLED = False
AJAXCRAWL_MAXSIZE = 32768  # bytes of the body searched for the fragment meta tag

AUTOTHROTTLE_ENABLED = False
AUTOTHROTTLE_DEBUG = False
AUTOTHROTTLE_MAX_DELAY = 60.0  # seconds
AUTOTHROTTLE_START_DELAY = 5.0  # seconds
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0

AWS_ACCESS_KEY_ID = None
AWS_SECRET_ACCESS_KEY = None
AWS_ENDPOINT_URL = None  # an S3-compatible server, e.g. http://127.0.0.1:9000
AWS_REGION_NAME = None

BOT_NAME = 'crawlfwbot'

CLOSESPIDER_TIMEOUT = 0  # seconds; 0 disables
CLOSESPIDER_PAGECOUNT = 0
CLOSESPIDER_ITEMCOUNT = 0
CLOSESPIDER_ERRORCOUNT = 0

COMMANDS_MODULE = ''

COMPRESSION_ENABLED = True

CONCURRENT_ITEMS = 100  # no effect: the pipeline actor processes items one at a time

CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 8
CONCURRENT_REQUESTS_PER_IP = 0

COOKIES_ENABLED = True
COOKIES_DEBUG = False

DEFAULT_ITEM_CLASS = 'crawlfw.item.Item'

DEFAULT_REQUEST_HEADERS = {
    'Accept': 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    'Accept-Language': 'en',
}

DEPTH_LIMIT = 0
DEPTH_STATS = True
DEPTH_STATS_VERBOSE = False  # per-depth request counts in stats
DEPTH_PRIORITY = 0

DNSCACHE_ENABLED = True  # keep answers (per downloader actor; False: every request looks up)
DNSCACHE_SIZE = 10000  # host names kept at most, the least recently used dropped first
DNS_TIMEOUT = 60  # seconds a lookup may take: then DNSLookupError (0: DOWNLOAD_TIMEOUT only)

DOWNLOAD_DELAY = 0  # seconds

DOWNLOAD_HANDLERS = {}
# Every scheme is fetched by libcurl (crawlfw.core.transport.curl.MultiDriver); the keys list
# the schemes the downloader accepts (a scheme mapped to None in DOWNLOAD_HANDLERS
# is refused with NotSupported; other handler classes have no effect).
DOWNLOAD_HANDLERS_BASE = {
    'file': 'crawlfw.core.transport.curl.MultiDriver',
    'http': 'crawlfw.core.transport.curl.MultiDriver',
    'https': 'crawlfw.core.transport.curl.MultiDriver',
    's3': 'crawlfw.core.transport.curl.MultiDriver',
    'ftp': 'crawlfw.core.transport.curl.MultiDriver',
}

DOWNLOAD_TIMEOUT = 180  # seconds (3 min)

DOWNLOAD_MAXSIZE = 1024 * 1024 * 1024  # bytes (1024 MiB)
DOWNLOAD_WARNSIZE = 32 * 1024 * 1024  # bytes (32 MiB)

# No effect: the downloader is this actor, driving a pycurl CurlMulti (Scrapy: a class).
DOWNLOADER = 'crawlfw.actors.downloader.DownloaderActor'

# Highest TLS version supported by libcurl, allowing negotiation. Other values (exactly
# that version): 'TLSv1.0', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3' (CURLOPT_SSLVERSION).
DOWNLOADER_CLIENT_TLS_METHOD = 'TLS'

# Downloader actors of a crawl: a fixed pool started with the crawl, each a thread
# driving one pycurl CurlMulti for many download slots (a host's slot is always served by
# the same one). The GIL lets one Python thread run at a time, so more actors mostly add
# thread switches; see docs/broad-crawls.md for the measurements behind the default.
DOWNLOADER_ACTORS = 1

DOWNLOADER_MIDDLEWARES = {}

DOWNLOADER_MIDDLEWARES_BASE = {
    # Engine side
    'crawlfw.downloadermiddlewares.robotstxt.RobotsTxtMiddleware': 100,
    'crawlfw.downloadermiddlewares.httpauth.HttpAuthMiddleware': 300,
    'crawlfw.downloadermiddlewares.downloadtimeout.DownloadTimeoutMiddleware': 350,
    'crawlfw.downloadermiddlewares.defaultheaders.DefaultHeadersMiddleware': 400,
    'crawlfw.downloadermiddlewares.useragent.UserAgentMiddleware': 500,
    'crawlfw.downloadermiddlewares.retry.RetryMiddleware': 550,
    'crawlfw.downloadermiddlewares.ajaxcrawl.AjaxCrawlMiddleware': 560,
    'crawlfw.downloadermiddlewares.redirect.MetaRefreshMiddleware': 580,
    'crawlfw.downloadermiddlewares.httpcompression.HttpCompressionMiddleware': 590,
    'crawlfw.downloadermiddlewares.redirect.RedirectMiddleware': 600,
    'crawlfw.downloadermiddlewares.cookies.CookiesMiddleware': 700,
    'crawlfw.downloadermiddlewares.httpproxy.HttpProxyMiddleware': 750,
    'crawlfw.downloadermiddlewares.chunked.ChunkedTransferMiddleware': 830,
    'crawlfw.downloadermiddlewares.stats.DownloaderStats': 850,
    'crawlfw.downloadermiddlewares.httpcache.HttpCacheMiddleware': 900,
    # Downloader side
}

DOWNLOADER_STATS = True

DUPEFILTER_CLASS = 'crawlfw.dupefilters.RFPDupeFilter'

try:
    EDITOR = os.environ['EDITOR']
except KeyError:
    if sys.platform == 'win32':
        EDITOR = '%s -m idlelib.idle'
    else:
        EDITOR = 'vi'

EXTENSIONS = {}

EXTENSIONS_BASE = {
    'crawlfw.extensions.corestats.CoreStats': 0,
    'crawlfw.extensions.logcount.LogCount': 0,
    'crawlfw.extensions.memusage.MemoryUsage': 0,
    'crawlfw.extensions.memdebug.MemoryDebugger': 0,
    'crawlfw.extensions.closespider.CloseSpider': 0,
    'crawlfw.extensions.feedexport.FeedExporter': 0,
    'crawlfw.extensions.logstats.LogStats': 0,
    'crawlfw.extensions.spiderstate.SpiderState': 0,
    'crawlfw.extensions.throttle.AutoThrottle': 0,
}

FEEDS = {}  # uri -> options (format, encoding, fields, overwrite, store_empty, indent...)
FEED_TEMPDIR = None
FEED_URI = None
FEED_URI_PARAMS = None  # a function to extend uri arguments
FEED_FORMAT = 'jsonlines'
FEED_STORE_EMPTY = True  # Scrapy >= 2.11 (1.2: False)
# A JOBDIR job's local feed found missing or shorter than the job committed is refused
# at resume (exit 1); True: start that feed anew instead (the old file kept aside as
# <file>.broken-<unix time>; the items committed before are not in the new one).
FEED_RESTART_BROKEN = False
FEED_EXPORT_ENCODING = None
FEED_EXPORT_FIELDS = None  # a list of names, or a dict {field: output name} (Scrapy 2.4)
FEED_EXPORT_BATCH_ITEM_COUNT = 0  # Scrapy 2.3: items per feed file (0: one file)
FEED_EXPORT_INDENT = 0  # Scrapy 2: JSON/XML feed layout (None: as 1.2; N > 0: indented)
FEED_STORAGES = {}
FEED_STORAGE_FTP_ACTIVE = False  # FTP active mode instead of passive
FEED_STORAGE_S3_ACL = ''
FEED_STORAGE_S3_ENDPOINT_URL = None
FEED_STORAGES_BASE = {
    '': 'crawlfw.extensions.feedexport.FileFeedStorage',
    'file': 'crawlfw.extensions.feedexport.FileFeedStorage',
    'stdout': 'crawlfw.extensions.feedexport.StdoutFeedStorage',
    's3': 'crawlfw.extensions.feedexport.S3FeedStorage',
    'ftp': 'crawlfw.extensions.feedexport.FTPFeedStorage',
}
FEED_EXPORTERS = {}
FEED_EXPORTERS_BASE = {
    'json': 'crawlfw.exporters.JsonItemExporter',
    'jsonlines': 'crawlfw.exporters.JsonLinesItemExporter',
    'jsonl': 'crawlfw.exporters.JsonLinesItemExporter',  # Scrapy 2
    'jl': 'crawlfw.exporters.JsonLinesItemExporter',
    'csv': 'crawlfw.exporters.CsvItemExporter',
    'xml': 'crawlfw.exporters.XmlItemExporter',
    'marshal': 'crawlfw.exporters.MarshalItemExporter',
    'pickle': 'crawlfw.exporters.PickleItemExporter',
}

FILES_STORE_S3_ACL = 'private'

HTTPCACHE_ENABLED = False
HTTPCACHE_DIR = 'httpcache'
HTTPCACHE_IGNORE_MISSING = False
HTTPCACHE_STORAGE = 'crawlfw.extensions.httpcache.FilesystemCacheStorage'
HTTPCACHE_EXPIRATION_SECS = 0  # seconds; 0 means cached responses never expire
HTTPCACHE_ALWAYS_STORE = False
HTTPCACHE_IGNORE_HTTP_CODES = []
HTTPCACHE_IGNORE_SCHEMES = ['file']
HTTPCACHE_IGNORE_RESPONSE_CACHE_CONTROLS = []
HTTPCACHE_DBM_MODULE = 'dbm'
HTTPCACHE_POLICY = 'crawlfw.extensions.httpcache.DummyPolicy'
HTTPCACHE_GZIP = False

HTTPPROXY_AUTH_ENCODING = 'latin-1'
HTTPPROXY_ENABLED = True

HTTPERROR_ALLOWED_CODES = []
HTTPERROR_ALLOW_ALL = False

IMAGES_STORE_S3_ACL = 'private'

ITEM_PROCESSOR = 'crawlfw.pipelines.ItemPipelineManager'

ITEM_PIPELINES = {}
ITEM_PIPELINES_BASE = {}

# A file:// request produced from an http(s) response (a link, response.follow, a
# CrawlSpider rule) is dropped with a WARNING (scraper/refused_local_url), as a browser
# does; True restores Scrapy's behaviour (follow it). Start requests and requests made
# from file:// responses are never affected. See docs/security.md.
LOCAL_URLS_FROM_WEB_ENABLED = False

LOG_ENABLED = True
LOG_ENCODING = 'utf-8'
LOG_FORMATTER = 'crawlfw.logformatter.LogFormatter'
LOG_FORMAT = '%(asctime)s [%(name)s] %(levelname)s: %(message)s'
LOG_DATEFORMAT = '%Y-%m-%d %H:%M:%S'
LOG_STDOUT = False
LOG_LEVEL = 'DEBUG'
LOG_FILE = None
LOG_SHORT_NAMES = False  # True: show 'crawlfw' instead of 'crawlfw.core.engine' etc.

SCHEDULER_DEBUG = False

LOGSTATS_INTERVAL = 60.0  # seconds

MAIL_HOST = 'localhost'
MAIL_PORT = 25
MAIL_FROM = 'crawlfw@localhost'
MAIL_PASS = None
MAIL_USER = None
MAIL_TLS = False
MAIL_SSL = False

MEMDEBUG_ENABLED = False  # enable memory debugging
MEMDEBUG_NOTIFY = []  # no effect (no report is mailed; Scrapy 1.2 sent none either)

MEMUSAGE_CHECK_INTERVAL_SECONDS = 60.0
MEMUSAGE_ENABLED = True  # Scrapy 2 (1.2: False): memusage/startup and memusage/max
MEMUSAGE_LIMIT_MB = 0
MEMUSAGE_NOTIFY_MAIL = []
MEMUSAGE_REPORT = False
MEMUSAGE_WARNING_MB = 0

METAREFRESH_ENABLED = True
METAREFRESH_MAXDELAY = 100  # seconds

NEWSPIDER_MODULE = ''

RANDOMIZE_DOWNLOAD_DELAY = True

REDIRECT_ENABLED = True
REDIRECT_MAX_TIMES = 20  # uses Firefox default setting
REDIRECT_PRIORITY_ADJUST = +2

REFERER_ENABLED = True
REFERRER_POLICY = None  # None: Scrapy 1.2's rule (the full URL of the page)

# Continuous crawling (docs/continuous-crawling.md): with REVISIT_ENABLED every page
# fetched with a 2xx answer is due again after its interval (seconds, fractions allowed)
# and the crawl waits for it instead of finishing; REVISIT_ADAPTIVE shrinks the interval
# of a page that changed and grows it for one that did not (Nutch's rule), within
# REVISIT_INTERVAL_MIN / _MAX. A page answered 404/410 REVISIT_GONE_LIMIT times in a row
# is no longer revisited.
REVISIT_ADAPTIVE = True
REVISIT_ENABLED = False
REVISIT_GONE_LIMIT = 3
REVISIT_INTERVAL = 86400.0  # seconds: a new page's interval
REVISIT_INTERVAL_MAX = 2592000.0  # seconds (30 days)
REVISIT_INTERVAL_MIN = 3600.0  # seconds

RETRY_ENABLED = True
RETRY_GIVE_UP_LOG_LEVEL = 'ERROR'  # Scrapy 2.5+ (1.2 logged 'Gave up retrying' at DEBUG)
RETRY_TIMES = 2  # initial response + 2 retries = 3 requests
RETRY_HTTP_CODES = [500, 502, 503, 504, 408]
RETRY_PRIORITY_ADJUST = -1

ROBOTSTXT_OBEY = False
ROBOTSTXT_USER_AGENT = None  # None: the User-Agent header / USER_AGENT
ROBOTSTXT_CACHE_SIZE = 5000  # crawlfw: robots.txt parsers kept (LRU, hosts); 0: unbounded

SCHEDULER = 'crawlfw.core.scheduler.Scheduler'
SCHEDULER_DISK_QUEUE = 'crawlfw.squeues.PickleLifoDiskQueue'
SCHEDULER_MEMORY_QUEUE = 'crawlfw.squeues.LifoMemoryQueue'
# Per-host queues with a ready-set of hosts (crawlfw.core.frontier.hostqueues), whatever the name:
# this value, 'crawlfw.pqueues.DownloaderAwarePriorityQueue' and
# 'scrapy.pqueues.DownloaderAwarePriorityQueue' are accepted; another is refused at start.
SCHEDULER_PRIORITY_QUEUE = 'crawlfw.core.frontier.pqueue.PriorityQueue'

SPIDER_LOADER_CLASS = 'crawlfw.spiderloader.SpiderLoader'
# Scrapy 2: a spider module that cannot be imported is skipped with a WARNING (else: exit 1)
SPIDER_LOADER_WARN_ONLY = False

SPIDER_MIDDLEWARES = {}

SPIDER_MIDDLEWARES_BASE = {
    # Engine side
    'crawlfw.spidermiddlewares.httperror.HttpErrorMiddleware': 50,
    'crawlfw.spidermiddlewares.offsite.OffsiteMiddleware': 500,
    'crawlfw.spidermiddlewares.referer.RefererMiddleware': 700,
    'crawlfw.spidermiddlewares.urllength.UrlLengthMiddleware': 800,
    'crawlfw.spidermiddlewares.depth.DepthMiddleware': 900,
    # Spider side
}

SPIDER_MODULES = []

STATS_CLASS = 'crawlfw.statscollectors.MemoryStatsCollector'
STATS_DUMP = True

STATSMAILER_RCPTS = []

TEMPLATES_DIR = abspath(join(dirname(__file__), '..', 'templates'))

URLLENGTH_LIMIT = 2083

USER_AGENT = f'crawlfw/{_crawlfw.__version__} (+https://crawlfw.invalid)'

# The telnet console needs Twisted's conch and is not supported: this setting is
# accepted for compatibility but has no effect.
TELNETCONSOLE_ENABLED = False

SPIDER_CONTRACTS = {}
SPIDER_CONTRACTS_BASE = {
    'crawlfw.contracts.default.UrlContract': 1,
    'crawlfw.contracts.default.CallbackKeywordArgumentsContract': 1,  # Scrapy 2
    'crawlfw.contracts.default.MetadataContract': 1,  # Scrapy 2
    'crawlfw.contracts.default.MethodContract': 1,  # Scrapy 2.19
    'crawlfw.contracts.default.BodyContract': 1,  # Scrapy 2.19
    'crawlfw.contracts.default.HeaderContract': 1,  # Scrapy 2.19
    'crawlfw.contracts.default.CookieContract': 1,  # Scrapy 2.19
    'crawlfw.contracts.default.ReturnsContract': 2,
    'crawlfw.contracts.default.ScrapesContract': 3,
}

# --- Scrapy 2 settings (issue 29) -------------------------------------------------
# Scrapy 2.19's settings that Scrapy 1.2 did not have, alphabetical. Those crawlfw cannot
# act on are listed, with the reason, in crawlfw.settings._noeffect.SETTINGS_WITHOUT_EFFECT
# (a user who sets one to something else than its default gets one WARNING).

ADDONS = {}  # no effect: add-ons are not loaded
ASYNCIO_EVENT_LOOP = None  # no effect: actor threads use asyncio's default loop class
AWS_MAX_POOL_CONNECTIONS = 100  # no effect (boto3's own pool)
AWS_SESSION_TOKEN = None  # no effect
AWS_USE_SSL = None  # no effect: AWS_ENDPOINT_URL's scheme decides
AWS_VERIFY = None  # no effect
CLOSESPIDER_PAGECOUNT_NO_ITEM = 0  # pages in a row without an item (0: no limit)
CLOSESPIDER_TIMEOUT_NO_ITEM = 0  # seconds without an item (0: no limit)
# CrawlSpider: False makes no rule follow links (CrawlSpider._follow_links).
CRAWLSPIDER_FOLLOW_LINKS = True
# Level of the "Dropped: ..." line when a DropItem gives no log_level.
DEFAULT_DROPITEM_LOG_LEVEL = 'WARNING'
# crawlfw's resolver (c-ares, crawlfw.resolver); Scrapy's names map to it, a class of
# yours with resolve(host) -> [addresses] is called on worker threads,
# 'crawlfw.resolver.LibcurlResolver' lets libcurl resolve (see crawlfw/resolver.py).
DNS_RESOLVER = 'crawlfw.resolver.CachingThreadedResolver'
DOWNLOADER_CLIENTCONTEXTFACTORY = None  # no effect: libcurl does TLS
DOWNLOADER_CLIENT_TLS_CIPHERS = 'DEFAULT'  # no effect
DOWNLOADER_CLIENT_TLS_VERBOSE_LOGGING = False  # no effect
DOWNLOAD_BIND_ADDRESS = None  # no effect (meta 'bindaddress' is honoured)
DOWNLOAD_DELAY_JITTER = 0.5  # no effect: RANDOMIZE_DOWNLOAD_DELAY uses 0.5 to 1.5
DOWNLOAD_FAIL_ON_DATALOSS = True  # True only: a truncated body always fails (ResponseFailed)
DOWNLOAD_SLOTS = {}  # no effect: one delay and concurrency for every slot
DOWNLOAD_TLS_MAX_VERSION = None  # no effect: see DOWNLOADER_CLIENT_TLS_METHOD
DOWNLOAD_TLS_MIN_VERSION = None  # no effect: see DOWNLOADER_CLIENT_TLS_METHOD
DOWNLOAD_VERIFY_CERTIFICATES = False  # no effect: certificates are not verified
# Log every filtered duplicate, not only the first (RFPDupeFilter).
DUPEFILTER_DEBUG = False
FEED_STORAGE_GCS_ACL = ''  # no effect: no gs:// feed storage
FILES_STORE = None  # where FilesPipeline stores files (None: the pipeline is off)
FILES_STORE_GCS_ACL = ''  # no effect: no gs:// files store
# A class-based command written for Scrapy 2 gets a CrawlerProcess, not Scrapy 2.19's
# AsyncCrawlerProcess (crawlfw.commands._custom.crawler_process_class).
FORCE_CRAWLER_PROCESS = False
FTP_PASSIVE_MODE = True  # no effect: libcurl's FTP uses passive mode
FTP_PASSWORD = 'guest'  # no effect: give the user and password in the ftp:// URL
FTP_USER = 'anonymous'  # no effect: give the user and password in the ftp:// URL
GCS_PROJECT_ID = None  # no effect: no Google Cloud Storage
HTTP2_MAX_FRAME_SIZE = 16384  # no effect: no HTTP/2 download handler
HTTPAUTH_DOMAIN = None  # no effect: see the spider's http_user/http_auth_domain
HTTPAUTH_PASS = None  # no effect: see the spider's http_pass
HTTPAUTH_USER = None  # no effect: see the spider's http_user
HTTPX_HTTP2_ENABLED = False  # no effect: no httpx download handler
IMAGES_STORE = None  # where ImagesPipeline stores images (None: the pipeline is off)
IMAGES_STORE_GCS_ACL = ''  # no effect: no gs:// images store
JOBDIR = None  # a directory: the crawl is durable and can be resumed (docs/jobs.md)
LOG_COLOR = False  # no effect: log lines are not coloured
LOG_FILE_APPEND = True  # False: LOG_FILE is emptied when logging is configured
LOG_INSTALL_ROOT_HANDLER = True  # no effect: configure_logging(install_root_handler=)
LOG_VERSIONS = ['lxml', 'libxml2', 'cssselect', 'parsel', 'w3lib', 'Twisted', 'Python',
                'pyOpenSSL', 'cryptography', 'Platform']  # no effect
# No effect: a <meta http-equiv="refresh"> inside <script> or <noscript> is always ignored.
# <meta http-equiv="refresh"> inside these elements is not followed: Scrapy 1.2's tags
# (Scrapy 2.19's default is ['noscript'], which follows one inside <script>)
METAREFRESH_IGNORE_TAGS = ['script', 'noscript']
# crawlfw.extensions.periodic_log.PeriodicLog (enable it in EXTENSIONS): what it logs
PERIODIC_LOG_DELTA = None
PERIODIC_LOG_STATS = None
PERIODIC_LOG_TIMING_ENABLED = False
REACTOR_THREADPOOL_MAXSIZE = 10  # no effect: no Twisted reactor
REFERRER_POLICIES = {}  # no effect: REFERRER_POLICY and meta 'referrer_policy' are
REMOTE_CONTROL_ENABLED = False  # no effect: see crawlfw.control (crawlfw ps/stop...)
REMOTE_CONTROL_JOBS_DIR = None  # no effect
REMOTE_CONTROL_OUTPUT_MAX_BYTES = 1048576  # no effect
REMOTE_CONTROL_TIMEOUT_DEFAULT = 10.0  # no effect
REMOTE_CONTROL_TIMEOUT_MAX = 300.0  # no effect
REMOTE_CONTROL_TRACEBACK_MAX_BYTES = 65536  # no effect
# Fingerprints for Crawler.request_fingerprinter and Scrapy 2 components; the duplicate
# filter and the frontiers keep crawlfw.utils.request.request_fingerprint (JOBDIRs).
REQUEST_FINGERPRINTER_CLASS = 'crawlfw.utils.request.RequestFingerprinter'
# Download errors the RetryMiddleware retries: classes or import paths (Scrapy's and
# Twisted's names are understood, see crawlfw.downloadermiddlewares.retry).
RETRY_EXCEPTIONS = [
    'crawlfw.exceptions.DownloadTimeoutError',
    'builtins.TimeoutError',
    'crawlfw.exceptions.DNSLookupError',
    'crawlfw.exceptions.ConnectionRefusedError',
    'crawlfw.exceptions.ConnectError',
    'crawlfw.exceptions.ConnectionLostError',
    'crawlfw.exceptions.ResponseFailed',
    'builtins.OSError',
]
ROBOTSTXT_PARSER = 'crawlfw.robotstxt.ProtegoRobotParser'  # a crawlfw.robotstxt.RobotParser
SCHEDULER_START_DISK_QUEUE = 'crawlfw.squeues.PickleFifoDiskQueue'  # no effect
SCHEDULER_START_MEMORY_QUEUE = 'crawlfw.squeues.FifoMemoryQueue'  # no effect
# Bytes of response bodies waiting for the spider above which the Engine grants no new
# downloads (the Engine's credit). 0 (crawlfw's default): none while any response waits,
# so the backlog stays within CONCURRENT_REQUESTS responses and memory low; Scrapy's
# 5000000 lets up to 5 MB queue (about 30 MB more peak RSS on the crawl benchmark).
SCRAPER_SLOT_MAX_ACTIVE_SIZE = 0
TELNETCONSOLE_HOST = '127.0.0.1'  # no effect: no telnet console
TELNETCONSOLE_PASSWORD = None  # no effect
TELNETCONSOLE_PORT = [6023, 6073]  # no effect
TELNETCONSOLE_USERNAME = 'crawlfw'  # no effect (Scrapy: 'scrapy')
TWISTED_DNS_RESOLVER = 'twisted.internet.resolver.GAIResolver'  # no effect
# No Twisted reactor: coroutines run on asyncio loops, as with this (Scrapy's default)
# reactor; another reactor gets one WARNING (crawlfw.utils.reactor).
TWISTED_REACTOR = 'twisted.internet.asyncioreactor.AsyncioSelectorReactor'
TWISTED_REACTOR_ENABLED = True  # no effect: crawlfw never uses a Twisted reactor
WARN_ON_GENERATOR_RETURN_VALUE = True  # no effect

# --- crawlfw-only settings -------------------------------------------------------

# A crawl process (CrawlerProcess.start) listens on a Unix socket in
# $XDG_RUNTIME_DIR/crawlfw/ (else ~/.local/state/crawlfw/run/) for crawlfw ps/status/
# pause/resume/stop/schedule and shell --attach (see crawlfw.control).
CONTROL_ENDPOINT = True

# The live dashboard (crawlfw.dashboard, docs/security.md): DASHBOARD_ENABLED serves it
# from the crawl process on 127.0.0.1 (DASHBOARD_PORT, 0: a free port; also the port of
# `crawlfw dashboard`), behind a random token. DASHBOARD_HISTORY: seconds of samples
# kept at one a second (then one a minute); 0 keeps none. METRICS_ENABLED opens another
# 127.0.0.1 listener serving only /metrics (Prometheus) without a token, on METRICS_PORT.
# All five may be set in a spider's custom_settings too (each crawl's settings decide).
DASHBOARD_ENABLED = False
DASHBOARD_HISTORY = 3600
DASHBOARD_PORT = 0
METRICS_ENABLED = False
METRICS_PORT = 0

# Idle keep-alive connections kept open, across all hosts, per downloader actor's CurlMulti
# (CURLMOPT_MAXCONNECTS). 0: CONCURRENT_REQUESTS shared among the DOWNLOADER_ACTORS, so a
# broad crawl closes idle connections to hosts it is done with instead of hoarding them.
CURL_MAXCONNECTS = 0

# crawlfw's resolver (DNS_RESOLVER; docs/broad-crawls.md): answers kept within
# DNSCACHE_MIN_TTL..DNSCACHE_MAX_TTL seconds of their TTL, NXDOMAIN and "no address" for
# DNSCACHE_NEGATIVE_TTL seconds; at most DNS_CONCURRENT_LOOKUPS lookups in flight per
# downloader actor (the others wait their turn); A and AAAA asked at once, and once one
# has answered the other gets DNS_RESOLUTION_DELAY seconds more (RFC 8305); names in
# DNS_HOSTS_FILE are answered from it alone; DNS_RESOLV_CONF: a resolv.conf-style file
# naming the name servers (a port allowed: 127.0.0.1:5353), search list and ndots
# (None: the system's, /etc/resolv.conf).
DNSCACHE_MAX_TTL = 3600  # seconds
DNSCACHE_MIN_TTL = 60  # seconds
DNSCACHE_NEGATIVE_TTL = 30  # seconds
DNS_CONCURRENT_LOOKUPS = 100
DNS_HOSTS_FILE = '/etc/hosts'
DNS_RESOLUTION_DELAY = 0.05  # seconds
DNS_RESOLV_CONF = None

# The dupefilter's seen set (crawlfw.utils._seen; ARCHITECTURE.md, "The seen set"): 16
# bytes a fingerprint, DUPEFILTER_MEMORY_LIMIT bytes of RAM at most (32 MiB: ~1M
# fingerprints; with FRONTIER_MEMORY_LIMIT's 96 MiB, 128 MiB in all: ARCHITECTURE.md,
# "The frontier: per-host queues", why the split), past it they move to a private file
# under $TMPDIR (else /var/tmp), removed at the end
# (and after a crash, by the next crawl). DUPEFILTER_BLOOM_ERROR_RATE above 0 (e.g.
# 0.001) keeps them in a Bloom filter instead: 2-4 bytes each, nothing on disk, and at
# most that share of new URLs taken for duplicates (dropped). Not used with a JOBDIR or
# a FRONTIER_URL: the frontier keeps the fingerprints there.
DUPEFILTER_BLOOM_ERROR_RATE = 0.0
DUPEFILTER_MEMORY_LIMIT = 32 * 1024 * 1024  # bytes

# Where actor messages are checked against their JSON Schemas
# (crawlfw/conf/schemas/<type>.json):
#   'off'      - never;
#   'boundary' - only messages entering the actor tree from outside (CLI, shell,
#                Crawler facade, user code) and messages carrying user objects;
#   'all'      - every message (slow; the test suite uses it).
MESSAGE_VALIDATION = 'boundary'

# A live progress line at the bottom of the terminal while a crawl process runs
# (only when stderr is a terminal; see crawlfw.progress).
PROGRESS = True

# Restart intensity, per crawl (OTP-style): the supervisor restarts crashed children
# (downloaders, ACTORS) at most SUPERVISOR_MAX_RESTARTS times within
# SUPERVISOR_RESTART_WINDOW seconds, all children of the crawl together; past that it
# closes the crawl with '<role>_failed'. Restarts within the window wait
# SUPERVISOR_BACKOFF seconds, doubled each time, at most SUPERVISOR_BACKOFF_MAX.
# Where the crawl's actor threads run (crawlfw.core.control.placement): 'auto' keeps
# them all on one CPU of those the process may use, so that handing a page from one to
# the next wakes no other processor (they share one interpreter lock anyway), and moves
# them when other processes take at least a quarter of that CPU, looking every
# CPU_AFFINITY_INTERVAL seconds; 'off' leaves them to the operating system; CPU numbers
# (3, '0,1', [2, 3]) put them on exactly those CPUs. Linux only (elsewhere: no effect).
CPU_AFFINITY = "auto"
CPU_AFFINITY_INTERVAL = 5.0  # seconds

# See crawlfw.actors.supervisor.
SUPERVISOR_BACKOFF = 0.5  # seconds
SUPERVISOR_BACKOFF_MAX = 30.0  # seconds
SUPERVISOR_MAX_RESTARTS = 3
SUPERVISOR_RESTART_WINDOW = 60  # seconds

# With a JOBDIR, the durable frontier (crawlfw.core.frontier.sqlite_frontier.SqliteFrontier) commits
# the work of finished requests at least every FRONTIER_CHECKPOINT_INTERVAL seconds
# while the crawl runs (a crash redoes at most that much). FRONTIER_FSYNC = True makes
# each commit, and the feed file with it, survive a power loss (fsync); False only
# the process dying (kill -9, OOM), at less I/O.
FRONTIER_CHECKPOINT_INTERVAL = 1.0  # seconds
FRONTIER_FSYNC = True
# The frontier's write-ahead log (frontier.sqlite-wal) is moved into frontier.sqlite at
# a clean close and at least every FRONTIER_WAL_CHECKPOINT_INTERVAL seconds, so a copy
# of frontier.sqlite alone is a consistent (if older) job. JOBDIR/job.json records the
# job's last commit: a frontier older than it (a lost -wal file, a restored backup) or
# missing is refused at start instead of silently starting a new job.
FRONTIER_WAL_CHECKPOINT_INTERVAL = 30.0  # seconds
# A crawl whose scheduler holds requests it cannot dispatch, with nothing in flight and
# nothing happening for STALL_TIMEOUT seconds, logs what is stuck (counts, the oldest
# pending request, who holds its lease) and ends with finish_reason 'stalled' (exit
# status 1) instead of hanging; 0 never ends it. Not used with a FRONTIER_URL (workers
# wait for each other's leases).
STALL_TIMEOUT = 300.0  # seconds

# One crawl across many processes and machines (crawlfw.core.frontier.redis_frontier): every
# worker with the same FRONTIER_URL ('redis://host:port/db') and FRONTIER_KEY (default:
# 'crawlfw:<spider name>') shares one frontier. A worker's lease not renewed within
# FRONTIER_LEASE_TIMEOUT seconds goes back to the queue (the worker died); a lost
# connection is retried for FRONTIER_RETRY_TIMEOUT seconds. FRONTIER_WORKER names this
# worker (default '<hostname>-<pid>'; FEED_URI's %(worker)s). FRONTIER_JOIN_ONLY = True
# makes a worker join a crawl Redis already holds and refuse to start a new one (the
# --workers parent sets it for a worker it restarts, or when parts of an earlier run
# exist), so a Redis that lost the crawl is never crawled again from the start.
FRONTIER_JOIN_ONLY = False
FRONTIER_KEY = None
FRONTIER_LEASE_TIMEOUT = 60  # seconds
# Most open leases (in flight, leased ahead, finished but not yet committed) one worker
# of a shared frontier holds: a killed worker's pages crawled twice are at most this
# many. None: 8 * CONCURRENT_REQUESTS (a checkpoint is made when half of it was handed
# out since the last one); 0: no limit (FRONTIER_CHECKPOINT_INTERVAL alone bounds them).
FRONTIER_MAX_OPEN_LEASES = None
# Without a JOBDIR, bytes of queued requests the frontier keeps in RAM (compact records:
# a plain request costs its URL and ~50 bytes); beyond it the tails of the hosts' queues
# spill to a private temporary file (under $TMPDIR, else /var/tmp), removed at the end.
# Same order either way. 0: no limit. How the default was chosen: docs/broad-crawls.md.
# With REVISIT_ENABLED the in-memory revisit schedule shares it (docs/continuous-crawling.md).
FRONTIER_MEMORY_LIMIT = 96 * 1024 * 1024  # bytes
FRONTIER_RETRY_TIMEOUT = 300  # seconds
FRONTIER_URL = None
FRONTIER_WORKER = None
