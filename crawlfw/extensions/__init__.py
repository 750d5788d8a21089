"""Built-in extensions (Scrapy 1.2's ``scrapy.extensions``), one per module.

Enabled through the ``EXTENSIONS`` / ``EXTENSIONS_BASE`` settings and built by
:class:`crawlfw.extension.ExtensionManager`. Each connects its handlers to
``crawler.signals`` in ``from_crawler``; handlers run on the thread of the actor
sending the signal, so extensions that keep counters lock them, and periodic work
runs on a daemon timer thread that stops when the spider closes.
"""
