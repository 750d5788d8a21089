"""Deprecated: use :mod:`crawlfw.squeues` (Scrapy 1.2's deprecated ``scrapy.squeue``).

Importing this module warns (``CrawlfwDeprecationWarning``) and gives crawlfw.squeues's names.
"""

from crawlfw._moved import reexport

__all__ = reexport(__name__, "crawlfw.squeues", globals())
