"""The control endpoint's plain parts: where sockets live, who may connect, the wire format,
and the client the CLI and the attached shell use (no threads here).

Every ``crawl``/``runspider`` process listens on a Unix domain socket
``<runtime dir>/<pid>.sock``; the runtime directory is ``$XDG_RUNTIME_DIR/crawlfw`` (the
XDG Base Directory Specification's place for sockets), else
``~/.local/state/crawlfw/run``, created with mode 0700; the socket has mode 0600. The
server checks the peer's credentials (``SO_PEERCRED``, Linux ``unix(7)``): only the same
uid, or root, is served; ssh-agent and the Docker daemon guard their sockets the same way.

Wire format: one JSON object per line (UTF-8, ``\\n``-terminated), each a message dict
of :mod:`crawlfw.actors.messages` (``type`` key), at most :data:`MAX_MESSAGE_BYTES`
bytes. Every request gets exactly one reply line; an error reply is
``{"type": "control_error", "error": "..."}``.
"""

import errno
import json
import os
import socket
import stat
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_MESSAGE_BYTES",
    "ControlClient",
    "ControlError",
    "runtime_dir",
    "private_dir",
    "bind_socket",
    "peer_credentials",
    "LineReader",
    "encode_line",
    "discover",
    "find_crawl",
]

#: Most bytes of one message line (requests and replies), newline excluded.
MAX_MESSAGE_BYTES = 64 * 1024

#: Most bytes of one reply line the client accepts (a fetched page may be large).
MAX_REPLY_BYTES = 64 * 1024 * 1024

#: Seconds a client waits for a connection and a reply by default.
CLIENT_TIMEOUT_S = 30.0

SOCKET_SUFFIX = ".sock"


class ControlError(Exception):
    """A control command failed: no such crawl, an ambiguous name, a refused connection,
    or an error reply from the endpoint (the message says which)."""


def runtime_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The per-user directory of control sockets.

    ``$XDG_RUNTIME_DIR/crawlfw`` when ``XDG_RUNTIME_DIR`` is set and absolute (XDG Base
    Directory Specification 0.8), else ``~/.local/state/crawlfw/run``.
    """
    environ = os.environ if environ is None else environ
    xdg = environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "crawlfw"
    home = environ.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".local" / "state" / "crawlfw" / "run"


def private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) with mode 0700 and check it is private.

    An existing directory of this user with a wider mode is narrowed to 0700.

    Raises:
        PermissionError: the directory belongs to another user, or is not a directory.
        OSError: it cannot be created.
    """
    path = Path(path)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = path.lstat()
    if not stat.S_ISDIR(st.st_mode):
        raise PermissionError(f"{path} is not a directory")
    if st.st_uid != os.geteuid():
        raise PermissionError(f"{path} belongs to uid {st.st_uid}, not to this user "
                              f"(uid {os.geteuid()})")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def _is_live(path: Path) -> bool:
    """True when something accepts connections on the Unix socket ``path``."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(2.0)
    try:
        probe.connect(str(path))
    except OSError as e:
        if e.errno in (errno.ECONNREFUSED, errno.ENOENT):
            return False
        return True  # timeout, permission...: someone may be there; leave it
    finally:
        probe.close()
    return True


def bind_socket(path: Path, backlog: int = 16) -> socket.socket:
    """Listen on the Unix socket ``path`` with mode 0600, replacing a stale one.

    A socket file nobody accepts on (its process was killed) is removed first.

    Raises:
        FileExistsError: a live endpoint already listens on ``path``, or ``path`` is not
            a socket.
        OSError: binding failed.
    """
    path = Path(path)
    if path.exists() or path.is_symlink():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise FileExistsError(f"{path} exists and is not a socket")
        if _is_live(path):
            raise FileExistsError(f"a live control endpoint already listens on {path}")
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)  # the socket is created 0600, no window with a wider mode
    try:
        sock.bind(str(path))
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(old_umask)
    os.chmod(path, 0o600)
    sock.listen(backlog)
    return sock


def peer_credentials(conn: socket.socket) -> tuple[int, int, int]:
    """``(pid, uid, gid)`` of the process at the other end of a Unix socket, as the
    kernel recorded them at ``connect()`` (``SO_PEERCRED``, Linux ``unix(7)``).

    Raises:
        OSError: the platform has no ``SO_PEERCRED``.
    """
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        raise OSError("SO_PEERCRED is not available on this platform")
    raw = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return struct.unpack("3i", raw)


def may_connect(peer_uid: int, own_uid: int | None = None) -> bool:
    """The endpoint's rule: the same user, or root (uid 0)."""
    own_uid = os.geteuid() if own_uid is None else own_uid
    return peer_uid in (own_uid, 0)


def encode_line(message: dict[str, Any]) -> bytes:
    """One message as a JSON line (compact, UTF-8, ``\\n``-terminated)."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False,
                      default=str).encode("utf-8") + b"\n"


class LineTooLong(ValueError):
    """A line exceeded the reader's limit (its bytes up to the next newline are dropped)."""


