"""The shared revisit schedule's claims, merges and clock (``FRONTIER_URL`` with
``REVISIT_ENABLED``; crawlfw/core/frontier/redis_revisit.py), on a real redis-server:
a page whose revisit is out is not claimed again by another worker, a claim not
confirmed (the worker died before pushing) expires after the lease, an older visit's
outcome never overwrites a newer one, concurrent outcomes merge, and due times are the
server's clock."""

import types

import pytest

from crawlfw.core.frontier.revisit import RevisitConfig, failed_visit
from tests.core.test_revisit import SPIDER, fp, visit

pytestmark = pytest.mark.slow

CONFIG = RevisitConfig(enabled=True, interval_s=10.0, min_s=2.0, max_s=100.0,
                       adaptive=True, gone_limit=2)
LEASE_S = 5.0


def schedule_on(url, cls=None):
    """A worker's RedisRevisitSchedule on the Redis at ``url`` (what it uses of a
    RedisFrontier: client, scripts, key prefix, retry settings, lease timeout)."""
    import redis

    from crawlfw.core.frontier.redis_link import RedisLink, Scripts
    from crawlfw.core.frontier.redis_revisit import RedisRevisitSchedule

    client = redis.Redis.from_url(url)
    frontier = types.SimpleNamespace(
        client=client, scripts=Scripts(client, {}), _k=lambda name: f"{{t}}:{name}",
        url=url, retry_timeout_s=5.0, stats=None, link=RedisLink(),
        lease_timeout_s=LEASE_S)
    return (cls or RedisRevisitSchedule)(frontier, CONFIG, SPIDER)


def answer_of(schedule, record, outcome="unchanged", digest="d0"):
    """The visit of ``record``'s revisit request (its claim in its state)."""
    request = schedule.request_of(record)
    got = visit(request.url, outcome, digest=digest)
    got["claim"] = request.meta["_revisit"][4]
    got["request"] = request
    return got


def test_a_page_out_is_not_claimed_again_past_its_interval(redis_server):
    """Worker one claims and pushes a page; its revisit waits in a backlog past the
    page's interval: worker two does not claim it (before, the claim had only moved
    the due time one interval on, and a second revisit of the page was queued); the
    visit's outcome ends the claim and sets the next due time."""
    one, two = schedule_on(redis_server.url), schedule_on(redis_server.url)
    one.visited(visit("http://a/1"), 0.0)
    [record] = one.take_due(10.0, 10)
    assert record.claim == 1
    one.pushed([record])
    assert one.in_flight() == 1
    for now in (25.0, 50.0, 100.0):  # two, three, nine intervals; lease long gone
        assert two.take_due(now, 10) == [] and two.still_queued <= 1
    assert two.visited(answer_of(one, record), 100.5) == "unchanged"
    assert one.in_flight() == 0
    again = two.get(fp("http://a/1"))
    assert (again.interval, again.due) == (14.0, 114.5)
    [taken] = two.take_due(114.5, 10)
    assert taken.claim == 2


def test_a_claim_not_confirmed_expires_after_the_lease(redis_server):
    """A worker killed between its claim and its push: the page is claimed again once
    the lease (``FRONTIER_LEASE_TIMEOUT``) has passed, by a later claim; nothing lost."""
    one, two = schedule_on(redis_server.url), schedule_on(redis_server.url)
    for i in range(3):
        one.visited(visit(f"http://a/{i}"), 0.0)
    assert len(one.take_due(10.0, 10)) == 3  # ... and dies
    assert two.take_due(10.0 + LEASE_S - 0.1, 10) == []
    assert two.still_queued == 0  # not due yet: their score is the claim's end
    taken = two.take_due(10.0 + LEASE_S, 10)
    assert sorted(r.fp for r in taken) == sorted(fp(f"http://a/{i}") for i in range(3))
    assert {r.claim for r in taken} == {2}


def test_a_confirmed_claim_ends_at_most_after_the_longest_interval(redis_server):
    """A revisit never answered (lost past what the frontier brings back) does not
    keep its page off the schedule for ever: its claim ends after
    ``max(interval, REVISIT_INTERVAL_MAX)``."""
    one, two = schedule_on(redis_server.url), schedule_on(redis_server.url)
    one.visited(visit("http://a/1"), 0.0)
    [record] = one.take_due(10.0, 10)
    now = one.clock()
    one.pushed([record])  # held from the worker's clock: now
    assert two.take_due(now + 99.0, 10) == []
    [again] = two.take_due(now + 101.0, 10)
    assert again.claim == 2


