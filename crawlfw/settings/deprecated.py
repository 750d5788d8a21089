"""Settings Scrapy dropped, and a check that warns when a project still sets them
(Scrapy 1.2's ``scrapy.settings.deprecated``)."""

import warnings

from crawlfw.exceptions import CrawlfwDeprecationWarning

__all__ = ["DEPRECATED_SETTINGS", "check_deprecated_settings"]

#: ``(setting name, what to do instead)`` for settings Scrapy 1.2 no longer uses.
DEPRECATED_SETTINGS = [
    ("TRACK_REFS", "no longer needed (trackref is always enabled)"),
    ("RESPONSE_CLASSES", "no longer supported"),
    ("DEFAULT_RESPONSE_ENCODING", "no longer supported"),
    ("BOT_VERSION", "no longer used (user agent defaults to the framework's name)"),
    ("ENCODING_ALIASES", "no longer needed (encoding discovery uses w3lib now)"),
    ("STATS_ENABLED", "no longer supported (change STATS_CLASS instead)"),
    ("SQLITE_DB", "no longer supported"),
    ("SELECTORS_BACKEND", "no longer supported (selectors use lxml)"),
    ("AUTOTHROTTLE_MIN_DOWNLOAD_DELAY", "use DOWNLOAD_DELAY instead"),
    ("AUTOTHROTTLE_MAX_CONCURRENCY", "use CONCURRENT_REQUESTS_PER_DOMAIN instead"),
    ("REDIRECT_MAX_METAREFRESH_DELAY", "use METAREFRESH_MAXDELAY instead"),
    ("LOG_UNSERIALIZABLE_REQUESTS", "use SCHEDULER_DEBUG instead"),
]


def check_deprecated_settings(settings):
    """Warn (``CrawlfwDeprecationWarning``) once, listing every setting of
    :data:`DEPRECATED_SETTINGS` that ``settings`` sets (not None), with its advice.

    Args:
        settings: a ``Settings`` (or any mapping with ``[]`` returning None for unset).
    """
    deprecated = [(name, advice) for name, advice in DEPRECATED_SETTINGS
                  if settings[name] is not None]
    if deprecated:
        lines = "\n    ".join(f"{name}: {advice}" for name, advice in deprecated)
        warnings.warn(
            f"You are using the following settings which are deprecated or obsolete:\n    {lines}",
            CrawlfwDeprecationWarning, stacklevel=2,
        )
