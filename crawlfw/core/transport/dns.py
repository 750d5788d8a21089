"""Plain, thread-free parts of crawlfw's resolver (:mod:`crawlfw.core.transport.resolver`):
what an answer is (:class:`Answer`, :class:`LookupFailed`), the answer cache
(:class:`DnsCache`: ``DNSCACHE_SIZE`` names, least recently used first out, each kept
for its TTL within bounds), the hosts file (:class:`HostsFile`, ``/etc/hosts``'s format)
and the ``resolv.conf`` reader (:func:`read_resolv_conf`), and the names that need no
lookup (:func:`no_lookup_needed`: IP literals and RFC 6761's ``localhost`` names).

Why crawlfw resolves names itself, and how the pieces fit: ARCHITECTURE.md, "Broad
crawls" ("Name resolution").
"""

from __future__ import annotations

import ipaddress
import os
from collections import OrderedDict
from typing import NamedTuple

__all__ = ["Answer", "LookupFailed", "DnsCache", "HostsFile", "ResolvConf",
           "read_resolv_conf", "no_lookup_needed", "FAILURE_KINDS"]

#: The kinds of failed lookup, as counted in ``dns/failures/<kind>``:
#: ``nxdomain`` (no such name), ``nodata`` (the name has no address), ``timeout`` (no
#: answer within ``DNS_TIMEOUT``, or the name servers' own timeouts), ``servfail``,
#: ``refused`` (by the name server), ``error`` (anything else: a bad name, no server).
FAILURE_KINDS = ("nxdomain", "nodata", "timeout", "servfail", "refused", "error")


class Answer(NamedTuple):
    """The addresses of one host name.

    Attributes:
        host: the name asked (lower case).
        addresses: the IPv6 then the IPv4 addresses (strings), each family in the
            order the answer gave them: RFC 8305 tries IPv6 first, and curl races the
            two families from there. Never empty.
        ip: the address that stands for the host: its first IPv4 address, else its
            first IPv6 one (``CONCURRENT_REQUESTS_PER_IP``'s key, as Scrapy's resolver,
            which asks IPv4 only, would give).
        expires_s: ``time.monotonic()`` value after which it is looked up again.
    """

    host: str
    addresses: tuple[str, ...]
    ip: str
    expires_s: float


class LookupFailed(NamedTuple):
    """A lookup that found no address.

    Attributes:
        host: the name asked (lower case).
        kind: one of :data:`FAILURE_KINDS`.
        reason: a human-readable reason naming the host (no URL): "no such host name:
            'x.test' (NXDOMAIN)", "no answer for 'x.test' within DNS_TIMEOUT, 2 s"...
        expires_s: ``time.monotonic()`` value until which the failure is cached
            (``nxdomain`` and ``nodata`` only, for ``DNSCACHE_NEGATIVE_TTL``); else 0.
    """

    host: str
    kind: str
    reason: str
    expires_s: float = 0.0


def make_answer(host: str, v6: list[str] | tuple[str, ...], v4: list[str] | tuple[str, ...],
                expires_s: float) -> Answer:
    """An :class:`Answer` of these addresses (at least one), duplicates dropped."""
    addresses = tuple(dict.fromkeys([*v6, *v4]))
    ip = v4[0] if v4 else v6[0]
    return Answer(host, addresses, ip, expires_s)


def no_lookup_needed(host: str) -> bool:
    """True for a name that is resolved without asking anyone: an IP literal (IPv4 in
    dotted form, IPv6 without brackets) or a ``localhost`` name (``localhost`` and
    ``*.localhost``, RFC 6761 section 6.3: loopback, which libcurl connects to on its
    own, with no lookup).

    Args:
        host: a host name in lower case, without brackets or port.
    """
    if host == "localhost" or host.endswith(".localhost"):
        return True
    if not host:
        return True
    first = host[0]
    if ":" in host or ("0" <= first <= "9" and host[-1].isdigit()):
        try:
            ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            return False
        return True
    return False


class DnsCache:
    """Host name -> its :class:`Answer` or cached :class:`LookupFailed`, at most
    ``size`` names, the least recently used dropped first (``DNSCACHE_SIZE``, as
    Scrapy's cache is bounded), each kept until its ``expires_s``.

    One per resolver (so one per downloader actor); touched by its thread only.

    Args:
        size: the most names kept (``DNSCACHE_SIZE``, an int >= 1).

    Raises:
        ValueError: ``size`` is not an int >= 1 (the message names ``DNSCACHE_SIZE``).
    """

    def __init__(self, size: int) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"DNSCACHE_SIZE must be an int >= 1, got {size!r}")
        self.size = size
        self._entries: OrderedDict[str, Answer | LookupFailed] = OrderedDict()

    def get(self, host: str, now_s: float) -> Answer | LookupFailed | None:
        """The entry of ``host`` while it has not expired (it becomes the most recently
        used), else None (an expired entry is dropped)."""
        entry = self._entries.get(host)
        if entry is None:
            return None
        if entry.expires_s <= now_s:
            del self._entries[host]
            return None
        self._entries.move_to_end(host)
        return entry

    def put(self, entry: Answer | LookupFailed) -> None:
        """Keep ``entry`` (replacing the host's previous one); the least recently used
        name goes when more than ``size`` are kept."""
        entries = self._entries
        entries[entry.host] = entry
        entries.move_to_end(entry.host)
        if len(entries) > self.size:
            entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, host: object) -> bool:
        return host in self._entries


