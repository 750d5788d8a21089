"""Deprecated: use :mod:`crawlfw.commands` (Scrapy 1.2's deprecated ``scrapy.command``).

Importing this module warns (``CrawlfwDeprecationWarning``) and gives crawlfw.commands's names.
"""

from crawlfw._moved import reexport

__all__ = reexport(__name__, "crawlfw.commands", globals())
