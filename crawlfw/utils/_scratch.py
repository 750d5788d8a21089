"""Private scratch directories: disk space a crawl uses while it runs and gives back at
its end, even after a crash.

A :class:`ScratchDir` is a directory ``crawlfw-scratch-<purpose>-<pid>-<random>`` made
with :func:`tempfile.mkdtemp` (mode 0700) under the temporary directory (``TMPDIR``,
else ``/tmp``: :func:`tempfile.gettempdir`, or the ``root`` given). Its owner holds an
exclusive ``flock`` on the file ``.lock`` inside it for as long as the directory lives:

- a normal end and ^C (the crawl closes its components): :meth:`ScratchDir.remove`;
- an object dropped without ``remove``, and the interpreter's exit: a
  :func:`weakref.finalize` removes it;
- ``kill -9``, OOM, power loss: nothing runs, but the kernel releases the lock with the
  process, and the next :func:`sweep_stale` (every crawl's dupefilter calls it at open, and
  every new scratch directory before it is made) removes each ``crawlfw-scratch-*``
  directory whose lock it can take: its owner is dead, whatever its process id became.

The lock is taken on a file of another name first and renamed to ``.lock`` once held
(:func:`os.rename` is atomic), so a sweep never sees a live directory's lock unheld.
A directory without ``.lock`` (its maker died between ``mkdtemp`` and the rename) is
removed once it is :data:`ORPHAN_AGE_S` old.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import time
import weakref

__all__ = ["ORPHAN_AGE_S", "PREFIX", "ScratchDir", "sweep_stale"]

#: Name prefix of every scratch directory (what :func:`sweep_stale` looks at).
PREFIX = "crawlfw-scratch-"

#: Seconds after which a scratch directory that never got its lock is removed.
ORPHAN_AGE_S = 60.0

_LOCK = ".lock"


class ScratchDir:
    """A private directory under the temporary directory, removed at the end.

    Args:
        purpose: a word naming what it holds (``seen``...), part of its name.
        root: where to make it; None: :func:`tempfile.gettempdir` (``TMPDIR``).

    Attributes:
        path: the directory (str).

    Raises:
        OSError: the directory or its lock cannot be made (the message names the path).
    """

    def __init__(self, purpose: str, root: str | None = None) -> None:
        root = root if root is not None else tempfile.gettempdir()
        sweep_stale(root)
        self.path = tempfile.mkdtemp(prefix=f"{PREFIX}{purpose}-{os.getpid()}-", dir=root)
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
        """Remove the directory and everything in it, and release its lock; idempotent."""
        self._finalizer()


def _remove(path: str, fd: int) -> None:
    shutil.rmtree(path, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.close(fd)


def sweep_stale(root: str | None = None) -> list[str]:
    """Remove the scratch directories under ``root`` whose owner is dead.

    A directory is stale when its ``.lock`` can be locked (no live process holds it), or
    when it has no ``.lock`` and is older than :data:`ORPHAN_AGE_S`. Directories of live
    crawls (this process's included) are left alone; errors (a directory removed by a
    concurrent sweep, one of another user) are ignored.

    Args:
        root: the directory to look in; None: :func:`tempfile.gettempdir`.

    Returns:
        The paths removed.
    """
    root = root if root is not None else tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(root) if n.startswith(PREFIX)]
    except OSError:
        return []
    removed = []
    for name in names:
        path = os.path.join(root, name)
        try:
            fd = os.open(os.path.join(path, _LOCK), os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            try:
                if time.time() - os.stat(path).st_mtime > ORPHAN_AGE_S:
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
    return removed
