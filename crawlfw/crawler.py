"""Crawler, CrawlerRunner and CrawlerProcess: the public facade that boots the actor tree.

``Crawler`` holds what one crawl shares (settings, signals, stats, log formatter,
extensions, the spider); ``crawler.engine`` is an :class:`EngineFacade` that messages the
live EngineActor. ``CrawlerRunner`` owns a :class:`crawlfw.actors.supervisor.Supervisor`
and starts crawls through it; ``CrawlerProcess`` adds logging setup, signal handling
(^C once: graceful stop; twice: forced) and a blocking ``start()``.

Scrapy 2's names: ``CrawlerProcessBase`` is the base of ``CrawlerProcess`` and
``AsyncCrawlerProcess``; ``AsyncCrawlerRunner`` and ``AsyncCrawlerProcess`` give Scrapy
2.13's coroutine API (``crawl()`` returns an :class:`asyncio.Task`, ``stop()`` and
``join()`` are coroutines) over the same actors. There is no Twisted reactor: the tasks
run on an asyncio event loop (the caller's, or one ``AsyncCrawlerProcess`` makes).
"""

import abc
import logging
import os
import signal
import sys
import threading
import time
import warnings

import pykka

from crawlfw import signals
from crawlfw._crawler_components import CrawlerComponents, CrawlerLogCounter
from crawlfw._shutdown_signals import ShutdownSignals
from crawlfw.actors._facade import EngineFacade
from crawlfw.actors.supervisor import Supervisor
from crawlfw.control import open_endpoint
from crawlfw.core.flow._reasons import FAILURE_REASONS, is_failure_reason
from crawlfw.dashboard import open_dashboard
from crawlfw.exceptions import (
    CrawlfwDeprecationWarning,
    CrawlStartError,
)
from crawlfw.progress import open_progress
from crawlfw.settings import Settings
from crawlfw.settings._components import check_components
from crawlfw.settings._noeffect import warn_settings_without_effect
from crawlfw.settings._spelling import warn_misspelled_settings
from crawlfw.settings._validation import check_settings
from crawlfw.signalmanager import SignalManager
from crawlfw.utils.log import configure_logging, log_crawlfw_info
from crawlfw.utils.misc import load_object

logger = logging.getLogger(__name__)

__all__ = ["Crawler", "CrawlerRunnerBase", "CrawlerRunner", "CrawlerProcess", "CrawlerProcessBase",
           "AsyncCrawlerRunner", "AsyncCrawlerProcess", "EngineFacade", "FAILURE_REASONS",
           "FORCED_SHUTDOWN_TIMEOUT_S", "is_failure_reason"]


#: Seconds the outside waits for the Supervisor to answer a command.
ASK_TIMEOUT_S = 30.0

