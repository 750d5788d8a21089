"""A crawl's life, as the outside and the Supervisor see it: start, stop and status
(``ask`` and its replies), the control endpoint's commands, the Supervisor's own timers.

Part of :mod:`crawlfw.actors.messages` (import them from there); the form of each class
is said there.
"""

import sys
from typing import Annotated, Any, Literal

if sys.version_info >= (3, 11):
    from typing import TypedDict
else:  # NotRequired came in 3.11 (PEP 655); typing's TypedDict of 3.10 ignores it.
    # typing_extensions comes with jsonschema (its `referencing` requires it below 3.13).
    from typing_extensions import TypedDict

from pykka import ActorRef

from crawlfw.actors._types import CrawlerLike
from crawlfw.actors.messages._common import Count, CrawlId, Headers, Reason, Rule, Url

# --- Supervisor -------------------------------------------------------------------------


class StartCrawl(TypedDict):
    """Outside -> Supervisor: build the actor tree for a crawler and start crawling.

    Answered (to ``ask``) with :class:`StartCrawlReply`, or with :class:`StartRefused`
    when the crawl cannot start because of its configuration (a feed that cannot be
    opened: ``CrawlStartError``, one line).
    """

    type: Literal["start_crawl"]
    crawler: Annotated[CrawlerLike, Rule(pyclass="crawlfw.crawler.Crawler")]
    """The ``crawlfw.crawler.Crawler`` whose spider was created (``crawler.spider`` set)."""


class StopCrawl(TypedDict):
    """Outside (``Crawler.stop``, ^C, the control endpoint) -> Supervisor; Scheduler
    (``frontier_failed``, ``stalled``) -> Supervisor; Exporter (``feed_failed``) ->
    Supervisor: close a running crawl's spider (or every crawl) with ``reason``.

    Answered with :class:`StopCrawlReply`.
    """

    type: Literal["stop_crawl"]
    crawl_id: str | None
    """The crawl to close; None closes every crawl of the Supervisor."""
    reason: Reason
    """The ``finish_reason`` recorded in stats, e.g. ``"shutdown"``."""


class GetStatus(TypedDict):
    """Outside -> Supervisor; outside (``crawler.engine``, the control endpoint) -> Engine:
    report status (answered with :class:`SupervisorStatus`, :class:`EngineStatus`).

    The Supervisor answers from what it holds itself and asks no child; the control
    endpoint asks each crawl's Engine for the in-flight figures.
    """

    type: Literal["get_status"]


class ActorFailed(TypedDict):
    """Any child -> Supervisor: the child raised an unhandled exception and is stopping."""

    type: Literal["actor_failed"]
    crawl_id: str
    """The crawl the child belongs to ("" for an actor outside any crawl)."""
    role: Annotated[str, Rule(minLength=1)]
    """The child's ``role``: ``engine``, ``scheduler``, ``downloader``, ``spider_runner``,
    ``pipeline``, ``exporter``, or a user actor's role (``custom`` by default)."""
    key: str
    """Distinguishes children of one role: the downloader's number in the pool (``"0"``,
    ``"1"``...) for downloaders, else ``""``."""
    error: str
    """``"ExceptionType: message"`` of the failure (the traceback is logged by the child)."""


class SpiderClosing(TypedDict):
    """Engine -> Supervisor: the engine decided to close the spider; stop the tree in order."""

    type: Literal["spider_closing"]
    crawl_id: str
    """The crawl whose spider closes."""
    reason: Reason
    """The ``finish_reason``."""


# --- Control endpoint (JSON on a Unix socket; see crawlfw.control) --------------------


class PauseCrawl(TypedDict):
    """Outside (control endpoint) -> Supervisor -> Engine: start no new download (transfers
    in flight finish) and do not close as idle, until ``resume_crawl``."""

    type: Literal["pause_crawl"]
    crawl_id: CrawlId
    """The crawl to pause."""


class ResumeCrawl(TypedDict):
    """Outside (control endpoint) -> Supervisor -> Engine: undo ``pause_crawl``."""

    type: Literal["resume_crawl"]
    crawl_id: CrawlId
    """The crawl to resume."""


