"""User actors: what they send the Engine (``add_items``, ``block_slot``...) and the
signal events relayed to them (``item_scraped``, ``spider_idle``...).

Part of :mod:`crawlfw.actors.messages` (import them from there); the form of each class
is said there.
"""

import sys
from typing import Annotated, Literal

if sys.version_info >= (3, 11):
    from typing import TypedDict
else:  # NotRequired came in 3.11 (PEP 655); typing's TypedDict of 3.10 ignores it.
    # typing_extensions comes with jsonschema (its `referencing` requires it below 3.13).
    from typing_extensions import TypedDict

from pykka import ActorRef

from crawlfw.actors.messages._common import Item, Rule
from crawlfw.http import Request, Response
from crawlfw.utils.failure import Failure

# --- User actors ---------------------------------------------------------------------


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
    """Signal relay -> user actor: an item passed every item pipeline."""

    type: Literal["item_scraped"]
    item: Item
    """The item as the last pipeline returned it."""
    response: Response | None
    """The response it came from, or None."""


class ItemDropped(TypedDict):
    """Signal relay -> user actor: an item pipeline raised ``DropItem``."""

    type: Literal["item_dropped"]
    item: Item
    """The dropped item."""
    response: Response | None
    """The response it came from, or None."""
    exception: BaseException
    """The ``DropItem`` raised."""


class ResponseReceived(TypedDict):
    """Signal relay -> user actor: a response passed the downloader middlewares."""

    type: Literal["response_received"]
    response: Response
    """The response."""
    request: Request
    """The request it answers."""
    slot: str
    """The request's download slot (normally its host)."""


class RequestScheduled(TypedDict):
    """Signal relay -> user actor: a request entered the scheduler."""

    type: Literal["request_scheduled"]
    request: Request
    """The request."""


class RequestDropped(TypedDict):
    """Signal relay -> user actor: the dupefilter dropped a request."""

    type: Literal["request_dropped"]
    request: Request
    """The request."""


class SpiderIdle(TypedDict):
    """Signal relay -> user actor: the spider has nothing left to do."""

    type: Literal["spider_idle"]


class IdleBarrier(TypedDict):
    """Signal relay (right after the ``spider_idle`` event) -> user actor: answer
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
    """Signal relay -> user actor: the spider was opened."""

    type: Literal["spider_opened"]


class SpiderError(TypedDict):
    """Signal relay -> user actor: a spider callback raised."""

    type: Literal["spider_error"]
    failure: Failure
    """The error as a ``crawlfw.utils.failure.Failure``."""
    response: Response | None
    """The response the callback was called with, or None."""
