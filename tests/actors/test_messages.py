"""Message schemas: every TypedDict has a schema with the same keys; malformed messages
are rejected with an error naming the type, the key and the rule; live actors survive."""

import json
import logging
import typing

import pytest

import crawlfw
from crawlfw.actors import messages
from crawlfw.actors._base import CrawlActor
from crawlfw.actors._validation import register_schema, schema_path, validate_message
from crawlfw.actors.supervisor import Supervisor
from crawlfw.exceptions import InvalidMessage

SCHEMAS = json.loads(schema_path().read_text())["$defs"]


@pytest.mark.parametrize("type_name", sorted(messages.MESSAGE_TYPES))
def test_typeddict_and_schema_agree(type_name):
    cls = messages.MESSAGE_TYPES[type_name]
    schema = SCHEMAS[type_name]
    assert set(typing.get_type_hints(cls)) == set(schema["properties"])
    assert set(schema["required"]) == set(cls.__required_keys__)
    assert schema["additionalProperties"] is False


def test_every_schema_has_a_typeddict():
    assert set(SCHEMAS) == set(messages.MESSAGE_TYPES)


@pytest.fixture
def ref():
    r = CrawlActor.start()
    yield r
    r.stop()


def _request():
    return crawlfw.Request("http://127.0.0.1/")


@pytest.mark.parametrize(
    "message, error",
    [
        ("not a dict", "a message must be a dict, got str"),
        ({"no": "type"}, "a message needs a string 'type' key"),
        ({"type": "no_such_thing"}, "unknown message type 'no_such_thing'"),
        ({"type": "pull_requests", "count": 0, "reply_to": None},
         "invalid 'pull_requests' message at"),
        ({"type": "enqueue_requests", "requests": ["http://x"]},
         "invalid 'enqueue_requests' message at requests/0: builtins.str object is not an "
         "instance of crawlfw.http.Request"),
        ({"type": "close_spider"}, "invalid 'close_spider' message at (message): 'reason' is a "
         "required property"),
        ({"type": "close_spider", "reason": "x", "extra": 1},
         "invalid 'close_spider' message at (message): Additional properties are not allowed "
         "('extra' was unexpected)"),
        ({"type": "items_processed", "count": -1},
         "invalid 'items_processed' message at count: -1 is less than the minimum of 0"),
    ],
)
def test_malformed_messages_rejected_with_clear_error(message, error):
    with pytest.raises(InvalidMessage) as excinfo:
        validate_message(message)
    assert error in str(excinfo.value)


def test_well_formed_message_passes(ref):
    validate_message({"type": "enqueue_requests", "requests": [_request()]})
    validate_message({"type": "pull_requests", "count": 3, "reply_to": ref})


def test_supervisor_rejects_malformed_ask_and_lives_on(caplog):
    supervisor = Supervisor.start()
    try:
        reply = supervisor.ask({"type": "stop_crawl", "crawl_id": None}, timeout=10)
        assert reply["type"] == "message_rejected"
        assert "'reason' is a required property" in reply["error"]
        assert supervisor.ask({"type": "get_status"}, timeout=10) == {"crawls": {}}
    finally:
        supervisor.stop()


def test_actor_survives_a_told_malformed_message(caplog):
    caplog.set_level(logging.ERROR)
    supervisor = Supervisor.start()
    try:
        supervisor.tell({"type": "spider_closing", "crawl_id": 1, "reason": "x"})
        assert supervisor.ask({"type": "get_status"}, timeout=10) == {"crawls": {}}
        assert "rejected a message: invalid 'spider_closing' message at crawl_id" in caplog.text
    finally:
        supervisor.stop()


def test_sending_invalid_message_raises_in_sender(ref):
    actor = ref.proxy()
    with pytest.raises(InvalidMessage):
        actor.send(ref, {"type": "fetch", "request": "http://x", "reply_to": ref}).get(timeout=10)
    assert ref.is_alive()


def test_register_schema_for_user_actor_messages():
    register_schema("ping_user_actor", {
        "type": "object",
        "properties": {"type": {"const": "ping_user_actor"}, "n": {"type": "integer"}},
        "required": ["type", "n"],
    })
    validate_message({"type": "ping_user_actor", "n": 1})
    with pytest.raises(InvalidMessage, match="'n' is a required property"):
        validate_message({"type": "ping_user_actor"})
    with pytest.raises(ValueError, match="crawlfw's own"):
        register_schema("fetch", {"type": "object"})


