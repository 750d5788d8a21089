"""A tiny DNS server on a loopback address, and a way to run a process whose system
resolver asks it (and only it), for tests of name resolution: crawlfw's own resolver
(c-ares, told the server's ``host:port`` by a ``resolv.conf`` file, ``DNS_RESOLV_CONF``)
and the system resolver (glibc's ``getaddrinfo``).

:class:`LocalDNS` answers ``A`` queries for the names it was given with an address
(``AAAA``: an empty answer, or none at all with ``aaaa="drop"``; unknown names: an
empty answer, or NXDOMAIN with ``unknown="nxdomain"``), each after its own delay, and
counts the queries per name. It listens on UDP port 53 (glibc asks no other port; or
another with ``port=0``) of an address of ``127.0.0.0/8`` of its own (``127.53.x.y``),
so two tests never meet. Packets are parsed and built with ``dnslib``.

:func:`resolver_argv` wraps a command so it runs in a new mount namespace where
``/etc/resolv.conf`` names that server (and ``/etc/hosts`` is empty unless told
otherwise): the rest of the machine keeps its resolver, and no query leaves the
loopback. It needs root (``unshare -m``); :func:`namespaces_available` says whether
this machine allows it.
"""

import os
import random
import shlex
import shutil
import socket
import subprocess
import threading
from pathlib import Path

from dnslib import AAAA, QTYPE, RCODE, RR, A, DNSRecord