class HostsFile:
    """A hosts file (``/etc/hosts``'s format, hosts(5): an address, then its canonical
    name and aliases, ``#`` to the end of a line a comment), looked up before any
    name server, read again when its modification time changes (checked at most once
    a second, and only for names not in the cache).

    A name found here is answered from the file alone, whichever families it gives
    (glibc would ask a name server for the family the file lacks, and wait for it: the
    very stall this resolver exists to avoid).

    Args:
        path: the file (``DNS_HOSTS_FILE``); a missing or unreadable file is empty.
    """

    #: Seconds between two checks of the file's modification time.
    CHECK_EVERY_S = 1.0

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = os.fspath(path) if path else None
        self._names: dict[str, tuple[list[str], list[str]]] = {}  # name -> (v6, v4)
        self._mtime: float | None = None
        self._checked_s = float("-inf")
        self._reload()

    def lookup(self, host: str, now_s: float) -> tuple[list[str], list[str]] | None:
        """``(ipv6 addresses, ipv4 addresses)`` the file gives ``host`` (lower case), or
        None when it does not name it."""
        if now_s - self._checked_s >= self.CHECK_EVERY_S:
            self._checked_s = now_s
            self._reload()
        return self._names.get(host)

    def _reload(self) -> None:
        if self.path is None:
            return
        try:
            mtime = os.stat(self.path).st_mtime
        except OSError:
            self._names, self._mtime = {}, None
            return
        if mtime == self._mtime:
            return
        self._mtime = mtime
        try:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            self._names = {}
            return
        self._names = parse_hosts(text)


def parse_hosts(text: str) -> dict[str, tuple[list[str], list[str]]]:
    """The names of a hosts file's ``text``: ``{name: (ipv6 addresses, ipv4
    addresses)}``, names in lower case, addresses in file order; lines whose first field
    is not an IP address are skipped."""
    names: dict[str, tuple[list[str], list[str]]] = {}
    for line in text.splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) < 2:
            continue
        try:
            address = ipaddress.ip_address(fields[0].split("%", 1)[0])
        except ValueError:
            continue
        for name in fields[1:]:
            v6, v4 = names.setdefault(name.lower().rstrip("."), ([], []))
            family = v6 if address.version == 6 else v4
            if fields[0] not in family:
                family.append(fields[0])
    return names


class ResolvConf(NamedTuple):
    """What :func:`read_resolv_conf` takes from a ``resolv.conf`` file.

    Attributes:
        servers: ``nameserver`` lines, each ``address`` or ``address:port``
            (``[v6]:port``), in file order (c-ares' server syntax).
        search: the ``search`` (or ``domain``) list, the last such line winning, as
            resolv.conf(5) says.
        ndots: ``options ndots:N``, or None.
        timeout_s: ``options timeout:N`` in seconds, or None.
        attempts: ``options attempts:N``, or None.
    """

    servers: list[str]
    search: list[str]
    ndots: int | None
    timeout_s: float | None
    attempts: int | None


def read_resolv_conf(path: str | os.PathLike[str]) -> ResolvConf:
    """Read a ``resolv.conf`` file (resolv.conf(5); a ``nameserver`` may carry a port,
    ``127.0.0.1:5353``, as c-ares allows).

    Raises:
        ValueError: the file cannot be read or names no server (the message names
            ``DNS_RESOLV_CONF`` and the path).
    """
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise ValueError(f"DNS_RESOLV_CONF: cannot read {os.fspath(path)!r}: "
                         f"{e.strerror or e}") from None
    servers: list[str] = []
    search: list[str] = []
    ndots = attempts = None
    timeout_s = None
    for line in text.splitlines():
        fields = line.split("#", 1)[0].split(";", 1)[0].split()
        if not fields:
            continue
        key, values = fields[0], fields[1:]
        if key == "nameserver" and values:
            servers.append(values[0])
        elif key in ("search", "domain"):
            search = [v.rstrip(".") for v in values]
        elif key == "options":
            for option in values:
                name, _, value = option.partition(":")
                if not value.isdigit():
                    continue
                if name == "ndots":
                    ndots = min(int(value), 15)
                elif name == "timeout":
                    timeout_s = float(max(1, int(value)))
                elif name == "attempts":
                    attempts = max(1, int(value))
    if not servers:
        raise ValueError(f"DNS_RESOLV_CONF: {os.fspath(path)!r} names no nameserver")
    return ResolvConf(servers, search, ndots, timeout_s, attempts)
