"""Private scratch directories: disk space a crawl uses while it runs and gives back at
its end, even after a crash. One helper for every spill of a crawl without ``JOBDIR``:
the memory frontier's queued requests (:mod:`crawlfw.core.frontier.spill`) and the
dupefilter's seen set (:mod:`crawlfw.utils._seen`).

A :class:`ScratchDir` is a directory ``<purpose>-<pid>-<random>`` made with
:func:`tempfile.mkdtemp` (mode 0700) under the crawl user's private root
(:func:`scratch_root`: ``$TMPDIR/crawlfw-<uid>`` when ``TMPDIR`` is set, else
``/var/tmp/crawlfw-<uid>``, on disk on systems whose ``/tmp`` is in RAM; a root that
another user owns or others may write is refused). Its owner holds an exclusive
``flock`` on the file ``.lock`` inside it for as long as the directory lives:

- a normal end and ^C (the crawl closes its components): :meth:`ScratchDir.remove`;
- an object dropped without ``remove``, and the interpreter's exit: a
  :func:`weakref.finalize` removes it;
- ``kill -9``, OOM, power loss: nothing runs, but the kernel releases the lock with the
  process, and the next :func:`sweep_stale` (every crawl's memory frontier and
  dupefilter call it at start, and every new scratch directory before it is made)
  removes each directory of the root whose lock it can take: its owner is dead,
  whatever its process id became.

The lock is taken on a file of another name first and renamed to ``.lock`` once held
(:func:`os.rename` is atomic), so a sweep never sees a live directory's lock unheld.
A directory without ``.lock`` (its maker died between ``mkdtemp`` and the rename) is
removed once the process named in it is gone or it is :data:`ORPHAN_AGE_S` old.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import shutil
import tempfile
import time
import weakref

__all__ = ["ORPHAN_AGE_S", "PURPOSES", "ScratchDir", "private_root", "scratch_root", "sweep_stale"]

logger = logging.getLogger(__name__)

#: What a scratch directory may hold, the start of its name: only directories so named
#: are swept (a root given by the caller may hold other things).
PURPOSES = ("frontier", "seen")

#: Seconds after which a scratch directory that never got its lock is removed.
ORPHAN_AGE_S = 60.0

_LOCK = ".lock"


def scratch_root() -> str:
    """The directory under which scratch directories are made: ``$TMPDIR/crawlfw-<uid>``
    when ``TMPDIR`` is set, else ``/var/tmp/crawlfw-<uid>`` when ``/var/tmp`` is
    writable, else the same under :func:`tempfile.gettempdir`."""
    base = os.environ.get("TMPDIR")
    if not base:
        base = "/var/tmp" if os.access("/var/tmp", os.W_OK | os.X_OK) else tempfile.gettempdir()
    return os.path.join(base, f"crawlfw-{os.getuid()}")


def private_root(root: str) -> str:
    """Make ``root`` (mode 0700) if missing and check that it is this user's alone.

    Returns:
        str: ``root``.

    Raises:
        OSError: it cannot be made, or another user owns it or others may write it
            (the message says which).
    """
    try:
        os.makedirs(root, mode=0o700, exist_ok=True)
    except FileExistsError:  # a file of that name
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), root) from None
    st = os.lstat(root)
    if st.st_uid != os.getuid() or st.st_mode & 0o022 or not os.path.isdir(root):
        raise OSError(f"not a private directory of this user (mode {st.st_mode & 0o777:o}, "
                      f"owner uid {st.st_uid})")
    return root


class ScratchDir:
    """A private directory under :func:`scratch_root`, removed at the end.

    Args:
        purpose: what it holds, the start of its name: one of :data:`PURPOSES`.
        root: where to make it; None: :func:`scratch_root`. Made 0700 if missing;
            refused if another user owns it or others may write it.

    Attributes:
        path: the directory (str).
        root: the directory it is in.

    Raises:
        OSError: the root, the directory or its lock cannot be made, or the root is not
            private (the message says why; the caller names the path).
        ValueError: an unknown ``purpose``.
    """

    def __init__(self, purpose: str, root: str | None = None) -> None:
        if purpose not in PURPOSES:
            raise ValueError(f"ScratchDir: purpose must be one of {PURPOSES}, got {purpose!r}")
        self.root = root = root if root is not None else scratch_root()
        private_root(root)
        sweep_stale(root)
        self.path = tempfile.mkdtemp(prefix=f"{purpose}-{os.getpid()}-", dir=root)
        fd = -1
        try:
            pending = os.path.join(self.path, ".lock-pending")
            fd = os.open(pending, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.rename(pending, os.path.join(self.path, _LOCK))
        except OSError:
            if fd >= 0:
                os.close(fd)
            shutil.rmtree(self.path, ignore_errors=True)
            raise
        self._finalizer = weakref.finalize(self, _remove, self.path, fd)

    @property
    def alive(self) -> bool:
        """True until :meth:`remove`."""
        return self._finalizer.alive

    def remove(self) -> None:
        """Remove the directory and everything in it, and release its lock; idempotent.
        Files open in it stay usable until closed (their space goes then)."""
        self._finalizer()


def _remove(path: str, fd: int) -> None:
    shutil.rmtree(path, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def sweep_stale(root: str | None = None) -> list[str]:
    """Remove the scratch directories under ``root`` whose owner is dead.

    Only directories named ``<purpose>-<pid>-...`` (:data:`PURPOSES`) are looked at. A
    directory is stale when its ``.lock`` can be locked (no live process holds it), or
    when it has no ``.lock`` and the process its name gives has ended or it is older
    than :data:`ORPHAN_AGE_S`. Directories of live crawls (this process's included) are
    left alone; errors (a directory removed by a concurrent sweep, one of another user)
    are ignored. One INFO line names what was removed.

    Args:
        root: the directory to look in; None: :func:`scratch_root`.

    Returns:
        The paths removed.
    """
    root = root if root is not None else scratch_root()
    try:
        names = os.listdir(root)
    except OSError:
        return []
    removed = []
    for name in names:
        if name.split("-", 1)[0] not in PURPOSES:
            continue
        path = os.path.join(root, name)
        try:
            fd = os.open(os.path.join(path, _LOCK), os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            try:
                pid = int(name.split("-")[1])
            except (IndexError, ValueError):
                pid = 0
            try:
                if not os.path.isdir(path):
                    continue
                if ((pid > 0 and not _pid_alive(pid))
                        or time.time() - os.stat(path).st_mtime > ORPHAN_AGE_S):
                    shutil.rmtree(path, ignore_errors=True)
                    removed.append(path)
            except OSError:
                pass
            continue
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its owner is alive
            os.close(fd)
            continue
        try:
            shutil.rmtree(path, ignore_errors=True)
        finally:
            os.close(fd)
        removed.append(path)
    if removed:
        logger.info("Removed %(n)d scratch directories of crawls that ended without "
                    "closing them: %(paths)s", {"n": len(removed), "paths": removed})
    return removed
