"""The SchedulerActor on a shared (Redis) frontier pushes a burst of ``enqueue_requests``
messages in one round trip, and still schedules every request, fires one signal per
request and pushes everything before any later message is handled."""

import queue
import threading

import pykka
import pytest

import crawlfw
from crawlfw import signals
from crawlfw.actors.scheduler import SchedulerActor
from crawlfw.core.frontier.scheduler import Scheduler
from crawlfw.utils.test import get_crawler

pytestmark = pytest.mark.slow


@pytest.fixture
def crawler(redis_server):
    crawler = get_crawler(settings_dict={"FRONTIER_URL": redis_server.url,
                                         "FRONTIER_KEY": "{coalesce}",
                                         "FRONTIER_MAX_OPEN_LEASES": 0,
                                         # one host: all 121 may be leased at once
                                         "CONCURRENT_REQUESTS_PER_DOMAIN": 1000})
    crawler.spider = crawler._create_spider("s")
    yield crawler
    pykka.ActorRegistry.stop_all(timeout=10)


class Inbox(pykka.ThreadingActor):
    """Puts every message told to it on a queue (a stand-in for the Engine)."""

    def __init__(self, out):
        super().__init__()
        self.out = out

    def on_receive(self, message):
        self.out.put(message)


def _requests(batch, n):
    return [crawlfw.Request(f"http://127.0.0.1/{batch}/{i}") for i in range(n)]


@pytest.mark.parametrize("later", ["proxy", "message"])
def test_a_burst_of_enqueue_messages_is_pushed_in_one_round_trip(crawler, later):
    scheduled = []
    release = threading.Event()

    def on_scheduled(request, spider):
        scheduled.append(request.url)
        release.wait(10)  # the first push holds the actor while the burst queues up

    crawler.signals.connect(on_scheduled, signals.request_scheduled)
    scheduler = Scheduler.from_crawler(crawler)
    pushes = []  # a spy on the real frontier's Redis calls
    call = scheduler.frontier._call
    scheduler.frontier._call = lambda name, args: (
        pushes.append(len(args)) if name == "push" else None, call(name, args))[1]
    actor = SchedulerActor.start(crawler, scheduler)
    actor.tell({"type": "enqueue_requests", "requests": _requests("first", 1)})
    for batch in range(40):
        actor.tell({"type": "enqueue_requests", "requests": _requests(batch, 3)})
    # Queued behind the burst: it sees every request of the burst pushed.
    if later == "proxy":
        frontier = actor.proxy().frontier
        release.set()
        assert frontier.get(timeout=10).queued == 121
    else:
        out = queue.Queue()
        engine = Inbox.start(out)
        actor.tell({"type": "pull_requests", "count": 500, "reply_to": engine})
        release.set()
        dequeued = out.get(timeout=10)
        assert dequeued["type"] == "requests_dequeued" and len(dequeued["requests"]) == 121
    assert sorted(scheduled) == sorted(
        ["http://127.0.0.1/first/0"] + [f"http://127.0.0.1/{b}/{i}" for b in range(40)
                                        for i in range(3)])
    # 41 messages in at most two pushes (the first may go alone, before the others
    # arrive); each push has 7 arguments, then 5 per request (with its host key).
    assert len(pushes) <= 2 and sum((n - 7) // 5 for n in pushes) == 121, pushes
