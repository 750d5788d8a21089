"""A real FTP server (pyftpdlib) on 127.0.0.1 for feed-storage tests.

``LocalFTPServer(root).start()`` serves ``root`` to one user with full rights;
``.url`` is ``ftp://USER:PASS@127.0.0.1:PORT``. The :func:`ftp_server` fixture starts one
per test on a fresh directory and stops it afterwards.
"""

import logging
import sys
import threading
from pathlib import Path

import pytest
from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.servers import FTPServer

from tests.support.slowguard import SERVER_EVENT

logging.getLogger("pyftpdlib").setLevel(logging.WARNING)


class LocalFTPServer:
    """Serve ``root`` over FTP on 127.0.0.1 (a free port), in a background thread.

    Args:
        root: the directory the user sees as ``/``.
        user: the login name.
        password: the password.

    Attributes:
        url: ``ftp://USER:PASS@127.0.0.1:PORT`` (no trailing slash), set by ``start()``.
        port: the port, set by ``start()``.
        connections: the client address of every control connection accepted, in order
            (tests that the crawler must not contact the server assert it stays empty).
    """

    def __init__(self, root: Path, user: str = "feeduser", password: str = "feed:pass"):
        self.root = Path(root)
        self.user = user
        self.password = password
        self.url = None
        self.port = None
        self._server = None
        self._thread = None
        self._stop = threading.Event()
        self.connections = []

    def start(self) -> "LocalFTPServer":
        from urllib.parse import quote

        authorizer = DummyAuthorizer()
        authorizer.add_user(self.user, self.password, str(self.root), perm="elradfmwMT")
        connections = self.connections

        def on_connect(handler_self):
            connections.append(handler_self.remote_ip)

        handler = type("Handler", (FTPHandler,),
                       {"authorizer": authorizer, "on_connect": on_connect})
        # Active-mode data connections come from 127.0.0.1: the client's own address.
        handler.permit_foreign_addresses = False
        self._server = FTPServer(("127.0.0.1", 0), handler)
        self.port = self._server.address[1]
        self.url = (f"ftp://{quote(self.user, safe='')}:{quote(self.password, safe='')}"
                    f"@127.0.0.1:{self.port}")
        sys.audit(SERVER_EVENT, "ftp")  # its tests are slow (tests/support/slowguard.py)
        self._thread = threading.Thread(target=self._serve, name="test-ftp", daemon=True)
        self._thread.start()
        return self

    def _serve(self):
        # One poll of the IO loop per iteration, so the stop flag is seen within 0.05 s.
        while not self._stop.is_set():
            self._server.serve_forever(timeout=0.05, blocking=False, handle_exit=False)
        self._server.close_all()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)


@pytest.fixture
def ftp_server(tmp_path):
    """A running :class:`LocalFTPServer` whose root is a fresh ``tmp_path / 'ftproot'``."""
    root = tmp_path / "ftproot"
    root.mkdir()
    server = LocalFTPServer(root).start()
    yield server
    server.stop()
