"""Scheduler queues: memory queues, byte queues on disk, and the pickle/marshal disk queues
(order, persistence across close/reopen, file clean-up, serialization errors)."""

import random
from collections import deque

import pytest

from crawlfw.http import Request
from crawlfw.squeues import (
    FifoDiskQueue,
    FifoMemoryQueue,
    LifoDiskQueue,
    LifoMemoryQueue,
    MarshalFifoDiskQueue,
    MarshalLifoDiskQueue,
    PickleFifoDiskQueue,
    PickleLifoDiskQueue,
)
from crawlfw.utils.reqser import request_from_dict, request_to_dict

FIFO = [FifoDiskQueue, PickleFifoDiskQueue, MarshalFifoDiskQueue]
LIFO = [LifoDiskQueue, PickleLifoDiskQueue, MarshalLifoDiskQueue]
DISK = FIFO + LIFO


def values_for(cls, n=5):
    if cls in (FifoDiskQueue, LifoDiskQueue):
        return [f"record {i}".encode() * (i + 1) for i in range(n)]
    return [{"url": f"http://example.com/{i}", "priority": i, "body": b"\x00" * i}
            for i in range(n)]


def is_fifo(cls):
    return cls in FIFO or cls is FifoMemoryQueue


@pytest.mark.parametrize("cls", [FifoMemoryQueue, LifoMemoryQueue])
def test_memory_queues(cls):
    q = cls()
    assert q.pop() is None
    for i in range(3):
        q.push(i)
    assert len(q) == 3
    expected = [0, 1, 2] if is_fifo(cls) else [2, 1, 0]
    assert [q.pop() for _ in range(3)] == expected
    assert q.pop() is None and len(q) == 0


@pytest.mark.parametrize("cls", DISK)
def test_order_len_and_empty_pop(cls, tmp_path):
    q = cls(tmp_path / "q")
    assert q.pop() is None
    values = values_for(cls)
    for v in values:
        q.push(v)
    assert len(q) == len(values)
    expected = values if is_fifo(cls) else values[::-1]
    assert [q.pop() for _ in values] == expected
    assert len(q) == 0
    assert q.pop() is None
    q.close()


@pytest.mark.parametrize("cls", DISK)
def test_contents_survive_close_and_reopen(cls, tmp_path):
    path = tmp_path / "q"
    values = values_for(cls, 6)
    q = cls(path)
    for v in values[:4]:
        q.push(v)
    first = q.pop()
    q.close()
    q = cls(path)
    assert len(q) == 3
    for v in values[4:]:
        q.push(v)
    rest = [q.pop() for _ in range(5)]
    q.close()
    if is_fifo(cls):
        assert [first, *rest] == values
    else:
        assert first == values[3]
        assert rest == [values[5], values[4], values[2], values[1], values[0]]


@pytest.mark.parametrize("cls", DISK)
def test_closing_an_empty_queue_removes_its_files(cls, tmp_path):
    path = tmp_path / "q"
    q = cls(path)
    for v in values_for(cls, 3):
        q.push(v)
    while q.pop() is not None:
        pass
    q.close()
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("cls", DISK)
def test_reopened_empty_path_is_a_new_queue(cls, tmp_path):
    cls(tmp_path / "q").close()
    q = cls(tmp_path / "q")
    assert len(q) == 0 and q.pop() is None
    q.close()


@pytest.mark.parametrize("chunksize", [1, 2, 3, 1000])
def test_fifo_chunks_against_a_model(tmp_path, chunksize):
    """Random pushes, pops and reopenings behave like a deque; used-up chunk files go."""
    rng = random.Random(chunksize)
    path = tmp_path / "q"
    q = FifoDiskQueue(path, chunksize=chunksize)
    model = deque()
    for step in range(400):
        action = rng.random()
        if action < 0.55:
            data = bytes([step % 256]) * rng.randrange(0, 50)
            q.push(data)
            model.append(data)
        elif action < 0.95:
            assert q.pop() == (model.popleft() if model else None)
        else:
            q.close()
            q = FifoDiskQueue(path, chunksize=chunksize)
        assert len(q) == len(model)
        if path.exists():
            chunks = [p for p in path.iterdir() if p.name.startswith("q")]
            assert len(chunks) <= len(model) // chunksize + 2
    q.close()
    assert path.exists() == bool(model)


