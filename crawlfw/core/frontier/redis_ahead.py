"""The requests a worker of the shared frontier leased ahead of need (``prefetch``),
served by host readiness (:class:`_Ahead`); split from
:mod:`crawlfw.core.frontier.redis_frontier` (issue 19)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crawlfw.http import Request


class _Ahead:
    """The requests a worker leased ahead of need, served by host readiness rather
    than first in first out: those whose host still had requests queued in Redis when
    they were leased (``hot``: each holds a place of a host other work waits for) go
    before the others, first in first out within each kind. O(1) per request."""

    __slots__ = ("hot", "cold")

    def __init__(self) -> None:
        self.hot: deque[Request] = deque()
        self.cold: deque[Request] = deque()

    def append(self, request: Request, hot: bool) -> None:
        (self.hot if hot else self.cold).append(request)

    def popleft(self) -> Request:
        """The next request to start (raises IndexError when empty)."""
        return self.hot.popleft() if self.hot else self.cold.popleft()

    def clear(self) -> None:
        self.hot.clear()
        self.cold.clear()

    def __len__(self) -> int:
        return len(self.hot) + len(self.cold)

    def __iter__(self) -> Iterator[Request]:
        yield from self.hot
        yield from self.cold
