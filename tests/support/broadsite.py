"""One local HTTP server answering for many host names, for broad-crawl tests.

Any ``Host`` gets the same small site of ``pages`` pages: ``/`` links to ``/p/1``,
``/p/<n>`` to ``/p/<n+1>`` up to ``pages - 1``. Host names such as ``site7.localhost``
need no lookup: curl resolves ``*.localhost`` to the loopback address by itself. Each
answer closes its connection when ``keepalive`` is False (a broad crawl seldom asks one
host twice in a row), so the server holds no idle connection.

For skewed mixes (one big host among many small ones): ``host_pages`` gives some host
names another number of pages, ``links`` makes each page link to the next ``links``
pages, and ``latency_s`` holds every answer that long (a slow site: a fixed latency per
response, so politeness, not CPU, bounds the crawl). The server counts the requests it
serves at once per host name (``max_active``: what politeness limits) and when the
first request came and the last answer went (``first_s``, ``last_s``: the crawl's span
without the crawler's start-up).
"""

import http.server
import threading
import time


class BroadSite:
    """Args:
    pages: pages per host (>= 1).
    keepalive: keep connections open between requests (HTTP/1.1 default).
    latency_s: seconds each answer is held before it is sent.
    links: how many following pages each page links to (``/p/<n+1>`` ..).
    fanout: instead, each page links to its ``fanout`` children of a tree
        (``/p/<n * fanout + 1>`` .. ``/p/<n * fanout + fanout>``): a site whose every
        page brings many new links.
    host_pages: ``{host name: pages}`` for hosts with another number of pages.
    record: keep :attr:`log`.
    address: the loopback address to listen on.

    Attributes:
        port: the TCP port on ``address`` (127.0.0.1).
        served: requests answered so far.
        served_by_host: ``{host name: requests answered}``.
        max_active: ``{host name: the most requests it was serving at once}``.
        first_s, last_s: ``time.monotonic()`` of the first request received and of
            the last answer sent (None before).
        log: with ``record``, ``(time.monotonic(), host name, User-Agent)`` of every
            request received, in order (which worker asked what, when).
        active_by_agent: with ``record``, ``{User-Agent: requests being served now}``.
    """

    def __init__(self, pages: int = 2, keepalive: bool = False, latency_s: float = 0.0,
                 links: int = 1, host_pages: dict | None = None, fanout: int = 0,
                 record: bool = False, address: str = "127.0.0.1"):
        self.pages = pages
        self.served = 0
        self.served_by_host = {}
        self.max_active = {}
        self.first_s = self.last_s = None
        self.log = []
        self.active_by_agent = {}
        active = {}
        site = self
        lock = threading.Lock()
        stopping = self._stopping = threading.Event()

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):  # noqa: N802
                host = (self.headers.get("Host") or "").rsplit(":", 1)[0].lower()
                with lock:
                    if site.first_s is None:
                        site.first_s = time.monotonic()
                    agent = self.headers.get("User-Agent", "")
                    if record:
                        site.log.append((time.monotonic(), host, agent))
                        by_agent = site.active_by_agent
                        by_agent[agent] = by_agent.get(agent, 0) + 1
                    now = active[host] = active.get(host, 0) + 1
                    if now > site.max_active.get(host, 0):
                        site.max_active[host] = now
                self._counted = (host, agent)
                try:
                    self._answer(host)
                finally:
                    with lock:
                        self._uncount()
                        site.last_s = time.monotonic()

            def _uncount(self):
                # Called under ``lock``, once: just before the answer is written (so the
                # crawler, which may start its next request as soon as it has read this
                # answer, never meets a count one too high), else when the answer failed.
                if self._counted is None:
                    return
                host, agent = self._counted
                self._counted = None
                active[host] -= 1
                if record:
                    site.active_by_agent[agent] -= 1

            def _answer(self, host):
                path = self.path
                pages = site.pages
                if host_pages:
                    pages = host_pages.get(host, pages)
                n = 0 if path == "/" else int(path.rsplit("/", 1)[1]) if path.startswith(
                    "/p/") and path.rsplit("/", 1)[1].isdigit() else -1
                if latency_s:
                    stopping.wait(latency_s)  # a slow site
                if not 0 <= n < pages:
                    body, status = b"not found", 404
                else:
                    first, last = (n * fanout + 1, n * fanout + 1 + fanout) if fanout \
                        else (n + 1, n + 1 + links)
                    link = "".join(f'<a href="/p/{m}">next</a>'
                                   for m in range(first, min(last, pages)))
                    body = (f"<html><head><title>page {n}</title></head><body>{link}"
                            "</body></html>").encode()
                    status = 200
                with lock:
                    site.served += 1
                    site.served_by_host[host] = site.served_by_host.get(host, 0) + 1
                    self._uncount()
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                if not keepalive:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(body)

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 1024

        self._server = Server((address, 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="broad-site")
        self._thread.start()

    def url(self, host: int) -> str:
        """The start URL of host number ``host``: ``http://site<host>.localhost:<port>/``."""
        return f"http://site{host}.localhost:{self.port}/"

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
