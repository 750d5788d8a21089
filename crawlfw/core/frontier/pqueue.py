"""A priority queue of per-priority queues (the structure of queuelib's PriorityQueue).

Lower numbers pop first: the scheduler pushes ``-request.priority`` so that higher
``Request.priority`` values are downloaded first. Within one priority the inner queue's
order applies (FIFO or LIFO).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import Any, Protocol

__all__ = ["PriorityQueue"]


class InnerQueue(Protocol):
    """One priority's queue (queuelib's interface): ``push``, ``pop`` (None when
    empty), ``close``, ``len``."""

    def push(self, obj: Any) -> None: ...
    def pop(self) -> Any: ...
    def close(self) -> None: ...
    def __len__(self) -> int: ...


class PriorityQueue:
    """Queues keyed by integer priority, popped lowest priority number first.

    Args:
        qfactory: ``qfactory(priority) -> queue`` creating an inner queue
            (``push``/``pop``/``__len__``/``close``).
        startprios: priorities of queues to recreate at once (for disk queues).
    """

    def __init__(self, qfactory: Callable[[int], InnerQueue],
                 startprios: Iterable[int] = ()) -> None:
        self.qfactory = qfactory
        self.queues: dict[int, InnerQueue] = {}
        self._prios: list[int] = []  # heap of priorities that have a non-empty queue
        self._len = 0
        for p in startprios:
            q = self.queues[p] = qfactory(p)
            if len(q):
                heapq.heappush(self._prios, p)
                self._len += len(q)

    def push(self, obj: Any, priority: int = 0) -> None:
        """Add ``obj`` with ``priority`` (lower pops first)."""
        q = self.queues.get(priority)
        if q is None:
            q = self.queues[priority] = self.qfactory(priority)
        if not len(q):
            heapq.heappush(self._prios, priority)
        q.push(obj)
        self._len += 1

    def pop(self) -> Any:
        """Remove and return the next object, or None when every queue is empty."""
        prios = self._prios
        while prios:
            prio = prios[0]
            q = self.queues[prio]
            obj = q.pop()
            if obj is None:  # an empty queue left in the heap (after close/recovery)
                heapq.heappop(prios)
                continue
            self._len -= 1
            if not len(q):
                heapq.heappop(prios)
            return obj
        return None

    def close(self) -> list[int]:
        """Close every inner queue; return the priorities of the non-empty ones."""
        active = [p for p, q in self.queues.items() if len(q)]
        for q in self.queues.values():
            q.close()
        return active

    def __len__(self) -> int:
        return self._len
