"""Helpers shared by the item loader and its processors (Scrapy 1.2's
``scrapy.loader.common``)."""

import weakref
from functools import partial

from crawlfw.utils.python import get_func_args

__all__ = ["ProcessorError", "processor_error", "see_through_processor_error",
           "wrap_loader_context"]

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


class ProcessorError(ValueError):
    """A processor (or a loader running one) raised.

    The message names the processor, the value and the original error. The error raised
    is also an instance of the original error's class (a ``TypeError`` stays a
    ``TypeError``), as Scrapy 1.2, which let the original error through, promises
    (its ``test_compose``: ``Compose(str.upper, stop_on_none=False)(None)`` raises
    ``TypeError``). ``original_type`` is that class.
    """

    original_type = ValueError


# original error class -> subclass of (ProcessorError, that class); None when the two
# cannot be combined (an exception class with its own C layout or constructor).
_error_classes = {}


def processor_error(message, error):
    """Build the error to raise when a processor raised ``error``.

    Args:
        message: the text of the new error.
        error: the exception the processor raised.

    Returns:
        A :class:`ProcessorError` that is also an instance of ``type(error)`` (or of
        the original class when ``error`` is itself a :class:`ProcessorError`), else a
        plain :class:`ProcessorError` when the two classes cannot be combined. Raise it
        ``from error``.
    """
    original = getattr(error, "original_type", type(error))
    if issubclass(ProcessorError, original):
        return ProcessorError(message)
    cls = _error_classes.get(original, False)
    if cls is False:
        try:
            cls = type(
                f"ProcessorError_{original.__name__}",
                (ProcessorError, original),
                {"original_type": original, "__module__": __name__},
            )
        except TypeError:  # layout conflict
            cls = None
        _error_classes[original] = cls
    if cls is not None:
        try:
            return cls(message)
        except Exception:  # a constructor wanting other arguments (UnicodeDecodeError)
            pass
    return ProcessorError(message)


def see_through_processor_error(error):
    """Mark itemloaders' plain ``ValueError`` of a failing ``MapCompose``/``Compose``
    function with the class of the function's error.

    itemloaders raises ``ValueError("Error in MapCompose with ...") from e``; this sets
    that error's ``original_type`` to ``e``'s class (or to ``e.original_type`` when ``e``
    is itself a :class:`ProcessorError`: nested processors), so that
    :func:`processor_error` builds an error of the function's class.

    Args:
        error: an exception a processor raised.

    Returns:
        True when ``error`` is such a ``ValueError`` (now marked), else False.
    """
    cause = error.__cause__
    if (type(error) is ValueError and cause is not None
            and str(error).startswith(("Error in MapCompose with", "Error in Compose with"))):
        error.original_type = getattr(cause, "original_type", type(cause))
        return True
    return False