class ScheduleRequest(TypedDict):
    """Outside (control endpoint) -> Supervisor: add a request to a running crawl.

    The Supervisor builds the ``Request`` and forwards it to the engine as ``crawl``;
    answered with ``command_accepted`` or ``control_error`` (unknown crawl, bad URL,
    ``callback`` that is no method of the spider).
    """

    type: Literal["schedule_request"]
    crawl_id: CrawlId
    """The crawl to add the request to."""
    url: Url
    """The request's URL."""
    callback: Annotated[str | None, Rule(pattern="^[A-Za-z_][A-Za-z0-9_]*$")]
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
    crawl_id: CrawlId
    """The crawl whose engine downloads."""
    url: Url
    """The URL to download."""
    method: Annotated[str, Rule(pattern="^[A-Z]{1,16}$")]
    """The HTTP method (``GET``, ``POST``...)."""
    headers: Headers
    """Header name -> list of values (str)."""
    body: str
    """The request body, as text (UTF-8 on the wire)."""
    redirect: bool
    """Follow 3xx redirects (else a 3xx is the response)."""


class SharedWorkerStatus(TypedDict):
    """One worker of a shared crawl in ``status_reported``."""

    worker: str
    """The worker's id (``FRONTIER_WORKER``)."""
    pages: Count
    """Responses this worker received."""
    items: Count
    """Items this worker scraped."""
    last_seen_s: float | None
    """Seconds since it last renewed its leases (None: it never did)."""


class SharedCrawlStatus(TypedDict):
    """The whole crawl on a shared frontier, as the workers last published it."""

    worker: str
    """This process's worker id, as the shared frontier knows it (``FRONTIER_WORKER``,
    default ``<hostname>-<pid>``)."""
    queued: Count
    """Requests in the shared queue."""
    leased: Count
    """Requests leased by any worker."""
    pages: Count
    """Responses received by every worker."""
    items: Count
    """Items scraped by every worker."""
    workers: list[SharedWorkerStatus]
    """Every worker that published figures, by id."""
    frontier: str
    """The shared crawl: ``<FRONTIER_URL without password> <key>`` (the same for each
    of its workers)."""


class DnsStatus(TypedDict):
    """Name resolution in ``status_reported`` (crawlfw's resolver, the ``dns/*``
    stats, summed over the downloaders as last published: once a second)."""

    in_flight: Count
    """Lookups asked of the name servers and not answered yet."""
    queued: Count
    """Lookups waiting for one of ``DNS_CONCURRENT_LOOKUPS``."""
    lookups: Count
    """Lookups asked so far."""
    cache_hits: Count
    """Transfers served without a new lookup."""
    hit_rate: float | None
    """``cache_hits / (cache_hits + lookups)``; None before either."""
    failures: Count
    """Lookups that failed, all kinds."""


class CrawlStatus(TypedDict):
    """One crawl of the process in ``status_reported``."""

    crawl_id: str
    """The crawl's id."""
    spider: str
    """The spider's ``name``."""
    state: Literal["running", "paused", "closing"]
    """What the engine is doing."""
    pages: Count
    """Responses received (``response_received_count``)."""
    items: Count
    """Items scraped (``item_scraped_count``)."""
    pending: int
    """Requests queued (enqueued - dequeued) plus those held by a pause."""
    in_flight: int | None
    """Transfers in flight; None when the engine did not answer in time (busy)."""
    slots: dict[str, int]
    """Download slot -> requests at its downloader (queued in the slot or transferring),
    as the downloaders' slot tables say; slots with none left out."""
    pages_per_min: float
    """Pages over the last minute."""
    items_per_min: float
    """Items over the last minute."""
    errors: dict[str, int]
    """Error type -> count (downloader exceptions, spider exceptions, HTTP errors)."""
    peak_memory_bytes: Count
    """Peak resident memory of the process, bytes."""
    uptime_s: float
    """Seconds since the crawl started."""
    jobdir: str | None
    """The crawl's ``JOBDIR``, or None."""
    stats: dict[str, Any]
    """The stats dict, values as JSON (dates as ISO 8601 text)."""
    shared: SharedCrawlStatus | None
    """With a shared frontier (``FRONTIER_URL``): the whole crawl's figures; else None."""
    dns: DnsStatus | None
    """Name resolution with crawlfw's resolver; None with libcurl's
    (``DNS_RESOLVER = 'crawlfw.resolver.LibcurlResolver'``)."""


class StatusReported(TypedDict):
    """Control endpoint -> outside: the answer to ``get_status``."""

    type: Literal["status_reported"]
    pid: Annotated[int, Rule(minimum=1)]
    """The crawling process's id."""
    crawls: list[CrawlStatus]
    """One entry per crawl of the process."""


