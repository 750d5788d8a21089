"""The shared download slot on a real ``redis-server`` (no actors): the concurrency of a
slot holds across workers, a permit is kept for the worker's next request and given
back when unused, the delay spaces starts across workers, a dead worker's permits
expire."""

import time

import pytest

import crawlfw
from crawlfw.core.redis_slot import HOLD_S, SharedDownloadSlot
from tests.support.wait import wait_for

pytestmark = pytest.mark.slow


@pytest.fixture
def make(redis_server):
    import redis

    made = []

    def make(worker, concurrency=2, delay_s=0.0, permit_timeout_s=30.0):
        slot = SharedDownloadSlot(redis.Redis.from_url(redis_server.url, protocol=2),
                                  redis_server.url, "{t|slot|h}", worker, permit_timeout_s,
                                  5.0, concurrency, delay_s, False)
        made.append(slot)
        return slot

    yield make
    for slot in made:
        slot.close()


def R(n):  # noqa: N802 - a request, briefly
    return crawlfw.Request(f"http://h/{n}")


def urls(requests):
    return [r.url.rsplit("/", 1)[1] for r in requests]


def permits(slot):
    return slot.client.zcard("{t|slot|h}:permits")


def test_concurrency_holds_across_workers_and_permits_are_reused(make):
    a, b = make("a"), make("b")
    now = time.monotonic()
    a.extend([R(1), R(2), R(3)])
    first = a.pop_ready(now)
    assert len(first) == 2 and permits(a) == 2
    b.enqueue(R(4))
    assert b.pop_ready(now) == [] and b.next_ready_in_s(now) > 0  # full: b waits
    a.transfer_done(first[0])
    assert urls(a.pop_ready(now)) == ["3"]  # started on the permit a kept
    assert len(a.inprogress) == 2
    assert permits(a) == 2  # no permit taken or given back meanwhile
    for request in list(a.inprogress):
        a.transfer_done(request)
    assert a.holding and permits(a) == 2  # kept for a while ...
    assert a.pop_ready(time.monotonic() + HOLD_S + 0.01) == []
    assert not a.holding and permits(a) == 0  # ... then given back
    assert urls(b.pop_ready(time.monotonic() + 5)) == ["4"]
    assert permits(b) == 1


def test_delay_spaces_starts_across_workers(make):
    a, b = make("a", delay_s=0.5), make("b", delay_s=0.5)
    now = time.monotonic()
    a.extend([R(1), R(2)])
    b.enqueue(R(3))
    assert len(a.pop_ready(now)) == 1  # one start per delay, whatever the concurrency
    assert b.pop_ready(now) == []
    assert 0.3 < b.next_ready_in_s(now) <= 0.5
    started = wait_for(lambda: b.pop_ready(time.monotonic()), "b's turn after the delay", 30)
    assert len(started) == 1


def test_a_dead_workers_permits_expire(make):
    dead = make("dead", permit_timeout_s=0.3)
    live = make("live")
    dead.extend([R(1), R(2)])
    assert len(dead.pop_ready(time.monotonic())) == 2
    live.enqueue(R(3))
    assert live.pop_ready(time.monotonic()) == []
    # dead never renews: its permits expire and live gets one
    started = wait_for(lambda: live.pop_ready(time.monotonic() + 5),
                       "the dead worker's permits to expire", 30)
    assert len(started) == 1
