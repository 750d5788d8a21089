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

from abc import ABCMeta
from collections.abc import MutableMapping
from copy import deepcopy
from pprint import pformat

from crawlfw.utils.trackref import object_ref

__all__ = ["BaseItem", "Field", "ItemMeta", "DictItem", "Item"]


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
