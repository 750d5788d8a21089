"""The control endpoint of a crawl process: see and steer its crawls from another process.

A :class:`~crawlfw.crawler.CrawlerProcess` opens a :class:`ControlEndpoint` when it
starts (``CONTROL_ENDPOINT = True``, the default): a Unix domain socket
``<runtime dir>/<pid>.sock`` (``$XDG_RUNTIME_DIR/crawlfw/``, else
``~/.local/state/crawlfw/run/``; directory 0700, socket 0600) served by a thread. Only
the same user or root is served: the peer's uid is checked with ``SO_PEERCRED`` (see
:mod:`crawlfw.core.control.protocol`). No TCP listener exists.

Wire format: JSON lines, each a message dict of :mod:`crawlfw.actors.messages`, checked
against its JSON Schema here (whatever ``MESSAGE_VALIDATION`` says: this is the process's
boundary). Requests and their replies:

- ``get_status`` -> ``status_reported`` (every crawl of the process, see
  :func:`collect_status`);
- ``pause_crawl``, ``resume_crawl``, ``stop_crawl``, ``schedule_request`` -> passed to
  the Supervisor (``ask``), -> ``command_accepted``;
- ``download_request`` -> ``response_fetched`` (through ``crawler.engine.download``);
- ``command_shared_crawl`` -> ``shared_command_published``: a pause, resume or stop
  written in the shared crawl's Redis for every worker of it (the crawl's
  ``FRONTIER_URL``; :mod:`crawlfw.core.frontier.redis_control`);
- ``get_history`` -> ``history_reported`` (the samples the dashboard's recorder kept,
  :mod:`crawlfw.dashboard.sampler`), ``get_sample`` -> ``sample_reported`` (one taken
  now);
- anything malformed, oversized (over 64 KiB), of another type, or failing ->
  ``control_error`` naming the fault. The crawl goes on.

The socket is removed when the process shuts down (and at interpreter exit); a socket
left by a killed process is detected (nobody accepts on it) and removed by the next
``crawlfw ps`` or replaced by a process that gets the same pid.
"""

import atexit
import base64
import datetime
import errno
import json
import logging
import os
import resource
import socket
import threading
import time
import weakref

import pykka

from crawlfw.actors._validation import validate_message
from crawlfw.core._fds import out_of_fds, retry_when_out_of_fds
from crawlfw.core.control.history import errors_by_kind
from crawlfw.core.control.protocol import (
    MAX_MESSAGE_BYTES,
    SOCKET_SUFFIX,
    LineReader,
    LineTooLong,
    bind_socket,
    encode_line,
    may_connect,
    peer_credentials,
    private_dir,
    runtime_dir,
)
from crawlfw.core.control.rates import RateWindow
from crawlfw.exceptions import InvalidMessage
from crawlfw.extensions._periodic import PeriodicCall

logger = logging.getLogger(__name__)

__all__ = ["ControlEndpoint", "collect_status", "ACCEPTED_TYPES"]

#: The message types the endpoint accepts; every other type gets ``control_error``.
ACCEPTED_TYPES = frozenset({"get_status", "pause_crawl", "resume_crawl", "stop_crawl",
                            "schedule_request", "download_request", "get_history",
                            "get_sample", "command_shared_crawl"})

#: Seconds the endpoint waits for the Supervisor to answer a command.
ASK_TIMEOUT_S = 10.0

#: Seconds ``get_status`` waits for each engine's figures (less than a client waits).
ENGINE_STATUS_TIMEOUT_S = 5.0

#: Seconds a connection may stay silent before the endpoint closes it.
IDLE_TIMEOUT_S = 120.0

#: Most connections served at once; more are refused with ``control_error``.
MAX_CONNECTIONS = 32

#: Seconds ``download_request`` waits for the page.
DOWNLOAD_TIMEOUT_S = 180.0

