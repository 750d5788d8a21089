"""JSON Schema checks of actor messages (schemas in ``conf/schemas/messages.json``).

Messages carry Python objects (requests, responses, items, actor refs); the schema keyword
``pyclass`` (a dotted class path, or a list of them) requires an instance of one of those
classes. Everything else is standard JSON Schema (draft 2020-12) checked by ``jsonschema``.
"""

import importlib
import json
import os
import threading
from functools import cache, lru_cache
from pathlib import Path

import jsonschema
from jsonschema import validators

from crawlfw.exceptions import InvalidMessage

__all__ = ["validate_message", "register_schema", "schema_path", "validation_mode"]

_MODES = ("off", "boundary", "all")
_lock = threading.Lock()
_extra_schemas: dict[str, dict] = {}


def schema_path() -> Path:
    """Path of ``messages.json``: inside the installed package, else the source tree's conf/."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "conf" / "schemas", here.parent / "conf" / "schemas"):
        path = candidate / "messages.json"
        if path.is_file():
            return path
    raise FileNotFoundError(f"conf/schemas/messages.json not found near {here}")


def validation_mode(settings=None) -> str:
    """Where messages are checked: ``'off'``, ``'boundary'`` or ``'all'``.

    The environment variable ``CRAWLFW_VALIDATE_MESSAGES`` wins over the
    ``MESSAGE_VALIDATION`` setting (default ``'boundary'``).

    Raises:
        ValueError: the value is none of the three modes (naming the value and its source).
    """
    env = os.environ.get("CRAWLFW_VALIDATE_MESSAGES")
    if env:
        mode, source = env, "CRAWLFW_VALIDATE_MESSAGES"
    else:
        mode = settings.get("MESSAGE_VALIDATION", "boundary") if settings is not None else "boundary"
        source = "MESSAGE_VALIDATION"
    if mode not in _MODES:
        raise ValueError(f"{source} must be one of {', '.join(_MODES)}; got {mode!r}")
    return mode


@cache
def _load_class(path: str) -> type:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _pyclass(validator, value, instance, schema):
    paths = [value] if isinstance(value, str) else value
    classes = tuple(_load_class(p) for p in paths)
    if not isinstance(instance, classes):
        yield jsonschema.ValidationError(
            f"{type(instance).__module__}.{type(instance).__qualname__} object is not an "
            f"instance of {' or '.join(paths)}"
        )


_Validator = validators.extend(validators.Draft202012Validator, validators={"pyclass": _pyclass})


@lru_cache(maxsize=1)
def _schemas() -> dict:
    with open(schema_path(), encoding="utf-8") as f:
        return json.load(f)["$defs"]


@cache
def _validator_for(message_type: str):
    schema = _extra_schemas.get(message_type) or _schemas().get(message_type)
    if schema is None:
        return None
    _Validator.check_schema(schema)
    return _Validator(schema)


def register_schema(message_type: str, schema: dict) -> None:
    """Register the JSON Schema of a message type used by a user's own actors.

    Args:
        message_type: the ``type`` value (snake_case).
        schema: a draft 2020-12 schema for the whole message dict (``pyclass`` allowed).

    Raises:
        jsonschema.SchemaError: the schema itself is invalid.
        ValueError: ``message_type`` is one of crawlfw's own types.
    """
    if message_type in _schemas():
        raise ValueError(f"message type {message_type!r} is crawlfw's own; pick another name")
    _Validator.check_schema(schema)
    with _lock:
        _extra_schemas[message_type] = schema
        _validator_for.cache_clear()


def validate_message(message) -> None:
    """Check ``message`` against the schema of its ``type``.

    Raises:
        InvalidMessage: the message is not a dict with a string ``type``, its type is unknown,
            or it breaks its schema; the text names the type, the key path and the rule.
    """
    if not isinstance(message, dict):
        raise InvalidMessage(f"a message must be a dict, got {type(message).__name__}: {message!r:.200}")
    message_type = message.get("type")
    if not isinstance(message_type, str):
        raise InvalidMessage(f"a message needs a string 'type' key, got {message!r:.200}")
    validator = _validator_for(message_type)
    if validator is None:
        raise InvalidMessage(f"unknown message type {message_type!r}")
    error = jsonschema.exceptions.best_match(validator.iter_errors(message))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(message)"
        raise InvalidMessage(f"invalid {message_type!r} message at {where}: {error.message}")
