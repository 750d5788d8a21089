"""Items: the containers scraped data is put in (Scrapy 1.2's ``scrapy.item``).

An :class:`Item` subclass declares its fields as class attributes holding
:class:`Field` objects; instances then behave like a ``dict`` restricted to those keys.
The rules (Scrapy 1.2 documentation, "Items"):

1. Items have the ``dict`` API, including the ``dict`` constructor forms
   (``Product(name='x')``, ``Product({'name': 'x'})``, ``Product(other_item)``).
2. ``Product.fields`` maps every declared field name (inherited ones included) to its
   :class:`Field` (a ``dict`` of metadata, e.g. ``{'serializer': str}``).
3. Declared fields are removed from the class attributes: ``Product.name`` raises
   ``AttributeError``; only ``Product.fields['name']`` holds the Field.
4. Subclasses inherit fields and may add or redefine them, e.g.
   ``name = Field(Product.fields['name'], serializer=my_serializer)``.
5. An unpopulated field is absent: ``item['name']`` raises ``KeyError``,
   ``item.get('name')`` is None and ``'name' in item`` is False.
6. Setting an undeclared field raises ``KeyError('<ItemClass> does not support field:
   <name>')``; item fields are not attributes (``item.name`` raises
   ``AttributeError``).
7. ``keys()``, ``items()``, ``dict(item)`` and ``copy()`` cover the populated fields;
   ``copy()`` is shallow, ``deepcopy()`` is deep.
"""

import sys
from abc import ABCMeta
from collections.abc import MutableMapping
from copy import deepcopy
from pprint import pformat

from crawlfw.utils.trackref import object_ref

__all__ = ["AnyItem", "BaseItem", "Field", "ItemMeta", "DictItem", "Item", "ITEM_TYPES", "is_item"]


class BaseItem(object_ref):
    """Base class of all items (``isinstance(x, BaseItem)`` tells an item apart)."""

    __slots__ = ()


class Field(dict):
    """Container of one field's metadata: any keys, e.g. ``serializer``,
    ``input_processor``, ``output_processor``. ``Field(other_field, key=value)`` copies
    and extends another field's metadata."""


class ItemMeta(ABCMeta):
    """Metaclass of :class:`Item`: collects :class:`Field` attributes into ``fields``
    and removes them from the class namespace."""

    def __new__(mcs, class_name, bases, attrs):
        classcell = attrs.pop("__classcell__", None)
        # A shadow class "x_<name>" keeps the Field attributes, so that subclasses
        # inherit them through the shadow hierarchy while the real class has none.
        new_bases = tuple(base._class for base in bases if hasattr(base, "_class"))
        _class = super().__new__(mcs, "x_" + class_name, new_bases, attrs)

        fields = getattr(_class, "fields", {})
        new_attrs = {}
        for n in dir(_class):
            v = getattr(_class, n)
            if isinstance(v, Field):
                fields[n] = v
            elif n in attrs:
                new_attrs[n] = attrs[n]

        new_attrs["fields"] = fields
        new_attrs["_class"] = _class
        if classcell is not None:
            new_attrs["__classcell__"] = classcell
        return super().__new__(mcs, class_name, bases, new_attrs)


class DictItem(MutableMapping, BaseItem):
    """An item with a fixed set of keys (``fields``) and the ``dict`` API.

    Args:
        *args: as for ``dict()``: a mapping or an iterable of ``(key, value)`` pairs.
        **kwargs: field values.

    Raises:
        KeyError: a key is not a declared field.
    """

    fields = {}

    def __init__(self, *args, **kwargs):
        self._values = {}
        if args or kwargs:  # the common empty case skips building a dict
            for k, v in dict(*args, **kwargs).items():
                self[k] = v

    def __getitem__(self, key):
        return self._values[key]

    def __setitem__(self, key, value):
        if key in self.fields:
            self._values[key] = value
        else:
            raise KeyError(f"{self.__class__.__name__} does not support field: {key}")

    def __delitem__(self, key):
        del self._values[key]

    def __getattr__(self, name):
        if name in self.fields:
            raise AttributeError(f"Use item[{name!r}] to get field value")
        raise AttributeError(name)

    def __setattr__(self, name, value):
        if not name.startswith("_"):
            raise AttributeError(f"Use item[{name!r}] = {value!r} to set field value")
        super().__setattr__(name, value)

    def __len__(self):
        return len(self._values)

    def __iter__(self):
        return iter(self._values)

    def __contains__(self, key):
        return key in self._values

    __hash__ = BaseItem.__hash__  # identity: items are mutable but kept in sets/dicts

    def keys(self):
        """Returns: the populated field names (a dict keys view)."""
        return self._values.keys()

    def __repr__(self):
        return pformat(dict(self))

    def copy(self):
        """Returns: a shallow copy, of the same class."""
        return self.__class__(self)

    def deepcopy(self):
        """Returns: a deep copy (values copied recursively), of the same class."""
        return deepcopy(self)


class Item(DictItem, metaclass=ItemMeta):
    """Base class for user items: declare fields as ``name = Field()``.

    Example::

        class Product(Item):
            name = Field()
            price = Field(serializer=str)
    """


# --- any item type (itemadapter) ---------------------------------------------------------


