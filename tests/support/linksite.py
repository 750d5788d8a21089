"""A generated site of linked pages served on 127.0.0.1, for crash and resume tests.

``/p/<n>`` (``0 <= n < pages``) is an HTML page titled ``page <n>`` that links to page
``n + 1`` (so every page is reachable from ``/p/0``) and to ``fanout`` other pages chosen
by a :class:`random.Random` seeded with ``seed`` and ``n`` (the same site every run).
Each answer may be held ``delay_s`` seconds, to slow the crawl down enough to interrupt it.
"""

import http.server
import random
import threading
import time


class LinkSite:
    """Args:
    pages: how many pages.
    fanout: links per page besides the next page.
    seed: the seed of the link choice.
    delay_s: seconds each answer is held.

    Attributes:
        url: ``http://127.0.0.1:PORT``.
    """

    def __init__(self, pages: int = 2000, fanout: int = 6, seed: int = 1, delay_s: float = 0.0):
        self.pages = pages
        self.fanout = fanout
        self.seed = seed
        self.delay_s = delay_s
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):  # noqa: N802
                body, status = site.page(self.path)
                if site.delay_s:
                    time.sleep(site.delay_s)
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 128

            def handle_error(self, request, client_address):
                pass  # a crawler killed mid-transfer resets its connections

        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def links(self, n: int) -> list:
        """The page numbers page ``n`` links to."""
        rng = random.Random(self.seed * 1_000_003 + n)
        out = [n + 1] if n + 1 < self.pages else []
        out += [rng.randrange(self.pages) for _ in range(self.fanout)]
        return out

    def page(self, path: str):
        try:
            n = int(path.rsplit("/", 1)[1])
        except ValueError:
            n = -1
        if not path.startswith("/p/") or not 0 <= n < self.pages:
            return b"<html><body>not found</body></html>", 404
        links = "".join(f'<li><a href="/p/{m}">page {m}</a></li>' for m in self.links(n))
        body = (f"<html><head><title>page {n}</title></head><body><h1>page {n}</h1>"
                f"<p>{'filler text ' * 40}</p><ul>{links}</ul></body></html>")
        return body.encode(), 200

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
