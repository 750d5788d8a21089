"""The crawl process's side of the dashboard: one sample of each running crawl a second,
kept in its :class:`~crawlfw.core.control.history.History` (see :mod:`crawlfw.dashboard`
for a sample's keys).

The :class:`Recorder` of a process (:func:`recorder_of`) is driven by the control
endpoint's rate thread (``crawlfw-control-rates``, once a second), or by the in-crawl
dashboard's own timer when there is no endpoint. A sample reads the stats (a copy under
their lock), asks the engine ``get_status`` (one message), reads the frontier's
counters and the actors' inboxes and thread CPU times from this thread without a
message (plain integer reads; a dict iterated while the scheduler may change it is
copied first, and a failed read is skipped): about 0.2 ms a second. The per-host detail
(hosts ready and waiting, the busiest) is computed when a dashboard looked at the crawl
within the last :data:`VIEWED_S` seconds, or when the crawl has at most
:data:`CHEAP_HOSTS` hosts: otherwise it waits for a viewer, as it grows with the hosts.
"""

import heapq
import logging
import os
import resource
import threading
import time
import weakref
from pathlib import Path
from typing import Any

import pykka

from crawlfw.core.control.history import (
    History,
    RecentErrors,
    errors_by_kind,
    latency_of,
    now_s,
)

logger = logging.getLogger(__name__)

__all__ = ["Recorder", "recorder_of", "build_sample", "HISTORY_FILE"]

#: The history's file in a crawl's ``JOBDIR``.
HISTORY_FILE = "dashboard-history.json"

#: Seconds after a dashboard's last look during which samples carry the per-host detail.
VIEWED_S = 30.0

#: Up to this many hosts the per-host detail is always computed.
CHEAP_HOSTS = 2000

#: Busiest hosts reported.
BUSIEST = 10

#: Seconds between two saves of a ``JOBDIR`` crawl's history (also saved at its close).
SAVE_EVERY_S = 300.0

#: Seconds a sample waits for the engine's ``get_status``.
ENGINE_TIMEOUT_S = 1.0

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE_SIZE = resource.getpagesize()

