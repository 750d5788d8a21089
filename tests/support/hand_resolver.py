"""A resolver whose answers a test gives by hand (tests/core/test_dns_resolver.py,
tests/core/test_dns_prefetch.py): the shared machinery of
:class:`crawlfw.core.transport.resolver.Resolver` without a name server."""

from crawlfw.core.transport.resolver import Resolver


class HandResolver(Resolver):
    """Asks nobody: the test gives each family's answer (:meth:`answer`).

    Attributes:
        started: the host names whose lookups were started, in order.
    """

    def __init__(self, **kw):
        super().__init__(**kw)
        self.started = []

    def _start(self, lookup, now_s):
        self.started.append(lookup.host)

    def answer(self, host, family, addresses, now_s, ttl_s=300.0, error=None):
        """Family ``family`` (4 or 6) of ``host``'s pending lookup answered at ``now_s``
        with ``addresses`` (or ``error``: "nodata", "nxdomain", ...)."""
        lookup = self._pending[host]
        self._family_answered(lookup, family, addresses, ttl_s, error, now_s, True)

    def both(self, host, now_s, address="10.0.0.1"):
        """``host`` answered: A ``address``, no AAAA."""
        self.answer(host, 4, [address], now_s)
        self.answer(host, 6, [], now_s, error="nodata")
