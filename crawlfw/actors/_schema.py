"""Generate ``conf/schemas/messages.json`` from the TypedDicts of :mod:`crawlfw.actors.messages`.

The TypedDicts are the one definition of every message; the JSON Schemas are derived from
them (draft 2020-12, plus crawlfw's keyword ``pyclass`` for Python objects, see
:mod:`crawlfw.actors._validation`). The shipped file is what :func:`render_schemas`
returns, byte for byte (a test checks it); validation reads the shipped file at run time
and generates nothing, except for a user's TypedDict given to
:func:`crawlfw.actors._validation.register_schema`.

Usage, from the source tree::

    python -m crawlfw.actors._schema > conf/schemas/messages.json
    python -m crawlfw.actors._schema --write        # the same, into schema_path()

Annotation -> schema (see the module docstring of :mod:`crawlfw.actors.messages`):
``Literal`` -> ``const``/``enum``; ``str``/``int``/``float``/``bool``/``None`` -> JSON
types; ``list[T]``, ``dict[str, T]``; ``T | None``; nested TypedDicts; ``NotRequired``;
``Annotated[T, Rule(...)]``; any other class (or a dotted-path string annotation) ->
``pyclass``. Descriptions come from the class docstrings (first paragraph) and the string
under each field.
"""

import ast
import inspect
import json
import sys
import textwrap
import types
import typing
from concurrent.futures import Future
from pathlib import Path
from typing import get_args, get_origin

if sys.version_info >= (3, 11):
    from typing import is_typeddict
else:  # typing_extensions' TypedDict (see crawlfw.actors.messages)
    from typing_extensions import is_typeddict

from pykka import ActorRef

from crawlfw.actors import messages
from crawlfw.http import Request, Response

__all__ = ["generate_schemas", "render_schemas", "write_schemas", "schema_of_typeddict",
           "schema_path"]

#: Dotted paths for classes whose defining module is not where users import them from.
PUBLIC_PATHS = {
    Request: "crawlfw.http.Request",
    Response: "crawlfw.http.Response",
    ActorRef: "pykka.ActorRef",
    Future: "concurrent.futures.Future",
}

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean",
               type(None): "null", dict: "object", list: "array"}

_DESCRIPTION = (
    "One schema per message type under $defs, keyed by the message's 'type'; under "
    "'replies', the answers an ask of a message type can get. The keyword 'pyclass' (a "
    "dotted class path or a list of them) requires a Python instance of that class; it is "
    "crawlfw's extension, checked by crawlfw.actors._validation. Generated from the "
    "TypedDicts of crawlfw/actors/messages/ by 'python -m crawlfw.actors._schema': edit "
    "those, not this file."
)


