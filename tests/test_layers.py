"""The package's layers import one way, and no modules import each other in a circle
(ARCHITECTURE.md, "Layers").

Layers, bottom up (a module may import its own layer and those below it):

1. ``foundation``: ``http/`` and ``selector/`` (the bottom), ``settings/``, ``utils/``,
   items, link extractors, spiders' base classes, signals, stats... (Scrapy's building
   blocks, used by everything above);
2. ``core``: ``core/``, the plain, thread-free logic, one folder per subsystem
   (``transport/``, ``frontier/``, ``flow/``, ``feeds/``, ``control/``), which import one
   way too (:data:`CORE_SUBSYSTEMS`);
3. ``components``: what the settings plug into the core by import path (downloader and
   spider middlewares, item pipelines, extensions, contracts): they may use the core,
   which never imports them (it loads them by name);
4. ``actors``: ``actors/``, the shells that own the core's objects;
5. ``runtime``: ``crawler.py``, ``control.py``, ``dashboard/``, ``progress.py``,
   ``shell.py`` and ``utils/test.py`` (its helpers build crawlers);
6. ``commands``: ``commands/``, ``cmdline.py``, ``__main__.py``.

Every module of ``crawlfw/`` must have a layer (a new package fails
``test_every_module_has_a_layer`` until it is placed in :data:`LAYERS`). Imports are read
from the source, function-level ones too, so a dependency cannot hide inside a function.
The layer rule leaves out imports under ``if TYPE_CHECKING:`` (never run); the circle
rule counts them too: a type named from a layer above is an import circle for a reader
(name it through a ``Protocol`` below, as ``crawlfw.actors._types.CrawlerLike`` does).
"""

import ast
from functools import cache
from pathlib import Path

import pytest

import crawlfw

PACKAGE = Path(crawlfw.__file__).parent

#: (layer, module prefixes), bottom up. The longest matching prefix places a module
#: (``crawlfw`` alone places only the package's ``__init__``).
LAYERS = (
    ("foundation", (
        "crawlfw", "crawlfw._moved", "crawlfw.conf", "crawlfw.contrib", "crawlfw.contrib_exp",
        "crawlfw.dupefilters", "crawlfw.exceptions", "crawlfw.exporters", "crawlfw.http",
        "crawlfw.interfaces", "crawlfw.item", "crawlfw.link", "crawlfw.linkextractors",
        "crawlfw.loader", "crawlfw.log", "crawlfw.logformatter", "crawlfw.mail",
        "crawlfw.middleware", "crawlfw.project", "crawlfw.responsetypes", "crawlfw.robotstxt", "crawlfw.selector",
        "crawlfw.settings", "crawlfw.signalmanager", "crawlfw.signals", "crawlfw.spiderloader",
        "crawlfw.spidermanager", "crawlfw.spiders", "crawlfw.squeues", "crawlfw.stats",
        "crawlfw.statscollectors", "crawlfw.templates", "crawlfw.utils",
    )),
    ("core", ("crawlfw.core",)),
    ("components", (
        "crawlfw.contracts", "crawlfw.downloadermiddlewares", "crawlfw.extension",
        "crawlfw.extensions", "crawlfw.pipelines", "crawlfw.resolver",
        "crawlfw.spidermiddlewares",
    )),
    ("actors", ("crawlfw.actors",)),
    ("runtime", ("crawlfw.control", "crawlfw.crawler", "crawlfw._crawler_components",
                 "crawlfw._shutdown_signals", "crawlfw.dashboard", "crawlfw.progress",
                 "crawlfw.shell", "crawlfw.utils.test")),
    ("commands", ("crawlfw.__main__", "crawlfw.cmdline", "crawlfw.commands")),
)
_RANK = {prefix: rank for rank, (_, prefixes) in enumerate(LAYERS) for prefix in prefixes}

#: The core's subsystems (its folders), bottom up, placed like :data:`LAYERS` (longest
#: prefix): a subsystem may import its own modules and those below it. The transport
#: (downloads, slots, a host's politeness rule) knows no frontier; the frontier (what to
#: download next, also shared over Redis, with the shared slots) uses the transport's
#: slot keys and politeness rule; the feeds ask the frontier's Redis link for the worker
#: id. ``crawlfw.core`` itself (the package and its runtime internals ``_faults``, ``_fds``)
#: is at the bottom; Scrapy's public paths (``scheduler``, ``scraper``, ``spidermw``,
#: re-exports) at the top.
CORE_SUBSYSTEMS = (
    ("core", ("crawlfw.core",)),
    *((folder, (f"crawlfw.core.{folder}",))
      for folder in ("transport", "frontier", "flow", "feeds", "control")),
    ("scrapy paths", ("crawlfw.core.scheduler", "crawlfw.core.scraper",
                      "crawlfw.core.spidermw", "crawlfw.core.downloader")),
)