def namespaces_available() -> bool:
    """True when ``unshare -m`` can bind-mount over ``/etc/resolv.conf`` here."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount --bind /dev/null /etc/resolv.conf"],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    return probe.returncode == 0


class LocalDNS:
    """Args:
    answers: ``{name: (address, delay_s)}`` or ``{name: (address, delay_s, ttl_s)}``:
        the ``A`` answer for ``name`` (no trailing dot, lower case), the seconds to
        wait before sending it, and its TTL (default ``ttl_s``).
    port: the UDP port (53; 0: any free one, for crawlfw's resolver only).
    aaaa: ``"empty"`` (an empty answer, after the name's delay), ``"drop"`` (never
        answered), or ``{name: address}`` (that ``AAAA`` answer at once; names not
        there: an empty answer) or ``{name: (address, delay_s)}`` (after that delay).
    unknown: ``"empty"`` (an empty answer) or ``"nxdomain"`` for names not in
        ``answers``.
    ttl_s: the TTL of the answers.

    Attributes:
        host: the loopback address it listens on.
        port: the UDP port it listens on.
        queries: ``{name: count}`` of ``A`` queries received per name.
        aaaa_queries: ``{name: count}`` of ``AAAA`` queries received per name.
    """

    def __init__(self, answers: dict, port: int = 53, aaaa="empty", unknown: str = "empty",
                 ttl_s: int = 60):
        self.answers = {name.lower(): value for name, value in answers.items()}
        self.queries: dict[str, int] = {}
        self.aaaa_queries: dict[str, int] = {}
        self.aaaa = aaaa
        self.unknown = unknown
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        rng = random.Random(os.getpid())  # seeded; another process picks another
        last_error = None
        for _ in range(20):
            host = f"127.53.{rng.randrange(1, 255)}.{rng.randrange(1, 255)}"
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                sock.bind((host, port))
            except OSError as e:
                sock.close()
                last_error = e
                continue
            break
        else:
            raise OSError(f"LocalDNS: no free 127.53.x.y:53 address: {last_error}")
        self.host = host
        self.port = sock.getsockname()[1]
        self._sock = sock
        self._timers: list[threading.Timer] = []
        self._closed = False
        self._thread = threading.Thread(target=self._serve, daemon=True, name="local-dns")
        self._thread.start()

    def count(self, name: str) -> int:
        """``A`` queries received for ``name`` so far."""
        with self._lock:
            return self.queries.get(name.lower(), 0)

    def count_aaaa(self, name: str) -> int:
        """``AAAA`` queries received for ``name`` so far."""
        with self._lock:
            return self.aaaa_queries.get(name.lower(), 0)

    def _serve(self):
        self._sock.settimeout(0.1)  # close() is seen within 0.1 s
        while not self._closed:
            try:
                data, peer = self._sock.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                query = DNSRecord.parse(data)
            except Exception:  # not DNS: ignore
                continue
            name = str(query.q.qname).rstrip(".").lower()
            reply = query.reply()
            delay = 0.0
            known = self.answers.get(name)
            if known is None and self.unknown == "nxdomain":
                reply.header.rcode = RCODE.NXDOMAIN
            if query.q.qtype == QTYPE.A:
                with self._lock:
                    self.queries[name] = self.queries.get(name, 0) + 1
                if known is not None:
                    address, delay = known[0], known[1]
                    ttl = known[2] if len(known) > 2 else self.ttl_s
                    reply.add_answer(RR(name, QTYPE.A, rdata=A(address), ttl=ttl))
            else:
                if query.q.qtype == QTYPE.AAAA:
                    with self._lock:
                        self.aaaa_queries[name] = self.aaaa_queries.get(name, 0) + 1
                    if self.aaaa == "drop":
                        continue
                    if isinstance(self.aaaa, dict):
                        if name in self.aaaa:
                            address = self.aaaa[name]
                            if isinstance(address, tuple):
                                address, delay = address
                            reply.add_answer(RR(name, QTYPE.AAAA,
                                                rdata=AAAA(address), ttl=self.ttl_s))
                    elif known is not None:
                        delay = known[1]
                elif known is not None:
                    delay = known[1]
            packet = reply.pack()
            if delay > 0:
                timer = threading.Timer(delay, self._send, (packet, peer))
                timer.daemon = True
                self._timers.append(timer)
                timer.start()
            else:
                self._send(packet, peer)

    def _send(self, packet, peer):
        if not self._closed:
            try:
                self._sock.sendto(packet, peer)
            except OSError:
                pass

    def resolv_conf(self, directory: Path, timeout_s: int = 30, search: str = "",
                    ndots: int | None = None, attempts: int = 1) -> Path:
        """Write a ``resolv.conf`` naming this server in ``directory`` (with its port
        when not 53: only c-ares reads that); resolvers wait ``timeout_s`` for an
        answer (c-ares: at most; it waits 5 times the server's mean answer time, at
        least 0.25 s, once it has measured it), ``attempts`` tries; ``search`` is the
        search list, ``ndots`` its option."""
        path = Path(directory) / "resolv.conf"
        server = self.host if self.port == 53 else f"{self.host}:{self.port}"
        options = (f"timeout:{timeout_s} attempts:{attempts}"
                   + (f" ndots:{ndots}" if ndots else ""))
        path.write_text(f"nameserver {server}\n" + (f"search {search}\n" if search else "")
                        + f"options {options}\n")
        return path

    def close(self):
        self._closed = True
        for timer in self._timers:
            timer.cancel()
        self._thread.join(5)
        self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def resolver_argv(argv, resolv_conf: Path, hosts: Path | None = None) -> list[str]:
    """``argv`` run in a new mount namespace where ``/etc/resolv.conf`` is
    ``resolv_conf`` and ``/etc/hosts`` is ``hosts`` (None: one holding only
    ``localhost``, written beside ``resolv_conf``)."""
    if hosts is None:
        hosts = Path(resolv_conf).with_name("hosts")
        hosts.write_text("127.0.0.1 localhost\n")
    script = (f"mount --bind {shlex.quote(str(resolv_conf))} /etc/resolv.conf && "
              f"mount --bind {shlex.quote(str(hosts))} /etc/hosts && exec \"$@\"")
    return ["unshare", "-m", "sh", "-c", script, "sh", *map(str, argv)]

