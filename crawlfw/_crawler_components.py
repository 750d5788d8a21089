"""The parts of a :class:`crawlfw.crawler.Crawler` made from its settings when the crawl
starts (Scrapy 2.19's ``Crawler._apply_settings``): the stats collector, the log
formatter, the extensions and the request fingerprinter, each made on first use and
assignable, and Scrapy 2.12's accessors of the running components
(``get_extension``, ``get_downloader_middleware``, ``get_spider_middleware``,
``get_item_pipeline``, ``get_addon``). :class:`CrawlerComponents` is a base of
``Crawler``; it reads ``self.settings`` and keeps the parts in ``self._stats``,
``self._logformatter``, ``self._extensions``, ``self._request_fingerprinter`` and
``self._managers``, which ``Crawler.__init__`` sets to None (``{}``).
"""

from crawlfw.extension import ExtensionManager
from crawlfw.utils._hooks import contain_log_formatter, contain_stats_collector
from crawlfw.utils.log import LogCounterHandler
from crawlfw.utils.misc import build_from_crawler, load_object

__all__ = ["CrawlerComponents", "CrawlerLogCounter"]


class CrawlerComponents:
    """The settings-made parts of a Crawler and the accessors of its running
    components (see the module docstring)."""

    _stats = None
    _logformatter = None
    _extensions = None
    _request_fingerprinter = None
    _early_log_counts: dict
    _managers: dict

    @property
    def stats(self):
        """The crawl's stats collector (``STATS_CLASS``). Made by :meth:`_apply_settings`
        when the crawl starts; read before, it is made then from the settings as they
        are (Scrapy 1.2 made it in the constructor). Assignable."""
        if self._stats is None:
            self._set_stats(load_object(self.settings["STATS_CLASS"])(self))
        return self._stats

    @stats.setter
    def stats(self, value) -> None:
        self._set_stats(value)

    def _set_stats(self, value) -> None:
        self._stats = contain_stats_collector(value) if value is not None else None
        if value is not None and self._early_log_counts:
            counts, self._early_log_counts = self._early_log_counts, {}
            for key, count in counts.items():
                value.inc_value(key, count)

    @property
    def logformatter(self):
        """The crawl's log formatter (``LOG_FORMATTER``), made as :attr:`stats` is."""
        if self._logformatter is None:
            lf_cls = load_object(self.settings["LOG_FORMATTER"])
            self._logformatter = contain_log_formatter(lf_cls.from_crawler(self), self)
        return self._logformatter

    @logformatter.setter
    def logformatter(self, value) -> None:
        self._logformatter = (contain_log_formatter(value, self) if value is not None
                              else None)

    @property
    def extensions(self):
        """The :class:`~crawlfw.extension.ExtensionManager` (``EXTENSIONS``), made as
        :attr:`stats` is."""
        if self._extensions is None:
            self._extensions = ExtensionManager.from_crawler(self)
        return self._extensions

    @extensions.setter
    def extensions(self, value) -> None:
        self._extensions = value

    @property
    def request_fingerprinter(self):
        """The request fingerprinter (``REQUEST_FINGERPRINTER_CLASS``, built with
        ``from_crawler``), made as :attr:`stats` is. Assignable."""
        if self._request_fingerprinter is None:
            self._request_fingerprinter = build_from_crawler(
                load_object(self.settings["REQUEST_FINGERPRINTER_CLASS"]), self)
        return self._request_fingerprinter

    @request_fingerprinter.setter
    def request_fingerprinter(self, value) -> None:
        self._request_fingerprinter = value

    def _register_component_manager(self, manager) -> None:
        """Called by :meth:`crawlfw.middleware.MiddlewareManager.from_settings` for each
        manager built with this crawler (downloader and spider middlewares, item
        pipelines, extensions)."""
        self._managers[manager.component_name] = manager

    def _get_component(self, cls, kind: str, what: str):
        manager = self._managers.get(kind)
        if manager is None:
            raise RuntimeError(f"Crawler.{what}() can only be called after the crawl "
                               "engine has been created.")
        return next((c for c in manager.middlewares if isinstance(c, cls)), None)

    def get_extension(self, cls):
        """The running instance of the extension class ``cls`` (or a subclass), or None
        (Scrapy 2.12).

        Raises:
            RuntimeError: the extensions are not made yet (they are when the crawl
                starts: call it from ``engine_started``/``spider_opened`` on).
        """
        if self._extensions is None:
            raise RuntimeError("Crawler.get_extension() can only be called after the "
                               "extension manager has been created.")
        return next((c for c in self._extensions.middlewares if isinstance(c, cls)), None)

    def get_downloader_middleware(self, cls):
        """The running instance of the downloader middleware class ``cls`` (or a
        subclass), or None (Scrapy 2.12).

        Raises:
            RuntimeError: the crawl engine is not made yet (call it from
                ``engine_started``/``spider_opened`` on).
        """
        return self._get_component(cls, "downloader middleware", "get_downloader_middleware")

    def get_spider_middleware(self, cls):
        """The running instance of the spider middleware class ``cls`` (or a subclass),
        or None (Scrapy 2.12).

        Raises:
            RuntimeError: the crawl engine is not made yet (see
                :meth:`get_downloader_middleware`).
        """
        return self._get_component(cls, "spider middleware", "get_spider_middleware")

    def get_item_pipeline(self, cls):
        """The running instance of the item pipeline class ``cls`` (or a subclass), or
        None (Scrapy 2.12).

        Raises:
            RuntimeError: the crawl engine is not made yet (see
                :meth:`get_downloader_middleware`).
        """
        return self._get_component(cls, "item pipeline", "get_item_pipeline")

    def get_addon(self, cls):
        """None: crawlfw loads no Scrapy add-ons (``ADDONS`` has no effect)."""
        return None


class CrawlerLogCounter(LogCounterHandler):
    """The crawler's :class:`LogCounterHandler`: a record logged before the stats
    collector exists is counted aside and added to it when it is made."""

    def emit(self, record):
        crawler = self.crawler
        key = f"log_count/{record.levelname}"
        if crawler._stats is None:
            crawler._early_log_counts[key] = crawler._early_log_counts.get(key, 0) + 1
        else:
            crawler._stats.inc_value(key)
