"""A real ``redis-server`` on a free loopback port, for the shared-frontier tests.

The tests need the ``redis-server`` program (Debian/Ubuntu: ``apt-get install
redis-server``; ``.ci/run`` installs it when it is missing). Without it they are
skipped, except under ``CI=true``, where they fail.
"""

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _PortTaken(Exception):
    """redis-server exited at start (its port was in use)."""


class RedisServer:
    """A ``redis-server`` process serving 127.0.0.1 on a free port, its data in ``dir``.

    Args:
        dir: the working directory (the append-only file lives there).
        appendonly: keep the data in an append-only file (fsync every second), so a
            restarted server has it back.
        args: more ``redis-server`` options, e.g. ``("--requirepass", "secret")``,
            ``("--maxmemory-policy", "allkeys-lru")``.
        password: the password the tests connect with (``url`` carries it).

    Attributes:
        url: ``redis://127.0.0.1:PORT/0``.
        port: the TCP port.
    """

    def __init__(self, dir, appendonly: bool = False, args=(), password=None):
        self.dir = Path(dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.appendonly = appendonly
        self.args = tuple(args)
        self.port = free_port()
        auth = f":{password}@" if password else ""
        self.url = f"redis://{auth}127.0.0.1:{self.port}/0"
        self.proc = None
        self.started_once = False

    def start(self, timeout_s: float = 10.0) -> "RedisServer":
        """Start the server and wait until it answers PING (``timeout_s`` seconds).

        A first start whose port was taken meanwhile (another test process bound it
        after :func:`free_port` chose it) is tried again on a new free port, up to 3
        times; a restart keeps its port (clients reconnect to it).

        Raises:
            FileNotFoundError: no ``redis-server`` on ``PATH``.
            RuntimeError: it did not answer within ``timeout_s`` seconds.
        """
        for attempt in range(3):
            try:
                return self._start(timeout_s)
            except _PortTaken:
                if self.started_once or attempt == 2:
                    raise RuntimeError(f"redis-server could not bind port {self.port}") from None
                self.port = free_port()
                self.url = self.url.rsplit(":", 1)[0] + f":{self.port}/0"
        raise AssertionError("unreachable")

    def _start(self, timeout_s):
        exe = shutil.which("redis-server")
        if exe is None:
            raise FileNotFoundError("redis-server is not installed")
        cmd = [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
               "--dir", str(self.dir), "--appendonly", "yes" if self.appendonly else "no",
               "--appendfsync", "everysec", "--protected-mode", "no", *self.args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith((b"+PONG", b"-NOAUTH")):
                        self.started_once = True
                        return self
            except OSError:
                pass
            if self.proc.poll() is not None:  # exited: most likely its port was taken
                self.proc = None
                raise _PortTaken()
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.05)  # polling the port: redis-server announces nothing else

    def kill(self) -> None:
        """Kill the server (SIGKILL: gone at once, the port refuses connections)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def stop(self) -> None:
        """Stop the server (SIGTERM: with ``appendonly`` its data is on disk)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None

    def restart(self, down_s: float = 0.0) -> None:
        """Stop the server, wait ``down_s`` seconds, start it again on the same port."""
        self.stop()
        time.sleep(down_s)
        self.start()


def redis_available() -> bool:
    """True when ``redis-server`` can be started."""
    return shutil.which("redis-server") is not None


def require_redis():
    """Skip the calling test without ``redis-server``; fail under ``CI=true``."""
    import pytest

    if not redis_available():
        if os.environ.get("CI") == "true":
            pytest.fail("redis-server is missing but CI=true: .ci/run installs it")
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
