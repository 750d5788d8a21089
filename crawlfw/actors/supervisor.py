"""The Supervisor: owns the actor tree of every crawl, is the one actor the outside
(CLI, shell, ``CrawlerProcess``) talks to, notices a child's death and stops trees in order.

The design (the tree's picture, restart policies and intensity, what a restart keeps,
the stop order) is ARCHITECTURE.md's, "The actor tree" and "Supervision"; here is the
code. A crawl's tree is started by ``start_crawl`` from one table, :data:`CHILD_SPECS`
(in :mod:`crawlfw.actors._tree`, with :class:`CrawlTree`; both importable from here too):
an OTP-style :class:`~crawlfw.core.control._supervision.ChildSpec` per kind of child (id,
start function, restart policy, shutdown timeout), walked in order; the start functions
are plain named functions of the crawl's :class:`CrawlTree`, and ``CrawlTree.specs``
maps each child started, ``(role, key)``, to its entry. A ``permanent`` child that dies
is restarted behind its :class:`~crawlfw.actors._childref.ChildRef` after the backoff of
the crawl's :class:`~crawlfw.core.control._supervision.RestartIntensity` (a
``restart_child`` timer); a ``temporary`` one, or one past the intensity, closes the
crawl with ``<role>_failed``. Stopping a crawl's tree runs on a thread of its own
(``crawlfw-stop-<crawl id>``), each child with its spec's shutdown timeout, and ends with
``crawl_stopped``.
"""

import itertools
import logging
import threading
import time

import pykka

from crawlfw import signals
from crawlfw.actors import messages
from crawlfw.actors._base import CrawlActor
from crawlfw.actors._facade import EngineFacade
from crawlfw.actors._tree import (  # noqa: F401 (STOP_TIMEOUT_S: public here too)
    CHILD_SPECS,
    FEEDS_OPEN_BEFORE,
    STOP_TIMEOUT_S,
    CrawlTree,
    _timeout_of,
    _user_actor_classes,
    build_components,
    check_components,
)
from crawlfw.core import _faults
from crawlfw.core._fds import fit_concurrency
from crawlfw.core.control._supervision import PERMANENT
from crawlfw.core.flow._reasons import is_failure_reason
from crawlfw.core.frontier.frontier import FrontierError
from crawlfw.exceptions import CrawlStartError
from crawlfw.utils._hooks import contain_dupefilter
from crawlfw.utils.misc import load_object

logger = logging.getLogger(__name__)

__all__ = ["Supervisor", "CrawlTree"]


_ids = itertools.count(1)


