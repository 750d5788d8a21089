"""Every ``handle_<type>`` of crawlfw's actors takes the TypedDict of ``<type>`` from
crawlfw.actors.messages (what mypy checks the handler's body against, .ci/run)."""

import typing

import pytest

from crawlfw.actors import (
    _base,
    _user,
    downloader,
    engine,
    exporter,
    messages,
    pipeline,
    scheduler,
    spider_runner,
    supervisor,
)

ACTORS = [
    _base.CrawlActor, _user.UserActor, exporter.ExporterActor, pipeline.PipelineActor,
    spider_runner.SpiderRunnerActor, supervisor.Supervisor,
    engine.EngineActor, scheduler.SchedulerActor, downloader.DownloaderActor,
]

#: Actors whose handlers are not typed yet: none (issue 19). It must stay empty: an actor
#: whose handler loses its type fails test_untyped_yet_is_up_to_date (and its own case).
UNTYPED_YET: set[str] = set()


def _handlers(cls):
    """``(message type, method)`` for the handlers ``cls`` defines itself."""
    return [(name[len("handle_"):], method) for name, method in vars(cls).items()
            if name.startswith("handle_") and callable(method)]


def _untyped(cls) -> list[str]:
    wrong = []
    for type_name, method in _handlers(cls):
        hints = typing.get_type_hints(method)
        if hints.get("message") is not messages.MESSAGE_TYPES.get(type_name):
            wrong.append(f"{cls.__name__}.handle_{type_name}: {hints.get('message')!r}")
    return wrong


@pytest.mark.parametrize("cls", [c for c in ACTORS if c.__name__ not in UNTYPED_YET],
                         ids=lambda c: c.__name__)
def test_handlers_take_their_message_type(cls):
    assert _untyped(cls) == []


def test_untyped_yet_is_up_to_date():
    assert {c.__name__ for c in ACTORS if _untyped(c)} == UNTYPED_YET


def test_every_handled_type_is_a_message_type():
    assert [f"{c.__name__}.handle_{t}" for c in ACTORS for t, _ in _handlers(c)
            if t not in messages.MESSAGE_TYPES] == []
