"""A site that changes over time, served on 127.0.0.1, for continuous-crawl tests (issue 32).

The site has a *version*, an int that only grows: ``advance()`` adds to it (tests that
want to say exactly when the site changes), and with ``step_s`` it also grows by one every
``step_s`` seconds of a clock (``time.monotonic`` unless one is given) since ``start()``.
Everything served is a pure function of ``(configuration, version)`` plus, on pages
without validators, a per-path request counter (the *stamp* line).

Paths (``i`` counts from 0):

* ``/`` - the index: links to every page alive at the current version. It changes only
  when the set of pages changes (``appear_at``, ``gone_at``, ``redirect_at``).
* ``/often/<i>.html`` (``often`` of them) - new content at every version.
* ``/static/<i>.html`` (``static`` of them) - the same content at every version.
* ``/new.html`` - 404 before ``appear_at``; from then on a page, linked from the index.
* ``/gone.html`` - a page before ``gone_at``; from then on ``gone_status`` (404 or 410)
  and no longer linked from the index.
* ``/moved.html`` - a page before ``redirect_at``; from then on ``redirect_status`` with
  ``Location: /moved-new.html`` (absolute URL), and the index links ``/moved-new.html``
  instead (404 before ``redirect_at``).

Every HTML body says which version its content is from, in ``<p id="version">version
N</p>`` (:func:`version_of` reads it back) - for a page that does not change that is the
version it last changed at (0 for a static page), so the same content is the same bytes.
Validators go by kind: ``/often/<i>`` and ``/static/<i>`` take, in turn by ``i``, the
kinds of ``validator_cycle`` (``"both"``: ``ETag`` and ``Last-Modified``; ``"etag"``;
``"last-modified"``; ``"none"``); the index and the other pages take ``"both"``. The ETag
is strong, ``"<name>-v<content version>"``; ``Last-Modified`` is ``LAST_MODIFIED_BASE``
plus 60 s per content version (so it moves exactly when the content does). Conditional
GET follows RFC 9110 section 13.1/13.2.2: ``If-None-Match`` (weak comparison, ``*``
matching any current representation) is evaluated when present and ``If-Modified-Since``
is then ignored; otherwise ``If-Modified-Since`` (an HTTP-date; an invalid one is
ignored) against ``Last-Modified``; a false condition on GET/HEAD gives ``304 Not
Modified`` with no body and the ``ETag`` (or, without one, ``Last-Modified``) the 200
would have carried. A page without validators carries, when ``stamp`` is true, a line
``<p class="stamp">served N</p>`` (N: how many times that path was answered) that makes
its body differ on every request though its content does not: a spider's
body-normalising hook strips it with :data:`STAMP_RE`.

Every request is written to a :class:`RequestLog` (thread-safe): path, status, request
headers, version, bytes sent, time. The ``changing_site`` fixture (a pytest plugin
registered in tests/conftest.py) is a factory of started sites, stopped at the end of
the test. The server runs in a thread of the test process, like
tests/support/linksite.py's, so using it does not make a test slow.
"""

import email.utils
import hashlib
import http.server
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

__all__ = ["ChangingSite", "RequestLog", "Hit", "STAMP_RE", "LAST_MODIFIED_BASE",
           "VALIDATOR_KINDS", "version_of", "changing_site"]

#: The stamp line of pages without validators (varies per request); strip it to compare.
STAMP_RE = re.compile(rb'<p class="stamp">[^<]*</p>\n?')
#: ``Last-Modified`` of content version 0 (a Unix time: 2023-11-14 22:13:20 UTC); each
#: later content version is 60 s later.
#: A continuous crawl's spider, written to a file for ``runspider -a site=URL``: the index
#: (``site`` + ``/``, not revisited) and every page it links to, one item per page
#: (``{"url": ...}``); its revisits are the pages'.
INDEX_SPIDER = '''
import crawlfw


class IndexSpider(crawlfw.Spider):
    name = "index"

    def start_requests(self):
        yield crawlfw.Request(self.site + "/", meta={"revisit": False})

    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.page)

    def page(self, response):
        yield {"url": response.url}
'''

LAST_MODIFIED_BASE = 1_700_000_000
#: The validator kinds a page may have.
VALIDATOR_KINDS = ("both", "etag", "last-modified", "none")

