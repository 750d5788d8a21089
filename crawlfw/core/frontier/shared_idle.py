"""When a worker of a shared crawl (``FRONTIER_URL``) answers the Engine's idle check.

The Engine's ``check_idle`` reaches the Scheduler actor, which holds it back while the
whole crawl (every worker) may still have work: this module decides, without a clock
or an actor (times are ``now_s`` arguments, seconds of a monotonic clock), when to
ask Redis, when to checkpoint at once and when to answer with what pending count.
The :class:`~crawlfw.actors.scheduler.SchedulerActor` calls it and does what it says.
"""

from typing import Any

#: Hold the check: ask again at the next ``frontier_tick``.
IDLE_HOLD = "hold"
#: Start a checkpoint now (this worker's done leases are what every worker waits
#: for); ask again when it is reached.
IDLE_CHECKPOINT = "checkpoint"
#: Answer the held check with the pending count.
IDLE_ANSWER = "answer"


class SharedIdlePolicy:
    """The held idle check's decision for one worker of a shared frontier.

    The crawl is idle only when the shared queue is empty, no worker holds a lease and
    the start requests are all scheduled (and this worker keeps no transient request).
    Redis is asked at most once per ``tick_s`` on a new check (``first``); a busy
    answer waits for the next tick, so an idle worker polls Redis once per tick.

    Args:
        tick_s (float): seconds between two ``frontier_tick`` messages (also the least
            time between two status calls for new checks and between two checkpoints
            this policy starts).
    """

    __slots__ = ("tick_s", "last_status_s")

    def __init__(self, tick_s: float) -> None:
        self.tick_s = float(tick_s)
        self.last_status_s = float("-inf")  # when Redis was last asked

    def forget_status(self) -> None:
        """Ask Redis at the next check even if it was asked less than ``tick_s`` ago
        (a checkpoint was reached: the status it gave is stale)."""
        self.last_status_s = float("-inf")

    def asks_status(self, now_s: float, first: bool) -> bool:
        """Whether to call the frontier's ``status()`` now.

        Args:
            now_s (float): the monotonic clock, seconds.
            first (bool): True for a new check (or one asked again after a
                checkpoint), False at a ``frontier_tick``.
        Returns:
            bool: False when a new check comes less than ``tick_s`` after the last
            status call (the next tick asks).
        """
        return not first or now_s - self.last_status_s >= self.tick_s

    def decide(self, status: dict[str, Any], now_s: float, *, first: bool, pending_local: int,
               has_unacked: bool, can_checkpoint: bool,
               last_checkpoint_s: float) -> tuple[str, int]:
        """What to do with the held check once Redis gave ``status``.

        Args:
            status (dict): the frontier's ``status()``: ``queued`` and ``leased``
                (int, whole crawl), ``start_exhausted`` (bool).
            now_s (float): the monotonic clock, seconds (the status call's time).
            first (bool): as for :meth:`asks_status`.
            pending_local (int): requests this worker keeps in memory only
                (transient ones), not in Redis.
            has_unacked (bool): this worker holds open leases or acks not committed.
            can_checkpoint (bool): a checkpoint may start (a SpiderRunner is known and
                none is under way).
            last_checkpoint_s (float): when the last checkpoint started (monotonic s).
        Returns:
            tuple: ``(action, pending)``: :data:`IDLE_HOLD`, :data:`IDLE_CHECKPOINT` or
            :data:`IDLE_ANSWER`, and the requests pending in the whole crawl (+1 while
            start requests remain), which an answer carries (0: idle).
        """
        self.last_status_s = now_s
        pending = status["queued"] + status["leased"] + pending_local
        if not status["start_exhausted"]:
            pending += 1
        if (pending and not status["queued"] and has_unacked and can_checkpoint
                and now_s - last_checkpoint_s >= self.tick_s):
            return IDLE_CHECKPOINT, pending  # only leases keep the crawl going
        if pending and first:
            return IDLE_HOLD, pending
        return IDLE_ANSWER, pending
