"""Pause, resume and stop for every worker of a shared crawl, written in Redis
(crawlfw/core/frontier/redis_control.py) and read with the figures each worker
publishes, on a real ``redis-server`` (no actors): what each worker follows, a standing
pause for a worker joining later, a stop never lost by a worker running when it was
written (however late it reads) and not applied to one that opened after it."""

import pytest

import crawlfw
from crawlfw.core.frontier.redis_control import SharedCommands, control_state, publish_command
from crawlfw.core.frontier.redis_frontier import RedisFrontier
from crawlfw.dupefilters import RFPDupeFilter
from crawlfw.utils.test import get_crawler


class Spider(crawlfw.Spider):
    name = "redis-control-test"


@pytest.fixture
def make(redis_server):
    made = []
    spider = get_crawler(Spider)._create_spider()

    def make(worker, key="{c}"):
        f = RedisFrontier(redis_server.url, key, RFPDupeFilter(), worker=worker,
                          host_limits=lambda: (8, 0.0, False))
        f.open(spider)
        made.append(f)
        return f

    yield make
    for f in made:
        f.client.close()


class Worker:
    """A frontier and what its scheduler follows (SharedCommands), as the scheduler
    does every figures publication."""

    def __init__(self, frontier):
        self.frontier = frontier
        self.commands = SharedCommands(frontier.opened_control)

    def publish(self):
        self.frontier.crawl_figures({"pages": 0, "items": 0})
        return self.commands.follow(self.frontier.control)


def test_control_state_of_an_empty_hash_and_of_bytes():
    assert control_state(None) == {"seq": 0, "pause_seq": 0, "paused": False, "stop_seq": 0,
                                    "stop_reason": "shutdown"}
    assert control_state([b"seq", b"3", b"pause_seq", b"2", b"paused", b"1"])["paused"] is True
    assert control_state({"stop_seq": "x"})["stop_seq"] == 0  # a bad value counts as none


def test_follow_pause_resume_each_once_and_a_standing_pause_for_a_late_reader():
    early = SharedCommands({})
    assert early.follow(control_state(None)) == []
    paused = {"seq": 1, "pause_seq": 1, "paused": True, "stop_seq": 0}
    assert early.follow(paused) == [("pause", "")]
    assert early.follow(paused) == []  # once
    resumed = {"seq": 2, "pause_seq": 2, "paused": False, "stop_seq": 0}
    assert early.follow(resumed) == [("resume", "")]
    assert early.follow(resumed) == []
    late = SharedCommands({})
    assert late.follow(resumed) == []  # a resume is nothing to a worker that never paused
    assert SharedCommands({}).follow(paused) == [("pause", "")]  # a standing pause


def test_a_stop_is_followed_once_unless_it_came_before_the_worker():
    stopped = {"seq": 3, "pause_seq": 3, "paused": False, "stop_seq": 3, "stop_reason": "shutdown"}
    running = SharedCommands({"stop_seq": 0})
    assert running.follow(stopped) == [("stop", "shutdown")]
    assert running.follow({**stopped, "seq": 4, "pause_seq": 4, "paused": True}) == []
    assert SharedCommands({"stop_seq": 3}).follow(stopped) == []  # opened after it


@pytest.mark.slow
def test_every_worker_follows_what_is_written_and_a_late_joiner_the_standing_pause(
        make, redis_server):
    a, b = Worker(make("a")), Worker(make("b"))
    assert a.publish() == [] and b.publish() == []
    assert publish_command(redis_server.url, "{c}", "pause") == 1
    assert a.publish() == [("pause", "")] and b.publish() == [("pause", "")]
    assert a.publish() == []
    c = Worker(make("c"))  # joins while the crawl is paused
    assert c.publish() == [("pause", "")]
    assert publish_command(redis_server.url, "{c}", "resume") == 2
    assert [w.publish() for w in (a, b, c)] == [[("resume", "")]] * 3
    with pytest.raises(ValueError, match="no shared crawl command 'halt'"):
        publish_command(redis_server.url, "{c}", "halt")


@pytest.mark.slow
def test_a_stop_reaches_a_worker_reading_late_but_not_one_opened_after_it(make, redis_server):
    a, slow = Worker(make("a")), Worker(make("slow"))
    a.publish()
    publish_command(redis_server.url, "{c}", "pause")
    publish_command(redis_server.url, "{c}", "stop", "shutdown")
    publish_command(redis_server.url, "{c}", "resume")  # a later command keeps the stop
    assert a.publish() == [("stop", "shutdown")]
    assert slow.publish() == [("stop", "shutdown")]  # its first read, three commands on
    again = Worker(make("again"))  # the crawl started again after the stop: it runs
    assert again.publish() == []
    publish_command(redis_server.url, "{c}", "stop", "shutdown")
    assert again.publish() == [("stop", "shutdown")]


@pytest.mark.slow
def test_nothing_is_written_for_a_crawl_redis_does_not_hold(make, redis_server):
    with pytest.raises(OSError, match="CRAWLFW_LOST"):
        publish_command(redis_server.url, "{none}", "pause")
    a = make("a")
    assert a.client.exists("{none}:control") == 0
    a.client.flushall()
    with pytest.raises(OSError, match="CRAWLFW_LOST"):
        publish_command(redis_server.url, "{c}", "stop")
    assert a.client.keys("*") == []
