"""Scrapy's public path ``scrapy.core.scraper`` (the :class:`Scraper`).

The code lives in :mod:`crawlfw.core.flow.scraper` (the flow subsystem); this module
re-exports its public names so the Scrapy path keeps working.
"""

from crawlfw.core.flow.scraper import *  # noqa: F403
from crawlfw.core.flow.scraper import __all__  # noqa: F401
