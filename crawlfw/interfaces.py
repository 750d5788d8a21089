"""Interfaces (Scrapy 1.2's ``scrapy.interfaces``).

Scrapy declares them with ``zope.interface``; crawlfw uses :class:`typing.Protocol`, so
a class implements an interface by having its methods (no registration), and
``issubclass(cls, ISpiderLoader)`` / ``isinstance(obj, ISpiderLoader)`` check that the
methods are there (not their signatures).
"""

from typing import Protocol, runtime_checkable

__all__ = ["ISpiderLoader", "ISpiderManager"]


@runtime_checkable
class ISpiderLoader(Protocol):
    """What a ``SPIDER_LOADER_CLASS`` must offer (``crawlfw.spiderloader.SpiderLoader``
    is the default implementation)."""

    @classmethod
    def from_settings(cls, settings):
        """Return a loader for ``settings`` (a ``Settings``; ``SPIDER_MODULES`` lists the
        modules to look for spiders in)."""

    def load(self, spider_name: str):
        """Return the Spider class named ``spider_name``.

        Raises:
            KeyError: no spider has that name.
        """

    def list(self) -> list:
        """Return the names of all spiders of the project (``list[str]``)."""

    def find_by_request(self, request) -> list:
        """Return the names of the spiders that can handle ``request`` (``list[str]``)."""


#: Deprecated alias of :class:`ISpiderLoader` (its name before Scrapy 1.0).
ISpiderManager = ISpiderLoader
