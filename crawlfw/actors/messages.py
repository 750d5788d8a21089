"""Every message the crawlfw actors exchange, one TypedDict per ``type``: the one source.

A message is a flat ``dict`` with a ``type`` key. Types are snake_case: imperative for
commands (``fetch``, ``enqueue_requests``), past tense for events (``response_downloaded``,
``items_processed``). Replies go to the ``reply_to`` actor ref named in the command, never
to a future: actors only ``tell`` each other. ``ask`` (always with a timeout) is for the
outside (CLI, shell, tests) and is answered by the Supervisor (and the Engine's
``get_status``); those replies are TypedDicts here too (:data:`REPLY_TYPES`).

Each class below is the definition of its message: the field's annotation is its type, the
string under the field is its one-line doc, and the class docstring's first paragraph says
who sends it to whom. The JSON Schemas in ``conf/schemas/messages.json`` (``$defs/<type>``)
are generated from these classes by :mod:`crawlfw.actors._schema` (``python -m
crawlfw.actors._schema > conf/schemas/messages.json``), and a test checks that the shipped
file is what the generator writes; :mod:`crawlfw.actors._validation` checks messages
against that file at the boundaries (messages from outside the tree: the Supervisor,
``crawler.engine.crawl``, the control endpoint) and, with ``MESSAGE_VALIDATION = 'all'`` or
``CRAWLFW_VALIDATE_MESSAGES=all`` (the test suite), on every message.

How an annotation becomes a schema: ``str``/``int``/``float``/``bool``/``None`` are the JSON
types; ``Literal[...]`` is ``const`` (one value) or ``enum``; ``list[T]`` an array of ``T``;
``dict[str, T]`` an object of ``T`` values (bare ``dict``: any object); ``T | None`` adds
``null``; a nested TypedDict is an object with exactly its keys; ``NotRequired[T]`` makes
the key optional. Any other class (``Request``, ``Response``, ``BaseItem``, ``ActorRef``,
``BaseException``) is a Python object, schema keyword ``pyclass`` with the class's shortest
public dotted path; a class this module must not import (it would point up the layers:
``Crawler``) is written as a string with its dotted path. What a type cannot say
(``minimum``, ``minItems``, ``pattern``...) goes in ``Annotated[T, Rule(keyword=value)]``.

A sent object belongs to the receiver: never mutate a request, response or item after
sending it (pykka does not copy messages).

Who sends what (see ARCHITECTURE.md for the picture)::

    outside    -> Supervisor : start_crawl, stop_crawl, get_status, crawl (forwarded)
    outside    -> Supervisor : pause_crawl, resume_crawl (forwarded), schedule_request
                              (from the control endpoint, see crawlfw.control)
    outside    -> Engine     : get_status (crawler.engine, the control endpoint)
    endpoint   -> outside    : status_reported, command_accepted, response_fetched,
                              control_error (replies on the control socket)
    any child  -> Supervisor : actor_failed
    timer      -> Supervisor : restart_child (a backoff is over)
    stopping thread -> Supervisor : crawl_stopped
    user actor -> Engine     : crawl, add_items, block_slot, close_spider,
                              idle_barrier_passed
    signal relay -> user actor : item_scraped, item_dropped, response_received,
                              response_downloaded, request_scheduled, request_dropped,
                              spider_idle, spider_error, spider_opened (crawlfw.actors.EVENTS),
                              idle_barrier (after spider_idle)
    Engine     -> Supervisor : spider_closing
    Supervisor -> Engine     : start_engine, close_spider, downloader_failed
    Supervisor -> Engine     : crawl (forwarded from another thread or process)
    crawler.engine.crawl -> Engine : crawl (checked against its schema first)
    timer      -> Engine     : recheck_idle (also ``stuck``: a stuck crawl's recheck)
    timer      -> Scheduler  : frontier_tick (FRONTIER_URL)
    Downloader -> itself     : pump
    AutoThrottle (Engine's thread) -> Downloader : set_slot_delay
    Engine     -> Scheduler  : enqueue_requests, release_requests, pull_requests, check_idle
    timer      -> Scheduler  : dispatch_due (a host of the frontier is ready by its delay)
    Supervisor -> Scheduler  : start_checkpoints (JOBDIR)
    Scheduler  -> SpiderRunner -> Pipeline -> Exporter(s) : checkpoint (JOBDIR)
    Exporter (or Pipeline) -> Scheduler : checkpoint_reached (JOBDIR)
    Scheduler  -> Supervisor : stop_crawl (the frontier failed; stalled: STALL_TIMEOUT)
    Scheduler  -> Engine     : requests_dequeued, idle_checked
    Engine     -> Downloader : fetch
    Downloader -> Engine     : response_downloaded, download_failed
    Engine     -> SpiderRunner : pull_start_requests, scrape_response, scrape_failure
    SpiderRunner -> Engine   : start_requests_pulled, response_scraped, close_spider
    SpiderRunner -> Scheduler : enqueue_requests
    SpiderRunner -> Pipeline : process_items
    Pipeline   -> Engine     : items_processed
    Pipeline   -> Exporter   : export_items

To add a message type: write its TypedDict here (every field documented), list it in
:data:`MESSAGE_TYPES`, regenerate ``conf/schemas/messages.json`` with
:mod:`crawlfw.actors._schema`; ``tests/actors/test_messages.py`` fails until the shipped
file is what the generator writes.
"""

