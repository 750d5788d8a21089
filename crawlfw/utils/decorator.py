"""Deprecated: use :mod:`crawlfw.utils.decorators` (Scrapy 1.2's deprecated
``scrapy.utils.decorator``).

Importing this module warns (``CrawlfwDeprecationWarning``) and gives its names.
"""

from crawlfw._moved import reexport

__all__ = reexport(__name__, "crawlfw.utils.decorators", globals())
