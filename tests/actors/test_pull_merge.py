"""merge_pull_requests (the Engine adds a ``pull_requests`` to the one it holds for the
Scheduler in a burst) must leave the Scheduler where handling each message in turn
leaves it: the credit, the finished transfers per host key, the delay per host key.
Checked on a table of cases (odd keys, zero counts, empty reports, a host reported in
both, a delay set twice) and a seeded random table, against the Scheduler's own rule
(SchedulerActor.handle_pull_requests applied in turn to a recording frontier)."""

import copy
import random

import pytest

from crawlfw.actors.engine import merge_pull_requests
from crawlfw.actors.scheduler import SchedulerActor


class _Frontier:
    """Records what handle_pull_requests tells a per-host frontier."""

    def __init__(self):
        self.finished = {}
        self.delays = {}

    def set_host_delay(self, key, delay_s):
        self.delays[key] = delay_s

    def hosts_finished(self, finished, now):
        for key, n in finished.items():
            self.finished[key] = self.finished.get(key, 0) + n


class _Scheduler:
    """The state handle_pull_requests changes, handled by the real method."""

    handle_pull_requests = SchedulerActor.handle_pull_requests

    def __init__(self):
        self.frontier = _Frontier()
        self.per_host = True
        self.failed = False
        self.credit = 0
        self.reply_to = None
        self.dispatched = 0

    def _dispatch(self):
        self.dispatched += 1

    def state(self):
        return self.credit, self.frontier.finished, self.frontier.delays, self.reply_to


def _pull(count, finished=None, delays=None):
    message = {"type": "pull_requests", "count": count, "reply_to": "engine"}
    if finished is not None:
        message["finished"] = finished
    if delays is not None:
        message["delays"] = delays
    return message


CASES = [
    [_pull(1), _pull(2)],
    [_pull(0, {"a": 1}), _pull(0, {"a": 2})],
    [_pull(3, {"a": 1}), _pull(0, {"b": 1}), _pull(1, {"a": 1, "b": 4})],
    [_pull(1, {}), _pull(1, {"x": 1})],
    [_pull(1, {"x": 1}), _pull(1, {})],
    [_pull(0, None, {"h": 0.5}), _pull(0, None, {"h": 2.0})],
    [_pull(1, None, {"h": 0.5, "g": 1.0}), _pull(1, {"h": 1}, {"g": 0.0})],
    [_pull(2, {"": 1, "ünï.example": 2}), _pull(0, {"": 3}, {"": 9.5})],
    [_pull(1, {"1.2.3.4:80": 1}), _pull(1, {"[::1]:8080": 1}), _pull(1, {"1.2.3.4:80": 1})],
    [_pull(0), _pull(0)],
    [_pull(5)],
]


def _random_cases(n=200):
    rng = random.Random(2020)
    hosts = ["a", "b", "c", "", "x.example:8080"]
    cases = []
    for _ in range(n):
        case = []
        for _ in range(rng.randint(1, 6)):
            finished = ({rng.choice(hosts): rng.randint(1, 4) for _ in range(rng.randint(0, 3))}
                        if rng.random() < 0.7 else None)
            delays = ({rng.choice(hosts): rng.choice([0.0, 0.25, 1.5])
                       for _ in range(rng.randint(0, 2))} if rng.random() < 0.3 else None)
            case.append(_pull(rng.randint(0, 4), finished, delays))
        cases.append(case)
    return cases


@pytest.mark.parametrize("case", CASES + _random_cases(), ids=lambda c: f"{len(c)} pulls")
def test_a_merged_pull_requests_leaves_the_scheduler_where_each_in_turn_does(case):
    one_by_one = _Scheduler()
    for message in copy.deepcopy(case):
        one_by_one.handle_pull_requests(message)
    merged = copy.deepcopy(case)
    into = merged[0]
    for message in merged[1:]:
        merge_pull_requests(into, message)
    at_once = _Scheduler()
    at_once.handle_pull_requests(into)
    assert at_once.state() == one_by_one.state()
    assert into["type"] == "pull_requests" and into["count"] >= 0


@pytest.mark.parametrize("reports", [
    [(13, 1)], [(13, 1), (0, 0)], [(0, 0), (0, 0), (0, 0)], [(5_000_000, 3), (1, 0)],
    *[[(random.Random(seed).randint(0, 10_000), random.Random(seed + 1).randint(0, 5))
       for seed in range(k, k + n)] for k, n in ((1, 2), (10, 7), (40, 24))],
], ids=lambda r: f"{len(r)} responses")
def test_one_merged_response_scraped_counts_as_the_responses_in_turn(reports):
    """The SpiderRunner's merged response_scraped (``responses``, sizes and items
    summed) leaves the Engine's flow counters where one message per response does."""
    from crawlfw.core.flow.flow import FlowControl

    def flow():
        f = FlowControl(16, 5_000_000)
        for size, _ in reports:
            f.sent_to_spider(size)
        return f

    one_by_one, at_once = flow(), flow()
    for size, items in reports:
        one_by_one.scraped(size, items)
    at_once.scraped(sum(s for s, _ in reports), sum(i for _, i in reports), len(reports))
    for f in (one_by_one, at_once):
        assert f.in_spider == 0 and f.in_spider_bytes == 0
    assert ((at_once.in_pipeline, at_once.next_actions())
            == (one_by_one.in_pipeline, one_by_one.next_actions()))
