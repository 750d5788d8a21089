"""A checkpoint reaches every Exporter from the Pipeline itself, behind the items the
Pipeline sent that Exporter before it, and the Scheduler commits once every Exporter
answered (issue 34: with two feeds, a chain Exporter -> Exporter let the second commit a
length past the acked leases, and a resumed JOBDIR job wrote items twice in it)."""

from crawlfw.actors.pipeline import PipelineActor
from crawlfw.actors.scheduler import SchedulerActor
from crawlfw.core.frontier.scheduler import Scheduler
from crawlfw.utils.test import get_crawler
from tests.actors.test_pipeline_replay import Pipelines, Sink, _Scheduler


def test_the_pipeline_sends_each_exporter_its_own_copy_behind_its_items():
    ref = _Scheduler.start([])
    try:
        _fan_out(ref)
    finally:
        ref.stop()


def _fan_out(scheduler):
    crawler = get_crawler()
    crawler.spider = crawler._create_spider("parts")
    first, second, engine = Sink(), Sink(), Sink()
    actor = PipelineActor(crawler, engine, [first, second], itemproc=Pipelines())
    checkpoint = {"type": "checkpoint", "epoch": 3, "reply_to": scheduler, "leases": [7],
                  "spider_state": None, "feeds": {}}
    actor.handle_process_items({"type": "process_items", "items": [{"n": 1}], "response": None})
    actor.handle_checkpoint(checkpoint)
    actor.handle_process_items({"type": "process_items", "items": [{"n": 2}], "response": None})
    for exporter in (first, second):
        assert [m["type"] for m in exporter.told] == ["export_items", "checkpoint",
                                                      "export_items"]
        copy = exporter.told[1]
        assert copy == {**checkpoint, "next": [], "parts": 2}
    # copies: what one Exporter adds is not in the other's
    assert first.told[1]["feeds"] is not second.told[1]["feeds"]
    assert first.told[1]["feeds"] is not checkpoint["feeds"]


class _Frontier:
    durable = True
    shared = False

    def __init__(self):
        self.meta = {"feeds": {"old.jl": {"offset": 1}}}
        self.acked, self.commits = [], []

    def ack(self, leases):
        self.acked.append(list(leases))

    def commit(self, meta):
        self.commits.append(meta)
        self.meta.update(meta)


def _scheduler_actor():
    crawler = get_crawler()
    crawler.spider = crawler._create_spider("parts")
    scheduler = Scheduler.__new__(Scheduler)  # only its frontier is driven here
    scheduler.frontier = frontier = _Frontier()
    return SchedulerActor(crawler, scheduler), frontier


def _reached(feed, state, parts=2, epoch=3):
    return {"type": "checkpoint_reached", "epoch": epoch, "leases": [7, 8],
            "spider_state": None, "feeds": {feed: state}, "parts": parts}


def test_the_scheduler_commits_when_every_exporter_answered():
    actor, frontier = _scheduler_actor()
    actor.checkpoint_pending = True
    actor.handle_checkpoint_reached(_reached("a.jl", {"offset": 10}))
    assert frontier.acked == [] and frontier.commits == []  # one feed is not a checkpoint
    assert actor.checkpoint_pending
    actor.handle_checkpoint_reached(_reached("a.csv", {"offset": 20}))
    assert frontier.acked == [[7, 8]]
    assert frontier.commits == [{"feeds": {"old.jl": {"offset": 1}, "a.jl": {"offset": 10},
                                           "a.csv": {"offset": 20}}}]
    assert not actor.checkpoint_pending


def test_one_exporter_commits_at_once():
    actor, frontier = _scheduler_actor()
    actor.handle_checkpoint_reached(_reached("a.jl", {"offset": 10}, parts=1))
    assert frontier.acked == [[7, 8]]
    reached = _reached("a.jl", {"offset": 11})
    del reached["parts"]  # (a sender that does not say: one part)
    actor.handle_checkpoint_reached(reached)
    assert frontier.acked == [[7, 8], [7, 8]]
