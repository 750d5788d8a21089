"""The live progress line a crawl process shows at the bottom of its terminal.

While a :class:`~crawlfw.crawler.CrawlerProcess` runs, and standard error is a terminal,
one line per crawl shows its figures (``rich.live.Live``, written to standard error)::

    quotes-1 running: 120 pages 60/min, 40 items 20/min, 5 pending, 2 in flight, 0 errors

The figures are collected at most twice a second (:data:`REFRESH_S`) by a thread of
its own; log lines written to standard error meanwhile scroll above the line. The line
is off when standard error is not a terminal, and with ``PROGRESS = False``
(``-s PROGRESS=False``); it is erased when the process shuts down.
"""

import logging
import sys
import threading

from crawlfw.control import collect_status
from crawlfw.extensions._periodic import PeriodicCall

logger = logging.getLogger(__name__)

__all__ = ["ProgressLine", "format_status", "REFRESH_S"]

#: Seconds between two updates of the figures (at most 2 refreshes a second).
REFRESH_S = 0.5


def format_status(crawl: dict) -> str:
    """One progress line for a crawl status dict of :func:`crawlfw.control.collect_status`."""
    errors = sum(crawl["errors"].values())
    in_flight = crawl["in_flight"] if crawl["in_flight"] is not None else "?"
    return (f"{crawl['crawl_id']} {crawl['state']}: "
            f"{crawl['pages']} pages {crawl['pages_per_min']:.0f}/min, "
            f"{crawl['items']} items {crawl['items_per_min']:.0f}/min, "
            f"{crawl['pending']} pending, {in_flight} in flight, {errors} errors")


class ProgressLine:
    """The progress line of a process's crawls.

    Args:
        runner: the :class:`~crawlfw.crawler.CrawlerRunner` whose Supervisor is asked.
        stream: where the line is drawn (a terminal), standard error by default.
        refresh_s: seconds between updates of the figures (>= :data:`REFRESH_S`).
    """

    def __init__(self, runner, stream=None, refresh_s: float = REFRESH_S):
        self.runner = runner
        self.stream = stream or sys.stderr
        self.refresh_s = max(refresh_s, REFRESH_S)
        self.text = ""
        self.updates = 0
        self._live = None
        self._timer = None
        self._logs = None
        self._lock = threading.Lock()

    @staticmethod
    def wanted(settings, stream=None) -> bool:
        """True when ``PROGRESS`` is on, ``stream`` (standard error) is a terminal, and
        no feed is written to standard output (``-o -``), which may be that terminal."""
        stream = stream or sys.stderr
        if not settings.getbool("PROGRESS", True):
            return False
        feeds = [settings.get("FEED_URI") or "", *(settings.getdict("FEEDS") or {})]
        if any(str(uri).startswith("stdout:") or str(uri) == "-" for uri in feeds):
            return False
        try:
            return stream.isatty()
        except (AttributeError, ValueError):
            return False

    def start(self) -> "ProgressLine":
        """Show the line and start updating it; standard error log lines go above it."""
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text

        from crawlfw.utils.console import _LogsAbovePrompt

        self._text_cls = Text
        console = Console(file=self.stream, highlight=False)
        # Only this object's thread refreshes (auto_refresh off): the figures change at
        # most every refresh_s; a log line re-draws the same text below itself.
        self._live = Live(Text(""), console=console, auto_refresh=False, transient=True,
                          redirect_stdout=False, redirect_stderr=True)
        self._live.start()
        # the root handler holds the real stderr: point it at sys.stderr, now rich's proxy
        self._logs = _LogsAbovePrompt().__enter__()
        self._timer = PeriodicCall(self.refresh, self.refresh_s, name="crawlfw-progress")
        self._timer.start(now=True)
        return self

    def refresh(self) -> None:
        """Collect the figures and redraw the line (called by the timer thread)."""
        try:
            crawls = collect_status(self.runner, timeout_s=self.refresh_s)
        except Exception:  # a crawl ended meanwhile: keep the last line
            logger.debug("Progress line not refreshed", exc_info=True)
            return
        text = "\n".join(format_status(c) for c in crawls)
        with self._lock:
            if self._live is None:
                return
            self.text = text
            self.updates += 1
            self._live.update(self._text_cls(text, no_wrap=True, overflow="ellipsis"),
                              refresh=True)

    def stop(self) -> None:
        """Erase the line, stop updating it and give standard error back."""
        if self._timer is not None:
            self._timer.stop()
        with self._lock:
            live, self._live = self._live, None
        if live is not None:
            if self._logs is not None:
                self._logs.__exit__(None, None, None)
            try:
                live.stop()
            except Exception:
                logger.debug("Error while stopping the progress line", exc_info=True)


def open_progress(runner, settings):
    """Start the progress line of ``runner`` when wanted (see :meth:`ProgressLine.wanted`);
    None otherwise or when it cannot start (rich missing...)."""
    if not ProgressLine.wanted(settings):
        return None
    try:
        return ProgressLine(runner).start()
    except Exception as e:
        logger.warning("Progress line not shown: %(error)s", {"error": e})
        return None

