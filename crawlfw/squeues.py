"""Request queues the scheduler keeps per priority (Scrapy 1.2's ``scrapy.squeues``).

Memory queues: :class:`FifoMemoryQueue` (breadth-first within a priority) and
:class:`LifoMemoryQueue` (depth-first; Scrapy's default ``SCHEDULER_MEMORY_QUEUE``).

Disk queues, for a crawl persisted in ``JOBDIR`` (``SCHEDULER_DISK_QUEUE``):
:class:`PickleFifoDiskQueue`, :class:`PickleLifoDiskQueue` (any picklable object; the
scheduler stores request dicts from ``crawlfw.utils.reqser.request_to_dict``),
:class:`MarshalFifoDiskQueue`, :class:`MarshalLifoDiskQueue` (built-in types only,
faster). They are built on the byte queues :class:`FifoDiskQueue` and
:class:`LifoDiskQueue` (Scrapy uses queuelib's; these are crawlfw's own and use their own
file format). A disk queue is opened on a path; what it holds when ``close()`` is called
is there again when the same path is opened next (an empty queue removes its files).
An object that cannot be serialized raises ``ValueError`` naming it, as Scrapy 1.2 does,
so the scheduler can keep that request in memory instead.

Every queue has ``push(obj)``, ``pop() -> obj | None`` (None when empty), ``__len__``
and ``close()``. Queues are not thread-safe: one actor owns each.
"""

import json
import marshal
import os
import pickle
import struct
from collections import deque

__all__ = [
    "FifoMemoryQueue",
    "LifoMemoryQueue",
    "FifoDiskQueue",
    "LifoDiskQueue",
    "PickleFifoDiskQueue",
    "PickleLifoDiskQueue",
    "MarshalFifoDiskQueue",
    "MarshalLifoDiskQueue",
]


class FifoMemoryQueue:
    """First in, first out queue held in memory."""

    __slots__ = ("_q",)

    def __init__(self, *args):
        self._q = deque()

    def push(self, obj) -> None:
        self._q.append(obj)

    def pop(self):
        """Remove and return the oldest object, or None when empty."""
        return self._q.popleft() if self._q else None

    def close(self) -> None:
        self._q.clear()

    def __len__(self) -> int:
        return len(self._q)


class LifoMemoryQueue(FifoMemoryQueue):
    """Last in, first out queue held in memory."""

    __slots__ = ()

    def pop(self):
        """Remove and return the newest object, or None when empty."""
        return self._q.pop() if self._q else None


# --- byte queues on disk --------------------------------------------------------------

_LENGTH = struct.Struct(">L")  # a record's length: 4 bytes, big-endian, unsigned


