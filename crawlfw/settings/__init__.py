"""Settings with per-key priorities (Scrapy 1.2's ``scrapy.settings``).

A setting's value is stored with the priority it was set at; a later ``set`` only
replaces it when its priority is higher than or equal to the stored one. The named
priorities, lowest first, are ``default`` (0, from ``default_settings``),
``command`` (10, a command's defaults), ``project`` (20, the project's settings
module), ``spider`` (30, ``Spider.custom_settings``) and ``cmdline`` (40, ``-s``
options).

Thread safety: a :class:`BaseSettings` is not locked. The crawler freezes its
settings before any actor starts, after which any number of threads may read
them concurrently; mutate settings from one thread only, before crawling.
"""

import copy
import json
import warnings
from collections.abc import MutableMapping
from importlib import import_module
from pprint import pformat
from typing import Any

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.settings import default_settings

__all__ = [
    "SETTINGS_PRIORITIES",
    "get_settings_priority",
    "SettingsAttribute",
    "BaseSettings",
    "Settings",
    "iter_default_settings",
    "overridden_settings",
]

#: Named priorities: a value set at a higher priority wins.
SETTINGS_PRIORITIES = {
    'default': 0,
    'command': 10,
    'project': 20,
    'spider': 30,
    'cmdline': 40,
}

_BOOL_ERROR = ("Supported values for boolean settings are 0/1, True/False, "
               "'0'/'1', 'True'/'False' and 'true'/'false'")
_TRUE_STRINGS = ('True', 'true')
_FALSE_STRINGS = ('False', 'false')


def get_settings_priority(priority):
    """Return the numeric value of a priority.

    Args:
        priority: a key of :data:`SETTINGS_PRIORITIES` (str) or a number.

    Returns:
        int: the numeric priority (numbers are returned unchanged).

    Raises:
        KeyError: ``priority`` is a string that is not a known priority name.
    """
    if isinstance(priority, str):
        try:
            return SETTINGS_PRIORITIES[priority]
        except KeyError:
            raise KeyError(
                f"Unknown settings priority {priority!r}; "
                f"expected one of {sorted(SETTINGS_PRIORITIES, key=SETTINGS_PRIORITIES.get)} "
                f"or a number") from None
    return priority


#: Value types ``copy.deepcopy`` returns as they are (its atomic types).
_IMMUTABLE = frozenset({type(None), bool, int, float, complex, str, bytes})


class SettingsAttribute:
    """A setting's value with the priority it was set at (internal to settings).

    Args:
        value: the value. A :class:`BaseSettings` value takes the highest of
            ``priority`` and its own :meth:`BaseSettings.maxpriority`.
        priority (int): numeric priority.
    """

    __slots__ = ('value', 'priority')

    def __init__(self, value, priority):
        self.value = value
        if isinstance(value, BaseSettings):
            self.priority = max(value.maxpriority(), priority)
        else:
            self.priority = priority

    def set(self, value, priority):
        """Replace the value if ``priority`` >= the stored priority.

        When the stored value is a :class:`BaseSettings` (a component dict), the new
        value is wrapped in a :class:`BaseSettings` at ``priority``.

        Args:
            value: the new value.
            priority (int): numeric priority.
        """
        if priority >= self.priority:
            if isinstance(self.value, BaseSettings):
                value = BaseSettings(value, priority=priority)
            self.value = value
            self.priority = priority

    def __deepcopy__(self, memo):
        """What ``copy.deepcopy`` makes of it, made directly: an immutable value (most
        settings) is shared, any other deep-copied with ``memo`` (a crawler copies all
        the settings twice at start-up; the generic path costs ~10 ms)."""
        new = object.__new__(self.__class__)
        memo[id(self)] = new
        value = self.value
        new.value = value if value.__class__ in _IMMUTABLE else copy.deepcopy(value, memo)
        new.priority = self.priority
        return new

    def __str__(self):
        return f"<SettingsAttribute value={self.value!r} priority={self.priority}>"

    __repr__ = __str__