import sys
from typing import Annotated, Any, Literal

if sys.version_info >= (3, 11):
    from typing import NotRequired, TypedDict
else:  # NotRequired came in 3.11 (PEP 655); typing's TypedDict of 3.10 ignores it.
    # typing_extensions comes with jsonschema (its `referencing` requires it below 3.13).
    from typing_extensions import NotRequired, TypedDict

from pykka import ActorRef

from crawlfw.actors._types import CrawlerLike
from crawlfw.http import Request, Response
from crawlfw.item import AnyItem
from crawlfw.utils.failure import Failure

__all__ = [
    "Message",
    "StartCrawl",
    "StopCrawl",
    "GetStatus",
    "ActorFailed",
    "SpiderClosing",
    "StartEngine",
    "Crawl",
    "RecheckIdle",
    "DispatchDue",
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
    "SetSlotDelay",
    "GetSlots",
    "SlotState",
    "SlotsReport",
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
    "StartCrawlReply",
    "StartRefused",
    "MessageRejected",
    "StopCrawlReply",
    "SupervisorStatus",
    "CrawlTreeStatus",
    "EngineStatus",
    "CrawlStatus",
    "StartTaken",
    "Rule",
    "Item",
    "RestartChild",
    "CrawlStopped",
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
    "REPLY_TYPES",
]

class Rule:
    """JSON Schema keywords that a Python type cannot say, for ``Annotated[T, Rule(...)]``.

    ``Annotated[int, Rule(minimum=1)]`` is ``{"type": "integer", "minimum": 1}``; the
    keywords (``minimum``, ``maximum``, ``minLength``, ``maxLength``, ``minItems``,
    ``pattern``...) are merged into the schema of ``T`` as written (draft 2020-12).

    Args:
        **keywords: JSON Schema keyword -> JSON value.
    """

    __slots__ = ("keywords",)

    def __init__(self, **keywords):
        self.keywords = keywords

    def __repr__(self):
        return f"Rule({', '.join(f'{k}={v!r}' for k, v in self.keywords.items())})"


Message = dict[str, Any]
"""Any message: a dict with at least ``type`` (str)."""

Item = AnyItem
"""A scraped item of any type ``itemadapter`` adapts: a dict, a ``crawlfw.item.Item``, a
dataclass, attrs or pydantic instance (``crawlfw.item.AnyItem``)."""

Count = Annotated[int, Rule(minimum=0)]
"""A number of things (requests, items, bytes): 0 or more."""

Reason = Annotated[str, Rule(minLength=1)]
"""A ``finish_reason`` (``"finished"``, ``"shutdown"``, ``"closespider_timeout"``...)."""

CrawlId = Annotated[str, Rule(minLength=1)]
"""A crawl's id as the Supervisor named it (``"<spider name>-<n>"``)."""

Url = Annotated[str, Rule(minLength=1, maxLength=8192)]
"""An absolute URL, as JSON text."""

