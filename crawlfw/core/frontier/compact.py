"""Compact records of queued requests: what the in-memory frontier keeps instead of
:class:`~crawlfw.http.Request` objects (issue 30).

A queued ``Request`` object costs about 520 bytes besides its URL (the object, its
``__dict__``, an empty ``Headers``, a bound method). Most requests a crawl queues are
*plain*: a GET to a URL, a callback that is a method of the spider, no body, no
cookies, no headers yet (the downloader middlewares add them later), a little
``meta`` (``depth``, ``is_start_request``, ``download_slot``). :class:`RequestCodec`
turns such a request into a ``bytes`` record of its URL plus a few bytes
(:func:`marshal.dumps` of a short tuple) and, when the request is leased, back into a
``Request`` equal to it in every attribute (``vars()`` compare equal; the callback is
the spider's method of the same name, as :func:`crawlfw.utils.reqser.request_from_dict`
gives it). The record has no priority: the frontier keeps each record under its sort
key (:func:`~crawlfw.core.frontier.hostqueues.sort_key`), which holds the priority.

A request is plain (:meth:`RequestCodec.encode` returns a record) when

- its class is :class:`~crawlfw.http.Request` itself and its instance dict has only the
  attributes ``Request.__init__`` sets (nothing a component added);
- its body is empty, its ``cookies`` are empty, its ``headers`` are an empty
  :class:`~crawlfw.http.headers.Headers`, its encoding is ``utf-8``;
- its ``callback`` and ``errback`` are None or methods of the bound spider, found by
  name (:func:`crawlfw.http.request._serialize._find_method`);
- its ``priority`` is an ``int``;
- ``meta`` and ``cb_kwargs`` have ``str`` keys and *immutable* values (``str``,
  ``int``, ``float``, ``bool``, None, ``bytes``, and tuples of those), at most
  :data:`MAX_EXTRA_BYTES` once encoded; ``flags`` are ``str``.

Anything else (a ``FormRequest``, a body, cookies, a lambda callback, an item or a list
in ``meta``) takes the general path: the frontier keeps the object itself, as before.
Mutable values are left out on purpose: a spider may hand one list or item to several
requests and expect to see one object again in their callbacks; a record would give
each its own copy.

Records are private to one process (:mod:`marshal`'s format is a Python version's, and
a record names callbacks by an index into this codec's table): never stored beyond the
crawl. Encode and decode cost about 0.6-0.8 and 1 µs (``benchmarks/bench_frontier_memory.py
--codec``).
"""

from __future__ import annotations

import marshal
from time import time as _time
from types import MethodType as _MethodType
from typing import TYPE_CHECKING, Any

from crawlfw.http.headers import Headers
from crawlfw.http.request import _UNSET, Request
from crawlfw.http.request._serialize import _find_method
from crawlfw.utils import trackref as _trackref

if TYPE_CHECKING:
    from crawlfw.spiders import Spider

__all__ = ["MAX_EXTRA_BYTES", "RequestCodec"]

#: Largest encoded size of ``meta``, ``cb_kwargs`` and ``flags`` together for which a
#: request is still plain (bytes); a larger one is kept as an object.
MAX_EXTRA_BYTES = 1024

#: The instance attributes ``Request.__init__`` may set (``_cookies``/``_flags`` only
#: when given, ``_trackref_time`` only while trackref is on).
_PLAIN_ATTRS = frozenset((
    "_trackref_time", "_encoding", "method", "_url", "_body", "priority", "callback",
    "errback", "headers", "dont_filter", "_meta", "_cb_kwargs", "_cookies", "_flags",
))

#: Bytes an entry of the Referer table costs besides the value.
_REF_COST = 260

#: Exact types of the immutable values a plain ``meta``/``cb_kwargs`` may hold.
_SCALARS = frozenset((str, int, float, bool, type(None), bytes))

#: The first byte of a record: what follows.
_TAG_PLAIN = 0  # callback id, URL (UTF-8)
_TAG_DEPTH = 1  # callback id, meta['depth'] (0-255), URL
_TAG_REF = 2  # callback id, Referer number (4 bytes), URL
_TAG_REF_DEPTH = 3  # callback id, meta['depth'], Referer number (4 bytes), URL
_TAG_MARSHAL = 4  # marshal.dumps((url, callback id, meta[, errback id, dont_filter[,
#                   method, cb_kwargs, flags[, headers]]]))
_TAG_MARSHAL_PREFIX = bytes((_TAG_MARSHAL,))

