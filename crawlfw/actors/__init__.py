"""crawlfw's actors, and the public API for users' own actors.

A user actor subclasses :class:`UserActor` and is added to every crawl's tree with the
setting ``ACTORS = {'path.to.MyActor': order}`` (see docs/actors.md): it is started
under the crawl's Supervisor, restarted when it fails (within the crawl's restart
intensity), receives the crawl events it names in ``events`` (:data:`EVENTS`) as
messages, and sends requests and items into the crawl (:meth:`UserActor.crawl`,
:meth:`UserActor.add_items`). Its own message types are registered with
:func:`register_schema`.
"""

from crawlfw.actors._base import CrawlActor
from crawlfw.actors._user import EVENTS, UserActor
from crawlfw.actors._validation import register_schema, validate_message
from crawlfw.core.control._supervision import ChildSpec, RestartIntensity
from crawlfw.exceptions import InvalidMessage

__all__ = [
    "CrawlActor",
    "UserActor",
    "EVENTS",
    "register_schema",
    "validate_message",
    "InvalidMessage",
    "ChildSpec",
    "RestartIntensity",
]
