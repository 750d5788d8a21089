"""The crawl benchmark's site: a seeded, generated web of linked HTML pages, and a fast
multi-process HTTP/1.1 server for it on 127.0.0.1.

The site (``SiteSpec(pages, seed)``) has pages ``0 .. pages-1``; page 0 is ``/`` and page
``i`` is ``/p/<i>.html``. Every page:

* is 5-15 KB (5,120-15,360 bytes of UTF-8, a few non-ASCII letters included);
* has ``<title>Page <i></title>``;
* links to 10-20 *other* pages (fewer only when the site has fewer pages), each at most
  once, with hrefs of three forms: absolute path (``/p/7.html``), relative (``7.html``
  from a ``/p/`` page, ``p/7.html`` from ``/``) and ``/`` for page 0;
* is reachable from ``/``: page ``i`` links to its tree children ``10*i+1 .. 10*i+10``
  (the rest of its links are drawn at random), so the site is a 10-ary tree plus random
  edges; a crawl of ``/`` that follows every link sees each page exactly once.

Everything is a pure function of ``(pages, seed, i)``: the same spec gives the same bytes
on every run and in every process. Pages are assembled on request from a pool of
pre-generated paragraphs (cheap: tens of microseconds), so nothing is written to disk
unless ``write_site()`` is asked to (for an external server such as nginx).

The server (``SiteServer``) runs in another process: ``python _crawlsite.py serve ...``
forks ``workers`` processes that each accept on their own ``SO_REUSEPORT`` socket bound to
the same port (the kernel spreads connections across them) and answer GET/HEAD with a
non-blocking ``selectors`` loop, keep-alive. When ``nginx`` is on ``PATH`` and the caller
asks for it, the site is written to a temporary directory and nginx serves it instead.
"""

import argparse
import os
import random
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["SiteSpec", "SiteServer", "write_site", "MIN_PAGE_BYTES", "MAX_PAGE_BYTES"]

MIN_PAGE_BYTES = 5 * 1024
MAX_PAGE_BYTES = 15 * 1024
MIN_LINKS = 10
MAX_LINKS = 20
TREE_FANOUT = 10

_POOL_SEED = 20240601
_POOL_SIZE = 256


def _make_pool() -> tuple[str, ...]:
    """Return ``_POOL_SIZE`` paragraphs of 200-600 bytes of pseudo-words (fixed seed)."""
    rng = random.Random(_POOL_SEED)
    letters = "abcdefghijklmnoprstuvwyz" * 3 + "éüøç"
    vocabulary = [
        "".join(rng.choice(letters) for _ in range(rng.randint(2, 10))) for _ in range(600)
    ]
    pool = []
    for _ in range(_POOL_SIZE):
        target = rng.randint(200, 600)
        words = []
        size = 0
        while size < target - 12:
            word = rng.choice(vocabulary)
            words.append(word)
            size += len(word.encode()) + 1
        text = " ".join(words).capitalize() + "."
        pool.append(text)
    return tuple(pool)


_POOL = _make_pool()


