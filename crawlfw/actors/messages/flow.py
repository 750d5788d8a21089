"""One request's path: Engine <-> Scheduler <-> Downloader <-> SpiderRunner (credit,
frontier pulls and checkpoints, fetches and their answers, scraping).

Part of :mod:`crawlfw.actors.messages` (import them from there); the form of each class
is said there.
"""

import sys
from concurrent.futures import Future
from typing import Annotated, Literal

if sys.version_info >= (3, 11):
    from typing import NotRequired, TypedDict
else:  # NotRequired came in 3.11 (PEP 655); typing's TypedDict of 3.10 ignores it.
    # typing_extensions comes with jsonschema (its `referencing` requires it below 3.13).
    from typing_extensions import NotRequired, TypedDict

from pykka import ActorRef

from crawlfw.actors.messages._common import Count, Reason, Rule
from crawlfw.http import Request, Response

# --- Engine -----------------------------------------------------------------------------


class StartEngine(TypedDict):
    """Supervisor -> Engine: every actor is up; start pulling start requests."""

    type: Literal["start_engine"]
    spider_runner: ActorRef
    """The SpiderRunner's ActorRef (started after the engine, which it needs)."""
    pipeline: NotRequired[ActorRef]
    """The Pipeline's ActorRef, where ``add_items`` go (from user actors)."""


class Crawl(TypedDict):
    """In-tree code (``crawler.engine.crawl(request, spider)``) -> Engine; outside ->
    Supervisor -> Engine: schedule a request in a running crawl.

    ``crawler.engine.crawl`` checks the message against its schema (unless
    ``MESSAGE_VALIDATION = 'off'``) and tells the engine directly (keeping causal order
    with the caller's other messages); the Supervisor forwards
    the ones it receives to the crawl's engine.
    """

    type: Literal["crawl"]
    crawl_id: str
    """The crawl (the Supervisor forwards the message to its engine; the engine ignores it)."""
    request: Request
    """The ``crawlfw.http.Request`` to schedule (the dupefilter applies)."""


class Download(TypedDict):
    """Pipeline (a media pipeline's item waiting for its files) -> Engine; SpiderRunner
    (an ``async def`` callback awaiting ``crawler.engine.download``) -> Engine;
    ``crawler.engine.download`` (a blocking caller on any thread but an actor's carrying
    downloads) -> Engine: download ``request`` outside the frontier, as Scrapy's
    ``engine.download`` does.

    The request passes the downloader middlewares and a download slot (no dupefilter,
    no scheduler, no spider middlewares, no callback); it is logged ("Crawled (200)
    ...") and signalled (``response_received``) like any response. Redirects and
    retries a middleware returns are downloaded the same way. The Engine answers once:
    ``download_done`` to ``reply_to``, or the outcome set on ``future``. A Request object
    is in one download at a time (the downloaders know a transfer by its object): a
    ``download`` of one already being downloaded this way (``asyncio.gather`` of the same
    request, two pipelines sharing it) starts when that one is answered or redirected.
    """

    type: Literal["download"]
    request: Request
    """The ``crawlfw.http.Request`` to download (its callback and errback are not called;
    the same object downloaded again meanwhile waits for this download)."""
    key: Count
    """The sender's number for this download, repeated in the ``download_done``."""
    reply_to: NotRequired[ActorRef]
    """The actor told ``download_done`` (the Pipeline's ``ChildRef``, the SpiderRunner's
    ref)."""
    future: NotRequired[Future]
    """For a caller outside the actors (a blocking ``crawler.engine.download``): the
    Engine sets the ``Response`` or the exception on it instead of replying."""


class DownloadDone(TypedDict):
    """Engine -> Pipeline (the ``reply_to`` of a ``download``); Engine -> SpiderRunner
    (the ``reply_to`` of an ``async def`` callback's ``download``): how the download
    ended."""

    type: Literal["download_done"]
    key: Count
    """The ``key`` of the ``download``."""
    response: NotRequired[Response]
    """The ``Response`` (any HTTP status), after the downloader middlewares."""
    error: NotRequired[BaseException]
    """Instead of ``response``: why there is none (a ``DownloadError``, an
    ``IgnoreRequest`` from a middleware, ``DownloadCancelled`` when the spider closed)."""


class ResumeParked(TypedDict):
    """RobotsTxtMiddleware (``crawler.engine.resume_parked``) -> Engine: go on with a
    request a downloader middleware parked (``RequestParked``), once its host's robots.txt
    is known.

    The Engine kept it (its frontier lease included) since it was parked: it passes the
    middlewares after the one that parked it and is downloaded, or, with ``error``,
    goes to ``process_exception`` and its errback.
    """

    type: Literal["resume_parked"]
    request: Request
    """The parked request (the same object)."""
    error: NotRequired[BaseException]
    """Why it must not be downloaded (``IgnoreRequest("Forbidden by robots.txt")``)."""


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


class RevisitsDue(TypedDict):
    """Timer -> Scheduler (``REVISIT_ENABLED``): the revisit schedule's earliest record is
    due now; push the due records into the frontier."""

    type: Literal["revisits_due"]


