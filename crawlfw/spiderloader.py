"""SpiderLoader: finds the spider classes of a project (``SPIDER_MODULES``).

Scrapy 1.2's ``scrapy.spiderloader.SpiderLoader`` API: ``from_settings(settings)``,
``load(name)``, ``find_by_request(request)``, ``list()``.

A spider module that cannot be imported (a syntax error, a missing dependency, an error
raised at import) is described in one line naming the module, the file and line, and the
error (:func:`load_error_message`): ``Could not load spiders from module
'proj.spiders.broken' (proj/spiders/broken.py, line 4): SyntaxError: invalid syntax``.
With ``SPIDER_LOADER_WARN_ONLY`` (Scrapy 2) that line is logged once as a WARNING and the
module skipped, the other modules loaded; without it the error is raised as Scrapy raises
it, and the ``crawlfw`` commands print the line and exit with status 1
(:func:`spider_load_error`).
"""

import logging
import os
import warnings
from collections import defaultdict
from importlib import import_module
from typing import Protocol

from crawlfw.utils.spider import iter_spider_classes

__all__ = ["SpiderLoader", "DummySpiderLoader", "SpiderLoaderProtocol", "get_spider_loader",
           "load_error_message", "spider_load_error"]

logger = logging.getLogger(__name__)

#: The attribute under which :class:`SpiderLoader` leaves its one-line description on
#: an import error it lets through (read by :func:`spider_load_error`).
_MESSAGE_ATTR = "_crawlfw_spider_load_error"

_warned: set = set()  # (module, message) warned about in this process