class Supervisor(CrawlActor):
    """The root actor. Answers ``ask`` from the outside:

    - ``start_crawl {crawler}`` -> ``{"crawl_id": str, "engine": ActorRef}``
    - ``stop_crawl {crawl_id, reason}`` -> ``{"stopping": [crawl_id, ...]}``
    - ``crawl {crawl_id, request}``: forwarded to that crawl's engine
    - ``get_status {}`` -> ``{"crawls": {crawl_id: {...}}}``
    - ``pause_crawl``/``resume_crawl {crawl_id}``: forwarded to that crawl's engine ->
      ``command_accepted`` (or ``control_error`` for an unknown crawl)
    - ``schedule_request {crawl_id, url, callback, priority, dont_filter}``: a Request
      for the spider is built and forwarded as ``crawl`` -> ``command_accepted`` (or
      ``control_error`` naming the bad URL or callback)

    Every message it receives is checked against its schema unless
    ``MESSAGE_VALIDATION = 'off'`` (it is the boundary of the tree).
    """

    role = "supervisor"
    boundary = True

    def __init__(self, settings=None):
        super().__init__(settings=settings)
        self.crawls = {}

    def on_stop(self):
        trees = list(self.crawls.values())
        for tree in trees:
            self._shutdown(tree, tree.closing or "shutdown")
            for child in tree.restartable.values():
                if child.restarting:  # its actor_failed will not be handled now
                    child.give_up()
        for tree in trees:
            if tree.stopper is not None and tree.stopper is not threading.current_thread():
                tree.stopper.join()

    # --- commands from the outside ------------------------------------------------------

    def handle_start_crawl(self, message: messages.StartCrawl) -> messages.StartCrawlReply | messages.StartRefused:
        crawler = message["crawler"]
        crawl_id = f"{crawler.spider.name}-{next(_ids)}"
        tree = self.crawls[crawl_id] = CrawlTree(crawl_id, crawler, self.actor_ref)
        crawler._crawl_id = crawl_id
        try:
            self._start_tree(tree)
        except CrawlStartError as e:
            _discard_feeds(tree)  # a crawl that never started writes no feed
            if tree.scheduler is None:  # refused before the spider was opened
                self._refuse(tree, e)
                return {"type": "start_refused", "error": str(e)}
            self._shutdown(tree, f"start_failed: {e}", wait=True)
            return {"type": "start_refused", "error": str(e)}
        except Exception as e:
            logger.error("Could not start crawl %(id)s", {"id": crawl_id}, exc_info=True)
            _discard_feeds(tree)
            self._shutdown(tree, f"start_failed: {type(e).__name__}: {e}", wait=True)
            raise
        return {"crawl_id": crawl_id, "engine": tree.engine}

    def _refuse(self, tree, error):
        """Undo a start refused (:class:`CrawlStartError`) before ``spider_opened`` (the
        feeds it opened are discarded already: :func:`_discard_feeds`): stop any
        exporter already started, end the crawl with ``start_failed``; the caller
        reports ``error`` in one line."""
        self.crawls.pop(tree.crawl_id, None)
        tree.closing = reason = f"start_failed: {error}"
        try:
            for ref in tree.exporters:
                _stop(ref)
        finally:
            try:
                tree.crawler.signals.send_catch_log(signals.engine_stopped)
            finally:
                tree.crawler._crawl_finished(reason)

    def handle_stop_crawl(self, message: messages.StopCrawl) -> messages.StopCrawlReply:
        ids = [message["crawl_id"]] if message["crawl_id"] else list(self.crawls)
        stopping = []
        for crawl_id in ids:
            tree = self.crawls.get(crawl_id)
            if tree is None:
                continue
            stopping.append(crawl_id)
            stop_requested = getattr(tree.crawler, "_stop_requested", None)
            if stop_requested is not None:  # a Redis frontier's retries end now
                stop_requested.set()
            if tree.engine is not None and tree.engine.is_alive():
                self.send(tree.engine, {"type": "close_spider", "reason": message["reason"]})
            else:
                self._shutdown(tree, message["reason"])
        return {"stopping": stopping}

    def handle_crawl(self, message: messages.Crawl) -> None:
        tree = self.crawls.get(message["crawl_id"])
        if tree is None or tree.engine is None or tree.closing:
            logger.debug("crawl %(id)s is not running; %(request)s dropped",
                         {"id": message["crawl_id"], "request": message["request"]})
            return
        self.send(tree.engine, message)

    def handle_pause_crawl(self, message: messages.PauseCrawl) -> messages.CommandAccepted | messages.ControlError:
        return self._forward_control(message)

    def handle_resume_crawl(self, message: messages.ResumeCrawl) -> messages.CommandAccepted | messages.ControlError:
        return self._forward_control(message)

    def handle_schedule_request(self, message: messages.ScheduleRequest) -> messages.CommandAccepted | messages.ControlError:
        from crawlfw.http import Request

        tree = self._running_tree(message["crawl_id"])
        if tree is None:
            return _control_error(f"no running crawl {message['crawl_id']!r}")
        spider = tree.crawler.spider
        callback = None
        name = message["callback"]
        if name:
            callback = getattr(spider, name, None)
            if name.startswith("_") or not callable(callback):
                return _control_error(f"spider {spider.name!r} has no method {name!r} to use "
                                      "as callback")
        try:
            request = Request(message["url"], callback=callback, priority=message["priority"],
                              dont_filter=message["dont_filter"])
        except (ValueError, TypeError) as e:
            return _control_error(f"bad URL {message['url']!r}: {e}")
        self.send(tree.engine, {"type": "crawl", "crawl_id": tree.crawl_id, "request": request})
        return {"type": "command_accepted", "command": "schedule_request",
                "crawl_id": tree.crawl_id}

    def _running_tree(self, crawl_id):
        tree = self.crawls.get(crawl_id)
        if tree is None or tree.engine is None or tree.closing:
            return None
        return tree

    def _forward_control(self, message):
        tree = self._running_tree(message["crawl_id"])
        if tree is None:
            return _control_error(f"no running crawl {message['crawl_id']!r}")
        self.send(tree.engine, message)
        return {"type": "command_accepted", "command": message["type"],
                "crawl_id": tree.crawl_id}

    def handle_get_status(self, message: messages.GetStatus) -> messages.SupervisorStatus:
        crawls: dict[str, messages.CrawlTreeStatus] = {}
        for crawl_id, tree in self.crawls.items():
            crawls[crawl_id] = {
                "spider": tree.crawler.spider.name,
                "closing": tree.closing,
                "started_at": tree.started_at,
                "downloaders": [str(i) for i, ref in enumerate(
                    tree.downloaders.refs if tree.downloaders is not None else ())
                    if ref is not None],
                "stats": tree.crawler.stats.get_stats(),
            }
        return {"crawls": crawls}

    # --- events from children -----------------------------------------------------------

    def handle_spider_closing(self, message: messages.SpiderClosing) -> None:
        tree = self.crawls.get(message["crawl_id"])
        if tree is not None:
            self._shutdown(tree, message["reason"])

    def handle_actor_failed(self, message: messages.ActorFailed) -> None:
        tree = self.crawls.get(message["crawl_id"])
        role, key = message["role"], message["key"]
        logger.error(
            "Actor %(role)s%(key)s of crawl %(id)s failed: %(error)s",
            {"role": role, "key": f" ({key})" if key else "", "id": message["crawl_id"],
             "error": message["error"]},
        )
        if tree is not None and (role, key) in tree.restartable:
            self._restartable_failed(tree, role, key)
            return
        if tree is None or tree.closing:
            return
        spec = tree.spec_of(role, key)
        reason = f"{role}_failed"
        if spec is not None and spec.restart == PERMANENT:
            delay_s = tree.intensity.restart(time.monotonic())
            if delay_s is None:
                _log_exhausted(tree, role, key, reason)
                self._close(tree, reason)
                return
            _log_restarting(tree, role, key, delay_s)
            restart: messages.RestartChild = {"type": "restart_child", "crawl_id": tree.crawl_id,
                                              "role": role, "key": key}
            if delay_s <= 0:
                self.handle_restart_child(restart)
            else:
                self._restart_later(tree, restart, delay_s)
            return
        self._close(tree, reason)

    def _restartable_failed(self, tree, role, key):
        """A pipeline or exporter died (see :mod:`crawlfw.actors._childref`): restart it
        after a backoff if it handed its messages over and the intensity allows, at once
        if the crawl is closing (its messages, a ``stop`` among them, must be handled);
        else the crawl fails with ``<role>_failed``."""
        child = tree.restartable[(role, key)]
        reason = f"{role}_failed"
        if not child.restarting:  # it handed nothing over: it said why
            self._fail(tree, reason)
            return
        delay_s = tree.intensity.restart(time.monotonic())
        if delay_s is None:
            _log_exhausted(tree, role, key, reason)
            child.give_up()
            self._fail(tree, reason)
            return
        _log_restarting(tree, role, key, 0.0 if tree.closing else delay_s)
        if tree.closing or delay_s <= 0:
            self._restart(tree, role, key)
        else:
            tree.pending.add((role, key))
            self._restart_later(tree, {"type": "restart_child", "crawl_id": tree.crawl_id,
                                       "role": role, "key": key}, delay_s)

    def _restart(self, tree, role, key):
        """Start a replacement for the restartable child ``role``/``key`` and hand it
        what its ref kept (the replacement handles it first, in order)."""
        child = tree.restartable[(role, key)]
        if not child.restarting:
            return
        try:
            tree.spec_of(role, key).start(tree, key)  # the new actor attaches itself to child
        except Exception as e:
            logger.error("Could not restart %(role)s%(key)s of crawl %(id)s: %(error)s",
                         {"role": role, "key": f" ({key})" if key else "", "id": tree.crawl_id,
                          "error": f"{type(e).__name__}: {e}"}, exc_info=True)
            child.give_up()
            self._fail(tree, f"{role}_failed")

    def _fail(self, tree, reason):
        """Close the crawl with ``reason`` unless it is closing already (the stopping
        thread then reads the failed ChildRef and reports ``reason``)."""
        if not tree.closing:
            self._close(tree, reason)

    def handle_restart_child(self, message: messages.RestartChild) -> None:
        """Restart a permanent child after its backoff (told by a timer, or called)."""
        tree = self.crawls.get(message["crawl_id"])
        role, key = message["role"], message["key"]
        if tree is not None and (role, key) in tree.pending:
            tree.pending.discard((role, key))
            self._restart(tree, role, key)  # also while closing: its messages must be handled

    def _restart_later(self, tree, message, delay_s):
        ref = self.actor_ref

        def fire():
            tree.timers.discard(timer)
            try:
                ref.tell(message)
            except pykka.ActorDeadError:
                pass

        timer = threading.Timer(delay_s, fire)
        timer.daemon = True
        tree.timers.add(timer)
        timer.start()

    def _close(self, tree, reason):
        """Close the crawl with ``reason``: through the engine (which gives its in-flight
        requests back) while it lives, else stop the tree at once."""
        if tree.engine is not None and tree.engine.is_alive():
            self.send(tree.engine, {"type": "close_spider", "reason": reason})
        else:
            self._shutdown(tree, reason)

    # --- the tree -----------------------------------------------------------------------

    def _start_tree(self, tree):
        """Start one crawl: check what can be refused in one line (``ACTORS``, the
        download options, the frontier, the feeds, the components), prepare the plain
        parts the children need (the downloader pool, the scheduler and its frontier,
        the components, then the opened feeds: a component that cannot be built leaves
        every feed file as it was), then start the children from :data:`CHILD_SPECS`,
        in order, and open the spider.

        Raises:
            CrawlStartError: the start is refused (one line; nothing is left running).
        """
        from crawlfw.actors.downloader import DownloaderPool
        from crawlfw.actors.exporter import prepare_feeds
        from crawlfw.actors.scheduler import frontier_of
        from crawlfw.core.feeds.feed_settings import feeds_from_settings
        from crawlfw.core.transport.curl_options import driver_options

        crawler = tree.crawler
        spider = crawler.spider
        # refused before anything starts
        tree.user_actor_classes = dict(_user_actor_classes(crawler.settings))
        check_components(crawler.settings)  # a middleware that cannot be imported: one line
        try:
            driver_options(crawler.settings)  # DNS_TIMEOUT, the TLS method: one line
            pool = DownloaderPool(crawler.settings.getint("DOWNLOADER_ACTORS", 1),
                                  share_dns=crawler.settings.getbool("DNSCACHE_ENABLED", True),
                                  dns_cache_size=crawler.settings.getint("DNSCACHE_SIZE", 10000))
        except ValueError as e:
            raise CrawlStartError(str(e)) from None
        # File descriptors: the soft limit raised to the hard one; a concurrency that
        # does not fit is lowered (one WARNING).
        pool.concurrency = fit_concurrency(crawler.settings)
        # The frontier first: a JOBDIR job's metadata tells how to resume the feeds and
        # the start requests.
        try:  # a JOBDIR that is locked, damaged or inconsistent: refused in one line
            scheduler = load_object(crawler.settings["SCHEDULER"]).from_crawler(crawler)
        except FrontierError as e:
            raise CrawlStartError(str(e)) from e
        contain_dupefilter(getattr(scheduler, "df", None), crawler)  # user code: contained
        tree.core_scheduler = scheduler
        tree.frontier = frontier = frontier_of(scheduler)
        _faults.hit("supervisor.frontier_opened")  # crash tests: Redis dies now
        tree.durable = durable = bool(getattr(frontier, "durable", False))
        tree.job = job = frontier.meta if durable else {}
        try:
            feeds = dict(job.get("feeds", {}))
            writers = []
            if _feed_export_enabled(crawler.settings):  # one exporter per feed (FEEDS, FEED_URI)
                # every feed checked before any is opened (an overwrite feed is emptied)
                writers = prepare_feeds(crawler, feeds_from_settings(crawler.settings), feeds)
            # The components (user code) are built before any feed file is touched: one
            # whose constructor raises refuses the start, every feed file as it was.
            build_components(tree)
            tree.writers = {writer.name: writer for writer in writers}  # not opened yet
            if durable:  # a frontier that cannot write refuses the start before any actor
                # starts (the job's meta as it is; the Scheduler commits the new feeds'
                # starting points: start_checkpoints)
                frontier.commit({"feeds": feeds})
        except BaseException as e:
            _close_unstarted(scheduler)
            if isinstance(e, FrontierError):  # Redis gone, a disk error: refused in one line
                raise CrawlStartError(_frontier_start_error(frontier, e)) from None
            raise
        logger.info("Spider opened", extra={"spider": spider})
        tree.downloaders = pool
        try:
            for spec in CHILD_SPECS:
                if spec.id == FEEDS_OPEN_BEFORE:
                    # The item pipelines' open_spider and the ACTORS constructors have
                    # run: one that raised refused the start, every feed file as it was.
                    self._open_feeds(tree, writers, feeds)
                for role, key in spec.children_of(tree):
                    tree.specs[(role, key)] = spec
                    spec.start(tree, key)
        except BaseException:
            if tree.scheduler is None:  # else the Scheduler actor closes it when stopped
                _close_unstarted(scheduler)
            raise
        if durable:  # each feed's starting point is committed before any item comes
            self.send(tree.scheduler, {"type": "start_checkpoints",
                                       "spider_runner": tree.spider_runner, "feeds": feeds})
        # spider_opened handlers (CloseSpider's timeout...) may use crawler.engine at once.
        crawler.engine = EngineFacade(crawler, tree.engine, self.actor_ref, pool)
        crawler.stats.open_spider(spider)
        tree.spider_opened = True
        crawler.signals.send_catch_log(signals.spider_opened, spider=spider)
        crawler.signals.send_catch_log(signals.engine_started)
        self.send(tree.engine, {"type": "start_engine", "spider_runner": tree.spider_runner,
                                "pipeline": tree.pipeline})

    def _open_feeds(self, tree, writers, feeds) -> None:
        """Open the crawl's prepared feeds (``-O`` files are emptied now) and note each
        one's starting point in ``feeds`` (a durable job's Scheduler commits them:
        ``start_checkpoints``).

        Raises:
            CrawlStartError: a feed cannot be opened (the ones opened are discarded).
        """
        from crawlfw.actors.exporter import open_feeds

        if writers:
            open_feeds(tree.crawler, writers)
            for writer in writers:
                feeds[writer.key] = writer.checkpoint(fsync=False)

    def _shutdown(self, tree, reason, wait=False):
        """Stop one crawl's actors in order, then close the spider, on a thread of its own
        (``crawlfw-stop-<crawl id>``): a slow child of one crawl (a feed upload) stalls
        neither this actor nor another crawl. Once done, the thread tells this actor
        ``crawl_stopped``, which forgets the crawl.

        Args:
            tree: the crawl's :class:`CrawlTree`.
            reason: the ``finish_reason``.
            wait: block until the tree is stopped (a crawl that failed to start, whose
                caller expects it finished).
        """
        if tree.stopper is not None:
            return
        tree.closing = reason
        for timer in list(tree.timers):
            timer.cancel()
        for role, key in list(tree.pending):  # their messages (and stop) must be handled
            tree.pending.discard((role, key))
            self._restart(tree, role, key)
        tree.stopper = threading.Thread(target=self._stop_tree, args=(tree, reason),
                                        name=f"crawlfw-stop-{tree.crawl_id}", daemon=True)
        tree.stopper.start()
        if wait:
            tree.stopper.join()

    def handle_crawl_stopped(self, message: messages.CrawlStopped) -> None:
        self.crawls.pop(message["crawl_id"], None)

    def _stop_tree(self, tree, reason):
        """The stopping thread's work (see :meth:`_shutdown`). A feed that failed (its
        Exporter recorded it in ``tree.failed_feeds``) turns a normal ``reason``
        into ``feed_failed``."""
        crawler = tree.crawler
        spider = crawler.spider
        timeout_of = _timeout_of
        try:
            # User actors first: nothing they send can reach a stopped tree. The engine
            # stops before the scheduler: requests it drains from its inbox while
            # closing go back to a live scheduler, and requests the scheduler can no
            # longer hand to the stopped engine stay queued (SchedulerActor.on_undelivered).
            for role, ref in [*(("custom", r) for r in tree.user_actors.values()),
                              *(("downloader", r) for r in (
                                  tree.downloaders.all_refs() if tree.downloaders else ())),
                              ("spider_runner", tree.spider_runner), ("engine", tree.engine)]:
                _stop(ref, timeout_of(role))
            # Item-carrying actors get all the time they need by default (their specs'
            # timeout is None): the pipeline drains its inbox and closes the item
            # pipelines; exporters write and store their feed (storages have their own
            # network timeouts). The scheduler stops last: the spider runner's last
            # checkpoint passes the pipeline and the exporters and ends at the
            # scheduler, which commits it.
            _stop(tree.pipeline, timeout_of("pipeline"))
            for ref in tree.exporters:
                _stop(ref, timeout_of("exporter"))
            if tree.exporters:  # Scrapy 2's FeedExporter: every feed stored (or failed)
                crawler.signals.send_catch_log(signals.feed_exporter_closed)
            failed = [c.role for c in tree.restartable.values() if c.failed]
            if failed and not is_failure_reason(reason):  # it died while the tree stopped
                reason = tree.closing = f"{failed[0]}_failed"
            if tree.failed_feeds and not is_failure_reason(reason):
                reason = tree.closing = "feed_failed"  # a feed could not be written or stored
            _stop(tree.scheduler, timeout_of("scheduler"))
            if crawler.stats.get_value("frontier/error") and not is_failure_reason(reason):
                reason = tree.closing = "frontier_failed"  # its last commit failed
        finally:
            try:
                self.actor_ref.tell({"type": "crawl_stopped", "crawl_id": tree.crawl_id})
            except pykka.ActorDeadError:
                pass
            try:
                if tree.spider_opened:  # its handlers expect what spider_opened set up
                    crawler.signals.send_catch_log(signals.spider_closed, spider=spider,
                                                   reason=reason)
                note = _wrong_type_note(crawler.stats.get_stats(spider))
                crawler.stats.close_spider(spider, reason=reason)
                if note:
                    logger.warning("Spider closed (%(reason)s)%(note)s",
                                   {"reason": reason, "note": note}, extra={"spider": spider})
                else:
                    logger.info("Spider closed (%(reason)s)", {"reason": reason},
                                extra={"spider": spider})
                crawler.signals.send_catch_log(signals.engine_stopped)
            finally:
                crawler._crawl_finished(reason)


