"""Item loaders: populate items from selectors and values through processors
(Scrapy 1.2's ``scrapy.loader``).

How values flow (Scrapy 1.2 documentation, "Item Loaders"):

1. Processors are callables taking one positional argument (the values).
2. Values given to ``add_*``/``replace_*`` are made iterable first: ``None`` ->
   ``[]``, a single value (including a ``str``, ``dict`` or item) -> ``[value]``.
3. The field's input processor runs at once on the values of each call; its result
   is appended to the field's collected values (a list, flattened one level).
4. The field's output processor runs in :meth:`ItemLoader.load_item` on all the
   collected values; its result is assigned to the item (unless it is None).
5. The processors of a field are, most precedence first: the loader attributes
   ``<field>_in`` / ``<field>_out``; the Field metadata ``input_processor`` /
   ``output_processor``; the loader's ``default_input_processor`` /
   ``default_output_processor``.
6. A processor accepting a ``loader_context`` argument receives the loader context.
7. The context holds the constructor's keyword arguments plus ``item``,
   ``selector`` and ``response``; it can be changed through ``loader.context``.
8. ``MapCompose``/``Compose`` keyword arguments are a default context for their
   functions, under the loader's own.

Any item type ``itemadapter`` adapts can be loaded (a dataclass, attrs or pydantic
instance, a dict, an :class:`~crawlfw.item.Item`); processors may also come from a
dataclass or attrs field's ``metadata`` (``input_processor``/``output_processor``).

:class:`ItemLoader` is a subclass of ``itemloaders.ItemLoader`` (the package Scrapy 2
builds its loaders on; ``crawlfw.loader.processors`` are its processors). It adds what
Scrapy's own subclass adds (the ``response`` argument, ``Item`` as the default item
class) and keeps three Scrapy 1.2 behaviours itemloaders changed:

- the error a processor raises is wrapped in a ``ValueError`` that is also of the
  original error's class and whose message names the processor by name (itemloaders
  raises a plain ``ValueError`` naming ``type`` for a function processor, and no
  processor at all for an output processor);
- asking for an undeclared field of an ``Item`` raises ``KeyError("<Item class> does
  not support field: <name>")``;
- the "must be instantiated with a selector or a response" error;
- the fields an item given to the loader already holds are left alone unless a value
  is loaded for them (itemloaders makes them the first collected values, so an output
  processor such as ``Identity`` turns ``"x"`` into ``["x"]``, and a nested loader
  collects them a second time into its parent).

A processor that raises makes the loader raise a ``ValueError`` (that is also an
instance of the original error's class, as in Scrapy 1.2) naming the field, the
processor and the value.
"""

from itemadapter import ItemAdapter
from itemloaders import ItemLoader as _BaseItemLoader

from crawlfw.item import Item
from crawlfw.loader.common import (
    processor_error,
    see_through_processor_error,
    wrap_loader_context,
)
from crawlfw.loader.processors import Identity
from crawlfw.selector import Selector
from crawlfw.utils.deprecate import create_deprecated_class
from crawlfw.utils.misc import arg_to_iter, extract_regex
from crawlfw.utils.python import flatten

__all__ = ["ItemLoader"]  # XPathItemLoader (deprecated) is importable too


def _name(processor):
    return getattr(processor, "__qualname__", None) or type(processor).__name__


def _error(e):
    return f"error='{type(e).__name__}: {e}'"


def _processor_error(message, error):
    """:func:`~crawlfw.loader.common.processor_error`, seeing through the plain
    ``ValueError`` that itemloaders' ``MapCompose``/``Compose`` raise ``from`` the
    function's error, so the loader's error is of the function's error class."""
    see_through_processor_error(error)
    return processor_error(message, error)


