"""The default resolver of :mod:`crawlfw.core.transport.resolver`: c-ares through pycares
on the downloader's selector (:class:`CaresResolver`), split from it for its size. What it
asks and why (the hosts file first, ``A`` and ``AAAA`` at once with RFC 8305's Resolution
Delay, a channel renewed every :data:`CHANNEL_LOOKUPS` lookups): ARCHITECTURE.md, "Name
resolution"."""

from __future__ import annotations

import functools
import logging
import selectors
import socket
import time
from typing import Any

from crawlfw.core.transport.dns import Answer, HostsFile, ResolvConf, make_answer
from crawlfw.core.transport.resolver import RESOLUTION_DELAY_S, Resolver, _Lookup

__all__ = ["CaresResolver", "CHANNEL_LOOKUPS", "HOSTS_TTL_S"]

logger = logging.getLogger(__name__)

_READ = selectors.EVENT_READ
_WRITE = selectors.EVENT_WRITE

#: Seconds an answer from the hosts file is kept before the file is consulted again.
HOSTS_TTL_S = 5.0

#: Lookups asked on one c-ares channel before the next lookups go to a new one (the old
#: one is closed once its lookups are answered). c-ares keeps every answer it gets in a
#: query cache of its own, for up to an hour, which pycares gives no way to switch off
#: (about 1.3 KB a name): a new channel every so many lookups bounds it, while this
#: resolver's own cache (DNSCACHE_SIZE) is the one that serves answers.
CHANNEL_LOOKUPS = 1000


def _ipv6_works() -> bool:
    """True when this machine can make an IPv6 socket (libcurl's ``Curl_ipv6works``
    test): otherwise no ``AAAA`` is asked."""
    if not socket.has_ipv6:
        return False
    try:
        socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).close()
    except OSError:
        return False
    return True


class _Channel:
    """One pycares channel and what this resolver tracks of it."""

    __slots__ = ("channel", "fds", "started", "pending", "outstanding", "retired",
                 "deadline_s")

    def __init__(self) -> None:
        self.channel: Any = None
        self.fds: dict[int, int] = {}  # fd -> selector events
        self.started = 0  # lookups started on it
        self.pending = 0  # its lookups not answered yet
        self.outstanding = 0  # its queries c-ares has not answered yet
        self.retired = False
        self.deadline_s: float | None = None  # c-ares' next timeout, as last asked


