"""Write the inventory of Scrapy 2.19's public API that crawlfw is compared against.

Run it with the Python of a virtual environment where Scrapy 2.19.0 is installed (never
crawlfw's own: crawlfw must not import scrapy)::

    /work/venv-scrapy/bin/python tools/scrapy_api_inventory.py [--docs DIR] [--out FILE]

It writes ``tests/data/scrapy_2_19_api.json`` (sorted keys, one value per line: running it
again gives no diff). ``tests/test_scrapy_api_inventory.py`` reads that file (without
importing scrapy) and checks that crawlfw offers every module and name in it, with a
compatible signature, or that the gap is listed in ``tests/data/scrapy_2_19_api_gaps.json``.

Which modules are public (the rule):

1. ``scrapy`` itself, with the names of its ``__all__``.
2. Every module Scrapy 2.19's documentation references: ``.. module::``,
   ``.. automodule::``, ``.. currentmodule::`` and ``:mod:`` targets, and the module that
   holds each documented object (``:class:`scrapy.x.Y```, ``.. autoclass:: scrapy.x.Y``,
   ``:func:``, ``:meth:``...), when that module can be imported.
3. Every other module of the installed ``scrapy`` package whose dotted path has no part
   starting with ``_``, except those under ``scrapy.core`` (the engine, scraper and
   Twisted download handlers: crawlfw's inside is actors, not these classes) and
   ``scrapy.templates`` (project skeletons, not modules); a ``scrapy.core`` module the
   documentation references is kept by rule 2.

Which names of a module are public: its ``__all__`` when it has one; otherwise every
name without a leading underscore that the module's own source binds at top level
(``def``, ``class``, an assignment, a ``from . import`` re-export in a package's
``__init__``), outside ``if TYPE_CHECKING:`` blocks. Names imported from elsewhere are
not the module's own (``from typing import Any`` does not make ``Any`` public API), and
module loggers (``logger``) are left out. For ``scrapy.settings.default_settings`` the
names are the settings: they are listed under ``default_settings`` instead.

What is written for each name: its kind (``module``, ``class``, ``function``,
``attribute``) and, for a callable, its signature: each parameter's name, kind
(``positional_only``, ``positional_or_keyword``, ``var_positional``, ``keyword_only``,
``var_keyword``) and default (``repr`` when it is None, a bool, a number, a string or
bytes, or a tuple/list/frozenset/dict of those; ``"<object>"`` otherwise; absent when
the parameter is required). A class's signature is its constructor's; its ``members``
are the public methods, properties and attributes its body defines (inherited ones are
the base class's), methods' signatures without ``self``/``cls``.

Scrapy's documentation is read from the 2.19.0 sdist: ``--docs DIR`` names its
``docs/`` folder; without it, ``pip download --no-binary :all: scrapy==<installed>``
fetches the sdist into a temporary folder.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import pathlib
import pkgutil
import re
import subprocess
import sys
import tarfile
import tempfile
import warnings

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tests" / "data" / "scrapy_2_19_api.json"

_DOC_MODULE = re.compile(r"\.\.\s+(?:module|automodule|currentmodule)::\s*(scrapy[\w.]*)")
_DOC_ROLE = re.compile(
    r":(?:mod|class|func|meth|attr|data|exc|obj|const|signal|setting)?:`(?:[^`<]*<)?~?(scrapy(?:\.\w+)+)")
_DOC_AUTO = re.compile(
    r"\.\.\s+(?:autoclass|autofunction|automethod|autoattribute|autoexception|autodata"
    r"|class|function|method|attribute|exception|data)::\s*(scrapy(?:\.\w+)+)")
_SIMPLE = (type(None), bool, int, float, str, bytes)
_PARAM_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional_only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional_or_keyword",
    inspect.Parameter.VAR_POSITIONAL: "var_positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword_only",
    inspect.Parameter.VAR_KEYWORD: "var_keyword",
}
_EXCLUDED_NAMES = {"logger"}


def fetch_docs(version: str) -> pathlib.Path:
    """Download Scrapy's sdist of ``version`` with pip and return its ``docs/`` folder."""
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="scrapy-sdist-"))
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "--no-binary", ":all:", "-d", str(tmp), f"scrapy=={version}"], check=True)
    archive = next(tmp.glob("scrapy-*.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(tmp, filter="data")
    return tmp / f"scrapy-{version}" / "docs"


def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)
    except Exception:
        return False
    return True


def documented_modules(docs: pathlib.Path) -> set[str]:
    """Modules Scrapy's documentation names or documents an object of (rule 2)."""
    modules = set()
    for path in sorted(docs.rglob("*.rst")):
        text = path.read_text(encoding="utf-8")
        for match in _DOC_MODULE.finditer(text):
            modules.add(match.group(1))
        for pattern in (_DOC_ROLE, _DOC_AUTO):
            for match in pattern.finditer(text):
                dotted = match.group(1).rstrip(".")
                parts = dotted.split(".")
                # the longest importable prefix is the module that holds the object
                for end in range(len(parts), 0, -1):
                    candidate = ".".join(parts[:end])
                    if _importable(candidate):
                        modules.add(candidate)
                        break
    return {m for m in modules if _importable(m) and not any(
        part.startswith("_") for part in m.split("."))}


def package_modules() -> set[str]:
    """Public modules of the installed scrapy package (rule 3)."""
    import scrapy

    modules = {"scrapy"}
    for info in pkgutil.walk_packages(scrapy.__path__, "scrapy."):
        name = info.name
        parts = name.split(".")
        if any(part.startswith("_") for part in parts):
            continue
        if parts[1] in ("core", "templates"):
            continue
        modules.add(name)
    return modules


def _top_level_names(module) -> list[str]:
    """Public names the module's own source binds at top level (see the module docstring)."""
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return []
    tree = ast.parse(source)
    is_package = hasattr(module, "__path__")
    names: set[str] = set()

    def visit(body):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    for sub in ast.walk(target):
                        if isinstance(sub, ast.Name):
                            names.add(sub.id)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                if isinstance(node.target, ast.Name) and (
                        not isinstance(node, ast.AnnAssign) or node.value is not None):
                    names.add(node.target.id)
            elif isinstance(node, ast.ImportFrom) and is_package:
                own = node.level > 0 or (node.module or "").startswith(module.__name__ + ".")
                if own:
                    for alias in node.names:
                        names.add(alias.asname or alias.name)
            elif isinstance(node, ast.If):
                test = ast.unparse(node.test)
                if "TYPE_CHECKING" in test:
                    visit(node.orelse)
                else:
                    visit(node.body)
                    visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)

    visit(tree.body)
    return sorted(n for n in names if not n.startswith("_") and n not in _EXCLUDED_NAMES
                  and hasattr(module, n))


