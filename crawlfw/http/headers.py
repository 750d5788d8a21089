"""HTTP headers: a case-insensitive, multi-valued dict of bytes (Scrapy 1.2's ``Headers``)."""

from __future__ import annotations

from collections.abc import Iterable

from w3lib.http import headers_dict_to_raw

from crawlfw.utils.datatypes import CaselessDict
from crawlfw.utils.python import to_unicode

__all__ = ["Headers"]

_dict_get = dict.get
_dict_getitem = dict.__getitem__
_dict_contains = dict.__contains__
_dict_setitem = dict.__setitem__
_dict_new = dict.__new__


def _store_encoding(headers, encoding) -> None:
    """Set ``headers.encoding`` unless it is the class's default ``"utf-8"`` (a plain
    str), which :attr:`Headers.encoding` gives without an instance attribute."""
    if encoding != "utf-8" or encoding.__class__ is not str or headers.__class__.encoding != "utf-8":
        headers.encoding = encoding


class Headers(CaselessDict):
    """Case-insensitive, multi-valued HTTP header fields (RFC 9110 section 5).

    Keys are stored as Title-Case bytes (``b'Content-Type'``); values as lists of
    bytes. ``str`` names and values are encoded with ``encoding``, ``int`` values are
    written in decimal. Reading ``headers[name]`` gives the LAST value;
    :meth:`getlist` gives all of them.

    >>> h = Headers({'content-type': 'text/html', 'Set-Cookie': ['a=1', 'b=2']})
    >>> h['Content-Type'], h.getlist('set-cookie')
    (b'text/html', [b'a=1', b'b=2'])

    Args:
        seq: initial fields: a mapping ``{name: value or [values]}`` or an iterable of
            ``(name, value or [values])`` pairs. A value of None stores an empty list.
        encoding: codec for str names and values (default ``'utf-8'``).

    Raises:
        TypeError: a name is not str/bytes, or a value is not str/bytes/int.
    """

    #: The codec of str names and values. The default lives here, on the class: a new
    #: request's or response's headers with the default encoding store nothing on the
    #: instance (no instance dict made for it; no __slots__, so that a subclass may mix
    #: in a class with slots of its own).
    encoding: str = "utf-8"

    def __init__(self, seq=None, encoding: str = "utf-8"):
        _store_encoding(self, encoding)
        super().__init__(seq)

    @classmethod
    def _empty(cls, encoding: str = "utf-8") -> Headers:
        """``Headers(encoding=encoding)``, without the constructor chain (hot path:
        one per new Request)."""
        self = _dict_new(cls)
        if encoding != "utf-8" or encoding.__class__ is not str or cls.encoding != "utf-8":
            self.encoding = encoding  # _store_encoding, inline
        return self

    @classmethod
    def from_raw_pairs(
        cls, pairs: Iterable[tuple[bytes, bytes]], encoding: str = "utf-8"
    ) -> Headers:
        """Build headers from the fields of a received message, in arrival order.

        The fast path for the downloader: one call per response, no per-field
        normalisation beyond title-casing the name. Repeated names (``Set-Cookie``)
        accumulate in arrival order.

        Args:
            pairs: ``(name, value)`` pairs of ``bytes`` with surrounding whitespace and
                the line's CRLF already stripped (RFC 9112 section 5). ``str`` items are
                accepted too, and encoded with ``encoding``.
            encoding: the new object's :attr:`encoding`.

        Returns:
            A new :class:`Headers`.
        """
        self = cls.__new__(cls)
        _store_encoding(self, encoding)
        for name, value in pairs:
            if name.__class__ is not bytes:
                name = self._tobytes(name)
            if value.__class__ is not bytes:
                value = self._tobytes(value)
            key = name.title()
            lst = _dict_get(self, key)
            if lst is None:
                _dict_setitem(self, key, [value])
            else:
                lst.append(value)
        return self

    def normkey(self, key) -> bytes:
        """Return the stored form of a field name: Title-Case bytes."""
        if key.__class__ is bytes:
            return key.title()
        if isinstance(key, str):
            return key.title().encode(self.encoding)
        if isinstance(key, bytes):
            return bytes(key).title()
        raise TypeError(f"Header name must be str or bytes, got {type(key).__name__}: {key!r}")

    def normvalue(self, value) -> list[bytes]:
        """Return the stored form of a value: a new list of bytes."""
        if value is None:
            return []
        if isinstance(value, (str, bytes)):
            return [self._tobytes(value)]
        if not hasattr(value, "__iter__"):
            return [self._tobytes(value)]
        return [self._tobytes(x) for x in value]

    def _tobytes(self, x) -> bytes:
        if isinstance(x, bytes):
            return x
        if isinstance(x, str):
            return x.encode(self.encoding)
        if isinstance(x, int) and not isinstance(x, bool):
            return str(x).encode(self.encoding)
        raise TypeError(f"Unsupported value type: {type(x).__name__} ({x!r})")

    def __getitem__(self, key) -> bytes | None:
        """Return the last value of ``key`` (None if its list is empty).

        Raises:
            KeyError: the field is absent.
        """
        lst = _dict_getitem(self, self.normkey(key))
        return lst[-1] if lst else None

    def get(self, key, def_val=None) -> bytes | None:
        """Return the last value of ``key``, else the (normalised) last of ``def_val``."""
        lst = _dict_get(self, self.normkey(key))
        if lst is None:
            lst = self.normvalue(def_val)
        return lst[-1] if lst else None

    def getlist(self, key, def_val=None) -> list[bytes]:
        """Return all values of ``key`` (the stored list), else ``def_val`` normalised, else []."""
        lst = _dict_get(self, self.normkey(key))
        if lst is not None:
            return lst
        if def_val is not None:
            return self.normvalue(def_val)
        return []

    def setdefault_bytes(self, key: bytes, value: bytes) -> bool:
        """Give field ``key`` the single value ``value`` unless it is present.

        ``if key not in h: h[key] = value`` without normalising: ``key`` must already
        be in the stored form (Title-Case bytes, e.g. ``b"Referer"``) and ``value`` bytes
        (e.g. ``url.encode(h.encoding)``). Middlewares that set one header on every
        request use it.

        Args:
            key: the field name, Title-Case bytes.
            value: the value, bytes.

        Returns:
            True when the field was set, False when it was already there (unchanged).
        """
        if _dict_contains(self, key):
            return False
        _dict_setitem(self, key, [value])
        return True

    def setlist(self, key, list_) -> None:
        """Replace all values of ``key``."""
        self[key] = list_

    def setlistdefault(self, key, default_list=()) -> list[bytes]:
        """Set ``key`` to ``default_list`` if absent; return its list."""
        return self.setdefault(key, default_list)

    def appendlist(self, key, value) -> None:
        """Add ``value`` (or each of a list of values) after the existing values of ``key``."""
        lst = self.getlist(key)
        lst.extend(self.normvalue(value))
        self[key] = lst

    def items(self) -> list[tuple[bytes, list[bytes]]]:
        """Return ``[(name, [values]), ...]`` in insertion order."""
        return list(dict.items(self))

    iteritems = items

    def values(self) -> list[bytes | None]:
        """Return the last value of every field."""
        return [lst[-1] if lst else None for lst in dict.values(self)]

    def to_string(self) -> bytes:
        """Return the fields as raw HTTP lines ``b'Name: value\\r\\n...'`` (no trailing CRLF)."""
        return headers_dict_to_raw(self)

    def to_tuple_list(self) -> list[tuple[str, str]]:
        """Return the fields as ``[(name, value), ...]`` of str, in insertion order, one
        pair per value (a field with several values gives several pairs), decoded with
        :attr:`encoding` (Scrapy 2's ``Headers.to_tuple_list``).

        Raises:
            UnicodeDecodeError: a name or value is not valid in :attr:`encoding`.
        """
        encoding = self.encoding
        return [
            (key.decode(encoding), value.decode(encoding))
            for key, values in dict.items(self)
            for value in values
        ]

    def to_unicode_dict(self) -> CaselessDict:
        """Return a :class:`CaselessDict` of ``str`` names and comma-joined ``str`` values."""
        return CaselessDict(
            (
                to_unicode(key, encoding=self.encoding),
                to_unicode(b",".join(value), encoding=self.encoding),
            )
            for key, value in dict.items(self)
        )

    def __copy__(self) -> Headers:
        cls = self.__class__
        new = cls.__new__(cls)
        _store_encoding(new, self.encoding)
        for key, lst in dict.items(self):
            _dict_setitem(new, key, list(lst))
        return new

    copy = __copy__

    def __reduce__(self):
        return (self.__class__, (list(dict.items(self)), self.encoding))