#: Tags of the short shapes by (Referer, depth): the first byte of their records.
_SHORT_TAGS = {(False, False): _TAG_PLAIN, (False, True): _TAG_DEPTH,
               (True, False): _TAG_REF, (True, True): _TAG_REF_DEPTH}

#: The instance dict of a plain GET request, copied by :meth:`RequestCodec.decode`.
_TEMPLATE: dict[str, Any] = {
    "_encoding": "utf-8", "method": "GET", "_url": "", "_body": b"", "priority": 0,
    "callback": None, "errback": None, "headers": None, "dont_filter": False,
    "_meta": None, "_cb_kwargs": None,
}

_new = object.__new__
_dict_new = dict.__new__
_dict_get = dict.get
_dict_setitem = dict.__setitem__
_dumps = marshal.dumps
_loads = marshal.loads


def _immutable(value: Any, depth: int = 0) -> bool:
    """True when ``value`` is a scalar of :data:`_SCALARS` or a tuple of such values
    (nested at most 4 deep)."""
    cls = value.__class__
    if cls in _SCALARS:
        return True
    if cls is tuple and depth < 4:
        return all(_immutable(v, depth + 1) for v in value)
    return False


def _plain_dict(d: dict[Any, Any] | None) -> bool:
    """True for None, or a dict with ``str`` keys and immutable values."""
    if not d:
        return True
    if d.__class__ is not dict:
        return False
    scalars = _SCALARS
    for k, v in d.items():
        if k.__class__ is not str:
            return False
        if v.__class__ not in scalars and not _immutable(v):
            return False
    return True


def _plain_headers(headers: dict[Any, Any]) -> bool:
    """True for headers of ``bytes`` names, each with a list of ``bytes`` values."""
    for name, values in headers.items():
        if name.__class__ is not bytes or values.__class__ is not list:
            return False
        for value in values:
            if value.__class__ is not bytes:
                return False
    return True


