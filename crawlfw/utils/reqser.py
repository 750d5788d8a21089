"""Request (de)serialization to plain, JSON-able dicts (Scrapy 1.2's ``scrapy.utils.reqser``).

Used by the persistent (``JOBDIR``) scheduler queue. Differences from Scrapy,
so that ``json.dumps(request_to_dict(r))`` works:

* ``body`` is a ``str`` holding the body bytes decoded as **latin-1** (every byte
  0-255 maps to the code point of the same value, so the round trip is lossless);
* ``headers`` is ``{name: [value, ...]}`` with names and values decoded as
  latin-1 in the same way;
* ``callback``/``errback`` are spider method names (str) or None;
* ``_class`` is the dotted path of the request class when it is not
  :class:`~crawlfw.http.Request` (e.g. ``crawlfw.http.FormRequest``); on the way back
  it is accepted only if it names a ``Request`` subclass already defined in the
  process, looked up without importing or calling anything (a ``JOBDIR`` or Redis
  frontier must not be able to name code).

``meta``, ``cookies`` and ``cb_kwargs`` are stored as they are: they are JSON-able
only if the spider put JSON-able values in them.

Dict keys: ``url``, ``callback``, ``errback``, ``method``, ``headers``, ``body``,
``cookies``, ``meta``, ``_encoding``, ``priority``, ``dont_filter``, ``flags``,
``cb_kwargs``, the names a subclass adds to ``Request.attributes`` (JsonRequest's
``dumps_kwargs``), and optionally ``_class``. A *compact* dict (``compact=True``, what the
frontiers store) leaves out every key whose value is the default; :func:`request_from_dict`
reads both forms.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from crawlfw.http.request import Request
from crawlfw.http.request._serialize import (  # noqa: F401  (private names: old imports)
    _BYTES_CODEC,
    _DEFAULTS,
    _PLAIN_KEYS,
    _extra_attributes,
    _find_method,
    _is_plain,
    _text,
    request_to_dict,
)

if TYPE_CHECKING:
    from crawlfw.spiders import Spider

__all__ = ["request_to_dict", "request_from_dict"]



def request_from_dict(d: Mapping[str, Any], spider: Spider | None = None) -> Request:
    """Rebuild a Request from a dict made by :func:`request_to_dict`.

    Args:
        d (dict): the serialized request.
        spider: the spider on which callback/errback names are looked up. Without
            one the request is built without callback/errback.

    Returns:
        The :class:`~crawlfw.http.Request` (or the class named by ``_class``).

    Raises:
        ValueError: ``spider`` has no method with the callback's or errback's name.
        KeyError: a required key (``url``) is missing.
    """
    cb = d.get('callback')
    cb = _get_method(spider, cb) if cb and spider is not None else None
    if len(d) <= len(_PLAIN_KEYS) and _PLAIN_KEYS.issuperset(d):  # a plain request
        return Request(d['url'], callback=cb, method=d.get('method', 'GET'),
                                priority=d.get('priority', 0),
                                dont_filter=d.get('dont_filter', False))
    request_cls = _named_request_class(d['_class']) if d.get('_class') else Request
    eb = d.get('errback')
    eb = _get_method(spider, eb) if eb and spider is not None else None
    headers = d.get('headers') or {}
    kwargs = {
        'url': d['url'],
        'callback': cb,
        'errback': eb,
        'method': d.get('method', 'GET'),
        'headers': {_bytes(k): [_bytes(v) for v in _listify(vs)] for k, vs in headers.items()},
        'body': _bytes(d.get('body') or ''),
        'cookies': d.get('cookies'),
        'meta': d.get('meta'),
        'encoding': d.get('_encoding', 'utf-8'),
        'priority': d.get('priority', 0),
        'dont_filter': d.get('dont_filter', False),
    }
    if d.get('flags'):
        kwargs['flags'] = d['flags']
    if d.get('cb_kwargs'):
        kwargs['cb_kwargs'] = d['cb_kwargs']
    for name in _extra_attributes(request_cls):
        if name in d:
            kwargs[name] = d[name]
    return request_cls(**kwargs)


def _named_request_class(path):
    """The Request subclass whose ``module.QualName`` is ``path``, found among the
    classes already defined (``Request.__subclasses__()``, recursively).

    Nothing is imported or called: a JOBDIR or a Redis frontier someone else can write
    to cannot make the crawler import a module or call an arbitrary object
    (docs/security.md).

    Raises:
        ValueError: ``path`` is not a string naming a loaded Request subclass.
    """
    base = Request
    if isinstance(path, str):
        if path == f'{base.__module__}.{base.__name__}':
            return base
        todo = list(base.__subclasses__())
        seen = set()
        while todo:
            cls = todo.pop()
            if cls in seen:
                continue
            seen.add(cls)
            if f'{cls.__module__}.{cls.__qualname__}' == path or (
                    f'{cls.__module__}.{cls.__name__}' == path):
                return cls
            todo.extend(cls.__subclasses__())
    raise ValueError(f"Serialized request names {path!r} as its class, which is not a "
                     f"Request subclass defined in this process: refused")


def _bytes(value):
    if isinstance(value, bytes):
        return value
    return str(value).encode(_BYTES_CODEC)


def _listify(values):
    if isinstance(values, (list, tuple)):
        return values
    return [values]


def _get_method(obj, name):
    """The bound method ``name`` of ``obj`` (only what :func:`_find_method` can name).

    Raises:
        ValueError: ``obj`` has no such attribute, or it is not a method bound to ``obj``.
    """
    name = str(name)
    try:
        method = getattr(obj, name)
    except AttributeError:
        raise ValueError(f"Method {name!r} not found in: {obj!r}") from None
    if not (inspect.ismethod(method) and method.__self__ is obj):
        raise ValueError(f"{name!r} is not an instance method of: {obj!r}")
    return method
