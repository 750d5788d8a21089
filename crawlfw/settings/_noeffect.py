"""Scrapy 1.2 settings that crawlfw keeps (so projects load) but that change nothing,
and the one-line warning a user gets for setting one.

The runtime has no Twisted download handlers, no pluggable downloader class and a
single-threaded item pipeline actor, so these settings cannot act; each entry says why
and what does the job instead. ``DOWNLOAD_HANDLERS`` entries set to None *do* work
(they disable their scheme: see :func:`crawlfw.core.transport.curl_options.driver_options`); other
handler classes do not: each one named gets its own WARNING line naming it, the schemes
it was meant for, and what crawlfw does instead (:data:`KNOWN_DOWNLOAD_HANDLERS` knows
the common Scrapy plugins: scrapy-playwright, scrapy-zyte-api, scrapy-impersonate, and
Scrapy's own handlers, HTTP/2's among them), never a traceback.
"""

import logging

__all__ = ["KNOWN_DOWNLOAD_HANDLERS", "SETTINGS_WITHOUT_EFFECT", "download_handler_warnings",
           "warn_settings_without_effect"]

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

#: ``(how a handler's import path begins or ends, what it is, how crawlfw fetches those
#: schemes instead)``, the first match wins. A path matching none is "a Scrapy download
#: handler", whose schemes libcurl fetches.
KNOWN_DOWNLOAD_HANDLERS = (
    ("scrapy_playwright.", "scrapy-playwright: pages rendered in a Playwright browser",
     "with libcurl, without a browser: JavaScript is not run and meta['playwright'] "
     "is ignored"),
    ("scrapy_zyte_api.", "scrapy-zyte-api: requests sent through Zyte API",
     "with libcurl, directly, not through Zyte API: meta['zyte_api'] and "
     "meta['zyte_api_automap'] are ignored"),
    ("scrapy_impersonate.", "scrapy-impersonate: browser TLS fingerprints through "
     "curl_cffi", "with libcurl and its own TLS fingerprint: meta['impersonate'] is "
     "ignored"),
    (".http2.H2DownloadHandler", "Scrapy's HTTP/2 download handler",
     "with libcurl over HTTP/1.1 (crawlfw does not speak HTTP/2; servers offering it "
     "answer HTTP/1.1 too)"),
    ("scrapy.core.downloader.handlers.", "one of Scrapy's own download handlers",
     "with libcurl, which does the same job"),
    ("crawlfw.core.downloader.handlers.", "one of Scrapy's own download handlers",
     "with libcurl, which does the same job"),
)

_CURL_HANDLER = "crawlfw.core.transport.curl.MultiDriver"
_warned = set()  # setting names (and "DOWNLOAD_HANDLERS:<path>") warned about


def _handler_path(value) -> str:
    if isinstance(value, str):
        return value
    return f"{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', value)}"


def _describe_handler(path):
    for pattern, what, instead in KNOWN_DOWNLOAD_HANDLERS:
        if (path.startswith(pattern) if not pattern.startswith(".")
                else path.endswith(pattern)):
            return what, instead
    return "a Scrapy download handler", "with libcurl, as every scheme"


def download_handler_warnings(settings) -> dict:
    """The WARNING line for each download handler class ``DOWNLOAD_HANDLERS`` names
    (None and crawlfw's own curl driver are not warned about).

    Args:
        settings: a :class:`~crawlfw.settings.Settings`.

    Returns:
        dict[str, str]: handler import path -> its one line: ``"DOWNLOAD_HANDLERS
        names <path> for <schemes> (<what it is>), which crawlfw cannot host (it has no
        Twisted download handlers): it fetches <scheme>:// requests <how>"`` (a scheme
        crawlfw has no downloader for: "<scheme>:// requests are refused ..."), in the
        order the handlers are first named.
    """
    schemes = {}
    for scheme, value in dict(settings.getwithbase("DOWNLOAD_HANDLERS")).items():
        if value is None or value == _CURL_HANDLER:
            continue
        schemes.setdefault(_handler_path(value), []).append(scheme)
    curl_schemes = set(dict(settings.get("DOWNLOAD_HANDLERS_BASE") or {}))
    lines = {}
    for path, names in schemes.items():
        what, instead = _describe_handler(path)
        fetched = [f"{name}://" for name in names if name in curl_schemes]
        refused = [f"{name}://" for name in names if name not in curl_schemes]
        does = []
        if fetched:
            does.append(f"it fetches {', '.join(fetched)} requests {instead}")
        if refused:
            does.append(f"{', '.join(refused)} requests are refused (crawlfw has no "
                        f"downloader for that scheme)")
        lines[path] = (f"DOWNLOAD_HANDLERS names {path} for {', '.join(names)} ({what}), "
                       f"which crawlfw cannot host (it has no Twisted download handlers): "
                       f"{'; '.join(does)}")
    return lines


def _user_set(settings, name) -> bool:
    priority = settings.getpriority(name)
    return priority is not None and priority > 0  # above 'default'


def warn_settings_without_effect(settings) -> list:
    """Log one WARNING line per setting of :data:`SETTINGS_WITHOUT_EFFECT` that the user
    set (above the defaults' priority: project, spider, command line), once per setting
    and process; for ``DOWNLOAD_HANDLERS``, one line per handler class named
    (:func:`download_handler_warnings`), once per class and process.

    Args:
        settings: a :class:`~crawlfw.settings.Settings`.

    Returns:
        list[str]: the names warned about by this call.
    """
    warned = []
    for name, reason in SETTINGS_WITHOUT_EFFECT.items():
        if name == "DOWNLOAD_HANDLERS":
            for path, line in download_handler_warnings(settings).items():
                key = f"DOWNLOAD_HANDLERS:{path}"
                if key in _warned:
                    continue
                _warned.add(key)
                if name not in warned:
                    warned.append(name)
                logger.warning("%s", line)
            continue
        if name in _warned or not _user_set(settings, name):
            continue
        _warned.add(name)
        warned.append(name)
        logger.warning("Setting %s has no effect in crawlfw: %s", name, reason)
    return warned
