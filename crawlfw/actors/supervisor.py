"""The Supervisor: owns the actor tree of every crawl, is the one actor the outside
(CLI, shell, ``CrawlerProcess``) talks to, notices a child's death and stops trees in order.

Tree of one crawl (started by ``start_crawl``)::

    Supervisor
    ├── ExporterActor      (one per feed: FEEDS entries, FEED_URI)
    ├── SchedulerActor
    ├── EngineActor
    │     └── DownloaderActor × slots (started on demand by the engine, reported
    │                                 to the supervisor with ``child_started``)
    ├── PipelineActor
    └── SpiderRunnerActor

Shutdown order (``spider_closing`` from the engine, or a fatal child failure): downloaders
(in-flight transfers aborted; the engine has re-queued their requests), spider runner
(its last checkpoint sent, with a JOBDIR), engine, pipeline (``close_spider`` of the item
pipelines), exporters (the feed is stored), scheduler (the last checkpoint committed, its
queue kept in JOBDIR); then ``spider_closed``, the stats
dump, "Spider closed (reason)", ``engine_stopped``, and the crawl's ``finished`` event.

A downloader that dies is restarted (the engine re-sends its in-flight requests) at most
``SUPERVISOR_MAX_RESTARTS`` times per ``SUPERVISOR_RESTART_WINDOW`` seconds per slot; past
that, or when any other child dies, the crawl is closed with ``<role>_failed``.
"""

import itertools
import logging
import time
from collections import defaultdict, deque

import pykka

