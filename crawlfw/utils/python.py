"""Helpers for Python objects: text/bytes conversion, flattening, introspection, caching.

Scrapy 1.2's ``scrapy.utils.python`` (Python 2 only parts dropped; ``to_native_str``
is ``to_unicode`` on Python 3).
"""

from __future__ import annotations

import errno
import inspect
import itertools
import os
import re
import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping
from functools import partial, wraps
from typing import Any

from crawlfw.exceptions import CrawlfwDeprecationWarning

__all__ = [
    "flatten",
    "iflatten",
    "is_listlike",
    "unique",
    "to_unicode",
    "to_bytes",
    "to_native_str",
    "re_rsearch",
    "memoizemethod_noargs",
    "binary_is_text",
    "get_func_args",
    "get_spec",
    "equal_attributes",
    "WeakKeyCache",
    "without_none_values",
    "retry_on_eintr",
    "global_object_name",
    "is_writable",
    "setattr_default",
    # Scrapy 2
    "get_func_args_dict",
    "MutableChain",
    "MutableAsyncChain",
    "garbage_collect",
    # deprecated in Scrapy 1.2, kept for ported code
    "str_to_unicode",
    "unicode_to_str",
    "isbinarytext",
    "stringify_dict",
]


def flatten(x: Iterable) -> list:
    """Flatten nested list-likes (lists, tuples, generators...) into one list.

    Strings and bytes are not flattened.

    Args:
        x: an iterable, possibly holding other list-likes at any depth.

    Returns:
        A new list of the leaves, in depth-first order.

    >>> flatten([1, 2, [3, 4], (5, 6)])
    [1, 2, 3, 4, 5, 6]
    >>> flatten(["foo", ["baz", 42], "bar"])
    ['foo', 'baz', 42, 'bar']
    """
    return list(iflatten(x))


def iflatten(x: Iterable):
    """Lazy version of :func:`flatten`: yields the leaves one by one."""
    for el in x:
        if is_listlike(el):
            yield from iflatten(el)
        else:
            yield el


def is_listlike(x: Any) -> bool:
    """Return True for iterables that are not text or bytes.

    >>> is_listlike("foo"), is_listlike(b"foo"), is_listlike(["foo"]), is_listlike(5)
    (False, False, True, False)
    """
    return hasattr(x, "__iter__") and not isinstance(x, (str, bytes))


def unique(list_: Iterable, key: Callable[[Any], Any] = lambda x: x) -> list:
    """Return the items of ``list_`` without duplicates, keeping the first of each.

    Args:
        list_: any iterable.
        key: maps an item to the hashable value that decides sameness.

    Returns:
        A new list, in the original order.
    """
    seen = set()
    result = []
    for item in list_:
        seenkey = key(item)
        if seenkey in seen:
            continue
        seen.add(seenkey)
        result.append(item)
    return result


def to_unicode(text: str | bytes, encoding: str | None = None, errors: str = "strict") -> str:
    """Return the ``str`` form of ``text``, decoding bytes with ``encoding``.

    Args:
        text: a ``str`` (returned as is) or ``bytes``.
        encoding: codec name for bytes, default ``'utf-8'``.
        errors: codec error handler (``'strict'``, ``'replace'``...).

    Returns:
        str.

    Raises:
        TypeError: ``text`` is neither str nor bytes.
        UnicodeDecodeError: bytes not valid in ``encoding`` with ``errors='strict'``.
    """
    if isinstance(text, str):
        return text
    if not isinstance(text, (bytes, bytearray)):
        raise TypeError(f"to_unicode must receive a bytes or str object, got {type(text).__name__}")
    return text.decode(encoding or "utf-8", errors)


