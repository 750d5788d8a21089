"""JSON Schema checks of actor messages (schemas in ``conf/schemas/messages.json``).

Messages carry Python objects (requests, responses, items, actor refs); the schema keyword
``pyclass`` (a dotted class path, or a list of them) requires an instance of one of those
classes. Everything else is standard JSON Schema (draft 2020-12) checked by ``jsonschema``.
The schemas are generated from :mod:`crawlfw.actors.messages` by
:mod:`crawlfw.actors._schema`; this module only reads the shipped file.

``jsonschema`` takes about 30 µs for a small message, ten times a ``tell``. So each schema
is also compiled (:func:`_compile`) into a plain predicate for the keywords crawlfw's
schemas use; a message the predicate accepts is valid, and any other goes through
``jsonschema``, which finds the error and words it. The predicate is never more lenient
than ``jsonschema`` (a schema with a keyword it does not know gets none).

``jsonschema`` itself is imported on first need (a message the predicate refuses, a
schema it cannot compile, :func:`register_schema`): importing it costs about 40 ms of
every process's start-up, and a crawl whose messages are all valid never needs it.
"""

import importlib
import json
import os
import re
import threading
from functools import cache, lru_cache

from crawlfw.actors._schema import schema_of_typeddict, schema_path
from crawlfw.exceptions import InvalidMessage

__all__ = ["validate_message", "register_schema", "schema_path", "validation_mode"]

_MODES = ("off", "boundary", "all")
_lock = threading.Lock()
_extra_schemas: dict[str, dict] = {}


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
    import jsonschema

    paths = [value] if isinstance(value, str) else value
    classes = tuple(_load_class(p) for p in paths)
    if not isinstance(instance, classes):
        yield jsonschema.ValidationError(
            f"{type(instance).__module__}.{type(instance).__qualname__} object is not an "
            f"instance of {' or '.join(paths)}"
        )


@cache
def _validator_class():
    """The draft 2020-12 ``jsonschema`` validator class with the ``pyclass`` keyword
    (``jsonschema`` is imported here, on first need)."""
    from jsonschema import validators

    return validators.extend(validators.Draft202012Validator, validators={"pyclass": _pyclass})


class _Entry:
    """A message type's checks: ``fast``, the compiled predicate (or None), and
    ``validator``, the ``jsonschema`` validator, built on first use (the schema is
    checked then; a registered schema was checked when registered)."""

    __slots__ = ("schema", "fast", "_validator")

    def __init__(self, schema):
        self.schema = schema
        self.fast = _compile(schema)
        self._validator = None

    @property
    def validator(self):
        if self._validator is None:
            cls = _validator_class()
            cls.check_schema(self.schema)
            self._validator = cls(self.schema)
        return self._validator


@lru_cache(maxsize=1)
def _schemas() -> dict:
    with open(schema_path(), encoding="utf-8") as f:
        return json.load(f)["$defs"]


@cache
def _validator_for(message_type: str):
    """The :class:`_Entry` of a type, or None if the type is unknown."""
    schema = _extra_schemas.get(message_type) or _schemas().get(message_type)
    if schema is None:
        return None
    entry = _Entry(schema)
    if entry.fast is None:
        entry.validator  # noqa: B018 (a schema only jsonschema checks: check it now)
    return entry


_IGNORED_KEYWORDS = frozenset({"description", "title", "$comment"})


