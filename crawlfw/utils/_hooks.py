"""Containment of user code that actors call: a raising hook is logged, counted, and the
crawl goes on.

An exception that escapes a message handler stops the actor and closes the crawl
(``engine_failed``...), so every call from an actor into code a user can replace is
contained. Signal handlers are contained by
:meth:`crawlfw.signalmanager.SignalManager.send_catch_log`; the objects a user plugs in
through settings are contained here, by :func:`contain_methods`, which shadows the
listed methods of one instance with guarded ones:

- the log formatter (``LOG_FORMATTER``): ``crawled``, ``scraped``, ``dropped``; a raising
  (or non-dict returning) method is replaced, for that call, by the default
  :class:`~crawlfw.logformatter.LogFormatter`'s message;
- the stats collector (``STATS_CLASS``): every method of the stats API; a raising one
  returns what the method returns when nothing is stored (``get_value`` its
  ``default``, ``get_stats`` ``{}``, others None);
- the dupefilter (``DUPEFILTER_CLASS``): ``request_seen`` (a raising call counts as
  "not seen": the request is scheduled rather than lost), ``log``, ``open``,
  ``close``.

Instances of crawlfw's own classes are left alone (no cost on the hot path); for any
other class a guarded call costs one extra Python call.

Each error is logged at ERROR with its traceback, "Error in <kind> <Class>.<method>"
(for the stats collector only its first error per method has the traceback, later ones
are logged at DEBUG: it is called many times per request), and counted in the stat
``hook_errors/<kind>`` (``hook_errors/log_formatter``, ``hook_errors/dupefilter``,
``hook_errors/signal_handler``; a failing stats collector is not counted in itself).
"""

from __future__ import annotations

import functools
import logging
import threading

__all__ = [
    "contain_methods",
    "contain_log_formatter",
    "contain_stats_collector",
    "contain_dupefilter",
    "count_hook_error",
    "STATS_METHODS",
]

logger = logging.getLogger(__name__)

#: The stats collector API (Scrapy 1.2's ``StatsCollector``).
STATS_METHODS = (
    "get_value", "get_stats", "set_value", "set_stats", "inc_value", "max_value",
    "min_value", "clear_stats", "open_spider", "close_spider",
)

_state = threading.local()  # .busy: an error is being reported on this thread


def _is_own(obj) -> bool:
    return type(obj).__module__.startswith("crawlfw.")


def count_hook_error(crawler, kind: str) -> None:
    """Add 1 to the stat ``hook_errors/<kind>`` of ``crawler`` (errors of the stats
    collector itself are swallowed: counting must never raise)."""
    stats = getattr(crawler, "stats", None)
    if stats is None:
        return
    try:
        stats.inc_value(f"hook_errors/{kind}")
    except Exception:  # a broken stats collector: nothing more to do
        pass


def contain_methods(obj, kind: str, methods: dict, crawler=None, *, quiet_repeats=False,
                    result_type=None):
    """Shadow ``methods`` of ``obj`` with guarded versions (instance attributes).

    Args:
        obj: the user-pluggable object; returned untouched when its class is one of
            crawlfw's own.
        kind: what it is, for messages and the stat (``'log_formatter'``...).
        methods: ``{method name: fallback(*args, **kwargs) -> value}``; the fallback
            gives the call's result when the method raises. Names ``obj`` lacks are
            skipped.
        crawler: whose stats count the errors (``hook_errors/<kind>``); None: not
            counted.
        quiet_repeats: log the traceback of the first error per method only, later
            ones at DEBUG without it.
        result_type: when given, a result that is not an instance of it is an error
            too (logged and counted; the fallback's result is used).

    Returns:
        ``obj``.
    """
    if obj is None or _is_own(obj):
        return obj
    cls_name = type(obj).__name__
    for name, fallback in methods.items():
        method = getattr(obj, name, None)
        if method is None or not callable(method):
            continue
        guarded = _guard(method, fallback, f"{kind} {cls_name}.{name}", kind, crawler,
                         quiet_repeats, result_type)
        try:
            setattr(obj, name, guarded)
        except (AttributeError, TypeError):  # __slots__, a read-only property...
            logger.debug("%s.%s cannot be guarded: its errors are not contained",
                         cls_name, name)
    return obj


def _guard(method, fallback, label, kind, crawler, quiet_repeats, result_type):
    seen = []

    @functools.wraps(method)
    def guarded(*args, **kwargs):
        try:
            result = method(*args, **kwargs)
        except Exception:
            _report(label, kind, crawler, bool(quiet_repeats and seen))
            seen.append(True)
            return fallback(*args, **kwargs)
        if result_type is not None and not isinstance(result, result_type):
            _report(label, kind, crawler, False,
                    f"it returned {type(result).__name__}, not {result_type.__name__}")
            return fallback(*args, **kwargs)
        return result

    return guarded


def _report(label, kind, crawler, repeat, problem=None) -> None:
    if getattr(_state, "busy", False):
        return  # an error while reporting one (logging counts into the stats): drop it
    _state.busy = True
    try:
        if repeat:
            logger.debug("Error in %(hook)s again", {"hook": label})
        elif problem:
            logger.error("Error in %(hook)s: %(problem)s (the crawl goes on)",
                         {"hook": label, "problem": problem})
        else:
            logger.error("Error in %(hook)s (the crawl goes on)", {"hook": label},
                         exc_info=True)
        if crawler is not None:
            count_hook_error(crawler, kind)
    finally:
        _state.busy = False


def contain_log_formatter(formatter, crawler=None):
    """Guard ``crawled``/``scraped``/``dropped``/``item_error``/``spider_error``/
    ``download_error`` of a custom log formatter.

    A method that raises, or returns something other than a dict, is logged and
    counted (``hook_errors/log_formatter``), and the default
    :class:`~crawlfw.logformatter.LogFormatter` message is logged instead.

    Returns:
        ``formatter``.
    """
    if formatter is None or _is_own(formatter):
        return formatter
    from crawlfw.logformatter import LogFormatter

    default = LogFormatter()
    return contain_methods(formatter, "log_formatter", {
        "crawled": default.crawled, "scraped": default.scraped, "dropped": default.dropped,
        "item_error": default.item_error, "spider_error": default.spider_error,
        "download_error": default.download_error,
    }, crawler, result_type=dict)


def contain_stats_collector(stats):
    """Guard the stats API methods of a custom stats collector (errors logged, the
    first per method with its traceback; not counted).

    Returns:
        ``stats``.
    """
    def get_value(key, default=None, spider=None):
        return default

    fallbacks = {name: _none for name in STATS_METHODS}
    fallbacks["get_value"] = get_value
    fallbacks["get_stats"] = lambda *a, **kw: {}
    return contain_methods(stats, "stats_collector", fallbacks, None, quiet_repeats=True)


def contain_dupefilter(dupefilter, crawler=None):
    """Guard ``request_seen`` (a raising call answers False: the request is scheduled),
    ``log``, ``open`` and ``close`` of a custom dupefilter; errors counted in
    ``hook_errors/dupefilter``.

    Returns:
        ``dupefilter``.
    """
    return contain_methods(dupefilter, "dupefilter", {
        "request_seen": lambda *a, **kw: False, "log": _none, "open": _none, "close": _none,
    }, crawler)


def _none(*args, **kwargs):
    return None
