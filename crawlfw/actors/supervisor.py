"""The Supervisor: owns the actor tree of every crawl, is the one actor the outside
(CLI, shell, ``CrawlerProcess``) talks to, notices a child's death and stops trees in order.

Tree of one crawl (started by ``start_crawl``)::

    Supervisor
    ├── ExporterActor      (one per feed: FEEDS entries, FEED_URI)
    ├── SchedulerActor
    ├── EngineActor
    ├── DownloaderActor × DOWNLOADER_ACTORS (a fixed pool, each serving many download
    │                                        slots; the engine sends each request to
    │                                        the one serving its slot)
    ├── PipelineActor
    ├── SpiderRunnerActor
    └── UserActor × ACTORS entries (crawlfw.actors.UserActor)

Shutdown order (``spider_closing`` from the engine, or a fatal child failure): user
actors, downloaders
(in-flight transfers aborted; the engine has re-queued their requests), spider runner
(its last checkpoint sent, with a JOBDIR), engine, pipeline (``close_spider`` of the item
pipelines), exporters (the feed is stored), scheduler (the last checkpoint committed, its
queue kept in JOBDIR); then ``spider_closed``, the stats
dump, "Spider closed (reason)", ``engine_stopped``, and the crawl's ``finished`` event.

Every child has a :class:`~crawlfw.core.control._supervision.ChildSpec` (role, factory, restart
policy, shutdown timeout), kept in ``CrawlTree.specs``. Downloaders, the pipeline, the
exporters and user actors (``ACTORS``) are ``permanent``: one that dies is restarted (a
downloader by this actor, which hands the new one to the engine with
``downloader_failed``: the engine puts it in the pool and re-sends the requests that were
in flight in its slots; the pipeline and the
exporters behind a :class:`~crawlfw.actors._childref.ChildRef` that keeps what was sent
to them, the message they died on first; a user actor behind a ChildRef too, its inbox
kept, the message it died on dropped, also after a failed ``on_start``) within the crawl's
restart intensity, ``SUPERVISOR_MAX_RESTARTS`` restarts per ``SUPERVISOR_RESTART_WINDOW``
seconds for all its children together, each after a backoff (``SUPERVISOR_BACKOFF``
seconds, doubled per restart within the window, at most ``SUPERVISOR_BACKOFF_MAX``).
Past the intensity, or when a ``temporary`` child dies (engine, scheduler, spider runner:
restarting them could lose or repeat what they hold), or a pipeline or exporter that
cannot be restarted (a failed ``on_start``, a feed that cannot be cut back), the crawl is
closed with ``<role>_failed``.

Stopping a crawl's tree runs on a thread of its own (``crawlfw-stop-<crawl id>``), each
child with its spec's shutdown timeout, so a slow feed upload of one crawl never stalls
the Supervisor or another crawl.
"""

import itertools
import logging
import threading
import time

import pykka

from crawlfw import signals
from crawlfw.actors import messages
from crawlfw.actors._base import CrawlActor
from crawlfw.actors._childref import ChildRef
from crawlfw.actors._facade import EngineFacade
from crawlfw.actors._user import IDLE_BARRIER
from crawlfw.actors.exporter import FeedFailures
from crawlfw.core.flow._reasons import is_failure_reason, register_failure_reason
from crawlfw.core.control._supervision import PERMANENT, ChildSpec, RestartIntensity
from crawlfw.core.frontier.frontier import FrontierError
from crawlfw.core.transport.slot import slot_key
from crawlfw.exceptions import CrawlStartError
from crawlfw.core._fds import fit_concurrency
from crawlfw.utils._hooks import contain_dupefilter
from crawlfw.utils.misc import load_object

logger = logging.getLogger(__name__)

__all__ = ["Supervisor", "CrawlTree"]

#: Seconds each child gets to finish its inbox when stopped in order.
STOP_TIMEOUT_S = 60.0

_ids = itertools.count(1)