class CaresResolver(Resolver):
    """The default resolver: c-ares (pycares) on the loop's selector, the hosts file
    first, ``A`` and ``AAAA`` in parallel with RFC 8305's Resolution Delay.

    Args:
        hosts: the :class:`~crawlfw.core.transport.dns.HostsFile`
            (``DNS_HOSTS_FILE``), or None to consult none.
        resolv_conf: a :class:`~crawlfw.core.transport.dns.ResolvConf`
            (``DNS_RESOLV_CONF``), or None: c-ares reads the system's
            (``/etc/resolv.conf``: servers, search list, ``ndots``, timeouts).
        resolution_delay_s: RFC 8305's Resolution Delay (``DNS_RESOLUTION_DELAY``).
        ipv6: ask ``AAAA`` too; None: when this machine can make IPv6 sockets.
        **kw: :class:`Resolver`'s arguments.
    """

    def __init__(self, *, hosts: HostsFile | None = None, resolv_conf: ResolvConf | None = None,
                 resolution_delay_s: float = RESOLUTION_DELAY_S, ipv6: bool | None = None,
                 **kw: Any) -> None:
        super().__init__(**kw)
        if not resolution_delay_s >= 0:
            raise ValueError(f"DNS_RESOLUTION_DELAY must be a number of seconds >= 0, got "
                             f"{resolution_delay_s!r}")
        self._pycares: Any = None  # loaded with the first channel (_new_channel): a
        self._bad = -1  # crawl of IP literals and hosts-file names never loads it
        self._errors: dict[int, str] = {}
        self.hosts = hosts
        self.resolv_conf = resolv_conf
        self.resolution_delay_s = float(resolution_delay_s)
        self.ipv6 = _ipv6_works() if ipv6 is None else bool(ipv6)
        self._current: _Channel | None = None  # made on the first lookup
        self._draining: list[_Channel] = []
        self._fd_channel: dict[int, _Channel] = {}

    def _known(self, host: str, now_s: float) -> Answer | None:
        hosts = self.hosts
        if hosts is None:
            return None
        found = hosts.lookup(host, now_s)
        if found is None:
            return None
        v6, v4 = found
        if not self.ipv6:
            v6 = []
        if not v4 and not v6:
            return None
        return make_answer(host, v6, v4, now_s + HOSTS_TTL_S)

    def _new_channel(self) -> _Channel:
        if self._pycares is None:
            import pycares

            self._pycares = pycares
            self._bad = pycares.ARES_SOCKET_BAD
            self._errors = _cares_error_kinds(pycares)
        chan = _Channel()
        options: dict[str, Any] = {"sock_state_cb": functools.partial(self._sock_state, chan)}
        conf = self.resolv_conf
        if conf is not None:
            # Passed as options, not as c-ares' resolvconf_path: pycares 5 frees that
            # path's buffer before c-ares reads it.
            options["servers"] = conf.servers
            if conf.search:
                options["domains"] = conf.search
            else:
                options["flags"] = self._pycares.ARES_FLAG_NOSEARCH
            if conf.ndots is not None:
                options["ndots"] = conf.ndots
            if conf.timeout_s is not None:
                options["timeout"] = conf.timeout_s
            if conf.attempts is not None:
                options["tries"] = conf.attempts
        chan.channel = self._pycares.Channel(**options)
        return chan

    def _start(self, lookup: _Lookup, now_s: float) -> None:
        chan = self._current
        if chan is None or chan.started >= CHANNEL_LOOKUPS:
            if chan is not None:
                self._retire(chan)
            chan = self._current = self._new_channel()
        chan.started += 1
        chan.pending += 1
        lookup.channel = chan
        pycares = self._pycares
        search = chan.channel.search
        for family, qtype in ((4, pycares.QUERY_TYPE_A), (6, pycares.QUERY_TYPE_AAAA)):
            if family == 6 and (not self.ipv6 or lookup.done):
                break
            chan.outstanding += 1
            self._outstanding += 1
            try:
                search(lookup.host, qtype,
                       callback=functools.partial(self._reply, lookup, chan, family))
            except Exception:
                chan.outstanding -= 1
                self._outstanding -= 1
                raise

    def _reply(self, lookup: _Lookup, chan: _Channel, family: int, result: Any,
               status: int | None) -> None:
        """A query's answer (pycares callback, during ``process_fd`` on the loop's
        thread; on pycares' shutdown thread for a retired channel: ignored)."""
        if chan.retired:
            return
        try:
            chan.outstanding -= 1
            self._outstanding -= 1
            addresses: list[str] = []
            ttl = None
            error = None
            if status is None and result is not None:
                rtype = 1 if family == 4 else 28  # A, AAAA
                for record in result.answer:
                    if record.type == rtype:
                        addresses.append(record.data.addr)
                        ttl = record.ttl if ttl is None else min(ttl, record.ttl)
                if not addresses:
                    error = "nodata"
            else:
                error = self._errors.get(status, "error") if status is not None else "error"
            if lookup.done:  # answered already: a family that came after the delay
                if addresses:
                    self._late_family(lookup.host, family, addresses, ttl, time.monotonic())
                return
            self._family_answered(lookup, family, addresses, ttl, error, time.monotonic(),
                                  self.ipv6)
        except Exception:
            logger.exception("DNS answer for %r could not be handled", lookup.host)

    def _sock_state(self, chan: _Channel, fd: int, readable: bool, writable: bool) -> None:
        """c-ares' socket state callback: keep the loop's selector in step."""
        if chan.retired:
            return
        try:
            selector = self._selector
            if selector is None:
                return
            events = (_READ if readable else 0) | (_WRITE if writable else 0)
            old = chan.fds.get(fd)
            if not events:
                if old is not None:
                    del chan.fds[fd]
                    self._fd_channel.pop(fd, None)
                    try:
                        selector.unregister(fd)
                    except (KeyError, ValueError, OSError):
                        pass
                return
            if old == events:
                return
            if old is None:
                try:
                    selector.register(fd, events, self)
                except KeyError:  # a stale registration of a reused number
                    selector.unregister(fd)
                    selector.register(fd, events, self)
            else:
                selector.modify(fd, events, self)
            chan.fds[fd] = events
            self._fd_channel[fd] = chan
        except Exception:
            logger.exception("c-ares socket callback failed for fd %d", fd)

    def process(self, fd: int, events: int) -> None:
        chan = self._fd_channel.get(fd)
        if chan is None or chan.retired:
            return
        bad = self._bad
        chan.channel.process_fd(fd if events & _READ else bad, fd if events & _WRITE else bad)

    def next_deadline_s(self, now_s: float) -> float | None:
        due = self._timers[0][0] if self._timers else None
        for chan in self._channels():
            if chan.outstanding > 0:
                # ares_timeout: seconds to c-ares' next retry or timeout (<= the cap)
                chan.deadline_s = now_s + chan.channel.timeout(3600.0)
                if due is None or chan.deadline_s < due:
                    due = chan.deadline_s
            else:
                chan.deadline_s = None
        return due

    def on_timer(self, now_s: float) -> None:
        bad = self._bad
        for chan in self._channels():
            if chan.deadline_s is not None and chan.deadline_s <= now_s and not chan.retired:
                chan.deadline_s = None
                chan.channel.process_fd(bad, bad)  # c-ares' retries and timeouts
        super().on_timer(now_s)

    def _channels(self) -> list[_Channel]:
        current = self._current
        if not self._draining:
            return [current] if current is not None else []
        return ([current] if current is not None else []) + self._draining

    def _released(self, lookup: _Lookup) -> None:
        chan = lookup.channel
        lookup.channel = None
        if chan is None:
            return
        chan.pending -= 1
        if chan.pending <= 0 and chan is not self._current and not chan.retired:
            self._close_channel(chan)

    def _retire(self, chan: _Channel) -> None:
        """``chan`` takes no more lookups; it is closed once its lookups are answered
        (its queries no lookup waits for, such as an ``AAAA`` past its resolution delay,
        are cancelled then)."""
        if chan.pending <= 0:
            self._close_channel(chan)
        else:
            self._draining.append(chan)

    def _close_channel(self, chan: _Channel) -> None:
        selector = self._selector
        for fd in chan.fds:
            self._fd_channel.pop(fd, None)
            if selector is not None:
                try:
                    selector.unregister(fd)
                except (KeyError, ValueError, OSError):
                    pass
        chan.fds.clear()
        self._outstanding -= chan.outstanding  # cancelled: their callbacks are ignored
        chan.outstanding = 0
        chan.retired = True  # before close: its callbacks may run on pycares' thread now
        if chan in self._draining:
            self._draining.remove(chan)
        if chan is self._current:
            self._current = None
        try:
            chan.channel.close()
        except Exception:
            logger.exception("Could not close a c-ares channel")

    def close(self) -> None:
        super().close()
        for chan in self._channels():
            self._close_channel(chan)


def _cares_error_kinds(pycares: Any) -> dict[int, str]:
    errno = pycares.errno
    return {
        errno.ARES_ENOTFOUND: "nxdomain",
        errno.ARES_ENODATA: "nodata",
        errno.ARES_ETIMEOUT: "timeout",
        errno.ARES_ESERVFAIL: "servfail",
        errno.ARES_EREFUSED: "refused",
        errno.ARES_ECONNREFUSED: "refused",
    }
