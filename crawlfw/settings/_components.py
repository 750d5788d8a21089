"""Every component the settings name is importable: checked once before a crawl starts.

A project ported from Scrapy may still name a Scrapy plugin in ``EXTENSIONS``,
``DOWNLOADER_MIDDLEWARES``, ``SPIDER_MIDDLEWARES`` or ``ITEM_PIPELINES`` (spidermon's
pipeline, scrapy-zyte-smartproxy's middleware...): it imports Scrapy or Twisted, which
crawlfw does not have, or is not installed at all. Found where the component is built
(in an actor, with the feeds already opened), the crawl would fail half-way with a
traceback; :func:`check_components` finds it first, so the crawl is refused in one line
(``crawlfw.exceptions.CrawlStartError``) naming the setting, the component and the error.
"""

from crawlfw.utils.conf import build_component_list
from crawlfw.utils.misc import load_object

__all__ = ["COMPONENT_SETTINGS", "check_components"]

#: The settings naming components by import path (each merged over its ``_BASE``).
COMPONENT_SETTINGS = ("EXTENSIONS", "DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES",
                      "ITEM_PIPELINES")

#: Top-level packages of Scrapy plugins (they import Scrapy), besides ``scrapy_*``.
_PLUGIN_PACKAGES = frozenset({"spidermon", "sh_scrapy", "scrapyd", "scrapyd_client",
                              "scrapy", "twisted"})


def _is_scrapy_plugin(path: str, error: BaseException) -> bool:
    top = path.split(".", 1)[0]
    if top.startswith("scrapy_") or top in _PLUGIN_PACKAGES:
        return True
    missing = getattr(error, "name", None) or ""
    return isinstance(error, ImportError) and missing.split(".", 1)[0] in ("scrapy",
                                                                           "twisted")


def check_components(settings) -> list[str]:
    """One message per component path of :data:`COMPONENT_SETTINGS` (enabled ones: a
    path mapped to None is not loaded) that cannot be loaded.

    Each message names the setting, the path and the error (its type and message), as
    :func:`crawlfw.middleware.component_error` names a component that fails to load
    where it is built (``"ITEM_PIPELINES: cannot load '<path>': <ExcType>: <message>"``);
    a Scrapy plugin (a ``scrapy_*``/``spidermon``... package, or one whose import of
    Scrapy or Twisted failed) is said to be one. Loading imports the component's module,
    as building it would a moment later.

    Args:
        settings: a :class:`~crawlfw.settings.Settings`.

    Returns:
        list[str]: the messages, in the settings' order; empty when every one loads.
    """
    problems = []
    for name in COMPONENT_SETTINGS:
        try:
            paths = build_component_list(settings.getwithbase(name))
        except ValueError as e:
            problems.append(f"{name}: {e}")
            continue
        for path in paths:
            if not isinstance(path, str):
                continue
            try:
                load_object(path)
            except Exception as e:  # noqa: BLE001 (reported in one line, not raised here)
                message = str(e)
                what = f"{type(e).__name__}: {message}" if message else type(e).__name__
                hint = (" (a Scrapy plugin, which crawlfw cannot load: remove it or map it "
                        "to None)" if _is_scrapy_plugin(path, e) else "")
                problems.append(f"{name}: cannot load {path!r}: {what}{hint}")
    return problems