class CommandAccepted(TypedDict):
    """Control endpoint -> outside: a pause_crawl, resume_crawl, stop_crawl or
    schedule_request was passed to the crawl."""

    type: Literal["command_accepted"]
    command: Literal["pause_crawl", "resume_crawl", "stop_crawl", "schedule_request"]
    """The command's ``type``."""
    crawl_id: CrawlId
    """The crawl it was passed to."""


class ResponseFetched(TypedDict):
    """Control endpoint -> outside: the answer to ``download_request``."""

    type: Literal["response_fetched"]
    url: Annotated[str, Rule(minLength=1)]
    """The response's URL (after redirects)."""
    status: Annotated[int, Rule(minimum=100, maximum=999)]
    """The HTTP status code."""
    headers: Headers
    """Header name -> list of values (str)."""
    body_base64: str
    """The response body, base64 text."""
    request_url: Annotated[str, Rule(minLength=1)]
    """The URL that was asked for."""


class ControlError(TypedDict):
    """Control endpoint -> outside: the request was malformed, unknown, refused or failed."""

    type: Literal["control_error"]
    error: Annotated[str, Rule(minLength=1)]
    """What went wrong, naming the thing at fault."""


# --- The dashboard's history (crawlfw.dashboard), over the control endpoint -------------


class GetHistory(TypedDict):
    """Outside (``crawlfw dashboard``) -> control endpoint: the samples of a crawl kept
    since ``since``, and its recent errors; answered with ``history_reported``."""

    type: Literal["get_history"]
    crawl_id: CrawlId
    """The crawl whose history is asked."""
    since: float | None
    """Only the samples and errors after this time (unix seconds); None: all kept."""


class GetSample(TypedDict):
    """Outside (``crawlfw dashboard``'s ``/metrics``) -> control endpoint: a sample of a
    crawl taken now; answered with ``sample_reported``."""

    type: Literal["get_sample"]
    crawl_id: CrawlId
    """The crawl to sample."""


class CommandSharedCrawl(TypedDict):
    """Outside (``crawlfw dashboard``'s whole view) -> control endpoint: pause, resume
    or stop every worker of the shared crawl (``FRONTIER_URL``) this crawl is a worker
    of, wherever they run, by writing the command in its Redis
    (:mod:`crawlfw.core.frontier.redis_control`: each worker follows it at its next
    figures read, within ``FIGURES_INTERVAL_S``); answered with
    ``shared_command_published`` or ``control_error`` (not a shared crawl, Redis
    unreachable)."""

    type: Literal["command_shared_crawl"]
    crawl_id: CrawlId
    """A crawl of this process that is a worker of the shared crawl."""
    command: Literal["pause", "resume", "stop"]
    """What every worker does."""
    reason: Reason
    """A stop's ``finish_reason`` on every worker (``shutdown``, as ``crawlfw stop``)."""


class SharedCommandPublished(TypedDict):
    """Control endpoint -> outside: the answer to ``command_shared_crawl``: the command
    is in Redis, for every worker to follow."""

    type: Literal["shared_command_published"]
    crawl_id: CrawlId
    """The crawl it was asked of."""
    command: Literal["pause", "resume", "stop"]
    """The command written."""
    seq: Annotated[int, Rule(minimum=1)]
    """Its number among the shared crawl's commands."""
    frontier: str
    """The shared crawl: ``<FRONTIER_URL without password> <key>``."""


class LatencyFigures(TypedDict):
    """Download latencies (time to the first byte) counted in buckets."""

    buckets: list[float]
    """Upper bounds of the buckets, seconds, ascending."""
    counts: list[Count]
    """Responses per bucket (not cumulative), one more than ``buckets``: the last counts
    those slower than every bound."""
    sum: float
    """Seconds of every latency counted, summed."""


class FrontierFigures(TypedDict):
    """The crawl's requests where they wait."""

    queued: Count
    """Requests queued (enqueued - dequeued, plus those a pause holds)."""
    in_flight: Count
    """Transfers in flight (the engine's figure)."""
    leased: Count
    """Requests handed out by the frontier and not reported finished (the whole crawl's
    leases with a shared frontier)."""
    on_disk: Count | None
    """Queued requests on disk (spilled, or in a ``JOBDIR``'s SQLite); None when the
    frontier keeps none there (memory, Redis)."""