def _is_integer(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


_TYPE_CHECKS = {
    "string": lambda x: isinstance(x, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
}


def _compile(schema):
    """A predicate ``f(instance) -> bool`` that is True only for instances valid under
    ``schema`` (a False may still be valid), or None when ``schema`` uses a keyword or
    value this small compiler does not handle (then ``jsonschema`` alone decides).

    Handles ``type``, ``const``/``enum`` (of strings or null), ``pyclass``,
    ``properties``, ``required``, ``additionalProperties``, ``items``, ``anyOf``,
    ``minimum``/``maximum``, ``minLength``/``maxLength``, ``minItems`` and ``pattern``,
    with draft 2020-12 meanings (each keyword only applies to instances of its type).
    """
    if not isinstance(schema, dict):
        return None
    checks = []
    for keyword, value in schema.items():
        if keyword in _IGNORED_KEYWORDS:
            continue
        check = _compile_keyword(keyword, value, schema)
        if check is None:
            return None
        checks.append(check)
    if len(checks) == 1:
        return checks[0]
    checks = tuple(checks)
    return lambda x: all(check(x) for check in checks)


def _compile_keyword(keyword, value, schema):  # noqa: C901 (one branch per keyword)
    if keyword == "type":
        names = [value] if isinstance(value, str) else value
        if not all(name in _TYPE_CHECKS for name in names):
            return None
        type_checks = tuple(_TYPE_CHECKS[name] for name in names)
        if len(type_checks) == 1:
            return type_checks[0]
        return lambda x: any(check(x) for check in type_checks)
    if keyword == "const":
        if value is None:
            return lambda x: x is None
        if isinstance(value, str):
            return lambda x: isinstance(x, str) and x == value
        return None
    if keyword == "enum":
        if not all(isinstance(v, str) for v in value):
            return None
        values = frozenset(value)
        return lambda x: isinstance(x, str) and x in values
    if keyword == "pyclass":
        paths = [value] if isinstance(value, str) else value
        classes = []

        def is_instance(x):
            if not classes:  # import on first use, as _pyclass does
                classes.append(tuple(_load_class(p) for p in paths))
            return isinstance(x, classes[0])
        return is_instance
    if keyword == "properties":
        subs = {name: _compile(sub) for name, sub in value.items()}
        if any(sub is None for sub in subs.values()):
            return None
        items = tuple(subs.items())
        return lambda x: not isinstance(x, dict) or all(
            name not in x or sub(x[name]) for name, sub in items
        )
    if keyword == "required":
        names = tuple(value)
        return lambda x: not isinstance(x, dict) or all(name in x for name in names)
    if keyword == "additionalProperties":
        if "patternProperties" in schema:
            return None
        known = frozenset(schema.get("properties", ()))
        if value is False:
            return lambda x: not isinstance(x, dict) or known.issuperset(x)
        sub = _compile(value)
        if sub is None:
            return None
        return lambda x: not isinstance(x, dict) or all(
            sub(v) for k, v in x.items() if k not in known
        )
    if keyword == "items":
        if "prefixItems" in schema:
            return None
        sub = _compile(value)
        if sub is None:
            return None
        return lambda x: not isinstance(x, list) or all(sub(e) for e in x)
    if keyword == "anyOf":
        subs = tuple(_compile(sub) for sub in value)
        if any(sub is None for sub in subs):
            return None
        return lambda x: any(sub(x) for sub in subs)
    if keyword in ("minimum", "maximum") and _is_number(value):
        if keyword == "minimum":
            return lambda x: not _is_number(x) or x >= value
        return lambda x: not _is_number(x) or x <= value
    if keyword in ("minLength", "maxLength") and _is_integer(value):
        if keyword == "minLength":
            return lambda x: not isinstance(x, str) or len(x) >= value
        return lambda x: not isinstance(x, str) or len(x) <= value
    if keyword == "minItems" and _is_integer(value):
        return lambda x: not isinstance(x, list) or len(x) >= value
    if keyword == "pattern" and isinstance(value, str):
        compiled = re.compile(value)
        return lambda x: not isinstance(x, str) or compiled.search(x) is not None
    return None


def register_schema(message_type: str, schema) -> None:
    """Register the JSON Schema of a message type used by a user's own actors.

    Args:
        message_type: the ``type`` value (snake_case).
        schema: a draft 2020-12 schema for the whole message dict (``pyclass`` allowed),
            or a TypedDict class written as crawlfw's own in
            :mod:`crawlfw.actors.messages` (real field types, ``Rule`` metadata, a
            docstring under each field), from which the schema is generated.

    Raises:
        jsonschema.SchemaError: the schema itself is invalid.
        TypeError: a TypedDict field has no docstring or a type with no JSON Schema.
        ValueError: ``message_type`` is one of crawlfw's own types, or differs from the
            TypedDict's ``type: Literal[...]``.
    """
    if message_type in _schemas():
        raise ValueError(f"message type {message_type!r} is crawlfw's own; pick another name")
    if isinstance(schema, type):
        schema = schema_of_typeddict(schema)
        const = schema["properties"].get("type", {}).get("const")
        if const != message_type:
            raise ValueError(f"the TypedDict's 'type' is {const!r}, not {message_type!r}; "
                             f"declare type: Literal[{message_type!r}]")
    _validator_class().check_schema(schema)
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
    entry = _validator_for(message_type)
    if entry is None:
        raise InvalidMessage(f"unknown message type {message_type!r}")
    if entry.fast is not None and entry.fast(message):
        return
    from jsonschema.exceptions import best_match

    error = best_match(entry.validator.iter_errors(message))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(message)"
        raise InvalidMessage(f"invalid {message_type!r} message at {where}: {error.message}")
