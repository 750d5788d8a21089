"""Request (de)serialization to plain, JSON-able dicts (Scrapy 1.2's ``scrapy.utils.reqser``).

Used by the persistent (``JOBDIR``) scheduler queue. Differences from Scrapy,
so that ``json.dumps(request_to_dict(r))`` works:

* ``body`` is a ``str`` holding the body bytes decoded as **latin-1** (every byte
  0-255 maps to the code point of the same value, so the round trip is lossless);
* ``headers`` is ``{name: [value, ...]}`` with names and values decoded as
  latin-1 in the same way;
* ``callback``/``errback`` are spider method names (str) or None;
* ``_class`` is the dotted path of the request class when it is not
  :class:`~crawlfw.http.Request` (e.g. ``crawlfw.http.FormRequest``).

``meta``, ``cookies`` and ``cb_kwargs`` are stored as they are: they are JSON-able
only if the spider put JSON-able values in them.

Dict keys: ``url``, ``callback``, ``errback``, ``method``, ``headers``, ``body``,
``cookies``, ``meta``, ``_encoding``, ``priority``, ``dont_filter``, ``flags``,
``cb_kwargs`` and optionally ``_class``.
"""

import inspect

from crawlfw.utils.misc import load_object

__all__ = ["request_to_dict", "request_from_dict"]

_BYTES_CODEC = 'latin-1'


def request_to_dict(request, spider=None):
    """Convert a Request into a JSON-able dict.

    Args:
        request: a :class:`~crawlfw.http.Request` (or subclass).
        spider: the spider whose methods the callback/errback are; required when
            the request has a callback or errback.

    Returns:
        dict: see the module docstring for the keys.

    Raises:
        ValueError: the callback or errback is not a method of ``spider`` (the
            message names the function and the spider).
    """
    cb = request.callback
    if callable(cb):
        cb = _find_method(spider, cb)
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
    from crawlfw.http import Request

    if type(request) is not Request:
        d['_class'] = f'{type(request).__module__}.{type(request).__name__}'
    return d


def request_from_dict(d, spider=None):
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
    from crawlfw.http import Request

    request_cls = load_object(d['_class']) if d.get('_class') else Request
    cb = d.get('callback')
    cb = _get_method(spider, cb) if cb and spider is not None else None
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
    return request_cls(**kwargs)


def _text(value):
    if isinstance(value, bytes):
        return value.decode(_BYTES_CODEC)
    return str(value)


def _bytes(value):
    if isinstance(value, bytes):
        return value
    return str(value).encode(_BYTES_CODEC)


def _listify(values):
    if isinstance(values, (list, tuple)):
        return values
    return [values]


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


def _get_method(obj, name):
    name = str(name)
    try:
        return getattr(obj, name)
    except AttributeError:
        raise ValueError(f"Method {name!r} not found in: {obj!r}") from None