#: Seconds :meth:`ControlEndpoint.close` waits for the replies being prepared to be sent
#: (a ``stop`` ends the crawl, and so the process, right after the Supervisor answers:
#: without this wait the client could find the connection closed without its reply).
REPLY_DRAIN_TIMEOUT_S = 5.0

_rates = weakref.WeakKeyDictionary()  # crawler -> (RateWindow, time.time() first seen)
_rates_lock = threading.Lock()


def _rate_window(crawler) -> RateWindow:
    return _tracked(crawler)[0]


def _tracked(crawler) -> tuple:
    with _rates_lock:
        entry = _rates.get(crawler)
        if entry is None:
            entry = _rates[crawler] = (RateWindow(window_s=60.0, min_gap_s=1.0), time.time())
        return entry


def _uptime_s(crawler) -> float:
    """Seconds since the crawl started (``start_time`` stat, timezone-aware UTC when
    CoreStats set it, naive UTC from older code; else since this module first saw the
    crawl)."""
    start = crawler.stats.get_value("start_time")
    if isinstance(start, datetime.datetime):
        now = datetime.datetime.now(datetime.timezone.utc)
        if start.tzinfo is None:
            now = now.replace(tzinfo=None)
        return max(0.0, (now - start).total_seconds())
    return max(0.0, time.time() - _tracked(crawler)[1])


def sample_rates(crawler, now_s: float | None = None) -> RateWindow:
    """Add a sample of the crawler's pages and items to its rate window and return it."""
    stats = crawler.stats
    window = _rate_window(crawler)
    window.add(time.monotonic() if now_s is None else now_s,
               {"pages": stats.get_value("response_received_count", 0),
                "items": stats.get_value("item_scraped_count", 0)})
    return window


def _json_value(value):
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    return str(value)


_errors = errors_by_kind  # {type: count} of download errors, spider exceptions, HTTP statuses


#: Engine status of a crawl whose engine has stopped (the Supervisor is closing it).
_STOPPED = {"closing": "stopped"}


