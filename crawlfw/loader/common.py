"""Helpers shared by the item loader and its processors (Scrapy 1.2's
``scrapy.loader.common``)."""

import weakref
from functools import partial

from crawlfw.utils.python import get_func_args

__all__ = ["wrap_loader_context"]

# callable -> whether it takes a ``loader_context`` argument. Weak keys: processors
# defined per call (lambdas in a callback) must not be kept alive by the cache.
_accepts_context = weakref.WeakKeyDictionary()


def _takes_loader_context(function):
    # A bound method is a new object on every attribute access: key on its function.
    key = getattr(function, "__func__", function)
    try:
        return _accepts_context[key]
    except (KeyError, TypeError):  # TypeError: not weak-referenceable or unhashable
        pass
    accepts = "loader_context" in get_func_args(function)
    try:
        _accepts_context[key] = accepts
    except TypeError:
        pass
    return accepts


def wrap_loader_context(function, context):
    """Pre-load the loader context into a processor that accepts it.

    Args:
        function: a processor: any callable taking one value, optionally with a
            ``loader_context`` argument as well.
        context: the loader context (a mapping).

    Returns:
        ``functools.partial(function, loader_context=context)`` when ``function`` has
        a ``loader_context`` argument, else ``function`` itself.
    """
    if _takes_loader_context(function):
        return partial(function, loader_context=context)
    return function