class Crawler(CrawlerComponents):
    """One crawl of one spider class.

    Feed export (``FEED_URI``) is done by an Exporter actor, not by the
    ``FeedExporter`` extension (``feeds_written_by_actor``); disabling that extension in
    ``EXTENSIONS`` still disables feed export.

    Settings, the two orders: a Crawler made directly has its settings frozen once made,
    as in Scrapy 1.2 (whose tests check ``crawler.settings.frozen`` right after
    ``Crawler()``); one made by a runner's :meth:`CrawlerRunner.create_crawler` keeps
    them open until its crawl applies them, as in Scrapy 2.19 (projects' tests build
    the spider with ``from_crawler`` on such a crawler, and it may set some). Either
    way :meth:`crawl` opens them while it creates the spider, whose ``from_crawler`` may
    change ``crawler.settings`` (``settings.set(..., priority="spider")``), then
    :meth:`_apply_settings` checks them again, makes the stats collector, the log
    formatter, the request fingerprinter and the extensions from the final settings and
    freezes them. Reading :attr:`stats`, :attr:`logformatter` or :attr:`extensions`
    before makes it then, as Scrapy 1.2's constructor did
    (:class:`crawlfw._crawler_components.CrawlerComponents`).

    Args:
        spidercls: a ``crawlfw.spiders.Spider`` subclass.
        settings: a ``Settings``, a dict, or None (defaults only).
        init_reactor: Scrapy 2's request to install ``TWISTED_REACTOR`` for this crawl;
            accepted and kept (``_init_reactor``), with no effect: crawlfw has no
            Twisted reactor (a ``TWISTED_REACTOR`` other than asyncio's is warned about
            as a setting without effect).

    Raises:
        ValueError: ``spidercls`` is a spider instance rather than a class.
        CrawlStartError: a boolean or numeric setting (``-s``, the project's settings,
            the spider's ``custom_settings``) has a value of the wrong type; the message
            names each such setting, what it expects and where it was set
            (:func:`crawlfw.settings._validation.check_settings`).
    """

    feeds_written_by_actor = True

    def __init__(self, spidercls, settings=None, init_reactor=False):
        self._init_reactor = init_reactor
        if isinstance(spidercls, type) is False:
            raise ValueError(
                f"The spidercls argument must be a class, not an object: {spidercls!r}"
            )
        if isinstance(settings, dict) or settings is None:
            settings = Settings(settings)
        self.spidercls = spidercls
        self.settings = settings.copy()
        self.spidercls.update_settings(self.settings)
        problems = check_settings(self.settings)
        if problems:
            raise CrawlStartError("; ".join(problems))
        warn_settings_without_effect(self.settings)
        warn_misspelled_settings(self.settings)
        self.signals = SignalManager(self)
        self._stats = None
        self._logformatter = None
        self._extensions = None
        #: log_count/<LEVEL> counted before the stats collector exists
        self._early_log_counts: dict[str, int] = {}
        handler = CrawlerLogCounter(self, level=self.settings.get("LOG_LEVEL"))
        self._log_counter = handler
        logging.root.addHandler(handler)
        # kept on the instance so it isn't garbage collected
        self.__remove_handler = lambda: logging.root.removeHandler(handler)
        self.signals.connect(self.__remove_handler, signals.engine_stopped)
        self.crawling = False
        self.spider = None
        self.engine = None
        self.finish_reason = None
        self._crawl_id = None
        self._finished = threading.Event()
        #: Set once the crawl is asked to stop (^C, stop()): a Redis frontier that cannot
        #: be reached then stops retrying (crawlfw.core.frontier.redis_link.RedisLink).
        self._stop_requested = threading.Event()
        #: True once _apply_settings made the parts the settings name
        self._settings_applied = False
        self.settings.freeze()  # Scrapy 1.2; a runner's create_crawler opens them again

    @property
    def spiders(self):
        warnings.warn("Crawler.spiders is deprecated, use CrawlerRunner.spider_loader",
                      category=CrawlfwDeprecationWarning, stacklevel=2)
        if not hasattr(self, "_spiders"):
            loader_cls = load_object(self.settings["SPIDER_LOADER_CLASS"])
            self._spiders = loader_cls.from_settings(self.settings.frozencopy())
        return self._spiders

    def crawl(self, *args, supervisor=None, **kwargs):
        """Create the spider (``*args``/``**kwargs`` go to it) and start the crawl.

        Args:
            supervisor: the Supervisor ``ActorRef`` to run under; a private one is started
                when None (and stopped when the crawl ends).

        Returns:
            self; call :meth:`wait` to block until the crawl ends.

        Raises:
            AssertionError: the crawler is already crawling.
            CrawlStartError: a setting or a component the settings name is refused
                (:meth:`_apply_settings`), a feed's storage cannot be opened; with
                ``FRONTIER_URL``, the Redis cannot be used (:func:`check_frontier`).
            Exception: whatever the spider's ``from_crawler`` raises. Whatever the
                error, the crawl is then finished with ``start_failed: <error>``
                (``engine_stopped`` sent), so :meth:`wait` and ``join()`` return.
        """
        assert not self.crawling, "Crawling already taking place"
        self.crawling = True
        try:
            # open while the spider is made: its from_crawler may set some (Scrapy 2.19)
            self.settings.frozen = False
            self.spider = self._create_spider(*args, **kwargs)
            self._apply_settings()
            if self.settings.get("FRONTIER_URL"):
                check_frontier(self)
            own = supervisor is None
            if own:
                supervisor = Supervisor.start(self.settings)
                self.signals.connect(lambda: supervisor.stop(block=False), signals.engine_stopped,
                                     weak=False)
            reply = supervisor.ask({"type": "start_crawl", "crawler": self}, timeout=ASK_TIMEOUT_S)
            if reply.get("type") == "message_rejected":
                raise ValueError(reply["error"])
            if reply.get("type") == "start_refused":
                raise CrawlStartError(reply["error"])
            self._crawl_id = reply["crawl_id"]
            if self.engine is None:  # normally set by the Supervisor before spider_opened
                self.engine = EngineFacade(self, reply["engine"])
        except Exception as e:
            self.crawling = False
            if not self._finished.is_set():
                # ended as a start the Supervisor refuses: join() and wait() return
                try:
                    self.signals.send_catch_log(signals.engine_stopped)
                finally:
                    self._crawl_finished(f"start_failed: {e}")
            raise
        return self

    def _apply_settings(self) -> None:
        """Make what the crawl reads from the settings and freeze them (Scrapy 2.19's
        ``Crawler._apply_settings``, which ``crawl()`` calls once the spider exists, so
        that its ``from_crawler`` may still change ``crawler.settings``).

        The setting values are checked again (a ``from_crawler`` may have set one), and
        every component ``EXTENSIONS``, ``DOWNLOADER_MIDDLEWARES``,
        ``SPIDER_MIDDLEWARES`` and ``ITEM_PIPELINES`` name is loaded
        (:func:`crawlfw.settings._components.check_components`); then the stats
        collector, log formatter, request fingerprinter and extensions not made yet are
        made, and the settings are frozen. Once the parts are made, a later call only
        checks the settings again and freezes them (``crawl()`` opens them while it makes
        the spider); it does nothing while they are frozen.

        Raises:
            CrawlStartError: a setting has a value of the wrong type (see the class), or
                a component cannot be loaded (a Scrapy plugin, a typo) or an extension
                built: the message names the setting, the component and the error.
                Nothing has started: no feed is written.
        """
        if self.settings.frozen and self._settings_applied:
            return
        problems = check_settings(self.settings) + check_components(self.settings)
        if problems:
            raise CrawlStartError("; ".join(problems))
        if not self._settings_applied:
            warn_settings_without_effect(self.settings)
            self._log_counter.setLevel(self.settings.get("LOG_LEVEL"))
            self.stats  # noqa: B018 (made now, from the final settings)
            self.logformatter  # noqa: B018
            self.request_fingerprinter  # noqa: B018
            self.extensions  # noqa: B018
            self._settings_applied = True
        self.settings.freeze()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until the crawl has finished; True if it did within ``timeout_s`` seconds."""
        return self._finished.wait(timeout_s)

    def stop(self, reason: str = "shutdown") -> None:
        """Ask the engine to close the spider (graceful: the feed is still stored)."""
        self._stop_requested.set()
        if self.crawling and self.engine is not None:
            self.engine.close_spider(self.spider, reason)

    @property
    def failed(self) -> bool:
        """True once the crawl has ended with a failure reason (:func:`is_failure_reason`
        of :attr:`finish_reason`); False while it runs or after a normal end."""
        return is_failure_reason(self.finish_reason)

    def _create_spider(self, *args, **kwargs):
        return self.spidercls.from_crawler(self, *args, **kwargs)

    def _crawl_finished(self, reason: str) -> None:
        """Called by the Supervisor (on its thread) once the spider is closed."""
        self.finish_reason = reason
        self.crawling = False
        self._finished.set()


class CrawlerRunnerBase(abc.ABC):
    """Scrapy 2.13's base of the crawler runners: the settings, the project's spider
    loader, the set of crawlers, :meth:`create_crawler`; a subclass implements
    :meth:`crawl`. crawlfw's :class:`CrawlerRunner` (and so every runner and process)
    is one.

    Args:
        settings: a ``Settings``, a dict, or None.
    """

    crawlers = property(lambda self: self._crawlers,
                        doc="Set of crawlers started by crawl() and managed by this class.")

    def __init__(self, settings=None):
        if isinstance(settings, dict) or settings is None:
            settings = Settings(settings)
        self.settings = settings
        self.spider_loader = _get_spider_loader(settings)
        self._crawlers = set()
        self.bootstrap_failed = False

    def create_crawler(self, crawler_or_spidercls):
        """Return a Crawler for a Crawler (itself), a Spider class, or a spider name
        (looked up with :attr:`spider_loader`).

        Raises:
            ValueError: a spider instance was given instead of its class.
            KeyError: no spider of that name.
        """
        from crawlfw.spiders import Spider

        if isinstance(crawler_or_spidercls, Spider):
            raise ValueError("The crawler_or_spidercls argument cannot be a spider object, "
                             "it must be a spider class (or a Crawler object)")
        if isinstance(crawler_or_spidercls, Crawler):
            return crawler_or_spidercls
        return self._create_crawler(crawler_or_spidercls)

    def _create_crawler(self, spidercls):
        if isinstance(spidercls, str):
            spidercls = self.spider_loader.load(spidercls)
        crawler = Crawler(spidercls, self.settings)
        # Scrapy 2.19's order: open until the crawl applies them (see Crawler)
        crawler.settings.frozen = False
        return crawler

    @abc.abstractmethod
    def crawl(self, crawler_or_spidercls, *args, **kwargs):
        """Start a crawl of a Crawler, a Spider class or a spider name."""
        raise NotImplementedError


class CrawlerRunner(CrawlerRunnerBase):
    """Run several crawlers under one Supervisor actor.

    Args:
        settings: a ``Settings``, a dict, or None.
    """

    def __init__(self, settings=None):
        self._supervisor = None
        super().__init__(settings)

    @property
    def bootstrap_failed(self) -> bool:
        """True once a crawl could not start (Scrapy 2's attribute, which ``crawl``
        commands turn into exit status 1): ``crawl()`` raised, or a crawl ended with a
        ``start_failed: ...`` reason."""
        return self._bootstrap_failed or any(
            str(getattr(c, "finish_reason", None) or "").startswith("start_failed")
            for c in self._crawlers)

    @bootstrap_failed.setter
    def bootstrap_failed(self, value: bool) -> None:
        self._bootstrap_failed = bool(value)

    @property
    def supervisor(self):
        """The Supervisor ``ActorRef`` (started on first use)."""
        if self._supervisor is None or not self._supervisor.is_alive():
            self._supervisor = Supervisor.start(self.settings)
        return self._supervisor

    def crawl(self, crawler_or_spidercls, *args, **kwargs):
        """Start a crawl of a Crawler, a Spider class, or a spider name from the project.

        Returns:
            the Crawler (call ``wait()`` on it, or :meth:`join` here).
        """
        try:  # (an extension that cannot be built fails in Crawler())
            crawler = self.create_crawler(crawler_or_spidercls)
        except CrawlStartError:
            self._bootstrap_failed = True
            raise
        self._crawlers.add(crawler)
        try:
            crawler.crawl(*args, supervisor=self.supervisor, **kwargs)
        except Exception:
            self._bootstrap_failed = True
            raise
        return crawler

    def stop(self, reason: str = "shutdown") -> None:
        """Gracefully close every running crawl (``stop_crawl`` to the Supervisor)."""
        for crawler in list(self._crawlers):  # (a Redis frontier's retries end now)
            crawler._stop_requested.set()
        if self._supervisor is None or not self._supervisor.is_alive():
            return
        try:
            self._supervisor.ask({"type": "stop_crawl", "crawl_id": None, "reason": reason},
                                 timeout=ASK_TIMEOUT_S)
        except (pykka.ActorDeadError, pykka.Timeout):
            for crawler in list(self._crawlers):
                crawler.stop(reason)

    def join(self, timeout_s: float | None = None) -> bool:
        """Wait until every crawl has finished, including crawls started meanwhile (from
        a ``spider_closed`` handler, say: Scrapy's ``join`` waits until no crawl is
        active); True if they did within ``timeout_s`` seconds (None: no limit)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            running = [c for c in list(self._crawlers) if not c._finished.is_set()]
            if not running:
                return True
            for crawler in running:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not crawler.wait(left):
                    return False

    def shutdown(self) -> None:
        """Stop the Supervisor (and with it any crawl still running) and sweep actors."""
        if self._supervisor is not None and self._supervisor.is_alive():
            self._supervisor.stop(block=True, timeout=ASK_TIMEOUT_S * 2)
        left = pykka.ActorRegistry.get_all()
        if left:
            logger.warning("Actors left running after shutdown: %s", left)
            pykka.ActorRegistry.stop_all(block=True, timeout=ASK_TIMEOUT_S)


