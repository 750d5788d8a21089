"""Where the dashboard server gets its crawls: the crawl process it runs in
(:class:`LocalSource`, ``DASHBOARD_ENABLED``) or every crawl process of this user found
through their control endpoints (:class:`RemoteSource`, ``crawlfw dashboard``).

Both speak the control endpoint's messages (:mod:`crawlfw.control`): ``get_status``,
``get_history``, ``get_sample``, ``pause_crawl``, ``resume_crawl``, ``stop_crawl``;
the local one hands each line to an unopened :class:`~crawlfw.control.ControlEndpoint`'s
``handle_line`` (the same checks against the schemas), the remote one sends it on the
Unix socket (:class:`~crawlfw.core.control.protocol.ControlClient`: owner-only, peer uid
checked).

A crawl's dashboard id is ``<pid>-<crawl id>`` (``12345-quotes-1``): a process may run
several crawls.
"""

import datetime
import json
import os
import threading
import time
from typing import Any

from crawlfw.core.control.protocol import ControlClient, ControlError, discover, encode_line

__all__ = ["LocalSource", "RemoteSource", "crawl_entry", "NoSuchCrawl", "NotShared",
           "command_workers"]

#: Seconds the remote crawl list is kept before the sockets are asked again.
LIST_TTL_S = 1.0


class NoSuchCrawl(LookupError):
    """No running crawl has that dashboard id (it ended, or never was)."""


def _started(crawl: dict) -> str:
    start = (crawl.get("stats") or {}).get("start_time")
    if isinstance(start, str) and start:
        return start
    when = time.time() - float(crawl.get("uptime_s") or 0.0)
    return datetime.datetime.fromtimestamp(when, datetime.timezone.utc).isoformat()


def crawl_entry(pid: int, crawl: dict) -> dict[str, Any]:
    """The ``/api/crawls`` entry of one crawl of a ``status_reported`` reply.

    Returns:
        ``{"id": "<pid>-<crawl id>", "crawl_id", "name" (spider), "pid", "started"
        (ISO 8601), "state", "pages", "items", "uptime_s", "jobdir", "worker": this
        process's worker id in a shared crawl (``FRONTIER_WORKER``) or None, "workers":
        [{"worker", "pages", "items", "last_seen_s"}] (a shared crawl's workers, else []),
        "shared": {"queued", "leased", "pages", "items", "frontier": "<FRONTIER_URL without
        password> <key>", the same for every worker of one shared crawl} or None}``.
    """
    shared = crawl.get("shared")
    return {
        "id": f"{pid}-{crawl['crawl_id']}",
        "crawl_id": crawl["crawl_id"],
        "name": crawl["spider"],
        "pid": int(pid),
        "started": _started(crawl),
        "state": crawl["state"],
        "pages": crawl["pages"],
        "items": crawl["items"],
        "uptime_s": crawl["uptime_s"],
        "jobdir": crawl.get("jobdir"),
        "worker": (shared.get("worker") or None) if shared else None,
        "workers": list(shared.get("workers", [])) if shared else [],
        "shared": ({**{k: shared.get(k, 0) for k in ("queued", "leased", "pages", "items")},
                    "frontier": shared.get("frontier")} if shared else None),
    }


class NotShared(ValueError):
    """The crawl is no worker of a shared crawl (or has not published its figures yet)."""


#: A command's control message, by the name the dashboard gives it.
CONTROL_MESSAGES = {"pause": "pause_crawl", "resume": "resume_crawl", "stop": "stop_crawl"}


