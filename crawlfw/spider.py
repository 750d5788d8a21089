"""Deprecated: use :mod:`crawlfw.spiders` (Scrapy 1.2's deprecated ``scrapy.spider``).

Importing this module warns (``CrawlfwDeprecationWarning``) and gives crawlfw.spiders's names.
"""

from crawlfw._moved import reexport

__all__ = reexport(__name__, "crawlfw.spiders", globals())
