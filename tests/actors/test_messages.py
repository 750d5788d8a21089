"""Message schemas: every TypedDict has a schema with the same keys; malformed messages
are rejected with an error naming the type, the key and the rule; live actors survive."""

import json
import logging
import subprocess
import sys
import typing
from pathlib import Path

import pykka
import pytest

import crawlfw
import crawlfw.http
from crawlfw.actors import _schema, messages
from crawlfw.actors._base import CrawlActor
from crawlfw.actors._schema import render_schemas
from crawlfw.actors._validation import (
    _compile,
    _validator_class,
    register_schema,
    schema_path,
    validate_message,
)
from crawlfw.actors.supervisor import Supervisor
from crawlfw.crawler import Crawler
from crawlfw.exceptions import DontCloseSpider, InvalidMessage

SCHEMAS = json.loads(schema_path().read_text())["$defs"]


def test_shipped_schema_is_the_generated_one():
    # conf/schemas/messages.json is generated from crawlfw/actors/messages/; after editing
    # a message type run: python -m crawlfw.actors._schema --write
    assert schema_path().read_text(encoding="utf-8") == render_schemas()


@pytest.mark.parametrize("type_name", sorted(messages.MESSAGE_TYPES))
def test_typeddict_and_schema_agree(type_name):
    cls = messages.MESSAGE_TYPES[type_name]
    schema = SCHEMAS[type_name]
    assert list(cls.__annotations__) == list(schema["properties"])
    assert set(schema["required"]) == set(cls.__required_keys__)
    assert schema["additionalProperties"] is False
    assert schema["description"]
    assert all(p.get("description") for name, p in schema["properties"].items() if name != "type")


def test_every_schema_has_a_typeddict():
    assert set(SCHEMAS) == set(messages.MESSAGE_TYPES)


def _loose(tp):
    """True for an annotation that says nothing: Any, or a bare list or dict."""
    tp = typing.get_args(tp)[0] if typing.get_origin(tp) in (messages.NotRequired,
                                                            typing.Annotated) else tp
    return tp is typing.Any or tp in (list, dict)


@pytest.mark.parametrize("type_name", sorted(messages.MESSAGE_TYPES))
def test_message_fields_have_real_types(type_name):
    cls = messages.MESSAGE_TYPES[type_name]
    assert [name for name, tp in cls.__annotations__.items() if _loose(tp)] == []


@pytest.mark.parametrize(
    "annotation, schema",
    [
        (int, {"type": "integer"}),
        (typing.Annotated[int, messages.Rule(minimum=1)], {"type": "integer", "minimum": 1}),
        (typing.Literal["a"], {"const": "a"}),
        (typing.Literal["a", "b"], {"enum": ["a", "b"]}),
        (str | None, {"type": ["string", "null"]}),
        (dict | None, {"type": ["object", "null"]}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (dict[str, list[str]], {"type": "object",
                                "additionalProperties": {"type": "array",
                                                         "items": {"type": "string"}}}),
        (crawlfw.Request, {"pyclass": "crawlfw.http.Request"}),
        (crawlfw.http.Response | None, {"anyOf": [{"type": "null"},
                                                  {"pyclass": "crawlfw.http.Response"}]}),
        (messages.Item, {"pyclass": "crawlfw.item.AnyItem"}),
        (pykka.ActorRef, {"pyclass": "pykka.ActorRef"}),
        (typing.ForwardRef("crawlfw.crawler.Crawler"), {"pyclass": "crawlfw.crawler.Crawler"}),
    ],
)
def test_annotation_to_schema(annotation, schema):
    assert _schema._schema_of(annotation) == schema


def test_generator_refuses_an_undocumented_field():
    class Undocumented(messages.TypedDict):
        """A test message."""

        type: typing.Literal["undocumented"]
        count: int

    with pytest.raises(TypeError, match="Undocumented.count has no docstring"):
        _schema.schema_of_typeddict(Undocumented)


class IdleSpider(crawlfw.Spider):
    """Stays open (no request, DontCloseSpider when idle) until told to stop."""

    name = "idle"
    start_urls = []

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.keep_open, crawlfw.signals.spider_idle)
        return spider

    def keep_open(self, spider):
        raise DontCloseSpider


def _check_reply(message_type, reply):
    replies = json.loads(schema_path().read_text())["replies"][message_type]
    _validator_class()(replies).validate(reply)


def test_replies_match_their_documented_types():
    supervisor = Supervisor.start()
    try:
        crawler = Crawler(IdleSpider, {"LOG_LEVEL": "INFO", "TELNETCONSOLE_ENABLED": False})
        crawler.spider = crawler._create_spider()
        started = supervisor.ask({"type": "start_crawl", "crawler": crawler}, timeout=10)
        _check_reply("start_crawl", started)
        assert set(started) == {"crawl_id", "engine"}
        status = supervisor.ask({"type": "get_status"}, timeout=10)
        _check_reply("get_status", status)
        assert list(status["crawls"]) == [started["crawl_id"]]
        _check_reply("get_status", started["engine"].ask({"type": "get_status"}, timeout=10))
        _check_reply("stop_crawl", supervisor.ask({"type": "stop_crawl", "crawl_id": None},
                                                  timeout=10))  # message_rejected
        stopping = supervisor.ask({"type": "stop_crawl", "crawl_id": None, "reason": "shutdown"},
                                  timeout=10)
        _check_reply("stop_crawl", stopping)
        assert stopping == {"stopping": [started["crawl_id"]]}
        assert crawler.wait(20)
    finally:
        supervisor.stop()


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




