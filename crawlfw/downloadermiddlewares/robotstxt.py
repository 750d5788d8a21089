"""Obey robots.txt (RFC 9309), fetched once per host, parsed with Protego.

Enabled by ``ROBOTSTXT_OBEY``. The user agent matched against the rules is
``ROBOTSTXT_USER_AGENT`` if set, else the request's ``User-Agent`` header, else the
spider's ``user_agent`` attribute, else ``USER_AGENT``.

Design (no Deferreds: Scrapy 1.2 made ``process_request`` wait on a Deferred):

1. ``process_request`` of a request whose host (``scheme://netloc`` is fetched, the
   cache key is the netloc, as in Scrapy) has a known robots.txt checks it at once:
   allowed -> None (go on); disallowed -> ``IgnoreRequest("Forbidden by robots.txt")``,
   a DEBUG log "Forbidden by robots.txt: <request>" and the stat ``robotstxt/forbidden``.
2. For a host whose robots.txt is not known yet, the first such request makes the
   middleware schedule ``<scheme>://<netloc>/robots.txt`` with
   ``crawler.engine.crawl(robots_request, spider)``: priority
   :attr:`RobotsTxtMiddleware.DOWNLOAD_PRIORITY`, ``dont_filter``, meta
   ``dont_obey_robotstxt``, callback/errback on this middleware (stat
   ``robotstxt/request_count``). That request and every later one for the same host
   are **parked**: ``process_request`` raises
   :class:`crawlfw.core.flow.downloadermw.RequestParked`, and the engine keeps the request
   (its frontier lease too) until this middleware resumes it; the middleware notes it
   under its host.
3. When robots.txt arrives (callback; stats ``robotstxt/response_count`` and
   ``robotstxt/response_status_count/<status>``), a 2xx body is parsed; a 4xx or 5xx
   answer (after retries; redirects are followed) allows everything. On a download
   error (errback; logged at ERROR, stat ``robotstxt/exception_count/<type>``)
   everything is allowed too, as in Scrapy. Either way each parked request is
   checked against the new parser and resumed in the engine with
   ``crawler.engine.resume_parked(request, error)``: allowed, it goes on through the
   downloader middlewares after this one and is downloaded; disallowed, ``error`` is
   the ``IgnoreRequest`` of step 1 (logged, counted), which goes to
   ``process_exception`` and the request's errback, as Scrapy 1.2's Deferred failing
   did. It never goes back to the scheduler (no second dupefilter pass, no second
   push), and it is decided when released, so the parser's eviction meanwhile does not
   matter.

Memory (broad crawls): the parsers are kept in an LRU of at most
``ROBOTSTXT_CACHE_SIZE`` hosts (default 5000; 0 or less: unbounded). A host whose
parser was evicted is treated as unknown again: its next request parks and its
robots.txt is fetched again. The parked lists are separate from the cache, so
eviction never drops a parked request; they hold only hosts with a fetch in flight.

Threads: ``process_request`` runs on the engine's thread and the robots.txt callback
on the spider runner's, so the parser cache and the parked lists are guarded by a
lock; the engine's ``crawl`` and ``resume_parked`` are thread-safe (messages).
"""

import functools
import logging
import threading
from collections import OrderedDict

from crawlfw.core.flow.downloadermw import RequestParked
from crawlfw.exceptions import IgnoreRequest, NotConfigured
from crawlfw.http import Request
from crawlfw.utils.httpobj import urlparse_cached
from crawlfw.utils.python import global_object_name, to_unicode

__all__ = ["RobotsTxtMiddleware"]

logger = logging.getLogger(__name__)

_NETLOC_META = "_robotstxt_netloc"


