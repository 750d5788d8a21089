"""Container types used across crawlfw (Scrapy 1.2's ``scrapy.utils.datatypes``).

``CaselessDict`` (case-insensitive keys, base of :class:`crawlfw.http.Headers`),
``MultiValueDict`` (Django-style, several values per key), ``MergeDict`` (read-only
view over several dicts), ``LocalCache`` (size-bounded dict, oldest evicted first)
``SequenceExclude`` (a "container" holding everything but a given sequence) and
``SiteNode`` (a node of a tree of crawled pages).
"""

from __future__ import annotations

import collections
import contextlib
import copy
import weakref
from collections import OrderedDict
from collections.abc import Mapping

__all__ = [
    "MultiValueDictKeyError",
    "MultiValueDict",
    "CaselessDict",
    "MergeDict",
    "LocalCache",
    "SequenceExclude",
    "CaseInsensitiveDict",
    "LocalWeakReferencedCache",
]
# SiteNode (added for Scrapy 1.2 parity) is public too; __all__ is pinned by the owner's
# tests/http/test_exported_members.py, which is to list it.


class MultiValueDictKeyError(KeyError):
    """A key missing from a :class:`MultiValueDict`."""


class MultiValueDict(dict):
    """A dict that holds a list of values per key; ``d[key]`` returns the LAST value.

    >>> d = MultiValueDict({'name': ['Adrian', 'Simon'], 'position': ['Developer']})
    >>> d['name']
    'Simon'
    >>> d.getlist('name')
    ['Adrian', 'Simon']

    Args:
        key_to_list_mapping: initial ``{key: [values]}`` (or pairs of that shape).
    """

    def __init__(self, key_to_list_mapping=()):
        dict.__init__(self, key_to_list_mapping)

    def __repr__(self):
        return f"<{self.__class__.__name__}: {dict.__repr__(self)}>"

    def __getitem__(self, key):
        """Return the last value stored for ``key``; ``[]`` if its list is empty.

        Raises:
            MultiValueDictKeyError: ``key`` is absent.
        """
        try:
            list_ = dict.__getitem__(self, key)
        except KeyError:
            raise MultiValueDictKeyError(f"Key {key!r} not found in {self!r}") from None
        try:
            return list_[-1]
        except IndexError:
            return []

    def __setitem__(self, key, value):
        dict.__setitem__(self, key, [value])

    def _setitem_list(self, key, value):
        dict.__setitem__(self, key, value)

    def __copy__(self):
        return self.__class__(dict.items(self))

    def __deepcopy__(self, memo=None):
        if memo is None:
            memo = {}
        result = self.__class__()
        memo[id(self)] = result
        for key, value in dict.items(self):
            dict.__setitem__(result, copy.deepcopy(key, memo), copy.deepcopy(value, memo))
        return result

    def get(self, key, default=None):
        """Return the last value for ``key``, or ``default`` if absent or empty."""
        try:
            val = self[key]
        except KeyError:
            return default
        if val == []:
            return default
        return val

    def getlist(self, key):
        """Return the list of values for ``key`` (``[]`` when absent)."""
        try:
            return dict.__getitem__(self, key)
        except KeyError:
            return []

    def setlist(self, key, list_):
        """Replace the values of ``key`` by ``list_``."""
        dict.__setitem__(self, key, list_)

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def setlistdefault(self, key, default_list=()):
        if key not in self:
            self.setlist(key, default_list)
        return self.getlist(key)

    def appendlist(self, key, value):
        """Append ``value`` to the values of ``key``."""
        self.setlistdefault(key, [])
        dict.__setitem__(self, key, self.getlist(key) + [value])

    def items(self):
        """Return ``[(key, last_value), ...]``."""
        return [(key, self[key]) for key in self.keys()]

    def lists(self):
        """Return ``[(key, [values]), ...]``."""
        return list(dict.items(self))

    def values(self):
        """Return the last value of every key."""
        return [self[key] for key in self.keys()]

    def copy(self):
        """Return a deep copy."""
        return copy.deepcopy(self)

    def update(self, *args, **kwargs):
        """Extend (not replace) the value lists with another dict's values.

        Raises:
            TypeError: more than one positional argument.
        """
        if len(args) > 1:
            raise TypeError(f"update expected at most 1 arguments, got {len(args)}")
        if args:
            other_dict = args[0]
            if isinstance(other_dict, MultiValueDict):
                for key, value_list in other_dict.lists():
                    self.setlistdefault(key, []).extend(value_list)
            else:
                try:
                    for key, value in other_dict.items():
                        self.setlistdefault(key, []).append(value)
                except (TypeError, AttributeError):
                    raise ValueError(
                        "MultiValueDict.update() takes either a MultiValueDict or dictionary"
                    ) from None
        for key, value in kwargs.items():
            self.setlistdefault(key, []).append(value)


