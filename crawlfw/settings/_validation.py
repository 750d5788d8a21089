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

from crawlfw.settings import _FALSE_STRINGS, _TRUE_STRINGS, SETTINGS_PRIORITIES, default_settings

__all__ = ["NUMBER_SETTINGS", "setting_types", "check_settings"]

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
    problems = []
    for name, kind in sorted(setting_types().items()):
        problem = _check_one(settings, name, kind)
        if problem is not None:
            source = _SOURCES.get(settings.getpriority(name))
            problems.append(f"{problem} ({source})" if source else problem)
    return problems
