"""Configuration helpers: component lists, ``crawlfw.cfg`` files, project environment.

Scrapy 1.2's ``scrapy.utils.conf``, with ``scrapy.cfg`` renamed ``crawlfw.cfg``
(a ``scrapy.cfg`` is still found, with a deprecation warning) and
``SCRAPY_SETTINGS_MODULE`` renamed ``CRAWLFW_SETTINGS_MODULE``.
"""

import numbers
import os
import sys
import warnings
from collections.abc import Callable
from configparser import ConfigParser
from pathlib import Path
from typing import Any

from crawlfw.exceptions import CrawlfwDeprecationWarning, UsageError
from crawlfw.settings import BaseSettings
from crawlfw.utils.deprecate import update_classpath

__all__ = [
    "build_component_list",
    "arglist_to_dict",
    "closest_crawlfw_cfg",
    "closest_scrapy_cfg",
    "init_env",
    "get_config",
    "get_sources",
    "feed_complete_default_values_from_settings",
    "feed_process_params_from_cli",
]

CFG_NAME = 'crawlfw.cfg'
_LEGACY_CFG_NAME = 'scrapy.cfg'
_warned_legacy_cfgs = set()  # scrapy.cfg paths warned about in this process
ENVVAR = 'CRAWLFW_SETTINGS_MODULE'


def build_component_list(compdict: Any, custom: Any = None,
                         convert: Callable[[Any], Any] = update_classpath) -> list[Any]:
    """Order the components of a ``{path: order}`` mapping.

    Components whose order is None are disabled and left out; the rest are sorted
    by order, ties keeping the mapping's order (Scrapy 1.2 semantics).

    Args:
        compdict: a dict or :class:`~crawlfw.settings.BaseSettings` of
            ``{dotted path or class: order (int/float) or None}``.
        custom: backward compatibility with the old ``(base, custom)`` signature:
            a list/tuple is returned converted (``compdict`` is ignored); a dict
            updates ``compdict`` first.
        convert: maps each key to its current path (default:
            :func:`~crawlfw.utils.deprecate.update_classpath`).

    Returns:
        list: the component paths (or classes), lowest order first.

    Raises:
        ValueError: two keys convert to the same path ("Some paths in ... convert
            to the same object"), or an order is not a real number or None (the
            message names the component).
    """

    def _check_components(complist):
        if len({convert(c) for c in complist}) != len(complist):
            raise ValueError(f'Some paths in {list(complist)!r} convert to the same object, '
                             'please update your settings')

    def _map_keys(compdict):
        if isinstance(compdict, BaseSettings):
            compbs = BaseSettings()
            for k, v in compdict.items():
                prio = compdict.getpriority(k)
                if compbs.getpriority(convert(k)) == prio:
                    raise ValueError(f'Some paths in {list(compdict.keys())!r} convert to the '
                                     'same object, please update your settings')
                compbs.set(convert(k), v, priority=prio)
            return compbs
        _check_components(compdict)
        return {convert(k): v for k, v in compdict.items()}

    def _validate_values(compdict):
        for name, value in compdict.items():
            if value is not None and not isinstance(value, numbers.Real):
                raise ValueError(f'Invalid value {value!r} for component {name}, '
                                 'please provide a real number or None instead')

    # Backward compatibility with the old (base, custom) call signature
    if isinstance(custom, (list, tuple)):
        _check_components(custom)
        return type(custom)(convert(c) for c in custom)
    if custom is not None:
        compdict.update(custom)

    if compdict is None:
        return []
    _validate_values(compdict)
    mapped = _map_keys(compdict)
    enabled = [(k, v) for k, v in mapped.items() if v is not None]
    enabled.sort(key=lambda kv: kv[1])
    return [k for k, _ in enabled]


def arglist_to_dict(arglist):
    """Turn ``['arg1=val1', 'arg2=val2']`` into ``{'arg1': 'val1', 'arg2': 'val2'}``.

    Args:
        arglist (list[str]): ``name=value`` strings; the value may contain ``=``.

    Returns:
        dict[str, str]

    Raises:
        ValueError: an element has no ``=`` (the message names it).
    """
    result = {}
    for arg in arglist:
        name, sep, value = arg.partition('=')
        if not sep:
            raise ValueError(f"Invalid argument {arg!r}: expected NAME=VALUE")
        result[name] = value
    return result


