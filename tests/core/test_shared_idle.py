"""SharedIdlePolicy, the held idle check's decision for a worker of a shared frontier,
driven without Redis, actors or a clock (times are ``now_s`` arguments)."""

import pytest

from crawlfw.core.frontier.shared_idle import (
    IDLE_ANSWER,
    IDLE_CHECKPOINT,
    IDLE_HOLD,
    SharedIdlePolicy,
)

TICK = 0.25  # exact in binary: the boundary rows compare exactly


def status(queued=0, leased=0, start_exhausted=True):
    return {"queued": queued, "leased": leased, "start_exhausted": start_exhausted}


def decide(st, *, first=True, now=10.0, local=0, unacked=False, can_cp=True, last_cp=0.0):
    policy = SharedIdlePolicy(TICK)
    return policy.decide(st, now, first=first, pending_local=local, has_unacked=unacked,
                         can_checkpoint=can_cp, last_checkpoint_s=last_cp)


@pytest.mark.parametrize("st, kw, expected", [
    # The whole crawl is empty: idle, on a new check or at a tick.
    (status(), {}, (IDLE_ANSWER, 0)),
    (status(), {"first": False}, (IDLE_ANSWER, 0)),
    # Queued requests: a new check is held; a tick answers busy with the count.
    (status(queued=3), {}, (IDLE_HOLD, 3)),
    (status(queued=3), {"first": False}, (IDLE_ANSWER, 3)),
    # Start requests remain (another worker may hold them): one more pending.
    (status(start_exhausted=False), {"first": False}, (IDLE_ANSWER, 1)),
    (status(queued=2, start_exhausted=False), {"first": False}, (IDLE_ANSWER, 3)),
    # This worker's transient requests count too.
    (status(), {"first": False, "local": 2}, (IDLE_ANSWER, 2)),
    (status(leased=1), {"first": False, "local": 2}, (IDLE_ANSWER, 3)),
    # Only leases keep the crawl going and this worker has some: checkpoint at once.
    (status(leased=4), {"unacked": True}, (IDLE_CHECKPOINT, 4)),
    (status(leased=4), {"unacked": True, "first": False}, (IDLE_CHECKPOINT, 4)),
    # ... not when it has none (other workers' leases): held / answered busy.
    (status(leased=4), {}, (IDLE_HOLD, 4)),
    (status(leased=4), {"first": False}, (IDLE_ANSWER, 4)),
    # ... not while the queue has requests (leasing goes on).
    (status(queued=1, leased=4), {"unacked": True}, (IDLE_HOLD, 5)),
    # ... not when no checkpoint can start (none known, or one under way).
    (status(leased=4), {"unacked": True, "can_cp": False}, (IDLE_HOLD, 4)),
    # ... not within a tick of the last checkpoint.
    (status(leased=4), {"unacked": True, "last_cp": 10.0 - TICK / 2}, (IDLE_HOLD, 4)),
    (status(leased=4), {"unacked": True, "last_cp": 10.0 - TICK}, (IDLE_CHECKPOINT, 4)),
    # ... nor when nothing is pending (idle: unacked leases are not counted by Redis).
    (status(), {"unacked": True}, (IDLE_ANSWER, 0)),
    # Start requests left but nothing queued: a checkpoint may settle this worker's leases.
    (status(start_exhausted=False), {"unacked": True}, (IDLE_CHECKPOINT, 1)),
])
def test_decide(st, kw, expected):
    assert decide(st, **kw) == expected


def test_status_asked_at_most_once_per_tick_for_new_checks():
    policy = SharedIdlePolicy(TICK)
    assert policy.asks_status(0.0, first=True)  # never asked yet
    policy.decide(status(queued=1), 5.0, first=True, pending_local=0, has_unacked=False,
                  can_checkpoint=False, last_checkpoint_s=0.0)
    assert not policy.asks_status(5.0 + TICK / 2, first=True)
    assert policy.asks_status(5.0 + TICK / 2, first=False)  # a tick always asks
    assert policy.asks_status(5.0 + TICK, first=True)
    policy.forget_status()  # a checkpoint was reached: ask again now
    assert policy.asks_status(5.0 + TICK / 2, first=True)
