"""A crawl's figures over time, kept in the crawl process for the dashboard (plain parts,
no threads): the bounded sample history, the latency histogram, the recent errors.

- :class:`History`: one sample a second (a JSON-ready dict, see
  :mod:`crawlfw.dashboard`), the last ``fine_s`` seconds at full resolution, older ones
  downsampled to one a minute, then thinned (every other kept, the interval doubled)
  when that part is full, so any run fits in a bounded memory. The samples' counters are
  cumulative, so dropping samples loses no count: a rate is measured between any two
  samples kept. Stored as encoded JSON text (1-2 KB a sample, by the actors and busiest
  hosts listed), saved to and loaded from a file (``JOBDIR``).
- :class:`LatencyHistogram`: download latencies (``request.meta['download_latency']``)
  counted in fixed buckets, as Prometheus histograms do.
- :class:`RecentErrors`: a logging handler keeping the last ERROR records with their
  tracebacks.

All three are thread-safe (one lock each; nothing shared between them).
"""

import bisect
import json
import logging
import os
import re
import threading
import time
import traceback
import weakref
import zlib
from collections import deque
from collections.abc import Iterable
from typing import Any

__all__ = ["History", "LatencyHistogram", "RecentErrors", "LATENCY_BUCKETS_S", "latency_of",
           "errors_by_kind"]

#: Upper bounds (seconds) of the latency buckets; a last bucket counts the slower ones.
LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

#: Seconds between two kept samples of the coarse part, to begin with.
COARSE_INTERVAL_S = 60.0

#: Most samples of the coarse part; when full, every other one is dropped.
COARSE_MAX = 1440

#: Samples closer than this to the last one replace it (two samplers, a fresh sample).
MIN_GAP_S = 0.5

#: History file format version (``<JOBDIR>/dashboard-history.json``).
FILE_VERSION = 1


class LatencyHistogram:
    """Download latencies counted in buckets (:data:`LATENCY_BUCKETS_S`).

    Args:
        buckets: upper bounds in seconds, ascending.

    Attributes:
        buckets: the upper bounds (a tuple).
    """

    def __init__(self, buckets: Iterable[float] = LATENCY_BUCKETS_S) -> None:
        self.buckets = tuple(buckets)
        self._counts = [0] * (len(self.buckets) + 1)
        self._sum = 0.0
        self._lock = threading.Lock()

    def observe(self, seconds: float) -> None:
        """Count one latency of ``seconds`` (in the first bucket whose bound is >= it)."""
        i = bisect.bisect_left(self.buckets, seconds)
        with self._lock:
            self._counts[i] += 1
            self._sum += seconds

    def snapshot(self) -> dict[str, Any]:
        """``{"buckets": [bounds], "counts": [n per bucket, the last one above every
        bound], "sum": seconds}``: counts per bucket, not cumulative."""
        with self._lock:
            counts = list(self._counts)
            total = self._sum
        return {"buckets": list(self.buckets), "counts": counts, "sum": round(total, 6)}


_latencies: "weakref.WeakKeyDictionary[Any, LatencyHistogram]" = weakref.WeakKeyDictionary()
_latencies_lock = threading.Lock()


def latency_of(crawler: Any) -> LatencyHistogram:
    """The download latency histogram of ``crawler`` (made on first use), filled by
    :class:`~crawlfw.downloadermiddlewares.stats.DownloaderStats`."""
    with _latencies_lock:
        histogram = _latencies.get(crawler)
        if histogram is None:
            histogram = _latencies[crawler] = LatencyHistogram()
        return histogram


def errors_by_kind(stats: dict[str, Any]) -> dict[str, int]:
    """``{kind: count}`` of a crawl's errors from its stats: download exceptions (by
    class name), spider exceptions (by class name), ignored HTTP statuses (``HTTP
    <status>``)."""
    errors: dict[str, int] = {}
    for key, value in stats.items():
        if key.startswith("downloader/exception_type_count/"):
            name = key.rsplit("/", 1)[1].rsplit(".", 1)[-1]
        elif key.startswith("spider_exceptions/") and key != "spider_exceptions/count":
            name = key.split("/", 1)[1]  # (the /count key is their total)
        elif key.startswith("httperror/response_ignored_status_count/"):
            name = "HTTP " + key.rsplit("/", 1)[1]
        else:
            continue
        errors[name] = errors.get(name, 0) + int(value)
    return errors


