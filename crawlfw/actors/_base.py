"""The base class of crawlfw's actors: dispatch by message ``type``, schema checks, and
reporting unhandled failures to the Supervisor."""

import logging

import pykka

from crawlfw.actors._validation import validate_message, validation_mode
from crawlfw.exceptions import InvalidMessage

logger = logging.getLogger(__name__)

__all__ = ["CrawlActor"]


class CrawlActor(pykka.ThreadingActor):
    """A Pykka threading actor handling flat message dicts.

    A message ``{"type": "fetch", ...}`` is handled by the method ``handle_fetch(message)``;
    its return value is the reply to an ``ask``. Subclasses set ``role`` and implement
    ``handle_<type>`` methods. Runs on its own (daemon) thread; every ``handle_*`` method
    runs on that thread only.

    Args:
        crawl_id: the crawl this actor belongs to ("" for none).
        supervisor: the Supervisor's ``ActorRef``, told ``actor_failed`` if this actor dies.
        key: distinguishes siblings of one role (a downloader's slot), else "".
        settings: the crawl settings, for ``MESSAGE_VALIDATION``.

    Validation: with mode ``'all'`` every message sent with :meth:`send` and every one
    received is checked; with ``'boundary'`` only actors whose ``boundary`` is True
    (the Supervisor) check what they receive. A message that fails the check is logged
    and dropped (an ``ask`` gets ``{"type": "message_rejected", "error": ...}``); the actor
    lives on.
    """

    role = "custom"
    boundary = False
    use_daemon_thread = True

    def __init__(self, *, crawl_id: str = "", supervisor=None, key: str = "", settings=None):
        super().__init__()
        self.crawl_id = crawl_id
        self.supervisor = supervisor
        self.key = key
        mode = validation_mode(settings)
        self._check_sent = mode == "all"
        self._check_received = mode == "all" or (mode == "boundary" and self.boundary)

    def send(self, ref, message: dict) -> None:
        """``tell`` ``message`` to ``ref``, checking it first when validation is ``'all'``.

        A message to an actor that has already stopped is logged and dropped.

        Raises:
            InvalidMessage: the message breaks its schema (a bug in the sender).
        """
        if self._check_sent:
            validate_message(message)
        self._tell(ref, message)

    def _tell(self, ref, message: dict) -> None:
        """``ref.tell(message)``; a message to a stopped actor is logged and dropped."""
        try:
            ref.tell(message)
        except pykka.ActorDeadError:
            # Only during shutdown: the tree stops downstream actors in order.
            logger.warning("%s: %r message dropped, its receiver has stopped", self, message["type"])

    def on_receive(self, message):
        if self._check_received:
            try:
                validate_message(message)
            except InvalidMessage as e:
                logger.error("%s rejected a message: %s", self, e)
                return {"type": "message_rejected", "error": str(e)}
        try:
            handler = getattr(self, "handle_" + message["type"])
        except (TypeError, KeyError, AttributeError):
            error = f"{type(self).__name__} does not handle message {message!r:.200}"
            logger.error(error)
            return {"type": "message_rejected", "error": error}
        return handler(message)

    def on_failure(self, exception_type, exception_value, traceback):
        if self.supervisor is not None:
            try:
                self.supervisor.tell(
                    {
                        "type": "actor_failed",
                        "crawl_id": self.crawl_id,
                        "role": self.role,
                        "key": self.key,
                        "error": f"{exception_type.__name__}: {exception_value}",
                    }
                )
            except pykka.ActorDeadError:
                logger.error("%s died and its supervisor is gone", self)

    def __str__(self):
        key = f" {self.key}" if self.key else ""
        return f"{type(self).__name__}({self.crawl_id}{key})"