class CrawlTree:
    """The actors of one crawl, as the Supervisor keeps them."""

    def __init__(self, crawl_id, crawler):
        self.crawl_id = crawl_id
        self.crawler = crawler
        self.engine = None
        self.scheduler = None
        self.spider_runner = None
        self.pipeline = None
        self.exporters = []
        self.failed_feeds = FeedFailures()  # feeds whose storage failed: ends feed_failed
        self.frontier = None
        self.downloaders = None  # DownloaderPool: the downloader actors, the one record
        self.user_actors = {}  # class path -> ref (ACTORS), in start order
        self.specs = {}  # role, or (role, key) for user actors -> ChildSpec
        self.restartable = {}  # (role, key) -> ChildRef: the pipeline, each exporter
        self.pending = set()  # (role, key) of restartable children waiting for a backoff
        settings = crawler.settings
        self.intensity = RestartIntensity(
            max_restarts=max(0, settings.getint("SUPERVISOR_MAX_RESTARTS", 3)),
            window_s=max(0.0, settings.getfloat("SUPERVISOR_RESTART_WINDOW", 60.0)),
            backoff_s=max(0.0, settings.getfloat("SUPERVISOR_BACKOFF", 0.5)),
            backoff_max_s=max(0.0, settings.getfloat("SUPERVISOR_BACKOFF_MAX", 30.0)),
        )
        self.timers = set()  # pending restarts (threading.Timer)
        self.closing = None
        self.stopper = None  # the thread stopping the tree, once closing
        self.started_at = time.time()

    def spec_of(self, role: str, key: str = "") -> ChildSpec | None:
        """The child spec of the child ``role``/``key`` (None: not a child of this tree)."""
        return self.specs.get((role, key)) or self.specs.get(role)


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
        tree = self.crawls[crawl_id] = CrawlTree(crawl_id, crawler)
        crawler._crawl_id = crawl_id
        try:
            self._start_tree(tree)
        except CrawlStartError as e:
            if tree.scheduler is None:  # refused before the spider was opened
                self._refuse(tree, e)
                return {"type": "start_refused", "error": str(e)}
            self._shutdown(tree, f"start_failed: {e}", wait=True)
            return {"type": "start_refused", "error": str(e)}
        except Exception as e:
            logger.error("Could not start crawl %(id)s", {"id": crawl_id}, exc_info=True)
            self._shutdown(tree, f"start_failed: {type(e).__name__}: {e}", wait=True)
            raise
        return {"crawl_id": crawl_id, "engine": tree.engine}

    def _refuse(self, tree, error):
        """Undo a start refused (:class:`CrawlStartError`) before ``spider_opened``: stop
        the exporters already started (an empty feed file they created is removed), end
        the crawl with ``start_failed``; the caller reports ``error`` in one line."""
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
            tree.spec_of(role, key).factory()  # the new actor attaches itself to child
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
            return
        if tree is None or tree.closing:
            return
        if role == "downloader":
            self._restart_downloader(tree, key)

    def _restart_downloader(self, tree, key):
        """Start a new downloader ``key`` and hand it to the engine (``downloader_failed``),
        which puts it in the pool and re-sends what the dead one had in flight."""
        try:
            ref = tree.specs[("downloader", key)].factory()
        except Exception as e:
            logger.error("Could not restart downloader (%(key)s) of crawl %(id)s: %(error)s",
                         {"key": key, "id": tree.crawl_id, "error": f"{type(e).__name__}: {e}"},
                         exc_info=True)
            self._fail(tree, "downloader_failed")
            return
        tree.downloaders.replacements[int(key)] = ref
        self.send(tree.engine, {"type": "downloader_failed", "slot": key, "ref": ref})

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
        from crawlfw.actors.downloader import DownloaderActor, DownloaderPool
        from crawlfw.actors.engine import EngineActor
        from crawlfw.actors.exporter import ExporterActor, open_feeds, prepare_feeds
        from crawlfw.actors.pipeline import PipelineActor
        from crawlfw.actors.scheduler import SchedulerActor, frontier_of
        from crawlfw.actors.spider_runner import SpiderRunnerActor
        from crawlfw.core.transport.curl import driver_options
        from crawlfw.core.feeds.feeds import feeds_from_settings
        from crawlfw.pipelines import ItemPipelineManager

        crawler = tree.crawler
        spider = crawler.spider
        common = {"crawl_id": tree.crawl_id, "supervisor": self.actor_ref}
        user_actors = _user_actor_classes(crawler.settings)  # refused before anything starts
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
        tree.frontier = frontier = frontier_of(scheduler)
        durable = bool(getattr(frontier, "durable", False))
        job = frontier.meta if durable else {}
        try:
            feeds = dict(job.get("feeds", {}))
            if _feed_export_enabled(crawler.settings):  # one exporter per feed (FEEDS, FEED_URI)
                # every feed checked before any is opened (an overwrite feed is emptied)
                writers = prepare_feeds(crawler, feeds_from_settings(crawler.settings), feeds)
                open_feeds(crawler, writers)
                for writer in writers:
                    feeds[writer.key] = writer.checkpoint(fsync=False)
                    tree.exporters.append(_start_exporter(tree, ExporterActor, writer, common))
            if durable:  # each feed's starting point is committed before any item comes
                frontier.commit({"feeds": feeds})
        except BaseException:
            scheduler.close("start_failed")
            raise
        logger.info("Spider opened", extra={"spider": spider})
        # The child specs: who starts each child, whether it is restarted, how long it
        # may take to stop. The engine, the scheduler and the spider runner are not
        # restarted: they hold what a restart would lose or repeat (the flow-control
        # counters, the lease table, the spider's generators). The pipeline and the
        # exporters are, behind a ChildRef (see crawlfw/actors/_childref.py).
        specs = tree.specs
        specs["exporter"] = ChildSpec("exporter", None, PERMANENT, shutdown_timeout_s=None)
        specs["scheduler"] = ChildSpec(
            "scheduler", lambda: SchedulerActor.start(crawler, scheduler, **common))
        specs["engine"] = ChildSpec(
            "engine", lambda: EngineActor.start(crawler, tree.scheduler, None, pool,
                                                max_concurrency=pool.concurrency, **common))
        for index in range(len(pool)):  # permanent: restarted, the engine re-sends
            specs[("downloader", str(index))] = ChildSpec(
                "downloader", lambda index=index: DownloaderActor.start(
                    crawler, index, tree.engine, share=pool.share,
                    dns_budget=pool.dns_budget, concurrency=pool.concurrency, **common),
                PERMANENT, STOP_TIMEOUT_S, key=str(index))
        pipeline = tree.restartable[("pipeline", "")] = ChildRef("pipeline")
        kept = {}  # the crawl's ItemPipelineManager: opened once, kept across restarts

        def start_pipeline():
            restart = "itemproc" in kept
            if not restart:
                kept["itemproc"] = ItemPipelineManager.from_crawler(crawler)
            return PipelineActor.start(crawler, tree.engine, tree.exporters,
                                       itemproc=kept["itemproc"], restart=restart,
                                       child_ref=pipeline, **common)
        specs["pipeline"] = ChildSpec("pipeline", start_pipeline, PERMANENT,
                                      shutdown_timeout_s=None)
        specs["spider_runner"] = ChildSpec("spider_runner", lambda: SpiderRunnerActor.start(
            crawler, tree.scheduler, tree.pipeline, tree.engine, durable=durable,
            start_skip=job.get("start_requests", 0),
            start_exhausted=job.get("start_exhausted", False), **common))
        tree.downloaders = pool
        tree.scheduler = specs["scheduler"].factory()
        tree.engine = specs["engine"].factory()
        for index in range(len(pool)):
            pool.refs[index] = specs[("downloader", str(index))].factory()
        specs["pipeline"].factory()  # attaches the actor to its ChildRef
        tree.pipeline = pipeline
        tree.spider_runner = specs["spider_runner"].factory()
        for path, cls in user_actors:
            self._start_user_actor(tree, path, cls, common)
        if durable:
            self.send(tree.scheduler, {"type": "start_checkpoints",
                                       "spider_runner": tree.spider_runner})
        # spider_opened handlers (CloseSpider's timeout...) may use crawler.engine at once.
        crawler.engine = EngineFacade(crawler, tree.engine, self.actor_ref, pool)
        crawler.stats.open_spider(spider)
        crawler.signals.send_catch_log(signals.spider_opened, spider=spider)
        crawler.signals.send_catch_log(signals.engine_started)
        self.send(tree.engine, {"type": "start_engine", "spider_runner": tree.spider_runner,
                                "pipeline": tree.pipeline})

    def _start_user_actor(self, tree, path, cls, common):
        """Start one ``ACTORS`` entry under a permanent child spec and relay the crawl
        events it subscribes to (``cls.events``) as messages to its current ref."""
        crawler = tree.crawler
        role = cls.role
        register_failure_reason(f"{role}_failed")
        ref = tree.restartable[(role, path)] = ChildRef(role, path)
        spec = ChildSpec(role, lambda: cls.start(crawler, engine=tree.engine, key=path,
                                                 child_ref=ref, **common),
                         PERMANENT, STOP_TIMEOUT_S, key=path)
        tree.specs[(role, path)] = spec
        spec.factory()  # attaches the actor to ref
        tree.user_actors[path] = ref
        for event in cls.events:
            crawler.signals.connect(_EventRelay(tree, path, event), getattr(signals, event),
                                    weak=False)

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
        timeout_of = _timeouts(tree)
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
                crawler.signals.send_catch_log(signals.spider_closed, spider=spider, reason=reason)
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


