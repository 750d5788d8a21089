"""PipelineActor keeps a batch's progress beside itself (``_BatchProgress``), never in
the ``process_items`` message it received; ``replay_of`` builds the replay as a new
message (ARCHITECTURE.md, "Supervision")."""

import pytest

from crawlfw.actors.pipeline import PipelineActor
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
