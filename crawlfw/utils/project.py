"""Project helpers: settings discovery and the project data directory.

Scrapy 1.2's ``scrapy.utils.project`` with ``SCRAPY_`` renamed ``CRAWLFW_``:
``CRAWLFW_SETTINGS_MODULE`` names the project's settings module,
``CRAWLFW_PROJECT`` selects the ``[settings]`` entry of ``crawlfw.cfg``, and any
other ``CRAWLFW_<NAME>`` environment variable overrides setting ``<NAME>`` (at
``project`` priority, as a string).

A Scrapy project's ``SCRAPY_SETTINGS_MODULE`` (set by its CI and deployment files) is
read when ``CRAWLFW_SETTINGS_MODULE`` is not set, with one
:class:`~crawlfw.exceptions.CrawlfwDeprecationWarning` per process, as a
``scrapy.cfg`` is (:func:`crawlfw.utils.conf.closest_crawlfw_cfg`).
"""

import os
import warnings
from collections.abc import Iterable, Iterator
from importlib import import_module
from os.path import abspath, dirname, exists, isabs, join
from pathlib import Path

from crawlfw.exceptions import CrawlfwDeprecationWarning, NotConfigured
from crawlfw.settings import Settings
from crawlfw.utils.conf import _LEGACY_CFG_NAME, CFG_NAME, closest_crawlfw_cfg, get_config, init_env

__all__ = [
    "ENVVAR",
    "DATADIR_CFG_SECTION",
    "inside_project",
    "project_data_dir",
    "data_path",
    "get_project_settings",
    "find_projects",
]

ENVVAR = 'CRAWLFW_SETTINGS_MODULE'
DATADIR_CFG_SECTION = 'datadir'
_ENV_PREFIX = 'CRAWLFW_'
_DATA_DIR = '.crawlfw'
#: Scrapy's name for ``CRAWLFW_SETTINGS_MODULE``, read when that one is not set.
_SCRAPY_ENVVAR = 'SCRAPY_SETTINGS_MODULE'


def _adopt_scrapy_settings_module() -> None:
    """Set ``CRAWLFW_SETTINGS_MODULE`` from ``SCRAPY_SETTINGS_MODULE`` when only the
    latter is set (a Scrapy project's CI or deployment files), warning once per process:
    the settings module then wins over ``crawlfw.cfg``, as ``SCRAPY_SETTINGS_MODULE``
    wins over ``scrapy.cfg`` in Scrapy, and subprocesses (``--workers``) inherit it."""
    if ENVVAR in os.environ:
        return
    module = os.environ.get(_SCRAPY_ENVVAR)
    if not module:
        return
    os.environ[ENVVAR] = module
    # attributed to the variable, not to a line of crawlfw's (as scrapy.cfg's warning)
    warnings.warn_explicit(f"Using {_SCRAPY_ENVVAR}={module} (CRAWLFW_SETTINGS_MODULE is "
                           f"not set): rename the variable to CRAWLFW_SETTINGS_MODULE",
                           CrawlfwDeprecationWarning, _SCRAPY_ENVVAR, 0)


def inside_project():
    """Return True when running inside a crawlfw project.

    That is: ``CRAWLFW_SETTINGS_MODULE`` (else ``SCRAPY_SETTINGS_MODULE``, with a
    warning) names an importable module (a warning is issued when it cannot be
    imported), or a ``crawlfw.cfg`` exists in the current directory or one of its
    parents.
    """
    _adopt_scrapy_settings_module()
    settings_module = os.environ.get(ENVVAR)
    if settings_module is not None:
        try:
            import_module(settings_module)
        except ImportError as exc:
            warnings.warn(f"Cannot import crawlfw settings module {settings_module}: {exc}",
                          stacklevel=2)
        else:
            return True
    return bool(closest_crawlfw_cfg())