def to_bytes(text: str | bytes, encoding: str | None = None, errors: str = "strict") -> bytes:
    """Return the ``bytes`` form of ``text``, encoding str with ``encoding``.

    Args:
        text: ``bytes`` (returned as is) or ``str``.
        encoding: codec name for str, default ``'utf-8'``.
        errors: codec error handler.

    Returns:
        bytes.

    Raises:
        TypeError: ``text`` is neither str nor bytes.
        UnicodeEncodeError: ``text`` cannot be encoded in ``encoding`` (``errors='strict'``).
    """
    if isinstance(text, bytes):
        return text
    if not isinstance(text, str):
        raise TypeError(f"to_bytes must receive a str or bytes object, got {type(text).__name__}")
    return text.encode(encoding or "utf-8", errors)


def to_native_str(text: str | bytes, encoding: str | None = None, errors: str = "strict") -> str:
    """Return ``str`` (the native string type on Python 3): same as :func:`to_unicode`."""
    return to_unicode(text, encoding, errors)


def re_rsearch(pattern: str | re.Pattern, text: str, chunk_size: int = 1024):
    """Find the LAST match of ``pattern`` in ``text``, searching chunks from the end.

    Useful for big texts where the match is expected near the end (e.g. the closing tag
    of an XML node). ``text`` is scanned in growing tail chunks of ``chunk_size``
    kibibytes (so ``chunk_size=1024`` means 1 MiB).

    Args:
        pattern: a regex string or a compiled pattern.
        text: the text to search.
        chunk_size: chunk size in KiB.

    Returns:
        ``(start, end)`` offsets of the last match in ``text``, or None if none.
    """

    def _chunk_iter():
        offset = len(text)
        while True:
            offset -= chunk_size * 1024
            if offset <= 0:
                break
            yield (text[offset:], offset)
        yield (text, 0)

    if isinstance(pattern, (str, bytes)):
        pattern = re.compile(pattern)

    for chunk, offset in _chunk_iter():
        matches = list(pattern.finditer(chunk))
        if matches:
            start, end = matches[-1].span()
            return offset + start, offset + end
    return None


def memoizemethod_noargs(method: Callable) -> Callable:
    """Decorator caching a method's result per instance (weakly keyed: instances must be hashable).

    The arguments of later calls are ignored: the first call's result is returned.
    """
    cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @wraps(method)
    def new_method(self, *args, **kwargs):
        try:
            return cache[self]
        except KeyError:
            result = cache[self] = method(self, *args, **kwargs)
            return result

    return new_method


_BINARYCHARS = frozenset(range(32)) - {0, 9, 10, 13}  # C0 controls but NUL, TAB, LF, CR


def binary_is_text(data: bytes) -> bool:
    """Return True if ``data`` holds no C0 control byte other than NUL, TAB, LF and CR.

    Args:
        data: bytes to inspect.

    Raises:
        TypeError: ``data`` is not bytes.
    """
    if not isinstance(data, bytes):
        raise TypeError(f"data must be bytes, got '{type(data).__name__}'")
    return _BINARYCHARS.isdisjoint(data)


def _positional_and_keyword_names(func: Callable) -> list[str]:
    sig = inspect.signature(func, follow_wrapped=False)
    return [
        p.name
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]


def get_func_args(func: Callable, stripself: bool = False) -> list[str]:
    """Return the names of the arguments of a callable (not ``*args``/``**kwargs``).

    Args:
        func: a function, method, class (its ``__init__``), ``functools.partial`` or an
            object with ``__call__``.
        stripself: drop the first argument (``self``) of plain functions.

    Returns:
        List of argument names; ``[]`` for builtins whose signature is unknown.

    Raises:
        TypeError: ``func`` is not callable.
    """
    if inspect.isfunction(func):
        func_args = _positional_and_keyword_names(func)
    elif inspect.isclass(func):
        return get_func_args(func.__init__, True)
    elif inspect.ismethod(func):
        return get_func_args(func.__func__, True)
    elif inspect.ismethoddescriptor(func):
        return []
    elif isinstance(func, partial):
        return [
            x
            for x in get_func_args(func.func)[len(func.args) :]
            if not (func.keywords and x in func.keywords)
        ]
    elif hasattr(func, "__call__"):  # noqa: B004
        if inspect.isroutine(func):
            return []
        if getattr(func, "__name__", None) == "__call__":
            return []
        return get_func_args(func.__call__, True)
    else:
        raise TypeError(f"{type(func)} is not callable")
    if stripself and func_args:
        func_args.pop(0)
    return func_args


