"""A crawl's actor tree: :class:`CrawlTree` (the actors of one crawl as the Supervisor
keeps them, and the plain parts their start functions read) and :data:`CHILD_SPECS`, the
table the Supervisor (:mod:`crawlfw.actors.supervisor`) starts, restarts and stops a
tree from: an OTP-style :class:`~crawlfw.core.control._supervision.ChildSpec` per kind of
child (id, start function, restart policy, shutdown timeout), in start order.

The start functions are plain named functions of this module, each taking the crawl's
tree and a child's key (``start(tree, key) -> ActorRef | ChildRef``); the ``children``
functions list the keys of a kind with several children (``[(role, key)]``). The why
(restart policies, what a restart keeps, the stop order) is ARCHITECTURE.md's
"Supervision".
"""

import logging
import time

import pykka

from crawlfw import signals
from crawlfw.actors._childref import ChildRef
from crawlfw.actors._user import IDLE_BARRIER
from crawlfw.actors.exporter import FeedFailures
from crawlfw.core.control._supervision import PERMANENT, TEMPORARY, ChildSpec, RestartIntensity
from crawlfw.core.flow._reasons import register_failure_reason
from crawlfw.core.transport.slot import slot_key
from crawlfw.exceptions import CrawlStartError
from crawlfw.utils.misc import load_object

__all__ = ["CrawlTree", "CHILD_SPECS", "STOP_TIMEOUT_S"]

logger = logging.getLogger(__name__)


#: Seconds each child gets to finish its inbox when stopped in order.
STOP_TIMEOUT_S = 60.0


class CrawlTree:
    """The actors of one crawl, as the Supervisor keeps them, and the plain parts their
    child specs' ``start`` functions read (:data:`CHILD_SPECS`)."""

    def __init__(self, crawl_id, crawler, supervisor=None):
        self.crawl_id = crawl_id
        self.crawler = crawler
        self.supervisor = supervisor  # the Supervisor's ActorRef: every child reports to it
        self.engine = None
        self.scheduler = None
        self.spider_runner = None
        self.pipeline = None
        self.exporters = []
        self.spider_opened = False  # spider_opened was sent (so spider_closed will be)
        self.failed_feeds = FeedFailures()  # feeds whose storage failed: ends feed_failed
        self.frontier = None
        self.downloaders = None  # DownloaderPool: the downloader actors, the one record
        self.user_actors = {}  # class path -> ref (ACTORS), in start order
        self.specs = {}  # (role, key) of each child started -> its ChildSpec
        self.restartable = {}  # (role, key) -> ChildRef: the pipeline, each exporter,
        # each downloader, each user actor
        self.pending = set()  # (role, key) of restartable children waiting for a backoff
        # What the start functions read, prepared by Supervisor._start_tree:
        self.core_scheduler = None  # the Scheduler object (crawlfw.core.scheduler)
        self.durable = False  # its frontier keeps the crawl (JOBDIR, FRONTIER_URL)
        self.job = {}  # a durable frontier's job metadata (start requests done...)
        self.writers = {}  # feed name -> FeedWriter, opened, in FEEDS order
        self.user_actor_classes = {}  # ACTORS: class path -> UserActor subclass, in order
        self.downloader_mw = None  # the DownloaderMiddlewareManager, for the Engine
        self.spidermw = None  # the SpiderMiddlewareManager, for the SpiderRunner
        self.itemproc = None  # the ItemPipelineManager: opened once, kept across restarts
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

    @property
    def common(self) -> dict:
        """The arguments every child's ``start`` takes: ``crawl_id``, ``supervisor``."""
        return {"crawl_id": self.crawl_id, "supervisor": self.supervisor}

    def spec_of(self, role: str, key: str = "") -> ChildSpec | None:
        """The child spec of the child ``role``/``key`` (None: not a child of this tree)."""
        return self.specs.get((role, key))


