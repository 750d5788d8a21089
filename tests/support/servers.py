"""Real HTTP servers for tests, bound to 127.0.0.1 on a free port, run in a thread."""

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
