"""Scrapy 1.2 settings that crawlfw keeps (so projects load) but that change nothing,
and the one-line warning a user gets for setting one.

The runtime has no Twisted download handlers, no pluggable downloader class and a
single-threaded item pipeline actor, so these settings cannot act; each entry says why
and what does the job instead. ``DOWNLOAD_HANDLERS`` entries set to None *do* work
(they disable their scheme: see :func:`crawlfw.core.transport.curl_options.driver_options`); other
handler classes do not.
"""

import logging

__all__ = ["SETTINGS_WITHOUT_EFFECT", "warn_settings_without_effect"]

logger = logging.getLogger(__name__)

#: Setting name -> why it has no effect in crawlfw.
SETTINGS_WITHOUT_EFFECT = {
    "CONCURRENT_ITEMS": "the item pipeline actor processes items one at a time, in order",
    "DOWNLOADER": "downloads are made by crawlfw.actors.downloader.DownloaderActor, a "
                  "pool of DOWNLOADER_ACTORS actors serving every download slot",
    "DOWNLOADER_IDLE_TIMEOUT": "the downloaders are a fixed pool (DOWNLOADER_ACTORS) and "
                               "an idle download slot is evicted once its delay has passed",
    "DOWNLOAD_HANDLERS": "every scheme is fetched by libcurl (crawlfw.core.transport.curl); only "
                         "None, which disables a scheme, is honoured",
    "MEMDEBUG_NOTIFY": "no memory debugging report is mailed (Scrapy 1.2 did not send one "
                       "either); the figures are in the stats (memdebug/...)",
}

_CURL_HANDLER = "crawlfw.core.transport.curl.MultiDriver"
_warned = set()  # setting names warned about in this process


def _user_set(settings, name) -> bool:
    if name == "DOWNLOAD_HANDLERS":
        handlers = settings.getwithbase("DOWNLOAD_HANDLERS")
        return any(value is not None and value != _CURL_HANDLER
                   for value in dict(handlers).values())
    priority = settings.getpriority(name)
    return priority is not None and priority > 0  # above 'default'


def warn_settings_without_effect(settings) -> list:
    """Log one WARNING line per setting of :data:`SETTINGS_WITHOUT_EFFECT` that the user
    set (above the defaults' priority: project, spider, command line), once per setting
    and process.

    Args:
        settings: a :class:`~crawlfw.settings.Settings`.

    Returns:
        list[str]: the names warned about by this call.
    """
    warned = []
    for name, reason in SETTINGS_WITHOUT_EFFECT.items():
        if name in _warned or not _user_set(settings, name):
            continue
        _warned.add(name)
        warned.append(name)
        logger.warning("Setting %s has no effect in crawlfw: %s", name, reason)
    return warned