def command_workers(source, dashboard_id: str, action: str) -> dict[str, Any]:
    """Pause, resume or stop every worker of the shared crawl the crawl ``dashboard_id``
    is a worker of: the command is written in the shared crawl's Redis through a worker
    here (``command_shared_crawl``; every worker, here or on other machines, follows it
    at its next figures read, within 2 s, and a worker joining later honours a standing
    pause), and sent at once to each worker here over its control endpoint.

    Args:
        source: a :class:`LocalSource` or :class:`RemoteSource`.
        dashboard_id: a worker here (``<pid>-<crawl id>``).
        action: ``pause``, ``resume`` or ``stop`` (reason ``shutdown``).

    Returns:
        ``{"ok": bool (every worker reached), "command": action, "frontier": str,
        "published": {"via": dashboard id, "seq": n} or None (not written in Redis),
        "error": why not, or None, "workers": [{"worker": id, "crawl": dashboard id here or
        None, "reached": bool, "via": "control" (took it now, here) | "redis" (follows it
        at its next figures read) | None, "error": str or None, "last_seen_s": s or
        None}]}``: each worker that published figures, and each worker here.

    Raises:
        NoSuchCrawl: no such crawl here.
        NotShared: it is not a worker of a shared crawl (or has not published yet).
    """
    crawls = source.crawls()
    me = next((c for c in crawls if c["id"] == dashboard_id), None)
    if me is None:
        raise NoSuchCrawl(f"no running crawl {dashboard_id!r}")
    if not me["shared"] or not me["shared"].get("frontier"):
        raise NotShared(f"crawl {dashboard_id} is no worker of a shared crawl (or has not "
                        "published its figures yet: they come within 2 s of its start)")
    frontier = me["shared"]["frontier"]
    here = sorted((c for c in crawls if c["shared"] and c["shared"].get("frontier") == frontier),
                  key=lambda c: (c["id"] != dashboard_id, c["id"]))
    published, error = None, None
    for crawl in here:  # through the view's worker, else another one here
        try:
            reply = source.ask(crawl["id"], {"type": "command_shared_crawl", "command": action,
                                             "reason": "shutdown"})
        except (NoSuchCrawl, ControlError) as e:
            error = str(e)
            continue
        published, error = {"via": crawl["id"], "seq": reply["seq"]}, None
        break
    message: dict[str, Any] = {"type": CONTROL_MESSAGES[action]}
    if action == "stop":
        message["reason"] = "shutdown"
    seen = {w["worker"]: w.get("last_seen_s") for w in me.get("workers") or []}
    workers = []
    for crawl in here:
        entry = {"worker": crawl["worker"] or crawl["id"], "crawl": crawl["id"],
                 "reached": True, "via": "control", "error": None,
                 "last_seen_s": seen.get(crawl["worker"])}
        try:
            source.ask(crawl["id"], message)
        except (NoSuchCrawl, ControlError) as e:
            entry.update(reached=published is not None,
                         via="redis" if published is not None else None, error=str(e))
        workers.append(entry)
    local = {c["worker"] for c in here}
    for worker, last_seen in sorted(seen.items()):
        if worker not in local:
            workers.append({"worker": worker, "crawl": None, "reached": published is not None,
                            "via": "redis" if published is not None else None,
                            "error": None if published is not None else
                            f"not written in Redis: {error}", "last_seen_s": last_seen})
    return {"ok": all(w["reached"] for w in workers), "command": action,
            "frontier": frontier, "published": published, "error": error, "workers": workers}


def _split_id(dashboard_id: str) -> tuple[int, str]:
    pid, _, crawl_id = dashboard_id.partition("-")
    if not pid.isdigit() or not crawl_id:
        raise NoSuchCrawl(f"no crawl {dashboard_id!r} (ids are <pid>-<crawl id>)")
    return int(pid), crawl_id