def _layer(module: str, ranks: dict = _RANK) -> int | None:
    """The rank in :data:`LAYERS` (or the table ``ranks`` is made from) of ``module`` (a
    dotted name), None if it has none."""
    if module == "crawlfw":
        return ranks.get(module)
    parts = module.split(".")
    for end in range(len(parts), 1, -1):
        rank = ranks.get(".".join(parts[:end]))
        if rank is not None:
            return rank
    return None


def _is_type_checking(node) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING",
                                                                   "typing.TYPE_CHECKING")


def _nodes(tree, type_checking: bool):
    """Every node of ``tree``; those under ``if TYPE_CHECKING:`` only if ``type_checking``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if not type_checking and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict:
    """Dotted name -> path of every module of the package."""
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path, modules: dict, type_checking: bool = False):
    """``(line, imported module)`` for every import statement in ``path``, the source of
    module ``name`` (relative imports resolved). ``from X import Y`` yields ``X.Y`` when
    that is one of ``modules`` (a submodule import needs nothing of ``X``'s own code),
    else ``X``."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in _nodes(ast.parse(path.read_text(encoding="utf-8")), type_checking):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package[:len(package) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            names = [f"{base}.{alias.name}" for alias in node.names]
            submodules = [name for name in names if name in modules]
            yield from ((node.lineno, name) for name in submodules)
            if len(submodules) < len(names):
                yield node.lineno, base


def _upward_imports(modules: dict, layers: tuple = LAYERS) -> list[str]:
    ranks = _RANK if layers is LAYERS else {
        prefix: rank for rank, (_, prefixes) in enumerate(layers) for prefix in prefixes}
    upward = []
    for name, path in modules.items():
        rank = _layer(name, ranks)
        for line, module in _imports(name, path, modules):
            target = _layer(module, ranks) if module.startswith("crawlfw") else None
            if rank is not None and target is not None and target > rank:
                upward.append(f"{name}:{line} ({layers[rank][0]}) "
                              f"imports {module} ({layers[target][0]})")
    return upward


def _circles(graph: dict) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in graph[node]:
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _import_graph(modules: dict) -> dict:
    """Module -> the package's modules it imports (every import statement: module-level,
    function-level and under ``if TYPE_CHECKING:``)."""
    return {name: sorted({module for _, module in _imports(name, path, modules, True)
                          if module in modules and module != name})
            for name, path in modules.items()}


def test_every_module_has_a_layer():
    assert [name for name in _modules() if _layer(name) is None] == []


@pytest.mark.parametrize("layer", [name for name, _ in LAYERS])
def test_layer_imports_nothing_above_it(layer):
    modules = {name: path for name, path in _modules().items()
               if _layer(name) is not None and LAYERS[_layer(name)][0] == layer}
    assert modules
    assert _upward_imports(modules) == []


def test_core_subsystems_import_one_way():
    modules = {name: path for name, path in _modules().items()
               if name == "crawlfw.core" or name.startswith("crawlfw.core.")}
    assert len(modules) > 20
    assert _upward_imports(modules, CORE_SUBSYSTEMS) == []


def test_no_import_circle():
    modules = _modules()
    graph = _import_graph(modules)
    circles = _circles(graph)
    detail = [f"{a} -> {b}" for circle in circles for a in circle for b in graph[a]
              if b in circle]
    assert circles == [], detail


def test_the_rules_see_an_upward_import_and_a_circle(tmp_path):
    """The checks are not vacuous: a core module importing an extension inside a function
    is upward, and modules importing each other (lazily, or for a type only) are a circle."""
    (tmp_path / "up.py").write_text(
        "def f():\n    from crawlfw.extensions.feedexport import FeedExporter\n")
    assert _upward_imports({"crawlfw.core.up": tmp_path / "up.py"}) == [
        "crawlfw.core.up:2 (core) imports crawlfw.extensions.feedexport (components)"]
    (tmp_path / "a.py").write_text("from crawlfw.utils import b\n")
    (tmp_path / "b.py").write_text("from typing import TYPE_CHECKING\n"
                                   "if TYPE_CHECKING:\n    import crawlfw.utils.a\n")
    (tmp_path / "c.py").write_text("import crawlfw.utils.a\n")
    fake = {f"crawlfw.utils.{n}": tmp_path / f"{n}.py" for n in "abc"}
    assert _circles(_import_graph(fake)) == [["crawlfw.utils.a", "crawlfw.utils.b"]]
    assert _layer("crawlfw.nothing_placed") is None
    (tmp_path / "slot.py").write_text("from crawlfw.core.frontier.redis_link import worker_id\n")
    assert _upward_imports({"crawlfw.core.transport.slot": tmp_path / "slot.py"},
                           CORE_SUBSYSTEMS) == [
        "crawlfw.core.transport.slot:1 (transport) imports crawlfw.core.frontier.redis_link "
        "(frontier)"]
