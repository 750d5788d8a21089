"""Every message the crawlfw actors exchange, one TypedDict per ``type``.

A message is a flat ``dict`` with a ``type`` key. Types are snake_case: imperative for
commands (``fetch``, ``enqueue_requests``), past tense for events (``response_downloaded``,
``items_processed``). Replies go to the ``reply_to`` actor ref named in the command, never
to a future: actors only ``tell`` each other. ``ask`` (always with a timeout) is for the
outside (CLI, shell, tests) and is only answered by the Supervisor.

Each type has a JSON Schema in ``conf/schemas/messages.json`` (``$defs/<type>``), checked
by :mod:`crawlfw.actors._validation` at the boundaries (messages from outside the tree)
and, with ``MESSAGE_VALIDATION = 'all'`` or ``CRAWLFW_VALIDATE_MESSAGES=all`` (the test
suite), on every message. Python objects inside messages (requests, responses, items, actor
refs) are described with the schema keyword ``pyclass``.

A sent object belongs to the receiver: never mutate a request, response or item after
sending it (pykka does not copy messages).

Who sends what (see ARCHITECTURE.md for the picture)::

    outside    -> Supervisor : start_crawl, stop_crawl, get_status, crawl (forwarded)
    outside    -> Supervisor : pause_crawl, resume_crawl (forwarded), schedule_request
                              (from the control endpoint, see crawlfw.control)
    endpoint   -> outside    : status_reported, command_accepted, response_fetched,
                              control_error (replies on the control socket)
    any child  -> Supervisor : actor_failed, child_started, child_stopped
    timer      -> Supervisor : restart_child (a backoff is over)
    stopping thread -> Supervisor : crawl_stopped
    timer      -> Engine     : reap_downloaders
    user actor -> Engine     : crawl, add_items, block_slot, close_spider
    signal relay -> user actor : item_scraped, item_dropped, response_received,
                              response_downloaded, request_scheduled, request_dropped,
                              spider_idle, spider_error, spider_opened (crawlfw.actors.EVENTS)
    Engine     -> Supervisor : spider_closing
    Supervisor -> Engine     : start_engine, close_spider, downloader_failed
    Supervisor -> Engine     : crawl (forwarded from crawler.engine.crawl)
    timer      -> Engine     : recheck_idle
    Downloader -> itself     : pump
    Engine     -> Scheduler  : enqueue_requests, release_requests, pull_requests, check_idle
    Supervisor -> Scheduler  : start_checkpoints (JOBDIR)
    Scheduler  -> SpiderRunner -> Pipeline -> Exporter(s) : checkpoint (JOBDIR)
    Exporter (or Pipeline) -> Scheduler : checkpoint_reached (JOBDIR)
    Scheduler  -> Supervisor : stop_crawl (the frontier failed)
    Scheduler  -> Engine     : requests_dequeued, idle_checked
    Engine     -> Downloader : fetch
    Downloader -> Engine     : response_downloaded, download_failed
    Engine     -> SpiderRunner : pull_start_requests, scrape_response, scrape_failure
    SpiderRunner -> Engine   : start_requests_pulled, response_scraped, close_spider
    SpiderRunner -> Scheduler : enqueue_requests
    SpiderRunner -> Pipeline : process_items
    Pipeline   -> Engine     : items_processed
    Pipeline   -> Exporter   : export_items
"""

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "Message",
    "StartCrawl",
    "StopCrawl",
    "GetStatus",
    "ActorFailed",
    "ChildStarted",
    "SpiderClosing",
    "StartEngine",
    "Crawl",
    "RecheckIdle",
    "Pump",
    "CloseSpider",
    "DownloaderFailed",
    "EnqueueRequests",
    "ReleaseRequests",
    "StartCheckpoints",
    "Checkpoint",
    "CheckpointReached",
    "PullRequests",
    "CheckIdle",
    "RequestsDequeued",
    "IdleChecked",
    "Fetch",
    "ResponseDownloaded",
    "DownloadFailed",
    "PullStartRequests",
    "StartRequestsPulled",
    "ScrapeResponse",
    "ScrapeFailure",
    "ResponseScraped",
    "ProcessItems",
    "ItemsProcessed",
    "ExportItems",
    "PauseCrawl",
    "ResumeCrawl",
    "ScheduleRequest",
    "DownloadRequest",
    "StatusReported",
    "CommandAccepted",
    "ResponseFetched",
    "ControlError",
    "ChildStopped",
    "RestartChild",
    "CrawlStopped",
    "ReapDownloaders",
    "AddItems",
    "BlockSlot",
    "ItemScraped",
    "ItemDropped",
    "ResponseReceived",
    "RequestScheduled",
    "RequestDropped",
    "SpiderIdle",
    "SpiderOpened",
    "SpiderError",
    "MESSAGE_TYPES",
]

