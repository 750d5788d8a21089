"""Generate ARCHITECTURE.md's message table from the TypedDicts of :mod:`crawlfw.actors.messages`.

The TypedDicts are the one definition of every message (the JSON Schemas come from them
too, :mod:`crawlfw.actors._schema`). Each class docstring's first paragraph says who sends
the message to whom and what it means, in one fixed form::

    <route>[; <route>...]: <meaning>

where a route is two or more parties joined by ``" -> "`` (``Engine -> Scheduler``,
``Scheduler -> SpiderRunner -> Pipeline -> each Exporter``), a party may carry a
parenthesis (``AutoThrottle (on the Engine's thread)``), and the meaning is the rest of
the paragraph. :func:`routes_of` reads it; :func:`render_table` writes the Markdown table
(type, from -> to, meaning, then the replies to ``ask``) that :func:`write_architecture`
puts between ``<!-- messages:begin -->`` and ``<!-- messages:end -->`` in ARCHITECTURE.md.
``tests/actors/test_message_table.py`` fails until the file holds what this writes.

Usage, from the source tree::

    python -m crawlfw.actors._doc --write     # rewrite the table in ARCHITECTURE.md
    python -m crawlfw.actors._doc --check     # exit status 1 when it is out of date
    python -m crawlfw.actors._doc             # print the table
"""

import inspect
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from crawlfw.actors import messages

__all__ = ["Route", "routes_of", "render_table", "architecture_path", "replace_table",
           "write_architecture", "BEGIN", "END"]

BEGIN = "<!-- messages:begin -->"
END = "<!-- messages:end -->"

#: Receivers in the order the table groups messages by (the last party of a message's
#: first route, its parenthesis left out, lower case); others follow, by name.
RECEIVER_ORDER = ("supervisor", "engine", "scheduler", "downloader", "spiderrunner",
                  "pipeline", "exporter", "user actor", "control endpoint", "outside")


@dataclass(frozen=True)
class Route:
    """Who sends a message to whom and what it means, from its class docstring.

    Attributes:
        routes: one tuple of parties per route (sender first, final receiver last), as
            written (parentheses kept).
        meaning: the rest of the first paragraph, after the routes' colon.
    """

    routes: tuple[tuple[str, ...], ...]
    meaning: str


def _split_top(text: str, separator: str) -> list[str]:
    """``text`` split at each ``separator`` outside parentheses and backquotes."""
    parts, depth, quoted, start, i = [], 0, False, 0, 0
    while i < len(text):
        char = text[i]
        if char == "`":
            quoted = not quoted
        elif not quoted and char == "(":
            depth += 1
        elif not quoted and char == ")":
            depth = max(depth - 1, 0)
        elif not quoted and depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i])
            i += len(separator)
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return parts


def routes_of(cls: type) -> Route:
    """Read the routes and the meaning of a message class from its docstring.

    Args:
        cls: a TypedDict of :mod:`crawlfw.actors.messages` (or a user's written the same
            way) whose docstring's first paragraph is ``<route>[; <route>...]: <meaning>``.

    Returns:
        its :class:`Route`.

    Raises:
        ValueError: naming the class, when the first paragraph has no ``A -> B: ...``
            form, a route has an empty party, or the meaning is empty.
    """
    paragraph = " ".join(inspect.cleandoc(cls.__doc__ or "").split("\n\n")[0].split())
    # The routes end at the first ": " outside parentheses and backquotes.
    head, *rest = _split_top(paragraph, ": ")
    meaning = ": ".join(rest)
    routes = tuple(tuple(p.strip() for p in _split_top(route, " -> "))
                   for route in _split_top(head, "; "))
    if (not rest or not meaning.strip() or " -> " not in head
            or any(len(route) < 2 or not all(route) for route in routes)):
        raise ValueError(
            f"{cls.__qualname__}: the docstring's first paragraph must be "
            f"'<sender> -> <receiver>[; <route>...]: <meaning>', not {paragraph!r}")
    return Route(routes, meaning.strip())


def _markdown(text: str) -> str:
    """reStructuredText inline markup of a docstring as Markdown, safe in a table cell."""
    text = re.sub(r":(?:class|data|func|mod|meth|attr):`~?([^`]+)`", r"``\1``", text)
    text = text.replace("``", "`")
    return text.replace("|", "\\|")