class SiteSpec:
    """A generated site: ``pages`` linked HTML pages drawn from ``seed``.

    Args:
        pages: number of pages (>= 2).
        seed: any int; the same ``(pages, seed)`` always gives the same site.

    Raises:
        ValueError: ``pages`` is below 2.
    """

    def __init__(self, pages: int, seed: int = 1):
        if pages < 2:
            raise ValueError(f"a benchmark site needs at least 2 pages, got pages={pages!r}")
        self.pages = int(pages)
        self.seed = int(seed)

    def __repr__(self):
        return f"SiteSpec(pages={self.pages}, seed={self.seed})"

    @staticmethod
    def path(i: int) -> str:
        """Return the URL path of page ``i`` (``/`` for page 0, else ``/p/<i>.html``)."""
        return "/" if i == 0 else f"/p/{i}.html"

    def page_of_path(self, path: str) -> int | None:
        """Return the page number served at ``path`` (query ignored), or None (404)."""
        path = path.split("?", 1)[0]
        if path == "/":
            return 0
        if path.startswith("/p/") and path.endswith(".html"):
            digits = path[3:-5]
            if digits.isdigit() and digits[0] != "0":
                i = int(digits)
                if i < self.pages:
                    return i
        return None

    def _rng(self, i: int) -> random.Random:
        return random.Random(self.seed * 1_000_003 + i)

    def links(self, i: int) -> list[int]:
        """Return the pages page ``i`` links to, in document order (distinct, never ``i``).

        Tree children ``10*i+1 .. 10*i+10`` (those below ``pages``) come first in the set,
        random other pages fill it up to a seeded count of 10-20; the order is shuffled.
        """
        rng = self._rng(i)
        want = min(rng.randint(MIN_LINKS, MAX_LINKS), self.pages - 1)
        chosen = [c for c in range(TREE_FANOUT * i + 1, TREE_FANOUT * i + TREE_FANOUT + 1)
                  if c < self.pages]
        seen = set(chosen)
        seen.add(i)
        while len(chosen) < want:
            j = rng.randrange(self.pages)
            if j not in seen:
                seen.add(j)
                chosen.append(j)
        rng.shuffle(chosen)
        return chosen

    def href(self, src: int, dst: int, form: int) -> str:
        """Return the href page ``src`` uses for page ``dst`` (``form`` 0: absolute path,
        1: relative to ``src``'s directory)."""
        if dst == 0:
            return "/"
        if form == 0:
            return f"/p/{dst}.html"
        return f"p/{dst}.html" if src == 0 else f"{dst}.html"

    def body(self, i: int) -> bytes:
        """Return the HTML of page ``i``: UTF-8, ``MIN_PAGE_BYTES``-``MAX_PAGE_BYTES`` long."""
        rng = self._rng(i)
        rng.random()  # decorrelate from links()
        target = rng.randint(MIN_PAGE_BYTES + 300, MAX_PAGE_BYTES - 700)
        links = self.links(i)
        head = (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>Page {i}</title>\n"
            f'<meta name="description" content="Benchmark page {i} of {self.pages}">\n'
            '<link rel="stylesheet" href="/static/site.css">\n</head>\n<body>\n'
            f'<header><h1 class="title">Page {i}</h1></header>\n'
        )
        nav_count = len(links) // 2
        nav = ['<nav><ul class="menu">\n']
        for dst in links[:nav_count]:
            nav.append(f'<li><a href="{self.href(i, dst, rng.randrange(2))}">Page {dst}</a></li>\n')
        nav.append("</ul></nav>\n")
        tail = '<footer><p class="copy">Generated for the crawlfw benchmark.</p></footer>\n</body>\n</html>\n'
        inline = links[nav_count:]
        parts = [head, *nav, '<main class="content">\n']
        size = sum(len(p.encode()) for p in parts) + len(tail) + len("</main>\n")
        k = 0
        while size < target or k < len(inline):
            text = _POOL[rng.randrange(_POOL_SIZE)]
            if k < len(inline):
                dst = inline[k]
                k += 1
                cut = text.find(" ", len(text) // 2)
                cut = cut if cut > 0 else len(text)
                para = (f'<p>{text[:cut]} <a href="{self.href(i, dst, rng.randrange(2))}" '
                        f'class="ref">see page {dst}</a>{text[cut:]}</p>\n')
            else:
                para = f"<p>{text}</p>\n"
            size += len(para.encode())
            parts.append(para)
        parts.append("</main>\n")
        parts.append(tail)
        return "".join(parts).encode()


def write_site(spec: SiteSpec, root: Path) -> None:
    """Write every page of ``spec`` under ``root`` (``index.html`` and ``p/<i>.html``).

    Args:
        spec: the site.
        root: an existing, writable directory (files in it are overwritten).
    """
    root = Path(root)
    (root / "p").mkdir(parents=True, exist_ok=True)
    (root / "index.html").write_bytes(spec.body(0))
    for i in range(1, spec.pages):
        (root / "p" / f"{i}.html").write_bytes(spec.body(i))


# --- the Python server -------------------------------------------------------------------

_NOT_FOUND = (b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n"
              b"Content-Length: 10\r\n\r\nnot found\n")


def _response(spec: SiteSpec, method: bytes, target: bytes) -> bytes:
    i = spec.page_of_path(target.decode("latin-1"))
    if i is None:
        return _NOT_FOUND if method != b"HEAD" else _NOT_FOUND[: _NOT_FOUND.index(b"\r\n\r\n") + 4]
    body = spec.body(i)
    head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body))
    return head if method == b"HEAD" else head + body


