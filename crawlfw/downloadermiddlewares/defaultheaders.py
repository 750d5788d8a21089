"""Set the ``DEFAULT_REQUEST_HEADERS`` on every request that lacks them."""

from crawlfw.http.headers import Headers
from crawlfw.utils.python import without_none_values

__all__ = ["DefaultHeadersMiddleware"]


class DefaultHeadersMiddleware:
    """Add default headers to each request, without overriding headers it already has.

    Args:
        headers: ``(name, value)`` pairs (str or bytes); a value may be a list of values.
    """

    def __init__(self, headers):
        self._headers = list(headers)
        # {encoding: [(stored name, stored values)]}: the pairs as a Headers of that
        # encoding stores them, normalised once instead of on every request
        self._stored: dict = {}

    @classmethod
    def from_crawler(cls, crawler):
        """Read ``DEFAULT_REQUEST_HEADERS`` (a dict; entries set to None are dropped)."""
        headers = without_none_values(crawler.settings["DEFAULT_REQUEST_HEADERS"])
        return cls(headers.items())

    def process_request(self, request, spider=None):
        """``request.headers.setdefault(name, value)`` for every default header.

        On a :class:`~crawlfw.http.Headers` the names and values are normalised once
        per encoding, not per request (``tests/downloadermiddlewares/test_simple.py``
        compares it with ``setdefault`` on a table).
        """
        headers = request.headers
        if headers.__class__ is not Headers:
            for name, value in self._headers:
                headers.setdefault(name, value)
            return
        stored = self._stored.get(headers.encoding)
        if stored is None:
            stored = self._stored[headers.encoding] = [
                (headers.normkey(name), headers.normvalue(value)) for name, value in self._headers]
        for key, values in stored:
            # Headers.setdefault(name, value) with the name and value already normalised
            if not dict.__contains__(headers, key):
                dict.__setitem__(headers, key, [*values])
