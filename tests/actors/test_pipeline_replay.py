"""PipelineActor keeps a batch's progress beside itself (``_BatchProgress``), never in
the ``process_items`` message it received; ``replay_of`` builds the replay as a new
message (ARCHITECTURE.md, "Supervision")."""

import pykka
import pytest

from crawlfw.actors.pipeline import PipelineActor
from crawlfw.http import Request
from crawlfw.pipelines import AwaitingDownloads
from crawlfw.utils.test import get_crawler


class Bug(BaseException):
    """Escapes the pipeline's per-item error handling, as a bug in the actor would."""


class Sink:
    """A ref that records what it is told."""

    def __init__(self):
        self.told = []

    def tell(self, message):
        self.told.append(message)


class Pipelines:
    """An ItemPipelineManager stand-in: doubles ``n``, drops nothing, dies on ``die_on``."""

    def __init__(self, die_on=None):
        self.die_on = die_on

    def process_item(self, item, spider):
        if item["n"] == self.die_on:
            raise Bug
        return {"n": item["n"] * 2}

    def open_spider(self, spider):
        pass

    def close_spider(self, spider):
        pass


def _actor(pipelines, exporter, engine):
    crawler = get_crawler()
    crawler.spider = crawler._create_spider("replay")
    return PipelineActor(crawler, engine, [exporter], itemproc=pipelines)


def _batch():
    return {"type": "process_items", "items": [{"n": i} for i in range(4)], "response": None}


def test_a_death_mid_batch_replays_a_new_message_from_the_item_it_died_on():
    exporter, engine = Sink(), Sink()
    actor = _actor(Pipelines(die_on=2), exporter, engine)
    message = _batch()
    with pytest.raises(Bug):
        actor.handle_process_items(message)
    assert message == _batch()  # the received message is unchanged
    [replay] = actor.replay_of(message)
    assert replay is not message
    assert (replay["processed"], replay["passed"]) == (2, [{"n": 0}, {"n": 2}])
    fresh = _actor(Pipelines(), exporter, engine)
    fresh.handle_process_items(replay)
    assert exporter.told == [{"type": "export_items",
                              "items": [{"n": 0}, {"n": 2}, {"n": 4}, {"n": 6}]}]
    assert engine.told == [{"type": "items_processed", "count": 4}]


def test_a_death_after_the_export_replays_without_exporting_again(monkeypatch):
    exporter, engine = Sink(), Sink()
    actor = _actor(Pipelines(), exporter, engine)
    message = _batch()

    def dies(ref, message):
        raise Bug

    monkeypatch.setattr(engine, "tell", lambda message: dies(engine, message))
    with pytest.raises(Bug):
        actor.handle_process_items(message)
    assert message == _batch() and len(exporter.told) == 1
    [replay] = actor.replay_of(message)
    assert replay == {**message, "exported": True}
    monkeypatch.undo()
    _actor(Pipelines(die_on=0), exporter, engine).handle_process_items(replay)
    assert len(exporter.told) == 1  # not exported twice, no item processed again
    assert engine.told == [{"type": "items_processed", "count": 4}]


class Waiting(Pipelines):
    """Item 1 waits for a download; its resume gives ``{"n": 100 + len(outcomes)}``
    (raising ``Bug`` while ``die_on_resume``)."""

    def __init__(self, die_on_resume=False):
        super().__init__()
        self.die_on_resume = die_on_resume

    def process_item(self, item, spider):
        if item["n"] != 1:
            return super().process_item(item, spider)

        def resume(outcomes):
            if self.die_on_resume:
                raise Bug
            return {"n": 100 + len(outcomes)}

        return AwaitingDownloads([Request("http://media.example/1.jpg")], resume)


class _Scheduler(pykka.ThreadingActor):
    """A real actor ref for the checkpoint's ``reply_to``, recording what it gets."""

    def __init__(self, told):
        super().__init__()
        self.told = told

    def on_receive(self, message):
        self.told.append(message)


def test_an_item_waiting_for_a_download_holds_its_batch_and_the_checkpoint_and_replays():
    exporter, engine = Sink(), Sink()
    ref = _Scheduler.start([])
    try:
        _waiting_item_replay(exporter, engine, ref)
    finally:
        ref.stop()


def _waiting_item_replay(exporter, engine, ref):
    actor = _actor(Waiting(die_on_resume=True), exporter, engine)
    message = _batch()
    actor.handle_process_items(message)
    [download] = [m for m in engine.told if m["type"] == "download"]
    assert download["request"].url == "http://media.example/1.jpg"
    checkpoint = {"type": "checkpoint", "epoch": 1, "reply_to": ref, "leases": [3],
                  "spider_state": None, "feeds": {}}
    actor.handle_checkpoint(checkpoint)
    # items 0, 2 and 3 went through; nothing leaves before item 1 is done
    assert exporter.told == []
    assert [m["type"] for m in engine.told] == ["download"]
    answer = {"type": "download_done", "key": download["key"], "error": ValueError("x")}
    with pytest.raises(Bug):  # the actor dies resuming item 1
        actor.handle_download_done(answer)
    replay, held = actor.replay_of(answer)
    assert held is checkpoint
    assert (replay["processed"], replay["passed"]) == (1, [{"n": 0}])
    assert replay["finished"] == [{"index": 2, "passed": True, "item": {"n": 4}},
                                  {"index": 3, "passed": True, "item": {"n": 6}}]
    # the replacement runs item 1 again (a new download), not items 2 and 3
    fresh_engine = Sink()
    fresh = _actor(Waiting(), exporter, fresh_engine)
    fresh.handle_process_items(replay)
    fresh.handle_checkpoint(held)
    [again] = [m for m in fresh_engine.told if m["type"] == "download"]
    assert again["key"] != download["key"]
    fresh.handle_download_done(answer)  # the predecessor's answer comes late: ignored
    assert exporter.told == []
    fresh.handle_download_done({"type": "download_done", "key": again["key"],
                                "response": object()})
    exported, passed_on = exporter.told
    assert exported == {"type": "export_items",
                        "items": [{"n": 0}, {"n": 101}, {"n": 4}, {"n": 6}]}
    # on to the exporter, after the items (a copy to each exporter: parts)
    assert passed_on == {**checkpoint, "next": [], "parts": 1}
    assert fresh_engine.told[-1] == {"type": "items_processed", "count": 4}
