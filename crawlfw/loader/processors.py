"""The item loader processors (Scrapy 1.2's ``scrapy.loader.processors``): the very
objects of the ``itemloaders`` package (``itemloaders.processors``), as in Scrapy 2, so
``from itemloaders.processors import TakeFirst`` and ``from crawlfw.loader.processors
import TakeFirst`` give the same class.

- ``MapCompose(*functions, **default_loader_context)``: each function applied to each
  value (a non-iterable value is wrapped in a list; None results are dropped, list
  results flattened); a raising function: ``ValueError("Error in MapCompose with
  <function> value=... error='<Type>: ...'")``.
- ``Compose(*functions, stop_on_none=True, **default_loader_context)``: the functions
  chained on the whole value; a raising function: ``ValueError("Error in Compose with
  ...")``.
- ``TakeFirst()``: the first value that is not None or ``''``.
- ``Identity()``: the values unchanged.
- ``SelectJmes(expression)``: a JMESPath query (needs ``jmespath``).
- ``Join(separator=' ')``: ``separator.join(values)``.
"""

from itemloaders.processors import Compose, Identity, Join, MapCompose, SelectJmes, TakeFirst

__all__ = ["MapCompose", "Compose", "TakeFirst", "Identity", "SelectJmes", "Join"]
