"""Track live instances of selected classes, to debug memory leaks.

Classes that subclass :class:`object_ref` (``Request``, ``Response``, ``Selector``,
``Item``, ``Spider``) record each new instance, with its creation time, in
:data:`live_refs` (weakly: recording never keeps an object alive). The telnet/shell
helpers ``prefs()`` / :func:`print_live_refs` show the counts (Scrapy 1.2's
``scrapy.utils.trackref``).

Recording costs, for ``Request``/``Response`` and their subclasses (tens per page),
one attribute store: ``__init__`` puts the creation time in the instance's own
``_trackref_time`` attribute, and ``live_refs[cls]`` (a :class:`ScannedRefs`) finds the live
ones among the objects the cycle collector tracks when asked (one pass over
``gc.get_objects()``). For the other classes it costs one list append (a plain
``weakref.ref``, no callback, and the time; see :class:`LiveRefs`): an object's death
costs nothing here in either case, on whichever thread it happens. Set the
module-level ``enabled`` to False to switch recording off (objects made meanwhile are
not tracked).
"""

from __future__ import annotations

import gc
import threading
import weakref
from collections import defaultdict
from collections.abc import Iterator, MutableMapping
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

_weakref = weakref.ref

#: A class's list is pruned once it holds this many entries more than twice the live
#: count found by the last prune.
_PRUNE_SLACK = 1024


class LiveRefs(MutableMapping):
    """The live instances of one class and their creation times: a mapping
    ``{instance: creation time (epoch seconds, float)}`` that holds its instances
    weakly, what Scrapy's ``live_refs[cls]`` (a ``WeakKeyDictionary``) offers:
    ``len()``, iteration, ``in``, ``[obj]`` (KeyError if not recorded), ``items()``,
    ``[obj] = time`` (records ``obj``, or changes its time), ``del [obj]``.

    Storage: ``_entries``, a list of ``(weakref.ref(obj), time)`` tuples with no
    callback on the references, so an instance's death runs no Python code (a
    ``WeakKeyDictionary`` calls its ``_remove`` in the dying object's thread). Recording
    is one ``list.append`` (:meth:`record`, or inline in ``Request.__init__`` /
    ``Response.__init__``: append, then :meth:`prune` once ``len(_entries) >=
    _prune_at``); dead entries stay until the list has grown to twice the live count
    of the last prune plus 1024 entries, when :meth:`prune` drops them all, so its cost
    is O(1) amortised per record and the list holds at most about twice the live
    objects.

    Thread safety (instances are made and freed on different threads): an append is
    one atomic list operation under the GIL; a prune reads a copy of the first ``n``
    entries, filters it, and replaces those ``n`` entries in place with one slice
    assignment (atomic too), so entries appended meanwhile by other threads, which lie
    beyond ``n``, are kept; prunes are serialised by a lock taken without waiting (a
    thread finding a prune under way skips its own). Readers work on a copy of the list.
    Lookups by instance (``[obj]``, ``in``, ``del``) scan the list: O(n), for debugging.
    """

    __slots__ = ("_entries", "_prune_at", "_prunes", "_lock", "__weakref__")

    def __init__(self) -> None:
        self._entries: list[tuple[weakref.ref, float]] = []
        self._prune_at = _PRUNE_SLACK
        self._prunes = 0  # how many prunes ran (entries before a mark may have moved)
        self._lock = threading.Lock()

    def record(self, obj, when: float | None = None) -> None:
        """Record ``obj`` (weakly) as made at ``when`` (epoch seconds; None: now)."""
        entries = self._entries
        entries.append((_weakref(obj), time() if when is None else when))
        if len(entries) >= self._prune_at:
            self.prune()

    def prune(self) -> None:
        """Drop the entries of dead instances (in place, see the class docstring); the
        next prune comes when the list has grown to twice the live count plus 1024."""
        if not self._lock.acquire(blocking=False):
            return  # another thread is pruning
        try:
            entries = self._entries
            n = len(entries)
            kept = [e for e in entries[:n] if e[0]() is not None]
            entries[:n] = kept
            self._prune_at = 2 * len(kept) + _PRUNE_SLACK
            self._prunes += 1
        finally:
            self._lock.release()

    def _mark(self) -> tuple[int, int]:
        """Where the list ends now: for :meth:`_record_once`."""
        return self._prunes, len(self._entries)

    def _record_once(self, obj, mark: tuple[int, int]) -> None:
        """Record ``obj`` unless it was recorded since ``mark`` (a parent's ``__new__``
        that a subclass's own ``__new__`` called records it first)."""
        with self._lock:  # no prune moves the entries while we look
            prunes, start = mark
            if prunes == self._prunes:
                if any(ref() is obj for ref, _ in self._entries[start:]):
                    return
            elif self._find(obj) >= 0:
                return
        self.record(obj)

    def _live(self) -> list[tuple[object, float]]:
        """``[(instance, time)]`` for the live instances, oldest record first."""
        out = []
        for ref, when in self._entries.copy():
            obj = ref()
            if obj is not None:
                out.append((obj, when))
        return out

    def _find(self, obj) -> int:
        entries = self._entries.copy()
        for i in range(len(entries) - 1, -1, -1):
            if entries[i][0]() is obj:
                return i
        return -1

    def __getitem__(self, obj) -> float:
        for ref, when in reversed(self._entries.copy()):
            if ref() is obj:
                return when
        raise KeyError(obj)

    def __setitem__(self, obj, when: float) -> None:
        with self._lock:  # no prune moves the entries meanwhile
            i = self._find(obj)
            if i < 0:
                self._entries.append((_weakref(obj), when))
            else:
                self._entries[i] = (self._entries[i][0], when)

    def __delitem__(self, obj) -> None:
        with self._lock:
            i = self._find(obj)
            if i < 0:
                raise KeyError(obj)
            del self._entries[i]

    def __contains__(self, obj) -> bool:
        return any(ref() is obj for ref, _ in self._entries.copy())

    def __iter__(self) -> Iterator:
        return iter([obj for obj, _ in self._live()])

    def __len__(self) -> int:
        return sum(1 for ref, _ in self._entries.copy() if ref() is not None)

    def items(self):  # type: ignore[override]
        """``[(instance, creation time)]`` of the live instances (a list: a snapshot)."""
        return self._live()

    def __repr__(self) -> str:
        return f"<LiveRefs of {len(self)} live instances>"


