"""Built-in item loader processors (Scrapy 1.2's ``scrapy.loader.processors``).

A processor is any callable taking one positional argument (the values: an iterable
for input and output processors) and returning the processed value(s). It may also
accept a ``loader_context`` keyword argument to receive the loader's context.
"""

from collections import ChainMap

from crawlfw.loader.common import processor_error, wrap_loader_context
from crawlfw.utils.misc import arg_to_iter

__all__ = ["MapCompose", "Compose", "TakeFirst", "Identity", "SelectJmes", "Join"]


def _name(function):
    return getattr(function, "__qualname__", None) or type(function).__name__


class MapCompose:
    """Apply each function to every value in turn, flattening the results.

    The input is turned into a list (``None`` -> ``[]``, a single value -> ``[value]``);
    the first function is applied to each value, then the second to each result, and
    so on. A function returning ``None`` drops that value; one returning a list adds
    all its members.

    Args:
        *functions: one-argument callables (they may accept ``loader_context``).
        **default_loader_context: context for the functions; the loader's own
            context takes precedence over it.

    Raises:
        crawlfw.loader.common.ProcessorError: (when called) a function raised; the
            message names the function, the value and the original error. It is a
            ``ValueError`` and also an instance of the original error's class (a
            ``TypeError`` can be caught as such, as in Scrapy 1.2).
    """

    def __init__(self, *functions, **default_loader_context):
        self.functions = functions
        self.default_loader_context = default_loader_context

    def __call__(self, value, loader_context=None):
        values = arg_to_iter(value)
        if loader_context:
            context = ChainMap(loader_context, self.default_loader_context)
        else:
            context = self.default_loader_context
        for func in self.functions:
            wrapped = wrap_loader_context(func, context)
            next_values = []
            for v in values:
                try:
                    next_values += arg_to_iter(wrapped(v))
                except Exception as e:
                    raise processor_error(
                        f"Error in MapCompose with {_name(func)} value={v!r} "
                        f"error='{type(e).__name__}: {e}'",
                        e,
                    ) from e
            values = next_values
        return values


class Compose:
    """Chain functions: each one receives the previous one's result (the first one
    receives the whole input).

    Args:
        *functions: one-argument callables (they may accept ``loader_context``).
        stop_on_none: stop and return None as soon as a function returns None
            (default True).
        **default_loader_context: context for the functions; the loader's own
            context takes precedence over it.

    Raises:
        crawlfw.loader.common.ProcessorError: (when called) a function raised; the
            message names the function, the value and the original error. It is a
            ``ValueError`` and also an instance of the original error's class (a
            ``TypeError`` can be caught as such, as in Scrapy 1.2).
    """

    def __init__(self, *functions, **default_loader_context):
        self.functions = functions
        self.stop_on_none = default_loader_context.get("stop_on_none", True)
        self.default_loader_context = default_loader_context

    def __call__(self, value, loader_context=None):
        if loader_context:
            context = ChainMap(loader_context, self.default_loader_context)
        else:
            context = self.default_loader_context
        for func in self.functions:
            if value is None and self.stop_on_none:
                break
            try:
                value = wrap_loader_context(func, context)(value)
            except Exception as e:
                raise processor_error(
                    f"Error in Compose with {_name(func)} value={value!r} "
                    f"error='{type(e).__name__}: {e}'",
                    e,
                ) from e
        return value


class TakeFirst:
    """Return the first value that is neither None nor ``''`` (None if there is none).
    The usual output processor of single-valued fields."""

    def __call__(self, values):
        for value in values:
            if value is not None and value != "":
                return value
        return None


class Identity:
    """Return the values unchanged."""

    def __call__(self, values):
        return values


class SelectJmes:
    """Query a JSON-like value (dict/list) with a JMESPath expression.

    Takes one value at a time: use it inside ``MapCompose`` for a list of values.

    Args:
        json_path: the JMESPath expression (https://jmespath.org/specification.html).

    Raises:
        ImportError: the ``jmespath`` package is not installed.
        jmespath.exceptions.ParseError: ``json_path`` is not a valid expression.
    """

    def __init__(self, json_path):
        self.json_path = json_path
        try:
            import jmespath
        except ImportError as e:
            raise ImportError("SelectJmes needs the jmespath package: pip install jmespath") from e
        self.compiled_path = jmespath.compile(self.json_path)

    def __call__(self, value):
        """Returns: the part of ``value`` the expression selects (None if nothing)."""
        return self.compiled_path.search(value)


class Join:
    """Join the values with ``separator`` (default ``' '``) into one string."""

    def __init__(self, separator=" "):
        self.separator = separator

    def __call__(self, values):
        return self.separator.join(values)