Headers = dict[str, list[str]]
"""Header name -> list of values (str)."""


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
    """Outside -> Supervisor: close a running crawl's spider (or every crawl) with ``reason``.

    Answered with :class:`StopCrawlReply`.
    """

    type: Literal["stop_crawl"]
    crawl_id: str | None
    """The crawl to close; None closes every crawl of the Supervisor."""
    reason: Reason
    """The ``finish_reason`` recorded in stats, e.g. ``"shutdown"``."""


class GetStatus(TypedDict):
    """Outside -> Supervisor (answered with :class:`SupervisorStatus`) or outside -> Engine
    (``crawler.engine.ref``, answered with :class:`EngineStatus`): report status.

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


# --- Engine -----------------------------------------------------------------------------


class StartEngine(TypedDict):
    """Supervisor -> Engine: every actor is up; start pulling start requests."""

    type: Literal["start_engine"]
    spider_runner: ActorRef
    """The SpiderRunner's ActorRef (started after the engine, which it needs)."""
    pipeline: NotRequired[ActorRef]
    """The Pipeline's ActorRef, where ``add_items`` go (from user actors)."""


class Crawl(TypedDict):
    """Outside (``crawler.engine.crawl(request, spider)``) -> Engine, or outside ->
    Supervisor -> Engine: schedule a request in a running crawl.

    ``crawler.engine.crawl`` checks the message against its schema (unless
    ``MESSAGE_VALIDATION = 'off'``) and tells the engine directly; the Supervisor forwards
    the ones it receives to the crawl's engine.
    """

    type: Literal["crawl"]
    crawl_id: str
    """The crawl (the Supervisor forwards the message to its engine; the engine ignores it)."""
    request: Request
    """The ``crawlfw.http.Request`` to schedule (the dupefilter applies)."""


class RecheckIdle(TypedDict):
    """Timer -> Engine: fire ``spider_idle`` again after a handler raised DontCloseSpider,
    or (``stuck``) ask the Scheduler again after it held requests it could not dispatch."""

    type: Literal["recheck_idle"]
    stuck: NotRequired[bool]
    """True: the recheck of a stuck crawl (see ``STALL_TIMEOUT``), not a ``spider_idle``
    one."""


class FrontierTick(TypedDict):
    """Timer -> Scheduler (shared frontier): renew leases, poll the shared queue, answer
    a held ``check_idle``."""

    type: Literal["frontier_tick"]


class DispatchDue(TypedDict):
    """Timer -> Scheduler: a host of the frontier becomes ready by its delay now
    (``DOWNLOAD_DELAY``, AutoThrottle's); lease against the credit still unused."""

    type: Literal["dispatch_due"]


class CloseSpider(TypedDict):
    """Anyone -> Engine: close the spider with ``reason`` (closespider, CloseSpider, ^C)."""

    type: Literal["close_spider"]
    reason: Reason
    """The ``finish_reason`` recorded in stats."""


class DownloaderFailed(TypedDict):
    """Supervisor -> Engine: downloader ``slot`` of the pool died and ``ref`` replaces it;
    the engine puts ``ref`` in its place and re-sends the requests that were in flight
    in the slots it serves."""

    type: Literal["downloader_failed"]
    slot: str
    """The number of the downloader in the pool (``"0"``, ``"1"``...), its child key."""
    ref: NotRequired[ActorRef]
    """The restarted downloader (absent: a downloader's death reported without one)."""


# --- Scheduler --------------------------------------------------------------------------


class Pump(TypedDict):
    """Downloader -> itself: wait in curl once and deliver the finished transfers."""

    type: Literal["pump"]


class StartTaken(TypedDict):
    """Start requests taken from ``start_requests()`` (inside ``enqueue_requests``)."""

    consumed: Count
    """How many start requests this message carries from ``start_requests()``."""
    exhausted: bool
    """True once ``start_requests()`` is used up."""


