"""Items on their way out: SpiderRunner -> Pipeline -> each Exporter.

Part of :mod:`crawlfw.actors.messages` (import them from there); the form of each class
is said there.
"""

import sys
from typing import Annotated, Literal

if sys.version_info >= (3, 11):
    from typing import NotRequired, TypedDict
else:  # NotRequired came in 3.11 (PEP 655); typing's TypedDict of 3.10 ignores it.
    # typing_extensions comes with jsonschema (its `referencing` requires it below 3.13).
    from typing_extensions import NotRequired, TypedDict


from crawlfw.actors.messages._common import Count, Item, Rule
from crawlfw.http import Request, Response

# --- Pipeline and Exporter --------------------------------------------------------------


class FinishedItem(TypedDict):
    """One item of a ``process_items`` replay that went through the item pipelines."""

    index: Count
    """Its place in ``items``."""
    passed: bool
    """True if it passed every pipeline (then it is exported as ``item``)."""
    item: Item | None
    """What it became if it passed (None if it was dropped or failed)."""


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
    finished: NotRequired[list[FinishedItem]]
    """On a replay: items after the first ``processed`` that had gone through the item
    pipelines (an earlier one was waiting for its media downloads); not run again."""


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
