"""``crawlfw port [--dry-run] PATH``: port a Scrapy project, module or file to crawlfw, in
place.

The rules are :class:`crawlfw.commands._porting.Porter`'s (imports, dotted names in code
and settings, ``SCRAPY_SETTINGS_MODULE``, ``scrapy <command>`` in scripts and CI files,
genspider templates); this module walks the files, renames ``scrapy.cfg`` to
``crawlfw.cfg``, writes (or with ``--dry-run`` shows the diff), and prints:

- one line per changed file, ``path: number of changes``, then a total;
- what it left for a person, grouped: Scrapy plugins, dependencies on the scrapy
  distribution, Scrapy paths built at run time, files it could not read;
- the crawlfw names the ported code uses that crawlfw does not have (each with where it
  is used), found by importing crawlfw's modules (never the project's).

The exit status is 0 whatever was left; 2 when ``PATH`` does not exist or is a file of a
kind it does not port. A second run changes nothing. The command never reads the
project's settings (they may import Scrapy): it works inside or outside a project.
"""

import difflib
import functools
import importlib
import os
import sys
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

import argh

from crawlfw.commands import ScrapyCommand, command
from crawlfw.commands._command import delegate
from crawlfw.commands._porting import Note, Ported, Porter, PortError
from crawlfw.exceptions import UsageError

__all__ = ["port", "port_path", "FileReport", "Command"]

#: Directories never entered: version control, caches, virtual environments, builds.
SKIPPED_DIRS = frozenset({
    ".git", ".hg", ".svn", "__pycache__", "node_modules", ".tox", ".nox", ".venv", "venv",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist", "site-packages",
})
#: Suffixes of configuration and deployment files ported as text.
TEXT_SUFFIXES = frozenset({".cfg", ".ini", ".toml", ".yml", ".yaml", ".env", ".sh",
                           ".bash"})
#: File names (or their start, before a ``.``) ported as text.
TEXT_NAMES = frozenset({"Dockerfile", "Containerfile", "Makefile", "Procfile", ".env"})

#: What each kind of note means for the person reading the report.
_NOTE_MEANING = {
    "plugin": "a Scrapy plugin: it imports Scrapy, crawlfw cannot load it; find a crawlfw "
              "way or drop it",
    "dependency": "needs the scrapy distribution: replace it with crawlfw",
    "dynamic": "a Scrapy path built at run time: port it by hand",
    "unreadable": "not read, left as it is",
}


@dataclass
class FileReport:
    """What porting did to one file.

    Attributes:
        path: the file (as found).
        changes: rewrites made (or that would be made), the ``scrapy.cfg`` rename counted.
        notes: what was left for a person.
        references: ``(line, dotted crawlfw name)`` the ported file uses.
        new_path: where the file is now (``crawlfw.cfg`` for ``scrapy.cfg``), else None.
        diff: the unified diff of the change (``''`` when none).
    """

    path: Path
    changes: int = 0
    notes: list[Note] = field(default_factory=list)
    references: list[tuple[int, str]] = field(default_factory=list)
    new_path: Path | None = None
    diff: str = ""


def _kind(path: Path) -> str | None:
    """``'python'``, ``'template'``, ``'cfg'`` (``scrapy.cfg``), ``'text'``,
    ``'requirements'`` (read for notes only) or None (not ported)."""
    name = path.name
    if name == "scrapy.cfg":
        return "cfg"
    if path.suffix == ".py":
        return "python"
    if path.suffix == ".tmpl":
        return "template"
    if path.suffix in TEXT_SUFFIXES or name.split(".")[0] in TEXT_NAMES or name in TEXT_NAMES:
        return "text"
    if (name.startswith("requirements") and path.suffix in (".txt", ".in")) \
            or name == "Pipfile":
        return "requirements"
    return None