_NO_DEFAULT = object()


def _load_component(key: Any) -> Any:
    """The object a component key names: ``key`` itself when it is not a string, the
    object its import path names (a ``scrapy.`` path as its ``crawlfw.`` one), or None
    when the path names nothing importable."""
    if not isinstance(key, str):
        return key
    from crawlfw.utils.misc import load_object

    path = 'crawlfw.' + key[len('scrapy.'):] if key.startswith('scrapy.') else key
    try:
        return load_object(path)
    except (ImportError, NameError, TypeError, ValueError):
        return None


def _object_path(obj: Any) -> str:
    module = getattr(obj, '__module__', None)
    qualname = getattr(obj, '__qualname__', None) or getattr(obj, '__name__', None)
    if module and qualname:
        return f"{module}.{qualname}"
    return repr(obj)


class BaseSettings(MutableMapping):
    """A dict-like store of settings, each with its own priority; can be frozen.

    ``settings[name]`` returns the value, or None when the setting is absent.

    Args:
        values: initial settings: a dict, a JSON object string, or a
            :class:`BaseSettings` (whose per-key priorities are kept). None: empty.
        priority: priority name or number for ``values`` (ignored for a
            :class:`BaseSettings`).
    """

    def __init__(self, values: Any = None, priority: str | int = 'project') -> None:
        self.frozen = False
        self.attributes = {}
        self.update(values, priority)

    # -- reading -----------------------------------------------------------------

    def __getitem__(self, opt_name: str) -> Any:
        attr = self.attributes.get(opt_name)
        if attr is None:
            return None
        return attr.value

    def __contains__(self, name: object) -> bool:
        return name in self.attributes

    def get(self, name: str, default: Any = None) -> Any:
        """Return a setting's value unconverted.

        Args:
            name (str): setting name.
            default: returned when the setting is absent or None.

        Returns:
            The stored value, or ``default``.
        """
        value = self[name]
        return value if value is not None else default

    def getbool(self, name: str, default: Any = False) -> bool:
        """Return a setting as a bool.

        ``1``, ``'1'``, ``True``, ``'True'``, ``'true'`` are true; ``0``, ``'0'``,
        ``False``, ``'False'``, ``'false'`` and None are false (environment
        variables arrive as strings).

        Args:
            name (str): setting name.
            default: used when the setting is absent.

        Returns:
            bool

        Raises:
            ValueError: the value is none of the accepted ones; the message names
                the setting and the value.
        """
        got = self.get(name, default)
        if got is None:
            return False
        if isinstance(got, bool):
            return got
        try:
            return bool(int(got))
        except (ValueError, TypeError):
            if got in _TRUE_STRINGS:
                return True
            if got in _FALSE_STRINGS:
                return False
            raise ValueError(f"{_BOOL_ERROR}; setting {name!r} has value {got!r}") from None

    def getint(self, name: str, default: Any = 0) -> int:
        """Return a setting as an int.

        Args:
            name (str): setting name.
            default: used when the setting is absent.

        Returns:
            int

        Raises:
            ValueError: the value cannot be converted; the message names the setting.
        """
        got = self.get(name, default)
        try:
            return int(got)
        except (ValueError, TypeError):
            raise ValueError(
                f"Setting {name!r} must be an integer, got {got!r}") from None

    def getfloat(self, name: str, default: Any = 0.0) -> float:
        """Return a setting as a float.

        Args:
            name (str): setting name.
            default: used when the setting is absent.

        Returns:
            float

        Raises:
            ValueError: the value cannot be converted; the message names the setting.
        """
        got = self.get(name, default)
        try:
            return float(got)
        except (ValueError, TypeError):
            raise ValueError(
                f"Setting {name!r} must be a number, got {got!r}") from None

    def getlist(self, name: str, default: Any = None) -> list[Any]:
        """Return a setting as a new list.

        A string is split on ``','`` (``'one,two'`` -> ``['one', 'two']``); any
        other iterable is copied into a list.

        Args:
            name (str): setting name.
            default: used when the setting is absent (None: ``[]``).

        Returns:
            list

        Raises:
            ValueError: the value is not iterable; the message names the setting.
        """
        value = self.get(name, default or [])
        if isinstance(value, str):
            value = value.split(',')
        try:
            return list(value)
        except TypeError:
            raise ValueError(
                f"Setting {name!r} must be a list or a comma-separated string, "
                f"got {value!r}") from None

    def getdict(self, name: str, default: Any = None) -> dict[Any, Any]:
        """Return a setting as a new dict.

        A string is parsed as a JSON object; a :class:`BaseSettings` is converted
        to a plain dict of its values (priorities and frozenness are lost).

        Args:
            name (str): setting name.
            default: used when the setting is absent (None: ``{}``).

        Returns:
            dict

        Raises:
            ValueError: a string value is not a JSON object, or the value is not a
                mapping; the message names the setting.
        """
        value = self.get(name, default or {})
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError as e:
                raise ValueError(
                    f"Setting {name!r} is not valid JSON ({e}): {value!r}") from None
        try:
            return dict(value)
        except (TypeError, ValueError):
            raise ValueError(
                f"Setting {name!r} must be a dict or a JSON object string, "
                f"got {value!r}") from None

    def getdictorlist(self, name: str, default: Any = None) -> dict[Any, Any] | list[Any]:
        """Return a setting as a new dict or list (Scrapy 2.1+; ``FEED_EXPORT_FIELDS``).

        A dict or list is deep-copied, a tuple becomes a list; a string is parsed as
        JSON when it is a JSON object or array, else split on ``','``
        (``'one,two'`` -> ``['one', 'two']``).

        Args:
            name (str): setting name.
            default: used when the setting is absent.

        Returns:
            dict | list: ``{}`` when the value (or ``default``) is None.

        Raises:
            ValueError: the value is none of those types; the message names the setting.
        """
        value = self.get(name, default)
        if value is None:
            return {}
        if isinstance(value, str):
            try:
                loaded = json.loads(value)
            except ValueError:
                return value.split(',')
            if isinstance(loaded, (dict, list)):
                return loaded
            return value.split(',')
        if isinstance(value, tuple):
            return list(value)
        if isinstance(value, BaseSettings):
            return value.copy_to_dict()
        if not isinstance(value, (dict, list)):
            raise ValueError(
                f"Setting {name!r} must be a dict, list, tuple, or string, "
                f"got {type(value).__name__}: {value!r}")
        return copy.deepcopy(value)

    def getwithbase(self, name: str) -> "BaseSettings":
        """Merge a component dict setting with its ``<name>_BASE`` counterpart.

        Args:
            name (str): e.g. ``'DOWNLOADER_MIDDLEWARES'``.

        Returns:
            BaseSettings: the ``_BASE`` entries overlaid with ``name``'s entries,
            each keeping its priority.
        """
        compbs = BaseSettings()
        compbs.update(self[name + '_BASE'])
        compbs.update(self[name])
        return compbs

    def get_component_priority_dict_with_base(self, name: str) -> "BaseSettings":
        """Merge a component priority dict setting with its ``<name>_BASE``, keys that
        name the same object (an import path and the class itself, or two paths to it)
        counting as one (Scrapy 2.13).

        The setting's keys override the ``_BASE`` ones naming the same object, and keep
        the form they were given in; entries whose value is None are dropped. Two keys
        of the setting naming one object: the last is kept, with one WARNING.

        Args:
            name (str): e.g. ``'DOWNLOADER_MIDDLEWARES'``.

        Returns:
            BaseSettings: ``{class or path: order}``.

        Raises:
            ValueError: ``name`` is not a string.
        """
        if not isinstance(name, str):
            raise ValueError(f"Base setting key must be a string, got {name}")
        restored: dict[str, Any] = {}
        seen: set[Any] = set()

        def normalize(key: Any) -> Any:
            loaded = _load_component(key)
            if loaded is None:
                return key
            path = _object_path(loaded)
            restored[path] = key
            if loaded in seen:
                import logging

                logging.getLogger(__name__).warning(
                    "Setting %s contains multiple keys that refer to the same object: %s. "
                    "Only the last one will be kept.", name, path)
            seen.add(loaded)
            return path

        result = {}
        for key, value in dict(self[name + '_BASE'] or {}).items():
            loaded = _load_component(key)
            if loaded is None:
                result[key] = value
            else:
                restored[_object_path(loaded)] = key
                result[_object_path(loaded)] = value
        result.update({normalize(k): v for k, v in dict(self[name] or {}).items()})
        return BaseSettings({restored.get(k, k): v for k, v in result.items() if v is not None})

    def getpriority(self, name: str) -> int | None:
        """Return the numeric priority of a setting, or None when it is absent."""
        attr = self.attributes.get(name)
        if attr is None:
            return None
        return attr.priority

    def maxpriority(self):
        """Return the highest priority stored, or ``SETTINGS_PRIORITIES['default']`` when empty."""
        if self.attributes:
            return max(attr.priority for attr in self.attributes.values())
        return get_settings_priority('default')

    # -- writing -----------------------------------------------------------------

    def __setitem__(self, name, value):
        self.set(name, value)

    def set(self, name, value, priority='project'):
        """Store a setting unless it already holds a higher-priority value.

        Args:
            name (str): setting name.
            value: the value.
            priority: priority name or number.

        Raises:
            TypeError: the settings are frozen.
        """
        self._assert_mutability()
        priority = get_settings_priority(priority)
        attr = self.attributes.get(name)
        if attr is None:
            if isinstance(value, SettingsAttribute):
                self.attributes[name] = value
            else:
                self.attributes[name] = SettingsAttribute(value, priority)
        else:
            attr.set(value, priority)

    def setdefault(self, name, default=None, priority='project'):
        """Set ``name`` to ``default`` at ``priority`` unless it is present; return its value.

        Raises:
            TypeError: the settings are frozen and ``name`` is absent.
        """
        if name not in self:
            self.set(name, default, priority)
            return default
        return self.attributes[name].value

    def pop(self, name, default=_NO_DEFAULT):
        """Remove ``name`` and return its value (or ``default`` when absent).

        Raises:
            KeyError: ``name`` is absent and no ``default`` was given.
            TypeError: the settings are frozen.
        """
        try:
            value = self.attributes[name].value
        except KeyError:
            if default is _NO_DEFAULT:
                raise
            return default
        del self[name]
        return value

    def add_to_list(self, name, item):
        """Append ``item`` to the list setting ``name`` unless it is in it already
        (Scrapy 2.13), whatever the setting's priority, which is kept.

        Raises:
            TypeError: the settings are frozen.
            ValueError: the setting is not a list (:meth:`getlist`).
        """
        value = self.getlist(name)
        if item not in value:
            self.set(name, [*value, item], self.getpriority(name) or 0)

    def remove_from_list(self, name, item):
        """Remove every occurrence of ``item`` from the list setting ``name`` (Scrapy
        2.13), whatever the setting's priority, which is kept.

        Raises:
            ValueError: ``item`` is not in the list (the message names the setting).
            TypeError: the settings are frozen.
        """
        value = self.getlist(name)
        if item not in value:
            raise ValueError(f"{item!r} not found in the {name} setting ({value!r}).")
        self.set(name, [v for v in value if v != item], self.getpriority(name) or 0)

    def set_in_component_priority_dict(self, name, cls, priority):
        """Put ``cls`` in the component priority dict setting ``name`` with order
        ``priority`` (Scrapy 2.13), replacing the import-path keys that name it, whatever
        the setting's priority, which is kept.

        Args:
            name (str): e.g. ``'DOWNLOADER_MIDDLEWARES'``.
            cls (type): the component class.
            priority (int | None): its order (None: disabled).
        """
        components = self.getdict(name)
        for key in tuple(components):
            if isinstance(key, str) and _load_component(key) is cls:
                del components[key]
        components[cls] = priority
        self.set(name, components, self.getpriority(name) or 0)

    def setdefault_in_component_priority_dict(self, name, cls, priority):
        """Put ``cls`` in the component priority dict setting ``name`` with order
        ``priority`` unless it is there already, as a class or an import path (Scrapy
        2.13), whatever the setting's priority, which is kept."""
        components = self.getdict(name)
        if any(_load_component(key) is cls for key in components):
            return
        components[cls] = priority
        self.set(name, components, self.getpriority(name) or 0)

    def replace_in_component_priority_dict(self, name, old_cls, new_cls, priority=None):
        """Replace ``old_cls`` by ``new_cls`` in the component priority dict setting
        ``name`` (Scrapy 2.13), whatever the setting's priority, which is kept.

        Every key naming ``old_cls`` (the class, import paths) is dropped.

        Args:
            name (str): e.g. ``'DOWNLOADER_MIDDLEWARES'``.
            old_cls (type): the component to replace.
            new_cls (type): its replacement.
            priority (int | None): the order of ``new_cls``; None: ``old_cls``'s.

        Raises:
            KeyError: ``old_cls`` is not in the setting, or is there disabled (None).
        """
        components = self.getdict(name)
        old_priority = None
        for key in tuple(components):
            if _load_component(key) is not old_cls:
                continue
            if (old_priority := components.pop(key)) is None:
                break
        if old_priority is None:
            raise KeyError(f"{old_cls} not found in the {name} setting ({components!r}).")
        components[new_cls] = old_priority if priority is None else priority
        self.set(name, components, self.getpriority(name) or 0)

    def setdict(self, values, priority='project'):
        """Alias of :meth:`update`."""
        self.update(values, priority)

    def setmodule(self, module, priority='project'):
        """Store every upper-case global of a module.

        Args:
            module: a module object or its dotted path (str).
            priority: priority name or number.

        Raises:
            TypeError: the settings are frozen.
            ImportError: the module path cannot be imported.
        """
        self._assert_mutability()
        if isinstance(module, str):
            module = import_module(module)
        for key in dir(module):
            if key.isupper():
                self.set(key, getattr(module, key), priority)

    def update(self, values, priority='project'):
        """Store several settings.

        Args:
            values: a dict, a JSON object string, a :class:`BaseSettings` (each key
                keeps its own priority; ``priority`` is ignored) or None.
            priority: priority name or number.

        Raises:
            TypeError: the settings are frozen.
            ValueError: a string that is not a JSON object.
        """
        self._assert_mutability()
        if isinstance(values, str):
            try:
                values = json.loads(values)
            except ValueError as e:
                raise ValueError(f"Settings string is not valid JSON ({e}): {values!r}") from None
            if not isinstance(values, dict):
                raise ValueError(f"Settings JSON must be an object, got {values!r}")
        if values is None:
            return
        if isinstance(values, BaseSettings):
            for name, value in values.items():
                self.set(name, value, values.getpriority(name))
        else:
            for name, value in values.items():
                self.set(name, value, priority)

    def delete(self, name, priority='project'):
        """Delete a setting if ``priority`` >= its stored priority.

        Args:
            name (str): setting name.
            priority: priority name or number.

        Raises:
            TypeError: the settings are frozen.
            KeyError: the setting is absent.
        """
        self._assert_mutability()
        priority = get_settings_priority(priority)
        if name not in self.attributes:
            raise KeyError(name)
        if priority >= self.attributes[name].priority:
            del self.attributes[name]

    def __delitem__(self, name):
        self._assert_mutability()
        del self.attributes[name]

    def _assert_mutability(self):
        if self.frozen:
            raise TypeError("Trying to modify an immutable Settings object")

    # -- copies --------------------------------------------------------------------

    def copy(self):
        """Return a deep copy (same class, values and priorities; not frozen if this is)."""
        return copy.deepcopy(self)

    def freeze(self):
        """Make these settings immutable: later changes raise TypeError."""
        self.frozen = True

    def frozencopy(self):
        """Return a frozen deep copy."""
        settings = self.copy()
        settings.freeze()
        return settings

    def __iter__(self):
        return iter(self.attributes)

    def __len__(self):
        return len(self.attributes)

    def _to_dict(self):
        return {k: (v._to_dict() if isinstance(v, BaseSettings) else v)
                for k, v in self.items()}

    def copy_to_dict(self):
        """Return a deep copy as plain nested dicts (priorities are dropped)."""
        return self.copy()._to_dict()

    def _repr_pretty_(self, p, cycle):
        if cycle:
            p.text(repr(self))
        else:
            p.text(pformat(self.copy_to_dict()))

    def __repr__(self):
        return f"<{type(self).__name__} {len(self)} settings{' frozen' if self.frozen else ''}>"

    # -- deprecated (Scrapy < 1.0) ---------------------------------------------------

    @property
    def overrides(self):
        """Deprecated: use ``set(name, value, priority='cmdline')``."""
        warnings.warn("`Settings.overrides` attribute is deprecated, use "
                      "`Settings.set(name, value, priority='cmdline')` instead",
                      category=CrawlfwDeprecationWarning, stacklevel=2)
        try:
            return self._overrides
        except AttributeError:
            self._overrides = _DictProxy(self, 'cmdline')
            return self._overrides

    @property
    def defaults(self):
        """Deprecated: use ``set(name, value, priority='default')``."""
        warnings.warn("`Settings.defaults` attribute is deprecated, use "
                      "`Settings.set(name, value, priority='default')` instead",
                      category=CrawlfwDeprecationWarning, stacklevel=2)
        try:
            return self._defaults
        except AttributeError:
            self._defaults = _DictProxy(self, 'default')
            return self._defaults


