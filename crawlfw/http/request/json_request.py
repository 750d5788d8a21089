"""``JsonRequest``: a request whose body is JSON (Scrapy 2's
``scrapy.http.request.json_request``)."""

from __future__ import annotations

import copy
import json
import warnings

from crawlfw.http.request import Request

__all__ = ["JsonRequest"]


class JsonRequest(Request):
    """A :class:`~crawlfw.http.Request` that sends JSON.

    Args:
        data: any JSON-serializable object; it becomes the body
            (``json.dumps(data, **dumps_kwargs)``) and the method POST unless
            ``method`` is given. Ignored, with a warning, when ``body`` is given too.
        dumps_kwargs: keyword arguments of :func:`json.dumps` (``sort_keys=True``
            unless given).
        *args, **kwargs: as for :class:`~crawlfw.http.Request`.

    The headers ``Content-Type: application/json`` and ``Accept: application/json,
    text/javascript, */*; q=0.01`` are set unless given (RFC 8259 §11 media type).
    :meth:`replace` also takes ``data``.
    """

    #: :attr:`Request.attributes` and ``dumps_kwargs`` (Scrapy 2's).
    attributes: tuple[str, ...] = (*Request.attributes, "dumps_kwargs")

    def __init__(self, *args, dumps_kwargs: dict | None = None, **kwargs):
        dumps_kwargs = copy.deepcopy(dumps_kwargs) if dumps_kwargs is not None else {}
        dumps_kwargs.setdefault("sort_keys", True)
        self._dumps_kwargs = dumps_kwargs
        if self._body_from_data(kwargs):
            kwargs.setdefault("method", "POST")
        super().__init__(*args, **kwargs)
        self.headers.setdefault(b"Content-Type", b"application/json")
        self.headers.setdefault(b"Accept", b"application/json, text/javascript, */*; q=0.01")

    @property
    def dumps_kwargs(self) -> dict:
        """The :func:`json.dumps` keyword arguments."""
        return self._dumps_kwargs

    def replace(self, *args, **kwargs):
        """As :meth:`Request.replace`, also taking ``data`` (a new JSON body) and
        ``dumps_kwargs``."""
        self._body_from_data(kwargs)
        return super().replace(*args, **kwargs)

    def _body_from_data(self, kwargs: dict) -> bool:
        """Pop ``data`` from ``kwargs`` and make it the JSON ``body`` (a ``body`` also
        given wins, with a warning, as in Scrapy); True when ``data`` became the body."""
        data = kwargs.pop("data", None)
        if data is None:
            return False
        if kwargs.get("body") is not None:
            warnings.warn("Both body and data passed. data will be ignored", stacklevel=3)
            return False
        kwargs["body"] = self._dumps(data)
        return True

    def _dumps(self, data) -> str:
        return json.dumps(data, **self._dumps_kwargs)
