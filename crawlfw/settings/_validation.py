"""Type checks of the known numeric and boolean settings, made once before a crawl starts.

A bad value (``-s DOWNLOAD_DELAY=abc``) would otherwise surface deep inside an actor as
it reads the setting, and fail the crawl half-way. :func:`check_settings` reads every
known setting the way the components read it (:meth:`BaseSettings.getint`,
``getfloat``, ``getbool``) and reports each one that cannot be read, naming the setting,
what it expects, the value and where the value came from.

The expected type of a setting is that of its default in
:mod:`crawlfw.settings.default_settings` (bool, int, float), except the settings listed
in :data:`NUMBER_SETTINGS`, whose integer defaults stand for seconds that may have a
fraction.
"""

from collections.abc import Iterable
from typing import Any

from crawlfw.settings import _FALSE_STRINGS, _TRUE_STRINGS, SETTINGS_PRIORITIES, default_settings

__all__ = ["AUTO", "NUMBER_SETTINGS", "OFF", "check_settings", "parse_cpu_affinity",
           "setting_types"]

#: Settings with an integer default that are read as floats (seconds).
NUMBER_SETTINGS = frozenset({
    "CLOSESPIDER_TIMEOUT", "DNS_TIMEOUT", "DOWNLOAD_DELAY", "DOWNLOAD_TIMEOUT",
    "SUPERVISOR_RESTART_WINDOW",
})

_SOURCES = {
    SETTINGS_PRIORITIES["cmdline"]: "set with -s on the command line",
    SETTINGS_PRIORITIES["spider"]: "set in the spider's custom_settings",
    SETTINGS_PRIORITIES["project"]: "set in the project's settings",
    SETTINGS_PRIORITIES["command"]: "set by the command",
}

_types = None


def setting_types() -> dict:
    """``{setting name: 'bool' | 'int' | 'float'}`` for every boolean and numeric default
    setting (computed once)."""
    global _types
    if _types is None:
        types = {}
        for name in dir(default_settings):
            if not name.isupper():
                continue
            value = getattr(default_settings, name)
            if isinstance(value, bool):
                types[name] = "bool"
            elif isinstance(value, int):
                types[name] = "float" if name in NUMBER_SETTINGS else "int"
            elif isinstance(value, float):
                types[name] = "float"
        _types = types
    return _types


def _check_one(settings, name: str, kind: str) -> str | None:
    value = settings.get(name)
    if value is None:
        return None
    if kind == "bool":
        if isinstance(value, (bool, int)) or value in _TRUE_STRINGS or value in _FALSE_STRINGS:
            return None
        try:
            int(value)
            return None
        except (TypeError, ValueError):
            return (f"Setting {name!r} must be a boolean (0/1, True/False, true/false), "
                    f"got {value!r}")
    try:
        (settings.getint if kind == "int" else settings.getfloat)(name)
    except ValueError as e:
        return str(e)
    return None


def check_settings(settings) -> list[str]:
    """Check every known boolean and numeric setting of ``settings``.

    Args:
        settings: a :class:`~crawlfw.settings.BaseSettings`.

    Returns:
        One message per bad setting, in name order, e.g. ``"Setting 'DOWNLOAD_DELAY'
        must be a number, got 'abc' (set with -s on the command line)"``; ``[]`` when
        all are fine.
    """
    found = []
    for name, kind in setting_types().items():
        found.append((name, _check_one(settings, name, kind)))
    found.append(("CPU_AFFINITY", _check_cpu_affinity(settings)))
    found.extend(_check_seen_set(settings))
    problems = []
    for name, problem in sorted(found, key=lambda found: found[0]):
        if problem is not None:
            source = _SOURCES.get(settings.getpriority(name))
            problems.append(f"{problem} ({source})" if source else problem)
    return problems


def _check_seen_set(settings) -> list[tuple[str, str | None]]:
    """The range problems of ``DUPEFILTER_MEMORY_LIMIT`` and ``DUPEFILTER_BLOOM_ERROR_RATE``
    (their types are checked with the others), as the seen set states them."""
    from crawlfw.utils._seen import BloomSeenSet, SeenSet

    found: list[tuple[str, str | None]] = []
    for name, check in (("DUPEFILTER_MEMORY_LIMIT", SeenSet.check_limit),
                        ("DUPEFILTER_BLOOM_ERROR_RATE", BloomSeenSet.check_rate)):
        try:
            value = (settings.getint if name.endswith("LIMIT") else settings.getfloat)(name)
        except (TypeError, ValueError):
            continue  # reported as a type problem
        if name.endswith("RATE") and not value:
            continue  # 0: exact, the default
        try:
            check(value)
        except ValueError as e:
            found.append((name, f"Setting {name!r} {str(e).removeprefix(name + ' ')}"))
    return found


def _check_cpu_affinity(settings) -> str | None:
    """The problem with ``CPU_AFFINITY`` (``'auto'``, ``'off'`` or CPU numbers), or None."""
    try:
        parse_cpu_affinity(settings.get("CPU_AFFINITY", "auto"))
    except ValueError as e:
        return str(e)
    return None


#: ``CPU_AFFINITY`` value: one CPU chosen and moved by crawlfw.
AUTO = "auto"
#: ``CPU_AFFINITY`` value: the operating system places the threads.
OFF = "off"

_EXPECTED = "Setting 'CPU_AFFINITY' must be 'auto', 'off' or CPU numbers, got"
_OFF_VALUES = frozenset({"off", "none", "false", "no", ""})


def parse_cpu_affinity(value: Any) -> str | frozenset[int]:
    """Read a ``CPU_AFFINITY`` setting value.

    Args:
        value: ``'auto'``; ``'off'`` (also None, False, ``'none'``, ``''``); a CPU
            number (int or digit str); CPU numbers as a list/tuple/set of ints or a
            comma-separated str (``'0,2'``).

    Returns:
        :data:`AUTO`, :data:`OFF`, or a non-empty frozenset of CPU numbers.

    Raises:
        ValueError: anything else (a negative number, a word other than the above),
            with a message naming ``CPU_AFFINITY``, what it expects and the value.
    """
    if value is None or value is False:
        return OFF
    if isinstance(value, str):
        text = value.strip().lower()
        if text == AUTO:
            return AUTO
        if text in _OFF_VALUES:
            return OFF
        parts: Iterable[Any] = [part.strip() for part in text.split(",")]
    elif isinstance(value, bool):
        raise ValueError(f"{_EXPECTED} {value!r}")
    elif isinstance(value, int):
        parts = [value]
    elif isinstance(value, (list, tuple, set, frozenset)):
        parts = value
    else:
        raise ValueError(f"{_EXPECTED} {value!r}")
    cpus = set()
    for part in parts:
        try:
            if isinstance(part, bool):
                raise ValueError
            cpu = int(part)
        except (TypeError, ValueError):
            raise ValueError(f"{_EXPECTED} {value!r} ({part!r} is not a CPU number)") from None
        if cpu < 0:
            raise ValueError(f"{_EXPECTED} {value!r} (CPU numbers start at 0)")
        cpus.add(cpu)
    if not cpus:
        raise ValueError(f"{_EXPECTED} {value!r} (no CPU named)")
    return frozenset(cpus)
