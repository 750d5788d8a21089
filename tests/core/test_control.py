"""The control endpoint's plain parts: socket directory, stale sockets, line framing, the
access rule, picking a crawl by name."""

import os
import socket
import stat
import tempfile
from pathlib import Path

import pytest

from crawlfw.core.control.protocol import (
    ControlError,
    LineReader,
    LineTooLong,
    bind_socket,
    find_crawl,
    may_connect,
    peer_credentials,
    private_dir,
    runtime_dir,
)


@pytest.fixture
def short_dir():
    """A directory with a short path (Unix socket paths are limited to 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="cfwt"))
    yield path
    for child in path.iterdir():
        child.unlink()
    path.rmdir()


@pytest.mark.parametrize("environ, expected", [
    ({"XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/home/u"}, "/run/user/1000/crawlfw"),
    ({"HOME": "/home/u"}, "/home/u/.local/state/crawlfw/run"),
    ({"XDG_RUNTIME_DIR": "", "HOME": "/home/u"}, "/home/u/.local/state/crawlfw/run"),
    ({"XDG_RUNTIME_DIR": "relative/dir", "HOME": "/home/u"}, "/home/u/.local/state/crawlfw/run"),
])
def test_runtime_dir(environ, expected):
    assert runtime_dir(environ) == Path(expected)


def test_private_dir_is_made_0700_and_narrowed(tmp_path):
    made = private_dir(tmp_path / "a" / "crawlfw")
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    wide = tmp_path / "wide"
    wide.mkdir(mode=0o755)
    os.chmod(wide, 0o755)
    private_dir(wide)
    assert stat.S_IMODE(wide.stat().st_mode) == 0o700


def test_private_dir_of_another_user_is_refused(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root to chown")
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    os.chown(other, 65534, 65534)
    with pytest.raises(PermissionError, match="belongs to uid 65534, not to this user"):
        private_dir(other)


def test_bind_socket_is_0600_and_replaces_a_stale_one(short_dir):
    path = short_dir / "1.sock"
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(path))  # bound, never listening, closed: what a killed process leaves
    stale.close()
    assert path.exists()
    sock = bind_socket(path)
    try:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(str(path))
            conn, _ = sock.accept()
            pid, uid, gid = peer_credentials(conn)
            assert (pid, uid, gid) == (os.getpid(), os.geteuid(), os.getegid())
            conn.close()
        with pytest.raises(FileExistsError, match="a live control endpoint already listens"):
            bind_socket(path)
    finally:
        sock.close()


def test_bind_socket_leaves_other_files_alone(short_dir):
    path = short_dir / "2.sock"
    path.write_text("not a socket")
    with pytest.raises(FileExistsError, match="exists and is not a socket"):
        bind_socket(path)
    assert path.read_text() == "not a socket"


@pytest.mark.parametrize("peer_uid, own_uid, allowed", [
    (1000, 1000, True), (0, 1000, True), (1001, 1000, False), (65534, 0, False), (0, 0, True),
])
def test_may_connect_same_user_or_root(peer_uid, own_uid, allowed):
    assert may_connect(peer_uid, own_uid) is allowed


def test_line_reader_splits_and_bounds_lines():
    a, b = socket.socketpair()
    with a, b:
        reader = LineReader(b, max_bytes=10)
        a.sendall(b"one\ntwo\n" + b"x" * 25 + b"\nthree\n")
        a.shutdown(socket.SHUT_WR)
        assert reader.readline() == b"one"
        assert reader.readline() == b"two"
        with pytest.raises(LineTooLong, match="longer than 10 bytes"):
            reader.readline()
        assert reader.readline() == b"three"  # the rest of the long line was skipped
        assert reader.readline() is None


def _ep(pid, *crawls):
    return {"pid": pid, "socket": f"/x/{pid}.sock",
            "crawls": [{"crawl_id": c, "spider": c.rsplit("-", 1)[0]} for c in crawls]}


@pytest.mark.parametrize("endpoints, target, found, error", [
    ([], None, None, "No running crawl of this user"),
    ([_ep(10)], "x", None, "No running crawl of this user"),
    ([_ep(10, "quotes-1")], None, (10, "quotes-1"), None),
    ([_ep(10, "quotes-1")], "", (10, "quotes-1"), None),
    ([_ep(10, "quotes-1")], "quotes", (10, "quotes-1"), None),
    ([_ep(10, "quotes-1")], "10", (10, "quotes-1"), None),
    ([_ep(10, "quotes-1")], "books", None, "No running crawl matches 'books'"),
    ([_ep(10, "quotes-1"), _ep(11, "books-1")], None, None,
     "Several crawls are running: quotes-1 (pid 10), books-1 (pid 11); name one by"),
    ([_ep(10, "quotes-1"), _ep(11, "books-1")], "books-1", (11, "books-1"), None),
    ([_ep(10, "quotes-1"), _ep(11, "quotes-1")], "quotes-1", None,
     "'quotes-1' is ambiguous: quotes-1 (pid 10), quotes-1 (pid 11)"),
    ([_ep(10, "quotes-1"), _ep(11, "quotes-1")], "11", (11, "quotes-1"), None),
    ([_ep(10, "quotes-1", "quotes-2")], "10", None, "'10' is ambiguous"),
    ([_ep(10, "quotes-1", "quotes-2")], "quotes-2", (10, "quotes-2"), None),
])
def test_find_crawl(endpoints, target, found, error):
    if error:
        with pytest.raises(ControlError) as excinfo:
            find_crawl(endpoints, target)
        assert str(excinfo.value).startswith(error)
        assert "\n" not in str(excinfo.value)
    else:
        endpoint, crawl = find_crawl(endpoints, target)
        assert (endpoint["pid"], crawl["crawl_id"]) == found