# --- the tree's child specs -------------------------------------------------------------
# Each start function takes the crawl's tree and a child's key, starts that child from
# what the tree holds, records it where its siblings find it, and returns its ref; the
# permanent ones are called again to restart a child (a ChildRef-backed child: the new
# actor attaches itself to the ChildRef made at its first start).

def feed_refs(tree: CrawlTree) -> None:
    """Make the :class:`ChildRef` of every feed's Exporter (``tree.writers``, prepared,
    not opened yet), so that the Pipeline, started before the feeds are opened, holds
    them; each Exporter attaches itself to its ref when :func:`_start_exporter` starts it."""
    for key in tree.writers:
        if ("exporter", key) not in tree.restartable:
            tree.exporters.append(tree.restartable.setdefault(("exporter", key),
                                                              ChildRef("exporter", key)))


def _start_exporter(tree: CrawlTree, key: str):
    """The Exporter of the feed ``key`` (its URI template, password redacted), behind
    its :class:`ChildRef` (:func:`feed_refs`), writing through ``tree.writers[key]``
    (opened by then: the Supervisor opens the feeds just before the Exporters start)."""
    from crawlfw.actors.exporter import ExporterActor

    feed_refs(tree)
    child = tree.restartable[("exporter", key)]
    ExporterActor.start(tree.crawler, tree.writers[key], tree.failed_feeds, child_ref=child,
                        key=key, **tree.common)
    return child


def _feeds(tree: CrawlTree) -> list[tuple[str, str]]:
    return [("exporter", name) for name in tree.writers]


def _start_scheduler(tree: CrawlTree, key: str):
    """The Scheduler actor, driving the tree's Scheduler object and its frontier."""
    from crawlfw.actors.scheduler import SchedulerActor

    tree.scheduler = SchedulerActor.start(tree.crawler, tree.core_scheduler,
                                          downloaders=tree.downloaders, **tree.common)
    return tree.scheduler


def _start_engine(tree: CrawlTree, key: str):
    """The Engine, with the crawl's effective concurrency (``fit_concurrency``)."""
    from crawlfw.actors.engine import EngineActor

    pool = tree.downloaders
    tree.engine = EngineActor.start(tree.crawler, tree.scheduler, None, pool,
                                    max_concurrency=pool.concurrency, mw=tree.downloader_mw,
                                    **tree.common)
    return tree.engine


def _start_downloader(tree: CrawlTree, key: str):
    """Downloader number ``key`` of the pool, behind a :class:`ChildRef` (made at its
    first start and put in the pool), serving the pool's slot table number ``key``: a
    replacement takes the dead one's table over and starts again what was in flight."""
    from crawlfw.actors.downloader import DownloaderActor

    pool, index = tree.downloaders, int(key)
    child = tree.restartable.get(("downloader", key))
    if child is None:
        child = pool.refs[index] = tree.restartable[("downloader", key)] = \
            ChildRef("downloader", key)
    DownloaderActor.start(tree.crawler, index, tree.engine, share=pool.share,
                          dns_budget=pool.dns_budget, concurrency=pool.concurrency,
                          table=pool.tables[index], scheduler=tree.scheduler,
                          child_ref=child, **tree.common)
    return child


def _downloaders(tree: CrawlTree) -> list[tuple[str, str]]:
    return [("downloader", str(index)) for index in range(len(tree.downloaders.refs))]


