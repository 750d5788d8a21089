"""Scrapy's public path ``scrapy.core.scheduler`` (``SCHEDULER = 'crawlfw.core.scheduler.Scheduler'``).

The code lives in :mod:`crawlfw.core.frontier.scheduler` (the frontier subsystem); this
module re-exports its public names so the Scrapy path keeps working.
"""

from crawlfw.core.frontier.scheduler import *  # noqa: F403
from crawlfw.core.frontier.scheduler import __all__  # noqa: F401
