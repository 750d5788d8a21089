"""Request -> JSON-able dict, the half of :mod:`crawlfw.utils.reqser` that
:meth:`crawlfw.http.Request.to_dict` needs (Scrapy 2.6 builds that dict in
``scrapy.http.request`` too).

It lives in ``http/`` so that ``http/`` never imports :mod:`crawlfw.utils.reqser`, which
builds on ``http/`` (the dict format, and the way back,
:func:`~crawlfw.utils.reqser.request_from_dict`) and names it: no import circle
(``tests/test_layers.py``). It imports no request
class: the base class is known by its path (:func:`_is_base`), so
``crawlfw.http.request`` may import this module without a circle.
"""

import inspect
from typing import Any

__all__ = ["request_to_dict"]

_BYTES_CODEC = 'latin-1'

#: ``module``, ``qualname`` of :class:`crawlfw.http.Request`, whose dicts carry no ``_class``.
_BASE = ("crawlfw.http.request", "Request")


def _is_base(cls) -> bool:
    """True if ``cls`` is :class:`crawlfw.http.Request` itself (not a subclass)."""
    return cls.__qualname__ == _BASE[1] and cls.__module__ == _BASE[0]


#: The value :func:`request_from_dict` assumes for a key a compact dict leaves out.
_DEFAULTS = {
    'callback': None, 'errback': None, 'method': 'GET', 'headers': {}, 'body': '',
    'cookies': {}, 'meta': {}, '_encoding': 'utf-8', 'priority': 0, 'dont_filter': False,
    'flags': [], 'cb_kwargs': {},
}

#: The keys of a plain request's compact dict (no headers, body, meta, errback...).
_PLAIN_KEYS = frozenset(('url', 'callback', 'method', 'priority', 'dont_filter'))


# Any: a Request and a Spider, which this module cannot import (see above)
def request_to_dict(request: Any, spider: Any = None, *, compact: bool = False) -> dict[str, Any]:
    """Convert a Request into a JSON-able dict.

    Args:
        request: a :class:`~crawlfw.http.Request` (or subclass).
        spider: the spider whose methods the callback/errback are; required when
            the request has a callback or errback.
        compact: leave out the keys whose value is the default (a plain GET request
            becomes ``{'url': ..., 'callback': ...}``): smaller to store, faster to
            read back.

    Returns:
        dict: see the module docstring for the keys.

    Raises:
        ValueError: the callback or errback is not a method of ``spider`` (the
            message names the function and the spider).
    """
    cb = request.callback
    if callable(cb):
        cb = _find_method(spider, cb)
    if compact and _is_plain(request):
        d = {'url': request.url}
        if cb is not None:
            d['callback'] = cb
        if request.method != 'GET':
            d['method'] = request.method
        if request.priority:
            d['priority'] = request.priority
        if request.dont_filter:
            d['dont_filter'] = True
        return d
    eb = request.errback
    if callable(eb):
        eb = _find_method(spider, eb)
    d = {
        'url': request.url,
        'callback': cb,
        'errback': eb,
        'method': request.method,
        'headers': {
            _text(name): [_text(v) for v in values]
            for name, values in request.headers.items()
        },
        'body': _text(request.body),
        'cookies': request.cookies,
        'meta': request.meta,
        '_encoding': request.encoding,
        'priority': request.priority,
        'dont_filter': request.dont_filter,
        'flags': list(getattr(request, 'flags', None) or []),
        'cb_kwargs': dict(getattr(request, 'cb_kwargs', None) or {}),
    }
    for name in _extra_attributes(type(request)):
        d[name] = getattr(request, name)
    if not _is_base(type(request)):
        d['_class'] = f'{type(request).__module__}.{type(request).__name__}'
    if compact:
        return {k: v for k, v in d.items() if k not in _DEFAULTS or v != _DEFAULTS[k]}
    return d


#: The names of ``Request.attributes`` (those the dict above stores under its own keys).
_BASE_ATTRIBUTES = frozenset(_DEFAULTS) - {'_encoding'} | {'url', 'encoding'}


def _extra_attributes(cls) -> list[str]:
    """The names a Request subclass adds to ``Request.attributes`` (its constructor
    arguments kept as attributes, e.g. JsonRequest's ``dumps_kwargs``), stored in the
    dict under their own names."""
    return [name for name in getattr(cls, 'attributes', ()) if name not in _BASE_ATTRIBUTES]


def _is_plain(request) -> bool:
    """True for a :class:`~crawlfw.http.Request` with nothing but a URL, a callback, a
    method, a priority and ``dont_filter`` (what most crawls queue)."""
    return (_is_base(type(request)) and request.errback is None
            and not request._meta and not request._cb_kwargs and not request.flags
            and not request.headers and not request.body and not request.cookies
            and request.encoding == 'utf-8')


def _text(value):
    if isinstance(value, bytes):
        return value.decode(_BYTES_CODEC)
    return str(value)


def _find_method(obj, func):
    """Name of ``func`` as a method of ``obj`` (private names mangled as Python does)."""
    if obj is not None and inspect.ismethod(func) and func.__self__ is obj:
        name = func.__func__.__name__
        if getattr(obj, name, None) == func:
            return name
        # name mangling: __parse defined in class Foo is reachable as _Foo__parse
        if name.startswith('__') and not name.endswith('__'):
            for cls in type(obj).__mro__:
                mangled = f"_{cls.__name__.lstrip('_')}{name}"
                if getattr(obj, mangled, None) == func:
                    return mangled
    raise ValueError(f"Function {func!r} is not an instance method in: {obj!r}")
