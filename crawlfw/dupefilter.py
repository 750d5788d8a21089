"""Deprecated: use :mod:`crawlfw.dupefilters` (Scrapy 1.2's deprecated ``scrapy.dupefilter``).

Importing this module warns (``CrawlfwDeprecationWarning``) and gives crawlfw.dupefilters's names.
"""

from crawlfw._moved import reexport

__all__ = reexport(__name__, "crawlfw.dupefilters", globals())