class RequestCodec:
    """Encodes plain requests of one spider as compact ``bytes`` records, and back.

    Args:
        spider: the spider whose methods callbacks and errbacks are (None: only requests
            without callback and errback are plain; bind one later with :attr:`spider`).

    Attributes:
        spider: the spider (set by the frontier's ``open``).
    """

    def __init__(self, spider: Spider | None = None) -> None:
        self.spider = spider
        self._names: list[str] = [""]  # method id -> name; 0: None (no method)
        self._ids: dict[Any, int] = {}  # function (a method's __func__) -> id, -1: not one
        # Referer values the records hold by number, counted: value -> number, number ->
        # [value, records holding it]; an entry goes with the last record decoded.
        self._ref_ids: dict[bytes, bytes] = {}
        self._refs: dict[bytes, list[Any]] = {}
        self._next_ref = 0
        #: Bytes the Referer table takes (about; not counted in the records' sizes).
        self.table_bytes = 0
        # The first bytes of a short record (tag, callback id[, depth]) by (callback id,
        # depth or -1, Referer or not), made once (at most 256 x 257 x 2 entries).
        self._heads: dict[tuple[int, int, bool], bytes] = {}

    def _head(self, cb_id: int, depth: int, referer: bool) -> bytes:
        """The first bytes of a short record: its tag, ``cb_id`` and ``depth`` (-1:
        none)."""
        tag = _SHORT_TAGS[referer, depth >= 0]
        head = bytes((tag, cb_id)) if depth < 0 else bytes((tag, cb_id, depth))
        self._heads[cb_id, depth, referer] = head
        return head

    def _ref(self, value: bytes) -> bytes:
        """The number (4 bytes) of Referer ``value``, one more record holding it."""
        number = self._ref_ids.get(value)
        if number is None:
            self._next_ref = (self._next_ref + 1) & 0xFFFFFFFF
            number = self._next_ref.to_bytes(4, "little")
            while number in self._refs:  # (after 2**32 values, with some still held)
                self._next_ref = (self._next_ref + 1) & 0xFFFFFFFF
                number = self._next_ref.to_bytes(4, "little")
            self._ref_ids[value] = number
            self._refs[number] = [value, 1]
            self.table_bytes += len(value) + _REF_COST
        else:
            self._refs[number][1] += 1
        return number

    def _unref(self, number: bytes) -> bytes:
        """The Referer of ``number``, one record fewer holding it."""
        entry = self._refs[number]
        entry[1] -= 1
        if not entry[1]:
            del self._refs[number]
            del self._ref_ids[entry[0]]
            self.table_bytes -= len(entry[0]) + _REF_COST
        return entry[0]  # type: ignore[no-any-return]

    def _method_id(self, method: Any) -> int:
        """The id of ``method`` (a bound method of the spider) in this codec's table,
        -1 when it is not a method of the spider that its name finds."""
        spider = self.spider
        try:
            func = method.__func__
            if method.__self__ is not spider:
                return -1
        except AttributeError:
            return -1
        got = self._ids.get(func)
        if got is None:
            try:
                name = _find_method(spider, method)  # type: ignore[no-untyped-call]
            except ValueError:
                got = -1
            else:
                got = len(self._names)
                self._names.append(name)
            self._ids[func] = got
        return got

    def encode(self, request: Request) -> bytes | None:
        """The record of ``request``, or None when it is not plain (see the module doc).

        Args:
            request: any request; it is not changed.

        Returns:
            bytes: ``marshal.dumps`` of ``(url, callback id[, meta, errback id,
            dont_filter, method, cb_kwargs, flags])`` (trailing defaults left out), or
            None.
        """
        if request.__class__ is not Request:
            return None
        d: dict[str, Any] = request.__dict__
        n = len(d)
        if n == 11 or (n == 12 and "_trackref_time" in d):
            # The shapes of most queued requests, first: the instance dict has the 11
            # attributes Request.__init__ always sets (their lookups below find each, so
            # nothing else is there), a GET to a method of the spider, no body, no
            # cookies, meta None or {'depth': n}, no header but the Referer the links of
            # one page share. Same record as the general path below.
            try:
                meta = d["_meta"]  # (first: other meta is the likeliest miss)
                if meta is None:
                    level = -1
                elif meta.__class__ is dict and len(meta) == 1:
                    level = meta.get("depth", -1)
                    if level.__class__ is not int or not 0 <= level < 256:
                        level = -2
                else:
                    level = -2
                if (level != -2 and d["method"] == "GET" and not d["_body"]
                        and d["dont_filter"] is False and d["errback"] is None
                        and d["_cb_kwargs"] is None and d["_encoding"] == "utf-8"
                        and d["priority"].__class__ is int):
                    cb = d["callback"]
                    if cb is None:
                        cb_id = 0
                    elif cb.__class__ is _MethodType and cb.__self__ is self.spider:
                        cb_id = self._ids.get(cb.__func__, -1)
                    else:
                        cb_id = -1
                    headers = d["headers"]
                    if (0 <= cb_id < 256 and headers.__class__ is Headers
                            and headers.encoding == "utf-8"):
                        url_bytes: bytes = d["_url"].encode()
                        if not headers:
                            head = self._heads.get((cb_id, level, False))
                            if head is None:
                                head = self._head(cb_id, level, False)
                            return head + url_bytes
                        if len(headers) == 1:
                            value = _dict_get(headers, b"Referer")
                            if (value.__class__ is list and len(value) == 1
                                    and value[0].__class__ is bytes):
                                head = self._heads.get((cb_id, level, True))
                                if head is None:
                                    head = self._head(cb_id, level, True)
                                return b"".join((head, self._ref(value[0]), url_bytes))
            except KeyError:  # an attribute deleted: the general path says
                pass
        if not _PLAIN_ATTRS.issuperset(d):
            return None
        if (d["_body"] or d["_encoding"] != "utf-8" or d["priority"].__class__ is not int):
            return None
        headers = d["headers"]
        if headers.__class__ is not Headers or headers.encoding != "utf-8":
            return None
        referer: bytes | None = None
        if headers:
            value = _dict_get(headers, b"Referer") if len(headers) == 1 else None
            if (value.__class__ is list and len(value) == 1
                    and value[0].__class__ is bytes):
                referer = value[0]
            elif not _plain_headers(headers):
                return None
        if "_cookies" in d:
            cookies = d["_cookies"]
            if cookies is not _UNSET and (cookies or cookies.__class__ is not dict):
                return None
        cb = d["callback"]
        if cb is None:
            cb_id = 0
        else:
            cb_id = self._ids.get(getattr(cb, "__func__", None), -2)
            if cb_id < 0 or cb.__self__ is not self.spider:
                cb_id = self._method_id(cb)
                if cb_id < 0:
                    return None
        eb = d["errback"]
        if eb is None:
            eb_id = 0
        else:
            eb_id = self._method_id(eb)
            if eb_id < 0:
                return None
        meta = d["_meta"] or None
        url: str = d["_url"]
        if (d["method"] == "GET" and d["dont_filter"] is False and not eb_id
                and cb_id < 256 and not d["_cb_kwargs"]
                and (d.get("_flags") is _UNSET or not d.get("_flags", ()))):
            # the shapes of most queued requests: no meta, or meta {'depth': n}; no
            # headers, or only the Referer a page's links share (kept once, by number)
            if not headers:
                if meta is None:
                    return bytes((_TAG_PLAIN, cb_id)) + url.encode()
                if len(meta) == 1 and meta.__class__ is dict:
                    depth = meta.get("depth")
                    if depth.__class__ is int and 0 <= depth < 256:
                        return bytes((_TAG_DEPTH, cb_id, depth)) + url.encode()
            elif referer is not None:
                if meta is None:
                    return (bytes((_TAG_REF, cb_id)) + self._ref(referer)
                            + url.encode())
                if len(meta) == 1 and meta.__class__ is dict:
                    depth = meta.get("depth")
                    if depth.__class__ is int and 0 <= depth < 256:
                        return (bytes((_TAG_REF_DEPTH, cb_id, depth))
                                + self._ref(referer) + url.encode())
        cb_kwargs = d["_cb_kwargs"] or None
        flags = d.get("_flags", _UNSET)
        if flags is _UNSET or (not flags and flags.__class__ is list):
            flags = None
        elif flags.__class__ is not list or any(f.__class__ is not str for f in flags):
            return None
        if (meta is not None and not _plain_dict(meta)) or (
                cb_kwargs is not None and not _plain_dict(cb_kwargs)):
            return None
        method = d["method"]
        dont_filter = d["dont_filter"]
        fields: tuple[Any, ...]
        if headers:
            fields = (url, cb_id, meta, eb_id, dont_filter, method, cb_kwargs, flags,
                      dict(headers))
        elif flags is not None or cb_kwargs is not None or method != "GET":
            fields = (url, cb_id, meta, eb_id, dont_filter, method, cb_kwargs, flags)
        elif dont_filter is not False or eb_id:
            fields = (url, cb_id, meta, eb_id, dont_filter)
        else:
            fields = (url, cb_id, meta)
        try:
            record = _dumps(fields)
        except ValueError:  # a method or URL of a str subclass
            return None
        if len(record) - len(url) > MAX_EXTRA_BYTES:
            return None
        return _TAG_MARSHAL_PREFIX + record

    def decode(self, record: bytes, key: int) -> Request:
        """The request of ``record``, kept under sort key ``key`` (its priority is
        ``-(key >> 1)``: :func:`~crawlfw.core.frontier.hostqueues.sort_key` reversed).

        Returns:
            A new :class:`~crawlfw.http.Request` equal to the one encoded.

        Raises:
            AttributeError: the spider has lost a method a record names (it was
                deleted from the spider while the request waited).
        """
        tag = record[0]
        spider = self.spider
        request = _new(Request)
        if tag < _TAG_MARSHAL:
            cb_id = record[1]
            headers = _dict_new(Headers)
            if tag == _TAG_PLAIN:
                url = record[2:].decode()
                meta = None
            elif tag == _TAG_DEPTH:
                url = record[3:].decode()
                meta = {"depth": record[2]}
            elif tag == _TAG_REF:
                url = record[6:].decode()
                meta = None
                _dict_setitem(headers, b"Referer", [self._unref(record[2:6])])
            else:  # _TAG_REF_DEPTH
                url = record[7:].decode()
                meta = {"depth": record[2]}
                _dict_setitem(headers, b"Referer", [self._unref(record[3:7])])
            d = _TEMPLATE.copy()
            d["_url"] = url
            d["priority"] = -(key >> 1)
            if cb_id:
                d["callback"] = getattr(spider, self._names[cb_id])
            d["headers"] = headers
            d["_meta"] = meta
        else:
            fields = _loads(memoryview(record)[1:])
            n = len(fields)
            names = self._names
            d = _TEMPLATE.copy()
            d["_url"] = fields[0]
            d["priority"] = -(key >> 1)
            cb_id = fields[1]
            if cb_id:
                d["callback"] = getattr(spider, names[cb_id])
            d["headers"] = _dict_new(Headers)
            d["_meta"] = fields[2]
            if n > 3:
                eb_id = fields[3]
                if eb_id:
                    d["errback"] = getattr(spider, names[eb_id])
                d["dont_filter"] = fields[4]
                if n > 5:
                    d["method"] = fields[5]
                    d["_cb_kwargs"] = fields[6]
                    flags = fields[7]
                    if flags is not None:
                        d["_flags"] = flags
                    if n > 8:
                        dict.update(d["headers"], fields[8])
        if _trackref.enabled:
            d["_trackref_time"] = _time()
        request.__dict__ = d
        return request
