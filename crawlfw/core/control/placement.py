"""CPU placement of a crawl's actor threads (the ``CPU_AFFINITY`` setting).

A crawl runs its actors on threads that share one interpreter lock: only one of them
runs Python at a time, and each page passes from thread to thread several times (the
Downloader, the Engine, the SpiderRunner, the Scheduler, the Pipeline, the Exporter).
When the operating system spreads those threads over several CPUs, every hand-off wakes
a thread on another CPU (an inter-processor interrupt, a costly exit on a virtual
machine), which then waits for the lock the first still holds, and the data of the page
crosses caches: CPython's "convoy effect" (bpo-7946). On the crawl benchmark that costs
about a quarter of the process's CPU time. Kept on one CPU, the threads hand off
without waking another processor, and run in the same cache.

So by default (``CPU_AFFINITY = 'auto'``) every actor thread of every crawl in a process
runs on one CPU, chosen among those the process may use (``sched_getaffinity``): the one
the first actor thread starts on. Placed threads are also batch threads
(``SCHED_BATCH``, sched(7)): one woken by a message does not preempt the sender, which
holds the lock, but runs once the sender lets go (half the context switches). Every ``interval_s`` seconds (``CPU_AFFINITY_INTERVAL``)
a watcher thread reads what the other processes of the machine used of that CPU
(``/proc/stat`` less the crawl's own threads' time, ``/proc/<pid>/task/<tid>/schedstat``):
when they took at least a quarter of it and another allowed CPU was idle for a quarter
more, the crawl's threads move there. The move is made with a seeded coin
(``random.Random(pid)``) so that two crawl processes crowded onto one CPU do not keep
moving together. ``CPU_AFFINITY = 'off'`` leaves the threads to the operating system;
CPU numbers (``3``, ``'0,1'``, ``[2, 3]``) put them on exactly those CPUs, never moved.

Only the crawl's actor threads are placed; the thread that starts the crawl and any other
thread of the process keep their own affinity. Where the platform has no
``sched_setaffinity`` (macOS, Windows), placement does nothing.
"""

from __future__ import annotations

import logging
import os
import random
import threading
from collections.abc import Iterable

from crawlfw.settings._validation import AUTO, OFF, parse_cpu_affinity

logger = logging.getLogger(__name__)

__all__ = ["AUTO", "OFF", "CpuPlacement", "parse_cpu_affinity", "placement"]

#: The share of the crawl's CPU other processes must have taken over an interval before
#: a move is considered, and the share of idle time by which another CPU must beat it.
CROWDED_SHARE = 0.25
MOVE_MARGIN = 0.25