def _crawl_status(crawler, engine: dict | None, slots: dict | None = None) -> dict:
    """``engine``: the engine's ``get_status`` answer, :data:`_STOPPED`, or None when it
    did not answer in time (busy); ``slots``: ``{slot key: requests at the downloader}``
    as the downloaders answered (their slot tables), or None (not asked)."""
    stats = crawler.stats.get_stats()
    window = sample_rates(crawler)
    if (engine or {}).get("closing"):
        state = "closing"
    elif (engine or {}).get("paused"):
        state = "paused"
    else:
        state = "running"
    pending = stats.get("scheduler/enqueued", 0) - stats.get("scheduler/dequeued", 0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    return {
        "crawl_id": crawler._crawl_id,
        "spider": crawler.spider.name,
        "state": state,
        "pages": stats.get("response_received_count", 0),
        "items": stats.get("item_scraped_count", 0),
        "pending": pending + (engine or {}).get("held", 0),
        "in_flight": (engine or {}).get("downloading"),
        "slots": slots or {},
        "pages_per_min": round(window.per_minute("pages"), 1),
        "items_per_min": round(window.per_minute("items"), 1),
        "errors": _errors(stats),
        "peak_memory_bytes": max(peak, stats.get("memusage/max", 0)),
        "uptime_s": round(_uptime_s(crawler), 1),
        "jobdir": crawler.settings.get("JOBDIR") or None,
        "stats": {k: _json_value(v) for k, v in sorted(stats.items())},
        "shared": stats.get("frontier/shared"),
        "dns": _dns_status(crawler, stats),
    }


def _dns_status(crawler, stats: dict) -> dict | None:
    """The ``dns`` part of a crawl's status, from its ``dns/*`` stats (None with
    libcurl's resolver, which publishes none)."""
    if "dns/in_flight" not in stats and "dns/lookups" not in stats:
        return None
    lookups = stats.get("dns/lookups", 0)
    hits = stats.get("dns/cache_hits", 0)
    return {
        "in_flight": max(0, stats.get("dns/in_flight", 0)),
        "queued": max(0, stats.get("dns/queued", 0)),
        "lookups": lookups,
        "cache_hits": hits,
        "hit_rate": round(hits / (hits + lookups), 3) if hits + lookups else None,
        "failures": sum(v for k, v in stats.items() if k.startswith("dns/failures/")),
    }


def collect_status(runner, timeout_s: float = ENGINE_STATUS_TIMEOUT_S) -> list[dict]:
    """The status of every running crawl of ``runner``, as JSON-ready dicts.

    Reads each crawl's stats (thread-safe) and asks its engine ``get_status`` (``ask``
    from outside the tree, with ``timeout_s``); the Supervisor is not asked, so a
    Supervisor busy closing a crawl (storing a feed) delays nobody. Runs on the
    caller's thread; never call it from an actor.

    Returns:
        ``[{crawl_id, spider, state, pages, items, pending, in_flight, slots,
        pages_per_min, items_per_min, errors, peak_memory_bytes, uptime_s, jobdir,
        stats}, ...]`` ordered by crawl id: ``state`` is ``running``, ``paused`` or
        ``closing`` (also once the engine has stopped); ``in_flight`` is None when the
        engine did not answer within ``timeout_s``; ``slots`` maps download slots to
        requests in flight there (queued in the slot or transferring, as the
        downloaders' slot tables say); the rates are per minute over the last minute.
    """
    crawls = []
    for crawler in sorted(list(runner.crawlers), key=lambda c: c._crawl_id or ""):
        if not crawler.crawling or not crawler._crawl_id or crawler.engine is None:
            continue
        try:
            engine = crawler.engine.ref.ask({"type": "get_status"}, timeout=timeout_s)
        except pykka.ActorDeadError:
            engine = _STOPPED
        except pykka.Timeout:
            engine = None
        slots = None
        if engine is not None and not engine.get("closing"):
            slots = _slots_of(crawler)
        if crawler.crawling:
            crawls.append(_crawl_status(crawler, engine, slots))
    return crawls


def _slots_of(crawler) -> dict:
    """``{slot key: requests at the downloader}`` asked of the crawl's downloaders
    (``crawler.engine.downloader``); ``{}`` when there are none or they do not answer."""
    downloader = getattr(crawler.engine, "downloader", None)
    if downloader is None:
        return {}
    try:
        return downloader.in_flight_per_slot()
    except Exception:  # a crawl closing meanwhile: no slots to show
        logger.debug("status: the downloaders' slots could not be read", exc_info=True)
        return {}


class ControlEndpoint:
    """The Unix-socket control endpoint of one process, served by daemon threads.

    Args:
        runner: the :class:`~crawlfw.crawler.CrawlerRunner` whose Supervisor it talks to.
        directory: the socket directory (default :func:`crawlfw.core.control.protocol.runtime_dir`).

    Attributes:
        path: the socket path, set by :meth:`open`.
    """

    def __init__(self, runner, directory=None):
        self.runner = runner
        self.directory = directory
        self.path = None
        self._sock = None
        self._closed = threading.Event()
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._sampler = None
        self._replying = 0  # lines being carried out whose reply is not sent yet
        self._replies_sent = threading.Condition()

    def open(self) -> "ControlEndpoint":
        """Bind the socket and start serving (accept thread ``crawlfw-control``).

        Raises:
            OSError: the directory or the socket cannot be made (``PermissionError`` when
                the directory belongs to another user).
        """
        directory = private_dir(runtime_dir() if self.directory is None else self.directory)
        self.path = directory / f"{os.getpid()}{SOCKET_SUFFIX}"
        self._sock = retry_when_out_of_fds(lambda: bind_socket(self.path),
                                           f"control endpoint {self.path}",
                                           on_retry=self._count_fd_retry)
        self._sock.settimeout(None)
        atexit.register(self.close)
        threading.Thread(target=self._accept_loop, name="crawlfw-control", daemon=True).start()
        # pages/min and items/min over the last minute need samples before anyone asks
        self._sampler = PeriodicCall(self._sample, 1.0, name="crawlfw-control-rates")
        self._sampler.start(now=True)
        logger.info("Control endpoint listening on %(path)s", {"path": self.path})
        return self

    def close(self, drain_timeout_s: float = REPLY_DRAIN_TIMEOUT_S) -> None:
        """Stop serving and remove the socket file (safe to call twice).

        Args:
            drain_timeout_s: seconds to wait, at most, for the replies to the requests
                being carried out to be sent (a ``stop_crawl`` is answered while its
                crawl, and with it the process, ends). New requests get no answer once
                this is called.
        """
        if self._closed.is_set():
            return
        self._closed.set()
        if self._sampler is not None:
            self._sampler.stop()
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._sock.close()
        if self.path is not None:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
        atexit.unregister(self.close)
        with self._replies_sent:
            self._replies_sent.wait_for(lambda: not self._replying, drain_timeout_s)

    def _sample(self):
        for crawler in list(self.runner.crawlers):
            if crawler.crawling:
                sample_rates(crawler)
        self._recorder().sample_all()

    def _recorder(self):
        from crawlfw.dashboard.sampler import recorder_of

        return recorder_of(self.runner)

    # --- connections --------------------------------------------------------------------

    def _count_fd_retry(self):
        """Count a retry for want of file descriptors in each running crawl's stats."""
        for crawler in list(self.runner.crawlers):
            stats = getattr(crawler, "stats", None)
            if crawler.crawling and stats is not None:
                stats.inc_value("control/emfile_retries")

    def _accept_loop(self):
        backoff_s = 0.0  # > 0 while the process is out of file descriptors
        while not self._closed.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError as e:
                if self._closed.is_set():
                    return
                if out_of_fds(e):  # transient: the client waits in the listen backlog
                    if not backoff_s:
                        logger.warning(
                            "Control endpoint %(path)s: out of file descriptors (%(errno)s) "
                            "accepting a connection: trying again",
                            {"path": self.path, "errno": errno.errorcode[e.errno]})
                    self._count_fd_retry()
                    backoff_s = min(2.0, backoff_s * 2 or 0.05)
                    self._closed.wait(backoff_s)
                    continue
                logger.warning("Control endpoint: accept failed", exc_info=True)
                time.sleep(0.1)
                continue
            if backoff_s:
                backoff_s = 0.0
                logger.info("Control endpoint %(path)s: accepting connections again",
                            {"path": self.path})
            if not self._slots.acquire(blocking=False):
                self._reply_and_close(conn, "too many control connections; try again")
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True,
                             name="crawlfw-control-conn").start()

    def _reply_and_close(self, conn, error):
        """Send ``error`` and close; what the peer sent is read (at most 64 KiB, for up to
        1 s) and dropped first, since closing with unread data resets the connection
        and the peer could lose the reply."""
        try:
            conn.settimeout(1.0)
            conn.sendall(encode_line({"type": "control_error", "error": error}))
            conn.shutdown(socket.SHUT_WR)
            received = 0
            while received < MAX_MESSAGE_BYTES:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                received += len(chunk)
        except OSError:
            pass
        finally:
            conn.close()

    def _serve(self, conn):
        try:
            pid, uid, _ = peer_credentials(conn)
            if not may_connect(uid):
                logger.warning(
                    "Control endpoint: refused a connection from pid %(pid)d, uid %(uid)d "
                    "(only uid %(own)d or root may control this crawl)",
                    {"pid": pid, "uid": uid, "own": os.geteuid()})
                self._reply_and_close(conn, f"permission denied: uid {uid} may not control "
                                            f"this crawl (only uid {os.geteuid()} or root)")
                return
            conn.settimeout(IDLE_TIMEOUT_S)
            reader = LineReader(conn, MAX_MESSAGE_BYTES)
            while not self._closed.is_set():
                try:
                    line = reader.readline()
                except LineTooLong as e:
                    conn.sendall(encode_line(_error(str(e))))
                    continue
                if line is None:
                    return
                if not line.strip():
                    continue
                with self._replies_sent:
                    self._replying += 1
                try:
                    conn.sendall(encode_line(self.handle_line(line)))
                finally:
                    with self._replies_sent:
                        self._replying -= 1
                        self._replies_sent.notify_all()
        except (OSError, TimeoutError):
            pass  # the client went away or stayed silent
        finally:
            conn.close()
            self._slots.release()

    # --- messages -----------------------------------------------------------------------

    def handle_line(self, line: bytes) -> dict:
        """Decode, check and carry out one request line; return the reply message.

        Never raises: every failure becomes ``control_error``.
        """
        try:
            message = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError as e:
            return _error(f"the message is not UTF-8 text: {e}")
        except ValueError as e:
            return _error(f"the message is not a JSON line: {e}")
        try:
            validate_message(message)
        except InvalidMessage as e:
            return _error(str(e))
        kind = message["type"]
        if kind not in ACCEPTED_TYPES:
            return _error(f"message type {kind!r} is not accepted on the control endpoint "
                          f"(accepted: {', '.join(sorted(ACCEPTED_TYPES))})")
        try:
            return getattr(self, f"_do_{kind}")(message)
        except pykka.Timeout:
            return _error(f"the crawl did not answer {kind!r} within {ASK_TIMEOUT_S:g} s")
        except Exception as e:
            logger.error("Control endpoint: %(type)s failed", {"type": kind}, exc_info=True)
            return _error(f"{kind} failed: {type(e).__name__}: {e}")

    def _supervisor(self):
        supervisor = self.runner._supervisor
        if supervisor is None or not supervisor.is_alive():
            return None
        return supervisor

    def _ask(self, message) -> dict:
        supervisor = self._supervisor()
        if supervisor is None:
            return _error("no crawl is running in this process")
        try:
            reply = supervisor.ask(message, timeout=ASK_TIMEOUT_S)
        except pykka.ActorDeadError:
            return _error("no crawl is running in this process")
        if reply.get("type") == "message_rejected":
            return _error(reply["error"])
        return reply

    def _do_get_status(self, message):
        return {"type": "status_reported", "pid": os.getpid(),
                "crawls": collect_status(self.runner)}

    def _do_pause_crawl(self, message):
        reply = self._ask(message)
        if reply.get("type") == "command_accepted":
            # the engine got the pause before this ask: its answer shows the paused state
            self._wait_engine(message["crawl_id"])
        return reply

    _do_resume_crawl = _do_pause_crawl

    def _do_schedule_request(self, message):
        return self._ask(message)

    def _do_stop_crawl(self, message):
        reply = self._ask(message)
        if reply.get("type") == "control_error":
            return reply
        if not reply.get("stopping"):
            return _error(f"no running crawl {message['crawl_id']!r}")
        return {"type": "command_accepted", "command": "stop_crawl",
                "crawl_id": ",".join(reply["stopping"])}

    def _do_command_shared_crawl(self, message):
        from crawlfw.core.frontier.redis_control import publish_command

        crawl_id = message["crawl_id"]
        crawler = self._crawler(crawl_id)
        if crawler is None:
            return _error(f"no running crawl {crawl_id!r}")
        supervisor = getattr(self._supervisor(), "_actor_weakref", lambda: None)()
        tree = supervisor.crawls.get(crawl_id) if supervisor is not None else None
        frontier = getattr(tree, "frontier", None)
        if not getattr(frontier, "shared", False) or not hasattr(frontier, "key"):
            return _error(f"crawl {crawl_id} is no worker of a shared crawl (FRONTIER_URL "
                          "is not set)")
        try:
            seq = publish_command(frontier.url, frontier.key, message["command"],
                                  message["reason"])
        except OSError as e:
            return _error(f"the {message['command']} was not written in Redis "
                          f"({frontier.path}): {e}")
        logger.info("Shared crawl %(frontier)s: %(command)s written for every worker",
                    {"frontier": frontier.path, "command": message["command"]})
        return {"type": "shared_command_published", "crawl_id": crawl_id,
                "command": message["command"], "seq": seq, "frontier": frontier.path}

    def _crawler(self, crawl_id):
        for crawler in list(self.runner.crawlers):
            if crawler._crawl_id == crawl_id and crawler.crawling:
                return crawler
        return None

    def _wait_engine(self, crawl_id):
        crawler = self._crawler(crawl_id)
        if crawler is not None and crawler.engine is not None:
            try:
                crawler.engine.ref.ask({"type": "get_status"}, timeout=ASK_TIMEOUT_S)
            except (pykka.ActorDeadError, pykka.Timeout):
                pass

    def _do_get_history(self, message):
        recorder = self._recorder()
        crawler = recorder.crawler(message["crawl_id"])
        if crawler is None:
            return _error(f"no running crawl {message['crawl_id']!r}")
        recorder.viewed()
        history = recorder.history_of(crawler)
        since = message["since"]
        return {"type": "history_reported", "crawl_id": message["crawl_id"],
                "interval": history.interval, "samples": history.samples(since),
                "errors": recorder.errors.errors(since, message["crawl_id"])}

    def _do_get_sample(self, message):
        recorder = self._recorder()
        crawler = recorder.crawler(message["crawl_id"])
        if crawler is None:
            return _error(f"no running crawl {message['crawl_id']!r}")
        recorder.viewed()
        return {"type": "sample_reported", "crawl_id": message["crawl_id"],
                "sample": recorder.sample(crawler)}

    def _do_download_request(self, message):
        from crawlfw.exceptions import DownloadError, IgnoreRequest
        from crawlfw.http import Request
        from crawlfw.utils.datatypes import SequenceExclude

        crawler = self._crawler(message["crawl_id"])
        if crawler is None or crawler.engine is None:
            return _error(f"no running crawl {message['crawl_id']!r}")
        try:
            paused = crawler.engine.ref.ask({"type": "get_status"}, timeout=ASK_TIMEOUT_S)["paused"]
        except pykka.ActorDeadError:
            return _error(f"no running crawl {message['crawl_id']!r}")
        if paused:
            return _error(f"crawl {message['crawl_id']} is paused: no download starts until "
                          "it is resumed")
        try:
            request = Request(message["url"], method=message["method"],
                              headers=message["headers"] or None,
                              body=message["body"].encode("utf-8"), dont_filter=True)
        except (ValueError, TypeError) as e:
            return _error(f"bad URL {message['url']!r}: {e}")
        if message["redirect"]:
            request.meta["handle_httpstatus_list"] = SequenceExclude(range(300, 400))
        else:
            request.meta["handle_httpstatus_all"] = True
        try:
            response = crawler.engine.download(request, timeout_s=DOWNLOAD_TIMEOUT_S)
        except (DownloadError, IgnoreRequest, TimeoutError, OSError) as e:
            return _error(f"{type(e).__name__}: {e}")
        headers = {k.decode("latin-1"): [v.decode("latin-1") for v in vs]
                   for k, vs in response.headers.items()}
        return {"type": "response_fetched", "url": response.url, "status": response.status,
                "headers": headers, "body_base64": base64.b64encode(response.body).decode(),
                "request_url": request.url}


def _error(text: str) -> dict:
    return {"type": "control_error", "error": text}


def open_endpoint(runner, settings):
    """Open the endpoint of ``runner`` when ``CONTROL_ENDPOINT`` is on; None otherwise or
    when it cannot be opened (a warning says why; the crawl goes on)."""
    if not settings.getbool("CONTROL_ENDPOINT", True):
        return None
    try:
        return ControlEndpoint(runner).open()
    except OSError as e:
        logger.warning("Control endpoint not opened: %(error)s", {"error": e})
        return None
