"""The live dashboard and Prometheus metrics of running crawls (issue 33).

Started by ``crawlfw dashboard [CRAWL]`` (every crawl ``crawlfw ps`` sees, or the ones
matching CRAWL, found again as they come and go; its data comes from the crawls' control
endpoints, :mod:`crawlfw.control`, over their owner-only Unix sockets) or inside a crawl
by ``DASHBOARD_ENABLED = True`` (served from the crawl's own process). No TCP listener
exists unless one of these, or ``METRICS_ENABLED``, asks for it. ``DASHBOARD_*`` and
``METRICS_*`` are read as any setting, from each crawl's settings: the project's, a
spider's ``custom_settings`` over them, ``-s`` over both (:func:`listener_settings`;
the listeners are the process's, open when one of its crawls asks for them, and show
every crawl of the process; ``DASHBOARD_HISTORY`` is each crawl's own).

**Listener.** 127.0.0.1 only, on a free port (or ``DASHBOARD_PORT``), stdlib
``http.server`` (one thread per connection, at most 64). Its address is logged (INFO) and
printed as ``http://127.0.0.1:PORT/?token=TOKEN`` (by the crawl: on standard error when
its log does not show INFO lines there); the token is
``secrets.token_urlsafe(32)``, new for each server.

**Every request** must carry the token: ``?token=TOKEN``, ``Authorization: Bearer TOKEN``,
or the cookie ``crawlfw_dashboard_<PORT>=TOKEN`` (``HttpOnly; SameSite=Strict; Path=/``;
the port in its name, as cookies do not tell ports apart) that the server sets when
``/?token=TOKEN`` is loaded; otherwise 403 (compared with
``hmac.compare_digest``). ``Host`` must be ``127.0.0.1:PORT`` or ``localhost:PORT``
(DNS-rebinding defence: 403 otherwise); a POST whose ``Origin`` is sent must be
``http://127.0.0.1:PORT`` or ``http://localhost:PORT`` (403 otherwise). Nothing changes
on GET. Every answer has ``Cache-Control: no-store``, ``Referrer-Policy: no-referrer``,
``X-Frame-Options: DENY`` and ``Content-Security-Policy: default-src 'self';
script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src
'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'`` (so the page loads
its scripts from ``/static/``, none inline). Errors are ``{"ok": false, "error": text}``
with 403, 404 (no such route, file or crawl), 405 (a command by GET, another method),
409 (the crawl refused the command), 502 (a crawl's endpoint failed).

**Routes.**

- ``GET /`` (and ``/index.html``): the page, ``crawlfw/dashboard/static/index.html``.
- ``GET /static/<name>``: a file of that directory (a plain name: no ``/``, no leading
  ``.``), with its content type (``.js`` ``text/javascript``, ``.css``, ``.svg``,
  ``.png``, ``.woff2``...).
- ``GET /api/crawls``: ``[{"id": "<pid>-<crawl id>", "crawl_id": "quotes-1", "name":
  spider name, "pid": int, "started": ISO 8601, "state": "running"|"paused"|"closing",
  "pages": n, "items": n, "uptime_s": s, "jobdir": str|null, "worker": str|null,
  "workers": [{"worker", "pages", "items", "last_seen_s"}], "shared": {"queued", "leased",
  "pages", "items", "frontier"}|null}, ...]``: ``workers`` and ``shared`` are the whole
  crawl's (``frontier``: ``<FRONTIER_URL without password> <key>``, its identity) with a
  shared frontier (``FRONTIER_URL``, ``--workers``): each worker is a process, so a crawl
  of its own here, ``worker`` its id as the frontier knows it (``FRONTIER_WORKER``, default
  ``<hostname>-<pid>``; null without a shared frontier or before its first figures), and
  each one's ``shared`` is the combined figures.
- ``GET /api/crawls/<id>/history[?since=T]``: ``{"interval": 1.0, "samples": [SAMPLE,
  ...], "errors": [ERROR, ...]}``, oldest first, those after ``T`` (unix seconds) or all
  kept.
- ``GET /api/crawls/<id>/events[?since=T]``: server-sent events (``text/event-stream``):
  ``event: sample`` with ``id: <t>`` and ``data: SAMPLE`` once a second (from ``T``, or
  from the newest sample when no ``T``; a reconnection's ``Last-Event-ID`` resumes after
  it), ``event: error`` with ``data: ERROR`` for each ERROR logged, ``event: end`` with
  ``data: {"reason": text}`` when the crawl is gone (then the stream closes); a comment
  line every 15 s of silence.
- ``POST /api/crawls/<id>/pause``, ``/resume``, ``/stop``: ``{"ok": true}`` once the
  crawl took the control message ``pause_crawl``, ``resume_crawl``, ``stop_crawl``
  (reason ``shutdown``, as ``crawlfw stop``).
- ``POST /api/shared/<id>/pause``, ``/resume``, ``/stop``: every worker of the shared
  crawl (``FRONTIER_URL``) the crawl ``<id>`` here is a worker of, wherever it runs
  (:func:`~crawlfw.dashboard.sources.command_workers`): the command is written in the
  shared crawl's Redis through a worker here (control message ``command_shared_crawl``;
  every worker follows it at its next figures read, within 2 s; a worker joining later
  honours a standing pause; a stop is followed by every worker that was running when
  it was written) and sent at once to each worker here. ``{"ok": every worker reached,
  "command", "frontier", "published": {"via": id, "seq": n}|null, "error": text|null,
  "workers": [{"worker", "crawl": id here|null, "reached": bool, "via":
  "control"|"redis"|null, "error": text|null, "last_seen_s"}]}`` (each worker that
  published figures, and each one here); 409 when no worker was reached (the same
  JSON, ``ok`` false) or the crawl is no worker of a shared crawl.
- ``GET /metrics``: Prometheus's text exposition (:mod:`crawlfw.dashboard.metrics`).

**SAMPLE** (one a second per crawl; counters cumulative since the process started the
crawl: a resumed ``JOBDIR`` crawl's start again from 0, as its stats do, so a counter
lower than the one before it marks a restart, as in Prometheus)::

    {"t": unix s, "pages": n, "items": n, "bytes": n,
     "status": {"200": n, ...}, "errors": {"<kind>": n, ...},
     "latency": {"buckets": [upper bounds, s], "counts": [n per bucket, one more than
                 buckets: the last above every bound], "sum": s},
     "frontier": {"queued": n, "in_flight": n, "leased": n, "on_disk": n|null},
     "hosts": {"ready": n|null, "waiting": n|null,
               "busiest": [{"host": str, "queued": n, "in_flight": n, "delay": s}]},
     "actors": [{"name": str, "restarts": n, "mailbox": n, "cpu": s|null}],
     "memory": {"rss": bytes, "limit": bytes|null, "warning": bytes|null},
     "revisit": null | {"due_now": n, "next_due": t|null, "scheduled": n, "changed": n,
                        "unchanged": n, "gone": n},
     "state": "running"|"paused"|"closing",
     "shared": null | {"worker": str, "queued": n, "leased": n, "pages": n, "items": n,
                       "workers": n, "by_worker": [{"worker": str, "pages": n,
                                                    "items": n}]}}

``hosts.ready``/``waiting`` are null (and ``busiest`` empty) with a shared frontier, and
for a crawl of more than 2,000 hosts until a dashboard looks at it. ``shared`` is the
whole shared crawl as the workers last published it in Redis (each every 2 s; workers on
other machines included): ``worker`` is the sampled process's own id, ``pages`` and
``items`` the sums of ``by_worker`` (each worker that published, by id, the first 64), so
the page draws the whole crawl's rates and each worker's over time from any one worker's
samples (its view ``#/shared/<id>``). **ERROR**:
``{"t": unix s, "kind": exception class or level name, "message": str, "traceback":
str|null, "url": str|null}``.

**History**: kept in the crawl process by :class:`~crawlfw.dashboard.sampler.Recorder`
(sampled by the control endpoint's rate thread; ``DASHBOARD_HISTORY`` seconds at one
sample a second, then one a minute, thinned beyond 1,440 of those), saved in
``<JOBDIR>/dashboard-history.json`` every 5 minutes and at the close, and loaded when
the crawl resumes. Control messages ``get_history {crawl_id, since}`` ->
``history_reported`` and ``get_sample {crawl_id}`` -> ``sample_reported`` (schemas in
``conf/schemas/messages.json``).

``METRICS_ENABLED = True`` opens another 127.0.0.1 listener (``METRICS_PORT``, 0: a free
one) serving only ``GET /metrics``, without a token, for scrapers that cannot send one
(docs/security.md says what that exposes).
"""

