"""Helpers shared by the middleware tests: a real Crawler, an engine recorder, a real
HTTP server with scripted answers and a plain ``fetch`` (the downloader is another
part's: these tests send requests with ``http.client``).

``get_crawler`` builds a real :class:`crawlfw.crawler.Crawler` (real Settings,
SignalManager, stats collector) without starting a crawl, so ``crawler.engine`` is
None; tests that need ``crawler.engine.crawl`` install a :class:`RecordingEngine`,
which stands in for the engine actor's facade and only records what it is given.
"""

import http.client
import http.server
import threading
from urllib.parse import urlsplit

from crawlfw import signals
from crawlfw.crawler import Crawler
from crawlfw.http import Headers
from crawlfw.responsetypes import responsetypes
from crawlfw.spiders import Spider


class _TestSpider(Spider):
    name = "test"


def get_crawler(settings_dict=None, spidercls=None):
    """A real Crawler for ``spidercls`` (default: a plain spider named 'test')."""
    return Crawler(spidercls or _TestSpider, settings_dict)


def open_spider(crawler, name="test", **kwargs):
    """Create the crawler's spider and fire ``spider_opened``, as the engine does."""
    spider = crawler._create_spider(name, **kwargs)
    crawler.spider = spider
    crawler.stats.open_spider(spider)
    crawler.signals.send_catch_log(signals.spider_opened, spider=spider)
    return spider


def close_crawler(crawler, spider=None):
    """Fire ``spider_closed`` and ``engine_stopped`` (releases the log handler)."""
    if spider is not None:
        crawler.signals.send_catch_log(signals.spider_closed, spider=spider, reason="finished")
    crawler.signals.send_catch_log(signals.engine_stopped)


class RecordingEngine:
    """Stands in for ``crawler.engine``: records ``crawl(request, spider)`` calls, and
    ``resume_parked(request, error)`` calls as ``(request, error)`` in ``resumed``."""

    def __init__(self):
        self.crawled = []
        self.resumed = []
        self._lock = threading.Lock()

    def crawl(self, request, spider=None):
        with self._lock:
            self.crawled.append(request)

    def resume_parked(self, request, error=None):
        with self._lock:
            self.resumed.append((request, error))

    def close_spider(self, spider=None, reason="cancelled"):  # pragma: no cover - unused
        pass


# --- a real HTTP server with scripted answers, and a plain fetch -----------------------


class _ScriptedHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002
        pass

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        server = self.server
        with server.lock:
            server.received.append(
                {"method": self.command, "path": self.path, "headers": self.headers, "body": body}
            )
            route = server.routes.get(self.path.split("?")[0])
            if isinstance(route, list):  # a sequence of answers, the last one repeats
                answer = route.pop(0) if len(route) > 1 else route[0]
            else:
                answer = route
        if answer is None:
            answer = (404, [("Content-Type", "text/plain")], b"no route")
        if callable(answer):
            answer = answer(self)
        status, headers, payload = answer
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_HEAD = do_PUT = _answer


class ScriptedServer:
    """An HTTP/1.1 server on 127.0.0.1 answering from ``routes``.

    ``routes[path]`` is ``(status, [(header, value), ...], body_bytes)``, a list of such
    answers given in turn (the last one repeats), or a function of the handler
    returning one. Every request is recorded in ``received`` (method, path, headers,
    body). Use as a context manager.
    """

    def __init__(self, routes=None):
        self.routes = dict(routes or {})
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ScriptedHandler)
        self.httpd.daemon_threads = True
        self.httpd.routes = self.routes
        self.httpd.received = []
        self.httpd.lock = threading.Lock()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def received(self):
        return self.httpd.received

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def fetch(request, timeout_s=10.0):
    """Send a crawlfw ``Request`` with http.client, as the downloader would: no
    redirect following, no decompression, every header sent as is. Returns a crawlfw
    Response of the class ``responsetypes`` picks, with ``request`` attached."""
    parts = urlsplit(request.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout_s)
    try:
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        conn.putrequest(request.method, path, skip_accept_encoding=True)
        for name, values in request.headers.items():
            for value in values:
                conn.putheader(name, value)
        conn.endheaders(request.body or None)
        raw = conn.getresponse()
        body = raw.read()
        headers = Headers()
        for name, value in raw.getheaders():
            headers.appendlist(name, value.encode("latin-1"))
    finally:
        conn.close()
    respcls = responsetypes.from_args(headers=headers, url=request.url, body=body)
    return respcls(url=request.url, status=raw.status, headers=headers, body=body, request=request)
