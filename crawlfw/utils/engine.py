"""Engine status reports (Scrapy 1.2's ``scrapy.utils.engine``).

Scrapy evaluated expressions on the engine object; crawlfw's engine is an actor, so the
figures come from its ``get_status`` reply (see :mod:`crawlfw.actors.engine`), asked for
from outside the actor tree with a timeout.
"""

import datetime

__all__ = ["get_engine_status", "format_engine_status", "print_engine_status"]

#: Seconds to wait for the engine's ``get_status`` reply.
STATUS_TIMEOUT_S = 10.0


def get_engine_status(engine, timeout_s: float = STATUS_TIMEOUT_S) -> list:
    """Return ``[(name, value), ...]`` describing a running engine.

    Args:
        engine: ``crawler.engine`` (an :class:`~crawlfw.crawler.EngineFacade`), or the
            EngineActor's ``ActorRef``.
        timeout_s: seconds to wait for the engine's reply.

    Returns:
        list of ``(str, object)``: ``engine.running``, ``engine.closing``,
        ``time()-engine.start_time`` (seconds, when the crawl has started) and the
        counters of the reply (``downloading``, ``in_spider``, ``in_pipeline``,
        ``credit``, ``start_requests_exhausted``, one ``slots[<key>]`` per download slot
        with its transfers in flight). When the engine cannot answer (stopped, timed
        out) the list is ``[("engine.running", False), ("error", "<Type>: <message>")]``.
    """
    ref = getattr(engine, "ref", engine)
    try:
        status = ref.ask({"type": "get_status"}, timeout=timeout_s)
    except Exception as e:  # ActorDeadError, pykka.Timeout
        return [("engine.running", False), ("error", f"{type(e).__name__}: {e}")]
    checks = [("engine.running", status.get("running")),
              ("engine.closing", status.get("closing"))]
    elapsed_s = _elapsed_s(getattr(engine, "crawler", None))
    if elapsed_s is not None:
        checks.append(("time()-engine.start_time", elapsed_s))
    for key in ("downloading", "in_spider", "in_pipeline", "credit",
                "start_requests_exhausted"):
        if key in status:
            checks.append((f"engine.{key}", status[key]))
    for slot, count in sorted((status.get("slots") or {}).items()):
        checks.append((f"engine.slots[{slot!r}]", count))
    return checks


def _elapsed_s(crawler):
    """Seconds since the crawl's ``start_time`` stat (timezone-aware UTC, set by
    CoreStats; a naive one is taken as UTC)."""
    stats = getattr(crawler, "stats", None)
    start = stats.get_value("start_time") if stats is not None else None
    if not isinstance(start, datetime.datetime):
        return None
    now = datetime.datetime.now(datetime.timezone.utc)
    if start.tzinfo is None:
        now = now.replace(tzinfo=None)
    return (now - start).total_seconds()


def format_engine_status(engine=None) -> str:
    """Return the engine status as aligned text ("Execution engine status")."""
    checks = get_engine_status(engine)
    s = "Execution engine status\n\n"
    for test, result in checks:
        s += f"{test:<47} : {result}\n"
    s += "\n"
    return s


def print_engine_status(engine) -> None:
    """Print :func:`format_engine_status`."""
    print(format_engine_status(engine))
