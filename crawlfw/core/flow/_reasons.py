"""Which ``finish_reason`` values mean that a crawl failed (re-exported by
:mod:`crawlfw.crawler`, the public place to import them from)."""

__all__ = ["FAILURE_REASONS", "is_failure_reason", "register_failure_reason"]

#: ``finish_reason`` values that mean the crawl failed (the command exits with status 1):
#: ``<role>_failed`` when an actor of that role died (the Supervisor's reason), a feed
#: that could not be written (``feed_failed``), the durable frontier (``frontier_failed``)
#: a crawl that could not start (``start_failed: <error>``) and one stuck with requests
#: it could not dispatch for ``STALL_TIMEOUT`` (``stalled``). Every other reason is a
#: normal end: ``finished``, ``shutdown`` (^C), ``cancelled``, ``closespider_*`` and any
#: reason a spider gives ``CloseSpider``.
FAILURE_REASONS = frozenset({
    "supervisor_failed", "engine_failed", "scheduler_failed", "downloader_failed",
    "spider_runner_failed", "pipeline_failed", "exporter_failed", "custom_failed",
    "feed_failed", "frontier_failed", "start_failed", "stalled",
})

_registered: set[str] = set()  # "<role>_failed" of user actors' own roles (ACTORS)


def register_failure_reason(reason: str) -> None:
    """Make ``reason`` a failure reason too: the Supervisor registers ``<role>_failed``
    for each role of a user actor it starts (``ACTORS``).

    Args:
        reason: a ``finish_reason`` without ``": detail"``.
    """
    _registered.add(reason)


def is_failure_reason(reason: str | None) -> bool:
    """Whether a crawl's ``finish_reason`` means it failed: the one rule for exit statuses.

    Args:
        reason: a ``finish_reason`` (what ``spider_closed`` receives), or None (the crawl
            has not finished).

    Returns:
        True when ``reason``, up to an optional ``": detail"``, is in
        :data:`FAILURE_REASONS` or was registered (``"engine_failed"``, ``"start_failed: ValueError: x"``);
        False for None and every other reason.
    """
    if not reason:
        return False
    reason = reason.partition(":")[0].strip()
    return reason in FAILURE_REASONS or reason in _registered