def _files(root: Path):
    """Every file under ``root`` that :func:`_kind` knows, sorted, skipping
    :data:`SKIPPED_DIRS`, ``*.egg-info``, virtual environments and symbolic links."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in SKIPPED_DIRS and not d.endswith(".egg-info")
            and not os.path.exists(os.path.join(dirpath, d, "pyvenv.cfg"))
            and not os.path.islink(os.path.join(dirpath, d)))
        for name in sorted(filenames):
            path = Path(dirpath, name)
            if not path.is_symlink() and _kind(path):
                yield path


def _project_names(root: Path, files) -> tuple[set, set]:
    """``(local, commands)``: the project's own module and package names, and the names
    of its commands (modules of a ``commands`` package, as ``COMMANDS_MODULE`` has)."""
    local, commands = set(), set()
    for path in files:
        if path.suffix != ".py":
            continue
        local.add(path.stem)
        for parent in path.relative_to(root).parents:
            if parent.name:
                local.add(parent.name)
        if path.parent.name == "commands" and path.stem != "__init__":
            commands.add(path.stem)
    return local, commands


def _read(path: Path, kind: str) -> tuple[str, str]:
    """``(text, encoding)``; line endings kept. Python files by their coding cookie."""
    data = path.read_bytes()
    encoding = "utf-8"
    if kind in ("python", "template"):
        encoding, _ = tokenize.detect_encoding(iter(data.splitlines(keepends=True)).__next__)
    return data.decode(encoding), encoding


def _port_file(porter: Porter, path: Path, kind: str, root: Path, dry_run: bool) -> FileReport:
    report = FileReport(path)
    try:
        text, encoding = _read(path, kind)
    except (UnicodeDecodeError, SyntaxError, LookupError) as e:
        report.notes.append(Note(0, "unreadable", f"cannot decode: {e}"))
        return report
    if kind == "requirements":
        report.notes = porter.dependencies(text)
        return report
    try:
        if kind in ("python", "template"):
            ported = porter.port_python(text, template=kind == "template")
        else:
            ported = porter.port_text(text)
    except PortError as e:
        report.notes.append(Note(0, "unreadable", str(e)))
        return report
    report.changes, report.notes, report.references = (ported.changes, ported.notes,
                                                       ported.references)
    target = path
    if kind == "cfg":
        target = path.with_name("crawlfw.cfg")
        if target.exists():
            report.notes.append(Note(0, "unreadable", "crawlfw.cfg exists beside it: "
                                     "scrapy.cfg left as it is"))
            report.changes = 0
            return report
        report.changes += 1
        report.new_path = target
    report.diff = _diff(path, target, root, text, ported)
    if not dry_run and report.changes:
        target.write_bytes(ported.text.encode(encoding))
        if target != path:
            path.unlink()
    return report


def _diff(path: Path, target: Path, root: Path, old: str, ported: Ported) -> str:
    old_name, new_name = (p.relative_to(root).as_posix() for p in (path, target))
    lines = list(difflib.unified_diff(old.splitlines(keepends=True),
                                      ported.text.splitlines(keepends=True),
                                      f"a/{old_name}", f"b/{new_name}"))
    if not lines and target != path:
        return f"rename {old_name} -> {new_name}\n"
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def port_path(path, *, dry_run: bool = False) -> tuple[Path, list[FileReport]]:
    """Port the file or the tree at ``path`` in place (``dry_run``: change nothing).

    Returns:
        ``(root, reports)``: the directory paths are shown relative to, and one
        :class:`FileReport` per file looked at (changed or not).

    Raises:
        UsageError: ``path`` does not exist, or is a file of a kind not ported.
    """
    path = Path(path)
    if not path.exists():
        raise UsageError(f"No such file or directory: {path}")
    if path.is_file():
        kind = _kind(path)
        if kind is None:
            raise UsageError(f"Not a file crawlfw port knows: {path} (it ports .py, .tmpl, "
                             "scrapy.cfg and configuration or deployment files)")
        root = path.parent
        siblings = [p for p in root.iterdir() if p.suffix == ".py"]
        siblings += [p / "__init__.py" for p in root.iterdir() if (p / "__init__.py").exists()]
        local, commands = _project_names(root, siblings)
        porter = Porter(local, commands)
        return root, [_port_file(porter, path, kind, root, dry_run)]
    root = path
    files = list(_files(root))
    local, commands = _project_names(root, files)
    porter = Porter(local, commands)
    return root, [_port_file(porter, f, _kind(f), root, dry_run) for f in files]


@functools.cache
def _resolves(dotted: str) -> bool:
    """True when crawlfw has the name ``dotted`` (a module, or an attribute reached from
    the longest importable module; ``crawlfw.http.TextResponse.follow`` included)."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        name = ".".join(parts[:i])
        try:
            obj = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name and e.name != name and not name.startswith(e.name + "."):
                return True  # it exists and needs a library that is not installed
            continue
        except Exception:  # noqa: BLE001 - it exists; importing it failed otherwise
            return True
        for attr in parts[i:]:
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                return False
        return True
    return False


