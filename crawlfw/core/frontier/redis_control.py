"""Pause, resume and stop every worker of a shared crawl at once, through Redis.

The dashboard's whole view of a shared crawl (:mod:`crawlfw.dashboard`) reaches the
workers on this machine over their control endpoints, but not those on other machines
(or without an endpoint). So the command is also written in the crawl's Redis, under
the prefix of :mod:`crawlfw.core.frontier.redis_scripts`::

    <prefix>:control     hash        seq (a counter: one per command), pause_seq and
                                     paused (0/1): the last pause or resume, stop_seq
                                     and stop_reason: the last stop

Every worker's scheduler reads it with the figures it publishes every
``FIGURES_INTERVAL_S`` (2 s; the ``figures`` script returns it, no round trip of its
own) and follows it (:class:`SharedCommands`):

- **pause / resume** is a standing state: a worker pauses or resumes when ``pause_seq``
  changes, and a worker whose first read finds the crawl paused pauses (one joining
  later honours a standing pause). A worker paused or resumed on its own (its own view,
  ``crawlfw pause``) keeps that state until the next whole-crawl command.
- **stop** is never lost by a worker that was running when it was written: it stays in
  Redis, and a worker stops (with the reason written, ``shutdown``) at its first read of
  a ``stop_seq`` above the one it found when it opened the frontier, however late that
  read comes (a worker stalled for minutes stops when it reads again). A worker opened
  after the stop is not stopped by it (a crawl started again after a stop runs). A stop
  also ends a standing pause (``paused`` 0), so workers started again later run.

Written only while the crawl exists in Redis (its ``created`` mark), as every script
that changes a crawl; the key goes with the crawl's other keys (it matches their
pattern).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["COMMANDS", "SharedCommands", "control_state", "publish_command", "COMMAND_SCRIPT"]

#: The commands a shared crawl takes.
COMMANDS = ("pause", "resume", "stop")

#: Seconds a publication waits for Redis (the dashboard waits for its answer).
PUBLISH_TIMEOUT_S = 5.0

# KEYS: meta, control. ARGV: command (pause|resume|stop), reason (for a stop).
# Returns the command's seq, or an error when the crawl is gone from Redis.
COMMAND_SCRIPT = """
if redis.call('HEXISTS', KEYS[1], 'created') == 0 then
  return redis.error_reply('CRAWLFW_LOST its mark (' .. KEYS[1] .. ' created) is gone')
end
local seq = redis.call('HINCRBY', KEYS[2], 'seq', 1)
if ARGV[1] == 'stop' then
  redis.call('HSET', KEYS[2], 'stop_seq', seq, 'stop_reason', ARGV[2], 'pause_seq', seq,
             'paused', '0')
else
  redis.call('HSET', KEYS[2], 'pause_seq', seq, 'paused', ARGV[1] == 'pause' and '1' or '0')
end
return seq
"""


def control_state(flat: Sequence[Any] | Mapping[Any, Any] | None) -> dict[str, Any]:
    """The ``control`` hash as read (an ``HGETALL`` reply: a flat list or a mapping,
    bytes or str) as ``{'seq': int, 'pause_seq': int, 'paused': bool, 'stop_seq': int,
    'stop_reason': str}`` (zeros and ``''`` for an empty hash: no command yet)."""
    if flat is None:
        flat = []
    items = flat.items() if isinstance(flat, Mapping) else zip(flat[::2], flat[1::2], strict=False)
    raw = {(k.decode() if isinstance(k, bytes) else str(k)):
           (v.decode() if isinstance(v, bytes) else str(v)) for k, v in items}

    def number(name: str) -> int:
        try:
            return int(raw.get(name) or 0)
        except ValueError:
            return 0

    return {"seq": number("seq"), "pause_seq": number("pause_seq"),
            "paused": raw.get("paused") == "1", "stop_seq": number("stop_seq"),
            "stop_reason": raw.get("stop_reason") or "shutdown"}


def publish_command(url: str, key: str, command: str, reason: str = "shutdown",
                    *, client: Any = None) -> int:
    """Write ``command`` for every worker of the shared crawl ``key`` on the Redis at
    ``url`` (one script call, with its own short-lived connection: callable from any
    thread, whatever the frontier's own thread is doing).

    Args:
        url: the crawl's ``FRONTIER_URL``.
        key: its prefix (``{crawlfw:<spider name>}``, ``FRONTIER_KEY``).
        command: ``pause``, ``resume`` or ``stop``.
        reason: a stop's ``finish_reason`` on every worker.
        client: a ``redis.Redis`` to use (None: one made and closed here).

    Returns:
        int: the command's sequence number in the crawl.

    Raises:
        ValueError: ``command`` is none of :data:`COMMANDS`.
        OSError: Redis could not be reached or answered an error (the crawl is gone
            from it: ``CRAWLFW_LOST``), within :data:`PUBLISH_TIMEOUT_S`.
    """
    if command not in COMMANDS:
        raise ValueError(f"no shared crawl command {command!r} (one of {', '.join(COMMANDS)})")
    import redis

    own = client is None
    if own:
        client = redis.Redis.from_url(url, socket_timeout=PUBLISH_TIMEOUT_S,
                                      socket_connect_timeout=PUBLISH_TIMEOUT_S, protocol=2)
    try:
        return int(client.eval(COMMAND_SCRIPT, 2, f"{key}:meta", f"{key}:control", command,
                               reason))
    except redis.RedisError as e:
        raise OSError(f"{type(e).__name__}: {e}") from None
    finally:
        if own:
            client.close()


class SharedCommands:
    """What one worker does about the ``control`` hash, read again and again.

    Args:
        opened: the hash's state when this worker opened the frontier
            (:func:`control_state`): stops up to its ``stop_seq`` were for workers
            before this one.
    """

    def __init__(self, opened: Mapping[str, Any]) -> None:
        self.stop_after = int(opened.get("stop_seq", 0))
        self.pause_seq: int | None = None  # the pause_seq followed (None: none read yet)
        self.stopped = False

    def follow(self, state: Mapping[str, Any]) -> list[tuple[str, str]]:
        """The commands to carry out for ``state`` (the hash read now), in order:
        ``[("stop", reason)]``, ``[("pause", "")]``, ``[("resume", "")]`` or ``[]``;
        each once."""
        if self.stopped:
            return []
        if int(state.get("stop_seq", 0)) > self.stop_after:
            self.stopped = True
            return [("stop", str(state.get("stop_reason") or "shutdown"))]
        seq, before = int(state.get("pause_seq", 0)), self.pause_seq
        self.pause_seq = seq
        if before is None:  # a standing pause is honoured; a resume is nothing to a new worker
            return [("pause", "")] if state.get("paused") else []
        if seq != before:
            return [("pause", "")] if state.get("paused") else [("resume", "")]
        return []