Message = dict[str, Any]
"""Any message: a dict with at least ``type`` (str)."""


# --- Supervisor -------------------------------------------------------------------------


class StartCrawl(TypedDict):
    """Outside -> Supervisor: build the actor tree for a crawler and start crawling.

    Answered (to ``ask``) with ``{"crawl_id": str, "engine": ActorRef}``, or with
    ``{"type": "start_refused", "error": str}`` when the crawl cannot start because of its
    configuration (a feed that cannot be opened: ``CrawlStartError``, one line).
    """

    type: Literal["start_crawl"]
    crawler: Any
    """The ``crawlfw.crawler.Crawler`` whose spider was created (``crawler.spider`` set)."""


class StopCrawl(TypedDict):
    """Outside -> Supervisor: close a running crawl's spider with ``reason``.

    ``crawl_id`` None means every crawl. Answered with ``{"stopping": [crawl_id, ...]}``.
    """

    type: Literal["stop_crawl"]
    crawl_id: str | None
    reason: str
    """The ``finish_reason`` recorded in stats, e.g. ``"shutdown"``."""


class GetStatus(TypedDict):
    """Outside -> Supervisor (answered with a status dict), Supervisor -> Engine.

    The Supervisor answers ``{"crawls": {crawl_id: {...engine status...}}, "actors": [...]}``.
    """

    type: Literal["get_status"]


class ActorFailed(TypedDict):
    """Any child -> Supervisor: the child raised an unhandled exception and is stopping."""

    type: Literal["actor_failed"]
    crawl_id: str
    role: str
    """``engine``, ``scheduler``, ``downloader``, ``spider_runner``, ``pipeline``, ``exporter``,
    or a user actor's role (``custom`` by default)."""
    key: str
    """Distinguishes children of one role: the download slot for downloaders, else ``""``."""
    error: str
    """``"ExceptionType: message"`` of the failure (the traceback is logged by the child)."""


class ChildStarted(TypedDict):
    """Engine -> Supervisor: a child was started on demand (a downloader for a new slot)."""

    type: Literal["child_started"]
    crawl_id: str
    role: str
    key: str
    ref: Any
    """The child's ``pykka.ActorRef``."""


class SpiderClosing(TypedDict):
    """Engine -> Supervisor: the engine decided to close the spider; stop the tree in order."""

    type: Literal["spider_closing"]
    crawl_id: str
    reason: str


# --- Engine -----------------------------------------------------------------------------


class StartEngine(TypedDict):
    """Supervisor -> Engine: every actor is up; start pulling start requests."""

    type: Literal["start_engine"]
    spider_runner: Any
    """The SpiderRunner's ActorRef (started after the engine, which it needs)."""
    pipeline: NotRequired[Any]
    """The Pipeline's ActorRef, where ``add_items`` go (from user actors)."""


class Crawl(TypedDict):
    """Outside (``crawler.engine.crawl(request, spider)``) -> Supervisor -> Engine:
    schedule a request in a running crawl."""

    type: Literal["crawl"]
    crawl_id: str
    """The crawl (the Supervisor forwards the message to its engine; the engine ignores it)."""
    request: Any


class RecheckIdle(TypedDict):
    """Timer -> Engine: fire ``spider_idle`` again after a handler raised DontCloseSpider."""

    type: Literal["recheck_idle"]


class CloseSpider(TypedDict):
    """Anyone -> Engine: close the spider with ``reason`` (closespider, CloseSpider, ^C)."""

    type: Literal["close_spider"]
    reason: str


class DownloaderFailed(TypedDict):
    """Supervisor -> Engine: the downloader of ``slot`` died; re-queue its requests."""

    type: Literal["downloader_failed"]
    slot: str


# --- Scheduler --------------------------------------------------------------------------


class Pump(TypedDict):
    """Downloader -> itself: wait in curl once and deliver the finished transfers."""

    type: Literal["pump"]


