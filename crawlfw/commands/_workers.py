"""``crawl``/``runspider --workers N``: N worker processes of one crawl on this machine,
sharing the frontier named by ``FRONTIER_URL``, their items merged into the one feed of
``-o``.

Each worker is the same command run as a child process (``python -m crawlfw.cmdline``)
with ``FRONTIER_WORKER=<base>-<i>`` (``<base>``: ``FRONTIER_WORKER`` or the host name)
and its own JSON Lines part file, ``<part dir>/<worker id>.jl``, whose committed length
is kept in the shared frontier with the worker's acks. A worker that exits with a
non-zero status (killed, crashed) is started again under the same id, at most
:data:`MAX_RESTARTS` times: it cuts its part back to what it committed and goes on, so no
item is lost or written twice. When every worker has finished, the parent writes the
items of all parts, in worker order, to the feed of ``-o`` (any format and storage, by
:class:`crawlfw.core.feeds.FeedWriter`) and removes the parts. Interrupted (^C), it
leaves the parts in place: the same command resumes the crawl and its parts.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from crawlfw.exceptions import UsageError

logger = logging.getLogger(__name__)

__all__ = ["run_workers"]

#: Times one worker is started again after a failure, before the parent gives up on it.
MAX_RESTARTS = 5

#: Seconds between checks of the workers.
_POLL_S = 0.2

#: Settings the parent sets for each worker itself.
_OWN = ("FEED_URI", "FEED_FORMAT", "FEEDS", "FRONTIER_WORKER")


def run_workers(settings, workers: int, command: list, spargs: dict, spidercls) -> None:
    """Run ``workers`` worker processes of one shared crawl and merge their feeds.

    Args:
        settings: the command's :class:`~crawlfw.settings.Settings` (``-s`` and ``-o``
            applied at ``'cmdline'`` priority; those are passed on to the workers).
        workers: how many worker processes (>= 1).
        command: the command and its positional argument, e.g.
            ``['runspider', 'spider.py']`` or ``['crawl', 'myspider']``.
        spargs: the spider arguments (``-a``), passed on.
        spidercls: the spider class (its ``name`` and attributes resolve ``-o``).

    Raises:
        UsageError: ``FRONTIER_URL`` is not set, or ``workers`` < 1.
        SystemExit: status 1 when a worker did not finish (the parts are kept).
    """
    if not settings.get("FRONTIER_URL"):
        raise UsageError("--workers needs a shared frontier: set FRONTIER_URL "
                         "(e.g. -s FRONTIER_URL=redis://127.0.0.1:6379/0)")
    if workers < 1:
        raise UsageError(f"--workers must be at least 1, not {workers}")
    from crawlfw.utils.log import configure_logging

    configure_logging(settings)
    from crawlfw.core.feeds import feeds_from_settings

    feeds = feeds_from_settings(settings)  # -o, -O, FEEDS: merged into each at the end
    output = (feeds[0][0] or settings.get("FEED_URI")) if feeds else None
    base = settings.get("FRONTIER_WORKER") or socket.gethostname()
    ids = [f"{base}-{i}" for i in range(1, workers + 1)]
    parts = _parts_dir(str(output), spidercls.name) if output else None
    args = [sys.executable, "-m", "crawlfw.cmdline", *command]
    for name, value in spargs.items():
        args += ["-a", f"{name}={value}"]
    for name in settings:
        if name not in _OWN and settings.getpriority(name) == _cmdline_priority():
            args += ["-s", f"{name}={_as_text(settings[name])}"]

    log_format = None
    if settings.getpriority("LOG_FORMAT") != _cmdline_priority():  # lines name the worker
        log_format = settings["LOG_FORMAT"].replace("[%(name)s]", "[{wid}] [%(name)s]", 1)

    def start(wid):
        own = ["-s", f"FRONTIER_WORKER={wid}"]
        if parts is not None:
            part = str(parts / f"{wid}.jl").replace("%", "%%")
            own += ["-s", f"FEED_URI={part}", "-s", "FEED_FORMAT=jsonlines"]
        if log_format is not None:
            own += ["-s", f"LOG_FORMAT={log_format.replace('{wid}', wid)}"]
        # A session of its own: a ^C reaches the parent, which passes it on once; a
        # worker whose parent dies stops as on ^C (Linux), so no orphan keeps its id.
        return subprocess.Popen([*args, *own], start_new_session=True,
                                preexec_fn=_stop_with_parent)

    if parts is not None:
        parts.mkdir(parents=True, exist_ok=True)
    logger.info("Starting %(n)d workers (%(ids)s) on %(url)s%(parts)s",
                {"n": workers, "ids": ", ".join(ids), "url": settings["FRONTIER_URL"],
                 "parts": f"; their items in {parts}/" if parts else ""})
    procs = {wid: start(wid) for wid in ids}
    restarts = dict.fromkeys(ids, 0)
    codes = {}
    interrupted = []

    def on_signal(signum, frame):
        interrupted.append(signum)
        for wid, proc in procs.items():
            if wid not in codes:
                proc.send_signal(signal.SIGINT if len(interrupted) < 3 else signal.SIGKILL)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while len(codes) < len(ids):
            time.sleep(_POLL_S)
            for wid, proc in procs.items():
                if wid in codes or proc.poll() is None:
                    continue
                code = proc.returncode
                if code != 0 and not interrupted and restarts[wid] < MAX_RESTARTS:
                    restarts[wid] += 1
                    logger.warning("Worker %(id)s exited with status %(code)s: starting it "
                                   "again (restart %(n)d of %(max)d; it resumes its part)",
                                   {"id": wid, "code": code, "n": restarts[wid],
                                    "max": MAX_RESTARTS})
                    procs[wid] = start(wid)
                    continue
                codes[wid] = code
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    failed = {wid: code for wid, code in codes.items() if code != 0}
    if failed or interrupted:
        where = f"; the items so far are in {parts}/" if parts else ""
        logger.error("Workers stopped before the crawl finished (exit status: %(codes)s)"
                     "%(where)s: run the same command again to resume",
                     {"codes": ", ".join(f"{w} {c}" for w, c in codes.items()),
                      "where": where})
        sys.exit(1)
    if parts is not None:
        _merge(settings, spidercls, spargs, parts, ids, feeds)


def _merge(settings, spidercls, spargs, parts: Path, ids, feeds) -> None:
    """Write the items of every part, worker by worker, to each feed (``-o``, ``-O``,
    ``FEEDS``: ``[(uri, options)]`` as :func:`crawlfw.core.feeds.feeds_from_settings`
    gives them), then remove the parts."""
    from crawlfw.core.feeds import FeedWriter

    spider = spidercls(**spargs)
    stored = True
    for uri, options in feeds:
        writer = FeedWriter(settings, spider, uri=uri, options=options)
        writer.open()
        for wid in ids:
            part = parts / f"{wid}.jl"
            if not part.exists():
                continue
            with open(part, "rb") as f:
                for line in f:
                    if line.endswith(b"\n"):  # (a worker's part is whole once it finished)
                        writer.export_item(json.loads(line))
        result = writer.close()
        stored = stored and (result["stored"] or not result["itemcount"])
    if stored:
        shutil.rmtree(parts, ignore_errors=True)
    else:
        logger.error("The workers' items stay in %(parts)s/", {"parts": parts})
        sys.exit(1)


def _parts_dir(output: str, spider_name: str) -> Path:
    """Where the workers' part files go: ``<-o file>.parts`` beside a local ``-o``
    file (``%(...)s`` placeholders kept as their names), else
    ``crawlfw-<spider>.parts`` in the current directory (stdout, FTP, S3 feeds)."""
    from crawlfw.core.feeds import uri_scheme

    plain = re.sub(r"%\((\w+)\)s", r"\1", output)
    if output != "-" and uri_scheme(output) in ("", "file"):
        path = plain[len("file://"):] if plain.startswith("file://") else plain
        return Path(path + ".parts")
    return Path(f"crawlfw-{spider_name}.parts")


def _stop_with_parent() -> None:
    """In the child, before exec: ask Linux for SIGINT when the parent dies
    (``prctl(PR_SET_PDEATHSIG)``); elsewhere nothing."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGINT))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _cmdline_priority() -> int:
    from crawlfw.settings import get_settings_priority

    return get_settings_priority("cmdline")


def _as_text(value) -> str:
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value)
    return str(value)