def public_names(module) -> list[str]:
    if module.__name__ == "scrapy.settings.default_settings":
        return []
    declared = getattr(module, "__all__", None)
    if declared is not None:
        return sorted(n for n in declared if hasattr(module, n))
    return _top_level_names(module)


def simple_default(value):
    if isinstance(value, _SIMPLE):
        return repr(value)
    if isinstance(value, (tuple, list, frozenset, set)) and all(
            isinstance(v, _SIMPLE) for v in value):
        if isinstance(value, (frozenset, set)):
            return "{" + ", ".join(sorted(repr(v) for v in value)) + "}"
        return repr(value)
    if isinstance(value, dict) and all(
            isinstance(k, _SIMPLE) and isinstance(v, _SIMPLE) for k, v in value.items()):
        return repr(dict(sorted(value.items(), key=lambda kv: repr(kv[0]))))
    return "<object>"


def signature(func, drop_first: bool = False):
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    params = []
    for index, param in enumerate(sig.parameters.values()):
        if drop_first and index == 0 and param.kind in (
                inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            continue
        entry = {"name": param.name, "kind": _PARAM_KINDS[param.kind]}
        if param.default is not inspect.Parameter.empty:
            entry["default"] = simple_default(param.default)
        params.append(entry)
    return params


def describe_member(value):
    if isinstance(value, staticmethod):
        return {"kind": "staticmethod", "signature": signature(value.__func__)}
    if isinstance(value, classmethod):
        return {"kind": "classmethod", "signature": signature(value.__func__, drop_first=True)}
    if isinstance(value, property) or inspect.isdatadescriptor(value):
        return {"kind": "property"}
    if inspect.isfunction(value):
        return {"kind": "method", "signature": signature(value, drop_first=True)}
    if inspect.isclass(value):
        return {"kind": "class"}
    return {"kind": "attribute"}


def describe(value, owner_module: str):
    if inspect.ismodule(value):
        return {"kind": "module"}
    if inspect.isclass(value):
        entry = {"kind": "class", "signature": signature(value)}
        members = {}
        if getattr(value, "__module__", "").startswith("scrapy") and not _is_interface(value):
            for name, member in vars(value).items():
                if name.startswith("_"):
                    continue
                members[name] = describe_member(member)
        if members:
            entry["members"] = members
        return entry
    if callable(value):
        return {"kind": "function", "signature": signature(value)}
    return {"kind": "attribute"}


def _is_interface(cls) -> bool:
    return type(cls).__name__ == "InterfaceClass"


def default_settings() -> dict:
    from scrapy.settings import default_settings as module

    return {name: simple_default(getattr(module, name))
            for name in dir(module) if name.isupper() and not name.startswith("_")}


def build(docs: pathlib.Path) -> dict:
    import scrapy

    documented = documented_modules(docs)
    walked = package_modules()
    modules = {}
    for name in sorted(documented | walked):
        module = importlib.import_module(name)
        sources = []
        if name in documented:
            sources.append("docs")
        if name in walked:
            sources.append("package")
        names = {}
        for attr in public_names(module):
            names[attr] = describe(getattr(module, attr), name)
        modules[name] = {"found_by": sources, "names": names}
    return {
        "scrapy_version": scrapy.__version__,
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "rule": "see tools/scrapy_api_inventory.py's docstring",
        "modules": modules,
        "default_settings": default_settings(),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=pathlib.Path,
                        help="Scrapy's docs/ folder (of the installed version's sdist)")
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    import scrapy

    docs = args.docs or fetch_docs(scrapy.__version__)
    inventory = build(docs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(inventory, indent=1, sort_keys=True) + "\n",
                        encoding="utf-8")
    modules = inventory["modules"]
    print(f"{len(modules)} modules, {sum(len(m['names']) for m in modules.values())} names, "
          f"{len(inventory['default_settings'])} settings -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