def get_spec(func: Callable) -> tuple[list[str], dict[str, Any]]:
    """Return ``(args, kwargs)`` of a callable: positional names, and names with defaults.

    >>> def f(a, b=2): pass
    >>> get_spec(f)
    (['a'], {'b': 2})

    Raises:
        TypeError: ``func`` is not callable.
    """
    if inspect.isfunction(func) or inspect.ismethod(func):
        spec = inspect.getfullargspec(func)
    elif hasattr(func, "__call__"):  # noqa: B004
        spec = inspect.getfullargspec(func.__call__)
    else:
        raise TypeError(f"{type(func)} is not callable")
    defaults = spec.defaults or ()
    firstdefault = len(spec.args) - len(defaults)
    args = spec.args[:firstdefault]
    kwargs = dict(zip(spec.args[firstdefault:], defaults, strict=True))
    return args, kwargs


def equal_attributes(obj1: Any, obj2: Any, attributes: Iterable | None) -> bool:
    """Compare two objects attribute by attribute.

    Args:
        obj1, obj2: the objects.
        attributes: attribute names, or callables ``f(obj) -> value``. Empty or None
            means "not equal" (Scrapy's rule).

    Returns:
        True if every listed attribute is present and equal on both.
    """
    if not attributes:
        return False
    temp1, temp2 = object(), object()
    for attr in attributes:
        if callable(attr):
            if attr(obj1) != attr(obj2):
                return False
        elif getattr(obj1, attr, temp1) != getattr(obj2, attr, temp2):
            return False
    return True


class WeakKeyCache:
    """A weakly-keyed cache filled on demand by ``default_factory(key)``.

    Args:
        default_factory: called with a missing key; its result is stored and returned.
    """

    def __init__(self, default_factory: Callable[[Any], Any]):
        self.default_factory = default_factory
        self._weakdict: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def __getitem__(self, key):
        try:
            return self._weakdict[key]
        except KeyError:
            value = self._weakdict[key] = self.default_factory(key)
            return value


def retry_on_eintr(function: Callable, *args, **kw):
    """Call ``function(*args, **kw)``, retrying while it fails with ``EINTR``."""
    while True:
        try:
            return function(*args, **kw)
        except OSError as e:
            if e.errno != errno.EINTR:
                raise


def without_none_values(iterable: Mapping | Iterable):
    """Return a copy of ``iterable`` without its None values.

    Args:
        iterable: a mapping (None VALUES dropped, returned as a dict) or another iterable
            (rebuilt with its own type).
    """
    if isinstance(iterable, Mapping):
        return {k: v for k, v in iterable.items() if v is not None}
    return type(iterable)(v for v in iterable if v is not None)


def global_object_name(obj: Any) -> str:
    """Return the full import path of a class or function, e.g. ``'crawlfw.http.Request'``."""
    return f"{obj.__module__}.{obj.__name__}"


def is_writable(path: str | os.PathLike) -> bool:
    """Return True if ``path`` can be written (when it exists) or created (when it does not)."""
    if os.path.exists(path):
        return os.access(path, os.W_OK)
    return os.access(os.path.dirname(path) or ".", os.W_OK)


def setattr_default(obj: Any, name: str, value: Any) -> None:
    """Set ``obj.name = value`` unless ``obj`` already has that attribute (like dict.setdefault)."""
    if not hasattr(obj, name):
        setattr(obj, name, value)


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"crawlfw.utils.python.{old} is deprecated, use {new} instead",
        CrawlfwDeprecationWarning,
        stacklevel=3,
    )