#: Seconds the forced shutdown (a second SIGINT/SIGTERM) may take before the process is
#: ended with ``os._exit``, whatever the graceful stop is doing.
FORCED_SHUTDOWN_TIMEOUT_S = 3.0


class CrawlerProcessBase(CrawlerRunner):
    """A CrawlerRunner that sets up logging and waits for its crawls in ``start()``
    (Scrapy 2's base of ``CrawlerProcess`` and ``AsyncCrawlerProcess``).

    SIGINT/SIGTERM (^C) once: every crawl is stopped gracefully (``finish_reason``
    ``shutdown``: feeds stored, JOBDIR kept), including a crawl still starting when the
    signal came, which is stopped as soon as it runs. Twice: a forced, unclean
    shutdown: the actors are told to stop, the crawls are marked finished and
    :meth:`start` returns without waiting for the actors; if it has not returned after
    :data:`FORCED_SHUTDOWN_TIMEOUT_S` seconds (the main thread is stuck), the process is
    ended with ``os._exit(128 + signal number)`` (130 for SIGINT).

    The signal handlers only write the signal's number to a pipe, which a daemon thread
    reads (:class:`crawlfw._shutdown_signals.ShutdownSignals`). :meth:`shutdown` puts
    back the handlers of before and ends that thread (a program going on after
    :meth:`start` gets its ^C back); :meth:`start` called again installs them anew.

    Args:
        settings: a ``Settings``, a dict, or None.
        install_root_handler: configure the root logging handler from the settings
            (None: yes, as True).

    Attributes:
        forced_signal (int | None): the signal that forced the shutdown, else None;
            ``crawl``/``runspider`` then exit with ``128 + forced_signal``.
    """

    def __init__(self, settings=None, install_root_handler=True):
        if isinstance(settings, dict) or settings is None:
            settings = Settings(settings)
        if install_root_handler is None:  # AsyncCrawlerProcess's default
            install_root_handler = True
        # before the spider loader runs: its warnings (SPIDER_LOADER_WARN_ONLY) follow
        # the LOG_* settings
        configure_logging(settings, install_root_handler)
        super().__init__(settings)
        self._stop_signalled = False
        self.forced_signal = None
        self._start_returned = threading.Event()
        self._signals = ShutdownSignals(self._graceful_shutdown, self._force_shutdown)
        self._signals.open()
        log_crawlfw_info(self.settings)
        self._endpoint = None  # crawlfw.control.ControlEndpoint, while start() runs
        self._progress = None  # crawlfw.progress.ProgressLine, while start() runs
        self._dashboard = None  # crawlfw.dashboard.InCrawlDashboard, while start() runs
        self._live_opened = False  # start() opened the live parts (and has not ended)

    @property
    def _forced(self) -> bool:
        return self.forced_signal is not None

    def crawl(self, crawler_or_spidercls, *args, **kwargs):
        """Start a crawl (see :meth:`CrawlerRunner.crawl`); one that starts after a
        SIGINT/SIGTERM already asked to stop is stopped at once."""
        crawl = super().crawl(crawler_or_spidercls, *args, **kwargs)
        if self._stop_signalled:
            CrawlerRunner.stop(self, "shutdown")
        elif self._live_opened and self._dashboard is None:
            # a crawl started while start() runs may ask for the dashboard itself
            # (its spider's custom_settings)
            self._dashboard = open_dashboard(self, self.settings, self._endpoint)
        return crawl

    def _graceful_shutdown(self, signum: int) -> None:
        self._stop_signalled = True
        logger.info("Received %(signame)s, shutting down gracefully. Send again to force ",
                    {"signame": signal.Signals(signum).name})
        try:
            CrawlerRunner.stop(self, "shutdown")  # (AsyncCrawlerProcess.stop is a coroutine)
        except Exception:
            logger.error("Error while stopping the crawls", exc_info=True)

    def _force_shutdown(self, signum: int) -> None:
        self.forced_signal = signum
        exit_status = 128 + signum
        logger.info("Received %(signame)s twice, forcing unclean shutdown",
                    {"signame": signal.Signals(signum).name})
        deadline = time.monotonic() + FORCED_SHUTDOWN_TIMEOUT_S
        try:
            pykka.ActorRegistry.stop_all(block=False)
            for crawler in list(self._crawlers):
                crawler._crawl_finished("shutdown")
        except Exception:
            logger.error("Error while forcing the shutdown", exc_info=True)
        time.sleep(max(0.0, deadline - time.monotonic()))
        if self._start_returned.is_set():
            return  # the program goes on after start() (the CLI then ends at once)
        # The main thread is stuck somewhere: end the process now.
        exit_now(exit_status)

    def start(self, stop_after_crawl: bool = True, install_signal_handlers: bool = True) -> None:
        """Block until every crawl started with ``crawl()`` has finished, then shut down.

        SIGINT/SIGTERM are handled while waiting (see the class docstring). The control
        endpoint (:mod:`crawlfw.control`) and the progress line (:mod:`crawlfw.progress`)
        run meanwhile, as the settings say.

        Args:
            stop_after_crawl: shut the Supervisor down once the crawls have finished.
            install_signal_handlers: False puts back the handlers SIGINT/SIGTERM had
                before this object was made (Scrapy 2's argument): ^C is then the
                program's business.
        """
        if not self._signals.is_open and threading.current_thread() is threading.main_thread():
            self._signals.open()  # started again after shutdown()
        if not install_signal_handlers:
            self._signals.restore_handlers()
        self._open_live_parts()
        try:
            self._wait_for_crawls()
        finally:
            try:
                if stop_after_crawl or self._forced:
                    self.shutdown()
            finally:
                self._start_returned.set()

    def _wait_for_crawls(self) -> None:
        while not CrawlerRunner.join(self, timeout_s=0.5):
            pass

    def _open_live_parts(self):
        # (control and progress are imported with this module, not here: an import
        # opens files, and a crawl already running may hold every descriptor now)
        if self._endpoint is None:
            self._endpoint = open_endpoint(self, self.settings)
        if self._progress is None:
            self._progress = open_progress(self, self.settings)
        if self._dashboard is None:
            # (each crawl's settings decide: its spider's custom_settings included)
            self._dashboard = open_dashboard(self, self.settings, self._endpoint)
        self._live_opened = True

    def shutdown(self) -> None:
        """Erase the progress line, stop the Supervisor (and any crawl still running;
        not after a forced shutdown, which does not wait for the actors: the process is
        about to end), then close the control endpoint (its socket is removed)."""
        self._live_opened = False
        progress, self._progress = self._progress, None
        if progress is not None:
            progress.stop()
        dashboard, self._dashboard = self._dashboard, None
        if dashboard is not None:
            dashboard.close()
        try:
            if not self._forced:
                super().shutdown()
        finally:
            endpoint, self._endpoint = self._endpoint, None
            if endpoint is not None:
                endpoint.close()
            recorder = getattr(self, "_dashboard_recorder", None)
            if recorder is not None:  # its errors handler off the root logger
                recorder.stop()
            # (after a forced shutdown the signals stay ignored: the process is ending)
            self._signals.close(restore=not self._forced)