class ItemLoader(_BaseItemLoader):
    """Collects values for an item's fields and builds the item (a thin subclass of
    ``itemloaders.ItemLoader``; see the module docstring for what it overrides).

    Args:
        item: the item to populate, of any type ``itemadapter`` adapts; a new
            ``default_item_class()`` if None. Fields it already holds are kept unless
            a value is loaded for them (Scrapy 1.2's rule).
        selector: the :class:`~crawlfw.selector.Selector` (or ``SelectorList``) that
            ``*_xpath``/``*_css`` methods query.
        response: the response; when ``selector`` is None its selector is used
            (``response.selector``, parsed once per response, or
            ``default_selector_class(response)`` for another selector class).
        parent: the loader a nested loader shares its item and values with.
        stats: a stats collector counting which rules matched
            (``parser/<field>/<xpath|css>/<rule>``; itemloaders' option).
        **context: the loader context, passed to processors that accept it.

    Attributes:
        item: the item being populated (shared with nested loaders).
        context: the loader context (``dict``), with ``item``, ``selector`` and
            ``response`` keys added.
        selector: the selector queried by ``*_xpath``/``*_css``, or None.
        default_item_class: item class instantiated when no item is given
            (:class:`~crawlfw.item.Item`).
        default_input_processor: input processor of fields without one.
        default_output_processor: output processor of fields without one.
        default_selector_class: selector class built from ``response``.
    """

    default_item_class = Item
    default_input_processor = Identity()
    default_output_processor = Identity()
    default_selector_class = Selector

    def __init__(self, item=None, selector=None, response=None, parent=None, stats=None,
                 **context):
        # itemloaders' __init__ is not called: it makes the values an item already holds
        # collected values (so an output processor turns "x" into ["x"], and a nested
        # loader adds them to its parent's again); Scrapy 1.2 leaves them in the item
        # untouched unless a value is loaded for that field. The attributes are
        # itemloaders' own.
        if selector is None and response is not None:
            selector = self._selector_from_response(response)
        self.selector = selector
        self.stats = stats if stats is not None or parent is None else parent.stats
        context.update(selector=selector, response=response)
        if item is None:
            item = self.default_item_class()
        self._local_item = context["item"] = item
        self.context = context
        self.parent = parent
        self._local_values = {}

    def _selector_from_response(self, response):
        try:
            response.text  # noqa: B018 (raises AttributeError on a binary response)
        except AttributeError:  # not a text response: nothing to select from
            return None
        if self.default_selector_class is Selector:
            cached = getattr(response, "selector", None)
            if isinstance(cached, Selector):
                return cached  # the response's own selector: the page is parsed once
        return self.default_selector_class(response)

    # -- Scrapy 1.2's errors ------------------------------------------------------------

    def get_value(self, value, *processors, re=None, **kw):
        """Process a value without storing it.

        Args:
            value: the value(s).
            *processors: applied in order, each to the previous result; a None
                result ends the chain.
            re: a regex (str or compiled) applied first to every value (see
                ``crawlfw.utils.misc.extract_regex``).

        Returns:
            The processed value.

        Raises:
            ValueError: a processor raised; the message names it and the value (also
                an instance of the original error's class).
        """
        if re:
            value = arg_to_iter(value)
            value = flatten(extract_regex(re, x) for x in value)
        context = self.context
        for proc in processors:
            if value is None:  # nothing left to process
                break
            try:
                value = wrap_loader_context(proc, context)(value)
            except Exception as e:
                raise _processor_error(
                    f"Error with processor {_name(proc)} value={value!r} {_error(e)}",
                    e,
                ) from e
        return value

    def get_output_value(self, field_name):
        """Returns: the field's collected values through its output processor.

        Raises:
            ValueError: the output processor raised; the message names the field, the
                processor and the values.
        """
        proc = self.get_output_processor(field_name)
        values = self._values.get(field_name, [])
        try:
            return wrap_loader_context(proc, self.context)(values)
        except Exception as e:
            raise _processor_error(
                f"Error with output processor {_name(proc)}: field={field_name!r} "
                f"value={values!r} {_error(e)}",
                e,
            ) from e

    def _process_input_value(self, field_name, value):
        proc = self.get_input_processor(field_name)
        try:
            return wrap_loader_context(proc, self.context)(value)
        except Exception as e:
            raise _processor_error(
                f"Error with input processor {_name(proc)}: field={field_name!r} "
                f"value={value!r} {_error(e)}",
                e,
            ) from e

    def _get_item_field_attr(self, field_name, key, default=None):
        item = self.item
        try:
            meta = ItemAdapter(item).get_field_meta(field_name)
        except KeyError:
            raise KeyError(
                f"{item.__class__.__name__} does not support field: {field_name}"
            ) from None
        return meta.get(key, default)

    def _check_selector_method(self):
        if self.selector is None:
            raise RuntimeError(
                f"To use XPath or CSS selectors, {self.__class__.__name__} "
                "must be instantiated with a selector or a response"
            )


#: Deprecated alias of :class:`ItemLoader` (Scrapy 0.24's name); using it warns.
XPathItemLoader = create_deprecated_class("XPathItemLoader", ItemLoader)