def _current_cpu() -> int | None:
    """The CPU the calling thread runs on (``/proc/thread-self/stat`` field 39,
    proc(5)), or None when it cannot be read."""
    try:
        with open("/proc/thread-self/stat", "rb") as f:
            stat = f.read()
        return int(stat[stat.rindex(b")") + 2:].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def _process_cpus() -> set[int]:
    """The CPUs the process may use: its main thread's affinity (a thread made by a
    placed actor thread inherits that thread's one CPU, so its own affinity says
    nothing of the process's)."""
    try:
        return os.sched_getaffinity(os.getpid())
    except OSError:
        return os.sched_getaffinity(0)


def _batch_policy() -> None:
    """Make the calling thread a batch thread (``SCHED_BATCH``, sched(7)): woken by
    another actor's message, it no longer preempts the sender, which holds the
    interpreter lock and would only be switched back to once the woken thread found the
    lock taken; it runs when the sender lets go. Nothing changes where the policy is
    missing or refused."""
    policy = getattr(os, "SCHED_BATCH", None)
    if policy is None:
        return
    try:
        os.sched_setscheduler(0, policy, os.sched_param(0))
    except OSError as e:
        logger.debug("CPU placement: SCHED_BATCH refused: %s", e)


def _cpu_times() -> dict[int, tuple[int, int]]:
    """``{cpu: (busy, total)}`` in clock ticks since boot, from ``/proc/stat``
    (proc(5): user nice system idle iowait irq softirq steal ...; idle and iowait are
    not busy). Empty when it cannot be read."""
    times = {}
    try:
        with open("/proc/stat", "rb") as f:
            for line in f:
                if line.startswith(b"cpu") and line[3:4].isdigit():
                    name, *fields = line.split()
                    values = [int(v) for v in fields[:8]]
                    total = sum(values)
                    times[int(name[3:])] = (total - values[3] - values[4], total)
    except (OSError, ValueError):
        return {}
    return times


def _threads_on(cpu: int, exclude: Iterable[int] = ()) -> list[int]:
    """Native ids of this process's threads allowed on ``cpu`` alone, less ``exclude``
    (``/proc/self/task``); [] when it cannot be read."""
    skip = set(exclude)
    found = []
    try:
        tids = [int(name) for name in os.listdir("/proc/self/task")]
    except (OSError, ValueError):
        return []
    for tid in tids:
        if tid in skip:
            continue
        try:
            if os.sched_getaffinity(tid) == {cpu}:
                found.append(tid)
        except OSError:
            continue
    return found


def _thread_cpu_ns(tid: int) -> int:
    """Nanoseconds thread ``tid`` of this process has run (``schedstat`` field 1,
    Linux's Documentation/scheduler/sched-stats.rst); 0 when it cannot be read."""
    try:
        with open(f"/proc/self/task/{tid}/schedstat", "rb") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


class CpuPlacement:
    """Where a process's crawl actor threads run (one instance per process:
    :func:`placement`).

    Args:
        interval_s: seconds between two looks at the chosen CPU's load (``'auto'`` only).
        seed: the seed of the coin that spreads crowded processes (default: the pid).

    Threads call :meth:`enter` as they start and :meth:`leave` as they end. The first
    ``'auto'`` thread chooses the CPU (the one it runs on) and starts the watcher thread
    (``crawlfw-cpu``) when the process may use more than one CPU; the last thread to leave
    stops it, and the next crawl chooses again.
    """

    def __init__(self, interval_s: float = 5.0, seed: int | None = None) -> None:
        self.interval_s = interval_s
        self._lock = threading.Lock()
        self._threads: dict[int, str | frozenset[int]] = {}  # native id -> mode
        self.cpu: int | None = None  # the 'auto' CPU while threads are placed
        self.moves = 0
        self._refused: set[frozenset[int]] = set()  # CPU sets refused (logged once)
        self._random = random.Random(os.getpid() if seed is None else seed)
        self._stop: threading.Event | None = None
        self._watcher: threading.Thread | None = None

    @staticmethod
    def supported() -> bool:
        """True where threads can be placed (``os.sched_setaffinity``, Linux)."""
        return hasattr(os, "sched_setaffinity")

    def enter(self, mode: str | frozenset[int]) -> bool:
        """Place the calling thread by ``mode`` (:func:`parse_cpu_affinity`'s result).

        Returns:
            True when the thread was placed (then it must call :meth:`leave`); False
            for :data:`OFF`, an unsupported platform, or CPUs the process may not use
            (logged, naming ``CPU_AFFINITY``; the thread is left where it is).
        """
        if mode == OFF or not self.supported():
            return False
        allowed = _process_cpus()
        tid = threading.get_native_id()
        with self._lock:
            if mode == AUTO:
                if len(allowed) < 2:
                    return False
                if self.cpu is None or self.cpu not in allowed:
                    cpu = _current_cpu()
                    self.cpu = cpu if cpu in allowed else min(allowed)
                    logger.debug("Crawl actor threads run on CPU %d (CPU_AFFINITY=auto)",
                                 self.cpu)
                cpus: set[int] | frozenset[int] = {self.cpu}
            else:
                assert isinstance(mode, frozenset)
                if not mode <= allowed:
                    if mode in self._refused:
                        return False
                    self._refused.add(mode)
                    logger.error(
                        "CPU_AFFINITY: CPU %s is not one this process may run on (it may "
                        "use %s); the crawl's threads are left to the operating system",
                        ",".join(map(str, sorted(mode - allowed))),
                        ",".join(map(str, sorted(allowed))))
                    return False
                cpus = mode
            try:
                os.sched_setaffinity(0, cpus)
            except OSError as e:
                logger.warning("CPU_AFFINITY: cannot place a crawl thread on CPU %s: %s",
                               ",".join(map(str, sorted(cpus))), e)
                return False
            _batch_policy()
            self._threads[tid] = mode
            if mode == AUTO and self._watcher is None and self.interval_s > 0:
                self._stop = threading.Event()
                self._watcher = threading.Thread(
                    target=self._watch, args=(self._stop,), name="crawlfw-cpu", daemon=True)
                self._watcher.start()
        return True

    def leave(self) -> None:
        """The calling thread, placed by :meth:`enter`, ends; the last one stops the
        watcher and forgets the chosen CPU."""
        tid = threading.get_native_id()
        with self._lock:
            self._threads.pop(tid, None)
            if not any(mode == AUTO for mode in self._threads.values()):
                self.cpu = None
                if self._stop is not None:
                    self._stop.set()
                self._stop = self._watcher = None

    def placed_threads(self) -> list[int]:
        """Native ids of the threads placed now."""
        with self._lock:
            return list(self._threads)

    # --- the watcher ------------------------------------------------------------------

    def _watch(self, stop: threading.Event) -> None:
        before = self._sample()
        while not stop.wait(self.interval_s):
            now = self._sample()
            try:
                moved = self.rebalance(before, now)
            except Exception:  # a bug here must not end the watcher
                logger.exception("CPU placement check failed")
                moved = None
            before = now if moved is None else self._sample()

    def _sample(self) -> tuple[dict[int, tuple[int, int]], int]:
        """``(/proc/stat per CPU, the 'auto' threads' run time in ns)``."""
        with self._lock:
            tids = [tid for tid, mode in self._threads.items() if mode == AUTO]
        return _cpu_times(), sum(_thread_cpu_ns(tid) for tid in tids)

    def rebalance(self, before: tuple[dict[int, tuple[int, int]], int],
                  after: tuple[dict[int, tuple[int, int]], int]) -> int | None:
        """Move the ``'auto'`` threads when other processes crowd their CPU.

        Args:
            before, after: two :meth:`_sample` readings, an interval apart.

        Returns:
            The CPU the threads moved to, or None (no move).
        """
        cpu = self.cpu
        (cpu_before, own_before), (cpu_after, own_after) = before, after
        if cpu is None or cpu not in cpu_before or cpu not in cpu_after:
            return None
        allowed = _process_cpus() if self.supported() else set()

        def idle_share(c: int) -> float:
            busy = cpu_after[c][0] - cpu_before[c][0]
            total = cpu_after[c][1] - cpu_before[c][1]
            return 1.0 - busy / total if total > 0 else 0.0

        total = cpu_after[cpu][1] - cpu_before[cpu][1]
        if total <= 0:
            return None
        ticks_per_ns = 100 / 1e9  # USER_HZ is 100 on Linux (proc(5))
        others = (cpu_after[cpu][0] - cpu_before[cpu][0]
                  - (own_after - own_before) * ticks_per_ns) / total
        if others < CROWDED_SHARE:
            return None
        candidates = [c for c in allowed if c != cpu and c in cpu_before and c in cpu_after]
        if not candidates:
            return None
        best = max(candidates, key=idle_share)
        # alone on ``cpu`` the threads would have ``1 - others`` of it; ``best`` offers
        # what it left idle
        if idle_share(best) < 1.0 - others + MOVE_MARGIN:
            logger.debug("CPU placement: CPU %d crowded (%.0f%% used by other processes), "
                         "but CPU %d was idle only %.0f%%: staying", cpu, 100 * others,
                         best, 100 * idle_share(best))
            return None
        if self._random.random() < 0.5:
            logger.debug("CPU placement: CPU %d crowded (%.0f%% used by other processes); "
                         "staying this time", cpu, 100 * others)
            return None
        return self.move(best, reason=f"other processes used {100 * others:.0f}% of it")

    def move(self, cpu: int, reason: str = "") -> int | None:
        """Put every ``'auto'`` thread on ``cpu`` now, and every other thread of the
        process that runs only on the old CPU: the threads an actor thread started
        (a coroutine spider's, curl's resolver) inherited its placement.

        Returns:
            ``cpu``, or None when no thread was moved (``cpu`` not allowed, none placed).
        """
        with self._lock:
            old = self.cpu
            if old is None or cpu == old:
                return None
            moved = 0
            for tid in _threads_on(old, exclude=self._threads):
                try:
                    os.sched_setaffinity(tid, {cpu})
                except OSError:  # ended meanwhile
                    pass
            for tid, mode in list(self._threads.items()):
                if mode != AUTO:
                    continue
                try:
                    os.sched_setaffinity(tid, {cpu})
                    moved += 1
                except ProcessLookupError:
                    del self._threads[tid]
                except OSError as e:
                    logger.warning("CPU placement: cannot move thread %d to CPU %d: %s",
                                   tid, cpu, e)
                    return None
            self.cpu = cpu
            self.moves += 1
        logger.info("Crawl actor threads moved from CPU %d to CPU %d%s", old, cpu,
                    f": {reason}" if reason else "")
        return cpu if moved else None


_placement: CpuPlacement | None = None
_placement_lock = threading.Lock()


def placement(interval_s: float | None = None) -> CpuPlacement:
    """The process's :class:`CpuPlacement` (made on first use).

    Args:
        interval_s: ``CPU_AFFINITY_INTERVAL``; the first crawl's value is kept while
            threads are placed, later values apply when none are.
    """
    global _placement
    with _placement_lock:
        if _placement is None:
            _placement = CpuPlacement(5.0 if interval_s is None else interval_s)
        elif interval_s is not None and not _placement.placed_threads():
            _placement.interval_s = interval_s
        return _placement
