"""The shared download slot on a real ``redis-server`` (no actors): the concurrency of a
slot holds across workers, a permit is kept for the worker's next request and given
back when unused, the delay spaces starts across workers, a dead worker's permits
expire."""

import time

import pytest

import crawlfw
from crawlfw.core.frontier.redis_slot import HOLD_S, SharedDownloadSlot
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
    assert a.maintain(time.monotonic() + HOLD_S + 0.01) is False  # (the downloader's pump)
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


def paced(n):
    request = R(n)
    request._paced = True  # leased from the shared frontier, which counted and spaced it
    return request


def test_paced_requests_start_without_a_permit_and_pass_a_waiting_one(make):
    a, b = make("a", concurrency=2), make("b", concurrency=2)
    b.extend([R(1), R(2)])
    assert len(b.pop_ready(time.monotonic())) == 2  # b holds both permits of the slot
    a.extend([R("robots"), paced("p1"), paced("p2"), R("media")])
    now = time.monotonic()
    assert urls(a.pop_ready(now)) == ["p1", "p2"]  # no permit for robots: paced pass it
    assert permits(a) == 2 and not a.permits  # (all b's)
    assert urls(a.queue) == ["robots", "media"]  # in their order, waiting for permits
    a.transfer_done(next(iter(a.inprogress)))  # (a paced one: no permit freed)
    assert a.next_ready_in_s(now) > 0  # only unpaced requests wait: Redis said full


def test_maintain_renews_held_permits_and_gives_back_unused_ones(make):
    a = make("a", permit_timeout_s=0.6)
    a.extend([R(1), R(2)])
    (r1, r2) = a.pop_ready(time.monotonic())
    for _ in range(4):  # a long transfer: its permit outlives its first deadline
        time.sleep(0.25)
        assert a.maintain(time.monotonic()) is True
    assert permits(a) == 2
    a.transfer_done(r1)
    a.transfer_done(r2)
    assert a.maintain(time.monotonic() + HOLD_S + 0.01) is False
    assert permits(a) == 0


def test_slots_of_one_thread_share_one_connection_and_a_pump_looks_only_at_due_slots(
        redis_server, monkeypatch):
    from crawlfw.core.frontier.redis_link import RedisLink
    from crawlfw.core.transport.slots import SlotTable
    from crawlfw.settings import Settings

    settings = Settings({"FRONTIER_URL": redis_server.url, "FRONTIER_KEY": "t",
                         "CONCURRENT_REQUESTS_PER_DOMAIN": 2})
    link = RedisLink()
    table = SlotTable(lambda key: SharedDownloadSlot.from_settings(settings, slot=key,
                                                                   link=link))
    now = time.monotonic()
    for i in range(50):
        table.enqueue(f"h{i}", paced(i), now)
    assert len(table.pop_ready(now)) == 50
    slots = list(table.slots.values())
    assert len({id(s.client) for s in slots}) == 1 and len({id(s.scripts) for s in slots}) == 1
    calls = []
    real = SharedDownloadSlot.pop_ready
    monkeypatch.setattr(SharedDownloadSlot, "pop_ready",
                        lambda self, now_s: calls.append(self) or real(self, now_s))
    table.enqueue("h7", paced("again"), now)
    assert urls(r for _, r in table.pop_ready(now)) == ["again"]
    assert calls == [table.slots["h7"]]  # not a scan of the 50 slots
    for slot in slots:
        slot.close()
    link.close_thread()