def _start_pipeline(tree: CrawlTree, key: str):
    """The Pipeline actor, behind a :class:`ChildRef`, with the crawl's
    ``ItemPipelineManager`` (made by :func:`build_components`, else at the first start;
    opened once: a restart keeps it) and the refs of the feeds' Exporters
    (:func:`feed_refs`).

    At the first start this waits until the actor has run the item pipelines'
    ``open_spider`` on its own thread (where their ``process_item`` will run), as Scrapy
    opens them before ``spider_opened``, so before any feed is opened.

    Raises:
        CrawlStartError: an ``open_spider`` raised: ``"ITEM_PIPELINES: '<path>'.open_spider
            failed: <ExcType>: <message>"`` (traceback at DEBUG); no feed was touched.
    """
    from crawlfw.actors.pipeline import PipelineActor
    from crawlfw.pipelines import ItemPipelineManager

    child = tree.restartable.get(("pipeline", ""))
    restart = child is not None
    if child is None:
        if tree.itemproc is None:
            tree.itemproc = ItemPipelineManager.from_crawler(tree.crawler)
        child = tree.restartable[("pipeline", "")] = ChildRef("pipeline")
    feed_refs(tree)
    opened: pykka.ThreadingFuture | None = None if restart else pykka.ThreadingFuture()
    PipelineActor.start(tree.crawler, tree.engine, tree.exporters, itemproc=tree.itemproc,
                        restart=restart, opened=opened, child_ref=child, **tree.common)
    tree.pipeline = child
    if opened is not None:
        failure = opened.get()  # None, or the line naming the pipeline that failed
        if failure is not None:
            raise CrawlStartError(failure)
    return child


def _start_spider_runner(tree: CrawlTree, key: str):
    """The SpiderRunner, resuming the start requests where a durable job left them."""
    from crawlfw.actors.spider_runner import SpiderRunnerActor

    tree.spider_runner = SpiderRunnerActor.start(
        tree.crawler, tree.scheduler, tree.pipeline, tree.engine, durable=tree.durable,
        spidermw=tree.spidermw, start_skip=tree.job.get("start_requests", 0),
        start_exhausted=tree.job.get("start_exhausted", False), **tree.common)
    return tree.spider_runner


def _start_user_actor(tree: CrawlTree, key: str):
    """The ``ACTORS`` entry of class path ``key``, behind a :class:`ChildRef`; at its
    first start the crawl events it subscribes to (``cls.events``) are relayed to it as
    messages (to its current actor, across restarts)."""
    cls = tree.user_actor_classes[key]
    role = cls.role
    child = tree.restartable.get((role, key))
    first = child is None
    if first:
        register_failure_reason(f"{role}_failed")
        child = tree.restartable[(role, key)] = ChildRef(role, key)
    try:
        cls.start(tree.crawler, engine=tree.engine, key=key, child_ref=child, **tree.common)
    except Exception as e:
        if not first:  # a restart: the Supervisor's restart path handles it
            raise
        line = f"ACTORS: cannot build {key!r}: {type(e).__name__}: {e}"
        logger.debug("%(line)s", {"line": line}, exc_info=True)
        raise CrawlStartError(line) from e
    if first:
        tree.user_actors[key] = child
        for event in cls.events:
            tree.crawler.signals.connect(_EventRelay(tree, key, event),
                                         getattr(signals, event), weak=False)
    return child


def _user_actors(tree: CrawlTree) -> list[tuple[str, str]]:
    return [(cls.role, path) for path, cls in tree.user_actor_classes.items()]


#: The children of a crawl's tree, in start order (OTP's child specs; see
#: :class:`~crawlfw.core.control._supervision.ChildSpec`). The engine, the scheduler and the
#: spider runner are temporary: they hold what a restart would lose or repeat (the
#: flow-control counters, the lease table, the spider's generators), so their death
#: closes the crawl. The downloaders, the pipeline, the exporters and the user actors
#: are restarted behind a ChildRef (crawlfw/actors/_childref.py). The
#: item-carrying pipeline and exporters get all the time they need to stop. The order
#: in which a tree stops is :meth:`Supervisor._stop_tree`'s. User code that may refuse
#: the start (the item pipelines' ``open_spider``, the ``ACTORS`` constructors) runs
#: before the Exporters: the Supervisor opens the feeds (an ``-O`` file is emptied then)
#: only once it passed (:data:`FEEDS_OPEN_BEFORE`).
CHILD_SPECS: tuple[ChildSpec, ...] = (
    ChildSpec("scheduler", _start_scheduler, TEMPORARY, STOP_TIMEOUT_S),
    ChildSpec("engine", _start_engine, TEMPORARY, STOP_TIMEOUT_S),
    ChildSpec("downloader", _start_downloader, PERMANENT, STOP_TIMEOUT_S,
              children=_downloaders),
    ChildSpec("pipeline", _start_pipeline, PERMANENT, None),
    ChildSpec("custom", _start_user_actor, PERMANENT, STOP_TIMEOUT_S, children=_user_actors),
    ChildSpec("exporter", _start_exporter, PERMANENT, None, children=_feeds),
    ChildSpec("spider_runner", _start_spider_runner, TEMPORARY, STOP_TIMEOUT_S),
)

