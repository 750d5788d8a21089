"""Per-minute rates of growing counters over a sliding window (pages/min, items/min)."""

import threading
from collections import deque
from collections.abc import Mapping

__all__ = ["RateWindow"]


class RateWindow:
    """Samples of counters (``{name: int}``) taken over time; rates over the last
    ``window_s`` seconds.

    Samples closer than ``min_gap_s`` to the previous one replace it, so the memory used
    is bounded (about ``window_s / min_gap_s`` samples) whoever samples and how often.
    Thread-safe.

    Args:
        window_s: seconds the rates are measured over (60 for "per minute over the
            last minute").
        min_gap_s: seconds between kept samples.
    """

    def __init__(self, window_s: float = 60.0, min_gap_s: float = 1.0) -> None:
        self.window_s = window_s
        self.min_gap_s = min_gap_s
        self._samples: deque[tuple[float, dict[str, int]]] = deque()  # (time_s, {name: count})
        self._lock = threading.Lock()

    def add(self, now_s: float, counts: Mapping[str, int]) -> None:
        """Record ``counts`` (name -> int, never decreasing) at monotonic time ``now_s``."""
        with self._lock:
            samples = self._samples
            if len(samples) >= 2 and now_s - samples[-2][0] < self.min_gap_s:
                samples[-1] = (now_s, dict(counts))
            else:
                samples.append((now_s, dict(counts)))
            # keep one sample at or before the window's start, to measure from it
            while len(samples) > 2 and now_s - samples[1][0] >= self.window_s:
                samples.popleft()

    def per_minute(self, name: str) -> float:
        """Rate of counter ``name`` per minute between the oldest sample in the window and
        the newest (0.0 with fewer than two samples)."""
        with self._lock:
            if len(self._samples) < 2:
                return 0.0
            (t0, first), (t1, last) = self._samples[0], self._samples[-1]
        if t1 <= t0:
            return 0.0
        return (last.get(name, 0) - first.get(name, 0)) * 60.0 / (t1 - t0)
