"""Request queues the scheduler keeps per priority (Scrapy 1.2's ``scrapy.squeues``).

Memory queues: :class:`FifoMemoryQueue` (breadth-first within a priority) and
:class:`LifoMemoryQueue` (depth-first; Scrapy's default ``SCHEDULER_MEMORY_QUEUE``).
Each has ``push(obj)``, ``pop() -> obj | None``, ``__len__`` and ``close()``.
"""

from collections import deque

__all__ = ["FifoMemoryQueue", "LifoMemoryQueue"]


class FifoMemoryQueue:
    """First in, first out queue held in memory."""

    __slots__ = ("_q",)

    def __init__(self, *args):
        self._q = deque()

    def push(self, obj) -> None:
        self._q.append(obj)

    def pop(self):
        """Remove and return the oldest object, or None when empty."""
        return self._q.popleft() if self._q else None

    def close(self) -> None:
        self._q.clear()

    def __len__(self) -> int:
        return len(self._q)


class LifoMemoryQueue(FifoMemoryQueue):
    """Last in, first out queue held in memory."""

    __slots__ = ()

    def pop(self):
        """Remove and return the newest object, or None when empty."""
        return self._q.pop() if self._q else None