class CrawlerProcess(CrawlerProcessBase):
    """Run crawls in this process and wait for them in ``start()`` (Scrapy 1.2's
    ``CrawlerProcess``); see :class:`CrawlerProcessBase`. ``crawl()`` returns the
    :class:`Crawler`.
    """


class AsyncCrawlerRunner(CrawlerRunner):
    """Scrapy 2.13's coroutine runner: ``crawl()`` returns an :class:`asyncio.Task` that
    completes when the crawl has finished (with the exception ``Crawler.crawl`` raised
    when it could not start: :attr:`bootstrap_failed` is then True); :meth:`stop` and
    :meth:`join` are coroutines.

    The crawl itself runs in crawlfw's actors, as with :class:`CrawlerRunner`; the task
    only waits for it, on the event loop running when ``crawl()`` is called, else on the
    calling thread's current loop (``asyncio.get_event_loop()``).

    Args:
        settings: a ``Settings``, a dict, or None.
    """

    def __init__(self, settings=None):
        super().__init__(settings)
        self._active = set()

    def crawl(self, crawler_or_spidercls, *args, **kwargs):
        """Start a crawl of a Crawler, a Spider class or a spider name (``*args`` and
        ``**kwargs`` go to the spider).

        Returns:
            an :class:`asyncio.Task` completing (None) when the crawl has finished.

        Raises:
            ValueError: a spider instance was given instead of its class.
        """
        import asyncio

        from crawlfw.spiders import Spider

        if isinstance(crawler_or_spidercls, Spider):
            raise ValueError("The crawler_or_spidercls argument cannot be a spider object, "
                             "it must be a spider class (or a Crawler object)")
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = self._loop_elsewhere() or asyncio.get_event_loop()
            if loop.is_closed():  # an AsyncCrawlerProcess that was shut down left it
                loop = asyncio.new_event_loop()
                asyncio.set_event_loop(loop)
        try:
            crawler = super().crawl(crawler_or_spidercls, *args, **kwargs)
        except Exception as e:
            error = e
            crawler = None
        else:
            error = None
        if isinstance(error, CrawlStartError):
            logger.error("Crawl could not start: %s", error)
        if loop is self._loop_elsewhere():  # called on a crawl's thread (a signal handler)
            return asyncio.run_coroutine_threadsafe(
                self._task_of(crawler, error), loop).result()
        self._tasks_loop = loop
        return self._track(loop.create_task(self._wait_for(crawler, error)), error)

    def _track(self, task, error):
        self._active.add(task)
        task.add_done_callback(self._active.discard)
        if isinstance(error, CrawlStartError):
            # refused on purpose: logged in one line, no "exception never retrieved"
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
        return task

    def _loop_elsewhere(self):
        """The running event loop earlier tasks were made on, when it runs on another
        thread than this one (a ``spider_closed`` handler runs on a crawl's thread: a
        crawl it chains is waited for on the loop ``join()`` runs on), else None."""
        loop = getattr(self, "_tasks_loop", None)
        if loop is None or not loop.is_running() or loop.is_closed():
            return None
        import asyncio

        try:
            return None if asyncio.get_running_loop() is loop else loop
        except RuntimeError:
            return loop

    async def _task_of(self, crawler, error):
        import asyncio

        return self._track(asyncio.ensure_future(self._wait_for(crawler, error)), error)

    @staticmethod
    async def _wait_for(crawler, error):
        if error is not None:
            raise error
        import asyncio

        await asyncio.get_running_loop().run_in_executor(None, crawler.wait)

    async def stop(self) -> None:
        """Gracefully close every running crawl and wait until they have finished."""
        import asyncio

        await asyncio.get_running_loop().run_in_executor(None, CrawlerRunner.stop, self)
        await self.join()

    async def join(self) -> None:
        """Complete when every crawl started with ``crawl()`` has finished."""
        import asyncio

        while self._active:
            await asyncio.wait(set(self._active))


