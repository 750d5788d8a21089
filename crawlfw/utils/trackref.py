"""Track live instances of selected classes, to debug memory leaks.

Classes that subclass :class:`object_ref` (``Request``, ``Response``, ``Selector``,
``Item``, ``Spider``) record each new instance, with its creation time, in
:data:`live_refs` (weakly: recording never keeps an object alive). The telnet/shell
helpers ``prefs()`` / :func:`print_live_refs` show the counts (Scrapy 1.2's
``scrapy.utils.trackref``).

Recording costs one ``WeakKeyDictionary`` insert per object; set the module-level
``enabled`` to False to switch it off (objects made meanwhile are not tracked).
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from collections.abc import Iterator
from operator import itemgetter
from time import time

__all__ = [
    "object_ref",
    "live_refs",
    "format_live_refs",
    "print_live_refs",
    "get_oldest",
    "iter_all",
]

NoneType = type(None)

#: ``{class: WeakKeyDictionary{instance: creation time (epoch seconds)}}``.
live_refs: defaultdict[type, weakref.WeakKeyDictionary] = defaultdict(weakref.WeakKeyDictionary)

#: Record new instances (True by default, as in Scrapy).
enabled = True


class object_ref:
    """Inherit from this class to have every instance recorded in :data:`live_refs`."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        obj = object.__new__(cls)
        if enabled:
            live_refs[cls][obj] = time()
        return obj


def _snapshot(wdict: weakref.WeakKeyDictionary) -> list:
    # Other threads may insert while we read; copying under retry avoids
    # "dictionary changed size during iteration".
    for _ in range(10):
        try:
            return list(wdict.items())
        except RuntimeError:
            continue
    return []


def format_live_refs(ignore: type | tuple[type, ...] = NoneType) -> str:
    """Return a table of live tracked objects per class: count and age of the oldest.

    Args:
        ignore: class (or tuple of classes) whose subclasses are left out.

    Returns:
        Text starting with ``"Live References"``, one line per class with live objects,
        e.g. ``"Request      12   oldest: 3s ago"``.
    """
    s = "Live References\n\n"
    now = time()
    for cls, wdict in sorted(list(live_refs.items()), key=lambda x: x[0].__name__):
        items = _snapshot(wdict)
        if not items:
            continue
        if issubclass(cls, ignore):
            continue
        oldest = min(t for _, t in items)
        s += f"{cls.__name__:<30} {len(items):6d}   oldest: {int(now - oldest)}s ago\n"
    return s


def print_live_refs(*a, **kw) -> None:
    """Print :func:`format_live_refs` (same arguments)."""
    print(format_live_refs(*a, **kw))


def get_oldest(class_name: str):
    """Return the oldest live object of the class named ``class_name``, or None."""
    for cls, wdict in list(live_refs.items()):
        if cls.__name__ == class_name:
            items = _snapshot(wdict)
            if not items:
                break
            return min(items, key=itemgetter(1))[0]
    return None


def iter_all(class_name: str) -> Iterator | None:
    """Iterate over the live objects of the class named ``class_name`` (None if unknown)."""
    for cls, wdict in list(live_refs.items()):
        if cls.__name__ == class_name:
            return iter([obj for obj, _ in _snapshot(wdict)])
    return None
