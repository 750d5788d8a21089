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

A processor that raises makes the loader raise a ``ValueError`` (that is also an
instance of the original error's class, as in Scrapy 1.2) naming the field, the
processor and the value.
"""

from collections import defaultdict

from crawlfw.item import DictItem, Item
from crawlfw.loader.common import processor_error, wrap_loader_context
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


class ItemLoader:
    """Collects values for an item's fields and builds the item.

    Args:
        item: the item to populate; a new ``default_item_class()`` if None. Fields it
            already holds are kept unless a value is loaded for them.
        selector: the :class:`~crawlfw.selector.Selector` (or ``SelectorList``) that
            ``*_xpath``/``*_css`` methods query.
        response: the response; when ``selector`` is None its selector is used
            (``response.selector``, parsed once per response, or
            ``default_selector_class(response)`` for another selector class).
        parent: the loader a nested loader shares its item and values with.
        **context: the loader context, passed to processors that accept it.

    Attributes:
        item: the item being populated (shared with nested loaders).
        context: the loader context (``dict``), with ``item``, ``selector`` and
            ``response`` keys added.
        selector: the selector queried by ``*_xpath``/``*_css``, or None.
        default_item_class: item class instantiated when no item is given.
        default_input_processor: input processor of fields without one.
        default_output_processor: output processor of fields without one.
        default_selector_class: selector class built from ``response``.
    """

    default_item_class = Item
    default_input_processor = Identity()
    default_output_processor = Identity()
    default_selector_class = Selector

    def __init__(self, item=None, selector=None, response=None, parent=None, **context):
        if selector is None and response is not None:
            selector = self._selector_from_response(response)
        self.selector = selector
        context.update(selector=selector, response=response)
        if item is None:
            item = self.default_item_class()
        self.context = context
        self.parent = parent
        self._local_item = context["item"] = item
        self._local_values = defaultdict(list)

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

    @property
    def _values(self):
        if self.parent is not None:
            return self.parent._values
        return self._local_values

    @property
    def item(self):
        """The item being populated (the parent's for a nested loader)."""
        if self.parent is not None:
            return self.parent.item
        return self._local_item

    # -- nested loaders -------------------------------------------------------------

    def nested_xpath(self, xpath, **context):
        """A loader whose selector is ``self.selector.xpath(xpath)``, sharing this
        loader's item and collected values.

        The nested loader's context is this loader's context (``response``
        included) updated with ``context``; Scrapy 1.2 started nested loaders with
        only ``context``, which lost e.g. a unit passed to the parent.

        Args:
            xpath: the XPath expression selecting the nested part.
            **context: extra context for the nested loader.

        Returns:
            ItemLoader: a loader of the same class.

        Raises:
            RuntimeError: this loader has no selector.
            ValueError: ``xpath`` is invalid.
        """
        self._check_selector_method()
        return self._nested(self.selector.xpath(xpath), context)

    def nested_css(self, css, **context):
        """Like :meth:`nested_xpath` with a CSS selector."""
        self._check_selector_method()
        return self._nested(self.selector.css(css), context)

    def _nested(self, selector, context):
        ctx = dict(self.context)
        ctx.update(context)
        ctx.pop("item", None)
        ctx.pop("selector", None)
        response = ctx.pop("response", None)
        return self.__class__(
            item=self.item, selector=selector, response=response, parent=self, **ctx
        )

    # -- values -----------------------------------------------------------------------

    def add_value(self, field_name, value, *processors, **kw):
        """Process ``value`` and add it to a field's collected values.

        ``value`` goes through ``re`` and ``processors`` (as in :meth:`get_value`),
        then through the field's input processor; the result is appended.

        Args:
            field_name: the field, or None when ``value`` is a dict of
                ``{field_name: value}`` to add to several fields.
            value: the value(s) to add.
            *processors: processors applied before the input processor.
            **kw: ``re``: a regex (str or compiled) to extract with first.

        Raises:
            KeyError: the item does not declare ``field_name``.
            ValueError: a processor raised.
        """
        value = self.get_value(value, *processors, **kw)
        if value is None:
            return
        if not field_name:
            for k, v in value.items():
                self._add_value(k, v)
        else:
            self._add_value(field_name, value)

    def replace_value(self, field_name, value, *processors, **kw):
        """Like :meth:`add_value`, but the collected values are replaced."""
        value = self.get_value(value, *processors, **kw)
        if value is None:
            return
        if not field_name:
            for k, v in value.items():
                self._replace_value(k, v)
        else:
            self._replace_value(field_name, value)

    def _add_value(self, field_name, value):
        value = arg_to_iter(value)
        processed_value = self._process_input_value(field_name, value)
        if processed_value:
            self._values[field_name] += arg_to_iter(processed_value)

    def _replace_value(self, field_name, value):
        self._values.pop(field_name, None)
        self._add_value(field_name, value)

    def get_value(self, value, *processors, **kw):
        """Process a value without storing it.

        Args:
            value: the value(s).
            *processors: applied in order, each to the previous result; a None
                result ends the chain.
            **kw: ``re``: a regex (str or compiled) applied first to every value
                (see ``crawlfw.utils.misc.extract_regex``).

        Returns:
            The processed value.

        Raises:
            ValueError: a processor raised; the message names it and the value.
        """
        regex = kw.get("re", None)
        if regex:
            value = arg_to_iter(value)
            value = flatten(extract_regex(regex, x) for x in value)
        context = self.context
        for proc in processors:
            if value is None:  # nothing left to process (later Scrapy versions agree)
                break
            try:
                value = wrap_loader_context(proc, context)(value)
            except Exception as e:
                raise processor_error(
                    f"Error with processor {_name(proc)} value={value!r} {_error(e)}",
                    e,
                ) from e
        return value

    def load_item(self):
        """Run each field's output processor and assign the results to the item.

        Returns:
            The item (fields whose output value is None are left unset).

        Raises:
            ValueError: an output processor raised.
            KeyError: the item does not support a loaded field.
        """
        item = self.item
        for field_name in tuple(self._values):
            value = self.get_output_value(field_name)
            if value is not None:
                item[field_name] = value
        return item

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
            raise processor_error(
                f"Error with output processor {_name(proc)}: field={field_name!r} "
                f"value={values!r} {_error(e)}",
                e,
            ) from e

    def get_collected_values(self, field_name):
        """Returns: list: the values collected for ``field_name`` (input processor
        results), ``[]`` when there are none."""
        return self._values.get(field_name, [])

    def get_input_processor(self, field_name):
        """Returns: the input processor of ``field_name`` (``<field>_in`` attribute,
        else Field ``input_processor``, else ``default_input_processor``).

        Raises:
            KeyError: the item does not declare ``field_name``.
        """
        proc = getattr(self, f"{field_name}_in", None)
        if not proc:
            proc = self._get_item_field_attr(
                field_name, "input_processor", self.default_input_processor
            )
        return proc

    def get_output_processor(self, field_name):
        """Returns: the output processor of ``field_name`` (``<field>_out`` attribute,
        else Field ``output_processor``, else ``default_output_processor``).

        Raises:
            KeyError: the item does not declare ``field_name``.
        """
        proc = getattr(self, f"{field_name}_out", None)
        if not proc:
            proc = self._get_item_field_attr(
                field_name, "output_processor", self.default_output_processor
            )
        return proc

    def _process_input_value(self, field_name, value):
        proc = self.get_input_processor(field_name)
        try:
            return wrap_loader_context(proc, self.context)(value)
        except Exception as e:
            raise processor_error(
                f"Error with input processor {_name(proc)}: field={field_name!r} "
                f"value={value!r} {_error(e)}",
                e,
            ) from e

    def _get_item_field_attr(self, field_name, key, default=None):
        item = self.item
        if isinstance(item, DictItem):
            try:
                field = item.fields[field_name]
            except KeyError:
                raise KeyError(
                    f"{item.__class__.__name__} does not support field: {field_name}"
                ) from None
            return field.get(key, default)
        return default

    # -- selectors --------------------------------------------------------------------

    def _check_selector_method(self):
        if self.selector is None:
            raise RuntimeError(
                f"To use XPath or CSS selectors, {self.__class__.__name__} "
                "must be instantiated with a selector or a response"
            )

    def add_xpath(self, field_name, xpath, *processors, **kw):
        """:meth:`add_value` with the strings an XPath selects.

        Args:
            field_name: the field (or None, as in :meth:`add_value`).
            xpath: an XPath expression or a list of them (results concatenated).
            *processors: as in :meth:`add_value`.
            **kw: ``re``: a regex applied to the extracted strings.

        Raises:
            RuntimeError: the loader has no selector.
            ValueError: an invalid expression, or a processor raised.
        """
        values = self._get_xpathvalues(xpath, **kw)
        self.add_value(field_name, values, *processors, **kw)

    def replace_xpath(self, field_name, xpath, *processors, **kw):
        """Like :meth:`add_xpath`, replacing the collected values."""
        values = self._get_xpathvalues(xpath, **kw)
        self.replace_value(field_name, values, *processors, **kw)

    def get_xpath(self, xpath, *processors, **kw):
        """Like :meth:`get_value` on the strings an XPath selects.

        Returns:
            The processed value (a list of ``str`` with no processors).
        """
        values = self._get_xpathvalues(xpath, **kw)
        return self.get_value(values, *processors, **kw)

    def _get_xpathvalues(self, xpaths, **kw):
        self._check_selector_method()
        xpaths = arg_to_iter(xpaths)
        return flatten(self.selector.xpath(xpath).extract() for xpath in xpaths)

    def add_css(self, field_name, css, *processors, **kw):
        """:meth:`add_value` with the strings a CSS selector (or a list of them)
        selects; see :meth:`add_xpath`."""
        values = self._get_cssvalues(css, **kw)
        self.add_value(field_name, values, *processors, **kw)

    def replace_css(self, field_name, css, *processors, **kw):
        """Like :meth:`add_css`, replacing the collected values."""
        values = self._get_cssvalues(css, **kw)
        self.replace_value(field_name, values, *processors, **kw)

    def get_css(self, css, *processors, **kw):
        """Like :meth:`get_value` on the strings a CSS selector selects."""
        values = self._get_cssvalues(css, **kw)
        return self.get_value(values, *processors, **kw)

    def _get_cssvalues(self, csss, **kw):
        self._check_selector_method()
        csss = arg_to_iter(csss)
        return flatten(self.selector.css(css).extract() for css in csss)


#: Deprecated alias of :class:`ItemLoader` (Scrapy 0.24's name); using it warns.
XPathItemLoader = create_deprecated_class("XPathItemLoader", ItemLoader)