class AsyncCrawlerProcess(CrawlerProcessBase, AsyncCrawlerRunner):
    """Scrapy 2.13's ``AsyncCrawlerProcess`` (the one Scrapy 2.19's command line uses):
    an :class:`AsyncCrawlerRunner` with the logging setup, ^C handling and live parts of
    :class:`CrawlerProcessBase`. It makes an asyncio event loop (set as the current
    loop) for the tasks ``crawl()`` returns; :meth:`start` runs it until every crawl
    has finished.

    Args:
        settings: a ``Settings``, a dict, or None.
        install_root_handler: configure the root logging handler (None: yes).
    """

    def __init__(self, settings=None, install_root_handler=None):
        import asyncio

        super().__init__(settings, install_root_handler)
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)

    def _wait_for_crawls(self) -> None:
        # The tasks crawl() returned run on this loop; the Supervisor's crawls too (a
        # crawl started from inside a task is waited for as well). Under another loop
        # running on this thread (a project's test run inside one) this one cannot run:
        # the crawls themselves are waited for.
        import asyncio

        if asyncio._get_running_loop() is None:
            self._loop.run_until_complete(self.join())
        CrawlerProcessBase._wait_for_crawls(self)

    def shutdown(self) -> None:
        """As :meth:`CrawlerProcessBase.shutdown`, then close the event loop."""
        import asyncio

        try:
            super().shutdown()
        finally:
            if not self._loop.is_closed() and not self._loop.is_running():
                if asyncio._get_running_loop() is None:
                    self._loop.run_until_complete(self._loop.shutdown_default_executor())
                self._loop.close()