class FifoDiskQueue:
    """First in, first out queue of ``bytes`` records in a directory.

    Records are appended to chunk files (``q00000``, ``q00001``...) of at most
    ``chunksize`` records each, every record a 4-byte big-endian length followed by its
    bytes; a chunk file is deleted once every record in it has been popped. The read and
    write positions are saved in ``info.json`` by ``close()``.

    Args:
        path: the directory (created if missing).
        chunksize: records per chunk file (used when the queue is created; a reopened
            queue keeps the size it was created with).

    Raises:
        ValueError: ``chunksize`` is below 1, or ``info.json`` is not a queue's.
        OSError: the directory or its files cannot be created or read.
    """

    def __init__(self, path, chunksize: int = 100_000):
        if chunksize < 1:
            raise ValueError(f"FifoDiskQueue chunksize must be at least 1, got {chunksize!r}")
        self.path = os.fspath(path)
        os.makedirs(self.path, exist_ok=True)
        info = self._load_info(chunksize)
        self.chunksize = info["chunksize"]
        self.size = info["size"]
        self.head_chunk, self.head_offset, self.head_read = info["head"]
        self.tail_chunk, self.tail_count = info["tail"]
        self._tail = open(self._chunk_path(self.tail_chunk), "ab")
        self._head = open(self._chunk_path(self.head_chunk), "rb")
        self._head.seek(self.head_offset)

    def push(self, data: bytes) -> None:
        """Append one record.

        Raises:
            TypeError: ``data`` is not bytes.
        """
        if not isinstance(data, bytes):
            raise TypeError(f"FifoDiskQueue.push() takes bytes, got {type(data).__name__}")
        self._tail.write(_LENGTH.pack(len(data)))
        self._tail.write(data)
        self.tail_count += 1
        self.size += 1
        if self.tail_count >= self.chunksize:
            self._tail.close()
            self.tail_chunk += 1
            self.tail_count = 0
            self._tail = open(self._chunk_path(self.tail_chunk), "ab")

    def pop(self) -> bytes | None:
        """Remove and return the oldest record, or None when the queue is empty."""
        if not self.size:
            return None
        if self.head_chunk == self.tail_chunk:
            self._tail.flush()
        (length,) = _LENGTH.unpack(self._read_exactly(_LENGTH.size))
        data = self._read_exactly(length)
        self.head_offset += _LENGTH.size + length
        self.head_read += 1
        self.size -= 1
        if self.head_read >= self.chunksize:  # chunk used up: move on and delete it
            self._head.close()
            os.remove(self._chunk_path(self.head_chunk))
            self.head_chunk += 1
            self.head_offset = 0
            self.head_read = 0
            if self.head_chunk == self.tail_chunk:
                self._tail.flush()
            self._head = open(self._chunk_path(self.head_chunk), "rb")
        return data

    def close(self) -> None:
        """Save the positions and close the files; an empty queue removes its files
        (and the directory, when nothing else is in it)."""
        self._head.close()
        self._tail.close()
        if self.size:
            info = {"chunksize": self.chunksize, "size": self.size,
                    "head": [self.head_chunk, self.head_offset, self.head_read],
                    "tail": [self.tail_chunk, self.tail_count]}
            with open(self._info_path(), "w", encoding="utf-8") as f:
                json.dump(info, f)
            return
        for chunk in range(self.head_chunk, self.tail_chunk + 1):
            _remove_if_exists(self._chunk_path(chunk))
        _remove_if_exists(self._info_path())
        try:
            os.rmdir(self.path)
        except OSError:
            pass  # other files in it

    def __len__(self) -> int:
        return self.size

    def _read_exactly(self, n: int) -> bytes:
        data = self._head.read(n)
        if len(data) != n:
            raise ValueError(
                f"FifoDiskQueue {self.path!r}: chunk {self.head_chunk} is truncated "
                f"at byte {self.head_offset}"
            )
        return data

    def _chunk_path(self, chunk: int) -> str:
        return os.path.join(self.path, f"q{chunk:05d}")

    def _info_path(self) -> str:
        return os.path.join(self.path, "info.json")

    def _load_info(self, chunksize: int) -> dict:
        try:
            with open(self._info_path(), encoding="utf-8") as f:
                info = json.load(f)
        except FileNotFoundError:
            return {"chunksize": chunksize, "size": 0, "head": [0, 0, 0], "tail": [0, 0]}
        except ValueError as e:
            raise ValueError(f"{self._info_path()!r} is not a disk queue's info file: {e}") from e
        if not isinstance(info, dict) or set(info) != {"chunksize", "size", "head", "tail"}:
            raise ValueError(f"{self._info_path()!r} is not a disk queue's info file")
        return info


