"""Deprecated: use the ``crawler.settings`` attribute (Scrapy 1.2's deprecated
``scrapy.conf``).

Importing this module warns (``CrawlfwDeprecationWarning``). Outside the ``crawlfw``
command it offers ``settings``, the project's settings
(:func:`crawlfw.utils.project.get_project_settings`), as Scrapy 1.2 does.
"""

import sys
import warnings

from crawlfw.exceptions import CrawlfwDeprecationWarning

if "crawlfw.cmdline" not in sys.modules:
    from crawlfw.utils.project import get_project_settings

    settings = get_project_settings()

warnings.warn("Module `crawlfw.conf` is deprecated, use `crawler.settings` attribute instead",
              CrawlfwDeprecationWarning, stacklevel=2)
