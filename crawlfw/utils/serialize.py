"""JSON encoding of the values spiders put in items (Scrapy 1.2 ``scrapy.utils.serialize``).

:class:`CrawlfwJSONEncoder` is :class:`json.JSONEncoder` plus conversions for the
non-JSON types items commonly carry:

===================================  =============================================
value                                encoded as
===================================  =============================================
``set`` / ``frozenset``              list (iteration order)
``datetime.datetime``                ``"YYYY-MM-DD HH:MM:SS"`` (no time zone, no µs)
``datetime.date``                    ``"YYYY-MM-DD"``
``datetime.time``                    ``"HH:MM:SS"``
``decimal.Decimal``                  its ``str()`` (a JSON string, so no precision loss)
an Item (``crawlfw.item.Item``)      ``dict(item)``
a dataclass/attrs/pydantic item      ``ItemAdapter(item).asdict()`` (nested items too)
``crawlfw.http.Request``             ``"<Request GET http://...>"`` (class name, method, URL)
``crawlfw.http.Response``            ``"<HtmlResponse 200 http://...>"`` (class, status, URL)
===================================  =============================================

Scrapy's names ``ScrapyJSONEncoder`` / ``ScrapyJSONDecoder`` are aliases.
"""

from __future__ import annotations

import datetime
import decimal
import json
from collections.abc import Mapping

__all__ = [
    "CrawlfwJSONEncoder",
    "CrawlfwJSONDecoder",
    "ScrapyJSONEncoder",
    "ScrapyJSONDecoder",
]


def _http_classes():
    """Return ``(Request, Response)`` from ``crawlfw.http``, or ``(None, None)``.

    Imported lazily: ``crawlfw.http`` is heavier than this module and imports nothing
    from it, so importing here at module level could only slow things down.
    """
    try:
        from crawlfw.http import Request, Response
    except ImportError:  # pragma: no cover - crawlfw.http is part of the package
        return None, None
    return Request, Response


def _is_item(obj) -> bool:
    """True for Scrapy-style Items: a Mapping whose class declares a ``fields`` mapping."""
    return isinstance(obj, Mapping) and isinstance(getattr(type(obj), "fields", None), Mapping)


def _is_other_item(obj) -> bool:
    """True for items of the other types ``itemadapter`` adapts (dataclass, attrs,
    pydantic...); ``crawlfw.item`` is imported here, lazily (it is not needed to load
    settings)."""
    try:
        from crawlfw.item import AnyItem
    except ImportError:  # pragma: no cover - crawlfw.item is part of the package
        return False
    return isinstance(obj, AnyItem)


class CrawlfwJSONEncoder(json.JSONEncoder):
    """A :class:`json.JSONEncoder` that also encodes dates, decimals, sets, items and
    requests/responses (see the module docstring for each form).

    Takes the keyword arguments of :class:`json.JSONEncoder` (``ensure_ascii``,
    ``indent``, ``sort_keys``, ``separators``...).

    Attributes:
        DATE_FORMAT: :meth:`~datetime.date.strftime` format for dates, ``"%Y-%m-%d"``.
        TIME_FORMAT: format for times, ``"%H:%M:%S"``; a datetime uses
            ``DATE_FORMAT + " " + TIME_FORMAT``.
    """

    DATE_FORMAT = "%Y-%m-%d"
    TIME_FORMAT = "%H:%M:%S"

    def default(self, o):
        """Return a JSON-encodable stand-in for ``o``.

        Args:
            o: an object the stock encoder cannot handle.

        Returns:
            A list, str or dict as listed in the module docstring.

        Raises:
            TypeError: ``o`` is of none of the supported types (from
                :meth:`json.JSONEncoder.default`, naming the type).
        """
        if isinstance(o, (set, frozenset)):
            return list(o)
        if isinstance(o, datetime.datetime):
            return o.strftime(f"{self.DATE_FORMAT} {self.TIME_FORMAT}")
        if isinstance(o, datetime.date):
            return o.strftime(self.DATE_FORMAT)
        if isinstance(o, datetime.time):
            return o.strftime(self.TIME_FORMAT)
        if isinstance(o, decimal.Decimal):
            return str(o)
        if _is_item(o):
            return dict(o)
        if _is_other_item(o):  # a dataclass, attrs or pydantic item
            from itemadapter import ItemAdapter

            return ItemAdapter(o).asdict()
        request_cls, response_cls = _http_classes()
        if request_cls is not None and isinstance(o, request_cls):
            return f"<{type(o).__name__} {o.method} {o.url}>"
        if response_cls is not None and isinstance(o, response_cls):
            return f"<{type(o).__name__} {o.status} {o.url}>"
        return super().default(o)


class CrawlfwJSONDecoder(json.JSONDecoder):
    """The stock :class:`json.JSONDecoder`, under the name Scrapy exports."""


#: Scrapy 1.2's name for :class:`CrawlfwJSONEncoder`.
ScrapyJSONEncoder = CrawlfwJSONEncoder
#: Scrapy 1.2's name for :class:`CrawlfwJSONDecoder`.
ScrapyJSONDecoder = CrawlfwJSONDecoder
