"""Scrapy 1.2's deprecated ``scrapy.contrib`` modules, as ``crawlfw.contrib.*`` aliases.

``import crawlfw.contrib.spiders`` warns (``CrawlfwDeprecationWarning``) and gives the
names of :mod:`crawlfw.spiders`; the table below lists every alias. Scrapy 1.0 moved
these modules; port code to the new paths. ``contrib.linkextractors.sgml`` and
``contrib.linkextractors.regex`` are not provided (Python 2 only in Scrapy 1.2).
"""

from crawlfw._moved import install_moved_modules

_MOVED = {
    "closespider": "extensions.closespider",
    "corestats": "extensions.corestats",
    "debug": "extensions.debug",
    "exporter": "exporters",
    "feedexport": "extensions.feedexport",
    "httpcache": "extensions.httpcache",
    "linkextractors": "linkextractors",
    "linkextractors.htmlparser": "linkextractors.htmlparser",
    "linkextractors.lxmlhtml": "linkextractors.lxmlhtml",
    "loader": "loader",
    "loader.common": "loader.common",
    "loader.processor": "loader.processors",
    "logstats": "extensions.logstats",
    "memdebug": "extensions.memdebug",
    "memusage": "extensions.memusage",
    "pipeline": "pipelines",
    "pipeline.files": "pipelines.files",
    "pipeline.images": "pipelines.images",
    "pipeline.media": "pipelines.media",
    "spiders": "spiders",
    "spiders.crawl": "spiders.crawl",
    "spiders.feed": "spiders.feed",
    "spiders.init": "spiders.init",
    "spiders.sitemap": "spiders.sitemap",
    "spiderstate": "extensions.spiderstate",
    "statsmailer": "extensions.statsmailer",
    "throttle": "extensions.throttle",
}
for _name in ("ajaxcrawl", "chunked", "cookies", "decompression", "defaultheaders",
              "downloadtimeout", "httpauth", "httpcache", "httpcompression", "httpproxy",
              "redirect", "retry", "robotstxt", "stats", "useragent"):
    _MOVED[f"downloadermiddleware.{_name}"] = f"downloadermiddlewares.{_name}"
for _name in ("depth", "httperror", "offsite", "referer", "urllength"):
    _MOVED[f"spidermiddleware.{_name}"] = f"spidermiddlewares.{_name}"

install_moved_modules(
    {f"{__name__}.{old}": (f"crawlfw.{new}", None) for old, new in _MOVED.items()},
    packages=[f"{__name__}.downloadermiddleware", f"{__name__}.spidermiddleware"],
)