class EnqueueRequests(TypedDict):
    """Engine or SpiderRunner -> Scheduler: add requests (dupefilter applied)."""

    type: Literal["enqueue_requests"]
    requests: list[Request]
    """``crawlfw.http.Request`` objects, in the order the spider produced them."""
    done: NotRequired[list[int]]
    """Leases these requests replace (a redirect or retry of a leased request): acked in
    the same transaction as the push."""
    start: NotRequired[StartTaken]
    """From the SpiderRunner with a durable frontier: start requests taken for this
    message (committed with the requests, so a resumed job skips them)."""
    transient_ok: NotRequired[bool]
    """True for requests of the crawl's own machinery (``crawler.engine.crawl``): one
    that cannot be stored in a ``JOBDIR`` is kept in memory instead of refused."""


class ReleaseRequests(TypedDict):
    """Engine -> Scheduler: leased requests the engine will not finish (the spider is
    closing): queue them again."""

    type: Literal["release_requests"]
    requests: list[Request]
    """The ``crawlfw.http.Request`` objects as the scheduler handed them out."""


class StartCheckpoints(TypedDict):
    """Supervisor -> Scheduler (durable frontier only): checkpoints start at this
    SpiderRunner."""

    type: Literal["start_checkpoints"]
    spider_runner: ActorRef
    """The SpiderRunner's ``pykka.ActorRef``."""


class Checkpoint(TypedDict):
    """Scheduler -> SpiderRunner -> Pipeline -> each Exporter: make what the listed
    leases caused durable, then pass on (see ARCHITECTURE.md, "Lose nothing")."""

    type: Literal["checkpoint"]
    epoch: Count
    """The scheduler's checkpoint number (0: the last one, sent as the runner stops)."""
    reply_to: ActorRef
    """The Scheduler's ``pykka.ActorRef``, told ``checkpoint_reached`` at the end."""
    leases: list[int]
    """Leases whose callbacks finished since the last checkpoint (filled by the
    SpiderRunner)."""
    spider_state: str | None
    """``spider.state`` pickled, base64 text, as it was after those callbacks; None
    when the spider has no state."""
    feeds: dict[str, dict | None]
    """``{feed key: state dict or None}``, filled by each Exporter on the way."""
    next: NotRequired[list[ActorRef]]
    """Exporter refs still to pass (Pipeline -> Exporter hops)."""


class CheckpointReached(TypedDict):
    """Last Exporter (or the Pipeline, without exporters) -> Scheduler: ack ``leases``
    and commit, with ``feeds`` and ``spider_state``."""

    type: Literal["checkpoint_reached"]
    epoch: Count
    """The ``epoch`` of the ``checkpoint`` this answers."""
    leases: list[int]
    """The leases to ack (their callbacks' output is durable now)."""
    spider_state: str | None
    """``spider.state`` pickled, base64 text, or None."""
    feeds: dict[str, dict | None]
    """``{feed key: state dict or None}`` to commit with the leases."""


class PullRequests(TypedDict):
    """Engine -> Scheduler: grant credit for ``count`` more requests.

    The scheduler sends ``requests_dequeued`` to ``reply_to`` as soon as it has requests,
    never more in total than the credit granted (credit accumulates).
    """

    type: Literal["pull_requests"]
    count: Annotated[int, Rule(minimum=0)]
    """How many more requests the engine can take (0: only ``finished``/``delays`` to
    tell, the scheduler still holds unused credit)."""
    reply_to: ActorRef
    """The Engine's ``pykka.ActorRef``."""
    finished: NotRequired[dict[str, int]]
    """Requests handed out with a host key (``request._host``) that left the download
    stage since the last ``pull_requests`` (downloaded, failed, dropped, answered by a
    middleware, replaced, parked), counted per host key: those hosts' in-flight counts
    go down in the frontier's ready-set."""
    delays: NotRequired[dict[str, Annotated[float, Rule(minimum=0)]]]
    """AutoThrottle's new start delays by slot key, in seconds, set since the last
    ``pull_requests`` (the frontier spaces its hosts' starts by them)."""


