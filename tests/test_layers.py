"""The package's layers import one way: commands -> crawler -> actors -> core (ARCHITECTURE.md).

Every import is read from the source (function-level ones too), so a cycle cannot hide
inside a function; only imports under ``if TYPE_CHECKING:`` (never run) are left out."""

import ast
from pathlib import Path

import pytest

import crawlfw

PACKAGE = Path(crawlfw.__file__).parent

#: Layer -> modules it must not import (they sit above it).
ABOVE = {
    "crawlfw/core": ("crawlfw.actors", "crawlfw.crawler", "crawlfw.commands", "crawlfw.cmdline",
                     "crawlfw.control", "crawlfw.shell"),
    "crawlfw/actors": ("crawlfw.crawler", "crawlfw.commands", "crawlfw.cmdline",
                       "crawlfw.control", "crawlfw.shell"),
    "crawlfw/crawler.py": ("crawlfw.commands", "crawlfw.cmdline"),
}


def _run_time_nodes(tree):
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:`` (never run)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING",
                                                                   "typing.TYPE_CHECKING"):
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _imports(path: Path):
    """``(line, imported module)`` for every import statement run in ``path``."""
    for node in _run_time_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"


def _files(layer: str):
    path = PACKAGE.parent / layer
    return [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))


@pytest.mark.parametrize("layer", sorted(ABOVE))
def test_layer_imports_nothing_above_it(layer):
    upward = [
        f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}"
        for path in _files(layer)
        for line, module in _imports(path)
        if any(module == up or module.startswith(up + ".") for up in ABOVE[layer])
    ]
    assert upward == []
