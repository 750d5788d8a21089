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


def _tracking_new(cls, *args, **kwargs):
    """The ``__new__`` :class:`object_ref` gives its subclasses: a new instance, recorded."""
    obj = object.__new__(cls)
    if enabled:
        live_refs[cls][obj] = time()
    return obj


def _plain_new(cls, *args, **kwargs):
    """The ``__new__`` of a class whose ``__init__`` records its instances: a new
    instance, not recorded here. It takes (and ignores) the constructor's arguments as
    Scrapy's ``object_ref.__new__`` does, so a subclass's own ``__new__`` may pass them
    on (``super().__new__(cls, *args, **kwargs)``), which ``object.__new__`` refuses."""
    return object.__new__(cls)


def _recording_new(own_new):
    """Wrap a subclass's own ``__new__`` so that what it returns is recorded too."""

    def __new__(cls, *args, **kwargs):
        obj = own_new(cls, *args, **kwargs)
        if enabled and isinstance(obj, cls):
            live_refs[cls][obj] = time()
        return obj

    return staticmethod(__new__)


class object_ref:
    """Inherit from this class to have every instance recorded in :data:`live_refs`.

    Each subclass gets a ``__new__`` that records the instance (a subclass's own
    ``__new__`` is wrapped to record what it returns), except the classes that set
    ``_trackref_in_init = True`` (``Request``, ``Response``) and their subclasses: their
    ``__init__`` records the instance (``live_refs[type(self)]``'s ``data`` gets a
    ``weakref.ref(self, its _remove)`` key, as ``WeakKeyDictionary.__setitem__`` does,
    when :data:`enabled`), which spares the recording ``__new__`` on the hot path (a
    crawl makes tens of requests per page); they keep a ``__new__`` that takes the
    constructor's arguments (:func:`_plain_new`), so that a subclass's own ``__new__``
    may pass them on, as with Scrapy's ``object_ref``. An instance
    of those is recorded once ``Request.__init__``/``Response.__init__`` ran (a
    subclass's ``__init__`` calls it), with the same ``{class: {instance: time}}``
    entry as before; one made without its ``__init__`` (``copy.copy``, unpickling) is
    not recorded.
    """

    __slots__ = ()

    #: True on a class whose ``__init__`` records its instances itself.
    _trackref_in_init = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls._trackref_in_init:
            if "_trackref_in_init" in cls.__dict__ and "__new__" not in cls.__dict__:
                cls.__new__ = staticmethod(_plain_new)
            return
        own = cls.__dict__.get("__new__")
        if own is not None:
            cls.__new__ = _recording_new(own.__func__ if isinstance(own, staticmethod) else own)
        elif cls.__new__ is object.__new__:  # not inherited from a recording parent
            cls.__new__ = staticmethod(_tracking_new)


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