def test_fifo_reopened_keeps_its_chunksize(tmp_path):
    q = FifoDiskQueue(tmp_path / "q", chunksize=2)
    for i in range(5):
        q.push(bytes([i]))
    q.close()
    q = FifoDiskQueue(tmp_path / "q", chunksize=50)
    assert q.chunksize == 2
    assert [q.pop() for _ in range(5)] == [bytes([i]) for i in range(5)]
    q.close()


def test_lifo_against_a_model(tmp_path):
    rng = random.Random(7)
    path = tmp_path / "q"
    q = LifoDiskQueue(path)
    model = []
    for step in range(400):
        action = rng.random()
        if action < 0.55:
            data = bytes([step % 256]) * rng.randrange(0, 50)
            q.push(data)
            model.append(data)
        elif action < 0.95:
            assert q.pop() == (model.pop() if model else None)
        else:
            q.close()
            q = LifoDiskQueue(path)
        assert len(q) == len(model)
    q.close()


def test_requests_through_a_pickle_queue(tmp_path):
    request = Request("http://example.com/a?b=1", method="POST", body=b"x=1",
                      headers={"X-A": "1"}, meta={"depth": 2}, priority=5, dont_filter=True)
    q = PickleLifoDiskQueue(tmp_path / "q")
    q.push(request_to_dict(request))
    q.close()
    q = PickleLifoDiskQueue(tmp_path / "q")
    back = request_from_dict(q.pop())
    q.close()
    assert (back.url, back.method, back.body, back.meta, back.priority, back.dont_filter) == \
        ("http://example.com/a?b=1", "POST", b"x=1", {"depth": 2}, 5, True)
    assert back.headers[b"X-A"] == b"1"


@pytest.mark.parametrize("cls", [PickleFifoDiskQueue, PickleLifoDiskQueue])
def test_unpicklable_object_is_a_value_error_naming_it(cls, tmp_path):
    q = cls(tmp_path / "q")
    request = Request("http://example.com/unpicklable", callback=lambda r: None)
    with pytest.raises(ValueError, match=r"<GET http://example.com/unpicklable>"):
        q.push(request)
    assert len(q) == 0
    q.push({"fine": 1})
    assert q.pop() == {"fine": 1}
    q.close()


@pytest.mark.parametrize("cls", [MarshalFifoDiskQueue, MarshalLifoDiskQueue])
def test_unmarshallable_object_is_a_value_error_naming_it(cls, tmp_path):
    q = cls(tmp_path / "q")
    with pytest.raises(ValueError, match=r"<GET http://example.com/m>"):
        q.push(Request("http://example.com/m"))
    assert len(q) == 0
    q.close()


@pytest.mark.parametrize("cls", [FifoDiskQueue, LifoDiskQueue])
def test_byte_queues_take_bytes_only(cls, tmp_path):
    q = cls(tmp_path / "q")
    with pytest.raises(TypeError, match="bytes"):
        q.push("text")
    q.close()


def test_fifo_rejects_a_bad_info_file(tmp_path):
    path = tmp_path / "q"
    path.mkdir()
    (path / "info.json").write_text("not json")
    with pytest.raises(ValueError, match="info"):
        FifoDiskQueue(path)


def test_fifo_rejects_a_bad_chunksize(tmp_path):
    with pytest.raises(ValueError, match="chunksize"):
        FifoDiskQueue(tmp_path / "q", chunksize=0)


def test_lifo_rejects_a_file_that_is_not_a_queue(tmp_path):
    path = tmp_path / "q"
    path.write_bytes(b"\x01")
    with pytest.raises(ValueError, match="not a disk queue"):
        LifoDiskQueue(path)