def _party(name: str) -> str:
    """A party's bare name, lower case: ``each Exporter (...)`` -> ``exporter``."""
    name = re.sub(r"\s*\(.*\)$", "", name).strip().lower()
    return re.sub(r"^(each|last|the|any) ", "", name)


def _rank(route: Route) -> tuple[int, str]:
    first = route.routes[0]
    receiver = _party(first[-1])
    if receiver == "itself":
        receiver = _party(first[-2])
    if receiver in RECEIVER_ORDER:
        return RECEIVER_ORDER.index(receiver), ""
    return len(RECEIVER_ORDER), receiver


def render_table() -> str:
    """The message table, Markdown, from :data:`messages.MESSAGE_TYPES` and
    :data:`messages.REPLY_TYPES`.

    Returns:
        two tables, each line ending in a newline: every message type (``type``, from ->
        to, meaning), grouped by receiver (:data:`RECEIVER_ORDER`, then
        :data:`~crawlfw.actors.messages.MESSAGE_TYPES`' order); then each ``ask`` and the
        replies it can get.

    Raises:
        ValueError: a message class's docstring does not say its routes (see
            :func:`routes_of`).
    """
    rows = []
    for order, (name, cls) in enumerate(messages.MESSAGE_TYPES.items()):
        route = routes_of(cls)
        rows.append((_rank(route), order, name, route))
    rows.sort(key=lambda row: (row[0], row[1]))
    lines = ["| type | from → to | meaning |", "|---|---|---|"]
    for _, _, name, route in rows:
        paths = "; ".join(" → ".join(route_) for route_ in route.routes)
        lines.append(f"| `{name}` | {_markdown(paths)} | {_markdown(route.meaning)} |")
    lines += ["", "Replies to `ask` (`REPLY_TYPES`):", "",
              "| ask | reply | from → to | meaning |", "|---|---|---|---|"]
    for name, classes in messages.REPLY_TYPES.items():
        for cls in classes:
            route = routes_of(cls)
            reply_type = cls.__annotations__.get("type")
            reply = (f"`{reply_type.__args__[0]}`" if reply_type is not None
                     else f"`{cls.__name__}`")
            paths = "; ".join(" → ".join(route_) for route_ in route.routes)
            lines.append(f"| `{name}` | {reply} | {_markdown(paths)} | "
                         f"{_markdown(route.meaning)} |")
    return "\n".join(lines) + "\n"


def architecture_path() -> Path:
    """ARCHITECTURE.md of the source tree (beside ``crawlfw/``).

    Raises:
        FileNotFoundError: crawlfw runs from an installed wheel, which has no
            ARCHITECTURE.md.
    """
    path = Path(__file__).resolve().parent.parent.parent / "ARCHITECTURE.md"
    if not path.is_file():
        raise FileNotFoundError(f"ARCHITECTURE.md not found at {path} (a source tree's)")
    return path


def replace_table(text: str, table: str) -> str:
    """``text`` with what stands between :data:`BEGIN` and :data:`END` replaced by
    ``table`` (the markers kept, each on its own line).

    Raises:
        ValueError: the markers are missing, repeated or out of order.
    """
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise ValueError(f"ARCHITECTURE.md must hold {BEGIN} then {END}, once each")
    before, rest = text.split(BEGIN)
    _, after = rest.split(END)
    return f"{before}{BEGIN}\n{table}{END}{after}"


def write_architecture(path: Path | str | None = None) -> bool:
    """Write :func:`render_table` into ARCHITECTURE.md between the markers.

    Args:
        path: the file (default :func:`architecture_path`).

    Returns:
        True when the file changed.
    """
    path = Path(path) if path is not None else architecture_path()
    text = path.read_text(encoding="utf-8")
    new = replace_table(text, render_table())
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str] | None = None) -> int:
    """``python -m crawlfw.actors._doc [--write | --check]``: print, write or check the table."""
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--write"]:
        changed = write_architecture()
        print(f"{'wrote' if changed else 'unchanged'} {architecture_path()}", file=sys.stderr)
    elif argv == ["--check"]:
        path = architecture_path()
        text = path.read_text(encoding="utf-8")
        if replace_table(text, render_table()) != text:
            print(f"{path}: the message table is out of date; run "
                  "python -m crawlfw.actors._doc --write", file=sys.stderr)
            return 1
    elif not argv:
        sys.stdout.write(render_table())
    else:
        print("usage: python -m crawlfw.actors._doc [--write | --check]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
