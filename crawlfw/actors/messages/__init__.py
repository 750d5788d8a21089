"""Every message the crawlfw actors exchange, one TypedDict per ``type``: the one source.

A message is a flat ``dict`` with a ``type`` key. Types are snake_case: imperative for
commands (``fetch``, ``enqueue_requests``), past tense for events (``response_downloaded``,
``items_processed``). Replies go to the ``reply_to`` actor ref named in the command, never
to a future: actors only ``tell`` each other. ``ask`` (always with a timeout) is for the
outside (CLI, shell, tests) and is answered by the Supervisor (and the Engine's
``get_status``); those replies are TypedDicts here too (:data:`REPLY_TYPES`).

The classes live in one module per family, all imported here (import them from here:
``messages.Fetch``): ``crawl`` (a crawl's start, stop and status, the control endpoint's
commands, the replies to ``ask``, the Supervisor's timers), ``flow`` (one request's path:
Engine, Scheduler, Downloader, SpiderRunner), ``items`` (Pipeline and Exporters),
``events`` (user actors: what they send, the signal events relayed to them), and
``_common`` (:class:`Rule` and the field aliases ``Count``, ``Url``...).

Each class is the definition of its message: the field's annotation is its type, the
string under the field is its one-line doc, and the class docstring's first paragraph says
who sends it to whom and what it means, as ``<sender> -> <receiver>[; <route>...]:
<meaning>`` (a route may pass several actors, ``Scheduler -> SpiderRunner -> Pipeline``).
:mod:`crawlfw.actors._doc` reads that form and writes the message table of ARCHITECTURE.md
("Messages") from it: who sends what is said there, generated, and only here by hand.

The JSON Schemas in ``conf/schemas/messages.json`` (``$defs/<type>``) are generated from
these classes by :mod:`crawlfw.actors._schema` (``python -m crawlfw.actors._schema
--write``), and a test checks that the shipped file is what the generator writes;
:mod:`crawlfw.actors._validation` checks messages against that file at the boundaries
(messages from outside the tree: the Supervisor, ``crawler.engine.crawl``, the control
endpoint) and, with ``MESSAGE_VALIDATION = 'all'`` or ``CRAWLFW_VALIDATE_MESSAGES=all``
(the test suite), on every message.

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

To add a message type: write its TypedDict in its family's module (its route and meaning
first, every field documented), import it here, list it in :data:`MESSAGE_TYPES`,
regenerate ``conf/schemas/messages.json`` (``python -m crawlfw.actors._schema --write``)
and ARCHITECTURE.md's table (``python -m crawlfw.actors._doc --write``);
``tests/actors/test_messages.py`` and ``tests/actors/test_message_table.py`` fail until
both are what the generators write.
"""

import sys

if sys.version_info >= (3, 11):
    from typing import NotRequired, TypedDict  # noqa: F401 (_schema reads them here)
else:  # NotRequired came in 3.11 (PEP 655); typing's TypedDict of 3.10 ignores it.
    # typing_extensions comes with jsonschema (its `referencing` requires it below 3.13).
    from typing_extensions import NotRequired, TypedDict  # noqa: F401 (_schema reads them here)

from crawlfw.actors.messages._common import (
    Count,  # noqa: F401 (re-exported, as before the split)
    CrawlId,  # noqa: F401 (re-exported, as before the split)
    Headers,  # noqa: F401 (re-exported, as before the split)
    Item,
    Message,
    Reason,  # noqa: F401 (re-exported, as before the split)
    Rule,
    Url,  # noqa: F401 (re-exported, as before the split)
)
from crawlfw.actors.messages.crawl import (
    ActorFailed,
    CommandAccepted,
    CommandSharedCrawl,
    ControlError,
    CrawlStatus,
    CrawlStopped,
    CrawlTreeStatus,
    DnsStatus,  # noqa: F401
    DownloadRequest,
    EngineStatus,
    GetHistory,
    GetSample,
    GetStatus,
    HistoryReported,
    MessageRejected,
    PauseCrawl,
    ResponseFetched,
    RestartChild,
    ResumeCrawl,
    Sample,
    SampleReported,
    ScheduleRequest,
    SharedCommandPublished,
    SharedCrawlStatus,  # noqa: F401 (re-exported, as before the split)
    SharedWorkerStatus,  # noqa: F401 (re-exported, as before the split)
    SpiderClosing,
    StartCrawl,
    StartCrawlReply,
    StartRefused,
    StatusReported,
    StopCrawl,
    StopCrawlReply,
    SupervisorStatus,
)
from crawlfw.actors.messages.events import (
    AddItems,
    BlockSlot,
    IdleBarrier,
    IdleBarrierPassed,
    ItemDropped,
    ItemScraped,
    RequestDropped,
    RequestScheduled,
    ResponseReceived,
    SpiderError,
    SpiderIdle,
    SpiderOpened,
)
from crawlfw.actors.messages.flow import (
    CheckIdle,
    Checkpoint,
    CheckpointReached,
    CloseSpider,
    Crawl,
    DispatchDue,
    Download,
    DownloadDone,
    DownloadFailed,
    EnqueueRequests,
    Fetch,
    FrontierTick,
    GetSlots,
    IdleChecked,
    PullRequests,
    PullStartRequests,
    Pump,
    RecheckIdle,
    ReleaseRequests,
    RequestsDequeued,
    ResolveAhead,
    ResponseDownloaded,
    ResponseScraped,
    ResumeParked,
    RevisitsDue,
    RevisitVisit,
    RevisitVisited,
    ScrapeFailure,
    ScrapeResponse,
    SetSlotDelay,
    SlotsReport,
    SlotState,
    StartCheckpoints,
    StartEngine,
    StartRequestsPulled,
    StartTaken,
)
from crawlfw.actors.messages.items import (
    ExportItems,
    FinishedItem,
    ItemsProcessed,
    ProcessItems,
)

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
    "RevisitsDue",
    "RevisitVisit",
    "RevisitVisited",
    "Pump",
    "CloseSpider",
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
    "ResolveAhead",
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
    "Download",
    "DownloadDone",
    "ResumeParked",
    "FinishedItem",
    "StatusReported",
    "GetHistory",
    "GetSample",
    "CommandSharedCrawl",
    "SharedCommandPublished",
    "HistoryReported",
    "SampleReported",
    "Sample",
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
        RevisitsDue,
        RevisitVisited,
        CloseSpider,
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
        ResolveAhead,
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
        Download,
        DownloadDone,
        ResumeParked,
        StatusReported,
        GetHistory,
        GetSample,
        CommandSharedCrawl,
        SharedCommandPublished,
        HistoryReported,
        SampleReported,
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
``status_reported``, ``command_accepted``, ``response_fetched``,
``shared_command_published``, ``control_error``.)"""
