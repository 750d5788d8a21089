"""Async generator helpers (Scrapy 2's ``scrapy.utils.asyncgen``)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Iterable
from typing import Any

__all__ = ["as_async_generator", "collect_asyncgen"]


async def collect_asyncgen(result: AsyncIterator) -> list:
    """Await every value of an async iterable.

    Returns:
        list: the values, in order.
    """
    return [x async for x in result]


async def as_async_generator(it: Iterable | AsyncIterator) -> AsyncGenerator[Any, None]:
    """Yield the values of an iterable or async iterable from an async generator."""
    if isinstance(it, AsyncIterator):
        async for value in it:
            yield value
    else:
        for value in it:
            yield value