_VERSION_RE = re.compile(rb'<p id="version">version (\d+)</p>')
_WORDS = tuple("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
               "incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud "
               "exercitation ullamco laboris nisi aliquip ex ea commodo consequat".split())


def version_of(body: bytes) -> int | None:
    """Return the content version written in a page body, or None when it has none.

    Args:
        body: a body served by :class:`ChangingSite` (bytes), or its text (str).
    """
    if isinstance(body, str):
        body = body.encode()
    found = _VERSION_RE.search(body)
    return int(found.group(1)) if found else None


@dataclass(frozen=True)
class Hit:
    """One request the site answered.

    Attributes:
        path: the request's path, query string removed.
        method: ``GET`` or ``HEAD``.
        status: the status answered.
        headers: the request headers, ``{name: value}`` (names as the client sent them;
            look them up with :meth:`header`).
        version: the site's version when it answered.
        bytes_sent: bytes of the answer's body (0 for a 304 and for HEAD).
        time: ``time.monotonic()`` at the answer.
    """

    path: str
    method: str
    status: int
    headers: dict
    version: int
    bytes_sent: int
    time: float

    def header(self, name: str) -> str | None:
        """Return the request header ``name`` (any case), or None."""
        lower = name.lower()
        for key, value in self.headers.items():
            if key.lower() == lower:
                return value
        return None


@dataclass
class RequestLog:
    """Every request a :class:`ChangingSite` answered, safe to read from any thread.

    The methods take a snapshot under the lock; ``hits`` itself is appended to by the
    server's threads.
    """

    hits: list = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, hit: Hit) -> None:
        """Record ``hit`` (called by the server)."""
        with self._lock:
            self.hits.append(hit)

    def snapshot(self, path: str | None = None) -> list:
        """Return a copy of the hits (of ``path`` only, when given), in arrival order."""
        with self._lock:
            return [h for h in self.hits if path is None or h.path == path]

    def requests(self, path: str | None = None) -> int:
        """Return how many requests were answered (for ``path``, or in all)."""
        return len(self.snapshot(path))

    def not_modified(self, path: str | None = None) -> int:
        """Return how many of them were answered 304 (for ``path``, or in all)."""
        return sum(1 for h in self.snapshot(path) if h.status == 304)

    def statuses(self, path: str) -> list:
        """Return the statuses answered for ``path``, in order."""
        return [h.status for h in self.snapshot(path)]

    def headers(self, path: str) -> list:
        """Return the request headers (one dict per request) received for ``path``."""
        return [dict(h.headers) for h in self.snapshot(path)]

    def counts(self) -> dict:
        """Return ``{path: number of requests}`` over every path requested."""
        out: dict = {}
        for h in self.snapshot():
            out[h.path] = out.get(h.path, 0) + 1
        return out

    def bytes_sent(self) -> int:
        """Return the body bytes sent in all."""
        return sum(h.bytes_sent for h in self.snapshot())

    def clear(self) -> None:
        """Forget every hit so far."""
        with self._lock:
            self.hits.clear()


def _etag_matches(header: str, etag: str | None, exists: bool) -> bool:
    """RFC 9110 13.1.2: does an ``If-None-Match`` field match the current representation?

    ``*`` matches any current representation; otherwise the weak comparison of each
    listed entity tag with ``etag`` (``W/`` prefixes ignored on both sides).
    """
    header = header.strip()
    if header == "*":
        return exists
    if etag is None:
        return False
    opaque = etag[2:] if etag.startswith("W/") else etag
    for tag in _split_etags(header):
        if (tag[2:] if tag.startswith("W/") else tag) == opaque:
            return True
    return False


def _split_etags(header: str) -> list:
    """Split an ``If-None-Match`` list into entity tags (commas may sit inside quotes)."""
    tags, i = [], 0
    while i < len(header):
        while i < len(header) and header[i] in " ,\t":
            i += 1
        if i >= len(header):
            break
        start = i
        if header.startswith("W/", i):
            i += 2
        if i < len(header) and header[i] == '"':
            end = header.find('"', i + 1)
            i = len(header) if end < 0 else end + 1
        else:
            while i < len(header) and header[i] != ",":
                i += 1
        tags.append(header[start:i].strip())
    return tags


