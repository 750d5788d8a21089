"""``crawlfw dashboard [CRAWL]``: a live dashboard of the running crawls in the browser,
and their Prometheus metrics (see :mod:`crawlfw.dashboard`)."""

import signal
import sys
import threading

import argh

from crawlfw.commands import command, fail


@argh.arg("crawl", nargs="?", metavar="CRAWL",
          help="show only the crawls matching this crawl id, spider name or pid "
               "(default: every crawl of this user, new ones as they start)")
@command(help="Serve a live dashboard of the running crawls on 127.0.0.1",
         default_settings={"LOG_LEVEL": "INFO"})  # not a line per HTTP request (-L DEBUG)
def dashboard(crawl=None, *, settings=None):
    """Serve the dashboard of every running crawl of this user (those ``crawlfw ps``
    lists, found again as they start and end), or of those matching CRAWL, on
    127.0.0.1 on a free port (``DASHBOARD_PORT`` to choose it), until Ctrl-C. Prints
    ``http://127.0.0.1:PORT/?token=TOKEN``: open it in a browser on this machine (or
    through ``ssh -L PORT:127.0.0.1:PORT host``); requests without the token are
    refused. The crawls are reached through their control endpoints (owner-only Unix
    sockets). ``METRICS_ENABLED`` also opens a listener serving ``/metrics`` without a
    token (``METRICS_PORT``)."""
    import logging

    from crawlfw.dashboard.server import DashboardServer
    from crawlfw.dashboard.sources import RemoteSource
    from crawlfw.utils.log import configure_logging

    configure_logging(settings)
    logger = logging.getLogger("crawlfw.dashboard")
    source = RemoteSource(crawl)
    try:
        server = DashboardServer(source, settings.getint("DASHBOARD_PORT", 0)).start()
    except OSError as e:
        fail(f"Dashboard: cannot listen on 127.0.0.1:{settings.getint('DASHBOARD_PORT', 0)}: {e}")
    metrics = None
    if settings.getbool("METRICS_ENABLED", False):
        try:
            metrics = DashboardServer(source, settings.getint("METRICS_PORT", 0),
                                      metrics_only=True).start()
        except OSError as e:
            server.close()
            fail(f"Metrics: cannot listen on 127.0.0.1:{settings.getint('METRICS_PORT', 0)}: {e}")
        logger.info("Metrics: %(url)s (no token: METRICS_ENABLED)", {"url": metrics.url})
    logger.info("Dashboard: %(url)s", {"url": server.url})
    print(server.url, flush=True)
    if metrics is not None:
        print(metrics.url, flush=True)
    stop = threading.Event()
    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, lambda *_: stop.set())
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.close()
        if metrics is not None:
            metrics.close()
        print("Dashboard stopped", file=sys.stderr, flush=True)