class RevisitVisit(TypedDict):
    """One page's visit as the revisit schedule takes it (a field of ``revisit_visited``)."""

    fp: Annotated[str, Rule(pattern="^[0-9a-f]+$")]
    """The fingerprint (hex) of the request the response answered (the final URL)."""
    outcome: Literal["new", "changed", "unchanged", "gone", "forget", "failed"]
    """A first visit; a revisit that found the page changed, unchanged (304 or the same
    digest) or gone (404/410); ``forget``: the page opted out (``meta['revisit']`` False);
    ``failed``: the revisit got no answer that says anything of the page (a download
    error, a 5xx, a request a middleware dropped; ``fp`` is the record's): the record
    keeps the due time it was given when taken."""
    etag: str | None
    """The ``ETag`` of the answer (of the last one for a 304 without one)."""
    last_modified: str | None
    """The ``Last-Modified`` of the answer (likewise)."""
    digest: str | None
    """The content's digest (hex; the spider's ``revisit_content`` hook may normalise it)."""
    interval: float | None
    """``meta['revisit_interval']`` in seconds, None: the schedule's rule decides."""
    moved_from: str | None
    """The fingerprint of the record the revisit was made for, when a redirect moved
    the page (its record moves to ``fp``)."""
    request: Request
    """The request the response answered (stored for the next revisit)."""
    claim: Annotated[int, Rule(minimum=0)]
    """The shared schedule's claim the revisit was made under (``FRONTIER_URL``: an
    outcome of an older claim than the last one applied is stale, ignored; the claim is
    released); 0: a first visit, or a schedule without claims."""


class RevisitVisited(TypedDict):
    """SpiderRunner -> Scheduler (``REVISIT_ENABLED``): pages answered since the last such
    message, before their leases are noted done: apply each outcome to the schedule (due
    again after the page's interval, adapted)."""

    type: Literal["revisit_visited"]
    visits: Annotated[list[RevisitVisit], Rule(minItems=1)]
    """The pages answered, in the order their responses were scraped."""


class CloseSpider(TypedDict):
    """Supervisor -> Engine; SpiderRunner -> Engine; user actor -> Engine; extensions
    (``crawler.engine.close_spider``) -> Engine: close the spider with ``reason``
    (closespider, CloseSpider, ^C)."""

    type: Literal["close_spider"]
    reason: Reason
    """The ``finish_reason`` recorded in stats."""


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
    """SpiderRunner -> Scheduler; Engine (redirects, retries, ``crawl``) -> Scheduler: add
    requests (dupefilter applied)."""

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
    """Engine -> Scheduler; Downloader (as it stops) -> Scheduler: queue again leased
    requests that will not be finished (the spider is closing): the Engine's, and what a
    downloader's slot table still holds (aborted transfers, queued requests)."""

    type: Literal["release_requests"]
    requests: list[Request]
    """The ``crawlfw.http.Request`` objects as the scheduler handed them out."""


class StartCheckpoints(TypedDict):
    """Supervisor -> Scheduler (durable frontier only): checkpoints start at this
    SpiderRunner; the feeds' starting points are committed first."""

    type: Literal["start_checkpoints"]
    spider_runner: ActorRef
    """The SpiderRunner's ``pykka.ActorRef``."""
    feeds: NotRequired[dict[str, dict | None]]
    """``{feed key: state}`` of the feeds just opened (where each starts), committed
    before any item comes: a resumed job finds them."""


class Checkpoint(TypedDict):
    """Scheduler -> SpiderRunner -> Pipeline -> each Exporter (a copy to each, side by
    side): make what the listed leases caused durable, then pass on (see
    ARCHITECTURE.md, "Lose nothing")."""

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
    """``{feed key: state dict or None}``, filled by the Exporter it reaches."""
    next: NotRequired[list[ActorRef]]
    """Exporter refs still to pass (empty: the Exporter answers ``reply_to``)."""
    parts: NotRequired[Count]
    """How many Exporters the Pipeline sent a copy to (default 1): the Scheduler
    commits when it has that many ``checkpoint_reached``."""


class CheckpointReached(TypedDict):
    """Each Exporter (or the Pipeline, without exporters) -> Scheduler: ack ``leases``
    and commit, with ``feeds`` and ``spider_state``, once the ``parts`` answers of
    the checkpoint arrived."""

    type: Literal["checkpoint_reached"]
    epoch: Count
    """The ``epoch`` of the ``checkpoint`` this answers."""
    leases: list[int]
    """The leases to ack (their callbacks' output is durable now)."""
    spider_state: str | None
    """``spider.state`` pickled, base64 text, or None."""
    feeds: dict[str, dict | None]
    """``{feed key: state dict or None}`` to commit with the leases (this Exporter's
    feed; the Scheduler merges the parts)."""
    parts: NotRequired[Count]
    """How many answers the checkpoint has, this one included (default 1)."""


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
    revisits: NotRequired[Count]
    """Pages in the revisit schedule (``REVISIT_ENABLED``): the crawl waits for them
    instead of finishing."""


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


class ResolveAhead(TypedDict):
    """Scheduler -> Downloader (the one of the pool serving each host's slot): these hosts
    just got their first queued request in the frontier; resolve their names now, so
    the answers wait in the resolver's cache when their transfers start."""

    type: Literal["resolve_ahead"]
    hosts: list[str]
    """Host names (lower case, no IP literal), in the order they were queued."""


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
    """Usually a ``crawlfw.exceptions.DownloadError`` (DNS, connection, timeout...);
    ``crawlfw.exceptions.DownloaderCrashed`` for a poison request (in flight in
    ``POISON_CRASHES`` downloader deaths)."""
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
    """SpiderRunner -> Engine: a response or failure was fully handled by the spider (or
    several: a burst's reports merged into one)."""

    type: Literal["response_scraped"]
    request: Request
    """The request whose callback or errback ran (merged: the last one's)."""
    items: Count
    """How many items were sent to the pipeline."""
    requests: Count
    """How many requests were sent to the scheduler."""
    size: Count
    """Bytes of the response body (for the scraper memory cap), 0 for failures."""
    responses: NotRequired[Annotated[int, Rule(minimum=1)]]
    """How many responses and failures this reports, their counts and sizes summed
    (absent: 1)."""