def closest_crawlfw_cfg(path='.', prevpath=None):
    """Return the path of the closest ``crawlfw.cfg``, searching ``path`` and its parents.

    In each directory ``crawlfw.cfg`` is preferred; a ``scrapy.cfg`` is accepted
    with a :class:`~crawlfw.exceptions.CrawlfwDeprecationWarning` (once per file and
    process).

    Args:
        path (str): directory to start from.
        prevpath: internal (the previously searched directory).

    Returns:
        str: absolute path of the file, or ``''`` when none is found.
    """
    path = os.path.abspath(path)
    while path != prevpath:
        cfgfile = os.path.join(path, CFG_NAME)
        if os.path.exists(cfgfile):
            return cfgfile
        legacy = os.path.join(path, _LEGACY_CFG_NAME)
        if os.path.exists(legacy):
            if legacy not in _warned_legacy_cfgs:
                # once per file and process (a command looks for the file several
                # times), attributed to the file itself: no source line of crawlfw's
                _warned_legacy_cfgs.add(legacy)
                warnings.warn_explicit(f"Using {legacy}: rename it to {CFG_NAME}",
                                       CrawlfwDeprecationWarning, legacy, 0)
            return legacy
        prevpath, path = path, os.path.dirname(path)
    return ''


#: Scrapy's name for :func:`closest_crawlfw_cfg`.
closest_scrapy_cfg = closest_crawlfw_cfg


def init_env(project='default', set_syspath=True):
    """Prepare the environment to run inside a project directory.

    Sets ``CRAWLFW_SETTINGS_MODULE`` from the ``[settings]`` section of the
    configuration (option ``project``) and appends the project directory (the one
    holding the closest ``crawlfw.cfg``) to ``sys.path``.

    Args:
        project (str): option name in the ``[settings]`` section.
        set_syspath (bool): whether to add the project directory to ``sys.path``.
    """
    cfg = get_config()
    if cfg.has_option('settings', project):
        os.environ[ENVVAR] = cfg.get('settings', project)
    closest = closest_crawlfw_cfg()
    if closest:
        projdir = os.path.dirname(closest)
        if set_syspath and projdir not in sys.path:
            sys.path.append(projdir)


def get_config(use_closest=True):
    """Read every configuration source into one parser.

    Args:
        use_closest (bool): include the closest project ``crawlfw.cfg``.

    Returns:
        configparser.ConfigParser: later sources override earlier ones.
    """
    cfg = ConfigParser()
    cfg.read(get_sources(use_closest))
    return cfg


def get_sources(use_closest=True):
    """Return the configuration files read by :func:`get_config`, lowest precedence first.

    ``/etc/crawlfw.cfg``, ``c:\\crawlfw\\crawlfw.cfg``,
    ``$XDG_CONFIG_HOME/crawlfw.cfg`` (default ``~/.config``), ``~/.crawlfw.cfg``,
    then the closest project ``crawlfw.cfg`` when ``use_closest``.

    Args:
        use_closest (bool): append the closest project file ('' when none).

    Returns:
        list[str]
    """
    xdg_config_home = os.environ.get('XDG_CONFIG_HOME') or os.path.expanduser('~/.config')
    sources = [
        '/etc/crawlfw.cfg',
        r'c:\crawlfw\crawlfw.cfg',
        xdg_config_home + '/crawlfw.cfg',
        os.path.expanduser('~/.crawlfw.cfg'),
    ]
    if use_closest:
        sources.append(closest_crawlfw_cfg())
    return sources