from crawlfw import signals
from crawlfw.actors._base import CrawlActor
from crawlfw.actors._facade import EngineFacade
from crawlfw.core._reasons import is_failure_reason
from crawlfw.exceptions import CrawlStartError
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
        self.frontier = None
        self.downloaders = {}  # slot -> ref
        self.restarts = defaultdict(deque)  # slot -> times of restarts
        self.closing = None
        self.started_at = time.time()


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
        for tree in list(self.crawls.values()):
            self._shutdown(tree, tree.closing or "shutdown")

    # --- commands from the outside ------------------------------------------------------

    def handle_start_crawl(self, message):
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
            self._shutdown(tree, f"start_failed: {e}")
            return {"type": "start_refused", "error": str(e)}
        except Exception as e:
            logger.error("Could not start crawl %(id)s", {"id": crawl_id}, exc_info=True)
            self._shutdown(tree, f"start_failed: {type(e).__name__}: {e}")
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

    def handle_stop_crawl(self, message):
        ids = [message["crawl_id"]] if message["crawl_id"] else list(self.crawls)
        stopping = []
        for crawl_id in ids:
            tree = self.crawls.get(crawl_id)
            if tree is None:
                continue
            stopping.append(crawl_id)
            if tree.engine is not None and tree.engine.is_alive():
                self.send(tree.engine, {"type": "close_spider", "reason": message["reason"]})
            else:
                self._shutdown(tree, message["reason"])
        return {"stopping": stopping}

    def handle_crawl(self, message):
        tree = self.crawls.get(message["crawl_id"])
        if tree is None or tree.engine is None or tree.closing:
            logger.debug("crawl %(id)s is not running; %(request)s dropped",
                         {"id": message["crawl_id"], "request": message["request"]})
            return
        self.send(tree.engine, message)

    def handle_pause_crawl(self, message):
        return self._forward_control(message)

    def handle_resume_crawl(self, message):
        return self._forward_control(message)

    def handle_schedule_request(self, message):
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

    def handle_get_status(self, message):
        crawls = {}
        for crawl_id, tree in self.crawls.items():
            crawls[crawl_id] = {
                "spider": tree.crawler.spider.name,
                "closing": tree.closing,
                "started_at": tree.started_at,
                "downloaders": sorted(tree.downloaders),
                "stats": tree.crawler.stats.get_stats(),
            }
        return {"crawls": crawls}

    # --- events from children -----------------------------------------------------------

    def handle_child_started(self, message):
        tree = self.crawls.get(message["crawl_id"])
        if tree is not None and message["role"] == "downloader":
            tree.downloaders[message["key"]] = message["ref"]

    def handle_spider_closing(self, message):
        tree = self.crawls.get(message["crawl_id"])
        if tree is not None:
            self._shutdown(tree, message["reason"])

    def handle_actor_failed(self, message):
        tree = self.crawls.get(message["crawl_id"])
        role, key = message["role"], message["key"]
        logger.error(
            "Actor %(role)s%(key)s of crawl %(id)s failed: %(error)s",
            {"role": role, "key": f" ({key})" if key else "", "id": message["crawl_id"],
             "error": message["error"]},
        )
        if tree is None or tree.closing:
            return
        if role == "downloader" and self._may_restart(tree, key):
            tree.downloaders.pop(key, None)
            tree.crawler.stats.inc_value("supervisor/restarts/downloader")
            self.send(tree.engine, {"type": "downloader_failed", "slot": key})
            return
        reason = f"{role}_failed"
        if role != "engine" and tree.engine is not None and tree.engine.is_alive():
            self.send(tree.engine, {"type": "close_spider", "reason": reason})
        else:
            self._shutdown(tree, reason)

    # --- the tree -----------------------------------------------------------------------

    def _start_tree(self, tree):
        from crawlfw.actors.engine import EngineActor
        from crawlfw.actors.exporter import ExporterActor, open_feed
        from crawlfw.actors.pipeline import PipelineActor
        from crawlfw.actors.scheduler import SchedulerActor, frontier_of
        from crawlfw.actors.spider_runner import SpiderRunnerActor
        from crawlfw.core.feeds import feeds_from_settings

        crawler = tree.crawler
        spider = crawler.spider
        common = {"crawl_id": tree.crawl_id, "supervisor": self.actor_ref}
        # The frontier first: a JOBDIR job's metadata tells how to resume the feeds and
        # the start requests.
        scheduler = load_object(crawler.settings["SCHEDULER"]).from_crawler(crawler)
        contain_dupefilter(getattr(scheduler, "df", None), crawler)  # user code: contained
        tree.frontier = frontier = frontier_of(scheduler)
        durable = bool(getattr(frontier, "durable", False))
        job = frontier.meta if durable else {}
        try:
            feeds = dict(job.get("feeds", {}))
            if _feed_export_enabled(crawler.settings):  # one exporter per feed (FEEDS, FEED_URI)
                for uri, options in feeds_from_settings(crawler.settings):
                    writer = open_feed(crawler, uri, options, resume_states=feeds)
                    feeds[writer.key] = writer.checkpoint(fsync=False)
                    tree.exporters.append(ExporterActor.start(crawler, writer, **common))
            if durable:  # each feed's starting point is committed before any item comes
                frontier.commit({"feeds": feeds})
        except BaseException:
            scheduler.close("start_failed")
            raise
        logger.info("Spider opened", extra={"spider": spider})
        tree.scheduler = SchedulerActor.start(crawler, scheduler, **common)
        tree.engine = EngineActor.start(crawler, tree.scheduler, None, **common)
        tree.pipeline = PipelineActor.start(crawler, tree.engine, tree.exporters, **common)
        tree.spider_runner = SpiderRunnerActor.start(
            crawler, tree.scheduler, tree.pipeline, tree.engine, durable=durable,
            start_skip=job.get("start_requests", 0),
            start_exhausted=job.get("start_exhausted", False), **common
        )
        if durable:
            self.send(tree.scheduler, {"type": "start_checkpoints",
                                       "spider_runner": tree.spider_runner})
        # spider_opened handlers (CloseSpider's timeout...) may use crawler.engine at once.
        crawler.engine = EngineFacade(crawler, tree.engine, self.actor_ref)
        crawler.stats.open_spider(spider)
        crawler.signals.send_catch_log(signals.spider_opened, spider=spider)
        crawler.signals.send_catch_log(signals.engine_started)
        self.send(tree.engine, {"type": "start_engine", "spider_runner": tree.spider_runner})

    def _may_restart(self, tree, key) -> bool:
        settings = tree.crawler.settings
        budget = settings.getint("SUPERVISOR_MAX_RESTARTS", 3)
        window_s = settings.getfloat("SUPERVISOR_RESTART_WINDOW", 60.0)
        now = time.monotonic()
        times = tree.restarts[key]
        while times and now - times[0] > window_s:
            times.popleft()
        if len(times) >= budget:
            return False
        times.append(now)
        return True

    def _shutdown(self, tree, reason):
        """Stop one crawl's actors in order, then close the spider (runs on this thread).

        A feed that failed (its Exporter recorded it in ``crawler._failed_feeds``) turns a
        normal ``reason`` into ``feed_failed``.
        """
        if tree.closing and tree.crawl_id not in self.crawls:
            return
        tree.closing = reason
        crawler = tree.crawler
        spider = crawler.spider
        try:
            # The engine stops before the scheduler: requests it drains from its inbox while
            # closing go back to a live scheduler, and requests the scheduler can no
            # longer hand to the stopped engine stay queued (SchedulerActor.on_undelivered).
            for ref in [*tree.downloaders.values(), tree.spider_runner, tree.engine]:
                _stop(ref)
            # Item-carrying actors get all the time they need: the pipeline drains its
            # inbox and closes the item pipelines; exporters write and store their feed
            # (storages have their own network timeouts). The scheduler stops last: the
            # spider runner's last checkpoint passes the pipeline and the exporters and
            # ends at the scheduler, which commits it.
            for ref in [tree.pipeline, *tree.exporters]:
                _stop(ref, timeout_s=None)
            if crawler._failed_feeds and not is_failure_reason(reason):
                reason = tree.closing = "feed_failed"  # a feed could not be written or stored
            _stop(tree.scheduler)
        finally:
            self.crawls.pop(tree.crawl_id, None)
            try:
                crawler.signals.send_catch_log(signals.spider_closed, spider=spider, reason=reason)
                crawler.stats.close_spider(spider, reason=reason)
                logger.info("Spider closed (%(reason)s)", {"reason": reason},
                            extra={"spider": spider})
                crawler.signals.send_catch_log(signals.engine_stopped)
            finally:
                crawler._crawl_finished(reason)


def _control_error(error: str) -> dict:
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