def _start_exporter(tree, actor_class, writer, common):
    """Start the Exporter of one feed behind a :class:`ChildRef` (its key: the feed's
    URI template, password redacted) under a permanent child spec; return the ref."""
    key = writer.name
    ref = tree.restartable[("exporter", key)] = ChildRef("exporter", key)
    spec = tree.specs[("exporter", key)] = ChildSpec(
        "exporter", lambda: actor_class.start(tree.crawler, writer, tree.failed_feeds,
                                              child_ref=ref, key=key, **common),
        PERMANENT, shutdown_timeout_s=None, key=key)
    spec.factory()  # attaches the actor to ref
    return ref


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


class _EventRelay:
    """A signal receiver telling a user actor ``{"type": event, **signal arguments}``.

    For ``spider_idle`` it also tells an ``idle_barrier`` after the event and returns
    :data:`~crawlfw.actors._user.IDLE_BARRIER`: the Engine (which fired the signal, on
    its thread) then does not close the spider before the actor answered, so what the
    actor's handler added is processed first (docs/actors.md)."""

    def __init__(self, tree, path, event):
        self.tree = tree
        self.path = path
        self.event = event

    def __call__(self, **kwargs):
        ref = self.tree.user_actors.get(self.path)
        if ref is None or self.tree.stopper is not None:
            return
        kwargs.pop("signal", None)
        kwargs.pop("sender", None)
        kwargs.pop("spider", None)
        kwargs.pop("dont_log", None)
        if self.event in _SLOT_EVENTS:
            kwargs["slot"] = slot_key(kwargs["request"])
        try:
            ref.tell({"type": self.event, **kwargs})
            if self.event == "spider_idle":  # the engine waits for its answer
                ref.tell({"type": "idle_barrier", "reply_to": self.tree.engine})
                return IDLE_BARRIER
        except pykka.ActorDeadError:
            pass  # dead, restarting: the event is lost
        return None