import logging
import sys

__all__ = ["open_dashboard", "listener_settings", "InCrawlDashboard"]

logger = logging.getLogger(__name__)


class InCrawlDashboard:
    """The dashboard and metrics listeners of a crawl process (``DASHBOARD_ENABLED``,
    ``METRICS_ENABLED``), and the sampling timer when the process has no control
    endpoint to drive it.

    Attributes:
        server: the :class:`~crawlfw.dashboard.server.DashboardServer`, or None.
        metrics: the metrics-only one, or None.
    """

    def __init__(self, server, metrics, sampler) -> None:
        self.server = server
        self.metrics = metrics
        self._sampler = sampler

    def close(self) -> None:
        """Stop the listeners and the timer."""
        for part in (self._sampler, self.server, self.metrics):
            if part is None:
                continue
            try:
                part.stop() if hasattr(part, "stop") else part.close()
            except Exception:
                logger.debug("Dashboard: closing failed", exc_info=True)


def _log_shows_info(settings) -> bool:
    """True when the crawl's INFO lines reach standard error (``LOG_ENABLED``, no
    ``LOG_FILE``, ``LOG_LEVEL`` INFO or lower)."""
    if not settings.getbool("LOG_ENABLED", True) or settings.get("LOG_FILE"):
        return False
    level = settings.get("LOG_LEVEL", "DEBUG")
    if isinstance(level, str):
        level = logging.getLevelName(level.upper())
    return isinstance(level, int) and level <= logging.INFO