#: Name of the attribute in which ``Request``/``Response`` keep their creation time.
TIME_ATTR = "_trackref_time"


_getattribute = object.__getattribute__


def _time_of(obj) -> float | None:
    """The time in ``obj``'s :data:`TIME_ATTR` attribute, or None when unset (read with
    ``object.__getattribute__``: a class's ``__getattr__`` is not asked)."""
    try:
        return _getattribute(obj, TIME_ATTR)
    except AttributeError:
        return None


def _scan(classes) -> dict[type, list[tuple[object, float]]]:
    """``{class: [(instance, creation time)]}`` of the recorded live instances of
    ``classes`` (a set of classes recording :data:`TIME_ATTR`, matched exactly),
    found among the objects the cycle collector tracks (``gc.get_objects()``, one pass,
    atomic under the GIL)."""
    found: dict[type, list[tuple[object, float]]] = {cls: [] for cls in classes}
    for obj in gc.get_objects():
        cls = obj.__class__
        if cls in found:
            when = _time_of(obj)
            if when is not None:
                found[cls].append((obj, when))
    return found


class ScannedRefs(MutableMapping):
    """``live_refs[cls]`` of a class whose ``__init__`` records its instances
    (``Request``, ``Response`` and their subclasses): the same mapping as
    :class:`LiveRefs` (``{instance: creation time}``), but nothing is kept here.
    ``__init__`` stores the time in the instance's own :data:`TIME_ATTR` attribute (one
    attribute store: no weak reference, no list, nothing to do when the instance dies,
    on whichever thread), and the live instances are found when asked for, among the
    objects the cycle collector tracks: ``len()``, iteration and ``items()`` cost one
    pass over them (``gc.get_objects()``: a debugging tool's price); ``[obj]``, ``in``,
    ``[obj] = time`` and ``del [obj]`` read or write the attribute (O(1)).

    An instance counts when its class is exactly ``cls`` and its attribute is set (it was
    made with :data:`enabled` on, or given a time with ``[obj] = time``), until it is
    freed. Objects moved out of the collector's generations by ``gc.freeze()`` are not
    found (the CLI freezes what start-up made, before a crawl makes requests).
    """

    __slots__ = ("cls",)

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def _live(self) -> list[tuple[object, float]]:
        """``[(instance, time)]`` of the live recorded instances."""
        return _scan({self.cls})[self.cls]

    def __getitem__(self, obj) -> float:
        when = _time_of(obj) if obj.__class__ is self.cls else None
        if when is None:
            raise KeyError(obj)
        return when

    def __setitem__(self, obj, when: float) -> None:
        if obj.__class__ is not self.cls:
            raise TypeError(
                f"live_refs[{self.cls.__name__}] records {self.cls.__name__} instances only, "
                f"got {obj.__class__.__name__}")
        setattr(obj, TIME_ATTR, when)

    def __delitem__(self, obj) -> None:
        self[obj]  # KeyError when not recorded
        delattr(obj, TIME_ATTR)

    def __contains__(self, obj) -> bool:
        return obj.__class__ is self.cls and _time_of(obj) is not None

    def __iter__(self) -> Iterator:
        return iter([obj for obj, _ in self._live()])

    def __len__(self) -> int:
        return len(self._live())

    def items(self):  # type: ignore[override]
        """``[(instance, creation time)]`` of the live instances (a list: a snapshot)."""
        return self._live()

    def __repr__(self) -> str:
        return f"<ScannedRefs of {len(self)} live {self.cls.__name__} instances>"