class AnyItem(metaclass=ABCMeta):  # noqa: B024 - a type test: nothing to implement
    """``isinstance(obj, AnyItem)`` is True for every item type: what ``itemadapter``'s
    ``ItemAdapter`` adapts (``dict``, :class:`Item`, ``@dataclass`` and ``attrs``
    classes, pydantic models, and any adapter a project registers), plus Scrapy 1.2's
    :class:`BaseItem`. Never instantiated: a test of types, as Scrapy 2's
    ``itemadapter.is_item`` is.

    The answer is decided once per class (``abc`` caches it), so checking an object of a
    class already seen costs one cache lookup. Until something imports ``itemadapter``
    (a large import when pydantic is installed) it is decided without it: ``dict``,
    :class:`BaseItem`, dataclasses, attrs classes and (when pydantic is imported)
    pydantic models are items, other classes are not; once ``itemadapter`` is imported,
    its ``ItemAdapter.is_item_class`` decides (adapters a project registers included).
    A class checked before an adapter for it is registered keeps its answer: register
    adapters at import time.
    """

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        raise TypeError("AnyItem is a type test (isinstance(obj, AnyItem)), not a class "
                        "to instantiate")

    @classmethod
    def __subclasshook__(cls, klass):
        if issubclass(klass, (dict, BaseItem)):
            return True
        if klass.__module__ == "builtins":  # str, int, list, NoneType...: never items
            return NotImplemented
        adapter_module = sys.modules.get("itemadapter.adapter")
        if adapter_module is not None and hasattr(adapter_module, "ItemAdapter"):
            return True if adapter_module.ItemAdapter.is_item_class(klass) else NotImplemented
        # itemadapter not imported (so no adapter of the project's either): its own rules
        if hasattr(klass, "__dataclass_fields__") or hasattr(klass, "__attrs_attrs__"):
            return True
        for name in ("pydantic", "pydantic.v1"):
            module = sys.modules.get(name)
            model = getattr(module, "BaseModel", None) if module is not None else None
            if isinstance(model, type) and issubclass(klass, model):
                return True
        return NotImplemented


#: The item types checked first, by a plain ``isinstance``: ``dict``, :class:`BaseItem`,
#: then :class:`AnyItem` for the rest (its answer cached per class).
ITEM_TYPES = (dict, BaseItem, AnyItem)


def is_item(obj) -> bool:
    """Return True when ``obj`` is an item of any type :class:`AnyItem` covers (a dict,
    an :class:`Item`, a dataclass or attrs instance, a pydantic model...)."""
    return isinstance(obj, ITEM_TYPES)


def _item_adapter_class(adapter_module):
    """Build the ``itemadapter`` adapter of crawlfw's :class:`DictItem` (so ``Item``):
    field names are the declared ``fields``, field metadata the :class:`Field` dicts
    (``serializer``, ``input_processor``...), as ``itemadapter.ScrapyItemAdapter`` does
    for ``scrapy.Item`` (which it recognises by importing scrapy, so not ours)."""
    from collections.abc import KeysView
    from types import MappingProxyType

    base = adapter_module.AdapterInterface

    class CrawlfwItemAdapter(base):
        """``itemadapter`` adapter for ``crawlfw.item.Item`` (any :class:`DictItem`)."""

        @classmethod
        def is_item(cls, item):
            return isinstance(item, DictItem)

        @classmethod
        def is_item_class(cls, item_class):
            return isinstance(item_class, type) and issubclass(item_class, DictItem)

        @classmethod
        def get_field_meta_from_class(cls, item_class, field_name):
            return MappingProxyType(item_class.fields[field_name])

        @classmethod
        def get_field_names_from_class(cls, item_class):
            return list(item_class.fields.keys())

        def field_names(self):
            return KeysView(self.item.fields)

        def __getitem__(self, field_name):
            return self.item[field_name]

        def __setitem__(self, field_name, value):
            self.item[field_name] = value

        def __delitem__(self, field_name):
            del self.item[field_name]

        def __iter__(self):
            return iter(self.item)

        def __len__(self):
            return len(self.item)

    return CrawlfwItemAdapter


def _register_item_adapter(adapter_module) -> None:
    """Put crawlfw's Item adapter first in ``ItemAdapter.ADAPTER_CLASSES`` (once)."""
    classes = adapter_module.ItemAdapter.ADAPTER_CLASSES
    if any(getattr(c, "__name__", "") == "CrawlfwItemAdapter" for c in classes):
        return
    classes.appendleft(_item_adapter_class(adapter_module))


class _ItemAdapterImportHook:
    """A ``sys.meta_path`` finder that registers crawlfw's Item adapter right after
    ``itemadapter.adapter`` is executed, whoever imports it first (a pipeline doing
    ``from itemadapter import ItemAdapter``, crawlfw's loaders...), so that
    ``ItemAdapter(crawlfw_item)`` always works without crawlfw importing ``itemadapter``
    (and pydantic with it) in every process. Removes itself once done."""

    _NAME = "itemadapter.adapter"

    def find_spec(self, fullname, path, target=None):
        if fullname != self._NAME:
            return None
        import importlib.abc
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader
        hook = self

        class _Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                loader.exec_module(module)
                hook.remove()
                _register_item_adapter(module)

        spec.loader = _Loader()
        return spec

    def remove(self):
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass


def _install_item_adapter() -> None:
    module = sys.modules.get(_ItemAdapterImportHook._NAME)
    if module is not None and hasattr(module, "ItemAdapter"):
        _register_item_adapter(module)
    elif not any(isinstance(f, _ItemAdapterImportHook) for f in sys.meta_path):
        sys.meta_path.insert(0, _ItemAdapterImportHook())


_install_item_adapter()
