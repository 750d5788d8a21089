"""``python -m crawlfw``: the ``crawlfw`` command line (as ``python -m scrapy`` is
Scrapy's), e.g. ``python -m crawlfw runspider spider.py -o items.jl``."""

from crawlfw.cmdline import execute

if __name__ == "__main__":
    execute()