class EnqueueRequests(TypedDict):
    """Engine or SpiderRunner -> Scheduler: add requests (dupefilter applied)."""

    type: Literal["enqueue_requests"]
    requests: list
    """``crawlfw.http.Request`` objects, in the order the spider produced them."""
    done: NotRequired[list[int]]
    """Leases these requests replace (a redirect or retry of a leased request): acked in
    the same transaction as the push."""
    start: NotRequired[dict]
    """From the SpiderRunner with a durable frontier: ``{"consumed": int, "exhausted":
    bool}``, start requests taken from ``start_requests()`` for this message (committed
    with the requests, so a resumed job skips them)."""
    transient_ok: NotRequired[bool]
    """True for requests of the crawl's own machinery (``crawler.engine.crawl``): one
    that cannot be stored in a ``JOBDIR`` is kept in memory instead of refused."""


class ReleaseRequests(TypedDict):
    """Engine -> Scheduler: leased requests the engine will not finish (the spider is
    closing): queue them again."""

    type: Literal["release_requests"]
    requests: list
    """The ``crawlfw.http.Request`` objects as the scheduler handed them out."""


class StartCheckpoints(TypedDict):
    """Supervisor -> Scheduler (durable frontier only): checkpoints start at this
    SpiderRunner."""

    type: Literal["start_checkpoints"]
    spider_runner: Any
    """The SpiderRunner's ``pykka.ActorRef``."""


class Checkpoint(TypedDict):
    """Scheduler -> SpiderRunner -> Pipeline -> each Exporter: make what the listed
    leases caused durable, then pass on (see ARCHITECTURE.md, "Lose nothing")."""

    type: Literal["checkpoint"]
    epoch: int
    """The scheduler's checkpoint number (0: the last one, sent as the runner stops)."""
    reply_to: Any
    """The Scheduler's ``pykka.ActorRef``, told ``checkpoint_reached`` at the end."""
    leases: list[int]
    """Leases whose callbacks finished since the last checkpoint (filled by the
    SpiderRunner)."""
    spider_state: str | None
    """``spider.state`` pickled, base64 text, as it was after those callbacks; None
    when the spider has no state."""
    feeds: dict
    """``{feed key: state dict or None}``, filled by each Exporter on the way."""
    next: NotRequired[list]
    """Exporter refs still to pass (Pipeline -> Exporter hops)."""


class CheckpointReached(TypedDict):
    """Last Exporter (or the Pipeline, without exporters) -> Scheduler: ack ``leases``
    and commit, with ``feeds`` and ``spider_state``."""

    type: Literal["checkpoint_reached"]
    epoch: int
    leases: list[int]
    spider_state: str | None
    feeds: dict


class PullRequests(TypedDict):
    """Engine -> Scheduler: grant credit for ``count`` more requests.

    The scheduler sends ``requests_dequeued`` to ``reply_to`` as soon as it has requests,
    never more in total than the credit granted (credit accumulates).
    """

    type: Literal["pull_requests"]
    count: int
    reply_to: Any


class CheckIdle(TypedDict):
    """Engine -> Scheduler: report how many requests are queued (idle detection).

    Because a sender's messages are handled in order, every ``enqueue_requests`` sent
    before the engine saw the work that caused them is handled before this.
    """

    type: Literal["check_idle"]
    token: int
    reply_to: Any


class RequestsDequeued(TypedDict):
    """Scheduler -> Engine: requests to download now (consumes pulled credit)."""

    type: Literal["requests_dequeued"]
    requests: list
    pending: int
    """Requests still queued in the scheduler after these."""


class IdleChecked(TypedDict):
    """Scheduler -> Engine: answer to ``check_idle``."""

    type: Literal["idle_checked"]
    token: int
    pending: int


# --- Downloader -------------------------------------------------------------------------


class Fetch(TypedDict):
    """Engine -> Downloader (of ``request``'s slot): transfer ``request`` with curl."""

    type: Literal["fetch"]
    request: Any
    reply_to: Any


class ResponseDownloaded(TypedDict):
    """Downloader -> Engine: the transfer completed with an HTTP response (any status)."""

    type: Literal["response_downloaded"]
    request: Any
    response: Any
    slot: str


class DownloadFailed(TypedDict):
    """Downloader -> Engine: the transfer failed below HTTP."""

    type: Literal["download_failed"]
    request: Any
    error: Any
    """A ``crawlfw.exceptions.DownloadError``."""
    slot: str


# --- SpiderRunner -----------------------------------------------------------------------


class PullStartRequests(TypedDict):
    """Engine -> SpiderRunner: produce up to ``count`` more start requests."""

    type: Literal["pull_start_requests"]
    count: int


class StartRequestsPulled(TypedDict):
    """SpiderRunner -> Engine: start requests were sent to the scheduler."""

    type: Literal["start_requests_pulled"]
    count: int
    """How many requests were sent to the scheduler (before the dupefilter)."""
    exhausted: bool
    """True once ``start_requests()`` is used up (or raised)."""