class CaselessDict(dict):
    """A dict whose keys compare case-insensitively (``normkey`` lower-cases them).

    Subclasses override :meth:`normkey` and :meth:`normvalue` to normalise keys and
    values on the way in (:class:`crawlfw.http.Headers` does).

    Args:
        seq: initial content: a mapping or an iterable of ``(key, value)`` pairs.
    """

    __slots__ = ()

    def __init__(self, seq=None):
        super().__init__()
        if seq:
            self.update(seq)

    def __getitem__(self, key):
        return dict.__getitem__(self, self.normkey(key))

    def __setitem__(self, key, value):
        dict.__setitem__(self, self.normkey(key), self.normvalue(value))

    def __delitem__(self, key):
        dict.__delitem__(self, self.normkey(key))

    def __contains__(self, key):
        return dict.__contains__(self, self.normkey(key))

    has_key = __contains__

    def __copy__(self):
        return self.__class__(self)

    copy = __copy__

    def normkey(self, key):
        """Normalise a key (lower-case here)."""
        return key.lower()

    def normvalue(self, value):
        """Normalise a value (unchanged here)."""
        return value

    def get(self, key, def_val=None):
        return dict.get(self, self.normkey(key), self.normvalue(def_val))

    def setdefault(self, key, def_val=None):
        return dict.setdefault(self, self.normkey(key), self.normvalue(def_val))

    def update(self, seq):
        seq = seq.items() if isinstance(seq, Mapping) else seq
        iseq = ((self.normkey(k), self.normvalue(v)) for k, v in seq)
        super().update(iseq)

    @classmethod
    def fromkeys(cls, keys, value=None):
        return cls((k, value) for k in keys)

    def pop(self, key, *args):
        return dict.pop(self, self.normkey(key), *args)


class MergeDict:
    """A read-only, dict-like view over several dicts, looked up in order.

    >>> m = MergeDict({'a': 1}, {'a': 2, 'b': 3})
    >>> m['a'], m['b']
    (1, 3)
    """

    def __init__(self, *dicts):
        self.dicts = dicts

    def __getitem__(self, key):
        for dict_ in self.dicts:
            try:
                return dict_[key]
            except KeyError:
                pass
        raise KeyError(key)

    def __copy__(self):
        return self.__class__(*self.dicts)

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def getlist(self, key):
        for dict_ in self.dicts:
            if key in dict_.keys():
                return dict_.getlist(key)
        return []

    def items(self):
        item_list = []
        for dict_ in self.dicts:
            item_list.extend(dict_.items())
        return item_list

    def has_key(self, key):
        return any(key in dict_ for dict_ in self.dicts)

    __contains__ = has_key

    def copy(self):
        """Returns a copy of this object."""
        return self.__copy__()


class LocalCache(OrderedDict):
    """A dict that keeps at most ``limit`` keys, evicting the oldest inserted first.

    Args:
        limit: maximum number of keys, or None for unbounded.
    """

    def __init__(self, limit: int | None = None):
        super().__init__()
        self.limit = limit

    def __setitem__(self, key, value):
        if self.limit:
            while len(self) >= self.limit:
                self.popitem(last=False)
        super().__setitem__(key, value)


class SequenceExclude:
    """Object to test if an item is NOT within some sequence.

    >>> 404 in SequenceExclude(range(200, 300))
    True
    """

    def __init__(self, seq):
        self.seq = seq

    def __contains__(self, item):
        return item not in self.seq


class SiteNode:
    """A node of a site tree: a page (or image, or any file) and the pages found from it.

    Args:
        url: the node's URL.

    Attributes:
        url: the URL.
        itemnames: names of the items scraped from it (``list[str]``).
        children: child nodes (``list[SiteNode]``).
        parent: the parent node, or None for the root.
    """

    def __init__(self, url):
        self.url = url
        self.itemnames = []
        self.children = []
        self.parent = None

    def add_child(self, node):
        """Append ``node`` to the children and make this node its parent."""
        self.children.append(node)
        node.parent = self

    def to_string(self, level=0):
        """The tree from this node as text: one URL per line, indented two spaces per
        level, each followed by its ``Scraped: <item name>`` lines."""
        indent = "  " * level
        lines = [f"{indent}{self.url}\n"]
        lines.extend(f"{indent}  Scraped: {name}\n" for name in self.itemnames)
        lines.extend(node.to_string(level + 1) for node in self.children)
        return "".join(lines)


class CaseInsensitiveDict(collections.UserDict):
    """A dict whose ``str`` or ``bytes`` keys are looked up case-insensitively; the key
    most recently set keeps its case (Scrapy 2.10+; :class:`CaselessDict` lower-cases
    keys instead)."""

    def __init__(self, *args, **kwargs) -> None:
        self._keys: dict = {}
        super().__init__(*args, **kwargs)

    def __getitem__(self, key):
        return super().__getitem__(self._keys[self._normkey(key).lower()])

    def __setitem__(self, key, value) -> None:
        normalized = self._normkey(key)
        with contextlib.suppress(KeyError):
            del self[self._keys[normalized.lower()]]
        super().__setitem__(normalized, self._normvalue(value))
        self._keys[normalized.lower()] = normalized

    def __delitem__(self, key) -> None:
        stored = self._keys.pop(self._normkey(key).lower())
        super().__delitem__(stored)

    def __contains__(self, key) -> bool:
        return self._normkey(key).lower() in self._keys

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}: {super().__repr__()}>"

    def __copy__(self):
        new = self.__class__()
        new.data = self.data.copy()
        new._keys = self._keys.copy()
        return new

    copy = __copy__

    def __ior__(self, other):
        self.update(other)
        return self

    def _normkey(self, key):
        """Override to change how keys are stored (the case is kept by default)."""
        return key

    def _normvalue(self, value):
        """Override to change how values are stored."""
        return value


class LocalWeakReferencedCache(weakref.WeakKeyDictionary):
    """A size-bounded (``limit``: oldest evicted first; None: unbounded) dict whose keys
    are held weakly, for memoizing without keeping the arguments alive. A key that
    cannot be weakly referenced is not cached; a missing key reads as None."""

    def __init__(self, limit: int | None = None):
        super().__init__()
        self.data = LocalCache(limit=limit)

    def __setitem__(self, key, value) -> None:
        with contextlib.suppress(TypeError):  # not weak-referenceable: not cached
            super().__setitem__(key, value)

    def __getitem__(self, key):
        try:
            return super().__getitem__(key)
        except (TypeError, KeyError):
            return None
