"""crawlfw signals (Scrapy 1.2's ``scrapy.signals``).

Connect handlers with ``crawler.signals.connect(handler, signal=signals.item_scraped)``.
Handlers are called with only the keyword arguments they accept, on the thread of
the actor that sends the signal (see :mod:`crawlfw.signalmanager`). Arguments
sent with each signal:

=====================  ============================================================
signal                 keyword arguments
=====================  ============================================================
engine_started         (none)
engine_stopped         (none)
spider_opened          spider
spider_idle            spider (raise DontCloseSpider to keep the spider open)
spider_closed          spider, reason
spider_error           failure (the exception), response, spider
request_scheduled      request, spider
request_dropped        request, spider
response_received      response, request, spider
response_downloaded    response, request, spider
item_scraped           item, response, spider
item_dropped           item, response, exception, spider
item_error             item, response, spider, failure (an item pipeline raised
                       another exception than DropItem; Scrapy 2)
request_reached_downloader  request, spider (the request entered its download slot)
request_left_downloader     request, spider (its download finished or failed)
headers_received       headers, body_length (Content-Length or -1), request, spider
                       (the response headers arrived; raise StopDownload to stop)
bytes_received         data, request, spider (a chunk of the body arrived; raise
                       StopDownload to stop)
memusage_warning_reached  (none; MemoryUsage passed MEMUSAGE_WARNING_MB, Scrapy 2.12)
scheduler_empty        (none) the engine asked the Scheduler for requests and its
                       frontier held none (Scrapy 2; sent by the Scheduler actor)
robots_parsed          robotparser, request (a host's robots.txt was parsed:
                       RobotsTxtMiddleware; request: the one that asked for it)
feed_slot_closed       slot (a feed was stored, or its store failed; the slot is
                       its FeedWriter: uri, format, itemcount; Exporter actor)
feed_exporter_closed   (none) every feed of the crawl is closed (Supervisor)
page_changed           response, request, spider (a revisit found the page changed;
                       its callback runs next; REVISIT_ENABLED, SpiderRunner)
page_unchanged         response, request, spider (a revisit found it unchanged: a
                       304 or the same digest; its callback is not called)
page_gone              response, request, spider (a revisit was answered 404/410)
=====================  ============================================================

Deprecated aliases kept from Scrapy: ``stats_spider_opened`` (= spider_opened),
``stats_spider_closing`` and ``stats_spider_closed`` (= spider_closed),
``item_passed`` (= item_scraped), ``request_received`` (= request_scheduled).
"""

__all__ = [
    "engine_started",
    "engine_stopped",
    "spider_opened",
    "spider_idle",
    "spider_closed",
    "spider_error",
    "request_scheduled",
    "request_dropped",
    "response_received",
    "response_downloaded",
    "item_scraped",
    "item_dropped",
    "item_error",
    "request_reached_downloader",
    "request_left_downloader",
    "headers_received",
    "bytes_received",
    "memusage_warning_reached",
    "scheduler_empty",
    "robots_parsed",
    "feed_slot_closed",
    "feed_exporter_closed",
    "page_changed",
    "page_unchanged",
    "page_gone",
    "stats_spider_opened",
    "stats_spider_closing",
    "stats_spider_closed",
    "item_passed",
    "request_received",
]


class _Signal:
    """A signal: an object compared by identity, with a readable repr for logs."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<signal {self.name}>"

    def __reduce__(self):
        # pickling (e.g. into another process) resolves to the same module object
        return (_lookup, (self.name,))


def _lookup(name):
    return globals()[name]


engine_started = _Signal("engine_started")
engine_stopped = _Signal("engine_stopped")
spider_opened = _Signal("spider_opened")
spider_idle = _Signal("spider_idle")
spider_closed = _Signal("spider_closed")
spider_error = _Signal("spider_error")
request_scheduled = _Signal("request_scheduled")
request_dropped = _Signal("request_dropped")
response_received = _Signal("response_received")
response_downloaded = _Signal("response_downloaded")
item_scraped = _Signal("item_scraped")
item_dropped = _Signal("item_dropped")
item_error = _Signal("item_error")
request_reached_downloader = _Signal("request_reached_downloader")
request_left_downloader = _Signal("request_left_downloader")
headers_received = _Signal("headers_received")
bytes_received = _Signal("bytes_received")
memusage_warning_reached = _Signal("memusage_warning_reached")
scheduler_empty = _Signal("scheduler_empty")
robots_parsed = _Signal("robots_parsed")
feed_slot_closed = _Signal("feed_slot_closed")
feed_exporter_closed = _Signal("feed_exporter_closed")
page_changed = _Signal("page_changed")
page_unchanged = _Signal("page_unchanged")
page_gone = _Signal("page_gone")

# for backwards compatibility
stats_spider_opened = spider_opened
stats_spider_closing = spider_closed
stats_spider_closed = spider_closed

item_passed = item_scraped

request_received = request_scheduled
