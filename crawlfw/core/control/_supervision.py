"""Plain parts of supervision (no threads): child specs and restart intensity.

A crawl's tree is started from a table of :class:`ChildSpec` (``CHILD_SPECS`` in
:mod:`crawlfw.actors._tree`), walked in order by :mod:`crawlfw.actors.supervisor`, as an
OTP supervisor starts its children from their child specs.

Erlang/OTP's supervisor is the model (``supervisor`` manual, "Restart intensity and
period"): a supervisor allows at most ``max_restarts`` restarts of its children within
``window_s`` seconds; one more and it gives up. crawlfw's Supervisor keeps one
:class:`RestartIntensity` per crawl (a crawl's tree is one supervisor in OTP's terms, so
one crawl's troubles never end another) and waits, between restarts, an exponentially
growing backoff.
"""

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["ChildSpec", "RestartIntensity", "PERMANENT", "TEMPORARY"]

#: Restart policy: the child is restarted when it dies (within the intensity).
PERMANENT = "permanent"
#: Restart policy: a child that dies is not restarted; the crawl is closed
#: with ``<role>_failed``.
TEMPORARY = "temporary"


@dataclass(frozen=True)
class ChildSpec:
    """One entry of a supervisor's table of children: how it starts, restarts and stops
    them (OTP's ``child_spec``: id, start, restart, shutdown; the ``supervisor`` manual,
    "Child specification").

    An entry may stand for several children of one kind (the downloaders, one exporter
    per feed, the user actors), as an OTP ``simple_one_for_one`` template does:
    ``children`` names them, each by ``(role, key)``.

    Attributes:
        id: the entry's name and its children's role (``engine``, ``downloader``...;
            the crawl's ``finish_reason`` is ``<role>_failed`` when one dies for good).
            The user actors' entry is ``custom``; each of its children has its class's
            role.
        start: ``start(tree, key) -> ref``: start the child ``key`` (``""`` for an
            entry of one child) of the crawl's tree, record it in the tree where its
            siblings find it, and return its ref (an ``ActorRef``, or the ``ChildRef``
            the new actor attached itself to). A plain named function of the tree,
            called again to restart a ``permanent`` child.
        restart: :data:`PERMANENT` or :data:`TEMPORARY`.
        shutdown_timeout_s: seconds each child gets to drain its inbox and stop; None
            waits as long as it takes (OTP's ``infinity``: the pipeline and exporters,
            which hold items that must reach the feed).
        children: ``children(tree) -> [(role, key), ...]``: the children this entry
            starts, in order; None: one child, ``(id, "")``.
    """

    id: str
    start: Callable[[Any, str], Any]
    restart: str = TEMPORARY
    shutdown_timeout_s: float | None = 60.0
    children: Callable[[Any], Iterable[tuple[str, str]]] | None = None

    def children_of(self, tree: Any) -> list[tuple[str, str]]:
        """The ``(role, key)`` of each child of this entry in ``tree``, in start order."""
        if self.children is None:
            return [(self.id, "")]
        return list(self.children(tree))


class RestartIntensity:
    """At most ``max_restarts`` restarts within ``window_s`` seconds, with backoff.

    Args:
        max_restarts: restarts allowed within the window (0: none).
        window_s: the window, in seconds.
        backoff_s: the delay before the first restart in a window, in seconds; each
            further restart within the window doubles it.
        backoff_max_s: the longest delay, in seconds.

    Raises:
        ValueError: a negative figure.
    """

    def __init__(self, max_restarts: int, window_s: float, backoff_s: float = 0.0,
                 backoff_max_s: float = 30.0) -> None:
        if max_restarts < 0 or window_s < 0 or backoff_s < 0 or backoff_max_s < 0:
            raise ValueError(
                f"restart intensity figures must not be negative: max_restarts={max_restarts}, "
                f"window_s={window_s}, backoff_s={backoff_s}, backoff_max_s={backoff_max_s}")
        self.max_restarts = max_restarts
        self.window_s = window_s
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self._times: deque[float] = deque()  # monotonic seconds of the restarts within the window

    def restart(self, now_s: float) -> float | None:
        """Record a child's death at ``now_s`` (monotonic seconds).

        Returns:
            the delay in seconds to wait before restarting it
            (``backoff_s * 2 ** (restarts already in the window)``, at most
            ``backoff_max_s``), or None when the intensity is exhausted (the restart is
            not recorded: the supervisor gives up).
        """
        times = self._times
        while times and now_s - times[0] > self.window_s:
            times.popleft()
        if len(times) >= self.max_restarts:
            return None
        delay: float = min(self.backoff_max_s, self.backoff_s * (2 ** len(times)))
        times.append(now_s)
        return delay

    @property
    def recent(self) -> int:
        """Restarts recorded within the window at the last :meth:`restart` call."""
        return len(self._times)