class _LiveRefsByClass(defaultdict):
    """``live_refs``: makes a class's mapping when first asked for it, a
    :class:`ScannedRefs` for a class whose ``__init__`` records its instances, else a
    :class:`LiveRefs`."""

    def __missing__(self, cls):
        value = self[cls] = (
            ScannedRefs(cls) if getattr(cls, "_trackref_in_init", False) else LiveRefs())
        return value


#: ``{class: {instance: creation time (epoch seconds)}}`` (Scrapy's
#: ``{class: WeakKeyDictionary}``: the same mapping interface): a :class:`LiveRefs` or,
#: for ``Request``/``Response`` and their subclasses (present from the class's
#: creation), a :class:`ScannedRefs`.
live_refs: defaultdict[type, LiveRefs | ScannedRefs] = _LiveRefsByClass(LiveRefs)

#: Record new instances (True by default, as in Scrapy).
enabled = True


def _tracking_new(cls, *args, **kwargs):
    """The ``__new__`` :class:`object_ref` gives its subclasses: a new instance, recorded."""
    obj = object.__new__(cls)
    if enabled:
        live_refs[cls].record(obj)
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
        refs = live_refs[cls]
        mark = refs._mark()
        obj = own_new(cls, *args, **kwargs)
        if enabled and isinstance(obj, cls):
            refs._record_once(obj, mark)
        return obj

    return staticmethod(__new__)


class object_ref:
    """Inherit from this class to have every instance recorded in :data:`live_refs`.

    Each subclass gets a ``__new__`` that records the instance (a subclass's own
    ``__new__`` is wrapped to record what it returns), except the classes that set
    ``_trackref_in_init = True`` (``Request``, ``Response``) and their subclasses: their
    ``__init__`` records the instance (its creation time in its ``_trackref_time``
    attribute, when :data:`enabled`; see :class:`ScannedRefs`), which spares the recording
    ``__new__`` on the hot path (a crawl makes tens of requests per page). They keep
    ``object.__new__`` (which ``type()`` calls directly) until a subclass defines its own
    ``__new__``: then they get one that takes the constructor's arguments
    (:func:`_plain_new`), so that it may pass them on, as with Scrapy's ``object_ref``. An
    instance of those is recorded once ``Request.__init__``/``Response.__init__`` ran
    (a subclass's ``__init__`` calls it), with the same ``{class: {instance: time}}``
    entry as before; one made without its ``__init__`` (``copy.copy``, unpickling)
    carries the attribute of the object it was copied from (recorded with that time if that
    one was).
    """

    __slots__ = ()

    #: True on a class whose ``__init__`` records its instances itself.
    _trackref_in_init = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls._trackref_in_init:
            if "__new__" in cls.__dict__:
                # Its own __new__ may pass the constructor's arguments on
                # (super().__new__(cls, *args, **kwargs)), which object.__new__ refuses:
                # the classes above it that record in __init__ get _plain_new, which
                # takes them. Until such a subclass exists they keep object.__new__,
                # which type() calls directly (no Python-level call per request).
                for base in cls.__mro__[1:]:
                    if base.__dict__.get("_trackref_in_init") and "__new__" not in base.__dict__:
                        base.__new__ = staticmethod(_plain_new)
            live_refs[cls]  # listed from the start: its ScannedRefs finds the instances
            return
        own = cls.__dict__.get("__new__")
        if own is not None:
            cls.__new__ = _recording_new(own.__func__ if isinstance(own, staticmethod) else own)
        elif cls.__new__ is object.__new__:  # not inherited from a recording parent
            cls.__new__ = staticmethod(_tracking_new)


def _snapshot(wdict) -> list:
    """``[(instance, time)]`` of a ``live_refs`` value: a :class:`LiveRefs`, or any
    mapping put there by hand (copied under retry: other threads may insert)."""
    if isinstance(wdict, (LiveRefs, ScannedRefs)):
        return wdict._live()
    for _ in range(10):
        try:
            return list(wdict.items())
        except RuntimeError:
            continue
    return []


def _all_live() -> dict[type, list[tuple[object, float]]]:
    """``{class: [(instance, creation time)]}`` for every class of :data:`live_refs`,
    with one pass over the collector's objects for all the :class:`ScannedRefs`
    together."""
    classes = list(live_refs.items())
    scanned = _scan({cls for cls, wdict in classes
                     if isinstance(wdict, ScannedRefs) and wdict.cls is cls})
    return {cls: scanned[cls] if cls in scanned else _snapshot(wdict)
            for cls, wdict in classes}


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
    for cls, items in sorted(_all_live().items(), key=lambda x: x[0].__name__):
        if not items:
            continue
        if issubclass(cls, ignore):
            continue
        oldest = min(t for _, t in items)
        s += f"{cls.__name__:<30} {len(items):6d}   oldest: {int(now - oldest)}s ago\n"
    return s


def live_counts() -> dict[type, int]:
    """``{class: number of live recorded instances}`` for every class of
    :data:`live_refs` (those with none included), with one pass over the collector's
    objects for all the :class:`ScannedRefs` together."""
    return {cls: len(items) for cls, items in _all_live().items()}


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