class LocalSource:
    """The crawls of this process (the in-crawl dashboard).

    Args:
        runner: the :class:`~crawlfw.crawler.CrawlerRunner` whose crawls are shown.
    """

    def __init__(self, runner) -> None:
        from crawlfw.control import ControlEndpoint

        self.runner = runner
        self._endpoint = ControlEndpoint(runner)  # never opened: its handle_line only

    def _ask(self, message: dict[str, Any]) -> dict[str, Any]:
        reply = self._endpoint.handle_line(encode_line(message))
        if reply.get("type") == "control_error":
            raise ControlError(reply["error"])
        return reply

    def crawls(self) -> list[dict[str, Any]]:
        """``/api/crawls``: every running crawl of this process."""
        pid = os.getpid()
        reply = self._ask({"type": "get_status"})
        return [crawl_entry(pid, c) for c in reply["crawls"]]

    def ask(self, dashboard_id: str, message: dict[str, Any]) -> dict[str, Any]:
        """Send ``message`` (its ``crawl_id`` filled in) to the crawl ``dashboard_id``.

        Raises:
            NoSuchCrawl: no such crawl in this process.
            ControlError: the endpoint's error reply.
        """
        pid, crawl_id = _split_id(dashboard_id)
        if pid != os.getpid():
            raise NoSuchCrawl(f"no crawl {dashboard_id!r} in this process")
        try:
            return self._ask({**message, "crawl_id": crawl_id})
        except ControlError as e:
            if "no running crawl" in str(e):
                raise NoSuchCrawl(str(e)) from None
            raise

    def close(self) -> None:
        """Nothing to release."""


class RemoteSource:
    """Every crawl of this user that ``crawlfw ps`` sees, found again as they come and go.

    Args:
        target: show only the crawls matching this crawl id, spider name or pid (as
            ``crawlfw status CRAWL``); None: every crawl.
        directory: the sockets' directory (default: the control endpoint's).
    """

    def __init__(self, target: str | None = None, directory=None) -> None:
        self.target = target or None
        self.directory = directory
        self._lock = threading.Lock()
        self._listed_at = float("-inf")
        self._entries: list[dict[str, Any]] = []
        self._sockets: dict[str, str] = {}  # dashboard id -> socket path

    def _matches(self, pid: int, crawl: dict) -> bool:
        return self.target is None or self.target in (crawl["crawl_id"], crawl["spider"],
                                                      str(pid))

    def crawls(self) -> list[dict[str, Any]]:
        """``/api/crawls``: the running crawls (asked again at most once a second)."""
        with self._lock:
            if time.monotonic() - self._listed_at < LIST_TTL_S:
                return [dict(e) for e in self._entries]
        entries, sockets = [], {}
        for endpoint in discover(self.directory, timeout_s=5.0):
            for crawl in endpoint.get("crawls", []):
                if self._matches(endpoint["pid"], crawl):
                    entry = crawl_entry(endpoint["pid"], crawl)
                    entries.append(entry)
                    sockets[entry["id"]] = endpoint["socket"]
        with self._lock:
            self._entries, self._sockets = entries, sockets
            self._listed_at = time.monotonic()
        return [dict(e) for e in entries]

    def _socket_of(self, dashboard_id: str) -> str:
        pid, _ = _split_id(dashboard_id)
        with self._lock:
            path = self._sockets.get(dashboard_id)
        if path is None:
            self._listed_at = float("-inf")
            self.crawls()
            with self._lock:
                path = self._sockets.get(dashboard_id)
        if path is None:
            raise NoSuchCrawl(f"no running crawl {dashboard_id!r}")
        return path

    def ask(self, dashboard_id: str, message: dict[str, Any]) -> dict[str, Any]:
        """Send ``message`` (its ``crawl_id`` filled in) to the crawl's process.

        Raises:
            NoSuchCrawl: no such crawl runs (any more).
            ControlError: the endpoint's error reply.
        """
        _, crawl_id = _split_id(dashboard_id)
        path = self._socket_of(dashboard_id)
        try:
            return ControlClient(path, timeout_s=15.0).ask({**message, "crawl_id": crawl_id})
        except (ConnectionRefusedError, FileNotFoundError):
            raise NoSuchCrawl(f"crawl {dashboard_id!r} has ended") from None
        except OSError as e:
            raise ControlError(f"crawl {dashboard_id!r}: {e}") from None
        except ControlError as e:
            if "no running crawl" in str(e):
                raise NoSuchCrawl(str(e)) from None
            raise

    def close(self) -> None:
        """Nothing to release."""


def dumps(value: Any) -> bytes:
    """``value`` as compact JSON bytes."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
