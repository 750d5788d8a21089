"""The item loader processors (Scrapy 1.2's ``scrapy.loader.processors``), built on the
``itemloaders`` package as Scrapy 2's are: ``TakeFirst``, ``Identity``, ``SelectJmes``
and ``Join`` are the very classes of ``itemloaders.processors``; ``MapCompose`` and
``Compose`` are thin subclasses of its classes (``isinstance(MapCompose(),
itemloaders.processors.MapCompose)`` holds) that keep Scrapy 1.2's promise about errors:
the ``ValueError`` itemloaders raises when a function fails is raised as a
:class:`~crawlfw.loader.common.ProcessorError` that is **also of the function's error
class**, with itemloaders' message and the function's error as ``__cause__``. So
Scrapy 1.2.3's ``test_compose`` holds again (``Compose(str.upper,
stop_on_none=False)(None)`` raises ``TypeError``) and Scrapy 2 code catching
``ValueError`` still works.

- ``MapCompose(*functions, **default_loader_context)``: each function applied to each
  value (a non-iterable value is wrapped in a list; None results are dropped, list
  results flattened); a raising function: ``ValueError("Error in MapCompose with
  <function> value=... error='<Type>: ...'")``, also of the function's error class.
- ``Compose(*functions, stop_on_none=True, **default_loader_context)``: the functions
  chained on the whole value; a raising function: ``ValueError("Error in Compose with
  ...")``, also of the function's error class.
- ``TakeFirst()``: the first value that is not None or ``''``.
- ``Identity()``: the values unchanged.
- ``SelectJmes(expression)``: a JMESPath query (needs ``jmespath``).
- ``Join(separator=' ')``: ``separator.join(values)``.
"""

from itemloaders import processors as _itemloaders_processors
from itemloaders.processors import Identity, Join, SelectJmes, TakeFirst

from crawlfw.loader.common import processor_error, see_through_processor_error

__all__ = ["MapCompose", "Compose", "TakeFirst", "Identity", "SelectJmes", "Join"]


def _reraised(error):
    """The error to raise instead of ``error`` (itemloaders' plain ``ValueError`` made of
    the same class as its cause), or None to let ``error`` through unchanged."""
    if not see_through_processor_error(error):
        return None
    return processor_error(str(error), error)


class _RaisesOfTheFunctionClass:
    """The ``__call__`` of :class:`MapCompose` and :class:`Compose`: itemloaders'
    ``ValueError`` re-raised as one that is also of the failing function's error class."""

    def __call__(self, value, loader_context=None):
        try:
            return super().__call__(value, loader_context)
        except ValueError as error:
            new = _reraised(error)
            if new is None:
                raise
            raise new from error.__cause__


class MapCompose(_RaisesOfTheFunctionClass, _itemloaders_processors.MapCompose):
    """``itemloaders.processors.MapCompose`` whose error is also of the failing function's
    error class (see the module docstring).

    Args:
        *functions: callables applied in turn to each value (optionally taking
            ``loader_context``).
        **default_loader_context: the default loader context of the functions.

    Raises:
        ProcessorError: a function raised; it is also an instance of that error's class
            and has it as ``__cause__``.
    """


class Compose(_RaisesOfTheFunctionClass, _itemloaders_processors.Compose):
    """``itemloaders.processors.Compose`` whose error is also of the failing function's
    error class (see the module docstring).

    Args:
        *functions: callables chained on the whole value (optionally taking
            ``loader_context``).
        **default_loader_context: the default loader context of the functions;
            ``stop_on_none`` (default True) stops the chain at a None value.

    Raises:
        ProcessorError: a function raised; it is also an instance of that error's class
            and has it as ``__cause__``.
    """
