"""Obey robots.txt (RFC 9309), fetched once per host, parsed by ``ROBOTSTXT_PARSER``.

Enabled by ``ROBOTSTXT_OBEY``. ``ROBOTSTXT_PARSER`` names a
:class:`crawlfw.robotstxt.RobotParser` (default
:class:`~crawlfw.robotstxt.ProtegoRobotParser`; a ``scrapy.robotstxt.`` path means the
``crawlfw.robotstxt.`` one); it is built once from an empty body when the middleware is,
so a parser whose library is missing fails the crawl's start with its message. The user agent matched against the rules is
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
   answer (after retries; redirects are followed) is parsed as an empty file, which
   allows everything. The ``robots_parsed`` signal is sent (``robotparser``, and
   ``request``: the first request that waited for it), as in Scrapy 2. On a download
   error (errback; logged at ERROR, stat ``robotstxt/exception_count/<type>``)
   everything is allowed too, as in Scrapy. Either way each parked request is
   checked against the new parser (:meth:`RobotsTxtMiddleware.process_request_2`) and
   resumed in the engine with
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

from crawlfw import signals
from crawlfw.core.flow.downloadermw import RequestParked
from crawlfw.exceptions import IgnoreRequest, NotConfigured
from crawlfw.http import Request
from crawlfw.robotstxt import ProtegoRobotParser
from crawlfw.utils.httpobj import urlparse_cached
from crawlfw.utils.misc import build_from_crawler, load_object
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
        path = crawler.settings.get("ROBOTSTXT_PARSER") or ProtegoRobotParser
        if isinstance(path, str) and path.startswith("scrapy.robotstxt."):
            path = "crawlfw" + path[len("scrapy"):]
        self._parserimpl = load_object(path)
        self.crawler = crawler
        # Built now, at the crawl's start: a missing library fails here with its message
        # (Scrapy does the same), and its imports (protego) are done before a process
        # out of file descriptors (EMFILE) could fail them at the first robots.txt.
        build_from_crawler(self._parserimpl, crawler, b"")
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

    def process_request(self, request, spider=None):
        if spider is None:  # (the crawler's spider, Scrapy 2.19)
            spider = self.crawler.spider
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
        self.process_request_2(parser, request)

    def process_request_2(self, rp, request):
        """Check ``request`` against ``rp`` (Scrapy 2.13's name): nothing when allowed
        or when ``rp`` is None (no robots.txt rules: allow all); forbidden, a DEBUG log
        "Forbidden by robots.txt: <request>", the stat ``robotstxt/forbidden`` and
        ``IgnoreRequest``.

        Args:
            rp: a :class:`crawlfw.robotstxt.RobotParser`, or None.
            request: the request.

        Raises:
            IgnoreRequest: robots.txt forbids the request.
        """
        if rp is None:
            return
        spider = self.crawler.spider
        if not rp.allowed(request.url, self._useragent(request, spider)):
            raise self._forbidden_error(request, spider)

    async def robot_parser(self, request):
        """The parser of ``request``'s host (Scrapy 2.13's coroutine), for a subclass
        whose ``process_request`` is ``rp = await self.robot_parser(request);
        self.process_request_2(rp, request)``.

        Returns:
            crawlfw.robotstxt.RobotParser | None: the host's parser when its robots.txt
            is known (None: allow all).

        Raises:
            RequestParked: the host's robots.txt is not known yet: it is fetched (once
                per host) and the request waits in the engine, to be checked with
                :meth:`process_request_2` when it arrives, as every request does that
                reaches this middleware first (no thread waits: the engine's thread,
                which runs the middlewares, must stay free to download it).
        """
        parsed = urlparse_cached(request)
        netloc = parsed.netloc
        with self._lock:
            if netloc in self._parsers:
                self._parsers.move_to_end(netloc)
                return self._parsers[netloc]
            first = netloc not in self._parked
            self._parked.setdefault(netloc, []).append(request)
        if first:
            self._fetch_robots(parsed, netloc, self.crawler.spider)
        raise RequestParked(f"waiting for {parsed.scheme}://{netloc}/robots.txt")

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
        body = response.body if 200 <= response.status < 300 else b""
        parser = self.parse_robotstxt(body, response, spider)
        if parser is not None:
            with self._lock:
                waiting = self._parked.get(netloc) or [response.request]
            self.crawler.signals.send_catch_log(signals.robots_parsed, robotparser=parser,
                                                request=waiting[0])
        self._release(netloc, parser, spider)
        return []

    def parse_robotstxt(self, body: bytes, response=None, spider=None):
        """Parse a robots.txt body (bytes, UTF-8 per RFC 9309 §2.3) with the
        ``ROBOTSTXT_PARSER`` class (``from_crawler(crawler, body)``).

        With the default parser, undecodable bytes are dropped and a UTF-8 BOM is
        ignored. A body the parser cannot parse is logged at WARNING and allows
        everything.

        Returns:
            A :class:`crawlfw.robotstxt.RobotParser`, or None (allow all).
        """
        parserimpl = getattr(self, "_parserimpl", ProtegoRobotParser)
        try:
            return build_from_crawler(parserimpl, getattr(self, "crawler", None), body)
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
            try:
                self.process_request_2(parser, request)
            except IgnoreRequest as e:
                error = e
            else:
                error = None
            engine.resume_parked(request, error)