def _serve_worker(spec: SiteSpec, port: int, respond=None) -> None:
    """One server process: accept on an SO_REUSEPORT socket, answer keep-alive requests.

    ``respond(method, target, head)`` (bytes: the method, the request target, the whole
    request head without its final blank line) returns the whole answer (bytes); by
    default the page of ``spec`` (benchmarks/_revisitsite.py gives its own).
    """
    if respond is None:
        def respond(method, target, head):
            return _response(spec, method, target)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(1024)
    listener.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, None)
    inbuf: dict[socket.socket, bytes] = {}
    outbuf: dict[socket.socket, memoryview] = {}

    def close(conn):
        sel.unregister(conn)
        inbuf.pop(conn, None)
        outbuf.pop(conn, None)
        conn.close()

    def flush(conn) -> None:
        data = outbuf.get(conn)
        while data:
            try:
                sent = conn.send(data)
            except BlockingIOError:
                break
            except OSError:
                close(conn)
                return
            data = data[sent:]
        if data:
            outbuf[conn] = data
            sel.modify(conn, selectors.EVENT_READ | selectors.EVENT_WRITE, "conn")
        else:
            outbuf.pop(conn, None)
            sel.modify(conn, selectors.EVENT_READ, "conn")

    while True:
        for key, events in sel.select():
            sock = key.fileobj
            if key.data is None:
                while True:
                    try:
                        conn, _ = sock.accept()
                    except (BlockingIOError, InterruptedError):
                        break
                    conn.setblocking(False)
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    inbuf[conn] = b""
                    sel.register(conn, selectors.EVENT_READ, "conn")
                continue
            if events & selectors.EVENT_WRITE:
                flush(sock)
                if sock not in inbuf:
                    continue
            if not events & selectors.EVENT_READ:
                continue
            try:
                chunk = sock.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                close(sock)
                continue
            if not chunk:
                close(sock)
                continue
            buf = inbuf[sock] + chunk
            replies = []
            keep_alive = True
            while True:
                end = buf.find(b"\r\n\r\n")
                if end < 0:
                    break
                head, buf = buf[:end], buf[end + 4:]
                lines = head.split(b"\r\n")
                parts = lines[0].split(b" ")
                if len(parts) != 3:
                    replies.append(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n"
                                   b"Connection: close\r\n\r\n")
                    keep_alive = False
                    break
                method, target, version = parts
                replies.append(respond(method, target, head))
                lowered = head.lower()
                if version == b"HTTP/1.0" or b"\r\nconnection: close" in lowered:
                    keep_alive = False
                    break
            inbuf[sock] = buf
            if replies:
                pending = outbuf.get(sock)
                data = b"".join(replies)
                outbuf[sock] = memoryview(bytes(pending) + data if pending else data)
                flush(sock)
            if not keep_alive and sock in inbuf:
                if sock in outbuf:
                    # let the reply drain; the client closes after reading it
                    continue
                close(sock)


def _serve_main(pages: int, seed: int, workers: int, port: int) -> None:
    """Reserve a port, fork ``workers`` server processes, print ``READY <url>``, wait."""
    spec = SiteSpec(pages, seed)
    reserve = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    reserve.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    reserve.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    reserve.bind(("127.0.0.1", port))  # bound, never listening: holds the port for the workers
    port = reserve.getsockname()[1]
    children = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            try:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                _serve_worker(spec, port)
            finally:
                os._exit(0)
        children.append(pid)

    def stop(signum, frame):
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # Wait until every worker listens (a connect succeeds) before announcing the URL.
    wait_listening(port, 10)
    print(f"READY http://127.0.0.1:{port}", flush=True)
    while True:
        pid, _ = os.wait()
        children.remove(pid)
        if not children:
            os._exit(1)


_NGINX_CONF = """\
worker_processes {workers};
daemon off;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    types {{ text/html html; }}
    charset utf-8;
    client_body_temp_path {root}/tmp;
    proxy_temp_path {root}/tmp;
    fastcgi_temp_path {root}/tmp;
    uwsgi_temp_path {root}/tmp;
    scgi_temp_path {root}/tmp;
    server {{
        listen 127.0.0.1:{port} reuseport;
        root {root}/site;
        index index.html;
    }}
}}
"""


