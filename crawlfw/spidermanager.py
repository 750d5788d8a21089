"""Deprecated: use :mod:`crawlfw.spiderloader` (Scrapy 1.2's deprecated
``scrapy.spidermanager``).

Importing this module warns (``CrawlfwDeprecationWarning``); ``SpiderManager`` is a
deprecated alias of :class:`crawlfw.spiderloader.SpiderLoader`.
"""

import warnings

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.spiderloader import SpiderLoader
from crawlfw.utils.deprecate import create_deprecated_class

__all__ = ["SpiderManager"]

warnings.warn("Module `crawlfw.spidermanager` is deprecated, use `crawlfw.spiderloader` instead",
              CrawlfwDeprecationWarning, stacklevel=2)

SpiderManager = create_deprecated_class("SpiderManager", SpiderLoader,
                                        new_class_path="crawlfw.spiderloader.SpiderLoader")