def _wrong_type_note(stats) -> str:
    """``""``, or, for a crawl that scraped no item while components returned results of
    the wrong type (``invalid_output/<Component>.<method>`` stats), the text that says
    so in its closing line: ``": no item scraped; results of the wrong type from
    AsyncPipeline.process_item (3)"``."""
    try:
        if stats.get("item_scraped_count"):
            return ""
        wrong = {k[len("invalid_output/"):]: v for k, v in stats.items()
                 if k.startswith("invalid_output/")}
    except Exception:  # a custom stats collector's own shape
        return ""
    if not wrong:
        return ""
    listed = ", ".join(f"{name} ({count})" for name, count in sorted(wrong.items()))
    return f": no item scraped; results of the wrong type from {listed}"


def _discard_feeds(tree: CrawlTree) -> None:
    """Discard the feeds a refused or failed start opened (a file one created is
    removed, one it appended to cut back:
    :meth:`crawlfw.core.feeds.feeds.FeedWriter.discard`): a crawl that never started
    leaves its feeds as they were, and writes no empty feed (their Exporters, if
    started, then store nothing: :attr:`FeedWriter.closed
    <crawlfw.core.feeds.feeds.FeedWriter.closed>`). Called on the Supervisor's thread
    before the spider is opened: no Exporter has touched its writer yet."""
    writers, tree.writers = list(tree.writers.values()), {}
    for writer in writers:
        try:
            writer.discard()
        except OSError:
            logger.error("Error discarding the feed %(name)s", {"name": writer.name},
                         exc_info=True)


