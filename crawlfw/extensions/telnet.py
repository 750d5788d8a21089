"""Scrapy's ``TelnetConsole`` extension path, for projects that name it.

crawlfw has no telnet console (it was Twisted conch's); ``crawlfw shell --attach``
opens a Python console on a running crawl instead. Projects name Scrapy's extension in
``EXTENSIONS`` or ``COMMANDS``-built settings, mostly to switch it off
(``{"crawlfw.extensions.telnet.TelnetConsole": None}``), so the path exists: mapped to
None it is left out as any component is; enabled, it disables itself as Scrapy's does
without a Twisted reactor.
"""

from crawlfw.exceptions import NotConfigured

__all__ = ["TelnetConsole", "update_telnet_vars"]

#: Scrapy's signal asking handlers for the telnet console's variables
#: (``telnet_vars``); never sent here, there is no console.
update_telnet_vars = object()


class TelnetConsole:
    """Always disabled: building it raises ``NotConfigured``.

    Args:
        crawler: the :class:`~crawlfw.crawler.Crawler`.

    Raises:
        NotConfigured: without a reason (not logged) when ``TELNETCONSOLE_ENABLED`` is
            False (crawlfw's default); else with one saying there is no telnet console
            and what to use (logged as a WARNING by the extension manager).
    """

    def __init__(self, crawler):
        if not crawler.settings.getbool("TELNETCONSOLE_ENABLED"):
            raise NotConfigured
        raise NotConfigured(
            "crawlfw has no telnet console: use `crawlfw shell --attach` on a running "
            "crawl. Set TELNETCONSOLE_ENABLED to False to remove this warning.")

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)
