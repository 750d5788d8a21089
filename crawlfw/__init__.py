"""crawlfw: a web crawling and data extraction framework.

Scrapy 1.2's public interface (``scrapy`` renamed ``crawlfw``) on an actor runtime:
Pykka actors exchanging typed message dicts, pycurl ``CurlMulti`` transfers.

Top-level names (imported lazily, so ``import crawlfw`` stays cheap):
``Request``, ``FormRequest``, ``Item``, ``Field``, ``Selector``, ``Spider``,
``__version__``, ``version_info``.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the lazy names below, for type checkers
    from crawlfw.http import FormRequest, Request
    from crawlfw.item import Field, Item
    from crawlfw.selector import Selector
    from crawlfw.spiders import Spider

__version__ = "0.1.0"
version_info = tuple(int(p) for p in __version__.split("."))

__all__ = [
    "__version__",
    "version_info",
    "Request",
    "FormRequest",
    "Item",
    "Field",
    "Selector",
    "Spider",
]

_LAZY = {
    "Request": "crawlfw.http",
    "FormRequest": "crawlfw.http",
    "Item": "crawlfw.item",
    "Field": "crawlfw.item",
    "Selector": "crawlfw.selector",
    "Spider": "crawlfw.spiders",
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'crawlfw' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


def _install_moved_modules():
    # Scrapy 1.2's deprecated alias modules (crawlfw.spider, crawlfw.dupefilter...) are
    # served by an import hook from crawlfw._moved's table; they have no files.
    from crawlfw._moved import MOVED_MODULES, install_moved_modules

    install_moved_modules(MOVED_MODULES)


_install_moved_modules()