def listener_settings(runner, settings, flag: str):
    """The settings that open a listener (``flag``: ``DASHBOARD_ENABLED`` or
    ``METRICS_ENABLED``) and give its port and logging, or None when none asks for it.

    The crawls' own settings decide, as for any setting: each crawler's settings are the
    defaults, the project's, its spider's ``custom_settings`` and ``-s`` (in that order of
    precedence, lowest first), so ``custom_settings = {"DASHBOARD_ENABLED": True}`` opens
    the dashboard and a spider's ``False`` keeps the project's ``True`` shut for that
    crawl. The listener is the process's: it opens when one of the process's crawls asks
    for it (the first by crawl id gives ``DASHBOARD_PORT``/``METRICS_PORT``) and shows
    every crawl of the process. Without a crawl, ``settings`` (the process's) decide.

    Args:
        runner: the :class:`~crawlfw.crawler.CrawlerRunner` (its ``crawlers``).
        settings: the process's settings.
        flag: the setting that turns the listener on.

    Returns:
        a settings object, or None.
    """
    crawlers = sorted(getattr(runner, "crawlers", None) or (),
                      key=lambda c: str(getattr(c, "_crawl_id", None) or ""))
    if not crawlers:
        return settings if settings.getbool(flag, False) else None
    for crawler in crawlers:
        if crawler.settings.getbool(flag, False):
            return crawler.settings
    return None


def open_dashboard(runner, settings, endpoint=None) -> InCrawlDashboard | None:
    """Open the in-crawl dashboard and metrics listeners as the settings say.

    Args:
        runner: the :class:`~crawlfw.crawler.CrawlerProcess`.
        settings: its settings; each crawl's own settings (with its spider's
            ``custom_settings``) decide first (:func:`listener_settings`):
            ``DASHBOARD_ENABLED``, ``DASHBOARD_PORT``, ``METRICS_ENABLED``,
            ``METRICS_PORT``.
        endpoint: the process's control endpoint, or None (then a timer samples).

    Returns:
        None when neither is enabled; else the parts opened. A listener that cannot be
        opened (its port in use) is a WARNING, and the crawl goes on.
    """
    dashboard_settings = listener_settings(runner, settings, "DASHBOARD_ENABLED")
    metrics_settings = listener_settings(runner, settings, "METRICS_ENABLED")
    if dashboard_settings is None and metrics_settings is None:
        return None
    from crawlfw.dashboard.sampler import recorder_of
    from crawlfw.dashboard.server import DashboardServer
    from crawlfw.dashboard.sources import LocalSource
    from crawlfw.extensions._periodic import PeriodicCall

    recorder = recorder_of(runner, settings)
    source = LocalSource(runner)
    server = metrics = sampler = None
    if dashboard_settings is not None:
        try:
            server = DashboardServer(source, dashboard_settings.getint("DASHBOARD_PORT", 0),
                                     recorder=recorder).start()
        except OSError as e:
            logger.warning("Dashboard not opened: %(error)s", {"error": e})
        else:
            logger.info("Dashboard: %(url)s", {"url": server.url})
            if not _log_shows_info(dashboard_settings):  # printed where it is seen
                print(f"Dashboard: {server.url}", file=sys.stderr, flush=True)
    if metrics_settings is not None:
        try:
            metrics = DashboardServer(source, metrics_settings.getint("METRICS_PORT", 0),
                                      metrics_only=True).start()
        except OSError as e:
            logger.warning("Metrics listener not opened: %(error)s", {"error": e})
        else:
            logger.info("Metrics: %(url)s (no token: METRICS_ENABLED)", {"url": metrics.url})
    if server is None and metrics is None:
        return None
    if endpoint is None:
        sampler = PeriodicCall(recorder.sample_all, 1.0, name="crawlfw-dashboard-samples")
        sampler.start(now=True)
    return InCrawlDashboard(server, metrics, sampler)