class ScrapeResponse(TypedDict):
    """Engine -> SpiderRunner: run the spider middlewares and the callback on a response."""

    type: Literal["scrape_response"]
    request: Any
    response: Any


class ScrapeFailure(TypedDict):
    """Engine -> SpiderRunner: the request failed; run its errback with a Failure."""

    type: Literal["scrape_failure"]
    request: Any
    error: Any
    """The exception (download error, IgnoreRequest, middleware error)."""


class ResponseScraped(TypedDict):
    """SpiderRunner -> Engine: a response or failure was fully handled by the spider."""

    type: Literal["response_scraped"]
    request: Any
    items: int
    """How many items were sent to the pipeline."""
    requests: int
    """How many requests were sent to the scheduler."""
    size: int
    """Bytes of the response body (for the scraper memory cap), 0 for failures."""


# --- Pipeline and Exporter --------------------------------------------------------------


class ProcessItems(TypedDict):
    """SpiderRunner -> Pipeline: run ITEM_PIPELINES over these items, in order."""

    type: Literal["process_items"]
    items: list
    response: Any
    """The response the items came from (None for items from an errback without one)."""
    spider_error: NotRequired[Any]
    """The exception the callback raised after yielding these items: the Pipeline
    reports it ("Spider error processing ...") once they are scraped."""
    request: NotRequired[Any]
    """With ``spider_error``: the request whose callback raised."""


class ItemsProcessed(TypedDict):
    """Pipeline -> Engine: this many items left the pipeline (scraped, dropped or failed)."""

    type: Literal["items_processed"]
    count: int


class ExportItems(TypedDict):
    """Pipeline -> Exporter: items that passed every pipeline; write them to the feed."""

    type: Literal["export_items"]
    items: list


# --- Control endpoint (JSON on a Unix socket; see crawlfw.control) --------------------


class PauseCrawl(TypedDict):
    """Outside (control endpoint) -> Supervisor -> Engine: start no new download (transfers
    in flight finish) and do not close as idle, until ``resume_crawl``."""

    type: Literal["pause_crawl"]
    crawl_id: str


class ResumeCrawl(TypedDict):
    """Outside (control endpoint) -> Supervisor -> Engine: undo ``pause_crawl``."""

    type: Literal["resume_crawl"]
    crawl_id: str


class ScheduleRequest(TypedDict):
    """Outside (control endpoint) -> Supervisor: add a request to a running crawl.

    The Supervisor builds the ``Request`` and forwards it to the engine as ``crawl``;
    answered with ``command_accepted`` or ``control_error`` (unknown crawl, bad URL,
    ``callback`` that is no method of the spider).
    """

    type: Literal["schedule_request"]
    crawl_id: str
    url: str
    callback: str | None
    """The name of a spider method, or None for the spider's ``parse``."""
    priority: int
    """``Request.priority`` (higher first)."""
    dont_filter: bool
    """True to bypass the dupefilter."""


class DownloadRequest(TypedDict):
    """Outside (the attached shell's ``fetch()``) -> control endpoint: download ``url``
    through the crawl's engine (``crawler.engine.download``); answered with
    ``response_fetched``."""

    type: Literal["download_request"]
    crawl_id: str
    url: str
    method: str
    headers: dict
    """Header name -> list of values (str)."""
    body: str
    redirect: bool
    """Follow 3xx redirects (else a 3xx is the response)."""


class StatusReported(TypedDict):
    """Control endpoint -> outside: the answer to ``get_status``."""

    type: Literal["status_reported"]
    pid: int
    crawls: list
    """One dict per crawl of the process: ``crawl_id``, ``spider``, ``state``
    (``running``/``paused``/``closing``), ``pages``, ``items``, ``pending``,
    ``in_flight``, ``slots`` (slot -> requests in flight), ``pages_per_min``,
    ``items_per_min`` (over the last minute), ``errors`` (type -> count),
    ``peak_memory_bytes``, ``uptime_s``, ``jobdir``, ``stats`` (the stats dict, values
    as JSON)."""


class CommandAccepted(TypedDict):
    """Control endpoint -> outside: the command was passed to the crawl."""

    type: Literal["command_accepted"]
    command: str
    crawl_id: str


class ResponseFetched(TypedDict):
    """Control endpoint -> outside: the answer to ``download_request``."""

    type: Literal["response_fetched"]
    url: str
    status: int
    headers: dict
    """Header name -> list of values (str)."""
    body_base64: str
    request_url: str