def test_an_older_visits_outcome_does_not_overwrite_a_newer_one(redis_server):
    """Two revisits of one page out at once (the first claim's worker was slow, not
    dead: its claim expired and another took the page): the newer visit's outcome is
    applied first; the older one's, arriving late, is stale. Before, the last write
    won: the record went back to the older digest (the page then looked changed at the
    next visit: an item twice) and the interval was adapted twice."""
    one, two = schedule_on(redis_server.url), schedule_on(redis_server.url)
    one.visited(visit("http://a/1"), 0.0)
    [first] = one.take_due(10.0, 10)
    [second] = two.take_due(10.0 + LEASE_S, 10)
    assert (first.claim, second.claim) == (1, 2)
    assert two.visited(answer_of(two, second, "changed", "d2"), 16.0) == "changed"
    assert one.visited(answer_of(one, first, "changed", "d1"), 17.0) == "stale"
    record = two.get(fp("http://a/1"))
    assert (record.digest, record.interval, record.due) == ("d2", 8.0, 24.0)
    # the same outcome told twice (a lease redone) is applied once
    assert two.visited(answer_of(two, second, "changed", "d2"), 18.0) == "stale"
    assert two.get(fp("http://a/1")).interval == 8.0
    assert two.in_flight() == 0


def test_a_page_moved_by_a_redirect_takes_outcomes_under_its_own_claims(redis_server):
    """A redirect moves the record to the new URL: the new record's claims count from
    one, and their outcomes are applied (the old record's claim number, carried over,
    made every later outcome stale)."""
    one = schedule_on(redis_server.url)
    one.visited(visit("http://a/old"), 0.0)
    for _ in range(3):  # the old page's claims go up to 3
        [record] = one.take_due(one.get(fp("http://a/old")).due, 10)
        assert one.visited(answer_of(one, record), record.due - LEASE_S) == "unchanged"
    [record] = one.take_due(200.0, 10)
    moved = answer_of(one, record)
    moved.update(visit("http://a/new", "unchanged"), moved_from=record.fp.hex(),
                 claim=record.claim)
    assert one.visited(moved, 201.0) == "unchanged"
    assert one.get(fp("http://a/old")) is None and one.in_flight() == 0
    [again] = one.take_due(300.0, 10)
    assert (again.fp, again.claim) == (fp("http://a/new"), 1)
    assert one.visited(answer_of(one, again, "changed", "d9"), 301.0) == "changed"
    assert one.get(fp("http://a/new")).digest == "d9" and one.in_flight() == 0


def test_a_stale_outcome_does_not_end_a_later_claim(redis_server):
    one, two = schedule_on(redis_server.url), schedule_on(redis_server.url)
    one.visited(visit("http://a/1"), 0.0)
    [first] = one.take_due(10.0, 10)
    [second] = two.take_due(10.0 + LEASE_S, 10)
    two.pushed([second])
    # the first claim's revisit came back failed after the second claim was made
    failed = failed_visit(one.request_of(first))
    assert one.visited(failed, 16.0) == "ignored"  # applied: no outcome newer yet
    assert two.in_flight() == 1  # the second claim is still out
    assert one.take_due(100.0, 10) == []
    failed = failed_visit(two.request_of(second))
    assert two.visited(failed, 17.0) == "ignored"
    assert two.in_flight() == 0
    assert two.get(fp("http://a/1")).due == 27.0  # tried again an interval later


def test_concurrent_outcomes_merge(redis_server):
    """Two workers apply outcomes to one record at the same time: the merge script sees
    the record changed since it was read, and the outcome is computed again from the
    new record (before, both read a gone count of 0 and wrote 1: a page answered 404
    twice was never dropped)."""
    from crawlfw.core.frontier.redis_revisit import RedisRevisitSchedule

    other = schedule_on(redis_server.url)
    done = []

    class Interleaved(RedisRevisitSchedule):
        def get(self, fp_):
            record = super().get(fp_)
            if not done:  # the other worker's outcome lands between read and write
                done.append(other.visited(visit("http://a/1", "gone"), 11.0))
            return record

    one = schedule_on(redis_server.url, Interleaved)
    one.visited(visit("http://a/1"), 0.0)
    done.clear()
    assert one.visited(visit("http://a/1", "gone"), 12.0) == "dropped"  # limit 2
    assert done == ["gone"]
    assert one.get(fp("http://a/1")) is None and len(one) == 0


def test_due_times_are_the_servers_clock(redis_server, monkeypatch):
    """A worker whose clock is an hour fast still reads the schedule in the Redis
    server's time (measured at each look at the earliest due time)."""
    import time

    import redis

    from crawlfw.core.frontier import redis_revisit

    client = redis.Redis.from_url(redis_server.url)
    skewed = types.SimpleNamespace(time=lambda: time.time() + 3600.0)
    monkeypatch.setattr(redis_revisit, "time", skewed)
    schedule = schedule_on(redis_server.url)
    assert schedule.next_due() is None
    sec, usec = client.time()
    assert abs(schedule.clock() - (sec + usec / 1e6)) < 0.2
    schedule.visited(visit("http://a/1"), schedule.clock())
    assert abs(schedule.next_due() - (sec + usec / 1e6 + 10.0)) < 0.5