def feed_complete_default_values_from_settings(feed: dict[str, Any], settings: BaseSettings,
                                               uri: str | None = None) -> dict[str, Any]:
    """A copy of one ``FEEDS`` entry's options with each missing option taken from its
    ``FEED_*`` setting, as Scrapy 2's feed export does.

    Filled when missing: ``format`` (the extension of ``uri``, when ``uri`` is given),
    ``batch_item_count`` (``FEED_EXPORT_BATCH_ITEM_COUNT``), ``encoding``
    (``FEED_EXPORT_ENCODING``), ``fields`` (``FEED_EXPORT_FIELDS``, None when empty),
    ``store_empty`` (``FEED_STORE_EMPTY``), ``uri_params`` (``FEED_URI_PARAMS``),
    ``item_export_kwargs`` (``{}``) and ``indent`` (``FEED_EXPORT_INDENT``).

    Args:
        feed: the entry's options (not changed).
        settings: the crawl's settings.
        uri: the entry's URI, for its ``format``.

    Returns:
        dict: the completed options.
    """
    out = dict(feed)
    if uri is not None:
        out.setdefault("format", Path(uri).suffix.removeprefix("."))
    out.setdefault("batch_item_count", settings.getint("FEED_EXPORT_BATCH_ITEM_COUNT"))
    out.setdefault("encoding", settings["FEED_EXPORT_ENCODING"])
    out.setdefault("fields", settings.getdictorlist("FEED_EXPORT_FIELDS") or None)
    out.setdefault("store_empty", settings.getbool("FEED_STORE_EMPTY"))
    out.setdefault("uri_params", settings["FEED_URI_PARAMS"])
    out.setdefault("item_export_kwargs", {})
    if settings["FEED_EXPORT_INDENT"] is None:
        out.setdefault("indent", None)
    else:
        out.setdefault("indent", settings.getint("FEED_EXPORT_INDENT"))
    return out


def feed_process_params_from_cli(settings: BaseSettings, output: list[str], *,
                                 overwrite_output: list[str] | None = None,
                                 ) -> dict[str, dict[str, Any]]:
    """Turn the ``-o``/``-O`` values of ``crawl``/``runspider`` into a ``FEEDS`` dict,
    as Scrapy 2's commands do.

    Each value is ``URI`` or ``URI:FORMAT`` (the format after the last colon when it is
    a key of ``FEED_EXPORTERS`` + ``_BASE``; otherwise the URI's extension is the
    format). ``-`` as the URI means the standard output (``stdout:``) when a format
    follows it. ``-O`` values get ``overwrite: True``. ``FEEDS`` entries of the settings
    win over the same URIs given here.

    Args:
        settings: the command's settings (their ``FEED_EXPORTERS`` and ``FEEDS``).
        output: the ``-o`` values.
        overwrite_output: the ``-O`` values.

    Returns:
        dict: ``{uri: {"format": str[, "overwrite": True]}}``, merged with ``FEEDS``.

    Raises:
        UsageError: both ``-o`` and ``-O`` values were given, or a format is unknown
            (the message names it and lists the valid ones).
    """
    valid_formats = [name for name, path in settings.getwithbase("FEED_EXPORTERS").items()
                     if path is not None]

    def check_valid_format(output_format: str) -> None:
        if output_format not in valid_formats:
            raise UsageError(
                f"Unrecognized output format '{output_format}'. "
                f"Set a supported one ({tuple(valid_formats)}) "
                "after a colon at the end of the output URI (i.e. -o/-O "
                "<URI>:<FORMAT>) or as a file extension.")

    overwrite = False
    if overwrite_output:
        if output:
            raise UsageError("Please use only one of -o/--output and -O/--overwrite-output")
        output = overwrite_output
        overwrite = True

    result: dict[str, dict[str, Any]] = {}
    for element in output or ():
        feed_uri, sep, feed_format = element.rpartition(":")
        if sep and feed_format in valid_formats:
            if feed_uri == "-":
                feed_uri = "stdout:"
        else:
            feed_uri = element
            feed_format = Path(element).suffix.replace(".", "")
        check_valid_format(feed_format)
        result[feed_uri] = {"format": feed_format}
        if overwrite:
            result[feed_uri]["overwrite"] = True
    result.update(settings.getdict("FEEDS"))
    return result