def project_data_dir(project='default'):
    """Return the project's data directory, creating it if needed.

    The ``[datadir]`` option ``project`` of the configuration when set, else
    ``.crawlfw`` next to the project's ``crawlfw.cfg``.

    Args:
        project (str): the project name in ``crawlfw.cfg``.

    Returns:
        str: the directory path.

    Raises:
        NotConfigured: not inside a project, or no ``crawlfw.cfg`` to place it next to.
    """
    if not inside_project():
        raise NotConfigured("Not inside a project")
    cfg = get_config()
    if cfg.has_option(DATADIR_CFG_SECTION, project):
        d = cfg.get(DATADIR_CFG_SECTION, project)
    else:
        cfg_path = closest_crawlfw_cfg()
        if not cfg_path:
            raise NotConfigured("Unable to find crawlfw.cfg file to infer project data dir")
        d = abspath(join(dirname(cfg_path), _DATA_DIR))
    if not exists(d):
        os.makedirs(d, exist_ok=True)
    return d


def data_path(path, createdir=False):
    """Return ``path`` inside the project data directory (``.crawlfw`` outside projects).

    Args:
        path (str): a relative path (an absolute one is returned unchanged).
        createdir (bool): create the resulting directory if it does not exist.

    Returns:
        str
    """
    if not isabs(path):
        if inside_project():
            path = join(project_data_dir(), path)
        else:
            path = join(_DATA_DIR, path)
    if createdir and not exists(path):
        os.makedirs(path, exist_ok=True)
    return path


def get_project_settings():
    """Return the project's :class:`~crawlfw.settings.Settings`.

    When ``CRAWLFW_SETTINGS_MODULE`` is unset, it is set from
    ``SCRAPY_SETTINGS_MODULE`` (a Scrapy project's variable; one
    :class:`~crawlfw.exceptions.CrawlfwDeprecationWarning`) or else from
    ``crawlfw.cfg`` (``[settings]`` entry named by ``CRAWLFW_PROJECT``, default
    ``default``) and the project directory is added to ``sys.path``. The settings module is loaded
    at ``project`` priority, then every ``CRAWLFW_<NAME>`` environment variable
    sets ``<NAME>`` (a string) at ``project`` priority.

    Returns:
        Settings: a new, mutable Settings.

    Raises:
        ImportError: the settings module cannot be imported.
    """
    _adopt_scrapy_settings_module()
    if ENVVAR not in os.environ:
        project = os.environ.get('CRAWLFW_PROJECT', 'default')
        init_env(project)

    settings = Settings()
    settings_module_path = os.environ.get(ENVVAR)
    if settings_module_path:
        settings.setmodule(settings_module_path, priority='project')

    env_overrides = {k[len(_ENV_PREFIX):]: v for k, v in os.environ.items()
                     if k.startswith(_ENV_PREFIX)}
    if env_overrides:
        settings.setdict(env_overrides, priority='project')
    return settings


def find_projects(path: str | os.PathLike = ".", *, max_depth: int | None = None,
                  ignored_dirs: Iterable[str] = ()) -> Iterator[Path]:
    """Yield the root directory of every crawlfw project in ``path`` or, recursively,
    in its subdirectories (Scrapy 2.19).

    A project root is a directory holding a ``crawlfw.cfg`` (or a ``scrapy.cfg``, which
    crawlfw still reads). Once a project is found its subdirectories are not searched;
    nor are hidden directories, those named in ``ignored_dirs``, or virtual environments
    (a directory holding ``pyvenv.cfg``, whatever its name). Subdirectories are searched
    in name order.

    Args:
        path: the directory to start from.
        max_depth: how deep to search: 0 checks ``path`` only, 1 its direct
            subdirectories too, and so on; None (the default) the whole tree.
        ignored_dirs: directory names to skip wherever they occur.

    Yields:
        pathlib.Path: each project's root, ``path`` joined with the relative part.
    """
    root = Path(path)
    ignored = frozenset(ignored_dirs)
    for dirpath, dirnames, filenames in os.walk(root):
        current = Path(dirpath)
        if CFG_NAME in filenames or _LEGACY_CFG_NAME in filenames:
            dirnames.clear()
            yield current
            continue
        if "pyvenv.cfg" in filenames:
            dirnames.clear()
            continue
        if max_depth is not None and len(current.relative_to(root).parts) >= max_depth:
            dirnames.clear()
            continue
        dirnames[:] = sorted(name for name in dirnames
                             if not name.startswith(".") and name not in ignored)
