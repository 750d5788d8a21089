"""Fault injection for crash tests: end the process (``os._exit``) at a named point.

Set ``CRAWLFW_FAULTS`` to ``name:n[,name:n...]`` before the process starts: the ``n``-th
time the code reaches :func:`hit` with that name, the process ends at once with exit
status 75, as a ``kill -9`` would end it (no ``finally``, no flush, no ``atexit``).
``name:n:eio`` raises ``OSError(EIO)`` there instead (a failing disk).
Unset (always, outside the crash tests), :func:`hit` costs one global lookup and a
truth test.

Points (see ARCHITECTURE.md, "Lose nothing"):

- ``frontier.after_lease``: requests leased (the lease is in the open transaction);
- ``frontier.in_commit``: acks, pushes and metadata written, ``COMMIT`` not yet run;
- ``frontier.after_commit``: just after a ``COMMIT``;
- ``feed.mid_batch``: half of an item's bytes written and flushed to the feed file;
- ``feed.before_commit``: the feed flushed for a checkpoint, the frontier not committed.
"""

import errno
import os

__all__ = ["hit", "armed", "fatal_next", "EXIT_STATUS"]

#: The exit status of a process ended by an injected fault.
EXIT_STATUS = 75


def _parse(spec: str):
    points, raising = {}, set()
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, _, rest = part.partition(":")
        count, _, mode = rest.partition(":")
        points[name] = int(count or 1)
        if mode == "eio":
            raising.add(name)
    return points, raising


_POINTS, _RAISING = _parse(os.environ.get("CRAWLFW_FAULTS", ""))


def hit(name: str) -> None:
    """Count one pass through fault point ``name``; end the process on the chosen pass."""
    if _POINTS and name in _POINTS:
        _POINTS[name] -= 1
        if _POINTS[name] <= 0:
            if name in _RAISING:
                raise OSError(errno.EIO, f"injected I/O error at {name}")
            os._exit(EXIT_STATUS)


def fatal_next(name: str) -> bool:
    """True when the next :func:`hit` of ``name`` ends the process."""
    return bool(_POINTS) and _POINTS.get(name, 0) == 1


def armed(name: str) -> bool:
    """True when ``name`` is a fault point of this process (for points that must prepare
    the damage before calling :func:`hit`, like a half-written feed line)."""
    return bool(_POINTS) and name in _POINTS
