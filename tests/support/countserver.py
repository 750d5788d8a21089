"""A local HTTP server that records how many requests it serves at once.

Paths: ``/page/<n>`` (HTML with links to ``/page/<n+1>`` .. up to ``links`` pages),
``/status/<code>`` (that status with a small HTML body), ``/slow/<n>`` (holds the
connection ``hold_s`` seconds, to make concurrency observable).
"""

import http.server
import threading
import time


class CountingServer:
    """Args:
    hold_s: seconds each ``/slow/`` request is held open (simulates a slow site).

    Attributes:
        url: ``http://127.0.0.1:PORT``.
        max_active: the most requests that were being served at the same time.
        paths: every path requested, in arrival order.
        times: the ``time.monotonic()`` of each arrival, in the same order.
    """

    def __init__(self, hold_s: float = 0.2):
        self.hold_s = hold_s
        self.active = 0
        self.max_active = 0
        self.paths = []
        self.times = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):  # noqa: N802
                with server._lock:
                    server.active += 1
                    server.max_active = max(server.max_active, server.active)
                    server.paths.append(self.path)
                    server.times.append(time.monotonic())
                try:
                    status, body = server._answer(self.path)
                finally:
                    with server._lock:
                        server.active -= 1
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class Server(http.server.ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # clients (aborted transfers) may reset connections: not an error here

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def _answer(self, path):
        parts = path.strip("/").split("/")
        if parts[0] == "slow":
            self._stop.wait(self.hold_s)  # hold the connection, as a slow site does
            return 200, f"<html><title>slow {parts[1]}</title></html>".encode()
        if parts[0] == "status":
            code = int(parts[1])
            return code, f"<html><title>status {code}</title></html>".encode()
        if parts[0] == "page":
            n = int(parts[1])
            links = "".join(f'<a href="/page/{m}">p{m}</a>' for m in range(n + 1, n + 4))
            return 200, f"<html><title>page {n}</title><body>{links}</body></html>".encode()
        return 404, b"<html><title>not found</title></html>"

    def stop(self):
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