def _error_location(error: BaseException, module_name: str | None):
    """``(file, line)`` where importing ``module_name`` failed with ``error``, or None.

    A syntax error is placed where it is (possibly in a module the spider module
    imports); any other error at the innermost line of ``module_name``'s own code that
    the traceback went through (the ``import`` of a missing dependency, the statement
    that raised).
    """
    if isinstance(error, SyntaxError) and error.filename:
        return error.filename, error.lineno
    found = None
    tb = error.__traceback__
    while tb is not None:
        if module_name is not None and tb.tb_frame.f_globals.get("__name__") == module_name:
            found = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _shown_path(path: str) -> str:
    """``path`` relative to the working directory when it is under it, else as is."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith(os.pardir) else relative


def load_error_message(what: str, error: BaseException, module_name: str | None = None) -> str:
    """One line saying why spiders could not be loaded from ``what``.

    Args:
        what: what was being loaded, e.g. ``"module 'proj.spiders.broken'"`` or
            ``"file 'spider.py'"``.
        error: the exception importing it raised.
        module_name: the name of the module being imported (its frames in the
            traceback give the line), or None.

    Returns:
        ``"Could not load spiders from <what> (<file>, line <n>): <Type>: <message>"``;
        without ``(<file>, line <n>)`` when no line of the module was reached (a module
        that does not exist).
    """
    location = _error_location(error, module_name)
    where = ""
    if location is not None:
        filename, line = location
        where = f" ({_shown_path(filename)}, line {line})" if line else f" ({_shown_path(filename)})"
    text = error.msg if isinstance(error, SyntaxError) and error.msg else str(error)
    reason = f"{type(error).__name__}: {text}" if text else type(error).__name__
    return f"Could not load spiders from {what}{where}: {reason}"


def spider_load_error(error: BaseException) -> str | None:
    """The one-line description :class:`SpiderLoader` gave ``error`` (an exception raised
    importing a spider module), or None for any other exception."""
    return getattr(error, _MESSAGE_ATTR, None)


class SpiderLoader:
    """Load spiders from the modules listed in ``SPIDER_MODULES`` (and their submodules).

    Args:
        settings: the settings; ``SPIDER_MODULES`` (list of dotted module names) and
            ``SPIDER_LOADER_WARN_ONLY`` (bool) are read.

    Raises:
        Exception: what importing a spider module raised (``SyntaxError``,
            ``ImportError``...), unless ``SPIDER_LOADER_WARN_ONLY`` is true: the module
            is then skipped with one WARNING (once per process) naming it, the file and
            line, and the error. :func:`spider_load_error` gives the same line for the
            raised exception.
    """

    def __init__(self, settings):
        self.spider_modules = settings.getlist("SPIDER_MODULES")
        self.warn_only = settings.getbool("SPIDER_LOADER_WARN_ONLY")
        self._spiders = {}
        self._found = defaultdict(list)
        self._load_all_spiders()

    def _load_spiders(self, module):
        for spcls in iter_spider_classes(module):
            self._found[spcls.name].append((module.__name__, spcls.__name__))
            self._spiders[spcls.name] = spcls

    def _import(self, name: str):
        """The module ``name``, or None when it is broken and skipped (warn only)."""
        try:
            return import_module(name)
        except Exception as e:
            message = load_error_message(f"module {name!r}", e, name)
            if not self.warn_only:
                try:
                    setattr(e, _MESSAGE_ATTR, message)
                except AttributeError:  # an exception type without a __dict__
                    pass
                raise
            if (name, message) not in _warned:
                _warned.add((name, message))
                logger.warning("%s; skipped (SPIDER_LOADER_WARN_ONLY)", message)
            return None

    def _walk(self, name: str):
        """Yield module ``name`` and, for a package, its submodules (depth first, as
        :func:`crawlfw.utils.misc.walk_modules`), each broken one skipped or raised."""
        module = self._import(name)
        if module is None:
            return
        yield module
        if hasattr(module, "__path__"):
            from pkgutil import iter_modules  # only for packages of spiders

            for _, subname, ispkg in iter_modules(module.__path__):
                fullname = f"{name}.{subname}"
                if ispkg:
                    yield from self._walk(fullname)
                else:
                    submodule = self._import(fullname)
                    if submodule is not None:
                        yield submodule

    def _load_all_spiders(self):
        for name in self.spider_modules:
            for module in self._walk(name):
                self._load_spiders(module)
        dupes = [
            f"  {len(locations)} spiders named {name!r}: "
            + ", ".join(f"{cls} in {mod}" for mod, cls in locations)
            for name, locations in self._found.items()
            if len(locations) > 1
        ]
        if dupes:
            warnings.warn(
                "There are several spiders with the same name:\n" + "\n".join(dupes)
                + "\n  This can cause unexpected behavior.",
                category=UserWarning,
                stacklevel=2,
            )

    @classmethod
    def from_settings(cls, settings):
        return cls(settings)

    def load(self, spider_name: str):
        """Return the Spider class named ``spider_name``.

        Raises:
            KeyError: no spider has that name ("Spider not found: <name>").
        """
        try:
            return self._spiders[spider_name]
        except KeyError:
            raise KeyError(f"Spider not found: {spider_name}") from None

    def find_by_request(self, request) -> list:
        """Names of the spiders whose ``handles_request(request)`` is true."""
        return [name for name, cls in self._spiders.items() if cls.handles_request(request)]

    def list(self) -> list:
        """Names of every spider found."""
        return list(self._spiders.keys())


class SpiderLoaderProtocol(Protocol):
    """What a ``SPIDER_LOADER_CLASS`` provides (Scrapy 2's protocol): a
    ``from_settings`` class method and ``load``, ``list`` and ``find_by_request``.
    :class:`SpiderLoader` and :class:`DummySpiderLoader` follow it."""

    @classmethod
    def from_settings(cls, settings):
        """Returns: an instance of the class for ``settings``."""

    def load(self, spider_name: str):
        """Returns: the spider class named ``spider_name``.

        Raises:
            KeyError: no spider has that name.
        """

    def find_by_request(self, request) -> list:
        """Returns: the names of the spiders that can handle ``request`` (list[str])."""

    def list(self) -> list:
        """Returns: the names of every spider of the project (list[str])."""


class DummySpiderLoader:
    """A spider loader that loads no spiders (Scrapy 2.12): for code that needs a
    ``SPIDER_LOADER_CLASS`` but no project (``SPIDER_MODULES`` is not read)."""

    @classmethod
    def from_settings(cls, settings):
        return cls()

    def load(self, spider_name: str):
        """Raises: KeyError, always."""
        raise KeyError("DummySpiderLoader doesn't load any spiders")

    def find_by_request(self, request) -> list:
        """Returns: []."""
        return []

    def list(self) -> list:
        """Returns: []."""
        return []


def get_spider_loader(settings):
    """The spider loader of ``settings`` (Scrapy 2): an instance of its
    ``SPIDER_LOADER_CLASS`` (default :class:`SpiderLoader`), made with
    ``from_settings`` on a frozen copy of the settings.

    Raises:
        ImportError, NameError: ``SPIDER_LOADER_CLASS`` cannot be loaded; whatever the
            loader raises (a spider module that cannot be imported, without
            ``SPIDER_LOADER_WARN_ONLY``).
    """
    from crawlfw.utils.misc import load_object

    cls_path = settings.get("SPIDER_LOADER_CLASS") or "crawlfw.spiderloader.SpiderLoader"
    return load_object(cls_path).from_settings(settings.frozencopy())