def _where(places: list, root: Path, limit: int = 3) -> str:
    shown = [f"{p.relative_to(root).as_posix()}:{line}" if line else
             p.relative_to(root).as_posix() for p, line in places[:limit]]
    more = f" (+{len(places) - limit} more)" if len(places) > limit else ""
    return ", ".join(shown) + more


def format_report(root: Path, reports: list[FileReport], *, dry_run: bool) -> str:
    """The text ``crawlfw port`` prints (without the diffs)."""
    out = []
    changed = [r for r in reports if r.changes]
    for r in changed:
        name = r.path.relative_to(root).as_posix()
        if r.new_path is not None:
            name += f" -> {r.new_path.relative_to(root).as_posix()}"
        out.append(f"{name}: {r.changes}")
    verb = "Would port" if dry_run else "Ported"
    out.append(f"{verb} {len(changed)} of {len(reports)} files: "
               f"{sum(r.changes for r in changed)} changes.")
    left: dict[tuple[str, str], list] = {}
    for r in reports:
        for note in r.notes:
            key = note.text
            if note.kind == "plugin":
                key = note.text.removeprefix("import ").split(".")[0].split(":")[0]
            left.setdefault((note.kind, key), []).append((r.path, note.line))
    if left:
        out += ["", "Left as they are:"]
        for (kind, key), places in sorted(left.items()):
            out.append(f"  {kind} {key!r} ({_NOTE_MEANING[kind]}): {_where(places, root)}")
    missing: dict[str, list] = {}
    for r in reports:
        for line, dotted in r.references:
            if not _resolves(dotted):
                missing.setdefault(dotted, []).append((r.new_path or r.path, line))
    if missing:
        out += ["", "Not in crawlfw (ImportError or AttributeError where they are used):"]
        for dotted, places in sorted(missing.items()):
            out.append(f"  {dotted}: {_where(places, root)}")
    return "\n".join(out)


@argh.arg("path", help="a Scrapy project's directory, a module or a file")
@argh.arg("--dry-run", help="show the diff, write nothing")
@command(project=False, default_settings={"LOG_ENABLED": False},
         help="Port a Scrapy project, module or file to crawlfw (in place)")
def port(path, *, dry_run=False, settings=None):
    """Port ``path`` in place and print what changed and what was left (see the
    module's docstring); exit status 0, 2 when ``path`` cannot be ported."""
    root, reports = port_path(path, dry_run=dry_run)
    if dry_run:
        for r in reports:
            sys.stdout.write(r.diff)
    print(format_report(root, reports, dry_run=dry_run))


class Command(ScrapyCommand):
    """``crawlfw port [--dry-run] <path>``."""

    requires_project = False
    default_settings = {"LOG_ENABLED": False}

    def syntax(self):
        return "[--dry-run] <path>"

    def short_desc(self):
        return "Port a Scrapy project, module or file to crawlfw (in place)"

    def add_options(self, parser):
        ScrapyCommand.add_options(self, parser)
        parser.add_option("--dry-run", dest="dry_run", action="store_true",
                          help="show the diff, write nothing")

    def run(self, args, opts):
        if len(args) != 1:
            raise UsageError()
        delegate(self, port.impl, args[0], dry_run=opts.dry_run, settings=self.settings)