def check_frontier(crawler) -> None:
    """Before a crawl with ``FRONTIER_URL`` starts: check that the Redis can be used
    (:func:`crawlfw.core.frontier.redis_link.check_server`: the URL, a server that speaks
    Redis, the password, ``maxmemory-policy noeviction``), waiting up to
    ``FRONTIER_RETRY_TIMEOUT`` while it cannot be reached (a stop request ends the wait).

    Raises:
        CrawlStartError: the Redis cannot be used; the message is one line naming the
            URL (password hidden) and the cause. The crawl is then finished with
            ``start_failed: ...`` (``engine_stopped`` fired), as a start the Supervisor
            refuses.
    """
    from crawlfw.core.frontier.frontier import FrontierError
    from crawlfw.core.frontier.redis_link import check_server, redis_link

    try:
        check_server(crawler.settings["FRONTIER_URL"],
                     crawler.settings.getfloat("FRONTIER_RETRY_TIMEOUT", 300.0),
                     link=redis_link(crawler), spider=crawler.spider)
    except FrontierError as e:
        error = f"shared frontier: {e}"
        # Ended as a start the Supervisor refuses: join() and wait() return.
        try:
            crawler.signals.send_catch_log(signals.engine_stopped)
        finally:
            crawler._crawl_finished(f"start_failed: {error}")
        raise CrawlStartError(error) from None


def exit_now(status: int) -> None:
    """Flush standard output and error, then end the process at once with ``status``
    (``os._exit``: no cleanup, no waiting for threads). Used after a forced shutdown."""
    for stream in (sys.stderr, sys.stdout):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(status)


def _get_spider_loader(settings):
    """Get a SpiderLoader instance from settings (``SPIDER_LOADER_CLASS``)."""
    cls_path = settings.get("SPIDER_LOADER_CLASS", "crawlfw.spiderloader.SpiderLoader")
    loader_cls = load_object(cls_path)
    return loader_cls.from_settings(settings.frozencopy())
