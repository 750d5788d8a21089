"""Real HTTP servers for tests, bound to 127.0.0.1 on a free port, run in a thread."""

import contextlib
import http.server
import threading
from functools import partial
from pathlib import Path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """SimpleHTTPRequestHandler without stderr logging; it already answers a slashless
    directory URL with ``301 Location: <dir>/`` and serves ``<dir>/index.html``."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002
        pass


class StaticSiteServer:
    """Serve a directory tree over HTTP/1.1 (keep-alive) on 127.0.0.1.

    Args:
        root: the document root.

    Attributes:
        url: ``http://127.0.0.1:PORT`` (no trailing slash), set by ``start()``.
    """

    def __init__(self, root: Path):
        self.root = Path(root)
        self.httpd = None
        self.thread = None
        self.url = None

    def start(self) -> "StaticSiteServer":
        handler = partial(_QuietHandler, directory=str(self.root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()


@contextlib.contextmanager
def handler_server(handler):
    """Serve ``handler`` (a ``BaseHTTPRequestHandler`` subclass) on 127.0.0.1, one thread
    per request, for the ``with`` block.

    Yields:
        the ``ThreadingHTTPServer``, with ``url`` (``http://127.0.0.1:PORT``) and
        ``handler`` set. At the end ``handler.release`` (a ``threading.Event``), when the
        handler has one, is set first, so that requests held on it end; then the server
        stops.
    """
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.handler = handler
    try:
        yield httpd
    finally:
        release = getattr(handler, "release", None)
        if release is not None:
            release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)


class ReplyHandler(http.server.BaseHTTPRequestHandler):
    """A request handler that logs nothing, with :meth:`reply` to send one whole answer
    (for :func:`handler_server`)."""

    def log_message(self, format, *args):  # noqa: A002
        pass

    def reply(self, status: int, body: bytes, content_type: str = "text/html") -> None:
        """Answer ``status`` with ``body`` (``Content-Type`` and ``Content-Length`` set)."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _EchoHandler(http.server.BaseHTTPRequestHandler):
    """Answers every request with JSON describing it: ``{"method", "path", "headers":
    {name: value}, "body"}`` (the body as text); ``/big`` paths get a 64 KiB
    ``text/plain`` body of ``x`` sent in 8 KiB writes instead."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002
        pass

    def _answer(self):
        import json

        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path.startswith("/big"):
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(64 * 1024))
            self.end_headers()
            for _ in range(8):
                self.wfile.write(b"x" * 8192)
                self.wfile.flush()
            return
        data = json.dumps({"method": self.command, "path": self.path,
                           "headers": dict(self.headers.items()),
                           "body": body.decode("latin-1")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _answer  # noqa: N815


class EchoServer(StaticSiteServer):
    """An HTTP/1.1 server on 127.0.0.1 echoing each request as JSON (see
    ``_EchoHandler``); ``start()``/``stop()``/``url`` as for :class:`StaticSiteServer`."""

    def __init__(self):
        super().__init__(Path("."))

    def start(self) -> "EchoServer":
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EchoHandler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self
