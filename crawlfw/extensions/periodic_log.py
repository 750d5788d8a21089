"""Logs the crawl's stats periodically, as JSON (Scrapy 2.11's ``PeriodicLog`` extension).

Enable it in ``EXTENSIONS`` (it is not on by default, as in Scrapy)::

    EXTENSIONS = {"crawlfw.extensions.periodic_log.PeriodicLog": 0}
    PERIODIC_LOG_STATS = {"include": ["downloader/", "item_"]}
    PERIODIC_LOG_DELTA = True
    PERIODIC_LOG_TIMING_ENABLED = True
"""

import logging
import warnings
from datetime import datetime, timezone

from crawlfw import signals
from crawlfw.exceptions import CrawlfwDeprecationWarning, NotConfigured
from crawlfw.extensions._periodic import PeriodicCall
from crawlfw.utils.serialize import CrawlfwJSONEncoder

__all__ = ["PeriodicLog"]

logger = logging.getLogger(__name__)


class PeriodicLog:
    """Every ``LOGSTATS_INTERVAL`` seconds, and once more when the spider closes, logs
    at INFO one JSON object (sorted keys, indented by 4) with up to three parts:

    - ``"stats"`` (``PERIODIC_LOG_STATS``): the stats;
    - ``"delta"`` (``PERIODIC_LOG_DELTA``): how much each numeric stat changed since
      the previous line;
    - ``"time"`` (``PERIODIC_LOG_TIMING_ENABLED``): ``log_interval`` (s),
      ``start_time``, ``utcnow``, ``log_interval_real`` (seconds since the previous
      line) and ``elapsed`` (seconds since ``start_time``).

    ``PERIODIC_LOG_STATS`` / ``PERIODIC_LOG_DELTA`` are True (every stat) or a dict with
    ``include`` and/or ``exclude``: lists of substrings of stat names (a name with an
    excluded substring is left out; with ``include``, only names with an included one
    are kept). The extension is disabled (``NotConfigured``) when none of the three is
    set or ``LOGSTATS_INTERVAL`` is 0. The lines are logged from a daemon timer thread.

    Args:
        stats: the crawler's stats collector.
        interval (float): seconds between lines.
        ext_stats (dict | None): the ``PERIODIC_LOG_STATS`` options; falsy: no stats.
        ext_delta (dict | None): the ``PERIODIC_LOG_DELTA`` options; falsy: no delta.
        ext_timing_enabled (bool): log the timing part.
    """

    def __init__(self, stats, interval=60.0, ext_stats=None, ext_delta=None,
                 ext_timing_enabled=False):
        self.stats = stats
        self.interval = interval
        self.task = None
        self.encoder = CrawlfwJSONEncoder(sort_keys=True, indent=4)
        self.ext_stats_enabled = bool(ext_stats)
        self.ext_stats_include = ext_stats.get("include", ()) if ext_stats else ()
        self.ext_stats_exclude = ext_stats.get("exclude", ()) if ext_stats else ()
        self.ext_delta_enabled = bool(ext_delta)
        self.ext_delta_include = ext_delta.get("include", ()) if ext_delta else ()
        self.ext_delta_exclude = ext_delta.get("exclude", ()) if ext_delta else ()
        self.ext_timing_enabled = ext_timing_enabled
        self.time_prev = None
        self.delta_prev = {}

    @property
    def multiplier(self) -> float:
        """``60 / interval`` (deprecated in Scrapy 2.19, as here: it warns)."""
        warnings.warn("The PeriodicLog.multiplier attribute is deprecated.",
                      CrawlfwDeprecationWarning, stacklevel=2)
        return 60.0 / self.interval

    @classmethod
    def from_crawler(cls, crawler):
        """Read ``LOGSTATS_INTERVAL`` and the ``PERIODIC_LOG_*`` settings.

        Raises:
            NotConfigured: the interval is 0, or none of the three parts is enabled.
        """
        settings = crawler.settings
        interval = settings.getfloat("LOGSTATS_INTERVAL")
        if not interval:
            raise NotConfigured
        ext_stats = _options(settings, "PERIODIC_LOG_STATS")
        ext_delta = _options(settings, "PERIODIC_LOG_DELTA")
        ext_timing_enabled = settings.getbool("PERIODIC_LOG_TIMING_ENABLED")
        if not (ext_stats or ext_delta or ext_timing_enabled):
            raise NotConfigured
        o = cls(crawler.stats, interval, ext_stats, ext_delta, ext_timing_enabled)
        crawler.signals.connect(o.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(o.spider_closed, signal=signals.spider_closed)
        return o

    def spider_opened(self, spider) -> None:
        self.time_prev = _now_like(self.stats.get_value("start_time"))
        self.delta_prev = {}
        self.task = PeriodicCall(self.log, self.interval, name="crawlfw-periodic-log")
        self.task.start(now=False)

    def log(self) -> None:
        """Log one line (the enabled parts)."""
        data = {}
        if self.ext_timing_enabled:
            data.update(self.log_timing())
        if self.ext_delta_enabled:
            data.update(self.log_delta())
        if self.ext_stats_enabled:
            data.update(self.log_crawler_stats())
        logger.info(self.encoder.encode(data))

    def log_delta(self) -> dict:
        """Returns: ``{"delta": {name: change since the previous call}}`` of the
        allowed numeric stats."""
        num_stats = {k: v for k, v in self.stats.get_stats().items()
                     if isinstance(v, (int, float)) and not isinstance(v, bool)
                     and self.param_allowed(k, self.ext_delta_include,
                                            self.ext_delta_exclude)}
        delta = {k: v - self.delta_prev.get(k, 0) for k, v in num_stats.items()}
        self.delta_prev = num_stats
        return {"delta": delta}

    def log_timing(self) -> dict:
        """Returns: ``{"time": {...}}`` (see the class docstring)."""
        start_time = self.stats.get_value("start_time")
        now = _now_like(start_time)
        previous = self.time_prev or now
        time = {
            "log_interval": self.interval,
            "start_time": start_time,
            "utcnow": now,
            "log_interval_real": (now - previous).total_seconds(),
            "elapsed": (now - start_time).total_seconds() if start_time else 0.0,
        }
        self.time_prev = now
        return {"time": time}

    def log_crawler_stats(self) -> dict:
        """Returns: ``{"stats": {name: value}}`` of the allowed stats."""
        return {"stats": {k: v for k, v in self.stats.get_stats().items()
                          if self.param_allowed(k, self.ext_stats_include,
                                                self.ext_stats_exclude)}}

    def param_allowed(self, stat_name, include, exclude) -> bool:
        """Whether ``stat_name`` passes the ``include``/``exclude`` substring lists."""
        if not include and not exclude:
            return True
        for part in exclude:
            if part in stat_name:
                return False
        if exclude and not include:
            return True
        return any(part in stat_name for part in include)

    def spider_closed(self, spider, reason=None) -> None:
        """Log a last line and stop the timer."""
        if self.task is not None:
            self.task.stop()
        self.log()


def _options(settings, name):
    """A ``PERIODIC_LOG_*`` setting as options: its dict, ``{"enabled": True}`` for a
    true non-dict value, else None."""
    try:
        value = settings.getdict(name)
    except (TypeError, ValueError):
        return {"enabled": True} if settings.getbool(name) else None
    return value or None


def _now_like(start_time):
    """Now in UTC, naive when ``start_time`` is (crawlfw's stats keep naive UTC)."""
    now = datetime.now(tz=timezone.utc)
    if start_time is not None and start_time.tzinfo is None:
        return now.replace(tzinfo=None)
    return now