def _user_actor_classes(settings):
    """``[(path, class)]`` of the ``ACTORS`` setting, in order.

    Raises:
        CrawlStartError: an entry cannot be loaded, is not a ``UserActor`` subclass,
            subscribes to an unknown event, or takes one of crawlfw's own roles.
    """
    from crawlfw.actors._user import EVENTS, UserActor
    from crawlfw.utils.conf import build_component_list

    classes = []
    for path in build_component_list(settings.getdict("ACTORS")):
        try:
            cls = load_object(path) if isinstance(path, str) else path
        except Exception as e:
            raise CrawlStartError(f"ACTORS: cannot load {path!r}: {type(e).__name__}: {e}") from e
        name = path if isinstance(path, str) else f"{cls.__module__}.{cls.__qualname__}"
        if not (isinstance(cls, type) and issubclass(cls, UserActor)):
            raise CrawlStartError(f"ACTORS: {name} is not a subclass of crawlfw.actors.UserActor")
        if cls.role in _OWN_ROLES:
            raise CrawlStartError(f"ACTORS: {name} takes crawlfw's own role {cls.role!r}; "
                                  "set its role to 'custom' or a name of its own")
        unknown = sorted(set(cls.events) - EVENTS)
        if unknown:
            raise CrawlStartError(f"ACTORS: {name} subscribes to unknown events {unknown}; "
                                  f"known: {sorted(EVENTS)}")
        classes.append((name, cls))
    return classes


_SLOT_EVENTS = frozenset({"response_received", "response_downloaded"})

_OWN_ROLES = frozenset({"supervisor", "engine", "scheduler", "downloader", "spider_runner",
                        "pipeline", "exporter"})


def _control_error(error: str) -> messages.ControlError:
    return {"type": "control_error", "error": error}


def _feed_export_enabled(settings) -> bool:
    from crawlfw.utils.conf import build_component_list

    enabled = build_component_list(settings.getwithbase("EXTENSIONS"))
    return "crawlfw.extensions.feedexport.FeedExporter" in enabled


def _timeouts(tree):
    """``role -> shutdown timeout`` (seconds or None) from the tree's child specs."""
    def timeout_of(role):
        spec = tree.specs.get(role)
        if spec is None and role == "custom":
            return STOP_TIMEOUT_S
        return spec.shutdown_timeout_s if spec is not None else STOP_TIMEOUT_S
    return timeout_of


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
