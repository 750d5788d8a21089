"""The dashboard's HTTP server (stdlib ``http.server``, one thread per connection) and
the ``METRICS_ENABLED`` listener; the routes and the rules are said in
:mod:`crawlfw.dashboard`.
"""

import hmac
import http.cookies
import logging
import mimetypes
import os
import re
import secrets
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from crawlfw.core.control.protocol import ControlError
from crawlfw.dashboard.sources import NoSuchCrawl, NotShared, command_workers, dumps

logger = logging.getLogger(__name__)

__all__ = ["DashboardServer", "STATIC_DIR", "COOKIE_NAME"]

#: The page and its assets, served from the package.
STATIC_DIR = Path(__file__).resolve().parent / "static"

#: The cookie the server sets when ``/?token=`` is loaded is this name and the port,
#: ``crawlfw_dashboard_<PORT>``: cookies do not tell ports apart (RFC 6265 §8.5), so two
#: dashboards on one machine would otherwise overwrite each other's.
COOKIE_NAME = "crawlfw_dashboard"

#: Seconds between two looks for new samples of an event stream.
EVENTS_POLL_S = 1.0

#: Seconds of silence after which an event stream sends a comment line (keep-alive).
KEEPALIVE_S = 15.0

#: Most connections served at once (event streams hold theirs); more get 503.
MAX_CONNECTIONS = 64

#: The commands a POST may send, by path end.
COMMANDS = {"pause": "pause_crawl", "resume": "resume_crawl", "stop": "stop_crawl"}

_STATIC_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
_CRAWL_ROUTE = re.compile(r"^/api/crawls/([^/]+)/(history|events|pause|resume|stop)$")
_SHARED_ROUTE = re.compile(r"^/api/shared/([^/]+)/(pause|resume|stop)$")

_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".txt": "text/plain; charset=utf-8",
}

#: What the page may load and run: its own files only (no inline script).
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self' "
                           "'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
                           "frame-ancestors 'none'; base-uri 'none'; form-action 'self'")


def content_type(name: str) -> str:
    """The ``Content-Type`` of a static file named ``name``."""
    suffix = os.path.splitext(name)[1].lower()
    return (_CONTENT_TYPES.get(suffix) or mimetypes.guess_type(name)[0]
            or "application/octet-stream")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 32

    def __init__(self, address, handler, dashboard):
        self.dashboard = dashboard
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(address, handler)

    def process_request(self, request, client_address):
        if not self.slots.acquire(blocking=False):
            try:
                request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                                b"Connection: close\r\n\r\n")
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            self.slots.release()
            raise

    def handle_error(self, request, client_address):
        logger.debug("Dashboard: a request from %(client)s failed", {"client": client_address},
                     exc_info=True)

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


