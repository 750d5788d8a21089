"""Deprecated: use :mod:`crawlfw.linkextractors` (Scrapy 1.2's deprecated ``scrapy.linkextractor``).

Importing this module warns (``CrawlfwDeprecationWarning``) and gives crawlfw.linkextractors's names.
"""

from crawlfw._moved import reexport

__all__ = reexport(__name__, "crawlfw.linkextractors", globals())