class CheckIdle(TypedDict):
    """Engine -> Scheduler: report how many requests are queued (idle detection).

    Because a sender's messages are handled in order, every ``enqueue_requests`` sent
    before the engine saw the work that caused them is handled before this.
    """

    type: Literal["check_idle"]
    token: int
    """The engine's idle-check number, echoed in ``idle_checked``."""
    reply_to: ActorRef
    """The Engine's ``pykka.ActorRef``."""
    stalled_s: NotRequired[Annotated[float, Rule(minimum=0)]]
    """Set when the crawl has been stuck this many seconds (requests pending, none
    dispatched, nothing in flight), past ``STALL_TIMEOUT``: the Scheduler logs what it
    holds and stops the crawl with ``stalled``."""


class RequestsDequeued(TypedDict):
    """Scheduler -> Engine: requests to download now (consumes pulled credit)."""

    type: Literal["requests_dequeued"]
    requests: Annotated[list[Request], Rule(minItems=1)]
    """The ``crawlfw.http.Request`` objects, highest priority first."""
    pending: Count
    """Requests still queued in the scheduler after these."""


class IdleChecked(TypedDict):
    """Scheduler -> Engine: answer to ``check_idle``."""

    type: Literal["idle_checked"]
    token: int
    """The ``token`` of the ``check_idle`` this answers."""
    pending: Count
    """Requests queued in the scheduler."""


# --- Downloader -------------------------------------------------------------------------


class Fetch(TypedDict):
    """Engine -> Downloader (the one of the pool serving ``slot``): transfer ``request``
    with curl when the slot's politeness allows."""

    type: Literal["fetch"]
    request: Request
    """The ``crawlfw.http.Request``, after the downloader middlewares."""
    slot: str
    """The request's download slot key (``crawlfw.core.transport.slot.slot_key``; by IP with
    ``CONCURRENT_REQUESTS_PER_IP``)."""
    reply_to: ActorRef
    """The Engine's ``pykka.ActorRef``."""


class SetSlotDelay(TypedDict):
    """AutoThrottle (on the Engine's thread) -> Downloader (the one serving ``slot``): the
    slot's new delay between request starts."""

    type: Literal["set_slot_delay"]
    slot: str
    """The download slot key."""
    delay_s: Annotated[float, Rule(minimum=0)]
    """Seconds between two starts in that slot (randomized if ``RANDOMIZE_DOWNLOAD_DELAY``)."""


class GetSlots(TypedDict):
    """Outside (``crawler.engine.downloader.slots``, on any thread but a downloader's) ->
    Downloader: report the download slots it serves now; answered with
    :class:`SlotsReport`."""

    type: Literal["get_slots"]
    keys: NotRequired[list[str]]
    """Only these slot keys (those the downloader does not hold are left out); absent:
    every slot it holds."""


class SlotState(TypedDict):
    """One download slot in :class:`SlotsReport`: Scrapy's ``Slot`` attributes."""

    delay_s: Annotated[float, Rule(minimum=0)]
    """Seconds between two request starts (``DOWNLOAD_DELAY``, AutoThrottle's)."""
    concurrency: Annotated[int, Rule(minimum=1)]
    """The most transfers at once (``CONCURRENT_REQUESTS_PER_DOMAIN``/``_PER_IP``)."""
    randomize_delay: bool
    """Whether each gap is drawn from 0.5 to 1.5 times the delay."""
    queue: list[Request]
    """The requests waiting in the slot, oldest first."""
    transferring: list[Request]
    """The requests in flight (started, not finished), in start order."""


class SlotsReport(TypedDict):
    """Downloader -> outside: the answer to ``get_slots``."""

    slots: dict[str, SlotState]
    """Slot key -> its state, for the slots asked about that the downloader holds."""


class ResponseDownloaded(TypedDict):
    """Downloader -> Engine: the transfer completed with an HTTP response (any status)."""

    type: Literal["response_downloaded"]
    request: Request
    """The request as fetched."""
    response: Response
    """The ``crawlfw.http.Response`` (its ``request`` set)."""
    slot: str
    """The request's download slot key (as in its ``fetch``)."""
    ip: NotRequired[str]
    """With ``CONCURRENT_REQUESTS_PER_IP``: the IP address curl connected to, so the
    engine keys the host's later requests by it."""


class DownloadFailed(TypedDict):
    """Downloader -> Engine: the transfer failed below HTTP."""

    type: Literal["download_failed"]
    request: Request
    """The request as fetched."""
    error: BaseException
    """Usually a ``crawlfw.exceptions.DownloadError`` (DNS, connection, timeout...)."""
    slot: str
    """The download slot of the downloader."""