class BusyHost(TypedDict):
    """One of the hosts with the most requests queued."""

    host: str
    """The host's key (its download slot)."""
    queued: Count
    """Requests queued for it."""
    in_flight: Count
    """Its requests leased and not finished."""
    delay: float
    """Its download delay now, seconds."""


class HostFigures(TypedDict):
    """The hosts with requests queued: ready to start one, or waiting."""

    ready: Count | None
    """Hosts that may start a request now; None when not computed (many hosts and no
    dashboard looking, or a shared frontier)."""
    waiting: Count | None
    """Hosts waiting for their delay or at their concurrency; None as ``ready``."""
    busiest: list[BusyHost]
    """The hosts with the most requests queued, most first (at most 10)."""


class ActorHealth(TypedDict):
    """One actor of the crawl's tree."""

    name: str
    """Its role (``engine``, ``downloader 0``, ``exporter <feed>``, a user actor's class)."""
    restarts: Count
    """Times the Supervisor restarted it."""
    mailbox: Count
    """Messages waiting in its inbox."""
    cpu: float | None
    """CPU seconds its current thread used; None when unknown."""


class MemoryFigures(TypedDict):
    """The process's memory against its limits."""

    rss: Count
    """Resident memory now, bytes."""
    limit: Count | None
    """``MEMUSAGE_LIMIT_MB`` in bytes; None when unset."""
    warning: Count | None
    """``MEMUSAGE_WARNING_MB`` in bytes; None when unset."""


class RevisitFigures(TypedDict):
    """Revisits of a continuous crawl."""

    due_now: Count
    """Pages due for a revisit now."""
    next_due: float | None
    """When the next one falls due (unix seconds); None: none planned."""
    scheduled: Count
    """Pages on the revisit schedule."""
    changed: Count
    """Revisits whose page had changed (``revisit/changed``)."""
    unchanged: Count
    """Revisits whose page had not (``revisit/unchanged``: a 304 or the same digest)."""
    gone: Count
    """Revisits answered 404 or 410 (``revisit/gone``)."""


class SharedWorkerFigures(TypedDict):
    """One worker's counters in a sample's ``shared`` figures."""

    worker: str
    """The worker's id (``FRONTIER_WORKER``)."""
    pages: Count
    """Responses it received, as it last published them."""
    items: Count
    """Items it scraped, as it last published them."""


class SharedFigures(TypedDict):
    """The whole crawl on a shared frontier (``FRONTIER_URL``), as the workers last
    published it."""

    worker: str
    """This process's worker id, as the shared frontier knows it (``FRONTIER_WORKER``,
    default ``<hostname>-<pid>``)."""
    queued: Count
    """Requests in the shared queue."""
    leased: Count
    """Requests leased by any worker."""
    pages: Count
    """Responses received by every worker."""
    items: Count
    """Items scraped by every worker."""
    workers: Count
    """Workers that published figures."""
    by_worker: list[SharedWorkerFigures]
    """Each worker's counters (``pages`` and ``items`` are their sums), by worker id;
    the first 64 of a crawl of more workers."""


class Sample(TypedDict):
    """One sample of a crawl's figures (one a second; counters cumulative since the
    process started the crawl)."""

    t: float
    """When, unix seconds."""
    pages: Count
    """Responses received (``response_received_count``)."""
    items: Count
    """Items scraped (``item_scraped_count``)."""
    bytes: Count
    """Response bytes (``downloader/response_bytes``)."""
    status: dict[str, Count]
    """HTTP status -> responses (``downloader/response_status_count/<status>``)."""
    errors: dict[str, Count]
    """Error kind -> count (download exceptions, spider exceptions, ignored statuses)."""
    latency: LatencyFigures
    """The download latency histogram."""
    frontier: FrontierFigures
    """Requests queued, in flight, leased, on disk."""
    hosts: HostFigures
    """Hosts ready and waiting, the busiest."""
    actors: list[ActorHealth]
    """Each actor of the crawl's tree."""
    memory: MemoryFigures
    """Memory against its limits."""
    revisit: RevisitFigures | None
    """Revisits due in a continuous crawl; None otherwise."""
    state: Literal["running", "paused", "closing"]
    """What the engine is doing."""
    shared: SharedFigures | None
    """The whole shared crawl (``FRONTIER_URL``); None otherwise."""


class RecentError(TypedDict):
    """An ERROR logged by the crawl process."""

    t: float
    """When, unix seconds."""
    kind: str
    """The exception's class name, or the log level without one."""
    message: str
    """The log message (at most 2,000 characters)."""
    traceback: str | None
    """The formatted traceback (its last 20,000 characters); None without one."""
    url: str | None
    """The first URL in the message; None without one."""