_SPEC_BY_ID = {spec.id: spec for spec in CHILD_SPECS}
#: The child spec before whose first child the Supervisor opens the feeds.
FEEDS_OPEN_BEFORE = "exporter"


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


#: The settings naming the components the children build as they start (each with its
#: ``_BASE``, as their managers read them).
_COMPONENT_SETTINGS = ("DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES", "ITEM_PIPELINES")


def check_components(settings) -> None:
    """Import every downloader middleware, spider middleware and item pipeline the
    settings enable, before anything of the crawl is opened: one that cannot be
    imported (its module, or a module it imports, is missing) refuses the start in one
    line, and no feed file is touched. (What a component's constructor raises is met
    by :func:`build_components`, before the feeds are opened too.)

    Raises:
        CrawlStartError: ``"<SETTING>: cannot load '<path>': <ExcType>: <message>"``, or
            the setting's orders are not numbers.
    """
    from crawlfw.utils.conf import build_component_list

    for name in _COMPONENT_SETTINGS:
        try:
            paths = build_component_list(settings.getwithbase(name))
        except (ValueError, TypeError) as e:
            raise CrawlStartError(f"{name}: {e}") from None
        for path in paths:
            if not isinstance(path, str):
                continue  # a class given as such: imported already
            try:
                load_object(path)
            except Exception as e:
                raise CrawlStartError(
                    f"{name}: cannot load {path!r}: {type(e).__name__}: {e}") from e


def build_components(tree: CrawlTree) -> None:
    """Build the crawl's downloader middlewares, spider middlewares and item pipelines,
    in Scrapy's order, on the Supervisor's thread, before any feed is opened: a
    component whose constructor (or ``from_crawler``) raises refuses the start in one
    line, and no feed file was touched (an ``-O`` file keeps its bytes). The Engine,
    the SpiderRunner and the Pipeline are then started with them.

    Raises:
        CrawlStartError: ``"<SETTING>: cannot build '<path>': <ExcType>: <message>"``
            (:func:`crawlfw.middleware.component_error`; the traceback is logged at
            DEBUG).
    """
    from crawlfw.core.flow.downloadermw import DownloaderMiddlewareManager
    from crawlfw.core.flow.spidermw import SpiderMiddlewareManager
    from crawlfw.middleware import component_start_error
    from crawlfw.pipelines import ItemPipelineManager

    crawler = tree.crawler
    try:
        tree.downloader_mw = DownloaderMiddlewareManager.from_crawler(crawler)
        tree.spidermw = SpiderMiddlewareManager.from_crawler(crawler)
        tree.itemproc = ItemPipelineManager.from_crawler(crawler)
    except Exception as e:
        error = component_start_error(e)
        if error is None:
            raise
        raise error from e


_SLOT_EVENTS = frozenset({"response_received", "response_downloaded"})

_OWN_ROLES = frozenset({"supervisor", "engine", "scheduler", "downloader", "spider_runner",
                        "pipeline", "exporter"})


def _timeout_of(role: str) -> float | None:
    """The shutdown timeout (seconds, None: as long as it takes) of the children of
    role ``role``, from :data:`CHILD_SPECS` (the user actors' entry for ``custom``)."""
    spec = _SPEC_BY_ID.get(role)
    return spec.shutdown_timeout_s if spec is not None else STOP_TIMEOUT_S