# --- SpiderRunner -----------------------------------------------------------------------


class PullStartRequests(TypedDict):
    """Engine -> SpiderRunner: produce up to ``count`` more start requests."""

    type: Literal["pull_start_requests"]
    count: Annotated[int, Rule(minimum=1)]
    """How many start requests the engine can take."""


class StartRequestsPulled(TypedDict):
    """SpiderRunner -> Engine: start requests were sent to the scheduler."""

    type: Literal["start_requests_pulled"]
    count: Count
    """How many requests were sent to the scheduler (before the dupefilter)."""
    exhausted: bool
    """True once ``start_requests()`` is used up (or raised)."""
    items: NotRequired[Count]
    """Items ``start()`` yielded among them, sent to the Pipeline (Scrapy 2.13)."""
    error: NotRequired[bool]
    """True when ``start_requests()``/``start()`` raised: the crawl, once idle, closes
    with ``start_error`` instead of ``finished``."""


class ScrapeResponse(TypedDict):
    """Engine -> SpiderRunner: run the spider middlewares and the callback on a response."""

    type: Literal["scrape_response"]
    request: Request
    """The request the response answers."""
    response: Response
    """The response, after the downloader middlewares."""


class ScrapeFailure(TypedDict):
    """Engine -> SpiderRunner: the request failed; run its errback with a Failure."""

    type: Literal["scrape_failure"]
    request: Request
    """The request that failed."""
    error: BaseException
    """The exception (download error, IgnoreRequest, middleware error)."""


class ResponseScraped(TypedDict):
    """SpiderRunner -> Engine: a response or failure was fully handled by the spider."""

    type: Literal["response_scraped"]
    request: Request
    """The request whose callback or errback ran."""
    items: Count
    """How many items were sent to the pipeline."""
    requests: Count
    """How many requests were sent to the scheduler."""
    size: Count
    """Bytes of the response body (for the scraper memory cap), 0 for failures."""


# --- Pipeline and Exporter --------------------------------------------------------------


class ProcessItems(TypedDict):
    """SpiderRunner -> Pipeline: run ITEM_PIPELINES over these items, in order."""

    type: Literal["process_items"]
    items: Annotated[list[Item], Rule(minItems=1)]
    """The items (dicts or ``Item`` objects) the callback produced, in order."""
    response: Response | None
    """The response the items came from (None for items from an errback without one)."""
    spider_error: NotRequired[BaseException]
    """The exception the callback raised after yielding these items: the Pipeline
    reports it ("Spider error processing ...") once they are scraped."""
    request: NotRequired[Request]
    """With ``spider_error``: the request whose callback raised."""
    processed: NotRequired[Count]
    """On a replay (the Pipeline actor died on this batch and was restarted): how many
    of ``items`` had gone through the item pipelines; the replay starts after them."""
    passed: NotRequired[list[Item]]
    """With ``processed``: what those items became, the ones that passed every pipeline
    (sent to the exporters with the rest of the batch)."""
    exported: NotRequired[bool]
    """True once the batch's surviving items were sent to the exporters (set by the
    Pipeline as it handles the message): a replay does not send them again."""


class ItemsProcessed(TypedDict):
    """Pipeline -> Engine: this many items left the pipeline (scraped, dropped or failed)."""

    type: Literal["items_processed"]
    count: Count
    """How many items left the pipeline."""


class ExportItems(TypedDict):
    """Pipeline -> Exporter: items that passed every pipeline; write them to the feed."""

    type: Literal["export_items"]
    items: Annotated[list[Item], Rule(minItems=1)]
    """The items, in the order they were scraped."""


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
    """Download slot -> requests in flight there."""
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
    slots: dict[str, int]
    """Download slot -> requests in flight there."""
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




class AddItems(TypedDict):
    """User actor -> Engine: send these items through the pipeline and the feeds."""

    type: Literal["add_items"]
    items: Annotated[list[Item], Rule(minItems=1)]
    """The items (dicts or ``Item`` objects), in order."""