class DashboardServer:
    """An HTTP server on 127.0.0.1 serving a crawl source's dashboard (or only
    ``/metrics``), on a daemon thread.

    Args:
        source: a :class:`~crawlfw.dashboard.sources.LocalSource` or
            :class:`~crawlfw.dashboard.sources.RemoteSource`.
        port: the TCP port (0: a free one).
        metrics_only: serve ``/metrics`` alone, without a token (``METRICS_ENABLED``).
        recorder: the in-crawl :class:`~crawlfw.dashboard.sampler.Recorder` (told when a
            page looks), or None.

    Attributes:
        token: the random token (None with ``metrics_only``).
        port: the port listened on, once :meth:`start` returned.
    """

    def __init__(self, source, port: int = 0, *, metrics_only: bool = False,
                 recorder=None) -> None:
        self.source = source
        self.metrics_only = metrics_only
        self.recorder = recorder
        self.token = None if metrics_only else secrets.token_urlsafe(32)
        self.port = int(port)
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/?token=TOKEN`` (``.../metrics`` with ``metrics_only``)."""
        if self.metrics_only:
            return f"http://127.0.0.1:{self.port}/metrics"
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def start(self) -> "DashboardServer":
        """Listen on 127.0.0.1 and serve on a daemon thread.

        Raises:
            OSError: the port cannot be bound (in use: ``EADDRINUSE``).
        """
        self._httpd = _Server(("127.0.0.1", self.port), _Handler, self)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={
            "poll_interval": 0.1}, name="crawlfw-dashboard" + ("-metrics" if self.metrics_only
                                                                else ""), daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving (event streams end within a second); safe to call twice."""
        if self._closed.is_set():
            return
        self._closed.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    @property
    def cookie_name(self) -> str:
        """``crawlfw_dashboard_<PORT>`` (see :data:`COOKIE_NAME`)."""
        return f"{COOKIE_NAME}_{self.port}"

    # --- checks -------------------------------------------------------------------------

    def host_allowed(self, host: str | None) -> bool:
        """The DNS-rebinding defence: ``Host`` must name this server by loopback address
        or ``localhost`` and its port."""
        if not host:
            return False
        return host.lower() in (f"127.0.0.1:{self.port}", f"localhost:{self.port}")

    def origin_allowed(self, origin: str | None) -> bool:
        """A POST's ``Origin`` (when sent) must be this server's."""
        if origin is None:
            return True
        return origin.lower() in (f"http://127.0.0.1:{self.port}", f"http://localhost:{self.port}")

    def token_ok(self, given: str | None) -> bool:
        """``given`` is the token (constant-time comparison)."""
        if self.token is None or not given:
            return False
        return hmac.compare_digest(given.encode("utf-8", "replace"), self.token.encode())


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    server_version = "crawlfw-dashboard"
    sys_version = ""

    @property
    def dashboard(self) -> DashboardServer:
        return self.server.dashboard

    def log_message(self, format, *args):  # noqa: A002 (http.server's name)
        logger.debug("Dashboard: %(client)s %(line)s",
                     {"client": self.address_string(), "line": format % args})

    # --- replies ------------------------------------------------------------------------

    def _headers(self, status: int, ctype: str, length: int | None, extra=()) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()

    def _send(self, status: int, body: bytes, ctype: str, extra=()) -> None:
        self._headers(status, ctype, len(body), extra)
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, dumps(value), "application/json")

    def _error(self, status: int, text: str) -> None:
        self._json(status, {"ok": False, "error": text})

    # --- the gate -----------------------------------------------------------------------

    def _given_token(self, query: dict) -> str | None:
        values = query.get("token")
        if values:
            return values[0]
        auth = self.headers.get("Authorization") or ""
        if auth[:7].lower() == "bearer ":
            return auth[7:].strip()
        cookie = self.headers.get("Cookie")
        if cookie:
            try:
                jar = http.cookies.SimpleCookie(cookie)
            except http.cookies.CookieError:
                return None
            morsel = jar.get(self.dashboard.cookie_name)
            if morsel is not None:
                return morsel.value
        return None

    def _gate(self) -> tuple[str, dict] | None:
        """The path and query of an allowed request; None once it was refused."""
        dashboard = self.dashboard
        if not dashboard.host_allowed(self.headers.get("Host")):
            self._error(403, "Host must be 127.0.0.1:PORT or localhost:PORT")
            return None
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        if dashboard.metrics_only:
            if url.path != "/metrics":
                self._error(404, "only /metrics is served here")
                return None
            return url.path, query
        if not dashboard.token_ok(self._given_token(query)):
            self._error(403, "a valid token is needed (?token=, Authorization: Bearer, or "
                             "the cookie set by /?token=)")
            return None
        return url.path, query

    # --- methods ------------------------------------------------------------------------

    def do_GET(self):  # noqa: N802 (http.server's name)
        gate = self._gate()
        if gate is None:
            return
        path, query = gate
        try:
            self._route_get(path, query)
        except NoSuchCrawl as e:
            self._error(404, str(e))
        except ControlError as e:
            self._error(502, str(e))
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_HEAD = do_GET

    def do_POST(self):  # noqa: N802 (http.server's name)
        gate = self._gate()
        if gate is None:
            return
        if not self.dashboard.origin_allowed(self.headers.get("Origin")):
            self._error(403, "Origin must be this dashboard's")
            return
        path, _ = gate
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            self.close_connection = True
            self._error(400, "bad Content-Length")
            return
        if length > 65536:
            self.close_connection = True  # the rest of the body is not read
        if length > 0:
            self.rfile.read(min(length, 65536))
        shared = _SHARED_ROUTE.match(path)
        if shared is not None:
            self._command_workers(urllib.parse.unquote(shared.group(1)), shared.group(2))
            return
        match = _CRAWL_ROUTE.match(path)
        if path == "/metrics" or match is None:
            self._error(404 if match is None and path != "/metrics" else 405, "no such command")
            return
        crawl, action = match.group(1), match.group(2)
        if action not in COMMANDS:
            self._error(405, f"{action} takes GET")
            return
        message: dict[str, Any] = {"type": COMMANDS[action]}
        if action == "stop":
            message["reason"] = "shutdown"
        try:
            self.dashboard.source.ask(urllib.parse.unquote(crawl), message)
        except NoSuchCrawl as e:
            self._error(404, str(e))
            return
        except ControlError as e:
            self._error(409, str(e))
            return
        logger.info("Dashboard: %(action)s crawl %(crawl)s", {"action": action, "crawl": crawl})
        self._json(200, {"ok": True})

    def _command_workers(self, crawl: str, action: str) -> None:
        """Every worker of the shared crawl ``crawl`` is a worker of
        (:func:`~crawlfw.dashboard.sources.command_workers`): 200 when one was reached
        (``ok`` says whether every one was), 409 when none was."""
        try:
            answer = command_workers(self.dashboard.source, crawl, action)
        except NoSuchCrawl as e:
            self._error(404, str(e))
            return
        except NotShared as e:
            self._error(409, str(e))
            return
        except ControlError as e:
            self._error(502, str(e))
            return
        reached = [w["worker"] for w in answer["workers"] if w["reached"]]
        logger.info("Dashboard: %(action)s every worker of %(frontier)s (reached: %(reached)s)",
                    {"action": action, "frontier": answer["frontier"],
                     "reached": ", ".join(reached) or "none"})
        if not reached and answer["published"] is None:
            self._json(409, {**answer, "ok": False, "error": answer["error"] or
                             f"no worker took the {action}"})
            return
        self._json(200, answer)

    def _method_not_allowed(self):
        if self._gate() is not None:
            self._error(405, "only GET and POST")

    do_PUT = do_DELETE = do_PATCH = _method_not_allowed

    # --- GET routes ---------------------------------------------------------------------

    def _route_get(self, path: str, query: dict) -> None:
        if path == "/metrics":
            from crawlfw.dashboard.metrics import CONTENT_TYPE, exposition

            self._send(200, exposition(self.dashboard.source), CONTENT_TYPE)
            return
        if path in ("/", "/index.html"):
            extra = []
            if query.get("token"):  # the page's later requests carry the cookie
                extra.append(("Set-Cookie", f"{self.dashboard.cookie_name}={self.dashboard.token}; HttpOnly; "
                                            "SameSite=Strict; Path=/"))
            self._static("index.html", extra)
            return
        if path.startswith("/static/"):
            self._static(urllib.parse.unquote(path[len("/static/"):]))
            return
        if path == "/api/crawls":
            self._json(200, self.dashboard.source.crawls())
            return
        if _SHARED_ROUTE.match(path):
            self._error(405, "a command takes POST (no state change on GET)")
            return
        match = _CRAWL_ROUTE.match(path)
        if match is None:
            self._error(404, f"no such page {path!r}")
            return
        crawl, action = urllib.parse.unquote(match.group(1)), match.group(2)
        if action in COMMANDS:
            self._error(405, f"{action} takes POST (no state change on GET)")
            return
        since = _float(query.get("since"))
        if action == "history":
            reply = self.dashboard.source.ask(crawl, {"type": "get_history", "since": since})
            self._json(200, {"interval": reply["interval"], "samples": reply["samples"],
                             "errors": reply["errors"]})
            return
        self._events(crawl, since)

    def _static(self, name: str, extra=()) -> None:
        if not _STATIC_NAME.match(name):
            self._error(404, "no such file")
            return
        path = STATIC_DIR / name
        try:
            body = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            self._error(404, "no such file")
            return
        self._send(200, body, content_type(name), extra)

    def _events(self, crawl: str, since: float | None) -> None:
        """Server-sent events: ``sample`` (a sample, its ``t`` as the event id),
        ``error`` (a recent error), ``end`` (the crawl is gone), until the client or the
        server goes away."""
        last_event = _float([self.headers.get("Last-Event-ID")] if
                            self.headers.get("Last-Event-ID") else None)
        if last_event is not None:
            since = last_event
        source = self.dashboard.source
        first = source.ask(crawl, {"type": "get_history", "since": since})
        self._headers(200, "text/event-stream; charset=utf-8", None,
                      [("Connection", "close")])
        self.close_connection = True
        if self.command == "HEAD":
            return
        if since is None:  # only what comes from now on (the page read the history)
            samples = first["samples"][-1:]
            errors: list = []
        else:
            samples, errors = first["samples"], first["errors"]
        last_t = samples[-1]["t"] if samples else (since or 0.0)
        last_error_t = time.time() if since is None else since
        quiet_since = time.monotonic()
        closed = self.dashboard._closed
        while True:
            chunks = [b"event: sample\nid: %s\ndata: %s\n\n" % (repr(s["t"]).encode(), dumps(s))
                      for s in samples]
            chunks += [b"event: error\ndata: %s\n\n" % dumps(e) for e in errors]
            if samples:
                last_t = samples[-1]["t"]
            if errors:
                last_error_t = max(last_error_t, errors[-1]["t"])
            if chunks:
                self.wfile.write(b"".join(chunks))
                self.wfile.flush()
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= KEEPALIVE_S:
                self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
                quiet_since = time.monotonic()
            if closed.wait(EVENTS_POLL_S):
                return
            try:
                reply = source.ask(crawl, {"type": "get_history", "since": last_t})
            except (NoSuchCrawl, ControlError) as e:
                self.wfile.write(b"event: end\ndata: %s\n\n" % dumps({"reason": str(e)}))
                self.wfile.flush()
                return
            samples = reply["samples"]
            errors = [e for e in reply["errors"] if e["t"] > last_error_t]


def _float(values) -> float | None:
    if not values:
        return None
    try:
        value = float(values[0])
    except (TypeError, ValueError):
        return None
    return value if value == value and abs(value) != float("inf") else None

