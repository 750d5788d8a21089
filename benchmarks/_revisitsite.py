"""The revisit benchmark's site: the crawl benchmark's generated site (``_crawlsite.py``)
in *rounds*, a share of its pages changing from one round to the next, with validators on
some pages and conditional GET, served on 127.0.0.1 by one process that counts what each
crawler downloads.

``RevisitSite(pages, seed, change_fraction, validator_every)``:

* page ``i`` is ``_crawlsite``'s page ``i`` (same path, links and text) with one line
  ``<p id="version">version N</p>`` after its header, ``N`` being its *content version*:
  the last round (``0`` at first) in which it changed;
* in round ``r >= 1`` the pages that change are a seeded sample of
  ``round(change_fraction * (pages - 1))`` pages of ``1 .. pages-1`` (``/`` never
  changes): :meth:`RevisitSite.changed_in`; links never change, so the set of pages is
  the same in every round;
* pages with ``i % validator_every == 0`` carry a strong ``ETag`` (``"p<i>-v<N>"``) and
  ``Last-Modified`` (``LAST_MODIFIED_BASE`` + 60 s x N) and answer ``304 Not Modified``
  to a matching ``If-None-Match`` or, when there is none, to an ``If-Modified-Since`` not
  older than ``Last-Modified`` (RFC 9110 13.1.1-13.1.3, 13.2.2); the other pages carry no
  validator (``validator_every=0``: none has).

The server (``python _revisitsite.py serve ...``, started by :class:`RevisitSiteServer`)
is a single process with ``_crawlsite``'s non-blocking keep-alive loop, so the round and
the counters are plain state. Besides the pages it answers, uncounted:

* ``GET /__bench/round/<r>``: the site is now in round ``r`` (``{"round", "changed"}``);
* ``GET /__bench/stats``: ``{"round": r, "agents": {user_agent: {"requests", "bytes"
  (status line, headers and body written), "body_bytes", "not_modified", "statuses":
  {code: n}, "visits": {count: pages requested that many times}}}}``.

Crawlers are told apart by their ``User-Agent``. Everything is a pure function of
``(pages, seed, change_fraction, validator_every, round)``.
"""

import argparse
import email.utils
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from array import array
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _crawlsite import (  # noqa: E402
    SiteSpec,
    _serve_worker,
    start_ready_server,
    stop_server,
    wait_listening,
)

__all__ = ["RevisitSite", "RevisitSiteServer", "LAST_MODIFIED_BASE", "version_of"]

#: ``Last-Modified`` of content version 0 (Unix time); each later version is 60 s later.
LAST_MODIFIED_BASE = 1_700_000_000
_VERSION_LINE = b'<p id="version">version %d</p>\n'


def version_of(text: str) -> int | None:
    """Return the content version written in a page (its text), or None."""
    start = text.find('<p id="version">version ')
    if start < 0:
        return None
    start += len('<p id="version">version ')
    end = text.find("<", start)
    digits = text[start:end]
    return int(digits) if digits.isdigit() else None


def _etag_matches(field: bytes, etag: bytes) -> bool:
    """RFC 9110 13.1.2 for a representation that exists: ``*``, or the weak comparison
    of any listed entity tag with ``etag``."""
    field = field.strip()
    if field == b"*":
        return True
    opaque = etag[2:] if etag.startswith(b"W/") else etag
    for tag in field.split(b","):
        tag = tag.strip()
        if (tag[2:] if tag.startswith(b"W/") else tag) == opaque:
            return True
    return False