class History:
    """The bounded history of one crawl's samples (see the module doc).

    Args:
        fine_s: seconds kept at full resolution (samples of the last ``fine_s`` seconds;
            ``DASHBOARD_HISTORY``). 0 keeps no sample.
        coarse_interval_s: seconds between two samples kept beyond that, to begin with.
        coarse_max: most samples kept beyond that; when full, every other one is dropped
            and the interval doubles.

    Attributes:
        interval: seconds between two fine samples (1.0).
    """

    interval = 1.0

    def __init__(self, fine_s: float = 3600.0, coarse_interval_s: float = COARSE_INTERVAL_S,
                 coarse_max: int = COARSE_MAX) -> None:
        self.fine_s = float(fine_s)
        self.coarse_interval_s = float(coarse_interval_s)
        self.coarse_max = max(2, int(coarse_max))
        # (t, the sample's JSON text deflated by _pack), t ascending
        self._fine: deque[tuple[float, bytes]] = deque()
        self._coarse: list[tuple[float, bytes]] = []
        self._zdict: bytes | None = None  # the preset dictionary: the first sample kept
        self._lock = threading.Lock()

    def _pack(self, text: str) -> bytes:
        """``text`` (a sample's JSON) deflated (raw, no header) against the preset
        dictionary, made of the first sample packed (under the lock)."""
        data = text.encode()
        if self._zdict is None:
            self._zdict = data
        packer = zlib.compressobj(6, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY,
                                  self._zdict)
        return packer.compress(data) + packer.flush()

    def _unpack(self, blob: bytes) -> str:
        """The JSON text :meth:`_pack` deflated into ``blob``."""
        unpacker = zlib.decompressobj(-15, zdict=self._zdict)  # type: ignore[arg-type]
        return (unpacker.decompress(blob) + unpacker.flush()).decode()

    def __len__(self) -> int:
        with self._lock:
            return len(self._fine) + len(self._coarse)

    def add(self, sample: dict[str, Any]) -> None:
        """Keep ``sample`` (a dict with ``t``, unix seconds, and JSON-ready values).

        A sample less than :data:`MIN_GAP_S` after the last one replaces it."""
        if self.fine_s <= 0:
            return
        t = float(sample["t"])
        text = json.dumps(sample, separators=(",", ":"))
        with self._lock:
            fine = self._fine
            if fine and t - fine[-1][0] < MIN_GAP_S:
                fine[-1] = (t, self._pack(text))
                return
            fine.append((t, self._pack(text)))
            while fine and t - fine[0][0] > self.fine_s:
                self._to_coarse(fine.popleft())

    def _to_coarse(self, entry: tuple[float, bytes]) -> None:
        coarse = self._coarse
        if coarse and entry[0] - coarse[-1][0] < self.coarse_interval_s:
            return
        coarse.append(entry)
        if len(coarse) > self.coarse_max:
            # keep the newest and every other one before it
            self._coarse = coarse[-1::-2][::-1]
            self.coarse_interval_s *= 2

    def samples(self, since: float | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """The samples kept, oldest first: those with ``t > since`` (all when None), at
        most the last ``limit`` of them."""
        with self._lock:
            entries = self._coarse + list(self._fine)
            unpack = self._unpack
        if since is not None:
            times = [t for t, _ in entries]
            entries = entries[bisect.bisect_right(times, since):]
        if limit is not None:
            entries = entries[-limit:] if limit > 0 else []
        return [json.loads(unpack(blob)) for _, blob in entries]

    def last(self) -> dict[str, Any] | None:
        """The newest sample, or None."""
        with self._lock:
            blob = self._fine[-1][1] if self._fine else (
                self._coarse[-1][1] if self._coarse else None)
            if blob is None:
                return None
            text = self._unpack(blob)
        sample: dict[str, Any] = json.loads(text)
        return sample

    # --- on disk ----------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the history to ``path`` (JSON, replaced atomically: a temporary file
        beside it renamed over it).

        Raises:
            OSError: the file cannot be written.
        """
        with self._lock:
            coarse = [self._unpack(blob) for _, blob in self._coarse]
            fine = [self._unpack(blob) for _, blob in self._fine]
            interval = self.coarse_interval_s
        tmp = f"{os.fspath(path)}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(f'{{"version":{FILE_VERSION},"coarse_interval_s":{interval!r},"coarse":[')
            f.write(",".join(coarse))
            f.write('],"fine":[')
            f.write(",".join(fine))
            f.write("]}")
        os.replace(tmp, path)

    def load(self, path: str | os.PathLike[str]) -> int:
        """Put the samples saved in ``path`` before those kept (a resumed crawl).

        Returns:
            The number of samples read (0 when there is no file).

        Raises:
            ValueError: the file is not a history file of this version (the message
                names it).
        """
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            return 0
        except (OSError, ValueError) as e:
            raise ValueError(f"{os.fspath(path)}: not a dashboard history file: {e}") from None
        if not isinstance(data, dict) or data.get("version") != FILE_VERSION:
            raise ValueError(f"{os.fspath(path)}: not a dashboard history file of version "
                             f"{FILE_VERSION}")
        old = [s for s in data.get("coarse", []) + data.get("fine", [])
               if isinstance(s, dict) and isinstance(s.get("t"), int | float)]
        with self._lock:
            kept = list(self._coarse) + list(self._fine)
            self._coarse, self._fine = [], deque()
            self.coarse_interval_s = max(self.coarse_interval_s,
                                         float(data.get("coarse_interval_s") or 0.0))
        first = kept[0][0] if kept else None
        for sample in old:
            if first is None or sample["t"] < first:
                self.add(sample)
        with self._lock:
            for t, blob in kept:  # packed against the same dictionary
                self._fine.append((t, blob))
            newest = self._fine[-1][0] if self._fine else None
            while newest is not None and self._fine and newest - self._fine[0][0] > self.fine_s:
                self._to_coarse(self._fine.popleft())
        return len(old)


_URL = re.compile(r"(?:https?|ftp|file|data|s3)://[^\s>\"']+")

#: Most characters kept of an error's message, and of its traceback.
MAX_MESSAGE_CHARS = 2000
MAX_TRACEBACK_CHARS = 20000


class RecentErrors(logging.Handler):
    """A logging handler (level ERROR) keeping the last ``size`` records as
    ``{"t", "kind", "message", "traceback", "url"}`` dicts.

    ``kind`` is the exception's class name when the record carries one, else
    ``"ERROR"``/``"CRITICAL"``; ``url`` is the first URL in the message (None without
    one); ``traceback`` the formatted traceback (None without one); ``crawl`` the crawl
    id of the record's ``spider`` extra when it has one (the :func:`errors` filter).

    Args:
        size: most errors kept.
    """

    def __init__(self, size: int = 100) -> None:
        super().__init__(level=logging.ERROR)
        self._errors: deque[dict[str, Any]] = deque(maxlen=size)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a bad format: the raw one
            message = str(record.msg)
        tb = None
        kind = record.levelname
        if record.exc_info and record.exc_info[0] is not None:
            kind = record.exc_info[0].__name__
            tb = "".join(traceback.format_exception(*record.exc_info))[-MAX_TRACEBACK_CHARS:]
        elif record.exc_text:
            tb = record.exc_text[-MAX_TRACEBACK_CHARS:]
        match = _URL.search(message)
        spider = getattr(record, "spider", None)
        crawler = getattr(spider, "crawler", None)
        self._errors.append({
            "t": round(record.created, 3),
            "kind": kind,
            "message": message[:MAX_MESSAGE_CHARS],
            "traceback": tb,
            "url": match.group(0) if match else None,
            "crawl": getattr(crawler, "_crawl_id", None),
        })

    def errors(self, since: float | None = None, crawl_id: str | None = None) -> list[dict[str, Any]]:
        """The errors kept, oldest first, with ``t > since`` (all when None), of
        ``crawl_id`` or of no known crawl (all when None); without the ``crawl`` key."""
        out = []
        for error in list(self._errors):
            if since is not None and error["t"] <= since:
                continue
            if crawl_id is not None and error["crawl"] not in (None, crawl_id):
                continue
            out.append({k: v for k, v in error.items() if k != "crawl"})
        return out


def now_s() -> float:
    """Unix time in seconds, rounded to the millisecond (a sample's ``t``)."""
    return round(time.time(), 3)