def str_to_unicode(text: str | bytes, encoding: str | None = None, errors: str = "strict") -> str:
    """Deprecated: use :func:`to_unicode`."""
    _deprecated("str_to_unicode", "crawlfw.utils.python.to_unicode")
    return to_unicode(text, encoding, errors)


def unicode_to_str(text: str | bytes, encoding: str | None = None, errors: str = "strict") -> bytes:
    """Deprecated: use :func:`to_bytes`."""
    _deprecated("unicode_to_str", "crawlfw.utils.python.to_bytes")
    return to_bytes(text, encoding, errors)


def isbinarytext(text: bytes) -> bool:
    """Deprecated: use ``not binary_is_text(text)``. True when ``text`` looks binary."""
    _deprecated("isbinarytext", "crawlfw.utils.python.binary_is_text")
    return not binary_is_text(text)


def stringify_dict(dct_or_tuples, encoding: str = "utf-8", keys_only: bool = True) -> dict:
    """Deprecated: return a dict with str keys (and values unless ``keys_only``) encoded to bytes."""
    _deprecated("stringify_dict", "a dict comprehension")
    d = {}
    for k, v in dict(dct_or_tuples).items():
        k = k.encode(encoding) if isinstance(k, str) else k
        if not keys_only:
            v = v.encode(encoding) if isinstance(v, str) else v
        d[k] = v
    return d


def get_func_args_dict(func: Callable, stripself: bool = False) -> Mapping[str, inspect.Parameter]:
    """The parameters of a callable by name (Scrapy 2.14+), ``*args``/``**kwargs``
    included; for a ``functools.partial`` without the ones it binds.

    Args:
        func: any callable.
        stripself: leave out a parameter named ``self``.

    Returns:
        Mapping[str, inspect.Parameter]: ``{}`` when the signature is unknown (builtins).

    Raises:
        TypeError: ``func`` is not callable.
    """
    if not callable(func):
        raise TypeError(f"func must be callable, got '{type(func).__name__}'")
    try:
        sig = inspect.signature(func)
    except ValueError:
        return {}
    args: Mapping[str, inspect.Parameter] = sig.parameters
    if isinstance(func, partial) and func.keywords:
        args = {name: param for name, param in args.items() if name not in func.keywords}
    if stripself and "self" in args:
        args = {name: param for name, param in args.items() if name != "self"}
    return args


class MutableChain:
    """An iterator over several iterables, to which more can be added while iterating
    (``extend``). Deprecated in Scrapy 2.x, as here."""

    def __init__(self, *args: Iterable):
        warnings.warn("MutableChain is deprecated and will be removed in a future version.",
                      CrawlfwDeprecationWarning, stacklevel=2)
        self.data = itertools.chain.from_iterable(args)

    def extend(self, *iterables: Iterable) -> None:
        self.data = itertools.chain(self.data, itertools.chain.from_iterable(iterables))

    def __iter__(self):
        return self

    def __next__(self):
        return next(self.data)


async def _async_chain(*iterables):
    for it in iterables:
        if hasattr(it, "__aiter__"):
            async for value in it:
                yield value
        else:
            for value in it:
                yield value


class MutableAsyncChain:
    """An async iterator over several iterables and async iterables, to which more can
    be added while iterating (``extend``)."""

    def __init__(self, *args):
        self.data = _async_chain(*args)

    def extend(self, *iterables) -> None:
        self.data = _async_chain(self.data, _async_chain(*iterables))

    def __aiter__(self):
        return self

    async def __anext__(self):
        return await self.data.__anext__()


def garbage_collect() -> None:
    """Run a full garbage collection (twice on PyPy, as Scrapy does)."""
    import gc
    import platform

    if platform.python_implementation() == "PyPy":
        gc.collect()
    gc.collect()
