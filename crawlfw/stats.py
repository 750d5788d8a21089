"""Obsolete (Scrapy 1.2's ``scrapy.stats``): importing it raises ``ImportError`` saying
what to use instead."""

raise ImportError("crawlfw.stats usage has become obsolete, use `crawler.stats` attribute instead")
