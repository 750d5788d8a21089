"""``Failure``: what errbacks and ``spider_error`` handlers receive.

Scrapy passes Twisted's ``Failure`` to errbacks; spiders use ``failure.value``,
``failure.check(HttpError, DNSLookupError)``, ``failure.request`` and
``failure.getErrorMessage()``. This class offers that interface over a plain exception.
"""

import traceback

__all__ = ["Failure"]


class Failure:
    """Wrap an exception for an errback.

    Args:
        exc_value: the exception instance.
        request: the Request that failed (also set as ``failure.request``).

    Attributes:
        value: the exception instance.
        type: its class.
        tb: its traceback (``__traceback__``), possibly None.
        request: the failed request (or None).
    """

    def __init__(self, exc_value: BaseException, request=None):
        if not isinstance(exc_value, BaseException):
            raise TypeError(f"Failure needs an exception instance, got {exc_value!r}")
        self.value = exc_value
        self.type = type(exc_value)
        self.tb = exc_value.__traceback__
        self.request = request if request is not None else getattr(exc_value, "request", None)

    def check(self, *error_types):
        """Return the first of ``error_types`` the exception is an instance of, else None."""
        for error_type in error_types:
            if isinstance(self.value, error_type):
                return error_type
        return None

    def trap(self, *error_types):
        """Like ``check``, but re-raise the exception when it matches none of the types."""
        matched = self.check(*error_types)
        if matched is None:
            raise self.value
        return matched

    def raiseException(self):  # noqa: N802 (Twisted's name)
        raise self.value

    def getErrorMessage(self) -> str:  # noqa: N802 (Twisted's name)
        """``str(exception)``, or its class name when that is empty."""
        return str(self.value) or self.type.__name__

    def getTraceback(self) -> str:  # noqa: N802 (Twisted's name)
        return "".join(traceback.format_exception(self.type, self.value, self.tb))

    @property
    def frames(self):
        return traceback.extract_tb(self.tb) if self.tb is not None else []

    def exc_info(self):
        """``(type, value, traceback)`` for ``logging``'s ``exc_info``."""
        return (self.type, self.value, self.tb)

    def __repr__(self):
        return f"<Failure {self.type.__name__}: {self.getErrorMessage()}>"