class HistoryReported(TypedDict):
    """Control endpoint -> outside: the answer to ``get_history``."""

    type: Literal["history_reported"]
    crawl_id: CrawlId
    """The crawl."""
    interval: float
    """Seconds between two samples at full resolution (older ones are sparser)."""
    samples: list[Sample]
    """The samples kept after ``since``, oldest first."""
    errors: list[RecentError]
    """The recent errors logged after ``since``, oldest first."""


class SampleReported(TypedDict):
    """Control endpoint -> outside: the answer to ``get_sample``."""

    type: Literal["sample_reported"]
    crawl_id: CrawlId
    """The crawl."""
    sample: Sample
    """Its figures now."""


# --- Replies to ``ask`` (no ``type`` where the code sends none) ---------------------------


class StartCrawlReply(TypedDict):
    """Supervisor -> outside: the answer to ``start_crawl`` when the crawl started."""

    crawl_id: CrawlId
    """The new crawl's id (``"<spider name>-<n>"``)."""
    engine: ActorRef
    """The crawl's EngineActor ref (``crawler.engine.ref``)."""


class StartRefused(TypedDict):
    """Supervisor -> outside: the answer to ``start_crawl`` when the configuration stops the
    crawl from starting (``CrawlStartError``)."""

    type: Literal["start_refused"]
    error: Annotated[str, Rule(minLength=1)]
    """One line naming what could not be opened and why."""


class MessageRejected(TypedDict):
    """Any boundary actor -> outside: the answer to an ``ask`` whose message broke its
    schema (the actor lives on)."""

    type: Literal["message_rejected"]
    error: Annotated[str, Rule(minLength=1)]
    """The ``InvalidMessage`` text: the type, the key path and the rule broken."""


class StopCrawlReply(TypedDict):
    """Supervisor -> outside: the answer to ``stop_crawl``."""

    stopping: list[str]
    """The crawls being closed (unknown ids are left out)."""


class CrawlTreeStatus(TypedDict):
    """One crawl in :class:`SupervisorStatus`."""

    spider: str
    """The spider's ``name``."""
    closing: str | None
    """The ``finish_reason`` once the tree is being stopped, else None."""
    started_at: float
    """When the Supervisor started the tree, seconds since the epoch."""
    downloaders: list[str]
    """The keys of the crawl's downloader actors (``"0"``, ``"1"``...), sorted."""
    stats: dict[str, Any]
    """``crawler.stats.get_stats()`` (Python values)."""


class SupervisorStatus(TypedDict):
    """Supervisor -> outside: the answer to ``get_status``, from the Supervisor's own records
    (it asks no child)."""

    crawls: dict[str, CrawlTreeStatus]
    """Crawl id -> status of every crawl the Supervisor runs."""


class EngineStatus(TypedDict):
    """Engine -> outside: the answer to ``get_status`` asked of ``crawler.engine.ref``."""

    running: bool
    """True once ``start_engine`` was handled."""
    closing: str | None
    """The close reason once the spider is closing, else None."""
    downloading: Count
    """Transfers in flight."""
    in_spider: Count
    """Responses and failures sent to the SpiderRunner, not yet scraped."""
    in_pipeline: Count
    """Items sent to the pipeline, not yet processed."""
    start_requests_exhausted: bool
    """True once ``start_requests()`` is used up."""
    credit: Count
    """Requests granted to the scheduler and not yet received."""
    paused: bool
    """True between ``pause_crawl`` and ``resume_crawl``."""
    held: Count
    """Requests held back while paused."""


# --- Supervision and user actors --------------------------------------------------------


class RestartChild(TypedDict):
    """Timer -> Supervisor: a permanent child's backoff is over; restart it."""

    type: Literal["restart_child"]
    crawl_id: CrawlId
    """The crawl the child belongs to."""
    role: Annotated[str, Rule(minLength=1)]
    """The child's role (``downloader`` or a user actor's)."""
    key: str
    """The downloader's number in the pool, the class path of a user actor."""


class CrawlStopped(TypedDict):
    """Stopping thread -> Supervisor: the crawl's tree is stopped (its spider is closed
    next); forget the crawl."""

    type: Literal["crawl_stopped"]
    crawl_id: CrawlId
    """The crawl whose tree stopped."""