class RobotsTxtMiddleware:
    """Drop requests that the target host's robots.txt disallows.

    Args:
        crawler: the Crawler (settings, stats, engine).

    Raises:
        NotConfigured: ``ROBOTSTXT_OBEY`` is false.
    """

    #: Scheduling priority of robots.txt requests (ahead of normal requests).
    DOWNLOAD_PRIORITY = 1000

    def __init__(self, crawler):
        if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        # protego is imported now, at the crawl's start: imported at the first robots.txt
        # parsed, in a process out of file descriptors (EMFILE), it would fail the parse.
        import protego  # noqa: F401
        self.crawler = crawler
        self._default_useragent = crawler.settings.get("USER_AGENT") or "crawlfw"
        self._robotstxt_useragent = crawler.settings.get("ROBOTSTXT_USER_AGENT")
        # netloc -> Protego, or None meaning "allow all"; least recently used first
        self._parsers = OrderedDict()
        self._cache_size = crawler.settings.getint("ROBOTSTXT_CACHE_SIZE", 5000)
        self._parked = {}  # netloc -> [Request] waiting for that netloc's robots.txt
        self._lock = threading.Lock()

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def _inc(self, key, spider):
        self.crawler.stats.inc_value(key, spider=spider)

    def process_request(self, request, spider):
        meta = request.meta
        if meta.get("dont_obey_robotstxt"):
            return None
        parsed = urlparse_cached(request)
        if parsed.scheme not in ("http", "https"):
            return None
        netloc = parsed.netloc
        with self._lock:
            known = netloc in self._parsers
            if known:
                parser = self._parsers[netloc]
                self._parsers.move_to_end(netloc)
            else:
                first = netloc not in self._parked
                self._parked.setdefault(netloc, []).append(request)
        if known:
            self._check(request, parser, spider)
            return None
        if first:
            self._fetch_robots(parsed, netloc, spider)
        raise RequestParked(f"waiting for {parsed.scheme}://{netloc}/robots.txt")

    def _useragent(self, request, spider) -> str:
        ua = (
            self._robotstxt_useragent
            or request.headers.get(b"User-Agent")
            or getattr(spider, "user_agent", None)
            or self._default_useragent
        )
        return to_unicode(ua, errors="replace")

    def _check(self, request, parser, spider):
        if parser is None or parser.can_fetch(request.url, self._useragent(request, spider)):
            return
        self._forbidden(request, spider)

    def _forbidden(self, request, spider):
        raise self._forbidden_error(request, spider)

    def _forbidden_error(self, request, spider) -> IgnoreRequest:
        """Log and count ``request`` as forbidden; return the ``IgnoreRequest`` for it."""
        logger.debug(
            "Forbidden by robots.txt: %(request)s",
            {"request": request},
            extra={"spider": spider},
        )
        self._inc("robotstxt/forbidden", spider)
        return IgnoreRequest("Forbidden by robots.txt")

    def _fetch_robots(self, parsed, netloc, spider):
        robotsurl = f"{parsed.scheme}://{netloc}/robots.txt"
        robotsreq = Request(
            robotsurl,
            priority=self.DOWNLOAD_PRIORITY,
            meta={
                "dont_obey_robotstxt": True,
                _NETLOC_META: netloc,
                # 4xx/5xx reach the callback; 3xx are still followed
                "handle_httpstatus_list": list(range(400, 600)),
            },
            callback=functools.partial(self._parse_robots, spider=spider),
            errback=functools.partial(self._robots_error, netloc=netloc, spider=spider),
            dont_filter=True,
        )
        self._inc("robotstxt/request_count", spider)
        self.crawler.engine.crawl(robotsreq, spider)

    def _parse_robots(self, response, spider=None):
        """Callback of the robots.txt request: parse it, release the parked requests."""
        netloc = response.meta[_NETLOC_META]
        self._inc("robotstxt/response_count", spider)
        self._inc(f"robotstxt/response_status_count/{response.status}", spider)
        parser = None
        if 200 <= response.status < 300:
            parser = self.parse_robotstxt(response.body, response, spider)
        self._release(netloc, parser, spider)
        return []

    def parse_robotstxt(self, body: bytes, response=None, spider=None):
        """Parse a robots.txt body (bytes, UTF-8 per RFC 9309 §2.3) into a Protego parser.

        Undecodable bytes are dropped and a UTF-8 BOM is ignored. A body Protego cannot
        parse is logged at WARNING and allows everything.

        Returns:
            A ``protego.Protego``, or None (allow all).
        """
        from protego import Protego  # first use: a crawl without ROBOTSTXT_OBEY needs none

        text = to_unicode(body, encoding="utf-8", errors="ignore").lstrip("\ufeff")
        try:
            return Protego.parse(text)
        except Exception:
            logger.warning(
                "Error parsing robots.txt %(response)s, allowing all requests to its host",
                {"response": response},
                exc_info=True,
                extra={"spider": spider},
            )
            return None

    def _robots_error(self, failure, netloc, spider):
        """Errback of the robots.txt request: allow all, release the parked requests."""
        exc = getattr(failure, "value", failure)
        if not isinstance(exc, IgnoreRequest):
            request = getattr(failure, "request", None)
            logger.error(
                "Error downloading %(request)s: %(f_exception)s",
                {"request": request or f"robots.txt of {netloc}", "f_exception": exc},
                exc_info=(type(exc), exc, exc.__traceback__),
                extra={"spider": spider},
            )
        self._inc(f"robotstxt/exception_count/{global_object_name(type(exc))}", spider)
        self._release(netloc, None, spider)
        return []

    def _release(self, netloc, parser, spider):
        with self._lock:
            parsers = self._parsers
            parsers[netloc] = parser
            parsers.move_to_end(netloc)
            if 0 < self._cache_size < len(parsers):
                parsers.popitem(last=False)  # the least recently used host
            parked = self._parked.pop(netloc, [])
        engine = self.crawler.engine
        for request in parked:
            # Decided now, against this parser, so it never depends on the parser still
            # being cached (a cache smaller than the hosts in flight would thrash).
            allowed = parser is None or parser.can_fetch(
                request.url, self._useragent(request, spider))
            error = None if allowed else self._forbidden_error(request, spider)
            engine.resume_parked(request, error)