class _DictProxy(MutableMapping):
    """Writes through to settings at a fixed priority (deprecated API support)."""

    def __init__(self, settings, priority):
        self.o = {}
        self.settings = settings
        self.priority = priority

    def __len__(self):
        return len(self.o)

    def __getitem__(self, k):
        return self.o[k]

    def __setitem__(self, k, v):
        self.settings.set(k, v, priority=self.priority)
        self.o[k] = v

    def __delitem__(self, k):
        del self.o[k]

    def __iter__(self):
        return iter(self.o)


class Settings(BaseSettings):
    """The crawler's settings: :class:`BaseSettings` preloaded with every default.

    Every entry of :mod:`crawlfw.settings.default_settings` is stored at
    ``'default'`` priority; dict defaults (``DOWNLOADER_MIDDLEWARES_BASE``,
    ``DEFAULT_REQUEST_HEADERS``...) become :class:`BaseSettings` so a user dict
    updates them key by key instead of replacing them. Then ``values`` is applied.

    Args:
        values: a dict, JSON object string or :class:`BaseSettings` applied on top
            of the defaults.
        priority: priority name or number for ``values``.
    """

    def __init__(self, values: Any = None, priority: str | int = 'project') -> None:
        # values are applied after the defaults are promoted, so that user dicts
        # update (rather than replace) the default dicts.
        super().__init__()
        self.setmodule(default_settings, 'default')
        for name, val in list(self.items()):
            if isinstance(val, dict):
                self.set(name, BaseSettings(val, 'default'), 'default')
        self.update(values, priority)


def iter_default_settings():
    """Yield ``(name, value)`` for every default setting, sorted by name."""
    for name in dir(default_settings):
        if name.isupper():
            yield name, getattr(default_settings, name)


def overridden_settings(settings):
    """Yield ``(name, value)`` for every non-dict setting that differs from its default.

    Args:
        settings: a :class:`BaseSettings` (or any mapping returning None for absent keys).
    """
    for name, defvalue in iter_default_settings():
        value = settings[name]
        if not isinstance(defvalue, dict) and value != defvalue:
            yield name, value