class BlockSlot(TypedDict):
    """User actor -> Engine: fail every request for this download slot from now on."""

    type: Literal["block_slot"]
    slot: Annotated[str, Rule(minLength=1)]
    """The download slot (normally a host name)."""
    reason: str
    """Why, named in each request's ``IgnoreRequest``."""


class ItemScraped(TypedDict):
    """Crawl event -> user actor: an item passed every item pipeline."""

    type: Literal["item_scraped"]
    item: Item
    """The item as the last pipeline returned it."""
    response: Response | None
    """The response it came from, or None."""


class ItemDropped(TypedDict):
    """Crawl event -> user actor: an item pipeline raised ``DropItem``."""

    type: Literal["item_dropped"]
    item: Item
    """The dropped item."""
    response: Response | None
    """The response it came from, or None."""
    exception: BaseException
    """The ``DropItem`` raised."""


class ResponseReceived(TypedDict):
    """Crawl event -> user actor: a response passed the downloader middlewares."""

    type: Literal["response_received"]
    response: Response
    """The response."""
    request: Request
    """The request it answers."""
    slot: str
    """The request's download slot (normally its host)."""


class RequestScheduled(TypedDict):
    """Crawl event -> user actor: a request entered the scheduler."""

    type: Literal["request_scheduled"]
    request: Request
    """The request."""


class RequestDropped(TypedDict):
    """Crawl event -> user actor: the dupefilter dropped a request."""

    type: Literal["request_dropped"]
    request: Request
    """The request."""


class SpiderIdle(TypedDict):
    """Crawl event -> user actor: the spider has nothing left to do."""

    type: Literal["spider_idle"]


class IdleBarrier(TypedDict):
    """Signal relay -> user actor, right after its ``spider_idle`` event: answer
    ``idle_barrier_passed`` to ``reply_to`` (the base class does). The inbox is first in
    first out, so the answer follows what the actor's ``spider_idle`` handler sent (its
    ``crawl``/``add_items``), and the engine does not close the spider before it."""

    type: Literal["idle_barrier"]
    reply_to: ActorRef
    """The Engine."""


class IdleBarrierPassed(TypedDict):
    """User actor -> Engine: it has handled the ``spider_idle`` event before the
    ``idle_barrier`` this answers (whatever it sent then reached the Engine first)."""

    type: Literal["idle_barrier_passed"]


class SpiderOpened(TypedDict):
    """Crawl event -> user actor: the spider was opened."""

    type: Literal["spider_opened"]


class SpiderError(TypedDict):
    """Crawl event -> user actor: a spider callback raised."""

    type: Literal["spider_error"]
    failure: Failure
    """The error as a ``crawlfw.utils.failure.Failure``."""
    response: Response | None
    """The response the callback was called with, or None."""


MESSAGE_TYPES: dict[str, type] = {
    cls.__annotations__["type"].__args__[0]: cls
    for cls in (
        StartCrawl,
        StopCrawl,
        GetStatus,
        ActorFailed,
        SpiderClosing,
        StartEngine,
        Crawl,
        RecheckIdle,
        FrontierTick,
        DispatchDue,
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
        SetSlotDelay,
        GetSlots,
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
        RestartChild,
        CrawlStopped,
        AddItems,
        BlockSlot,
        ItemScraped,
        ItemDropped,
        ResponseReceived,
        RequestScheduled,
        RequestDropped,
        SpiderIdle,
        IdleBarrier,
        IdleBarrierPassed,
        SpiderOpened,
        SpiderError,
    )
}
"""``type`` string -> TypedDict class, for every message crawlfw's own actors use."""


REPLY_TYPES: dict[str, tuple[type, ...]] = {
    "start_crawl": (StartCrawlReply, StartRefused, MessageRejected),
    "stop_crawl": (StopCrawlReply, MessageRejected),
    "get_status": (SupervisorStatus, EngineStatus),
    "get_slots": (SlotsReport,),
}
"""Message ``type`` -> the TypedDicts an ``ask`` of it can be answered with. (The
control-endpoint commands, answered on the socket, are in :data:`MESSAGE_TYPES`:
``status_reported``, ``command_accepted``, ``response_fetched``, ``control_error``.)"""