def wait_listening(port: int, timeout_s: float, poll_s: float = 0.01) -> bool:
    """Wait until a connection to ``127.0.0.1:port`` succeeds; False when it did not
    within ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(poll_s)
    return False


def start_ready_server(argv: list, what: str) -> tuple:
    """Start a server process (``argv``, in a session of its own) that prints
    ``READY <url>`` once it listens; return ``(process, url)``.

    Raises:
        RuntimeError: it said something else first (``what`` names the server).
    """
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, start_new_session=True)
    line = proc.stdout.readline()
    if not line.startswith("READY "):
        stop_server(proc)
        raise RuntimeError(f"{what} did not start (said {line!r})")
    return proc, line.split()[1]


def stop_server(proc: subprocess.Popen | None) -> None:
    """Stop a server started in a session of its own (its process group: SIGTERM, then
    SIGKILL after 10 s) and close its pipes."""
    if proc is None:
        return
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SiteServer:
    """Serve a ``SiteSpec`` on 127.0.0.1 from another process (a context manager).

    Args:
        spec: the site to serve.
        workers: server processes (each with its own listening socket).
        prefer_nginx: serve with nginx when it is on ``PATH`` (the site is then written
            to a temporary directory first, a few seconds for 20,000 pages).

    Attributes:
        url: ``http://127.0.0.1:PORT`` (no trailing slash), once started.
        kind: ``"python"`` or ``"nginx"``, once started.

    Raises:
        RuntimeError: from ``start()``, when the server did not come up within 30 s.
    """

    def __init__(self, spec: SiteSpec, workers: int = 2, prefer_nginx: bool = True):
        self.spec = spec
        self.workers = workers
        self.prefer_nginx = prefer_nginx
        self.url: str | None = None
        self.kind: str | None = None
        self._proc: subprocess.Popen | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None

    def start(self) -> "SiteServer":
        nginx = shutil.which("nginx") if self.prefer_nginx else None
        if nginx:
            self._start_nginx(nginx)
        else:
            self._start_python()
        return self

    def _start_python(self) -> None:
        argv = [sys.executable, str(Path(__file__).resolve()), "serve",
                "--pages", str(self.spec.pages), "--seed", str(self.spec.seed),
                "--workers", str(self.workers)]
        self._proc, self.url = start_ready_server(argv, "the benchmark site server")
        self.kind = "python"

    def _start_nginx(self, nginx: str) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="crawlfw-bench-site-")
        root = Path(self._tmp.name)
        root.chmod(0o755)  # nginx workers may run as another user (nobody) when started by root
        write_site(self.spec, root / "site")
        (root / "tmp").mkdir()
        port = _free_port()
        conf = root / "nginx.conf"
        conf.write_text(_NGINX_CONF.format(workers=self.workers, root=root, port=port))
        self._proc = subprocess.Popen([nginx, "-c", str(conf), "-p", str(root),
                                       "-e", str(root / "error.log")],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode(errors="replace")
                self.stop()
                raise RuntimeError(f"nginx exited at start: {err.strip()}")
            if wait_listening(port, 1, 0.05):
                break
        else:
            self.stop()
            raise RuntimeError("nginx did not listen within 30 s")
        self.url = f"http://127.0.0.1:{port}"
        self.kind = "nginx"

    def stop(self) -> None:
        """Stop the server processes and remove any temporary site directory."""
        stop_server(self._proc)
        self._proc = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> "SiteServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="The crawl benchmark's generated site.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the site (prints READY <url> when listening)")
    serve.add_argument("--pages", type=int, default=20000)
    serve.add_argument("--seed", type=int, default=1)
    serve.add_argument("--workers", type=int, default=2)
    serve.add_argument("--port", type=int, default=0)
    write = sub.add_parser("write", help="write the site into a directory")
    write.add_argument("root", type=Path)
    write.add_argument("--pages", type=int, default=20000)
    write.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.command == "serve":
        _serve_main(args.pages, args.seed, args.workers, args.port)
    else:
        write_site(SiteSpec(args.pages, args.seed), args.root)


if __name__ == "__main__":
    _main()