class RevisitSite:
    """The site and its counters (see the module docstring).

    Args:
        pages: pages in the site (>= 2).
        seed: the seed of ``_crawlsite``'s site and of the changes.
        change_fraction: the share of pages (0-1) that change in each round.
        validator_every: pages ``i % validator_every == 0`` have validators; 0: none.

    Raises:
        ValueError: an argument outside those ranges.
    """

    def __init__(self, pages: int, seed: int = 1, change_fraction: float = 0.02,
                 validator_every: int = 2):
        if not 0 <= change_fraction <= 1:
            raise ValueError(f"change_fraction must be 0-1, got {change_fraction!r}")
        if validator_every < 0:
            raise ValueError(f"validator_every must be >= 0, got {validator_every!r}")
        self.spec = SiteSpec(pages, seed)
        self.pages, self.seed = self.spec.pages, seed
        self.change_fraction = change_fraction
        self.validator_every = validator_every
        self.round = 0
        self._cv = array("i", [0] * self.pages)
        self.agents: dict = {}
        self._date_s = -1
        self._date = b""

    # -- content -------------------------------------------------------------------------

    def changed_in(self, round_no: int) -> list:
        """The pages (sorted numbers) that change in round ``round_no`` (none in 0)."""
        if round_no <= 0:
            return []
        k = round(self.change_fraction * (self.pages - 1))
        rng = random.Random(self.seed * 7_919 + round_no)
        return sorted(rng.sample(range(1, self.pages), k))

    def set_round(self, round_no: int) -> int:
        """Put the site in round ``round_no`` (>= 0); return how many pages changed in it."""
        if round_no < 0:
            raise ValueError(f"rounds count from 0, got {round_no!r}")
        if round_no < self.round:
            self._cv = array("i", [0] * self.pages)
            self.round = 0
        for r in range(self.round + 1, round_no + 1):
            for i in self.changed_in(r):
                self._cv[i] = r
        self.round = round_no
        return len(self.changed_in(round_no))

    def content_version(self, i: int) -> int:
        """The round page ``i``'s content dates from, in the current round."""
        return self._cv[i]

    def has_validators(self, i: int) -> bool:
        """True when page ``i`` carries ``ETag`` and ``Last-Modified``."""
        return bool(self.validator_every) and i % self.validator_every == 0

    def body(self, i: int) -> bytes:
        """The HTML of page ``i`` in the current round."""
        base = self.spec.body(i)
        cut = base.index(b"</header>\n") + len(b"</header>\n")
        return base[:cut] + _VERSION_LINE % self._cv[i] + base[cut:]

    def etag(self, i: int) -> bytes:
        return b'"p%d-v%d"' % (i, self._cv[i])

    def last_modified(self, i: int) -> bytes:
        return email.utils.formatdate(LAST_MODIFIED_BASE + 60 * self._cv[i],
                                      usegmt=True).encode()

    # -- answers -------------------------------------------------------------------------

    def _date_header(self) -> bytes:
        now = int(time.time())
        if now != self._date_s:
            self._date_s = now
            self._date = b"Date: " + email.utils.formatdate(now, usegmt=True).encode() + b"\r\n"
        return self._date

    def respond(self, method: bytes, target: bytes, head: bytes) -> bytes:
        """The whole answer to one request (the server's ``respond``); counts it under
        the request's ``User-Agent`` unless it is a ``/__bench/`` control request."""
        if target.startswith(b"/__bench/"):
            return self._control(target.decode("latin-1"))
        fields = {}
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            fields[name.strip().lower()] = value.strip()
        i = self.spec.page_of_path(target.decode("latin-1"))
        if i is None:
            body = b"not found\n"
            out = (b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n"
                   b"Content-Length: %d\r\n\r\n" % len(body))
            status = 404
        else:
            status, out, body = self._page(i, method, fields)
        if method == b"HEAD":
            body = b""
        self._count(fields.get(b"user-agent", b"").decode("latin-1"), i, status,
                    len(out) + len(body), len(body))
        return out + body

    def _page(self, i: int, method: bytes, fields: dict) -> tuple:
        validators = b""
        if self.has_validators(i):
            etag, modified = self.etag(i), self.last_modified(i)
            validators = b"ETag: %s\r\nLast-Modified: %s\r\n" % (etag, modified)
            fresh = False
            if b"if-none-match" in fields:
                fresh = _etag_matches(fields[b"if-none-match"], etag)
            elif b"if-modified-since" in fields:
                try:
                    since = email.utils.parsedate_to_datetime(
                        fields[b"if-modified-since"].decode("latin-1")).timestamp()
                    fresh = LAST_MODIFIED_BASE + 60 * self._cv[i] <= since
                except (TypeError, ValueError, IndexError, OverflowError):
                    fresh = False  # an invalid date: the field is ignored
            if fresh and method in (b"GET", b"HEAD"):
                return 304, (b"HTTP/1.1 304 Not Modified\r\nETag: %s\r\n" % etag
                             + self._date_header() + b"\r\n"), b""
        body = self.body(i)
        head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                b"Content-Length: %d\r\n" % len(body) + validators + self._date_header()
                + b"\r\n")
        return 200, head, body

    def _count(self, agent: str, i: int | None, status: int, sent: int, body: int) -> None:
        stats = self.agents.get(agent)
        if stats is None:
            stats = self.agents[agent] = {"requests": 0, "bytes": 0, "body_bytes": 0,
                                          "not_modified": 0, "statuses": Counter(),
                                          "_visits": array("I", [0] * self.pages)}
        stats["requests"] += 1
        stats["bytes"] += sent
        stats["body_bytes"] += body
        stats["statuses"][status] += 1
        if status == 304:
            stats["not_modified"] += 1
        if i is not None:
            stats["_visits"][i] += 1

    def stats(self) -> dict:
        """The counters (the ``/__bench/stats`` answer, as a dict)."""
        agents = {}
        for agent, s in self.agents.items():
            public = {k: v for k, v in s.items() if not k.startswith("_")}
            public["statuses"] = {str(k): v for k, v in s["statuses"].items()}
            public["visits"] = {str(k): v for k, v in sorted(Counter(s["_visits"]).items())}
            agents[agent] = public
        return {"round": self.round, "agents": agents}

    def _control(self, target: str) -> bytes:
        parts = target.split("?", 1)[0].strip("/").split("/")
        if parts[1:2] == ["round"] and len(parts) == 3 and parts[2].isdigit():
            payload = {"round": int(parts[2]), "changed": self.set_round(int(parts[2]))}
        elif parts[1:] == ["stats"]:
            payload = self.stats()
        else:
            payload = {"error": f"unknown control path {target!r}"}
        data = json.dumps(payload).encode()
        return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % len(data)) + data


