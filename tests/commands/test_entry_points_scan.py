"""may_declare_entry_points (#20, start-up): the command line reads the distributions'
entry_points.txt itself and imports importlib.metadata only when one may declare
``crawlfw.commands``. Whenever importlib.metadata finds an entry point of the group the
scan says True, on a table of sys.path layouts; where it says False, none is found."""

import sys
import zipfile
from importlib import metadata

import pytest

from crawlfw.commands._custom import may_declare_entry_points

GROUP = "crawlfw.commands"
DECLARES = f"[{GROUP}]\nhello = epcmds:Hello\n"
OTHER = "[console_scripts]\nhello = epcmds:main\n"


def _dist(folder, entry_points):
    folder.mkdir(parents=True)
    (folder / "METADATA").write_text("Metadata-Version: 2.1\nName: d\nVersion: 1.0\n")
    if entry_points is not None:
        (folder / "entry_points.txt").write_text(entry_points)


def _layout(tmp_path, name):
    """A list of sys.path entries for the layout ``name``."""
    lib = tmp_path / "lib"
    lib.mkdir()
    if name == "empty dir":
        pass
    elif name == "dist-info declaring":
        _dist(lib / "d-1.0.dist-info", DECLARES)
    elif name == "dist-info, upper-case suffix, declaring":
        _dist(lib / "D-1.0.DIST-INFO", DECLARES)
    elif name == "dist-info of another group":
        _dist(lib / "d-1.0.dist-info", OTHER)
    elif name == "dist-info without entry points":
        _dist(lib / "d-1.0.dist-info", None)
    elif name == "egg-info folder declaring":
        _dist(lib / "d.egg-info", DECLARES)
    elif name == "egg-info file":
        (lib / "d.egg-info").write_text("Metadata-Version: 1.0\nName: d\n")
    elif name == "egg declaring":
        egg = lib / "d-1.0.egg"
        _dist(egg / "EGG-INFO", DECLARES)
        return [str(egg)]
    elif name == "zip on the path":
        archive = lib / "d.zip"
        with zipfile.ZipFile(archive, "w") as z:
            z.writestr("d-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: d\nVersion: 1\n")
            z.writestr("d-1.0.dist-info/entry_points.txt", DECLARES)
        return [str(archive)]
    elif name == "missing entry":
        return [str(tmp_path / "nowhere")]
    elif name == "group named in a comment only":
        _dist(lib / "d-1.0.dist-info", f"# not {GROUP}\n[console_scripts]\nx = y:z\n")
    return [str(lib)]


LAYOUTS = ["empty dir", "dist-info declaring", "dist-info, upper-case suffix, declaring",
           "dist-info of another group", "dist-info without entry points",
           "egg-info folder declaring", "egg-info file", "egg declaring", "zip on the path",
           "missing entry", "group named in a comment only"]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_scan_never_misses_what_importlib_metadata_finds(tmp_path, monkeypatch, layout):
    entries = _layout(tmp_path, layout)
    monkeypatch.setattr(sys, "path", entries)
    found = [ep.name for ep in metadata.entry_points(group=GROUP)]
    answer = may_declare_entry_points(GROUP)
    if found:
        assert answer is True
    if not answer:
        assert found == []
    expected_false = {"empty dir", "dist-info of another group", "dist-info without entry points",
                      "egg-info file", "missing entry"}
    assert answer is (layout not in expected_false)


def test_another_distribution_finder_makes_the_scan_say_maybe(tmp_path, monkeypatch):
    class Finder:
        @staticmethod
        def find_distributions(context=None):
            return iter(())

    monkeypatch.setattr(sys, "path", _layout(tmp_path, "empty dir"))
    assert may_declare_entry_points(GROUP) is False
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder])
    assert may_declare_entry_points(GROUP) is True