def schema_path() -> Path:
    """Path of ``messages.json``: inside the installed package, else the source tree's conf/."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "conf" / "schemas", here.parent / "conf" / "schemas"):
        path = candidate / "messages.json"
        if path.is_file():
            return path
    raise FileNotFoundError(f"conf/schemas/messages.json not found near {here}")


def _first_paragraph(doc: str | None) -> str:
    text = inspect.cleandoc(doc or "").split("\n\n")[0]
    return " ".join(text.split())


def _field_docs(cls) -> dict[str, str]:
    """Field name -> the docstring under it in the class body (first paragraph, one line)."""
    source = textwrap.dedent(inspect.getsource(cls))
    body = typing.cast(ast.ClassDef, ast.parse(source).body[0]).body
    docs = {}
    for node, after in zip(body, body[1:] + [None], strict=True):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            docs[node.target.id] = _first_paragraph(after.value.value)
    return docs


def _class_path(cls) -> str:
    return PUBLIC_PATHS.get(cls) or f"{cls.__module__}.{cls.__qualname__}"


def _is_json(tp) -> bool:
    """True when ``tp`` is described with JSON Schema types, not ``pyclass``."""
    origin = get_origin(tp)
    if origin is typing.Annotated:
        return _is_json(get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        return all(_is_json(a) for a in get_args(tp))
    return (tp in _JSON_TYPES or origin in (list, dict, typing.Literal) or tp is typing.Any
            or is_typeddict(tp))


def _schema_of(tp) -> dict:
    """The JSON Schema of one annotation."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is messages.NotRequired:
        return _schema_of(args[0])
    if origin is typing.Annotated:
        schema = _schema_of(args[0])
        for meta in args[1:]:
            if isinstance(meta, messages.Rule):
                schema.update(meta.keywords)
        return schema
    if origin is typing.Literal:
        return {"const": args[0]} if len(args) == 1 else {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        return _schema_of_union(args)
    if origin is list:
        return {"type": "array", "items": _schema_of(args[0])} if args else {"type": "array"}
    if origin is dict:
        values = _schema_of(args[1]) if args else {}
        return {"type": "object", "additionalProperties": values} if values else {"type": "object"}
    if tp is typing.Any:
        return {}
    if isinstance(tp, typing.ForwardRef):
        path = tp.__forward_arg__
        if "." not in path:
            raise TypeError(f"string annotation {path!r} must be a dotted class path")
        return {"pyclass": path}
    if is_typeddict(tp):
        return schema_of_typeddict(tp)
    if tp in _JSON_TYPES:
        return {"type": _JSON_TYPES[tp]}
    if isinstance(tp, type):
        return {"pyclass": _class_path(tp)}
    raise TypeError(f"no JSON Schema for annotation {tp!r}")


def _schema_of_union(args) -> dict:
    nullable = type(None) in args
    others = [a for a in args if a is not type(None)]
    if not all(_is_json(a) for a in others):
        # Python objects: one pyclass (a dict among them is a dict instance, not JSON)
        paths = [_class_path(a) for a in others]
        schema: dict[str, typing.Any] = {"pyclass": paths[0] if len(paths) == 1 else paths}
        return {"anyOf": [{"type": "null"}, schema]} if nullable else schema
    if len(others) == 1:
        schema = _schema_of(others[0])
        if nullable:
            if isinstance(schema.get("type"), str):
                schema["type"] = [schema["type"], "null"]
            else:
                schema = {"anyOf": [{"type": "null"}, schema]}
        return schema
    options = [_schema_of(a) for a in others]
    return {"anyOf": ([{"type": "null"}] if nullable else []) + options}


def schema_of_typeddict(cls) -> dict:
    """The JSON Schema of a TypedDict: an object with exactly its keys.

    Args:
        cls: a TypedDict class whose every field but ``type`` has a docstring under it.

    Returns:
        ``{"description", "type": "object", "properties", "required",
        "additionalProperties": False}``; each property carries its field's description.

    Raises:
        TypeError: ``cls`` is no TypedDict, a field has no docstring, or an annotation has
            no JSON Schema.
    """
    if not is_typeddict(cls):
        raise TypeError(f"{cls!r} is not a TypedDict class")
    docs = _field_docs(cls)
    properties = {}
    for name, tp in cls.__annotations__.items():
        schema = _schema_of(tp)
        if name != "type":
            if name not in docs:
                raise TypeError(f"{cls.__qualname__}.{name} has no docstring under it")
            schema["description"] = docs[name]
        properties[name] = schema
    required = [name for name in cls.__annotations__ if name in cls.__required_keys__]
    return {
        "description": _first_paragraph(cls.__doc__),
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def generate_schemas() -> dict:
    """The whole ``messages.json`` document, from :data:`messages.MESSAGE_TYPES` and
    :data:`messages.REPLY_TYPES` (in their order).

    Returns:
        ``{"$schema", "$id", "title", "description", "$defs": {type: schema},
        "replies": {type: {"anyOf": [schema, ...]}}}``; each reply schema has ``title``
        (its TypedDict's name).
    """
    replies = {}
    for message_type, classes in messages.REPLY_TYPES.items():
        replies[message_type] = {
            "anyOf": [{"title": cls.__name__, **schema_of_typeddict(cls)} for cls in classes]
        }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://crawlfw.invalid/schemas/messages.json",
        "title": "crawlfw actor messages",
        "description": _DESCRIPTION,
        "$defs": {name: schema_of_typeddict(cls) for name, cls in messages.MESSAGE_TYPES.items()},
        "replies": replies,
    }


def render_schemas() -> str:
    """:func:`generate_schemas` as the text of the shipped file (2-space indent, UTF-8,
    a final newline)."""
    return json.dumps(generate_schemas(), indent=2, ensure_ascii=False) + "\n"


def write_schemas(path: Path | str | None = None) -> Path:
    """Write :func:`render_schemas` to ``path`` (default: :func:`schema_path`, the file
    validation reads). Returns the path written."""
    path = Path(path) if path is not None else schema_path()
    path.write_text(render_schemas(), encoding="utf-8")
    return path


def main(argv=None) -> int:
    """``python -m crawlfw.actors._schema [--write]``: print the schemas, or write them."""
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--write"]:
        print(f"wrote {write_schemas()}", file=sys.stderr)
    elif not argv:
        sys.stdout.write(render_schemas())
    else:
        print("usage: python -m crawlfw.actors._schema [--write]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
