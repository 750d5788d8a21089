"""ARCHITECTURE.md names only what exists: every ``crawlfw/...`` (and ``tests/``, ``docs/``,
``benchmarks/``, ``examples/``) path, every ``crawlfw.x.y`` dotted name, every test it cites
(``file.py::test_name``), and every section that it, the code, the docs and the tests point
to (``ARCHITECTURE.md, "Lose nothing"``; ``see "Supervision"``)."""

import importlib
import re
import warnings
from pathlib import Path

import pytest

import crawlfw

ROOT = Path(crawlfw.__file__).resolve().parent.parent
ARCHITECTURE = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")

# A path: a top folder, then path characters; no trailing punctuation.
PATH = re.compile(r"(?<![\w./-])((?:crawlfw|tests|docs|benchmarks|examples)/[\w./-]*[\w/])"
                  r"(?:::(\w+))?")
# A dotted name; one in quotes is a setting's value (``'crawlfw.pqueues.X'``), not checked.
# A path inside the package written without its ``crawlfw/`` (``core/feeds/feeds.py``).
SHORT_PATH = re.compile(
    r"(?<![\w./-])((?:core|actors|http|utils|selector|settings|spiders|pipelines|extensions|"
    r"downloadermiddlewares|spidermiddlewares|commands|linkextractors|loader|contracts)"
    r"/[\w./-]*\.py)\b")
DOTTED = re.compile(r"(?<![\w./'-])(crawlfw(?:\.\w+)+)")
HEADINGS = {line.lstrip("#").strip() for line in ARCHITECTURE.splitlines()
            if line.startswith("#")}
# How the code and the docs name a section: ARCHITECTURE.md, "X" / ARCHITECTURE.md ("X").
SECTION_REF = re.compile(r'ARCHITECTURE\.md[,:]?\s+\(?"([^"]+)"')
# How ARCHITECTURE.md names its own sections: see "X".
OWN_REF = re.compile(r'[Ss]ee\s+"([^"]+)"')


def _paths():
    found = {}
    for match in PATH.finditer(ARCHITECTURE):
        found.setdefault((match.group(1), match.group(2)), None)
    return sorted(found, key=lambda p: (p[0], p[1] or ""))


@pytest.mark.parametrize("path, test_name", _paths())
def test_every_path_named_exists(path, test_name):
    target = ROOT / path
    assert target.exists(), f"ARCHITECTURE.md names {path}, which does not exist"
    if test_name:
        assert re.search(rf"def {test_name}\b", target.read_text(encoding="utf-8")), (
            f"ARCHITECTURE.md cites {path}::{test_name}, which is not there")


@pytest.mark.parametrize("path", sorted(set(SHORT_PATH.findall(ARCHITECTURE))))
def test_every_package_relative_path_exists(path):
    assert (ROOT / "crawlfw" / path).exists(), (
        f"ARCHITECTURE.md names {path} (in crawlfw/), which does not exist")


def _resolve(dotted: str):
    """Import the longest module prefix of ``dotted``, then get the rest as attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            with warnings.catch_warnings():  # deprecated alias modules warn on import
                warnings.simplefilter("ignore")
                obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(dotted)


@pytest.mark.parametrize("dotted", sorted(set(DOTTED.findall(ARCHITECTURE))))
def test_every_dotted_name_resolves(dotted):
    try:
        _resolve(dotted)
    except (ImportError, AttributeError) as exc:
        pytest.fail(f"ARCHITECTURE.md names {dotted}, which does not resolve: {exc!r}")


def _norm(name: str) -> str:
    """A section's name as a heading writes it (one space, Markdown's single backquotes)."""
    return " ".join(name.replace("``", "`").split())


def _section_refs():
    refs = set()
    for folder in ("crawlfw", "docs", "tests", "benchmarks"):
        for file in (ROOT / folder).rglob("*"):
            if file.suffix in (".py", ".md") and file.is_file():
                if file.name == Path(__file__).name:
                    continue
                for name in SECTION_REF.findall(file.read_text(encoding="utf-8")):
                    refs.add((str(file.relative_to(ROOT)), _norm(name)))
    for name in SECTION_REF.findall((ROOT / "README.md").read_text(encoding="utf-8")):
        refs.add(("README.md", _norm(name)))
    for name in OWN_REF.findall(ARCHITECTURE):
        refs.add(("ARCHITECTURE.md", _norm(name)))
    return sorted(refs)


@pytest.mark.parametrize("where, section", _section_refs())
def test_every_section_pointed_to_exists(where, section):
    assert any(heading.startswith(section) for heading in HEADINGS), (
        f"{where} points to ARCHITECTURE.md's section {section!r}, which has no heading; "
        f"headings: {sorted(HEADINGS)}")


def test_the_checks_find_what_is_missing():
    assert PATH.findall("see `crawlfw/core/nothing.py` and tests/a.py::test_b.") == [
        ("crawlfw/core/nothing.py", ""), ("tests/a.py", "test_b")]
    assert not (ROOT / "crawlfw/core/nothing.py").exists()
    assert SHORT_PATH.findall("in `core/feeds/feeds.py`, not crawlfw/core/x.py") == [
        "core/feeds/feeds.py"]
    with pytest.raises(ImportError):
        _resolve("crawlfw_nothing.x")
    with pytest.raises(AttributeError):
        _resolve("crawlfw.core.frontier.api.no_such_name")
    assert SECTION_REF.findall('(ARCHITECTURE.md, "Lose nothing") ARCHITECTURE.md ("Layers")') \
        == ["Lose nothing", "Layers"]