class ChangingSite:
    """A site whose pages change with its version (see the module docstring).

    Args:
        often: how many ``/often/<i>.html`` pages (new content at every version).
        static: how many ``/static/<i>.html`` pages (never change).
        seed: seeds the filler text (the same seed gives the same bytes).
        step_s: when given, the version also grows by one every ``step_s`` seconds of
            ``clock`` after ``start()``; None: only ``advance()`` changes it.
        clock: the clock of ``step_s`` (seconds; ``time.monotonic`` by default).
        appear_at: the version from which ``/new.html`` exists and is linked.
        gone_at: the version from which ``/gone.html`` answers ``gone_status``.
        gone_status: 404 or 410.
        redirect_at: the version from which ``/moved.html`` redirects to
            ``/moved-new.html``.
        redirect_status: 301, 302, 303, 307 or 308.
        validator_cycle: the validator kinds (of :data:`VALIDATOR_KINDS`) given in turn
            to ``/often/<i>`` and ``/static/<i>`` by ``i``.
        stamp: pages without validators carry a line that differs on every request.
        filler_bytes: about how many bytes of filler text each page carries.

    Attributes:
        url: ``http://127.0.0.1:PORT`` once started.
        log: the :class:`RequestLog`.

    Raises:
        ValueError: a status or validator kind outside the ones above.
    """

    def __init__(self, *, often: int = 6, static: int = 12, seed: int = 1,
                 step_s: float | None = None, clock: Callable[[], float] = time.monotonic,
                 appear_at: int = 2, gone_at: int = 2, gone_status: int = 410,
                 redirect_at: int = 2, redirect_status: int = 301,
                 validator_cycle: tuple = ("both", "none", "etag", "last-modified"),
                 stamp: bool = True, filler_bytes: int = 600):
        if gone_status not in (404, 410):
            raise ValueError(f"gone_status must be 404 or 410, got {gone_status!r}")
        if redirect_status not in (301, 302, 303, 307, 308):
            raise ValueError(f"redirect_status must be a redirect status, got "
                             f"{redirect_status!r}")
        bad = [k for k in validator_cycle if k not in VALIDATOR_KINDS]
        if bad or not validator_cycle:
            raise ValueError(f"validator_cycle takes kinds of {VALIDATOR_KINDS}, got "
                             f"{validator_cycle!r}")
        if step_s is not None and step_s <= 0:
            raise ValueError(f"step_s must be positive seconds, got {step_s!r}")
        self.often, self.static, self.seed = often, static, seed
        self.step_s, self.clock = step_s, clock
        self.appear_at, self.gone_at, self.gone_status = appear_at, gone_at, gone_status
        self.redirect_at, self.redirect_status = redirect_at, redirect_status
        self.validator_cycle = tuple(validator_cycle)
        self.stamp, self.filler_bytes = stamp, filler_bytes
        self.log = RequestLog()
        self.url: str | None = None
        self._offset = 0
        self._t0: float | None = None
        self._served: dict = {}
        self._lock = threading.Lock()
        self._server: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- the clock -----------------------------------------------------------------------

    @property
    def version(self) -> int:
        """The current version: ``advance()``'s total plus, with ``step_s``, the whole
        steps of ``clock`` since ``start()``."""
        with self._lock:
            return self._version_locked()

    def _version_locked(self) -> int:
        steps = 0
        if self.step_s is not None and self._t0 is not None:
            steps = int((self.clock() - self._t0) // self.step_s)
        return self._offset + steps

    def advance(self, n: int = 1) -> int:
        """Add ``n`` (>= 0) to the version; return the new version."""
        if n < 0:
            raise ValueError(f"the version only grows; advance(n) needs n >= 0, got {n!r}")
        with self._lock:
            self._offset += n
            return self._version_locked()

    # -- what is where, at a version -----------------------------------------------------

    def often_paths(self) -> list:
        """The paths of the pages that change at every version."""
        return [f"/often/{i}.html" for i in range(self.often)]

    def static_paths(self) -> list:
        """The paths of the pages that never change."""
        return [f"/static/{i}.html" for i in range(self.static)]

    def paths(self, version: int | None = None) -> list:
        """The paths of the pages alive at ``version`` (now, when None): the index first,
        then what it links to, in its order."""
        v = self.version if version is None else version
        out = ["/", *self.often_paths(), *self.static_paths()]
        if v >= self.appear_at:
            out.append("/new.html")
        if v < self.gone_at:
            out.append("/gone.html")
        out.append("/moved-new.html" if v >= self.redirect_at else "/moved.html")
        return out

    def validators(self, path: str) -> str:
        """The validator kind of ``path`` (one of :data:`VALIDATOR_KINDS`)."""
        kind, i = self._split(path)
        if kind in ("often", "static"):
            return self.validator_cycle[i % len(self.validator_cycle)]
        return "both"

    def content_version(self, path: str, version: int | None = None) -> int | None:
        """The version the content of ``path`` at ``version`` (now, when None) dates
        from, or None when ``path`` is not a page then (404, 410 or a redirect)."""
        v = self.version if version is None else version
        kind, _ = self._split(path)
        if kind == "often":
            return v
        if kind == "static":
            return 0
        if kind == "index":
            return max([0] + [e for e in (self.appear_at, self.gone_at, self.redirect_at)
                              if e <= v])
        if kind == "new":
            return self.appear_at if v >= self.appear_at else None
        if kind == "gone":
            return 0 if v < self.gone_at else None
        if kind == "moved":
            return 0 if v < self.redirect_at else None
        if kind == "moved-new":
            return self.redirect_at if v >= self.redirect_at else None
        return None

    def changed(self, path: str, v1: int, v2: int) -> bool:
        """True when ``path``'s content (or whether it exists) differs between versions
        ``v1`` and ``v2``."""
        return self.content_version(path, v1) != self.content_version(path, v2)

    def _split(self, path: str) -> tuple:
        """``(kind, i)`` of a path: kind ``index``, ``often``, ``static``, ``new``,
        ``gone``, ``moved``, ``moved-new`` or ``unknown``; ``i`` the page number or 0."""
        path = path.split("?", 1)[0]
        fixed = {"/": "index", "/new.html": "new", "/gone.html": "gone",
                 "/moved.html": "moved", "/moved-new.html": "moved-new"}
        if path in fixed:
            return fixed[path], 0
        for kind, count in (("often", self.often), ("static", self.static)):
            prefix = f"/{kind}/"
            if path.startswith(prefix) and path.endswith(".html"):
                digits = path[len(prefix):-5]
                if digits.isdigit() and (digits == "0" or digits[0] != "0") \
                        and int(digits) < count:
                    return kind, int(digits)
        return "unknown", 0

    # -- answers -------------------------------------------------------------------------

    def etag(self, path: str, version: int | None = None) -> str | None:
        """The ``ETag`` ``path`` carries at ``version`` (now, when None), or None."""
        cv = self.content_version(path, version)
        if cv is None or self.validators(path) not in ("both", "etag"):
            return None
        name = path.strip("/").removesuffix(".html").replace("/", "-") or "index"
        return f'"{name}-v{cv}"'

    def last_modified(self, path: str, version: int | None = None) -> str | None:
        """The ``Last-Modified`` ``path`` carries at ``version`` (now, when None), or None."""
        cv = self.content_version(path, version)
        if cv is None or self.validators(path) not in ("both", "last-modified"):
            return None
        return email.utils.formatdate(LAST_MODIFIED_BASE + 60 * cv, usegmt=True)

    def body(self, path: str, version: int | None = None, served: int = 0) -> bytes | None:
        """The HTML of ``path`` at ``version`` (now, when None), or None when it is not a
        page then; ``served`` is the stamp line's number (pages without validators)."""
        v = self.version if version is None else version
        cv = self.content_version(path, v)
        if cv is None:
            return None
        kind, i = self._split(path)
        title = "index" if kind == "index" else path.strip("/").removesuffix(".html")
        parts = [f"<!DOCTYPE html>\n<html><head><title>{title}</title></head><body>\n",
                 f"<h1>{title}</h1>\n", f'<p id="version">version {cv}</p>\n']
        if kind == "index":
            parts.append("<ul>\n")
            parts += [f'<li><a href="{p}">{p}</a></li>\n' for p in self.paths(v)[1:]]
            parts.append("</ul>\n")
        else:
            parts.append(f'<p class="price">{self._price(path, cv)}</p>\n')
            parts.append('<p><a href="/">home</a></p>\n')
        parts.append(f"<p>{self._filler(path, cv)}</p>\n")
        if self.stamp and self.validators(path) == "none" and kind != "index":
            parts.append(f'<p class="stamp">served {served}</p>\n')
        parts.append("</body></html>\n")
        return "".join(parts).encode()

    def _digest(self, *parts) -> int:
        text = ":".join(str(p) for p in (self.seed, *parts))
        return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")

    def _price(self, path: str, cv: int) -> str:
        return f"{self._digest('price', path, cv) % 100_000 / 100:.2f}"

    def _filler(self, path: str, cv: int) -> str:
        rng = random.Random(self._digest("filler", path, cv))
        words, size = [], 0
        while size < self.filler_bytes:
            word = rng.choice(_WORDS)
            words.append(word)
            size += len(word) + 1
        return " ".join(words)

    def answer(self, method: str, path: str, headers: dict) -> tuple:
        """Work out the answer to a request (what the server sends).

        Args:
            method: ``GET`` or ``HEAD``.
            path: the request target's path (a query string is ignored).
            headers: the request headers, ``{name: value}`` (any case).

        Returns:
            ``(status, [(header, value), ...], body bytes, version)``: the body is empty
            for 304 (and for HEAD the caller sends none); ``version`` is the site's
            version the answer is from.
        """
        path = path.split("?", 1)[0]
        lower = {name.lower(): value for name, value in headers.items()}
        with self._lock:
            v = self._version_locked()
            kind, _ = self._split(path)
            if kind == "moved" and v >= self.redirect_at:
                location = f"{self.url}/moved-new.html"
                return (self.redirect_status, [("Location", location)],
                        f'<html><body><a href="{location}">moved</a></body></html>'.encode(),
                        v)
            if kind == "gone" and v >= self.gone_at:
                return self.gone_status, [], b"<html><body>gone</body></html>", v
            if self.content_version(path, v) is None:
                return 404, [], b"<html><body>not found</body></html>", v
            etag, modified = self.etag(path, v), self.last_modified(path, v)
            out = []
            if etag:
                out.append(("ETag", etag))
            if modified:
                out.append(("Last-Modified", modified))
            if method in ("GET", "HEAD") and not self._condition_holds(lower, etag, modified):
                keep = [h for h in out if h[0] == "ETag"] or out
                return 304, keep, b"", v
            served = self._served.get(path, 0) + 1
            self._served[path] = served
            return 200, out, self.body(path, v, served), v

    @staticmethod
    def _condition_holds(lower: dict, etag: str | None, modified: str | None) -> bool:
        """RFC 9110 13.2.2 steps 3-4 for GET/HEAD: False means answer 304."""
        if "if-none-match" in lower:
            return not _etag_matches(lower["if-none-match"], etag, exists=True)
        since = lower.get("if-modified-since")
        if since is None or modified is None:
            return True
        try:
            since_t = email.utils.parsedate_to_datetime(since).timestamp()
        except (TypeError, ValueError, IndexError, OverflowError):
            return True  # an invalid date: the field is ignored
        return email.utils.parsedate_to_datetime(modified).timestamp() > since_t

    # -- the server ----------------------------------------------------------------------

    def start(self) -> "ChangingSite":
        """Start serving on a free 127.0.0.1 port (sets ``url``; starts the step clock)."""
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _serve(self):
                headers = dict(self.headers.items())
                status, out, body, version = site.answer(self.command, self.path, headers)
                sent = 0 if self.command == "HEAD" or status == 304 else len(body)
                site.log.add(Hit(self.path.split("?", 1)[0], self.command, status, headers,
                                 version, sent, time.monotonic()))
                self.send_response(status)
                for name, value in out:
                    self.send_header(name, value)
                if status != 304:
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if sent:
                    self.wfile.write(body)

            do_GET = do_HEAD = _serve  # noqa: N815

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 128

            def handle_error(self, request, client_address):
                pass  # a crawler killed mid-transfer resets its connections

        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        with self._lock:
            self._t0 = self.clock()
        # a short poll interval: stop() (shutdown()) waits for one poll
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
            if self._thread is not None:
                self._thread.join(10)


@pytest.fixture
def changing_site():
    """Factory: ``changing_site(**kwargs)`` -> a started :class:`ChangingSite` (the
    arguments of its constructor), stopped after the test."""
    sites = []

    def start(**kwargs) -> ChangingSite:
        site = ChangingSite(**kwargs).start()
        sites.append(site)
        return site

    yield start
    for site in sites:
        site.stop()