class ControlError(TypedDict):
    """Control endpoint -> outside: the request was malformed, unknown, refused or failed."""

    type: Literal["control_error"]
    error: str
    """What went wrong, naming the thing at fault."""


# --- Supervision and user actors --------------------------------------------------------


class ChildStopped(TypedDict):
    """Engine -> Supervisor: a child started on demand was stopped (an idle downloader
    reaped)."""

    type: Literal["child_stopped"]
    crawl_id: str
    role: str
    key: str


class RestartChild(TypedDict):
    """timer -> Supervisor: a permanent child's backoff is over; restart it."""

    type: Literal["restart_child"]
    crawl_id: str
    role: str
    key: str
    """The download slot of a downloader, the class path of a user actor."""


class CrawlStopped(TypedDict):
    """Stopping thread -> Supervisor: the crawl's tree is stopped (its spider is closed next); forget the crawl."""

    type: Literal["crawl_stopped"]
    crawl_id: str


class ReapDownloaders(TypedDict):
    """timer -> Engine: stop the downloaders idle since the last tick
    (``DOWNLOADER_IDLE_TIMEOUT``)."""

    type: Literal["reap_downloaders"]


class AddItems(TypedDict):
    """User actor -> Engine: send these items through the pipeline and the feeds."""

    type: Literal["add_items"]
    items: list


class BlockSlot(TypedDict):
    """User actor -> Engine: fail every request for this download slot from now on."""

    type: Literal["block_slot"]
    slot: str
    reason: str
    """Why, named in each request's ``IgnoreRequest``."""


class ItemScraped(TypedDict):
    """Crawl event -> user actor: an item passed every item pipeline."""

    type: Literal["item_scraped"]
    item: Any
    response: Any
    """The response it came from, or None."""


class ItemDropped(TypedDict):
    """Crawl event -> user actor: an item pipeline raised ``DropItem``."""

    type: Literal["item_dropped"]
    item: Any
    response: Any
    exception: Any


class ResponseReceived(TypedDict):
    """Crawl event -> user actor: a response passed the downloader middlewares."""

    type: Literal["response_received"]
    response: Any
    request: Any
    slot: str
    """The request's download slot (normally its host)."""


class RequestScheduled(TypedDict):
    """Crawl event -> user actor: a request entered the scheduler."""

    type: Literal["request_scheduled"]
    request: Any


class RequestDropped(TypedDict):
    """Crawl event -> user actor: the dupefilter dropped a request."""

    type: Literal["request_dropped"]
    request: Any


class SpiderIdle(TypedDict):
    """Crawl event -> user actor: the spider has nothing left to do."""

    type: Literal["spider_idle"]


class SpiderOpened(TypedDict):
    """Crawl event -> user actor: the spider was opened."""

    type: Literal["spider_opened"]


class SpiderError(TypedDict):
    """Crawl event -> user actor: a spider callback raised."""

    type: Literal["spider_error"]
    failure: Any
    """A ``crawlfw.utils.failure.Failure``."""
    response: Any


MESSAGE_TYPES: dict[str, type] = {
    cls.__annotations__["type"].__args__[0]: cls
    for cls in (
        StartCrawl,
        StopCrawl,
        GetStatus,
        ActorFailed,
        ChildStarted,
        SpiderClosing,
        StartEngine,
        Crawl,
        RecheckIdle,
        CloseSpider,
        DownloaderFailed,
        EnqueueRequests,
        ReleaseRequests,
        StartCheckpoints,
        Checkpoint,
        CheckpointReached,
        PullRequests,
        CheckIdle,
        RequestsDequeued,
        IdleChecked,
        Fetch,
        Pump,
        ResponseDownloaded,
        DownloadFailed,
        PullStartRequests,
        StartRequestsPulled,
        ScrapeResponse,
        ScrapeFailure,
        ResponseScraped,
        ProcessItems,
        ItemsProcessed,
        ExportItems,
        PauseCrawl,
        ResumeCrawl,
        ScheduleRequest,
        DownloadRequest,
        StatusReported,
        CommandAccepted,
        ResponseFetched,
        ControlError,
        ChildStopped,
        RestartChild,
        CrawlStopped,
        ReapDownloaders,
        AddItems,
        BlockSlot,
        ItemScraped,
        ItemDropped,
        ResponseReceived,
        RequestScheduled,
        RequestDropped,
        SpiderIdle,
        SpiderOpened,
        SpiderError,
    )
}
"""``type`` string -> TypedDict class, for every message crawlfw's own actors use."""