class RevisitSiteServer:
    """Serve a :class:`RevisitSite` from another process (a context manager).

    Args:
        pages, seed, change_fraction, validator_every: the site's (see RevisitSite).

    Attributes:
        url: ``http://127.0.0.1:PORT`` once started.

    Raises:
        RuntimeError: from ``start()``, when the server did not come up.
    """

    def __init__(self, pages: int, seed: int = 1, change_fraction: float = 0.02,
                 validator_every: int = 2):
        self.args = [str(pages), str(seed), str(change_fraction), str(validator_every)]
        self.url: str | None = None
        self._proc: subprocess.Popen | None = None

    def start(self) -> "RevisitSiteServer":
        pages, seed, fraction, every = self.args
        self._proc, self.url = start_ready_server(
            [sys.executable, str(Path(__file__).resolve()), "serve", "--pages", pages,
             "--seed", seed, "--change-fraction", fraction, "--validator-every", every],
            "the revisit site server")
        return self

    def _get(self, path: str) -> dict:
        with urllib.request.urlopen(self.url + path, timeout=30) as answer:
            return json.loads(answer.read())

    def set_round(self, round_no: int) -> int:
        """Put the site in round ``round_no``; return how many pages changed in it."""
        return self._get(f"/__bench/round/{round_no}")["changed"]

    def stats(self) -> dict:
        """The server's counters (see the module docstring)."""
        return self._get("/__bench/stats")

    def stop(self) -> None:
        stop_server(self._proc)
        self._proc = None

    def __enter__(self) -> "RevisitSiteServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _serve_main(args) -> None:
    site = RevisitSite(args.pages, args.seed, args.change_fraction, args.validator_every)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))  # only to pick a free port; the worker binds it again
    port = listener.getsockname()[1]
    listener.close()
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _serve_worker(site.spec, port, respond=site.respond)
        os._exit(0)
    wait_listening(port, 10)
    print(f"READY http://127.0.0.1:{port}", flush=True)

    def stop(*_):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    os.waitpid(pid, 0)


def _main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="The revisit benchmark's site.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve it (prints READY <url> when listening)")
    serve.add_argument("--pages", type=int, default=20000)
    serve.add_argument("--seed", type=int, default=1)
    serve.add_argument("--change-fraction", type=float, default=0.02)
    serve.add_argument("--validator-every", type=int, default=2)
    args = parser.parse_args(argv)
    _serve_main(args)


if __name__ == "__main__":
    _main()
