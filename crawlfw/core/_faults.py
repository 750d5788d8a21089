"""Fault injection for crash and restart tests: end the process (``os._exit``), or raise,
at a named point.

Set ``CRAWLFW_FAULTS`` to ``name:n[:mode][,name:n[:mode]...]`` before the process
starts; the ``n``-th time the code reaches :func:`hit` with that name:

- no mode: the process ends at once with exit status 75, as a ``kill -9`` would end it
  (no ``finally``, no flush, no ``atexit``);
- ``eio``: ``OSError(EIO)`` is raised there, and at every pass after it (a failing disk);
- ``hold``: :func:`holding` is True from that pass on (a part that stops working
  without failing, e.g. a frontier that hands out no requests);
- ``stop``: the process stops itself there (``SIGSTOP``), at that pass only, and goes
  on when continued (``SIGCONT``): a test can change the world at that exact moment (kill
  the Redis a worker is starting on) and let the process meet it;
- ``raise`` (or ``raise:k``): :class:`InjectedFault` (a ``RuntimeError``) is raised
  there, at that pass and the ``k - 1`` passes after it (``k`` = 1 by default), then the
  point is spent: an actor's handler that raises it dies (``on_failure``), so the
  Supervisor's restarts can be tested in real crawls, also in subprocess CLI runs.

Unset (always, outside these tests), :func:`hit` costs one global lookup and a truth
test.

Points (see ARCHITECTURE.md, "Lose nothing" and "Supervision"):

- ``frontier.after_lease``: requests leased (the lease is in the open transaction);
- ``frontier.lease_none``: (``hold``) the durable frontier leases nothing from the
  file any more, its requests still counted as pending (a stuck crawl);
- ``frontier.in_commit``: acks, pushes and metadata written, ``COMMIT`` not yet run;
- ``frontier.after_commit``: just after a ``COMMIT``;
- ``frontier.in_close``: the frontier closing, its last commit not yet run;
- ``feed.mid_batch``: half of an Exporter's batch written, then half an item's line,
  flushed to the feed file;
- ``feed.before_commit``: the feed flushed for a checkpoint, the frontier not committed;
- ``pipeline.items``: the Pipeline actor has processed half of a ``process_items``
  batch (counted per batch);
- ``exporter.items``: an Exporter actor got an ``export_items`` batch, nothing of it
  written yet (counted per batch).
- ``downloader.fetch``: a Downloader actor got a ``fetch`` (counted per request over
  every downloader of the process), nothing of it queued yet.
- ``downloader.transfers``: a Downloader actor pumps with transfers in flight (counted
  per such pump over every downloader of the process), before it collects what ended:
  a death there loses those transfers mid-way.
- ``supervisor.frontier_opened``: a crawl's start has opened its frontier (a shared
  frontier's claim is done), its feeds' starting points not committed yet.
- ``scheduler.open``: the Scheduler actor starts, its frontier not opened yet (a shared
  frontier's earlier leases not recovered yet).
- ``revisit.claimed``: the Scheduler took due records of the revisit schedule (the
  shared one's claims are made), their revisits not pushed into the frontier yet.
"""

from __future__ import annotations

import errno
import os
import signal
from collections.abc import Callable, Sequence
from typing import IO, Any, Protocol

__all__ = ["hit", "armed", "fatal_next", "holding", "half_written_batch", "InjectedFault",
           "EXIT_STATUS"]

#: The exit status of a process ended by an injected fault.
EXIT_STATUS = 75


class InjectedFault(RuntimeError):
    """Raised at a fault point armed with the ``raise`` mode."""


class _FeedWriterLike(Protocol):
    """What :func:`half_written_batch` uses of a ``core/feeds/feeds.py`` ``FeedWriter``
    (a subsystem above this module)."""

    file: IO[bytes] | None

    def export_item(self, item: Any) -> None: ...


def _parse(spec: str) -> tuple[dict[str, int], dict[str, tuple[str, int]]]:
    points: dict[str, int] = {}
    modes: dict[str, tuple[str, int]] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, _, rest = part.partition(":")
        count, _, mode = rest.partition(":")
        points[name] = int(count or 1)
        mode, _, times = mode.partition(":")
        if mode == "eio":
            modes[name] = ("eio", 0)
        elif mode == "raise":
            modes[name] = ("raise", int(times or 1))
        elif mode == "hold":
            modes[name] = ("hold", 0)
        elif mode == "stop":
            modes[name] = ("stop", 0)
    return points, modes


_POINTS, _MODES = _parse(os.environ.get("CRAWLFW_FAULTS", ""))


def hit(name: str, damage: Callable[..., object] | None = None, *args: Any) -> None:
    """Count one pass through fault point ``name``; on the chosen pass end the process,
    or raise (``eio``: ``OSError``; ``raise``: :class:`InjectedFault`).

    Args:
        name: the fault point.
        damage: called as ``damage(*args)`` just before a pass that ends the process or
            raises: what such a failure leaves behind (e.g. :func:`half_written_batch`).
            Never called when no fault is set.

    Raises:
        OSError: the point is armed with ``eio`` and its pass has come.
        InjectedFault: the point is armed with ``raise`` and its pass has come.
    """
    if _POINTS and name in _POINTS:
        if damage is not None and fatal_next(name):
            damage(*args)
        _POINTS[name] -= 1
        if _POINTS[name] <= 0:
            mode = _MODES.get(name)
            if mode is None:
                os._exit(EXIT_STATUS)
            if mode[0] == "stop":
                if _POINTS[name] == 0:
                    os.kill(os.getpid(), signal.SIGSTOP)
                return
            if mode[0] == "eio":
                raise OSError(errno.EIO, f"injected I/O error at {name}")
            if _POINTS[name] > -mode[1]:
                raise InjectedFault(f"injected fault at {name} (CRAWLFW_FAULTS)")


def fatal_next(name: str) -> bool:
    """True when the next :func:`hit` of ``name`` ends the process or raises."""
    if not _POINTS or name not in _POINTS:
        return False
    left = _POINTS[name]
    mode = _MODES.get(name)
    if mode is not None and mode[0] == "raise":
        return 1 - mode[1] < left <= 1
    if mode is not None and mode[0] == "stop":  # the process goes on
        return False
    return left == 1


def armed(name: str) -> bool:
    """True when ``name`` is a fault point of this process (for points that must prepare
    the damage before calling :func:`hit`, like a half-written feed line)."""
    return bool(_POINTS) and name in _POINTS


def half_written_batch(writer: _FeedWriterLike, items: Sequence[Any]) -> None:
    """The damage of ``feed.mid_batch``: write half of ``items`` to the feed of
    ``writer`` (a :class:`crawlfw.core.feeds.feeds.FeedWriter`), then half an item's line, and
    flush it to the file (a process ended there leaves a torn line)."""
    for item in items[: len(items) // 2]:
        writer.export_item(item)
    assert writer.file is not None, "the feed is open while it takes items"
    writer.file.write(b'{"torn": "half a li')
    writer.file.flush()


def holding(name: str) -> bool:
    """Count one pass through the ``hold`` point ``name``; True from its chosen pass on
    (False, at the cost of one truth test, when no fault is set)."""
    if not _POINTS or name not in _POINTS:
        return False
    _POINTS[name] -= 1
    return _POINTS[name] <= 0