_REQUEST_SCHEMA = {"pyclass": "crawlfw.http.Request"}


@pytest.mark.parametrize(
    "schema, instance",
    [
        ({"type": "integer"}, 3),
        ({"type": "integer"}, True),
        ({"type": "integer"}, "3"),
        ({"type": "number", "minimum": 0}, -0.5),
        ({"type": "integer", "minimum": 1, "maximum": 3}, 4),
        ({"type": ["string", "null"], "pattern": "^[a-z]+$"}, None),
        ({"type": ["string", "null"], "pattern": "^[a-z]+$"}, "Abc"),
        ({"type": "string", "minLength": 1, "maxLength": 2}, ""),
        ({"type": "string", "minLength": 1, "maxLength": 2}, "abc"),
        ({"const": "fetch"}, "fetch"),
        ({"const": "fetch"}, "pump"),
        ({"enum": ["a", "b"]}, "c"),
        ({"type": "array", "items": _REQUEST_SCHEMA, "minItems": 1}, []),
        ({"type": "array", "items": _REQUEST_SCHEMA}, [crawlfw.Request("http://x/"), "http://y"]),
        ({"type": "array", "items": _REQUEST_SCHEMA}, (crawlfw.Request("http://x/"),)),
        ({"anyOf": [{"type": "null"}, _REQUEST_SCHEMA]}, None),
        ({"anyOf": [{"type": "null"}, _REQUEST_SCHEMA]}, 0),
        ({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
          "additionalProperties": False}, {"a": 1, "b": 2}),
        ({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
          "additionalProperties": False}, {}),
        ({"type": "object", "additionalProperties": {"type": ["object", "null"]}},
         {"feed": None, "other": []}),
        ({"type": "object", "properties": {"a": {"type": "integer", "description": "A."}}},
         {"a": 1}),
    ],
)
def test_fast_check_agrees_with_jsonschema(schema, instance):
    fast = _compile(schema)
    assert fast is not None
    assert fast(instance) == _validator_class()(schema).is_valid(instance)


@pytest.mark.parametrize("schema", [
    {"type": "array", "uniqueItems": True},
    {"const": 1},
    {"type": "object", "patternProperties": {"^x": {}}, "additionalProperties": False},
    {"type": "array", "prefixItems": [{}], "items": {"type": "integer"}},
    {"type": "object", "properties": {"a": {"not": {}}}},
])
def test_fast_check_steps_aside_for_keywords_it_does_not_know(schema):
    assert _compile(schema) is None


def test_every_shipped_schema_has_a_fast_check():
    assert [name for name, schema in SCHEMAS.items() if _compile(schema) is None] == []


def test_every_shipped_schema_is_a_valid_schema():
    # Checked here, not at run time: a message the fast check accepts never loads jsonschema.
    for schema in SCHEMAS.values():
        _validator_class().check_schema(schema)


@pytest.mark.slow
def test_a_crawl_process_does_not_import_jsonschema_until_a_message_is_refused():
    code = ("import sys, crawlfw.crawler, crawlfw.cmdline\n"
            "from crawlfw.actors import validate_message\n"
            "from crawlfw.http import Request\n"
            "validate_message({'type': 'crawl', 'crawl_id': 'c', 'request': Request('http://a.example/')})\n"
            "print('jsonschema' in sys.modules)\n"
            "try:\n"
            "    validate_message({'type': 'crawl', 'crawl_id': 'c', 'request': 'http://a.example/'})\n"
            "except Exception as e:\n"
            "    print(type(e).__name__, 'jsonschema' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, cwd=str(Path(crawlfw.__file__).parent.parent))
    assert out.stdout.split() == ["False", "InvalidMessage", "True"], out.stderr


class DomainErrorsCounted(messages.TypedDict):
    """User actor -> user actor: errors counted for a domain."""

    type: typing.Literal["domain_errors_counted"]
    domain: typing.Annotated[str, messages.Rule(minLength=1)]
    """The domain (host)."""
    errors: messages.Count
    """Errors seen so far."""
    last_request: messages.NotRequired[crawlfw.Request]
    """The request that failed last."""


def test_register_schema_from_a_typeddict():
    register_schema("domain_errors_counted", DomainErrorsCounted)
    validate_message({"type": "domain_errors_counted", "domain": "example.com", "errors": 2,
                      "last_request": _request()})
    with pytest.raises(InvalidMessage, match="at errors: -1 is less than the minimum of 0"):
        validate_message({"type": "domain_errors_counted", "domain": "example.com",
                          "errors": -1})
    with pytest.raises(InvalidMessage, match="at last_request: builtins.str object is not"):
        validate_message({"type": "domain_errors_counted", "domain": "x", "errors": 0,
                          "last_request": "http://x/"})
    with pytest.raises(ValueError, match="declare type: Literal\\['errors_counted'\\]"):
        register_schema("errors_counted", DomainErrorsCounted)
    with pytest.raises(TypeError, match="is not a TypedDict"):
        register_schema("errors_counted", dict)
