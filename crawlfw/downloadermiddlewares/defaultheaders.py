"""Set the ``DEFAULT_REQUEST_HEADERS`` on every request that lacks them."""

from crawlfw.utils.python import without_none_values

__all__ = ["DefaultHeadersMiddleware"]


class DefaultHeadersMiddleware:
    """Add default headers to each request, without overriding headers it already has.

    Args:
        headers: ``(name, value)`` pairs (str or bytes); a value may be a list of values.
    """

    def __init__(self, headers):
        self._headers = list(headers)

    @classmethod
    def from_crawler(cls, crawler):
        """Read ``DEFAULT_REQUEST_HEADERS`` (a dict; entries set to None are dropped)."""
        headers = without_none_values(crawler.settings["DEFAULT_REQUEST_HEADERS"])
        return cls(headers.items())

    def process_request(self, request, spider):
        """``request.headers.setdefault(name, value)`` for every default header."""
        for name, value in self._headers:
            request.headers.setdefault(name, value)
