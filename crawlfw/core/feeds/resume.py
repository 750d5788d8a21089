"""Resuming a feed of a ``JOBDIR`` job (or a shared crawl's worker): the checks that the
local feed file is the one the job committed to (:class:`FeedResumeError`,
:class:`FeedReplacedError`), and cutting it back to its committed length, dropping what
was written after the last commit (ARCHITECTURE.md, "Lose nothing"); split from
:mod:`crawlfw.core.feeds.feeds` (issue 19), whose
:class:`~crawlfw.core.feeds.feeds.FeedWriter` calls them."""

from __future__ import annotations

import errno
import logging
import os
from typing import IO, TYPE_CHECKING, TypeAlias, TypeGuard

from crawlfw.core.feeds.plugins import PostProcessingManager
from crawlfw.core.feeds.storage import FileFeedStorage, _redact_uri

if TYPE_CHECKING:
    #: What a feed's exporter writes into: the storage's file, or the post-processing
    #: plug-ins over it.
    FeedFile: TypeAlias = IO[bytes] | PostProcessingManager

logger = logging.getLogger(__name__)

__all__ = ["FeedReplacedError", "FeedResumeError"]


def _check_writable(path: str) -> None:
    """Raise ``OSError`` when the local feed file ``path`` could not be opened for
    writing, without creating, opening or changing anything."""
    target = os.path.abspath(path)
    if os.path.isdir(target):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
    if os.path.exists(target):
        if not os.access(target, os.W_OK):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return
    parent = os.path.dirname(target)
    while not os.path.exists(parent):  # the storage creates the missing directories
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise NotADirectoryError(errno.ENOTDIR, "Not a directory", parent)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, "Permission denied", parent)


def _is_file_storage(storage: object) -> TypeGuard[FileFeedStorage]:
    return isinstance(storage, FileFeedStorage)


class FeedResumeError(Exception):
    """A ``JOBDIR`` job's feed cannot be resumed: its file is missing or shorter than
    the length the job committed (changed outside the crawl)."""


class FeedReplacedError(OSError):
    """A local feed file was deleted, moved or replaced while the crawl wrote it."""


def _file_identity(file: IO[bytes] | FeedFile | str) -> tuple[int, int]:
    """``(st_dev, st_ino)`` of an open file or a path."""
    st = os.fstat(file.fileno()) if hasattr(file, "fileno") else os.stat(file)
    return st.st_dev, st.st_ino


def _resume_problem(path: str, offset: int, uri: str) -> str | None:
    """Why the feed file at ``path`` cannot be resumed at ``offset`` (its committed
    length), or None when it can."""
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        size = None
    if size is not None and size >= offset:
        return None
    if size is None and offset == 0:
        return None  # nothing was committed to it
    state = "missing" if size is None else f"{size} bytes long"
    return (f"Feed {_redact_uri(uri)} is {state}, but this job committed {offset} bytes "
            f"of it: it was changed outside the crawl and resuming would write a broken "
            f"document; restore the file, or set FEED_RESTART_BROKEN = True to start the "
            f"feed anew (its old file kept aside)")


def _cut_back(path: str, offset: int, uri: str) -> None:
    """Truncate the feed file at ``path`` to ``offset`` bytes, its committed length
    (checked first with :func:`_resume_problem`)."""
    size = os.path.getsize(path) if os.path.exists(path) else 0
    if size > offset:
        os.truncate(path, offset)
        logger.info("Feed %(uri)s cut back to its committed length (%(offset)d bytes; "
                    "%(dropped)d bytes written after the last commit dropped)",
                    {"uri": _redact_uri(uri), "offset": offset, "dropped": size - offset})
