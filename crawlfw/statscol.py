"""Deprecated: use :mod:`crawlfw.statscollectors` (Scrapy 1.2's deprecated ``scrapy.statscol``).

Importing this module warns (``CrawlfwDeprecationWarning``) and gives crawlfw.statscollectors's names.
"""

from crawlfw._moved import reexport

__all__ = reexport(__name__, "crawlfw.statscollectors", globals())
