"""Scrapy's public path ``scrapy.core.spidermw`` (the :class:`SpiderMiddlewareManager`).

The code lives in :mod:`crawlfw.core.flow.spidermw` (the flow subsystem); this module
re-exports its public names so the Scrapy path keeps working.
"""

from crawlfw.core.flow.spidermw import *  # noqa: F403
from crawlfw.core.flow.spidermw import __all__  # noqa: F401
