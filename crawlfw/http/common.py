"""Helpers shared by the HTTP object classes (Scrapy 1.2's ``scrapy.http.common``)."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["obsolete_setter"]


def obsolete_setter(setter: Callable, attrname: str) -> Callable:
    """Return a property setter that refuses assignment, pointing at ``replace()``.

    Args:
        setter: the former setter (unused; kept for Scrapy's signature).
        attrname: attribute name used in the message.

    Returns:
        A function ``(self, value)`` that raises
        ``AttributeError("<Class>.<attrname> is not modifiable, use <Class>.replace() instead")``.
    """

    def newsetter(self, value):
        c = self.__class__.__name__
        raise AttributeError(f"{c}.{attrname} is not modifiable, use {c}.replace() instead")

    return newsetter
