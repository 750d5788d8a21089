"""The base class of users' own actors (the ``ACTORS`` setting) and the crawl events they
can subscribe to."""

import logging

from crawlfw.actors import messages
from crawlfw.actors._childref import RestartableActor

logger = logging.getLogger(__name__)

__all__ = ["UserActor", "EVENTS", "IDLE_BARRIER"]

#: What the signal relay of a user actor's ``spider_idle`` event returns once it told
#: the actor the event and an ``idle_barrier`` after it: the Engine, which fired the
#: signal, then waits for that many ``idle_barrier_passed`` before it may close.
IDLE_BARRIER = object()

#: The crawl events a :class:`UserActor` can subscribe to (its ``events``), each the
#: name of a crawl signal, with the signal's arguments (``spider`` aside) as the
#: message's keys:
#:
#: - ``item_scraped`` ``{item, response}``; ``item_dropped`` ``{item, response, exception}``
#: - ``response_received`` / ``response_downloaded`` ``{response, request}``
#: - ``request_scheduled`` / ``request_dropped`` ``{request}`` (dropped by the dupefilter)
#: - ``spider_idle`` ``{}``; ``spider_error`` ``{failure, response}``
#: - ``spider_opened`` ``{}``
EVENTS = frozenset({
    "item_scraped", "item_dropped", "response_received", "response_downloaded",
    "request_scheduled", "request_dropped", "spider_idle", "spider_error", "spider_opened",
})


class UserActor(RestartableActor):
    """Subclass this to add an actor to each crawl (setting ``ACTORS =
    {'path.to.MyActor': order}``). The Supervisor starts one per crawl, after the rest of
    the tree and before the first request, in ascending order; restarts it when it dies
    (an exception in a handler or in ``on_start``), within the crawl's restart intensity
    (``SUPERVISOR_MAX_RESTARTS`` per ``SUPERVISOR_RESTART_WINDOW`` s, with backoff); past
    that, the crawl closes with ``<role>_failed`` (exit status 1). Senders hold a stable
    ref (:class:`crawlfw.actors._childref.ChildRef`): the messages waiting in the dead
    actor's inbox, and those sent while it restarts, reach the new instance in order.
    The message it died on is not sent again (it may be what kills it): it is logged.
    A restarted actor is a new instance: its state is lost unless it keeps it elsewhere
    (``self.crawler.stats``...).

    Class attributes:
        role: its role (default ``"custom"``); the crawl's ``finish_reason`` when it
            fails for good is ``<role>_failed``. It must not be one of crawlfw's own
            roles (``engine``, ``downloader``, ...).
        events: names from :data:`EVENTS` this actor receives as messages
            ``{"type": <event>, ...}``, handled by ``handle_<event>(message)``. Events
            are told from the thread that fires them; those fired while the actor
            restarts are kept for the new instance.

    A handler for one of the user's own message types needs its schema registered
    (:func:`crawlfw.actors.register_schema`) when messages are validated.

    Args:
        crawler: the Crawler (``settings``, ``stats``, ``signals``, ``spider``).
        engine: the crawl's Engine ``ActorRef`` (:meth:`crawl`, :meth:`add_items`, ...
            tell it).
        **kw: :class:`~crawlfw.actors._base.CrawlActor` arguments (``crawl_id``,
            ``supervisor``, ``key``: the class path) and ``child_ref`` (given by the
            Supervisor).
    """

    events: tuple = ()
    restart_failed_start = True

    def replay_of(self, message) -> list:
        """Nothing: the message this actor died on is logged and not sent again (it may
        be the cause); the rest of its inbox goes to the new instance."""
        kind = message.get("type") if isinstance(message, dict) else type(message).__name__
        logger.warning("%(actor)s died handling a %(type)r message: not sent again to its "
                       "replacement", {"actor": self, "type": kind})
        return []

    def __init__(self, crawler, *, engine=None, **kw):
        super().__init__(settings=crawler.settings, **kw)
        self.crawler = crawler
        self.spider = crawler.spider
        self.engine = engine

    # --- sending into the crawl ----------------------------------------------------------

    def crawl(self, request) -> None:
        """Schedule ``request`` (a :class:`crawlfw.http.Request`) in the crawl, through
        the dupefilter; its callback runs on the spider runner. Requests whose callback
        is not a spider method are kept in memory only (not in a ``JOBDIR``)."""
        self.send(self.engine, {"type": "crawl", "crawl_id": self.crawl_id, "request": request})

    def add_items(self, items) -> None:
        """Send ``items`` (a list of dicts or Items) through ``ITEM_PIPELINES`` and the
        feeds, as if a callback had yielded them (``item_scraped`` fires for each). The
        crawl does not close before they are processed. With ``JOBDIR`` they are written
        once per run: they belong to no request's lease."""
        items = list(items)
        if items:
            self.send(self.engine, {"type": "add_items", "items": items})

    def block_slot(self, slot: str, reason: str) -> None:
        """Stop downloading from download slot ``slot`` (normally a host name, see
        ``crawlfw.core.transport.slot.slot_key``): every request for it that comes to be
        downloaded from now on fails with ``IgnoreRequest`` naming ``reason`` (its
        errback runs, or it is counted in ``downloader/exception_type_count``)."""
        self.send(self.engine, {"type": "block_slot", "slot": slot, "reason": reason})

    def handle_idle_barrier(self, message: messages.IdleBarrier) -> None:
        """Tell the Engine that this actor handled the ``spider_idle`` event told before
        this message (what its handler sent reached the Engine first), so that the crawl
        does not close before the requests and items it added are processed."""
        self.send(message["reply_to"], {"type": "idle_barrier_passed"})

    def close_spider(self, reason: str) -> None:
        """Close the crawl gracefully with ``finish_reason`` ``reason``."""
        self.send(self.engine, {"type": "close_spider", "reason": reason})
