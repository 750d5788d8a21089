"""SpiderLoader: finds the spider classes of a project (``SPIDER_MODULES``).

Scrapy 1.2's ``scrapy.spiderloader.SpiderLoader`` API: ``from_settings(settings)``,
``load(name)``, ``find_by_request(request)``, ``list()``.
"""

import warnings
from collections import defaultdict

from crawlfw.utils.misc import walk_modules
from crawlfw.utils.spider import iter_spider_classes

__all__ = ["SpiderLoader"]


class SpiderLoader:
    """Load spiders from the modules listed in ``SPIDER_MODULES`` (and their submodules).

    Raises:
        ImportError: a module in SPIDER_MODULES cannot be imported (naming it).
    """

    def __init__(self, settings):
        self.spider_modules = settings.getlist("SPIDER_MODULES")
        self._spiders = {}
        self._found = defaultdict(list)
        self._load_all_spiders()

    def _load_spiders(self, module):
        for spcls in iter_spider_classes(module):
            self._found[spcls.name].append((module.__name__, spcls.__name__))
            self._spiders[spcls.name] = spcls

    def _load_all_spiders(self):
        for name in self.spider_modules:
            for module in walk_modules(name):
                self._load_spiders(module)
        dupes = [
            f"  {len(locations)} spiders named {name!r}: "
            + ", ".join(f"{cls} in {mod}" for mod, cls in locations)
            for name, locations in self._found.items()
            if len(locations) > 1
        ]
        if dupes:
            warnings.warn(
                "There are several spiders with the same name:\n" + "\n".join(dupes)
                + "\n  This can cause unexpected behavior.",
                category=UserWarning,
                stacklevel=2,
            )

    @classmethod
    def from_settings(cls, settings):
        return cls(settings)

    def load(self, spider_name: str):
        """Return the Spider class named ``spider_name``.

        Raises:
            KeyError: no spider has that name ("Spider not found: <name>").
        """
        try:
            return self._spiders[spider_name]
        except KeyError:
            raise KeyError(f"Spider not found: {spider_name}") from None

    def find_by_request(self, request) -> list:
        """Names of the spiders whose ``handles_request(request)`` is true."""
        return [name for name, cls in self._spiders.items() if cls.handles_request(request)]

    def list(self) -> list:
        """Names of every spider found."""
        return list(self._spiders.keys())