def _close_unstarted(scheduler) -> None:
    """Close the scheduler of a crawl whose start failed; a frontier that cannot close
    (its Redis is gone too) is said in one WARNING: the start's own error is the one
    reported."""
    try:
        scheduler.close("start_failed")
    except (FrontierError, OSError) as e:
        logger.warning("The frontier of a crawl that failed to start did not close "
                       "cleanly: %(error)s", {"error": f"{type(e).__name__}: {e}"})


def _frontier_start_error(frontier, error: Exception) -> str:
    """The one-line reason of a start refused by its frontier: ``shared frontier: ...``
    for Redis (as :func:`crawlfw.core.scheduler._redis_frontier` words a refused
    claim), else the frontier's own message."""
    if getattr(frontier, "shared", False):
        return f"shared frontier: {error}"
    return str(error)


def _log_exhausted(tree, role, key, reason):
    intensity = tree.intensity
    logger.error(
        "Restart intensity of crawl %(id)s exhausted (%(n)d restarts within %(w)g s, "
        "SUPERVISOR_MAX_RESTARTS): %(role)s%(key)s failed again; closing the crawl "
        "(%(reason)s)",
        {"id": tree.crawl_id, "n": intensity.max_restarts, "w": intensity.window_s,
         "role": role, "key": f" ({key})" if key else "", "reason": reason},
        extra={"spider": tree.crawler.spider})


