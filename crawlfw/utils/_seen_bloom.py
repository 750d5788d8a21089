"""The seen set's approximate kind: a scalable Bloom filter
(``DUPEFILTER_BLOOM_ERROR_RATE`` > 0), with the interface of
:class:`crawlfw.utils._seen.SeenSet` (ARCHITECTURE.md, "The seen set")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rbloom import Bloom

__all__ = ["BloomSeenSet"]

KEY_BYTES = 16  # (crawlfw.utils._seen.KEY_BYTES)


class BloomSeenSet:
    """An approximate set of keys: a scalable Bloom filter (rbloom filters of capacity
    1M, 2M, 4M... keys with error rates ``r/2, r/4, r/8...``, so at most ``r`` in all).

    Args:
        error_rate: the most a new key may be taken for a seen one
            (``DUPEFILTER_BLOOM_ERROR_RATE``), in (0, 0.5].
        initial_capacity: keys of the first filter.

    Raises:
        ValueError: ``error_rate`` out of range (the message names the setting).
    """

    def __init__(self, error_rate: float, *, initial_capacity: int = 1 << 20) -> None:
        self.check_rate(error_rate)
        self.error_rate = error_rate
        self.initial_capacity = initial_capacity
        self._start()

    @staticmethod
    def check_rate(error_rate: float) -> None:
        """Raise ValueError (naming ``DUPEFILTER_BLOOM_ERROR_RATE``) for a rate out of
        (0, 0.5]."""
        if not 0 < error_rate <= 0.5:
            raise ValueError("DUPEFILTER_BLOOM_ERROR_RATE must be above 0 and at most 0.5 "
                             f"(0 keeps the exact seen set), got {error_rate!r}")

    def _start(self) -> None:
        self._filters: list[Bloom] = []
        self._n = 0
        self._capacity = max(self.initial_capacity // 2, 1)
        self._grow()

    def _grow(self) -> None:
        from rbloom import Bloom  # here: only a crawl that asks for it loads rbloom

        self._capacity *= 2
        rate = self.error_rate / 2 ** (len(self._filters) + 1)
        self._current = Bloom(self._capacity, rate)
        self._filters.append(self._current)
        self._room = self._capacity

    def add(self, key: bytes) -> bool:
        """Add ``key`` (16 bytes or more; the first 16 count); True when it was (taken
        for) new."""
        key = key[:16]
        for f in self._filters:
            if key in f:
                return False
        self._current.add(key)
        self._n += 1
        self._room -= 1
        if not self._room:
            self._grow()
        return True

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, (bytes, bytearray)) or len(key) < KEY_BYTES:
            return False
        key = bytes(key[:16])
        for f in self._filters:
            if key in f:
                return True
        return False

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[bytes]:
        raise TypeError("a Bloom filter cannot list its fingerprints "
                        "(DUPEFILTER_BLOOM_ERROR_RATE is set)")

    def discard(self, key: bytes) -> None:
        raise TypeError("a Bloom filter cannot forget a fingerprint "
                        "(DUPEFILTER_BLOOM_ERROR_RATE is set)")

    def clear(self) -> None:
        """Forget every key."""
        self.close()

    def close(self) -> None:
        """Empty the set (it can be used again)."""
        self._start()

    @property
    def memory_bytes(self) -> int:
        """Bytes of the filters."""
        return sum(f.size_in_bits for f in self._filters) // 8

    disk_bytes = 0
    spill_path = None

    def __repr__(self) -> str:
        return (f"<BloomSeenSet ~{self._n} keys, error rate {self.error_rate}, "
                f"{self.memory_bytes} bytes>")