class LifoDiskQueue:
    """Last in, first out queue of ``bytes`` records in one file.

    The file starts with the record count (4 bytes, big-endian); each record is its
    bytes followed by its length (4 bytes, big-endian), so the last one is read from the
    end and removed by truncating the file.

    Args:
        path: the file (created if missing).

    Raises:
        ValueError: the file exists but is not a queue's (too short).
        OSError: the file cannot be created or read.
    """

    def __init__(self, path):
        self.path = os.fspath(path)
        exists = os.path.exists(self.path)
        self._f = open(self.path, "r+b" if exists else "w+b")
        if exists:
            header = self._f.read(_LENGTH.size)
            if len(header) != _LENGTH.size:
                self._f.close()
                raise ValueError(f"{self.path!r} is not a disk queue file (no header)")
            (self.size,) = _LENGTH.unpack(header)
        else:
            self.size = 0
            self._f.write(_LENGTH.pack(0))
        self._f.seek(0, os.SEEK_END)

    def push(self, data: bytes) -> None:
        """Add one record on top.

        Raises:
            TypeError: ``data`` is not bytes.
        """
        if not isinstance(data, bytes):
            raise TypeError(f"LifoDiskQueue.push() takes bytes, got {type(data).__name__}")
        self._f.seek(0, os.SEEK_END)
        self._f.write(data)
        self._f.write(_LENGTH.pack(len(data)))
        self.size += 1

    def pop(self) -> bytes | None:
        """Remove and return the newest record, or None when the queue is empty."""
        if not self.size:
            return None
        end = self._f.seek(0, os.SEEK_END)
        self._f.seek(end - _LENGTH.size)
        (length,) = _LENGTH.unpack(self._f.read(_LENGTH.size))
        start = end - _LENGTH.size - length
        if start < _LENGTH.size:
            raise ValueError(f"LifoDiskQueue {self.path!r} is corrupt (record of {length} "
                             f"bytes before byte {end})")
        self._f.seek(start)
        data = self._f.read(length)
        self._f.truncate(start)
        self.size -= 1
        return data

    def close(self) -> None:
        """Save the record count and close the file; an empty queue removes its file."""
        self._f.seek(0)
        self._f.write(_LENGTH.pack(self.size))
        self._f.close()
        if not self.size:
            _remove_if_exists(self.path)

    def __len__(self) -> int:
        return self.size


def _remove_if_exists(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


# --- object queues on disk --------------------------------------------------------------


def _serializable_queue(queue_class, serialize, deserialize, name, doc):
    """A subclass of ``queue_class`` that stores objects serialized to bytes."""

    def push(self, obj):
        queue_class.push(self, serialize(obj))

    def pop(self):
        data = queue_class.pop(self)
        return None if data is None else deserialize(data)

    return type(name, (queue_class,), {
        "__doc__": doc, "__module__": __name__, "push": push, "pop": pop,
    })


def _pickle_serialize(obj) -> bytes:
    try:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, AttributeError, TypeError) as e:
        raise ValueError(f"cannot pickle {_short_repr(obj)} for a disk queue: {e}") from e


def _marshal_serialize(obj) -> bytes:
    try:
        return marshal.dumps(obj)
    except ValueError as e:
        raise ValueError(f"cannot marshal {_short_repr(obj)} for a disk queue: {e}") from e


def _short_repr(obj) -> str:
    text = repr(obj)
    return text if len(text) <= 200 else text[:197] + "..."


_DOC = """{order} queue on disk of objects serialized with {how}.

    ``push(obj)`` raises ``ValueError`` naming ``obj`` when it cannot be serialized.
    See :class:`{base}` for the arguments and the files.
    """

PickleFifoDiskQueue = _serializable_queue(
    FifoDiskQueue, _pickle_serialize, pickle.loads, "PickleFifoDiskQueue",
    _DOC.format(order="First in, first out", how="pickle", base="FifoDiskQueue"))
PickleLifoDiskQueue = _serializable_queue(
    LifoDiskQueue, _pickle_serialize, pickle.loads, "PickleLifoDiskQueue",
    _DOC.format(order="Last in, first out", how="pickle", base="LifoDiskQueue"))
MarshalFifoDiskQueue = _serializable_queue(
    FifoDiskQueue, _marshal_serialize, marshal.loads, "MarshalFifoDiskQueue",
    _DOC.format(order="First in, first out", how="marshal (built-in types only)",
                base="FifoDiskQueue"))
MarshalLifoDiskQueue = _serializable_queue(
    LifoDiskQueue, _marshal_serialize, marshal.loads, "MarshalLifoDiskQueue",
    _DOC.format(order="Last in, first out", how="marshal (built-in types only)",
                base="LifoDiskQueue"))
