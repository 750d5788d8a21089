"""No module of ``crawlfw/`` is over :data:`MAX_LINES` lines (issue 19, "Done when"): a
newcomer reads a module in one sitting, and a subsystem that outgrows that is split by
what it does (as ``actors/messages/`` is, by message family).

The allowance list :data:`TOO_BIG_YET` names the modules still over the limit; it may
only shrink: a module on it that comes under the limit fails
``test_too_big_yet_is_up_to_date`` until it is struck off, so it cannot grow back
unseen (as ``tests/actors/test_handler_types.py``'s ``UNTYPED_YET`` does for handlers).
"""

from pathlib import Path

import crawlfw

PACKAGE = Path(crawlfw.__file__).parent

#: Lines a module of crawlfw/ may have (``wc -l``: newline characters).
MAX_LINES = 800

#: Modules (paths under crawlfw/) over :data:`MAX_LINES` today, each waiting for its split.
#: Strike one off once it is split; never add one.
TOO_BIG_YET: set[str] = set()


def _lines(path: Path) -> int:
    with path.open("rb") as f:
        return f.read().count(b"\n")


def _sizes() -> dict[str, int]:
    """Path under crawlfw/ (POSIX) -> its number of lines, for every ``.py`` module."""
    return {path.relative_to(PACKAGE).as_posix(): _lines(path)
            for path in sorted(PACKAGE.rglob("*.py"))}


def test_no_module_over_the_limit():
    too_big = {name: n for name, n in _sizes().items()
               if n > MAX_LINES and name not in TOO_BIG_YET}
    assert too_big == {}, (
        f"modules over {MAX_LINES} lines (split each by what its parts do; see "
        f"actors/messages/ and actors/_tree.py): {too_big}")


def test_too_big_yet_is_up_to_date():
    sizes = _sizes()
    missing = sorted(name for name in TOO_BIG_YET if name not in sizes)
    assert missing == [], f"TOO_BIG_YET names modules that do not exist: {missing}"
    split = sorted(name for name in TOO_BIG_YET if sizes[name] <= MAX_LINES)
    assert split == [], f"now at most {MAX_LINES} lines, strike off TOO_BIG_YET: {split}"


def test_the_limit_is_checked_on_real_sizes():
    # the walk sees the package's modules, nested ones included, with their real sizes
    sizes = _sizes()
    assert sizes["actors/messages/__init__.py"] > 100
    assert "actors/supervisor.py" in sizes and "core/frontier/redis_frontier.py" in sizes
