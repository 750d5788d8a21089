"""Deprecated module paths of Scrapy 1.2 (``scrapy.contrib.*``, ``scrapy.spider``...):
importing one warns and gives the names of the module that replaced it, as Scrapy 1.2's
``from scrapy.X import *`` shims do.

Aliases have no files: an import hook, :class:`MovedModulesFinder` (PEP 451), serves
them from tables of old -> new module names: :data:`MOVED_MODULES` (``crawlfw.spider``,
``crawlfw.dupefilter``...; installed by ``crawlfw/__init__.py``) and the tables of the
``crawlfw.contrib`` and ``crawlfw.contrib_exp`` packages. Deprecated modules with
behaviour of their own (``crawlfw.log``, ``crawlfw.conf``, ``crawlfw.spidermanager``)
and the obsolete ones that only raise ``ImportError`` (``crawlfw.project``,
``crawlfw.stats``) remain files.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType

from crawlfw.exceptions import CrawlfwDeprecationWarning

__all__ = ["reexport", "install_moved_modules", "MovedModulesFinder", "MOVED_MODULES"]

#: Scrapy 1.2's deprecated one-line alias modules: old name -> (new name, names or None
#: for all of the new module's public names).
MOVED_MODULES = {
    "crawlfw.command": ("crawlfw.commands", None),
    "crawlfw.dupefilter": ("crawlfw.dupefilters", None),
    "crawlfw.linkextractor": ("crawlfw.linkextractors", None),
    "crawlfw.spider": ("crawlfw.spiders", None),
    "crawlfw.squeue": ("crawlfw.squeues", None),
    "crawlfw.statscol": ("crawlfw.statscollectors", None),
    "crawlfw.utils.decorator": ("crawlfw.utils.decorators", None),
}


def _public_names(module) -> list:
    """``__all__`` plus every other public name that is not a module: Scrapy 1.2's
    modules mostly had no ``__all__``, so ``from scrapy.X import *`` gave all of them."""
    names = list(getattr(module, "__all__", ()))
    names += [n for n, v in vars(module).items()
              if not n.startswith("_") and n not in names and not isinstance(v, ModuleType)]
    return names


def reexport(old: str, new: str, namespace: dict, names=None, stacklevel: int = 3) -> list:
    """Warn that module ``old`` is deprecated, then copy ``new``'s names into
    ``namespace`` (the old module's globals).

    Args:
        old: the deprecated module's name.
        new: the module replacing it.
        namespace: the dict to fill.
        names: the names to copy; None: ``new.__all__`` and its other public names
            (modules excepted).
        stacklevel: passed to ``warnings.warn`` (the default points at the line
            importing ``old`` when called from ``old``'s body).

    Returns:
        list[str]: the names copied (for ``__all__``).
    """
    warnings.warn(f"Module `{old}` is deprecated, use `{new}` instead",
                  CrawlfwDeprecationWarning, stacklevel=stacklevel)
    module = importlib.import_module(new)
    names = _public_names(module) if names is None else list(names)
    namespace.update({name: getattr(module, name) for name in names})
    return names


class MovedModulesFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Import hook answering for deprecated module names.

    Args:
        moved: old module name -> ``(new module name, names or None)``.
        packages: names of (empty) packages that only hold moved modules; importing
            them does not warn.
    """

    marker = "crawlfw-moved-modules"

    def __init__(self, moved: dict, packages=()):
        self.moved = dict(moved)
        self.packages = set(packages)

    def update(self, moved: dict, packages=()) -> None:
        self.moved.update(moved)
        self.packages.update(packages)

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.moved and fullname not in self.packages:
            return None
        prefix = fullname + "."
        is_package = fullname in self.packages or any(
            name.startswith(prefix) for name in (*self.moved, *self.packages)
        )
        return importlib.util.spec_from_loader(fullname, self, is_package=is_package)

    def create_module(self, spec):
        return None  # the default module object

    def exec_module(self, module):
        entry = self.moved.get(module.__name__)
        if module.__spec__.submodule_search_locations is not None:
            module.__path__ = []
        if entry is None:
            module.__doc__ = f"Deprecated modules of Scrapy 1.2's {module.__name__} package."
            return
        new, names = entry
        module.__doc__ = f"Deprecated: use :mod:`{new}`."
        # stacklevel 3 (reexport, here, then importlib's frames are skipped): the warning
        # names the line importing the module
        module.__all__ = reexport(module.__name__, new, module.__dict__, names, stacklevel=3)


def install_moved_modules(moved: dict, packages=()) -> MovedModulesFinder:
    """Register ``moved`` with the process-wide :class:`MovedModulesFinder` (installed in
    ``sys.meta_path`` on first use) and return it."""
    for finder in sys.meta_path:
        if getattr(finder, "marker", None) == MovedModulesFinder.marker:
            finder.update(moved, packages)
            return finder
    finder = MovedModulesFinder(moved, packages)
    sys.meta_path.append(finder)
    return finder
