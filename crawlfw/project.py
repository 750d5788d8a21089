"""Obsolete (Scrapy 1.2's ``scrapy.project``): importing it raises ``ImportError`` saying
what to use instead."""

raise ImportError("""crawlfw.project usage has become obsolete.

If you want to get the crawler from your extension, middleware or pipeline, implement
the `from_crawler` class method (or look up for extending components that have already
done it, such as spiders).

For example:

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)""")
