"""The parts of a :class:`crawlfw.crawler.Crawler` made from its settings when the crawl
starts (Scrapy 2.19's ``Crawler._apply_settings``): the stats collector, the log
formatter and the extensions, each made on first use and assignable; and Scrapy 2's
other members of a Crawler (``crawl_async``/``stop_async``, ``request_fingerprinter``,
``get_extension``, ``get_downloader_middleware``...). :class:`CrawlerComponents` is a
base of ``Crawler``; it reads ``self.settings`` and keeps the parts in ``self._stats``,
``self._logformatter`` and ``self._extensions`` (None until made).
:class:`CrawlerLogCounter` counts the log records before the stats collector exists.
"""

from crawlfw.extension import ExtensionManager
from crawlfw.middleware import component_start_error
from crawlfw.utils._hooks import contain_log_formatter, contain_stats_collector
from crawlfw.utils.log import LogCounterHandler
from crawlfw.utils.misc import load_object

__all__ = ["CrawlerComponents", "CrawlerLogCounter"]


class CrawlerComponents:
    """The settings-made parts of a Crawler and its Scrapy 2 members (see the module
    docstring)."""

    _stats = None
    _logformatter = None
    _extensions = None
    _early_log_counts: dict

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
        :attr:`stats` is.

        Raises:
            CrawlStartError: an extension cannot be loaded or built (``"EXTENSIONS:
                cannot build '<path>': <ExcType>: <message>"``, its traceback logged at
                DEBUG: :func:`crawlfw.middleware.component_start_error`).
        """
        if self._extensions is None:
            try:
                self._extensions = ExtensionManager.from_crawler(self)
            except Exception as e:  # an extension that cannot be loaded or built: one line
                error = component_start_error(e)
                if error is None:
                    raise
                raise error from e
        return self._extensions

    @extensions.setter
    def extensions(self, value) -> None:
        self._extensions = value

    # --- Scrapy 2's members ---------------------------------------------------------------

    async def crawl_async(self, *args, **kwargs) -> None:
        """Scrapy 2.14's coroutine form of :meth:`crawl`: create the spider (``*args``
        and ``**kwargs`` go to it), start the crawl under a Supervisor of its own, and
        complete when the crawl has finished. Call it once per Crawler.

        The crawl runs in crawlfw's actors; the coroutine only waits for it (in the
        event loop's default executor, so the loop goes on meanwhile).

        Raises:
            RuntimeError: the crawler is crawling, or was started before.
            CrawlStartError: as :meth:`crawl`.
        """
        import asyncio

        if self.crawling:
            raise RuntimeError("Crawling already taking place")
        if self._crawl_id is not None or self._finished.is_set():
            raise RuntimeError(
                "Cannot run Crawler.crawl_async() more than once on the same instance.")
        self.crawl(*args, **kwargs)
        await asyncio.get_running_loop().run_in_executor(None, self.wait)

    async def stop_async(self) -> None:
        """Scrapy 2.14's coroutine form of :meth:`stop`: start a graceful stop of the
        crawl (``finish_reason`` ``shutdown``) and complete when it has finished; at once
        when it is not crawling."""
        import asyncio

        if not self.crawling:
            return
        self.stop()
        await asyncio.get_running_loop().run_in_executor(None, self.wait)

    @property
    def request_fingerprinter(self):
        """The crawl's request fingerprinter (Scrapy 2.7+): an instance of
        ``REQUEST_FINGERPRINTER_CLASS`` (default
        :class:`crawlfw.utils.request.RequestFingerprinter`, whose ``fingerprint(request)``
        gives Scrapy's 20-byte fingerprint), built with its ``from_crawler`` on first use
        and kept. A ``scrapy.`` path is read as the ``crawlfw.`` one. For components of
        one's own: crawlfw's duplicate filter and frontiers fingerprint requests with
        :func:`crawlfw.utils.request.request_fingerprint` whatever the setting says.

        Raises:
            ImportError, NameError: ``REQUEST_FINGERPRINTER_CLASS`` cannot be loaded.
        """
        fingerprinter = self.__dict__.get("_request_fingerprinter")
        if fingerprinter is None:
            from crawlfw.utils.misc import build_from_crawler

            path = self.settings.get("REQUEST_FINGERPRINTER_CLASS") or \
                "crawlfw.utils.request.RequestFingerprinter"
            if isinstance(path, str) and path.startswith("scrapy."):
                path = "crawlfw" + path[len("scrapy"):]
            fingerprinter = build_from_crawler(load_object(path), self)
            fingerprinter = self.__dict__.setdefault("_request_fingerprinter", fingerprinter)
        return fingerprinter

    @request_fingerprinter.setter
    def request_fingerprinter(self, value) -> None:
        self.__dict__["_request_fingerprinter"] = value

    def get_addon(self, cls):
        """Scrapy 2.12: the running add-on of class ``cls`` (or a subclass), or None.

        crawlfw loads no Scrapy add-ons (``ADDONS`` has no effect), so there is none:
        always None.
        """
        return None

    def get_downloader_middleware(self, cls):
        """Scrapy 2.12: the running downloader middleware of class ``cls`` (or a
        subclass), the first in ``DOWNLOADER_MIDDLEWARES`` order, or None.

        Raises:
            RuntimeError: the crawl engine has not been created yet (before
                ``spider_opened``/``engine_started``), as in Scrapy.
        """
        return self._running_component(cls, "downloader middleware",
                                       "get_downloader_middleware")

    def get_extension(self, cls):
        """Scrapy 2.12: the extension of class ``cls`` (or a subclass) this crawler
        runs, or None.

        Raises:
            RuntimeError: the extension manager does not exist yet (it is made when the
                crawl starts, or when :attr:`extensions` is first read), as in Scrapy.
        """
        extensions = self._extensions
        if extensions is None:
            raise RuntimeError("Crawler.get_extension() can only be called after the "
                               "extension manager has been created.")
        return _first_instance(cls, extensions.middlewares)

    def get_item_pipeline(self, cls):
        """Scrapy 2.12: the running item pipeline of class ``cls`` (or a subclass),
        the first in ``ITEM_PIPELINES`` order, or None.

        Raises:
            RuntimeError: the crawl engine has not been created yet.
        """
        return self._running_component(cls, "item pipeline", "get_item_pipeline")

    def get_spider_middleware(self, cls):
        """Scrapy 2.12: the running spider middleware of class ``cls`` (or a
        subclass), the first in ``SPIDER_MIDDLEWARES`` order, or None.

        Raises:
            RuntimeError: the crawl engine has not been created yet.
        """
        return self._running_component(cls, "spider middleware", "get_spider_middleware")

    def _running_component(self, cls, kind: str, method: str):
        """The first component of class ``cls`` of the manager of ``kind`` (its
        ``component_name``) the crawl's actors built for this crawler (each manager
        records itself on its crawler: :func:`crawlfw.middleware.managers_of`)."""
        from crawlfw.middleware import managers_of

        if self.engine is None:
            raise RuntimeError(f"Crawler.{method}() can only be called after the crawl "
                               "engine has been created.")
        manager = managers_of(self).get(kind)
        return None if manager is None else _first_instance(cls, manager.middlewares)


def _first_instance(cls, components):
    for component in components:
        if isinstance(component, cls):
            return component
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