def _log_restarting(tree, role, key, delay_s):
    tree.crawler.stats.inc_value(f"supervisor/restarts/{role}")
    logger.info("Restarting %(role)s%(key)s of crawl %(id)s in %(delay).2f s "
                "(restart %(n)d of %(max)d within %(w)g s)",
                {"role": role, "key": f" ({key})" if key else "", "id": tree.crawl_id,
                 "delay": delay_s, "n": tree.intensity.recent,
                 "max": tree.intensity.max_restarts, "w": tree.intensity.window_s},
                extra={"spider": tree.crawler.spider})


def _control_error(error: str) -> messages.ControlError:
    return {"type": "control_error", "error": error}


def _feed_export_enabled(settings) -> bool:
    from crawlfw.utils.conf import build_component_list

    enabled = build_component_list(settings.getwithbase("EXTENSIONS"))
    return "crawlfw.extensions.feedexport.FeedExporter" in enabled


def _stop(ref, timeout_s=STOP_TIMEOUT_S):
    if ref is None:
        return
    try:
        ref.stop(block=True, timeout=timeout_s)
    except pykka.Timeout:
        logger.error("%s did not stop within %.0f s", ref, timeout_s)
    except pykka.ActorDeadError:
        pass
    except Exception:
        logger.error("Error while stopping %s", ref, exc_info=True)
