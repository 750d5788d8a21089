"""A resolver whose answers a test gives by hand (tests/core/test_dns_resolver.py,
tests/core/test_dns_prefetch.py): the shared machinery of
:class:`crawlfw.core.transport.resolver.Resolver` without a name server; and
:func:`drive`, the transport's loop for a real resolver against a local name server."""

import time

from crawlfw.core.transport.resolver import Resolver


def drive(resolver, selector, until, timeout_s=10.0, step_s=0.05):
    """Drive ``resolver`` as the transport does (its sockets through ``selector``, its
    timer at its deadline) until ``until()`` is true; fails the test after ``timeout_s``
    seconds. ``step_s``: the longest wait on the selector, in seconds."""
    deadline = time.monotonic() + timeout_s
    while not until():
        now = time.monotonic()
        assert now < deadline, "the resolver did not answer in time"
        due = resolver.next_deadline_s(now) if resolver.busy else None
        wait = step_s if due is None else max(0.0, min(step_s, due - now))
        for key, events in selector.select(wait):
            assert key.data is resolver
            resolver.process(key.fd, events)
        now = time.monotonic()
        if due is not None and now >= due:
            resolver.on_timer(now)


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