def _status_counts(stats: dict) -> dict[str, int]:
    prefix = "downloader/response_status_count/"
    return {k[len(prefix):]: int(v) for k, v in stats.items() if k.startswith(prefix)}


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _thread_cpu_s(native_id: int | None) -> float | None:
    """CPU seconds (user + system) of this process's thread ``native_id`` (None: gone)."""
    if native_id is None:
        return None
    try:
        with open(f"/proc/self/task/{native_id}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return round((int(fields[11]) + int(fields[12])) / _CLOCK_TICKS, 2)
    except (OSError, ValueError, IndexError):
        return None


def _tree_of(runner, crawler):
    supervisor = getattr(runner, "_supervisor", None)
    if supervisor is None:
        return None
    actor = supervisor._actor_weakref()
    if actor is None:
        return None
    return actor.crawls.get(getattr(crawler, "_crawl_id", None))


def _actor_entry(name: str, ref) -> dict[str, Any]:
    try:
        mailbox = ref.actor_inbox.qsize()
    except Exception:  # a ChildRef between two actors
        mailbox = 0
    actor = None
    try:
        actor = ref._actor_weakref()
    except Exception:  # noqa: S110 - between two actors: no CPU figure
        pass
    return {"name": name, "restarts": int(getattr(ref, "restarts", 0) or 0),
            "mailbox": int(mailbox),
            "cpu": _thread_cpu_s(getattr(actor, "_native_id", None))}


def _actors(tree) -> list[dict[str, Any]]:
    if tree is None:
        return []
    out = []
    for name, ref in (("engine", tree.engine), ("scheduler", tree.scheduler),
                      ("spider_runner", tree.spider_runner), ("pipeline", tree.pipeline)):
        if ref is not None:
            out.append(_actor_entry(name, ref))
    pool = tree.downloaders
    for i, ref in enumerate(getattr(pool, "refs", None) or []):
        out.append(_actor_entry(f"downloader {i}", ref))
    for ref in list(tree.exporters):
        out.append(_actor_entry(f"exporter {getattr(ref, 'key', '')}".rstrip(), ref))
    for path, ref in list(tree.user_actors.items()):
        out.append(_actor_entry(path, ref))
    return out


#: Hosts walked per second at most for the per-host detail: a crawl of more hosts has it
#: computed every ``hosts / HOSTS_PER_S`` seconds (100,000 hosts: every 5 s), the figures
#: repeated in between.
HOSTS_PER_S = 20000

_host_detail: "weakref.WeakKeyDictionary[Any, tuple[float, dict[str, Any]]]" = \
    weakref.WeakKeyDictionary()


def _hosts(frontier, detail: bool) -> dict[str, Any]:
    hosts = getattr(frontier, "hosts", None)
    table = getattr(hosts, "hosts", None)
    if table is None:  # a shared frontier (Redis): its hosts are in Redis
        return {"ready": None, "waiting": None, "busiest": []}
    if not detail and len(table) > CHEAP_HOSTS:
        return {"ready": None, "waiting": None, "busiest": []}
    now = time.monotonic()
    kept = _host_detail.get(hosts)
    if kept is not None and now - kept[0] < len(table) / HOSTS_PER_S:
        return kept[1]
    figures = _walk_hosts(hosts, table)
    _host_detail[hosts] = (now, figures)
    return figures


def _walk_hosts(hosts, table) -> dict[str, Any]:
    for _ in range(3):
        try:
            entries = hosts.host_figures()  # [(key, queued, in flight, ready)]
            break
        except (RuntimeError, IndexError):  # changed by the scheduler meanwhile
            continue
    else:
        return {"ready": None, "waiting": None, "busiest": []}
    policy = hosts.policy
    ready = waiting = 0
    for key, queued, in_flight, is_ready in entries:
        if queued:
            if is_ready and in_flight < policy.concurrency(key):
                ready += 1
            else:
                waiting += 1
    busiest = heapq.nlargest(BUSIEST, entries, key=lambda e: (e[1], e[2]))
    return {"ready": ready, "waiting": waiting,
            "busiest": [{"host": key, "queued": queued, "in_flight": in_flight,
                         "delay": round(float(policy.base_delay_s(key)), 3)}
                        for key, queued, in_flight, _ in busiest if queued or in_flight]}


def _on_disk(frontier, queued: int) -> int | None:
    store = getattr(frontier, "store", None)
    if store is not None:
        spilled = getattr(store, "spilled", None)
        return int(spilled) if spilled is not None else None
    if type(frontier).__name__ == "SqliteFrontier":
        return queued
    return None


def _revisit(stats) -> dict[str, Any] | None:
    """A continuous crawl's revisits (``REVISIT_ENABLED``), from its ``revisit/*`` stats
    (the Scheduler keeps them, as ``crawlfw status`` reads them): ``{"due_now",
    "next_due" (unix s or None), "scheduled", "changed", "unchanged", "gone"}``; None
    for a crawl that does not revisit."""
    if "revisit/scheduled" not in stats:
        return None
    next_due = stats.get("revisit/next_due")
    return {"due_now": int(stats.get("revisit/due_now", 0)),
            "next_due": float(next_due) if next_due is not None else None,
            "scheduled": int(stats.get("revisit/scheduled", 0)),
            "changed": int(stats.get("revisit/changed", 0)),
            "unchanged": int(stats.get("revisit/unchanged", 0)),
            "gone": int(stats.get("revisit/gone", 0))}


def _memory(settings) -> dict[str, Any]:
    enabled = settings.getbool("MEMUSAGE_ENABLED", True)
    limit = settings.getint("MEMUSAGE_LIMIT_MB", 0) if enabled else 0
    warning = settings.getint("MEMUSAGE_WARNING_MB", 0) if enabled else 0
    return {"rss": _rss_bytes(), "limit": limit * 1024 * 1024 or None,
            "warning": warning * 1024 * 1024 or None}


def engine_status(crawler, timeout_s: float = ENGINE_TIMEOUT_S) -> dict | None:
    """The engine's ``get_status`` answer, ``{"closing": "stopped"}`` once it stopped,
    None when it did not answer within ``timeout_s``."""
    engine = getattr(crawler, "engine", None)
    if engine is None:
        return {"closing": "stopped"}
    try:
        return engine.ref.ask({"type": "get_status"}, timeout=timeout_s)
    except pykka.ActorDeadError:
        return {"closing": "stopped"}
    except pykka.Timeout:
        return None


def build_sample(crawler, runner=None, engine: dict | None = None,
                 detail: bool = True) -> dict[str, Any]:
    """One sample of ``crawler`` now (see :mod:`crawlfw.dashboard` for its keys).

    Args:
        crawler: a running :class:`~crawlfw.crawler.Crawler`.
        runner: its runner (for the Supervisor's record of the crawl's actors), or None
            (no ``actors``, no frontier detail).
        engine: the engine's ``get_status`` answer (:func:`engine_status`), or None when
            it did not answer (in flight and state from the stats alone).
        detail: compute the per-host detail whatever the number of hosts.
    """
    stats = crawler.stats.get_stats()
    engine = engine or {}
    if engine.get("closing"):
        state = "closing"
    elif engine.get("paused"):
        state = "paused"
    else:
        state = "running"
    tree = _tree_of(runner, crawler) if runner is not None else None
    frontier = getattr(tree, "frontier", None)
    queued = (stats.get("scheduler/enqueued", 0) - stats.get("scheduler/dequeued", 0)
              + engine.get("held", 0))
    shared = stats.get("frontier/shared")
    hosts = getattr(frontier, "hosts", None)
    leased = getattr(hosts, "in_flight", None)
    if shared:
        leased = shared.get("leased")
    in_flight = engine.get("downloading")
    return {
        "t": now_s(),
        "pages": int(stats.get("response_received_count", 0)),
        "items": int(stats.get("item_scraped_count", 0)),
        "bytes": int(stats.get("downloader/response_bytes", 0)),
        "status": _status_counts(stats),
        "errors": errors_by_kind(stats),
        "latency": latency_of(crawler).snapshot(),
        "frontier": {"queued": int(max(0, queued)),
                     "in_flight": int(in_flight) if in_flight is not None else 0,
                     "leased": int(leased) if leased is not None else 0,
                     "on_disk": _on_disk(frontier, max(0, queued))},
        "hosts": _hosts(frontier, detail),
        "actors": _actors(tree),
        "memory": _memory(crawler.settings),
        "revisit": _revisit(stats),
        "state": state,
        "shared": _shared(shared, frontier) if shared else None,
    }


#: Most workers whose own counters a sample carries (``shared.by_worker``).
MAX_WORKERS = 64


def _shared(shared: dict, frontier) -> dict[str, Any]:
    """A sample's ``shared`` figures from the ``frontier/shared`` stat (the whole crawl
    as the workers last published it, a copy the scheduler replaces every few seconds):
    this worker's id, the sums, and each worker's counters."""
    workers = shared.get("workers") or []
    return {"worker": str(shared.get("worker") or getattr(frontier, "worker", None) or ""),
            "queued": shared.get("queued", 0), "leased": shared.get("leased", 0),
            "pages": shared.get("pages", 0), "items": shared.get("items", 0),
            "workers": len(workers),
            "by_worker": [{"worker": str(w["worker"]), "pages": int(w.get("pages", 0)),
                           "items": int(w.get("items", 0))} for w in workers[:MAX_WORKERS]]}


class Recorder:
    """The samples of every crawl of one process (see the module doc).

    Args:
        runner: the :class:`~crawlfw.crawler.CrawlerRunner`.
        settings: the process's settings (``DASHBOARD_HISTORY``, for a crawl whose own
            settings do not give it: each crawl's settings, its spider's
            ``custom_settings`` included, decide its history's length).

    Attributes:
        errors: the :class:`RecentErrors` handler, on the root logger once
            :meth:`start` ran.
    """

    def __init__(self, runner, settings) -> None:
        self.runner = runner
        self.fine_s = max(0.0, settings.getfloat("DASHBOARD_HISTORY", 3600.0))
        self.errors = RecentErrors()
        self._histories: weakref.WeakKeyDictionary[Any, History] = weakref.WeakKeyDictionary()
        self._saved_at: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._viewed_at = float("-inf")
        self._started = False

    @property
    def enabled(self) -> bool:
        """False with ``DASHBOARD_HISTORY = 0`` in the process's settings and in every
        crawl's: no sample is kept."""
        return self.fine_s > 0 or any(self.fine_s_of(c) > 0 for c in list(self.runner.crawlers))

    def fine_s_of(self, crawler) -> float:
        """Seconds of samples ``crawler`` keeps at one a second (``DASHBOARD_HISTORY`` of
        its settings, which hold its spider's ``custom_settings``); 0: none kept."""
        settings = getattr(crawler, "settings", None)
        if settings is None:
            return self.fine_s
        return max(0.0, settings.getfloat("DASHBOARD_HISTORY", self.fine_s))

    def start(self) -> "Recorder":
        """Put the errors handler on the root logger (once)."""
        if not self._started and self.enabled:
            self._started = True
            logging.getLogger().addHandler(self.errors)
        return self

    def stop(self) -> None:
        """Take the errors handler off the root logger."""
        if self._started:
            self._started = False
            logging.getLogger().removeHandler(self.errors)

    def viewed(self) -> None:
        """Note that a dashboard looks: the next samples carry the per-host detail."""
        self._viewed_at = time.monotonic()

    def history_of(self, crawler) -> History:
        """The history of ``crawler`` (made on first use; a ``JOBDIR`` crawl's saved
        history loaded then, and saved again at its close)."""
        with self._lock:
            history = self._histories.get(crawler)
            if history is not None:
                return history
            history = self._histories[crawler] = History(self.fine_s_of(crawler))
        path = self._file_of(crawler)
        if path is not None:
            try:
                n = history.load(path)
            except ValueError as e:
                logger.warning("Dashboard history not loaded: %(error)s", {"error": e})
            else:
                if n:
                    logger.info("Dashboard history: %(n)d samples loaded from %(path)s",
                                {"n": n, "path": path})
            self._saved_at[crawler] = time.monotonic()
            from crawlfw import signals

            crawler.signals.connect(self._spider_closed, signal=signals.spider_closed,
                                    weak=False)
        return history

    def _file_of(self, crawler) -> Path | None:
        jobdir = crawler.settings.get("JOBDIR")
        return Path(jobdir) / HISTORY_FILE if jobdir else None

    def _spider_closed(self, spider=None, reason=None, **kwargs) -> None:
        crawler = getattr(spider, "crawler", None)
        if crawler is None or crawler not in self._histories:
            return
        try:
            self._histories[crawler].add(build_sample(crawler, self.runner,
                                                      {"closing": reason or "finished"}))
        except Exception:
            logger.debug("Dashboard: the last sample failed", exc_info=True)
        self.save(crawler)

    def save(self, crawler) -> None:
        """Save the history of a ``JOBDIR`` crawl (a WARNING when it cannot be)."""
        path = self._file_of(crawler)
        history = self._histories.get(crawler)
        if path is None or history is None:
            return
        self._saved_at[crawler] = time.monotonic()
        try:
            history.save(path)
        except OSError as e:
            logger.warning("Dashboard history not saved to %(path)s: %(error)s",
                           {"path": path, "error": e})

    def crawler(self, crawl_id: str):
        """The running crawler of ``crawl_id``, or None."""
        for crawler in list(self.runner.crawlers):
            if getattr(crawler, "_crawl_id", None) == crawl_id and crawler.crawling:
                return crawler
        return None

    def sample(self, crawler, keep: bool = True) -> dict[str, Any]:
        """A new sample of ``crawler``, kept in its history when ``keep``."""
        detail = time.monotonic() - self._viewed_at < VIEWED_S
        sample = build_sample(crawler, self.runner, engine_status(crawler), detail)
        if keep and self.fine_s_of(crawler) > 0:
            self.history_of(crawler).add(sample)
        return sample

    def sample_all(self) -> None:
        """Sample every running crawl (the once-a-second call); save the history of a
        ``JOBDIR`` crawl every :data:`SAVE_EVERY_S`."""
        for crawler in list(self.runner.crawlers):
            if not crawler.crawling or not getattr(crawler, "_crawl_id", None) \
                    or crawler.engine is None or self.fine_s_of(crawler) <= 0:
                continue
            self.sample(crawler)
            saved = self._saved_at.get(crawler)
            if saved is not None and time.monotonic() - saved >= SAVE_EVERY_S:
                self.save(crawler)


_recorders_lock = threading.Lock()


def recorder_of(runner, settings=None) -> Recorder:
    """The :class:`Recorder` of ``runner`` (made and started on first use, with
    ``settings`` or the runner's)."""
    with _recorders_lock:
        recorder = getattr(runner, "_dashboard_recorder", None)
        if recorder is None:
            recorder = Recorder(runner, settings if settings is not None else runner.settings)
            runner._dashboard_recorder = recorder
    return recorder.start()