class LineReader:
    """Reads ``\\n``-terminated lines from a socket, each at most ``max_bytes`` bytes.

    Args:
        sock: a connected stream socket (its timeout applies to each ``recv``).
        max_bytes: the longest line accepted, newline excluded.
    """

    def __init__(self, sock: socket.socket, max_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self.sock = sock
        self.max_bytes = max_bytes
        self._buffer = bytearray()
        self._skipping = False

    def readline(self) -> bytes | None:
        """The next line without its newline, or None at end of stream.

        Raises:
            LineTooLong: the line is longer than ``max_bytes`` (the rest of it is skipped
                by the next call).
            TimeoutError, OSError: from ``recv``.
        """
        while True:
            newline = self._buffer.find(b"\n")
            if self._skipping:
                if newline < 0:
                    self._buffer.clear()
                else:
                    del self._buffer[:newline + 1]
                    self._skipping = False
                    continue
            elif newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[:newline + 1]
                if len(line) > self.max_bytes:
                    raise LineTooLong(f"message longer than {self.max_bytes} bytes")
                return line
            elif len(self._buffer) > self.max_bytes:
                self._buffer.clear()
                self._skipping = True
                raise LineTooLong(f"message longer than {self.max_bytes} bytes")
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self._buffer += chunk


class ControlClient:
    """A connection to one process's control endpoint: one request, one reply.

    Args:
        path: the endpoint's socket path.
        timeout_s: seconds for connecting and for each reply.
    """

    def __init__(self, path: str | os.PathLike[str], timeout_s: float = CLIENT_TIMEOUT_S) -> None:
        self.path = Path(path)
        self.timeout_s = timeout_s

    def ask(self, message: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        """Send ``message`` and return the reply dict.

        Raises:
            ControlError: the endpoint refused the connection or replied with
                ``control_error`` (its text), or the reply is not a JSON object.
            OSError: the socket cannot be reached (``ConnectionRefusedError`` for a
                stale one, ``PermissionError``...), or no reply within the timeout.
        """
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout_s or self.timeout_s)
        try:
            sock.connect(str(self.path))
            sock.sendall(encode_line(message))
            line = LineReader(sock, MAX_REPLY_BYTES).readline()
        finally:
            sock.close()
        if line is None:
            raise ControlError(f"{self.path}: the endpoint closed the connection without a reply")
        try:
            reply = json.loads(line)
        except ValueError as e:
            raise ControlError(f"{self.path}: the reply is not JSON: {e}") from None
        if not isinstance(reply, dict):
            raise ControlError(f"{self.path}: the reply is not a JSON object")
        if reply.get("type") == "control_error":
            raise ControlError(reply.get("error", "error"))
        return reply


def discover(directory: Path | None = None, timeout_s: float = 15.0,
             remove_stale: bool = True) -> list[dict[str, Any]]:
    """Ask every endpoint in ``directory`` for its status.

    Sockets nobody listens on (left by a killed process) are removed when
    ``remove_stale``. Endpoints that fail to answer are skipped.

    Returns:
        ``[status_reported reply + {"socket": str}, ...]`` sorted by pid: each has
        ``pid`` (int) and ``crawls`` (a list of crawl status dicts, see
        :mod:`crawlfw.control`).
    """
    directory = runtime_dir() if directory is None else Path(directory)
    found: list[dict[str, Any]] = []
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return found
    for path in entries:
        if not path.name.endswith(SOCKET_SUFFIX):
            continue
        try:
            reply = ControlClient(path, timeout_s).ask({"type": "get_status"})
        except (ConnectionRefusedError, FileNotFoundError):
            if remove_stale:
                try:
                    path.unlink()
                except OSError:
                    pass
            continue
        except (OSError, ControlError):
            continue
        reply["socket"] = str(path)
        found.append(reply)
    found.sort(key=lambda r: r.get("pid", 0))
    return found


def find_crawl(endpoints: list[dict[str, Any]],
               target: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Pick one crawl by crawl id, spider name or pid among the ``discover()`` results.

    Args:
        endpoints: what :func:`discover` returned.
        target: a crawl id, spider name or pid (str), or None/"" for "the only one".

    Returns:
        ``(endpoint, crawl)``: the endpoint reply (``socket``, ``pid``) and the crawl's
        status dict.

    Raises:
        ControlError: no crawl runs, none matches, or several match (the message lists
            them, one line).
    """
    crawls = [(ep, c) for ep in endpoints for c in ep.get("crawls", [])]
    if not crawls:
        raise ControlError("No running crawl of this user")
    if target:
        matches = [(ep, c) for ep, c in crawls
                   if target in (c["crawl_id"], c["spider"], str(ep["pid"]))]
        if not matches:
            raise ControlError(f"No running crawl matches {target!r} (crawl id, spider name "
                               "or pid; see crawlfw ps)")
    else:
        matches = crawls
    if len(matches) > 1:
        names = ", ".join(f"{c['crawl_id']} (pid {ep['pid']})" for ep, c in matches)
        what = f"{target!r} is ambiguous" if target else "Several crawls are running"
        raise ControlError(f"{what}: {names}; name one by crawl id or pid")
    return matches[0]
